//! The data plane's loop: reads the devices when `ppoll` finds them readable,
//! handles every event whose logical time has come, and sleeps (or, close to
//! the next event, spins) until the next.

use super::io::wait;
use super::writer::{Clock, Writer};
use super::{spin_ns, Config, Ev, Outcome, Plane};
use crate::stats::{FlowCounters, Lateness};
use aqm::VecSink;
use sim::runner::{LinkStats, QueuePool};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The writers, on duplicates of the devices' descriptors: one for both
/// devices, or, on a machine of [`CORES_PER_DEVICE_WRITERS`] cores or more,
/// one per device (the senders', 0, and the receivers', 1).
/// `AQMLAB_EMULATE_WRITERS` (1 or 2) chooses, for measuring.
fn spawn_writers(tun: &[File; 2], clock: Clock) -> std::io::Result<Vec<Writer>> {
    let dup = |i: usize| tun[i].try_clone().map(Some);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chosen = std::env::var("AQMLAB_EMULATE_WRITERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let per_device = chosen.map_or(cores >= CORES_PER_DEVICE_WRITERS, |n| n >= 2);
    if !per_device {
        return Ok(vec![Writer::spawn([dup(0)?, dup(1)?], "both", clock)?]);
    }
    Ok(vec![
        Writer::spawn([dup(0)?, None], "senders", clock)?,
        Writer::spawn([None, dup(1)?], "receivers", clock)?,
    ])
}

/// With fewer cores a writer per device costs more than it saves: three
/// real-time threads (the plane and two writers) on two cores took turns, and
/// p99 lateness at 300 Mbit/s rose from about 65 us to 100-140 us
/// (BENCHMARKS.md).
const CORES_PER_DEVICE_WRITERS: usize = 4;

/// How long past the run's end the plane may handle what was due before it.
pub(super) const DRAIN_GRACE_NS: u64 = 200_000_000;

/// Runs the data plane until `cfg.end_ns` (or the stop flag), and at most
/// [`DRAIN_GRACE_NS`] past it. Fails only if the writers' threads cannot start.
pub fn run(cfg: Config) -> std::io::Result<Outcome> {
    // SAFETY: prctl on the calling thread; asks for timers as exact as the
    // hardware allows.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    realtime();
    let Config {
        flows,
        links,
        mut tun,
        epoch,
        warmup_ns,
        end_ns,
        queue_interval_ns,
        stop,
        capture_marked,
        apps,
        stats,
    } = cfg;
    let spin = spin_ns();
    let clock = Clock {
        epoch,
        measure_from: warmup_ns,
        end_ns,
        spin_ns: spin,
    };
    let writers = spawn_writers(&tun, clock)?;
    let mut p = Plane::new(flows, links, stats, warmup_ns, capture_marked);
    p.apps = apps;
    p.writers = writers;
    p.end_ns = end_ns;
    p.first_events(queue_interval_ns);
    let mut interrupted = false;
    let mut budget = Budget::new(epoch.elapsed().as_nanos() as u64);
    // Which devices the last poll found readable.
    let mut readable = [true, true];
    loop {
        let now = epoch.elapsed().as_nanos() as u64;
        if now >= end_ns {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        p.read_devices(&mut tun, readable, now);
        while let Some(&Reverse((t, _, ev))) = p.events.peek() {
            let wall = epoch.elapsed().as_nanos() as u64;
            // Behind a source that makes events faster than they are handled,
            // the run's end still comes on time.
            if t > now.max(wall) || wall >= end_ns {
                break;
            }
            p.events.pop();
            p.dispatch(ev, t, queue_interval_ns, end_ns);
        }
        let next = p.events.peek().map_or(end_ns, |r| r.0 .0).min(end_ns);
        let now = epoch.elapsed().as_nanos() as u64;
        // Sleep until a device is readable or the next event is near; within
        // the spin margin, only ask, while the budget lasts.
        let margin = if budget.awake(now) { spin } else { 0 };
        let sleep = if next > now + margin {
            next - now - margin / 2
        } else {
            0
        };
        readable = wait(&tun, sleep);
        budget.slept(epoch.elapsed().as_nanos() as u64, sleep > 0);
    }
    let unhandled = if interrupted {
        0
    } else {
        p.finish_due(epoch, queue_interval_ns, end_ns)
    };
    let end = if interrupted {
        (epoch.elapsed().as_nanos() as u64).min(end_ns)
    } else {
        end_ns
    };
    Ok(p.outcome(end, unhandled, interrupted))
}

impl Plane {
    fn new(
        flows: Vec<super::FlowPath>,
        links: [super::Bottleneck; 2],
        stats: [LinkStats; 2],
        warmup_ns: u64,
        capture_marked: usize,
    ) -> Plane {
        let n = flows.len();
        let mut p = Plane {
            flows,
            links,
            pool: QueuePool::default(),
            sink: VecSink::default(),
            events: BinaryHeap::new(),
            seq: 0,
            bufs: Vec::new(),
            slot_flow: Vec::new(),
            free: Vec::new(),
            measuring: warmup_ns == 0,
            warmup_ns,
            stats,
            at_warmup: None,
            flow_counts: vec![FlowCounters::default(); n],
            writers: Vec::new(),
            end_ns: u64::MAX,
            unclassified: 0,
            write_errors: 0,
            read_errors: 0,
            access_drops: 0,
            udp_id: 0,
            capture_marked,
            marked: Vec::new(),
            apps: None,
            scratch: vec![0; super::io::SCRATCH],
        };
        for _ in 0..1024 {
            let t = p.alloc();
            p.free.push(t);
        }
        p
    }

    /// The end of the warm-up, the first queue sample, and each source's first
    /// packet.
    fn first_events(&mut self, queue_interval_ns: u64) {
        if self.warmup_ns > 0 {
            self.push(self.warmup_ns, Ev::MeasureStart);
        }
        if queue_interval_ns > 0 {
            self.push(0, Ev::Sample);
        }
        for i in 0..self.flows.len() {
            let f = &self.flows[i];
            let udp = f.udp.as_ref().map(|u| u.start_ns);
            let probe = f.probe.as_ref().map(|p| p.start_ns);
            if let Some(s) = udp {
                self.push(s, Ev::Udp(i as u32));
            }
            if let Some(s) = probe {
                self.push(s, Ev::Probe(i as u32));
            }
        }
    }

    /// Handles what was due before the end and not yet handled (the last
    /// wake-up came late), as the simulator handles every event before its end.
    /// Their writes are not timekeeping, so the writers do not count their
    /// lateness. At most [`DRAIN_GRACE_NS`] past the end: returns how many
    /// were left then.
    fn finish_due(&mut self, epoch: Instant, queue_interval_ns: u64, end_ns: u64) -> u64 {
        let mut unhandled = 0;
        while let Some(&Reverse((t, _, ev))) = self.events.peek() {
            if t >= end_ns {
                break;
            }
            if epoch.elapsed().as_nanos() as u64 >= end_ns + DRAIN_GRACE_NS {
                unhandled = self.events.iter().filter(|e| e.0 .0 < end_ns).count() as u64;
                break;
            }
            self.events.pop();
            self.dispatch(ev, t, queue_interval_ns, end_ns);
        }
        unhandled
    }

    /// What the run counted, its measured interval ending at `end`.
    fn outcome(mut self, end: u64, unhandled: u64, interrupted: bool) -> Outcome {
        let mut lateness = Lateness::default();
        let mut write_errors = self.write_errors;
        let mut unhandled = unhandled;
        for w in std::mem::take(&mut self.writers) {
            let done = w.finish();
            lateness.merge(&done.lateness);
            write_errors += done.errors;
            unhandled += done.unwritten;
        }
        Outcome {
            links: self.measured(end),
            probes: self
                .flows
                .iter_mut()
                .map(|f| f.probe.take().map(|p| p.end))
                .collect(),
            stats: self.stats,
            flows: self.flow_counts,
            lateness,
            unclassified: self.unclassified,
            app_connections: self
                .apps
                .as_ref()
                .map_or((0, 0), |a| (a.taken(), a.refused)),
            write_errors,
            read_errors: self.read_errors,
            access_drops: self.access_drops,
            unhandled,
            links_back: self.links,
            end_ns: end,
            interrupted,
            marked: self.marked,
        }
    }
}

/// The share of the time the data plane may be on a CPU, working or spinning,
/// before it stops spinning: well below the kernel's limit for real-time
/// threads (`sched_rt_runtime_us`, 95% by default), past which the thread is
/// stopped for the rest of the second (tens of milliseconds of lateness), and
/// leaving the kernel's TCP on the other threads some of the machine. Measured
/// (BENCHMARKS.md): at 80% the 50 ms stalls still came at 300 Mbit/s; at 60%
/// they were rare; at 40% p99 lateness grew.
const BUSY_SHARE: f64 = 0.6;
/// The most a quiet spell saves up for spinning, ns.
const BUDGET_CAP_NS: f64 = 2_000_000.0;

/// How much the thread may still spin: credit earns [`BUSY_SHARE`] of every
/// nanosecond and pays for each one the thread is awake (not asleep in
/// `ppoll`), so over any long stretch it is on a CPU at most that share of the
/// time when it spins, however long its work takes.
pub(super) struct Budget {
    credit: f64,
    /// When it was last charged, and whether the thread slept since.
    at: u64,
    asleep: bool,
}

impl Budget {
    pub(super) fn new(now: u64) -> Self {
        Budget {
            credit: 0.0,
            at: now,
            asleep: false,
        }
    }

    fn charge(&mut self, now: u64) {
        let dt = now.saturating_sub(self.at) as f64;
        let cost = if self.asleep { 0.0 } else { dt };
        self.credit = (self.credit + BUSY_SHARE * dt - cost).min(BUDGET_CAP_NS);
        self.at = now;
    }

    /// The thread has been awake since its last wait; may it spin now?
    pub(super) fn awake(&mut self, now: u64) -> bool {
        self.charge(now);
        self.asleep = false;
        self.credit > 0.0
    }

    /// A wait ended at `now`: asleep all along, or a mere look (`slept` false).
    pub(super) fn slept(&mut self, now: u64, slept: bool) {
        self.asleep = slept;
        self.charge(now);
        self.asleep = false;
    }
}

/// Runs the calling thread under SCHED_FIFO at a low real-time priority, so that
/// a busy machine (compilers, other runs) delays the data plane as little as it
/// can. Best effort: without the right it stays a normal thread. The thread
/// sleeps whenever nothing is due within [`SPIN_NS`](super::SPIN_NS), and the kernel's real-time
/// throttling leaves other threads their share.
pub(super) fn realtime() {
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) };
}

#[cfg(test)]
mod tests {
    use super::{Budget, BUSY_SHARE};

    /// A thread always awake (spinning) runs out of credit and stays within its
    /// share; one asleep most of the time may always spin.
    #[test]
    fn spinning_stops_at_the_busy_share() {
        let mut b = Budget::new(0);
        let (mut t, mut spun) = (0u64, 0u64);
        // Each round: 10 us of work, then a look (spin) if allowed, else a
        // sleep of 10 us.
        for _ in 0..100_000 {
            t += 10_000;
            if b.awake(t) {
                t += 1_000;
                spun += 1_000;
                b.slept(t, false);
            } else {
                t += 10_000;
                b.slept(t, true);
            }
        }
        let awake = 100_000 * 10_000 + spun;
        let share = awake as f64 / t as f64;
        assert!(
            (share - BUSY_SHARE).abs() < 0.01,
            "awake {share:.3} of the time"
        );
        let mut quiet = Budget::new(0);
        let mut t = 0;
        for _ in 0..1000 {
            t += 9_000;
            quiet.slept(t, true);
            t += 1_000;
            assert!(quiet.awake(t), "a thread asleep 90% of the time spins");
        }
    }
}
