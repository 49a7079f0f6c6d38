//! pcap export of one link direction, readable by Wireshark and tshark.
//!
//! Packets carry no payload in the simulator, so each record holds a synthesized
//! IPv4 header and a TCP or UDP header (captured length 40 or 28 bytes) with the
//! original length set to the packet's size on the wire, as a capture with a short
//! snap length would show. Link type 101 (raw IP). Nodes get addresses 10.0.0.0/8
//! by index; TCP sequence numbers are bytes (packet number x payload size). Records
//! are stamped when the last bit leaves the transmitter.
//!
//! The file is written under a temporary name and renamed when the run ends, so a
//! killed run never leaves a truncated capture under the real name; a tap dropped
//! unfinished (a write that failed, a run that ended in an error) removes it.

use crate::header::{Header, Kind, FLAG_CWR, FLAG_ECE};
use aqm::{Packet, Time};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const LINKTYPE_RAW: u32 = 101;

/// The endpoints of a packet's flow, as the tap needs them.
#[derive(Copy, Clone, Debug)]
pub struct Addresses {
    pub src_node: u32,
    pub dst_node: u32,
    pub port: u16,
}

pub struct PcapTap {
    pub link: usize,
    /// `None` once finished: the temporary file is then the capture.
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
}

fn ip_of(node: u32) -> [u8; 4] {
    let n = node + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

fn checksum(words: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in words.chunks(2) {
        sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl PcapTap {
    pub fn create(path: &Path, link: usize) -> io::Result<Self> {
        let tmp = path.with_extension("pcap.partial");
        // A new file, never one found there: a link left at this name (by a
        // killed run, or planted by another user for root to write through) is
        // removed, not followed.
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let file = File::options().write(true).create_new(true).open(&tmp)?;
        let mut out = BufWriter::new(file);
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?; // nanosecond-resolution magic
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&65_535u32.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(PcapTap {
            link,
            out: Some(out),
            tmp,
            path: path.to_path_buf(),
        })
    }

    pub fn record(
        &mut self,
        now: Time,
        pkt: &Packet,
        h: &Header,
        addr: Addresses,
        payload_per_packet: u32,
    ) -> io::Result<()> {
        let (src, dst, sport, dport) = match h.kind {
            Kind::Ack | Kind::Echo => (addr.dst_node, addr.src_node, 5001, addr.port),
            Kind::Data | Kind::Udp | Kind::Probe => (addr.src_node, addr.dst_node, addr.port, 5001),
        };
        let mut buf = [0u8; 40];
        let (proto, proto_len) = match h.kind {
            Kind::Udp => (17, 8),
            Kind::Probe | Kind::Echo => (1, 8),
            Kind::Data | Kind::Ack => (6, 20),
        };
        let caplen = 20 + proto_len;
        // IPv4 header.
        buf[0] = 0x45;
        buf[1] = pkt.ecn.bits();
        let total = pkt.size.min(65_535) as u16;
        buf[2..4].copy_from_slice(&total.to_be_bytes());
        buf[4..6].copy_from_slice(&(h.uid as u16).to_be_bytes());
        buf[8] = 64;
        buf[9] = proto;
        buf[12..16].copy_from_slice(&ip_of(src));
        buf[16..20].copy_from_slice(&ip_of(dst));
        let c = checksum(&buf[..20]);
        buf[10..12].copy_from_slice(&c.to_be_bytes());
        if proto == 1 {
            // ICMP echo request (8) or reply (0), identified by the flow's port
            // and numbered by the probe; no checksum (the payload is not captured).
            buf[20] = if h.kind == Kind::Probe { 8 } else { 0 };
            buf[24..26].copy_from_slice(&addr.port.to_be_bytes());
            buf[26..28].copy_from_slice(&(h.seq as u16).to_be_bytes());
        } else {
            buf[20..22].copy_from_slice(&sport.to_be_bytes());
            buf[22..24].copy_from_slice(&dport.to_be_bytes());
        }
        if h.kind == Kind::Udp {
            let len = (pkt.size.saturating_sub(20)).min(65_535) as u16;
            buf[24..26].copy_from_slice(&len.to_be_bytes());
        } else if proto == 6 {
            // An ACK's `seq` is the timestamp it echoes: its sequence number is 0.
            let seq = match h.kind {
                Kind::Ack => 0,
                _ => h.seq.wrapping_mul(payload_per_packet),
            };
            let ack = h.ack.wrapping_mul(payload_per_packet);
            buf[24..28].copy_from_slice(&seq.to_be_bytes());
            buf[28..32].copy_from_slice(&ack.to_be_bytes());
            buf[32] = 5 << 4;
            let mut flags = 0x10u8; // ACK
            if h.flags & FLAG_CWR != 0 {
                flags |= 0x80;
            }
            if h.flags & FLAG_ECE != 0 {
                flags |= 0x40;
            }
            if h.kind == Kind::Data {
                flags |= 0x08; // PSH, so data packets stand out
            }
            buf[33] = flags;
            buf[34..36].copy_from_slice(&65_535u16.to_be_bytes());
        }
        let ns = now.as_nanos();
        let out = self.out.as_mut().expect("a tap records until finished");
        out.write_all(&((ns / 1_000_000_000) as u32).to_le_bytes())?;
        out.write_all(&((ns % 1_000_000_000) as u32).to_le_bytes())?;
        out.write_all(&(caplen as u32).to_le_bytes())?;
        out.write_all(&pkt.size.to_le_bytes())?;
        out.write_all(&buf[..caplen])?;
        Ok(())
    }

    /// Flushes and moves the capture to its real name; on an error the
    /// temporary file is removed (by `drop`).
    pub fn finish(mut self) -> io::Result<()> {
        let mut out = self.out.take().expect("finished once");
        let written = out.flush().and_then(|()| out.get_ref().sync_all());
        drop(out);
        written.and_then(|()| std::fs::rename(&self.tmp, &self.path))?;
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for PcapTap {
    /// An unfinished capture (a failed write, a run that ended in an error, a
    /// failed finish) leaves nothing behind: no `.partial` file on a full disk.
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            drop(self.out.take());
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{checksum, PcapTap};

    #[test]
    fn an_unfinished_capture_leaves_no_file() {
        let dir = std::env::temp_dir().join(format!("aqmlab-pcap-drop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l.pcap");
        let tap = PcapTap::create(&path, 0).unwrap();
        assert!(path.with_extension("pcap.partial").exists());
        drop(tap);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        PcapTap::create(&path, 0).unwrap().finish().unwrap();
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["l.pcap"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ipv4_checksum_matches_a_known_header() {
        // The classic example header from RFC 1071 discussions.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00,
            0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
    }
}
