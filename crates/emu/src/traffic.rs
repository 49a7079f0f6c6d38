//! Real traffic: kernel TCP socket pairs across the two namespaces, and the UDP
//! socket that receives what the data plane sends.
//!
//! Each TCP flow is a sender thread in the senders' namespace (bound to port
//! `PORT_BASE + flow`, so the data plane knows the flow by its port) that writes
//! without pause from its start time, and a reader thread for the connection the
//! receivers' listener accepted, which counts the bytes the application read.
//! Every sender samples its own `TCP_INFO` (cwnd, ssthresh, srtt, data segments
//! out, retransmissions, retransmission timeouts) as it goes, and counts its
//! entries into fast recovery from the congestion-avoidance state it polls.

use crate::netns::{enter, Netns, RECEIVER_ADDR, SENDER_ADDR};
use crate::plane::{PORT_BASE, TCP_PORT, UDP_PORT};
use crate::tcp_info::{bbr_info, tcp_info, Recoveries};
pub use crate::tcp_info::{BbrInfo, InfoSample};
use std::io::{self, Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One TCP flow as the kernel will run it.
#[derive(Clone, Debug)]
pub struct TcpPlan {
    pub flow: usize,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// `TCP_CONGESTION`.
    pub congestion: String,
    /// Whether the connection must have SACK and ECN on: checked once it is
    /// set up, since the data plane strips them from its SYN where the
    /// namespaces' sysctls would turn them on.
    pub sack: bool,
    pub ecn: bool,
    /// The DiffServ codepoint of its data (`IP_TOS`; the kernel keeps the ECN
    /// bits its own).
    pub dscp: u8,
    /// `TCP_MAXSEG`: the packet size less the IP and TCP headers.
    pub maxseg: u32,
}

/// The receivers' counters at one instant.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub read_bytes: Vec<u64>,
    pub datagrams: Vec<u64>,
}

/// What the traffic threads share with the run.
pub struct Shared {
    /// Bytes the receiving application read, per flow.
    pub read_bytes: Vec<AtomicU64>,
    /// Datagrams received, per flow (UDP).
    pub datagrams: Vec<AtomicU64>,
    /// Per flow: its senders' `TCP_INFO` samples.
    pub info: Vec<Mutex<Vec<InfoSample>>>,
    /// Set when the run is over: every thread returns.
    pub done: AtomicBool,
    /// Errors the threads met (a connect that failed), for the run to report.
    pub errors: Mutex<Vec<String>>,
    /// What the run's results must say of a flow (a connection set up without
    /// ECN after its SYN was lost).
    pub warnings: Mutex<Vec<String>>,
    /// Per flow: the receiver's window clamp, bytes (0: none).
    windows: Vec<u32>,
}

/// The traffic's threads.
pub struct Traffic {
    pub shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

fn setsockopt<T>(fd: RawFd, level: i32, name: i32, v: &T, what: &str) -> io::Result<()> {
    // SAFETY: v points to a live value of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
    }
    Ok(())
}

fn tcp_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2); the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr_in(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn bind(fd: RawFd, a: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr_in(a);
    // SAFETY: a sockaddr_in of the size given.
    let r = unsafe {
        libc::bind(
            fd,
            &sa as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("bind {a}: {e}")));
    }
    Ok(())
}

/// Whether this kernel's `TCP_INFO` counts retransmission timeouts
/// (`tcpi_total_rto`, Linux 6.7): asked of a fresh socket.
pub fn counts_timeouts() -> bool {
    tcp_socket()
        .ok()
        .and_then(|fd| tcp_info(fd.as_raw_fd()))
        .is_some_and(|(_, rto)| rto.is_some())
}

fn now_ns(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

fn sleep_until(epoch: Instant, t_ns: u64, shared: &Shared) -> bool {
    loop {
        if shared.done.load(Ordering::Relaxed) {
            return false;
        }
        let now = now_ns(epoch);
        if now >= t_ns {
            return true;
        }
        std::thread::sleep(Duration::from_nanos((t_ns - now).min(20_000_000)));
    }
}

impl Traffic {
    /// Starts the receivers (in `rcv`): the TCP listener and the UDP socket.
    /// The senders start with [`Traffic::start_senders`] once the data plane runs.
    pub fn start_receivers(rcv: &Netns, windows: Vec<u32>, maxseg: u32) -> io::Result<Traffic> {
        let flows = windows.len();
        let shared = Arc::new(Shared {
            read_bytes: (0..flows).map(|_| AtomicU64::new(0)).collect(),
            datagrams: (0..flows).map(|_| AtomicU64::new(0)).collect(),
            info: (0..flows).map(|_| Mutex::new(Vec::new())).collect(),
            done: AtomicBool::new(false),
            errors: Mutex::new(Vec::new()),
            warnings: Mutex::new(Vec::new()),
            windows,
        });
        let (listener, udp) = rcv.run(move || {
            let fd = tcp_socket()?;
            let one: libc::c_int = 1;
            setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                &one,
                "SO_REUSEADDR",
            )?;
            let mss = maxseg as libc::c_int;
            setsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                &mss,
                "TCP_MAXSEG",
            )?;
            bind(fd.as_raw_fd(), SocketAddrV4::new(RECEIVER_ADDR, TCP_PORT))?;
            // SAFETY: listen(2) on our socket.
            if unsafe { libc::listen(fd.as_raw_fd(), 4096) } != 0 {
                return Err(io::Error::last_os_error());
            }
            let listener = TcpListener::from(fd);
            listener.set_nonblocking(true)?;
            let udp = UdpSocket::bind(SocketAddrV4::new(RECEIVER_ADDR, UDP_PORT))?;
            let big: libc::c_int = 8 << 20;
            setsockopt(
                udp.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                &big,
                "SO_RCVBUFFORCE",
            )?;
            udp.set_read_timeout(Some(Duration::from_millis(50)))?;
            Ok((listener, udp))
        })?;
        let mut threads = Vec::new();
        let sh = shared.clone();
        threads.push(std::thread::spawn(move || accept_loop(listener, sh)));
        let sh = shared.clone();
        threads.push(std::thread::spawn(move || udp_loop(udp, sh)));
        Ok(Traffic { shared, threads })
    }

    /// Starts one sender thread per TCP flow, in `snd`.
    pub fn start_senders(
        &mut self,
        snd: &Netns,
        plans: Vec<TcpPlan>,
        epoch: Instant,
    ) -> io::Result<()> {
        for plan in plans {
            let ns = snd.handle()?;
            let sh = self.shared.clone();
            self.threads.push(std::thread::spawn(move || {
                if let Err(e) = enter(ns.as_raw_fd()).and_then(|_| send_loop(&plan, epoch, &sh)) {
                    if !sh.done.load(Ordering::Relaxed) {
                        sh.errors
                            .lock()
                            .expect("not poisoned")
                            .push(format!("flow {}: {e}", plan.flow));
                    }
                }
            }));
        }
        Ok(())
    }

    /// The receivers' counters now.
    pub fn snapshot(&self) -> Snapshot {
        let read = |v: &[AtomicU64]| v.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        Snapshot {
            read_bytes: read(&self.shared.read_bytes),
            datagrams: read(&self.shared.datagrams),
        }
    }

    /// Tells every thread to return and waits for them.
    pub fn finish(self) -> Arc<Shared> {
        self.shared.done.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
        self.shared
    }
}

fn accept_loop(listener: TcpListener, sh: Arc<Shared>) {
    let mut readers = Vec::new();
    while !sh.done.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let flow = peer.port().wrapping_sub(PORT_BASE) as usize;
                if flow >= sh.read_bytes.len() {
                    continue;
                }
                if sh.windows[flow] > 0 && clamp_window(&stream, sh.windows[flow]).is_err() {
                    continue;
                }
                let sh = sh.clone();
                readers.push(std::thread::spawn(move || read_loop(stream, flow, &sh)));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    for r in readers {
        let _ = r.join();
    }
}

fn read_loop(mut stream: TcpStream, flow: usize, sh: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = vec![0u8; 1 << 16];
    while !sh.done.load(Ordering::Relaxed) {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                sh.read_bytes[flow].fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn udp_loop(udp: UdpSocket, sh: Arc<Shared>) {
    let mut buf = vec![0u8; 1 << 16];
    while !sh.done.load(Ordering::Relaxed) {
        if let Ok((_, from)) = udp.recv_from(&mut buf) {
            let flow = from.port().wrapping_sub(PORT_BASE) as usize;
            if let Some(c) = sh.datagrams.get(flow) {
                c.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Connects `fd` to the receivers' listener, giving up when the run ends (a
/// SYN the bottleneck dropped is retried by the kernel after a second, then
/// after 3, 7, ...): false if it ended first.
fn connect(fd: RawFd, sh: &Shared) -> io::Result<bool> {
    let to = sockaddr_in(SocketAddrV4::new(RECEIVER_ADDR, TCP_PORT));
    // SAFETY: fcntl on our descriptor, then a sockaddr_in of the size given.
    let r = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        libc::connect(
            fd,
            &to as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::new(e.kind(), format!("connect: {e}")));
        }
        loop {
            if sh.done.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one pollfd on the stack.
            if unsafe { libc::poll(&mut p, 1, 20) } > 0 {
                break;
            }
        }
        let mut err: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: SO_ERROR into an int of the size given.
        unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                &mut err as *mut libc::c_int as *mut libc::c_void,
                &mut len,
            )
        };
        if err != 0 {
            let e = io::Error::from_raw_os_error(err);
            return Err(io::Error::new(e.kind(), format!("connect: {e}")));
        }
    }
    // SAFETY: fcntl on our descriptor: blocking again (writes time out instead).
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(true)
}

/// How often a sender records its `TCP_INFO`.
const INFO_EVERY_NS: u64 = 10_000_000;
/// How often a sender polls its `TCP_INFO` for recoveries; also the longest a
/// `write` blocks.
const POLL_NS: u64 = 2_000_000;

fn send_loop(plan: &TcpPlan, epoch: Instant, sh: &Shared) -> io::Result<()> {
    let fd = tcp_socket()?;
    let raw = fd.as_raw_fd();
    let cc = plan.congestion.as_bytes();
    // SAFETY: the name's bytes and length.
    let r = unsafe {
        libc::setsockopt(
            raw,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("TCP_CONGESTION {}: {e}", plan.congestion),
        ));
    }
    let mss = plan.maxseg as libc::c_int;
    setsockopt(raw, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &mss, "TCP_MAXSEG")?;
    if plan.dscp != 0 {
        let tos = libc::c_int::from(plan.dscp) << 2;
        setsockopt(raw, libc::IPPROTO_IP, libc::IP_TOS, &tos, "IP_TOS")?;
    }
    let one: libc::c_int = 1;
    setsockopt(
        raw,
        libc::SOL_SOCKET,
        libc::SO_REUSEADDR,
        &one,
        "SO_REUSEADDR",
    )?;
    let port = PORT_BASE + plan.flow as u16;
    bind(raw, SocketAddrV4::new(SENDER_ADDR, port))?;
    if !sleep_until(epoch, plan.start_ns, sh) {
        return Ok(());
    }
    if !connect(raw, sh)? {
        return Ok(());
    }
    if let Some(w) = negotiated_as_planned(raw, plan)? {
        sh.warnings.lock().expect("not poisoned").push(w);
    }
    let mut stream = TcpStream::from(fd);
    stream.set_write_timeout(Some(Duration::from_nanos(POLL_NS)))?;
    let buf = vec![0x5au8; 1 << 16];
    let mut next_info = 0;
    let mut next_poll = 0;
    let mut recoveries = Recoveries::default();
    loop {
        let now = now_ns(epoch);
        if sh.done.load(Ordering::Relaxed) || plan.stop_ns.is_some_and(|s| now >= s) {
            break;
        }
        if now >= next_poll {
            next_poll = now + POLL_NS;
            if let Some((i, total_rto)) = tcp_info(raw) {
                recoveries.see(i.tcpi_ca_state);
                if now >= next_info {
                    next_info = now + INFO_EVERY_NS;
                    sh.info[plan.flow]
                        .lock()
                        .expect("not poisoned")
                        .push(InfoSample {
                            t_ns: now,
                            cwnd: i.tcpi_snd_cwnd,
                            ssthresh: i.tcpi_snd_ssthresh,
                            srtt_us: i.tcpi_rtt,
                            rto_us: i.tcpi_rto,
                            unacked: i.tcpi_unacked,
                            data_segs_out: i.tcpi_data_segs_out,
                            total_retrans: i.tcpi_total_retrans,
                            snd_mss: i.tcpi_snd_mss,
                            pacing_rate: i.tcpi_pacing_rate,
                            bbr: bbr_info(raw),
                            total_rto: total_rto.map_or(0, u32::from),
                            recoveries: recoveries.count,
                        });
                }
            }
        }
        match stream.write(&buf) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `tcpi_options` bits (`include/uapi/linux/tcp.h`).
const TCPI_OPT_SACK: u8 = 2;
const TCPI_OPT_ECN: u8 = 8;

/// Checks that the connection on `fd` set up SACK and ECN as `plan` says, and
/// fails when it did not: a run whose connections differ from the scenario's is
/// not the scenario's. One exception is Linux's own: an ECN-setup SYN that was
/// lost is sent again without ECN (RFC 3168 6.1.1.1), and the connection runs
/// without it; that is a warning naming the flow.
fn negotiated_as_planned(fd: RawFd, plan: &TcpPlan) -> io::Result<Option<String>> {
    let Some((info, _)) = tcp_info(fd) else {
        return Ok(None);
    };
    let sack = info.tcpi_options & TCPI_OPT_SACK != 0;
    let ecn = info.tcpi_options & TCPI_OPT_ECN != 0;
    let on = |b: bool| if b { "on" } else { "off" };
    if sack != plan.sack || (ecn && !plan.ecn) {
        let what = if sack != plan.sack { "SACK" } else { "ECN" };
        let (got, want) = if sack != plan.sack {
            (sack, plan.sack)
        } else {
            (ecn, plan.ecn)
        };
        return Err(io::Error::other(format!(
            "the connection was set up with {what} {} where the scenario has it {}",
            on(got),
            on(want)
        )));
    }
    Ok((plan.ecn && !ecn).then(|| {
        format!(
            "flow {} runs without ECN: its ECN-setup SYN was lost and Linux sent it \
             again without ECN, as RFC 3168 6.1.1.1 asks",
            plan.flow
        )
    }))
}

/// Bounds the window a receiver advertises (`max_window`), so the sender's data
/// in flight stays within it as the simulator's window does.
fn clamp_window(stream: &TcpStream, bytes: u32) -> io::Result<()> {
    let v = bytes as libc::c_int;
    setsockopt(
        stream.as_raw_fd(),
        libc::IPPROTO_TCP,
        libc::TCP_WINDOW_CLAMP,
        &v,
        "TCP_WINDOW_CLAMP",
    )
}
