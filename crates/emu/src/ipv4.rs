//! What the data plane reads and writes of an IPv4 header: length, protocol,
//! ports, the ECN bits (rewritten with RFC 1624's incremental checksum update),
//! and the UDP packets aqmlab sends itself.

use std::net::Ipv4Addr;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// The fields a packet is classified by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The IP total length: the packet's size on the link.
    pub len: u16,
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// The two ECN bits.
    pub ecn: u8,
}

/// Reads an IPv4 packet's header; `None` for anything that is not an unfragmented
/// IPv4 TCP or UDP packet whose lengths agree with `buf`.
pub fn parse(buf: &[u8]) -> Option<Header> {
    if buf.len() < 20 || buf[0] >> 4 != 4 {
        return None;
    }
    let ihl = (buf[0] & 0x0f) as usize * 4;
    let len = u16::from_be_bytes([buf[2], buf[3]]);
    let frag = u16::from_be_bytes([buf[6], buf[7]]) & 0x3fff;
    let proto = buf[9];
    if ihl < 20 || len as usize != buf.len() || buf.len() < ihl + 4 || frag != 0 {
        return None;
    }
    if proto != PROTO_TCP && proto != PROTO_UDP {
        return None;
    }
    Some(Header {
        len,
        proto,
        src_port: u16::from_be_bytes([buf[ihl], buf[ihl + 1]]),
        dst_port: u16::from_be_bytes([buf[ihl + 2], buf[ihl + 3]]),
        ecn: buf[1] & 0b11,
    })
}

/// Sets the ECN bits to CE (0b11) and updates the header checksum by RFC 1624
/// (HC' = ~(~HC + ~m + m'), over the 16-bit word holding the TOS byte).
pub fn mark_ce(buf: &mut [u8]) {
    let old = u16::from_be_bytes([buf[0], buf[1]]);
    buf[1] |= 0b11;
    let new = u16::from_be_bytes([buf[0], buf[1]]);
    let hc = u16::from_be_bytes([buf[10], buf[11]]);
    let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    buf[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// The ones'-complement sum of `data` as 16-bit big-endian words, folded.
fn sum16(data: &[u8], mut acc: u32) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [b] = chunks.remainder() {
        acc += u32::from(*b) << 8;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

/// The IPv4 header checksum of `header` computed from scratch (the checksum
/// field taken as zero).
pub fn header_checksum(header: &[u8]) -> u16 {
    let mut h = header.to_vec();
    h[10] = 0;
    h[11] = 0;
    !(sum16(&h, 0) as u16)
}

/// Whether the IPv4 header checksum of `buf` verifies.
pub fn header_checksum_ok(buf: &[u8]) -> bool {
    let ihl = (buf[0] & 0x0f) as usize * 4;
    sum16(&buf[..ihl], 0) == 0xffff
}

/// Writes into `buf` a UDP packet of `size` bytes in all (at least 28) from
/// `src:sport` to `dst:dport`, ECT(0) when `ect`, with valid IP and UDP
/// checksums; `id` numbers it (IP identification). Returns the length.
#[allow(clippy::too_many_arguments)]
pub fn write_udp(
    buf: &mut [u8],
    size: usize,
    src: Ipv4Addr,
    sport: u16,
    dst: Ipv4Addr,
    dport: u16,
    ect: bool,
    id: u16,
) -> usize {
    let size = size.max(28);
    let p = &mut buf[..size];
    p.fill(0);
    p[0] = 0x45;
    p[1] = if ect { 0b10 } else { 0 };
    p[2..4].copy_from_slice(&(size as u16).to_be_bytes());
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[6] = 0x40; // don't fragment
    p[8] = 64;
    p[9] = PROTO_UDP;
    p[12..16].copy_from_slice(&src.octets());
    p[16..20].copy_from_slice(&dst.octets());
    let c = header_checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let udp_len = (size - 20) as u16;
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&dport.to_be_bytes());
    p[24..26].copy_from_slice(&udp_len.to_be_bytes());
    // The pseudo-header, then the datagram (checksum field still zero).
    let mut acc = sum16(&p[12..20], 0);
    acc += u32::from(PROTO_UDP) + u32::from(udp_len);
    let acc = sum16(&p[20..], acc);
    let c = match !(acc as u16) {
        0 => 0xffff,
        c => c,
    };
    p[26..28].copy_from_slice(&c.to_be_bytes());
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(ect: bool) -> Vec<u8> {
        let mut b = vec![0u8; 1000];
        let n = write_udp(
            &mut b,
            1000,
            Ipv4Addr::new(198, 18, 0, 1),
            10_000,
            Ipv4Addr::new(198, 19, 0, 1),
            5002,
            ect,
            7,
        );
        b.truncate(n);
        b
    }

    #[test]
    fn a_written_udp_packet_parses_and_verifies() {
        let b = udp(true);
        let h = parse(&b).unwrap();
        assert_eq!(
            h,
            Header {
                len: 1000,
                proto: PROTO_UDP,
                src_port: 10_000,
                dst_port: 5002,
                ecn: 0b10
            }
        );
        assert!(header_checksum_ok(&b));
    }

    #[test]
    fn a_ce_mark_keeps_the_checksum_valid() {
        for ect in [true, false] {
            let mut b = udp(ect);
            // Other TOS bits set too: the update must handle any word.
            b[1] |= 0xb8;
            let c = header_checksum(&b[..20]);
            b[10..12].copy_from_slice(&c.to_be_bytes());
            mark_ce(&mut b);
            assert_eq!(b[1] & 0b11, 0b11);
            assert!(header_checksum_ok(&b));
            assert_eq!(
                u16::from_be_bytes([b[10], b[11]]),
                header_checksum(&b[..20])
            );
        }
    }

    #[test]
    fn truncated_or_foreign_packets_are_not_classified() {
        let b = udp(false);
        assert!(parse(&b[..999]).is_none());
        let mut v6 = b.clone();
        v6[0] = 0x60;
        assert!(parse(&v6).is_none());
        let mut icmp = b.clone();
        icmp[9] = 1;
        assert!(parse(&icmp).is_none());
    }
}
