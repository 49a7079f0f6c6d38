//! The two network namespaces and their TUN devices.
//!
//! A namespace is made by a short-lived thread that calls `unshare(CLONE_NEWNET)`
//! and opens `/proc/thread-self/ns/net`: the returned descriptor is the only
//! thing that keeps the namespace alive. Nothing is bind-mounted under
//! `/run/netns`, so when the process ends, however it ends (SIGKILL included),
//! the kernel frees both namespaces and the TUN devices inside them; no run can
//! leave anything behind for the next one to remove. Work inside a namespace
//! (configuring a device, writing a sysctl, opening a socket) runs on a thread
//! that `setns`es into it first ([`Netns::run`]); sockets and TUN descriptors
//! stay in their namespace once made.
//!
//! Devices are configured with the classic ioctls (address, point-to-point peer,
//! netmask, MTU, queue length, up), so no `ip` or netlink is needed. A TUN device
//! gets no offloads unless asked (`TUNSETOFFLOAD`), so the kernel segments before
//! handing packets over: every packet read is at most the MTU. The senders'
//! device is asked ([`tun`]'s `offload`): it takes TCP segmentation and checksums
//! (`TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN`) and puts a `virtio_net_hdr`
//! before every packet either way (`IFF_VNET_HDR`), so one read brings a whole
//! TSO super-packet, which [`crate::gso`] cuts.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The senders' address (RFC 2544's benchmarking range).
pub const SENDER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The receivers' address.
pub const RECEIVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
/// The TUN devices' MTU.
pub const MTU: u32 = 1500;

const SIOCSIFFLAGS: libc::Ioctl = 0x8914;
const SIOCGIFFLAGS: libc::Ioctl = 0x8913;
const SIOCSIFADDR: libc::Ioctl = 0x8916;
const SIOCSIFDSTADDR: libc::Ioctl = 0x8918;
const SIOCSIFNETMASK: libc::Ioctl = 0x891c;
const SIOCSIFMTU: libc::Ioctl = 0x8922;
const SIOCSIFTXQLEN: libc::Ioctl = 0x8943;

/// The TUN device's transmit queue: packets the kernel holds for aqmlab to read.
/// Beyond it the kernel drops (counted in the device's `tx_dropped`).
const TXQUEUELEN: i32 = 4096;

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// A network namespace, alive while this value (or a socket in it) is.
pub struct Netns {
    fd: OwnedFd,
}

impl Netns {
    /// A new, empty network namespace.
    pub fn new() -> io::Result<Netns> {
        std::thread::spawn(|| {
            // SAFETY: unshare affects only this thread, which ends right after.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return Err(os_err("unshare(CLONE_NEWNET)"));
            }
            let f = File::open("/proc/thread-self/ns/net")?;
            Ok(Netns { fd: f.into() })
        })
        .join()
        .map_err(|_| io::Error::other("the namespace thread panicked"))?
    }

    /// Runs `f` on a thread inside this namespace and returns what it returns.
    pub fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> io::Result<T> + Send + 'static,
    ) -> io::Result<T> {
        let fd = self.fd.try_clone()?;
        std::thread::spawn(move || {
            enter(fd.as_raw_fd())?;
            f()
        })
        .join()
        .map_err(|_| io::Error::other("a thread in the namespace panicked"))?
    }

    /// A copy of the namespace's descriptor, for a long-lived thread to
    /// [`enter`].
    pub fn handle(&self) -> io::Result<OwnedFd> {
        self.fd.try_clone()
    }
}

/// Moves the calling thread into the namespace `fd`.
pub fn enter(fd: RawFd) -> io::Result<()> {
    // SAFETY: setns on a namespace descriptor we own; affects this thread only.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
        return Err(os_err("setns"));
    }
    Ok(())
}

/// Writes a sysctl of the calling thread's network namespace
/// (`net/ipv4/tcp_ecn`): `/proc/sys/net` is per namespace of the writer.
pub fn sysctl(path: &str, value: &str) -> io::Result<()> {
    let full = format!("/proc/sys/{path}");
    std::fs::write(&full, value).map_err(|e| io::Error::new(e.kind(), format!("{full}: {e}")))
}

fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain data; all zeros is a valid value.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    r
}

fn sockaddr(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(a).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; reinterpretation is
    // what the socket ioctls expect.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

fn ioctl(sock: RawFd, req: libc::Ioctl, r: &mut libc::ifreq, what: &str) -> io::Result<()> {
    // SAFETY: every request here takes a struct ifreq.
    if unsafe { libc::ioctl(sock, req, r as *mut libc::ifreq) } != 0 {
        return Err(os_err(what));
    }
    Ok(())
}

/// Opens a TUN device `name` (`IFF_TUN | IFF_NO_PI`) in the calling thread's
/// namespace, gives it `addr` with the point-to-point peer `peer` (which makes
/// the route to the peer), sets its MTU and queue, and brings it and `lo` up.
/// With `offload` the device takes IPv4 TCP segmentation and checksums, and
/// every packet read or written starts with a `virtio_net_hdr`
/// ([`crate::gso::VNET_HDR_LEN`] bytes). IPv6 is switched off in the namespace
/// first, so that nothing but the scenario's traffic crosses the device.
/// Returns the non-blocking descriptor.
pub fn tun(name: &str, addr: Ipv4Addr, peer: Ipv4Addr, offload: bool) -> io::Result<File> {
    if std::path::Path::new("/proc/sys/net/ipv6").exists() {
        for scope in ["all", "default"] {
            sysctl(&format!("net/ipv6/conf/{scope}/disable_ipv6"), "1")?;
        }
    }
    let path = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: open(2) of a constant path.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(os_err("open /dev/net/tun"));
    }
    // SAFETY: fd was just opened and is owned here.
    let file = unsafe { File::from_raw_fd(fd) };
    let mut r = ifreq(name);
    let vnet = if offload { libc::IFF_VNET_HDR } else { 0 };
    r.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI | vnet) as libc::c_short;
    ioctl(fd, libc::TUNSETIFF, &mut r, "TUNSETIFF")?;
    if offload {
        let features = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO_ECN;
        // SAFETY: TUNSETOFFLOAD takes the feature bits as its integer argument.
        if unsafe { libc::ioctl(fd, libc::TUNSETOFFLOAD, libc::c_ulong::from(features)) } != 0 {
            return Err(os_err("TUNSETOFFLOAD"));
        }
    }

    // SAFETY: a plain datagram socket for the interface ioctls.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if s < 0 {
        return Err(os_err("socket"));
    }
    // SAFETY: s was just opened and is owned here.
    let sock = unsafe { OwnedFd::from_raw_fd(s) };
    let s = sock.as_raw_fd();
    let mut r = ifreq(name);
    r.ifr_ifru.ifru_addr = sockaddr(addr);
    ioctl(s, SIOCSIFADDR, &mut r, "SIOCSIFADDR")?;
    r.ifr_ifru.ifru_dstaddr = sockaddr(peer);
    ioctl(s, SIOCSIFDSTADDR, &mut r, "SIOCSIFDSTADDR")?;
    r.ifr_ifru.ifru_netmask = sockaddr(Ipv4Addr::BROADCAST);
    ioctl(s, SIOCSIFNETMASK, &mut r, "SIOCSIFNETMASK")?;
    r.ifr_ifru.ifru_mtu = MTU as i32;
    ioctl(s, SIOCSIFMTU, &mut r, "SIOCSIFMTU")?;
    r.ifr_ifru.ifru_metric = TXQUEUELEN; // ifr_qlen shares the union's int
    ioctl(s, SIOCSIFTXQLEN, &mut r, "SIOCSIFTXQLEN")?;
    for dev in [name, "lo"] {
        let mut r = ifreq(dev);
        ioctl(s, SIOCGIFFLAGS, &mut r, "SIOCGIFFLAGS")?;
        // SAFETY: SIOCGIFFLAGS filled ifru_flags.
        let flags = unsafe { r.ifr_ifru.ifru_flags };
        r.ifr_ifru.ifru_flags = flags | (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        ioctl(s, SIOCSIFFLAGS, &mut r, "SIOCSIFFLAGS")?;
    }
    Ok(file)
}

/// Packets the kernel dropped at device `name` of the calling thread's
/// namespace because aqmlab did not read them in time (its `tx_dropped`, from
/// `/proc/thread-self/net/dev`, which shows the thread's namespace).
pub fn tx_dropped(name: &str) -> io::Result<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    for line in text.lines() {
        let Some((dev, rest)) = line.split_once(':') else {
            continue;
        };
        if dev.trim() == name {
            // rx: bytes packets errs drop fifo frame compressed multicast,
            // tx: bytes packets errs drop ...
            let n: Vec<u64> = rest
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            return Ok(n.get(11).copied().unwrap_or(0));
        }
    }
    Err(io::Error::other(format!("no device {name}")))
}

/// The calling thread's namespace's TCP counters: `/proc/thread-self/net/netstat`'s
/// `TcpExt` line (`TCPTimeouts`, `TCPRenoRecovery`, `TCPSackRecovery`, ...), by
/// name.
pub fn tcp_ext() -> io::Result<BTreeMap<String, u64>> {
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat")?;
    let mut lines = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return Err(io::Error::other("no TcpExt in /proc/net/netstat"));
    };
    Ok(names
        .split_whitespace()
        .zip(values.split_whitespace())
        .skip(1)
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect())
}

/// Whether the calling process may create namespaces and devices
/// (CAP_NET_ADMIN and CAP_SYS_ADMIN in its effective set).
pub fn privileged() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    const CAP_NET_ADMIN: u32 = 12;
    const CAP_SYS_ADMIN: u32 = 21;
    eff & (1 << CAP_NET_ADMIN) != 0 && eff & (1 << CAP_SYS_ADMIN) != 0
}

/// Removes namespaces an older or foreign run left bind-mounted as
/// `/run/netns/aqmlab-<pid>-*` whose process is gone. This version mounts none
/// (its namespaces die with it), but `ip netns add aqmlab-...` by hand, or a
/// debugging session, may have; returns the names removed.
pub fn remove_stale() -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return removed;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("aqmlab-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let path = e.path();
        if let Ok(c) = CString::new(path.to_string_lossy().as_bytes()) {
            // SAFETY: umount2 of a path we own the right to; failure is harmless.
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        }
        if std::fs::remove_file(&path).is_ok() {
            removed.push(name);
        }
    }
    removed
}
