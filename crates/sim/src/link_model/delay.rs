//! A link's propagation delay with jitter, as Linux netem draws it: `delay MEAN
//! JITTER distribution uniform|normal|pareto|paretonormal`.
//!
//! netem adds `jitter * t` to the mean, `t` read from a table of 4,096 values of
//! the distribution's quantile function in units of 1/8192 (`NETEM_DIST_SCALE`),
//! the tables iproute2 generates (`netem/normal.c`, `pareto.c`,
//! `paretonormal.c`): the standard normal; a Pareto of shape 3 shifted to mean 0
//! and scaled by 4/3, its tail clamped at 4 (a mean of -0.033 and a standard
//! deviation of 0.82, where the unclamped law has 0 and 1.155); a quarter of
//! the first plus three quarters of the second, quantile by quantile. Without a
//! distribution the jitter is uniform on `[mean - jitter, mean + jitter)` (a
//! standard deviation of `jitter / sqrt(3)`). The tables here are computed the
//! way iproute2 computes them, so the draws follow the same distribution.
//!
//! netem sorts its queue by departure time, so jitter reorders packets. Here a
//! packet never overtakes the one before it unless `reorder` is set: a delay
//! line is what a link is, and reordering by jitter is rarely what a user asks
//! for; `reorder = true` gives netem's behaviour.

use aqm::rng::Rng;
use aqm::{Dur, Time};
use rand::Rng as _;
use std::sync::OnceLock;

/// The scale of netem's tables: a value `t` stands for `t / 8192` standard units.
const SCALE: i64 = 8192;

/// The shape of the jitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    Normal,
    Pareto,
    #[serde(rename = "paretonormal")]
    ParetoNormal,
}

impl Distribution {
    pub const NAMES: [&'static str; 4] = ["uniform", "normal", "pareto", "paretonormal"];

    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "uniform" => Distribution::Uniform,
            "normal" => Distribution::Normal,
            "pareto" => Distribution::Pareto,
            "paretonormal" => Distribution::ParetoNormal,
            _ => return None,
        })
    }

    /// netem's table for the distribution (None for uniform, which has none).
    fn table(self) -> Option<&'static [i16]> {
        static NORMAL: OnceLock<Vec<i16>> = OnceLock::new();
        static PARETO: OnceLock<Vec<i16>> = OnceLock::new();
        static PARETONORMAL: OnceLock<Vec<i16>> = OnceLock::new();
        match self {
            Distribution::Uniform => None,
            Distribution::Normal => Some(NORMAL.get_or_init(normal_table)),
            Distribution::Pareto => Some(PARETO.get_or_init(pareto_table)),
            Distribution::ParetoNormal => Some(PARETONORMAL.get_or_init(paretonormal_table)),
        }
    }

    /// The mean and standard deviation of one draw, in units of the jitter (the
    /// table's own, for the tabled distributions).
    pub fn moments(self) -> (f64, f64) {
        match self.table() {
            None => (0.0, 1.0 / 3f64.sqrt()),
            Some(t) => {
                let n = t.len() as f64;
                let mean = t.iter().map(|&v| v as f64).sum::<f64>() / n / SCALE as f64;
                let var = t
                    .iter()
                    .map(|&v| (v as f64 / SCALE as f64 - mean).powi(2))
                    .sum::<f64>()
                    / n;
                (mean, var.sqrt())
            }
        }
    }
}

/// iproute2's table size before it keeps every fourth entry.
const TABLESIZE: usize = 16384;

/// The inverse of the standard normal CDF on iproute2's grid: the largest x (in
/// steps of 0.00005 from -10) whose CDF rounds to each sixteen-thousandth.
fn normal_grid() -> Vec<f64> {
    let mut table = vec![0.0; TABLESIZE + 1];
    let mut k = 0u32;
    loop {
        let x = -10.0 + k as f64 * 0.00005;
        if x >= 10.05 {
            break;
        }
        let cdf = 0.5 + 0.5 * libm::erf(x / std::f64::consts::SQRT_2);
        table[(TABLESIZE as f64 * cdf).round() as usize] = x;
        k += 1;
    }
    table
}

fn clamp16(v: f64) -> i16 {
    v.round().clamp(i16::MIN as f64, i16::MAX as f64) as i16
}

fn normal_table() -> Vec<i16> {
    let grid = normal_grid();
    (0..TABLESIZE)
        .step_by(4)
        .map(|i| clamp16(grid[i] * SCALE as f64))
        .collect()
}

/// Pareto of shape 3 at the quantile `i / 65536` from the top, as pareto.c.
fn pareto_value(i: usize) -> f64 {
    let u = i as f64 / 65536.0;
    ((1.0 / u.powf(1.0 / 3.0) - 1.5) * (4.0 / 3.0) * SCALE as f64).min(32767.0)
}

fn pareto_table() -> Vec<i16> {
    (1..=4096)
        .rev()
        .map(|j| clamp16(pareto_value(j * 16)))
        .collect()
}

fn paretonormal_table() -> Vec<i16> {
    let grid = normal_grid();
    (0..TABLESIZE)
        .step_by(4)
        .map(|i| {
            let normal = (grid[i] * SCALE as f64).round();
            let pareto = pareto_value(65536 - 4 * i).round();
            // paretonormal.c divides in integers, truncating toward zero.
            clamp16(((normal + 3.0 * pareto) / 4.0).trunc())
        })
        .collect()
}

/// A delay with jitter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JitterSpec {
    pub mean: Dur,
    pub jitter: Dur,
    pub distribution: Distribution,
    pub reorder: bool,
}

impl JitterSpec {
    /// One draw of the delay: netem's `tabledist`, in nanoseconds, never negative.
    pub fn draw(&self, rng: &mut Rng) -> Dur {
        let mu = self.mean.as_nanos() as i64;
        let sigma = self.jitter.as_nanos() as i64;
        if sigma == 0 {
            return self.mean;
        }
        let d = match self.distribution.table() {
            None => rng.gen_range(0..2 * sigma) - sigma + mu,
            Some(table) => {
                let t = table[rng.gen_range(0..table.len())] as i64;
                // sigma * t / SCALE without overflow, rounded as netem rounds.
                let mut x = (sigma % SCALE) * t;
                x += if x >= 0 { SCALE / 2 } else { -SCALE / 2 };
                x / SCALE + (sigma / SCALE) * t + mu
            }
        };
        Dur::from_nanos(d.max(0) as u64)
    }
}

/// A delay line with jitter: one per link direction.
#[derive(Clone, Debug)]
pub struct Jitter {
    spec: JitterSpec,
    last: Time,
}

impl Jitter {
    pub fn new(spec: JitterSpec) -> Self {
        Jitter {
            spec,
            last: Time::ZERO,
        }
    }

    pub fn spec(&self) -> &JitterSpec {
        &self.spec
    }

    /// When a packet that leaves the link's transmitter at `sent` arrives: its
    /// drawn delay later, and not before the packet ahead of it unless `reorder`.
    pub fn arrival(&mut self, sent: Time, rng: &mut Rng) -> Time {
        let at = sent + self.spec.draw(rng);
        if self.spec.reorder {
            return at;
        }
        self.last = self.last.max(at);
        self.last
    }
}

#[cfg(test)]
mod tests;
