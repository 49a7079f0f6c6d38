//! CAKE's DiffServ tins (`sch_cake.c`'s lookup tables and `cake_config_*`):
//! which tin a DSCP goes to, and each tin's threshold rate and DRR weight.
//!
//! A tin's threshold is not a limit: in a shaped CAKE the tin scheduler serves
//! the highest-numbered tin still within its threshold, else the one whose
//! threshold schedule is earliest, so a tin past its threshold drops back to
//! sharing rather than being starved. Unshaped, Linux has no schedule to go by
//! and runs plain DRR over the tins with the weights (`tin_quantum`) below.

/// The tin modes (tc's `besteffort`, `precedence`, `diffserv3/4/8`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Diffserv {
    /// One tin.
    Besteffort,
    /// Eight tins by the IP precedence (the DSCP's top three bits).
    Precedence,
    /// Bulk (LE, CS1), best effort, latency sensitive (Linux's default).
    #[default]
    Diffserv3,
    /// Bulk, best effort, video, voice.
    Diffserv4,
    /// Eight classes, from background to network control.
    Diffserv8,
}

/// Linux's `diffserv8[]`: DSCP to tin.
#[rustfmt::skip]
pub const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2,
    1, 2, 1, 2, 1, 2, 1, 2,
    5, 2, 4, 2, 4, 2, 4, 2,
    3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 2, 2, 6, 2, 6, 2,
    7, 2, 2, 2, 2, 2, 2, 2,
    7, 2, 2, 2, 2, 2, 2, 2,
];

/// Linux's `diffserv4[]`: 0 best effort, 1 bulk, 2 video, 3 voice.
#[rustfmt::skip]
pub const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 2, 0, 2, 0, 2, 0,
    2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 0, 0, 3, 0, 3, 0,
    3, 0, 0, 0, 0, 0, 0, 0,
    3, 0, 0, 0, 0, 0, 0, 0,
];

/// Linux's `diffserv3[]`: 0 best effort, 1 bulk, 2 latency sensitive.
#[rustfmt::skip]
pub const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 2, 0, 2, 0,
    2, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 0,
];

/// One tin's configuration (what `cake_config_*` passes to `cake_set_rate`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TinConfig {
    /// The threshold rate in bytes per second; 0 when CAKE is unshaped.
    pub rate: u64,
    /// The tin's DRR weight when unshaped (`tin_quantum`).
    pub quantum: u16,
}

impl Diffserv {
    /// How many tins the mode has.
    pub const fn tins(self) -> usize {
        match self {
            Diffserv::Besteffort => 1,
            Diffserv::Diffserv3 => 3,
            Diffserv::Diffserv4 => 4,
            Diffserv::Precedence | Diffserv::Diffserv8 => 8,
        }
    }

    /// The tin of a packet with `dscp` (0..=63; higher bits are ignored).
    #[inline]
    pub fn tin(self, dscp: u8) -> usize {
        let d = (dscp & 63) as usize;
        match self {
            Diffserv::Besteffort => 0,
            Diffserv::Precedence => d >> 3,
            Diffserv::Diffserv3 => DIFFSERV3[d] as usize,
            Diffserv::Diffserv4 => DIFFSERV4[d] as usize,
            Diffserv::Diffserv8 => DIFFSERV8[d] as usize,
        }
    }

    /// Each tin's threshold and weight for a CAKE shaped at `rate` bytes per
    /// second (0: unshaped, and so every threshold 0, as Linux has it).
    pub fn layout(self, rate: u64) -> Vec<TinConfig> {
        let tin = |rate, quantum| TinConfig { rate, quantum };
        match self {
            // Besteffort's weight is moot: it is the only tin.
            Diffserv::Besteffort => vec![tin(rate, 65535)],
            // Each tin 7/8 of the one before, in rate and in weight.
            Diffserv::Precedence | Diffserv::Diffserv8 => {
                let (mut rate, mut quantum) = (rate, 256u32);
                (0..8)
                    .map(|_| {
                        let t = tin(rate, quantum.max(1) as u16);
                        rate = (rate * 7) >> 3;
                        quantum = (quantum * 7) >> 3;
                        t
                    })
                    .collect()
            }
            // Best effort at the full rate, bulk 1/16, latency sensitive 1/4.
            Diffserv::Diffserv3 => vec![
                tin(rate, 1024),
                tin(rate >> 4, 1024 >> 4),
                tin(rate >> 2, 1024 >> 2),
            ],
            // As diffserv3, with video at 1/2 below voice at 1/4.
            Diffserv::Diffserv4 => vec![
                tin(rate, 1024),
                tin(rate >> 4, 1024 >> 4),
                tin(rate >> 1, 1024 >> 1),
                tin(rate >> 2, 1024 >> 2),
            ],
        }
    }
}
