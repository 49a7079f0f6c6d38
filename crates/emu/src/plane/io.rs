//! The data plane's system calls on the two devices: reads (the senders' device
//! a TSO super-packet at a time, cut by [`crate::gso`]), writes, and the wait
//! for either.
//!
//! The senders' device carries a `virtio_net_hdr` before every packet (it was
//! opened with offloads, [`crate::netns::tun`]); the receivers' carries plain
//! IPv4 packets, one per read, at most the MTU.

use super::{Plane, BUF, FWD, READ_BATCH, REV};
use crate::gso::{Segments, VnetHdr, VNET_HDR_LEN};
use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::fd::AsRawFd;

/// The read buffer of the senders' device: the header and the largest
/// super-packet (64 KiB, the kernel's `GSO_MAX_SIZE` for IPv4), with room over.
pub(super) const SCRATCH: usize = 2 * 65_536;

impl Plane {
    /// Reads up to [`READ_BATCH`] times from each device the last poll found
    /// readable, each packet entering its direction at `now`.
    pub(super) fn read_devices(&mut self, tun: &mut [File; 2], readable: [bool; 2], now: u64) {
        if readable[0] {
            self.read_senders(&mut tun[0], now);
        }
        if readable[1] {
            for _ in 0..READ_BATCH {
                let tag = self.alloc();
                match tun[1].read(&mut self.bufs[tag as usize]) {
                    Ok(len) => self.admit(REV, tag, len, now),
                    Err(e) => {
                        self.free.push(tag);
                        self.read_failed(&e);
                        break;
                    }
                }
            }
        }
    }

    /// The senders' device: each read a packet or a super-packet, cut into
    /// the packets a wire would carry before any of them enters.
    fn read_senders(&mut self, dev: &mut File, now: u64) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for _ in 0..READ_BATCH {
            let n = match dev.read(&mut scratch) {
                Ok(n) => n,
                Err(e) => {
                    self.read_failed(&e);
                    break;
                }
            };
            self.cut(&scratch[..n], now);
        }
        self.scratch = scratch;
    }

    /// Admits the packets of one read from the senders' device (`read`: its
    /// `virtio_net_hdr` and the packet).
    fn cut(&mut self, read: &[u8], now: u64) {
        if read.len() < VNET_HDR_LEN {
            self.read_errors += 1;
            return;
        }
        let hdr = VnetHdr::parse(read);
        let segs = Segments::new(hdr, &read[VNET_HDR_LEN..]);
        let Some(mut segs) = segs.ok().filter(|s| s.largest() <= BUF) else {
            self.read_errors += 1;
            return;
        };
        loop {
            let tag = self.alloc();
            match segs.next_into(&mut self.bufs[tag as usize]) {
                Some(len) => self.admit(FWD, tag, len, now),
                None => {
                    self.free.push(tag);
                    return;
                }
            }
        }
    }

    fn read_failed(&mut self, e: &io::Error) {
        if e.kind() != ErrorKind::WouldBlock {
            self.read_errors += 1;
        }
    }
}

/// Writes the packet `buf` to `dev`, device `out` (0, the senders', behind a
/// `virtio_net_hdr` that asks for nothing: no segmentation, checksums done).
pub(super) fn write(dev: &mut File, out: usize, buf: &[u8]) -> io::Result<()> {
    if out == 1 {
        return io::Write::write(dev, buf).map(|_| ());
    }
    let hdr = [0u8; VNET_HDR_LEN];
    let iov = [
        libc::iovec {
            iov_base: hdr.as_ptr() as *mut libc::c_void,
            iov_len: hdr.len(),
        },
        libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        },
    ];
    // SAFETY: two iovecs over live buffers the kernel only reads.
    let n = unsafe { libc::writev(dev.as_raw_fd(), iov.as_ptr(), 2) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sleeps until either device is readable or `ns` have passed (0: does not
/// sleep); returns which are readable.
pub(super) fn wait(tun: &[File; 2], ns: u64) -> [bool; 2] {
    let mut fds = [
        libc::pollfd {
            fd: tun[0].as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: tun[1].as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: two valid pollfds and a timespec on the stack.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if n < 0 {
        // Interrupted: look at both.
        return [true, true];
    }
    fds.map(|f| f.revents & (libc::POLLIN | libc::POLLERR) != 0)
}
