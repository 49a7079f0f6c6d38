//! A user's programs through the emulated path (`aqmlab emulate --app GROUP --
//! CMD`): one command in the senders' namespace, optionally one in the
//! receivers', their traffic carried by the scenario's links and qdisc beside
//! the scenario's own flows. Each connection the programs open between the two
//! namespaces takes the next free flow of the named group, in the order its
//! first packet reaches the data plane, so it is counted and reported as a flow
//! of that group.

use crate::ipv4;
use crate::netns::Netns;
use sim::runner::Group;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The programs to run and the flow group their connections are counted in.
#[derive(Clone, Debug, Default)]
pub struct Apps {
    /// The scenario's flow group whose flows the connections take.
    pub group: String,
    /// The command run in the senders' namespace (program, arguments).
    pub sender: Vec<OsString>,
    /// A command line run with `sh -c` in the receivers' namespace, started
    /// first (a server), if any.
    pub receiver: Option<String>,
}

/// What a connection of the programs is known by: its protocol and its ports on
/// the senders' and on the receivers' side.
type Conn = (u8, u16, u16);

/// The data plane's map from the programs' connections to the group's flows.
#[derive(Debug, Default)]
pub struct ConnMap {
    /// Each connection's flow, and whether the receivers' side answered its
    /// SYN (a TCP connection refused before that gives its flow back).
    flows: HashMap<Conn, (u32, bool)>,
    /// The group's flows not yet taken, next first.
    free: std::collections::VecDeque<u32>,
    /// Connections that found no free flow (their packets are dropped).
    pub refused: u64,
}

impl ConnMap {
    /// A map over the group's flows `first..first + count`.
    pub fn new(first: u32, count: u32) -> ConnMap {
        ConnMap {
            flows: HashMap::new(),
            free: (first..first + count).collect(),
            refused: 0,
        }
    }

    /// The flow of the connection of header `h` (with TCP flags `flags`, 0
    /// for UDP), read in direction `dir` (forward: from the senders' side): the
    /// one it took, or the next free one; `None` when every flow is taken. A
    /// TCP connection reset before its SYN was answered (a port no one listens
    /// on yet) gives its flow back, first in line, so a refused attempt does
    /// not take one of the group's flows.
    pub fn flow(&mut self, h: &ipv4::Header, dir: usize, flags: u8) -> Option<u32> {
        if h.proto == ipv4::PROTO_ICMP {
            return None;
        }
        let conn = if dir == crate::plane::FWD {
            (h.proto, h.src_port, h.dst_port)
        } else {
            (h.proto, h.dst_port, h.src_port)
        };
        let tcp = h.proto == ipv4::PROTO_TCP;
        let syn_ack = ipv4::TCP_SYN | ipv4::TCP_ACK;
        if let Some(&mut (f, ref mut answered)) = self.flows.get_mut(&conn) {
            if tcp && flags & syn_ack == syn_ack {
                *answered = true;
            } else if tcp && flags & ipv4::TCP_RST != 0 && !*answered {
                self.flows.remove(&conn);
                self.free.push_front(f);
            }
            return Some(f);
        }
        match self.free.pop_front() {
            Some(f) => {
                self.flows.insert(conn, (f, h.proto != ipv4::PROTO_TCP));
                Some(f)
            }
            None => {
                self.refused += 1;
                None
            }
        }
    }

    /// How many connections took a flow.
    pub fn taken(&self) -> usize {
        self.flows.len()
    }
}

/// The new data a program's flow delivered: the end of the highest TCP
/// sequence delivered, so that a retransmission is not counted twice.
#[derive(Copy, Clone, Debug, Default)]
pub struct Delivered {
    high: Option<u32>,
}

impl Delivered {
    /// Whether a TCP segment `(seq, len)` carries data beyond what was
    /// delivered before (sequence numbers compared modulo 2^32).
    pub fn is_new(&mut self, seq: u32, len: u32) -> bool {
        if len == 0 {
            return false;
        }
        let end = seq.wrapping_add(len);
        match self.high {
            Some(h) if (end.wrapping_sub(h) as i32) <= 0 => false,
            _ => {
                self.high = Some(end);
                true
            }
        }
    }
}

/// A program running in a namespace, in a process group of its own: stopping it
/// stops what it started too (`sh -c` with a pipeline, a server's workers), and
/// a run that ends early on an error kills it on the way out.
pub struct Running {
    what: String,
    child: Child,
    ended: bool,
}

/// Starts `program args` in namespace `ns`: its standard output and error go
/// to this process's standard error (so `--json` on standard output stays
/// clean), and it is killed if this process dies.
pub fn spawn(ns: &Netns, program: &OsString, args: &[OsString], what: &str) -> io::Result<Running> {
    let fd: OwnedFd = ns.handle()?;
    let raw = fd.as_raw_fd();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(io::stderr())
        .stderr(io::stderr())
        .process_group(0);
    // SAFETY: between fork and exec only async-signal-safe calls: setns on a
    // descriptor the child inherited, and prctl.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(raw, libc::CLONE_NEWNET) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("{what}: cannot start {}: {e}", program.to_string_lossy()),
        )
    })?;
    drop(fd);
    Ok(Running {
        what: what.to_string(),
        child,
        ended: false,
    })
}

/// Starts the receivers' command line of `apps` with `sh -c` in `rcv`, if
/// there is one.
pub fn start_receiver(apps: Option<&Apps>, rcv: &Netns) -> io::Result<Option<Running>> {
    let Some(line) = apps.and_then(|a| a.receiver.as_ref()) else {
        return Ok(None);
    };
    let args = ["-c".into(), line.into()];
    spawn(rcv, &"sh".into(), &args, "the receivers' command").map(Some)
}

/// Starts the senders' command of `apps` in `snd`, if there is one.
pub fn start_sender(apps: Option<&Apps>, snd: &Netns) -> io::Result<Option<Running>> {
    let Some((program, args)) = apps.and_then(|a| a.sender.split_first()) else {
        return Ok(None);
    };
    spawn(snd, program, args, "the senders' command").map(Some)
}

/// Ends the programs that were started; what the run says of each.
pub fn finish(programs: [Option<Running>; 2]) -> Vec<String> {
    programs
        .into_iter()
        .flatten()
        .filter_map(Running::finish)
        .collect()
}

/// What the run says when some of the programs' connections found every flow
/// of `group` taken.
pub fn refused_warning(group: &Group, taken: usize, refused: u64) -> Option<String> {
    (refused > 0).then(|| {
        format!(
            "{refused} of the programs' connections found no free flow of group \"{}\" \
             ({taken} taken, count = {}): their packets were dropped",
            group.name, group.count
        )
    })
}

impl Running {
    /// Sends `signal` to the program's process group.
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on the process group our child leads.
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), signal) };
    }

    /// Ends the program if it still runs (SIGTERM to its process group, then
    /// SIGKILL after a second) and says how it ended: `None` for a clean exit
    /// before the end of the run, a warning otherwise.
    pub fn finish(mut self) -> Option<String> {
        self.ended = true;
        if let Ok(Some(status)) = self.child.try_wait() {
            // What it left running in its group goes too.
            self.signal(libc::SIGKILL);
            return (!status.success()).then(|| format!("{} {}", self.what, describe(status)));
        }
        self.signal(libc::SIGTERM);
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.signal(libc::SIGKILL);
                return Some(format!(
                    "{} was still running at the end of the run and was stopped",
                    self.what
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.signal(libc::SIGKILL);
        let _ = self.child.wait();
        Some(format!(
            "{} was still running at the end of the run and was killed",
            self.what
        ))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.ended {
            self.signal(libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was ended by signal {sig}"),
        _ => "ended".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plane::{FWD, REV};

    fn header(proto: u8, src: u16, dst: u16) -> ipv4::Header {
        ipv4::Header {
            len: 100,
            proto,
            src_port: src,
            dst_port: dst,
            tos: ipv4::Tos::default(),
        }
    }

    #[test]
    fn each_connection_takes_the_next_free_flow_in_either_direction() {
        let mut m = ConnMap::new(3, 2);
        let tcp = ipv4::PROTO_TCP;
        // A connection first seen going back (a server in the senders'
        // namespace answering first) and then forward is one connection.
        assert_eq!(m.flow(&header(tcp, 5201, 40000), REV, 0), Some(3));
        assert_eq!(m.flow(&header(tcp, 40000, 5201), FWD, 0), Some(3));
        // Another port pair, or the same ports over UDP, is another.
        assert_eq!(
            m.flow(&header(ipv4::PROTO_UDP, 40000, 5201), FWD, 0),
            Some(4)
        );
        assert_eq!(m.flow(&header(tcp, 40001, 5201), FWD, 0), None);
        assert_eq!((m.taken(), m.refused), (2, 1));
        assert_eq!(m.flow(&header(tcp, 5201, 40000), REV, 0), Some(3));
        assert_eq!(m.flow(&header(ipv4::PROTO_ICMP, 7, 7), FWD, 0), None);
    }

    #[test]
    fn a_connection_refused_before_its_syn_is_answered_gives_its_flow_back() {
        use ipv4::{TCP_ACK, TCP_RST, TCP_SYN};
        let mut m = ConnMap::new(0, 2);
        let tcp = ipv4::PROTO_TCP;
        // A SYN to a port no one listens on yet, and the receivers' reset.
        assert_eq!(m.flow(&header(tcp, 40000, 5201), FWD, TCP_SYN), Some(0));
        assert_eq!(
            m.flow(&header(tcp, 5201, 40000), REV, TCP_RST | TCP_ACK),
            Some(0)
        );
        assert_eq!(m.taken(), 0);
        // The retry, from another port, takes the group's first flow.
        assert_eq!(m.flow(&header(tcp, 40001, 5201), FWD, TCP_SYN), Some(0));
        assert_eq!(
            m.flow(&header(tcp, 5201, 40001), REV, TCP_SYN | TCP_ACK),
            Some(0)
        );
        // Once answered, a reset ends the connection but keeps its flow.
        assert_eq!(m.flow(&header(tcp, 40001, 5201), FWD, TCP_RST), Some(0));
        assert_eq!(m.taken(), 1);
        assert_eq!(m.flow(&header(tcp, 40002, 5201), FWD, TCP_SYN), Some(1));
    }

    #[test]
    fn only_data_beyond_the_highest_delivered_is_new_across_the_wrap() {
        let mut d = Delivered::default();
        let start = u32::MAX - 1000;
        assert!(d.is_new(start, 1448));
        // A retransmission of it, and a pure ACK, are not.
        assert!(!d.is_new(start, 1448));
        assert!(!d.is_new(start.wrapping_add(1448), 0));
        // The next segment, past the wrap of the sequence space, is.
        assert!(d.is_new(start.wrapping_add(1448), 1448));
        // A segment partly beyond what was delivered carries new data.
        assert!(d.is_new(start.wrapping_add(2000), 1448));
        assert!(!d.is_new(start.wrapping_add(100), 1448));
    }
}
