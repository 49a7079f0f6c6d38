//! The writers: threads that write each packet at its due time, one for both
//! devices or, with cores enough, one per device (`event_loop::spawn_writers`).
//!
//! The plane hands a packet over the moment its transmission on the bottleneck
//! ends, when the link's delay and the far access link are still ahead of it,
//! so the thread that keeps time for the writes is not the one that runs the
//! queue. A write runs the receiving side's TCP inside the system call (the
//! receivers' for data, the senders' for ACKs, and with it their next
//! segments); with a writer per device, that work delays only the writes to
//! its own device. The order of the writes to one device is the order of their
//! due times, ties in the order they were handed over, as the plane's own
//! events are ordered.

use super::event_loop::{realtime, Budget, DRAIN_GRACE_NS};
use super::io::write;
use crate::stats::Lateness;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A packet to write at `due` (ns since the run began).
pub(super) struct Handoff {
    pub due: u64,
    pub out: usize,
    pub buf: Vec<u8>,
}

/// What a writer counted: the lateness of the writes made in the measured
/// interval before the run's end, the writes the kernel refused, and the
/// packets due before the end it had not written when its time was up (it fell
/// behind).
pub(super) struct WriterEnd {
    pub lateness: Lateness,
    pub errors: u64,
    pub unwritten: u64,
}

/// The plane's end of one writer.
pub(super) struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<WriterEnd>>,
}

/// What the plane and a writer share. The writer is woken only by a packet
/// due before the time it sleeps to: packets are handed over well ahead of
/// their time, so most hand-overs cost no wake-up (a futex call and a switch
/// of threads, a few microseconds each, on both cores, 37,000 times a second
/// at 300 Mbit/s).
struct Shared {
    inbox: Mutex<Inbox>,
    wake: Condvar,
}

struct Inbox {
    handed: Vec<Handoff>,
    /// Buffers written, back for reuse.
    returned: Vec<Vec<u8>>,
    /// When the writer wakes if nothing wakes it (`u64::MAX`: never; 0: it is
    /// awake and looks at the inbox before it sleeps).
    sleeping_until: u64,
    /// Nothing more is coming.
    closed: bool,
    /// The writer is gone.
    gone: bool,
}

impl Shared {
    fn inbox(&self) -> MutexGuard<'_, Inbox> {
        // A writer that panicked holding the lock leaves it as it was.
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// When a writer counts lateness and when it stops.
#[derive(Copy, Clone)]
pub(super) struct Clock {
    pub epoch: Instant,
    /// Writes due before this are the warm-up's: not counted.
    pub measure_from: u64,
    pub end_ns: u64,
    /// Within this distance of the next write the thread spins.
    pub spin_ns: u64,
}

impl Writer {
    /// Starts a writer of the devices `devs` (0: the senders', 1: the
    /// receivers'; `None` where another writer has it).
    pub fn spawn(devs: [Option<File>; 2], name: &str, clock: Clock) -> std::io::Result<Writer> {
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox {
                handed: Vec::new(),
                returned: Vec::new(),
                sleeping_until: 0,
                closed: false,
                gone: false,
            }),
            wake: Condvar::new(),
        });
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("aqmlab-writer-{name}"))
            .spawn(move || {
                let end = write_loop(devs, &theirs, clock);
                theirs.inbox().gone = true;
                end
            })?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Hands `buf` over to be written at `due`, and takes back a buffer the
    /// writer is done with, if there is one. Returns `Err` with a spare buffer
    /// when the writer is gone (it panicked): the packet is lost, counted as a
    /// write error.
    pub fn hand_over(&self, due: u64, out: usize, buf: Vec<u8>) -> Result<Option<Vec<u8>>, ()> {
        let mut inbox = self.shared.inbox();
        if inbox.gone {
            return Err(());
        }
        inbox.handed.push(Handoff { due, out, buf });
        let wake = due < inbox.sleeping_until;
        let spare = inbox.returned.pop();
        drop(inbox);
        if wake {
            self.shared.wake.notify_one();
        }
        Ok(spare)
    }

    /// Tells the writer nothing more is coming, waits for it to write what is
    /// due before the run's end, and returns what it counted.
    pub fn finish(mut self) -> WriterEnd {
        self.shared.inbox().closed = true;
        self.shared.wake.notify_one();
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_else(|| WriterEnd {
                lateness: Lateness::default(),
                errors: 1,
                unwritten: 0,
            })
    }
}

/// A packet waiting for its time; ordered by due time, then by hand-over.
struct Pending {
    due: u64,
    seq: u64,
    out: usize,
    buf: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

struct Queue {
    pending: BinaryHeap<Reverse<Pending>>,
    seq: u64,
}

impl Queue {
    fn push(&mut self, h: Handoff) {
        self.seq += 1;
        self.pending.push(Reverse(Pending {
            due: h.due,
            seq: self.seq,
            out: h.out,
            buf: h.buf,
        }));
    }

    fn next_due(&self) -> Option<u64> {
        self.pending.peek().map(|p| p.0.due)
    }
}

fn write_loop(mut devs: [Option<File>; 2], shared: &Shared, clock: Clock) -> WriterEnd {
    // SAFETY: prctl on the calling thread; asks for timers as exact as the
    // hardware allows.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    realtime();
    let now = || clock.epoch.elapsed().as_nanos() as u64;
    let mut q = Queue {
        pending: BinaryHeap::new(),
        seq: 0,
    };
    let mut end = WriterEnd {
        lateness: Lateness::default(),
        errors: 0,
        unwritten: 0,
    };
    let mut written_bufs = Vec::new();
    let mut budget = Budget::new(now());
    loop {
        let closed = {
            let mut inbox = shared.inbox();
            for h in inbox.handed.drain(..) {
                q.push(h);
            }
            inbox.returned.append(&mut written_bufs);
            inbox.closed
        };
        let mut t = now();
        while let Some(due) = q.next_due().filter(|&d| d <= t && d < clock.end_ns) {
            let Reverse(p) = q.pending.pop().expect("a packet is due");
            // A packet is delivered when the kernel takes it: the write's own
            // time is the receiving side's processing, which delays only the
            // writes after it.
            let began = now();
            let written = match &mut devs[p.out] {
                Some(dev) => write(dev, p.out, &p.buf),
                None => Err(std::io::ErrorKind::NotFound.into()),
            };
            if written.is_err() {
                end.errors += 1;
            }
            t = now();
            // The writes after the run's end finish what was due before it;
            // they are not timekeeping.
            if due >= clock.measure_from && t < clock.end_ns {
                end.lateness.add(began.saturating_sub(due));
            }
            written_bufs.push(p.buf);
        }
        let next = q.next_due().filter(|&d| d < clock.end_ns);
        if closed && (next.is_none() || t >= clock.end_ns + DRAIN_GRACE_NS) {
            end.unwritten = q.pending.iter().filter(|p| p.0.due < clock.end_ns).count() as u64;
            return end;
        }
        let margin = if budget.awake(t) { clock.spin_ns } else { 0 };
        let sleep = match next {
            Some(d) if d > t + margin => Some(d - t - margin / 2),
            Some(_) => None,
            None => Some(u64::MAX),
        };
        if let Some(ns) = sleep {
            wait(shared, t, ns);
        }
        budget.slept(now(), sleep.is_some());
    }
}

/// Sleeps from `t` for `ns` (`u64::MAX`: until woken) unless a hand-over is
/// waiting; a hand-over due before the end of the sleep, or the end of the
/// run, wakes it.
fn wait(shared: &Shared, t: u64, ns: u64) {
    let mut inbox = shared.inbox();
    if !inbox.handed.is_empty() {
        return;
    }
    if inbox.closed {
        drop(inbox);
        if ns != u64::MAX {
            std::thread::sleep(Duration::from_nanos(ns));
        }
        return;
    }
    inbox.sleeping_until = t.saturating_add(ns);
    let mut inbox = if ns == u64::MAX {
        shared.wake.wait(inbox).unwrap_or_else(|e| e.into_inner())
    } else {
        let waited = shared.wake.wait_timeout(inbox, Duration::from_nanos(ns));
        waited.unwrap_or_else(|e| e.into_inner()).0
    };
    inbox.sleeping_until = 0;
}

#[cfg(test)]
mod tests {
    use super::{Clock, Writer};
    use std::fs::File;
    use std::io::Read;
    use std::os::fd::FromRawFd;
    use std::time::Instant;

    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: a valid array of two descriptors for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors were just opened and are owned here only.
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    /// Packets are written in the order of their due times, ties in the order
    /// they were handed over, none before its time; what is due after the
    /// run's end is never written; what is due before it always is, at once
    /// when the plane hands it over late.
    #[test]
    fn writes_in_due_order_at_due_time_until_the_end() {
        let (mut read_end, write_end) = pipe();
        let epoch = Instant::now();
        let ms = 1_000_000;
        let clock = Clock {
            epoch,
            measure_from: 0,
            end_ns: 40 * ms,
            spin_ns: 0,
        };
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut b = [0u8; 1];
            while read_end.read(&mut b).unwrap() == 1 {
                seen.push((b[0], epoch.elapsed().as_nanos() as u64));
            }
            seen
        });
        let w = Writer::spawn([None, Some(write_end)], "test", clock).unwrap();
        let due = [(b'd', 30), (b'b', 10), (b'x', 50), (b'c', 10), (b'a', 5)];
        for (byte, at) in due {
            assert!(w.hand_over(at * ms, 1, vec![byte]).is_ok());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        // Handed over while the writer sleeps to 'd' (30 ms): it wakes for it.
        assert!(w.hand_over(15 * ms, 1, vec![b'e']).is_ok());
        let end = w.finish();
        let seen = reader.join().unwrap();
        let order: Vec<u8> = seen.iter().map(|s| s.0).collect();
        assert_eq!(order, b"abced");
        for (byte, at) in seen {
            let due = [&due[..], &[(b'e', 20)]].concat();
            let (_, d) = due.iter().find(|d| d.0 == byte).unwrap();
            assert!(
                at >= d * ms,
                "{} written at {at} ns, due {d} ms",
                byte as char
            );
        }
        assert_eq!((end.errors, end.unwritten), (0, 0));
        assert_eq!(end.lateness.count, 5);
        // The one handed over late was written at least 5 ms late.
        assert!(end.lateness.max_ns >= 5 * ms);
    }
}
