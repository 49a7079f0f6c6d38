//! What the data plane reads and writes of an IPv4 header: length, protocol,
//! ports (an ICMP echo's identifier), the ECN bits (rewritten with RFC 1624's
//! incremental checksum update), a SYN's SACK and ECN negotiation, and the UDP
//! packets and ICMP echo requests (probes) aqmlab sends itself.

use aqm::Ecn;
use std::net::Ipv4Addr;

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_ECHO_REQUEST: u8 = 8;

pub const TCP_SYN: u8 = 0x02;
pub const TCP_RST: u8 = 0x04;
pub const TCP_ACK: u8 = 0x10;
const TCP_ECE: u8 = 0x40;
const TCP_CWR: u8 = 0x80;

/// The fields a packet is classified by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The IP total length: the packet's size on the link.
    pub len: u16,
    pub proto: u8,
    /// The ports; an ICMP echo's identifier in both.
    pub src_port: u16,
    pub dst_port: u16,
    /// The TOS byte: DiffServ and ECN codepoints.
    pub tos: Tos,
}

/// The IP header's TOS byte, as the data plane reads and writes it: a DiffServ
/// codepoint (0 to 63) above an ECN codepoint.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tos {
    pub dscp: u8,
    pub ecn: Ecn,
}

impl Tos {
    pub const fn byte(self) -> u8 {
        (self.dscp << 2) | self.ecn.bits()
    }

    pub const fn from_byte(byte: u8) -> Tos {
        Tos {
            dscp: byte >> 2,
            ecn: Ecn::from_bits(byte),
        }
    }
}

/// Reads an IPv4 packet's header; `None` for anything that is not an unfragmented
/// IPv4 TCP or UDP packet, or ICMP echo request or reply, whose lengths agree
/// with `buf`.
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
    if proto == PROTO_ICMP {
        let icmp = buf.get(ihl..ihl + 8)?;
        if icmp[0] != ICMP_ECHO_REQUEST && icmp[0] != ICMP_ECHO_REPLY {
            return None;
        }
        let id = u16::from_be_bytes([icmp[4], icmp[5]]);
        return Some(Header {
            len,
            proto,
            src_port: id,
            dst_port: id,
            tos: Tos::from_byte(buf[1]),
        });
    }
    if proto != PROTO_TCP && proto != PROTO_UDP {
        return None;
    }
    Some(Header {
        len,
        proto,
        src_port: u16::from_be_bytes([buf[ihl], buf[ihl + 1]]),
        dst_port: u16::from_be_bytes([buf[ihl + 2], buf[ihl + 3]]),
        tos: Tos::from_byte(buf[1]),
    })
}

/// Sets the ECN bits to CE (0b11) and updates the header checksum by RFC 1624
/// (HC' = ~(~HC + ~m + m'), over the 16-bit word holding the TOS byte).
pub fn mark_ce(buf: &mut [u8]) {
    let word = u16::from_be_bytes([buf[0], buf[1] | 0b11]);
    replace_word(buf, 0, word, 10);
}

/// Replaces the 16-bit word at `at` (an even offset from the checksum's start
/// of cover) with `new` and updates the checksum at `csum` by RFC 1624.
fn replace_word(buf: &mut [u8], at: usize, new: u16, csum: usize) {
    let old = u16::from_be_bytes([buf[at], buf[at + 1]]);
    buf[at..at + 2].copy_from_slice(&new.to_be_bytes());
    let hc = u16::from_be_bytes([buf[csum], buf[csum + 1]]);
    let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    buf[csum..csum + 2].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// What a SYN may be stripped of, so that one connection is set up without
/// what the namespace's sysctls would negotiate.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SynStrip {
    /// The SACK-permitted option (kind 4), replaced by two NOPs: SACK is off
    /// for the connection (RFC 2018).
    pub sack: bool,
    /// The ECE and CWR flags of an ECN-setup SYN: ECN is off for the
    /// connection (RFC 3168 6.1.1).
    pub ecn: bool,
}

impl SynStrip {
    pub fn any(self) -> bool {
        self.sack || self.ecn
    }
}

/// Strips what `strip` names from `buf` if it is a TCP SYN (not a SYN-ACK),
/// keeping its length and fixing the TCP checksum incrementally. Returns
/// whether anything changed; a packet that is not a SYN is left alone.
pub fn strip_syn(buf: &mut [u8], strip: SynStrip) -> bool {
    if parse(buf).is_none_or(|h| h.proto != PROTO_TCP) {
        return false;
    }
    let ihl = (buf[0] & 0x0f) as usize * 4;
    if buf.len() < ihl + 20 {
        return false;
    }
    let flags = buf[ihl + 13];
    if flags & (TCP_SYN | TCP_ACK) != TCP_SYN {
        return false;
    }
    let csum = ihl + 16;
    let mut changed = false;
    if strip.ecn && flags & (TCP_ECE | TCP_CWR) != 0 {
        // Data offset and flags share the word at 12.
        let word = u16::from_be_bytes([buf[ihl + 12], flags & !(TCP_ECE | TCP_CWR)]);
        replace_word(buf, ihl + 12, word, csum);
        changed = true;
    }
    let end = (ihl + (buf[ihl + 12] >> 4) as usize * 4).min(buf.len());
    let mut at = ihl + 20;
    while strip.sack && at < end {
        match buf[at] {
            0 => break,
            1 => at += 1,
            kind => {
                let len = buf.get(at + 1).map_or(0, |&l| l as usize);
                if len < 2 || at + len > end {
                    break;
                }
                if kind == 4 && len == 2 {
                    // The option may sit at an odd offset: rewrite the words
                    // that hold its two bytes.
                    for i in [at, at + 1] {
                        let w = ihl + ((i - ihl) & !1);
                        let mut pair = [buf[w], buf[w + 1]];
                        pair[i - w] = 1;
                        replace_word(buf, w, u16::from_be_bytes(pair), csum);
                    }
                    changed = true;
                }
                at += len;
            }
        }
    }
    changed
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

/// Zeroes the first `size` bytes of `buf` and writes an IPv4 header there (no
/// options, don't fragment, TTL 64, the TOS byte `tos`, IP identification `id`)
/// with its checksum; returns the packet's bytes for the payload's writer.
fn write_header(
    buf: &mut [u8],
    size: usize,
    proto: u8,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    tos: Tos,
    id: u16,
) -> &mut [u8] {
    let p = &mut buf[..size];
    p.fill(0);
    p[0] = 0x45;
    p[1] = tos.byte();
    p[2..4].copy_from_slice(&(size as u16).to_be_bytes());
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[6] = 0x40; // don't fragment
    p[8] = 64;
    p[9] = proto;
    p[12..16].copy_from_slice(&src.octets());
    p[16..20].copy_from_slice(&dst.octets());
    let c = header_checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p
}

/// Writes into `buf` a UDP packet of `size` bytes in all (at least 28) from
/// `src:sport` to `dst:dport` with the TOS byte `tos`, with valid IP and UDP
/// checksums; `id` numbers it (IP identification). Returns the length.
#[allow(clippy::too_many_arguments)]
pub fn write_udp(
    buf: &mut [u8],
    size: usize,
    src: Ipv4Addr,
    sport: u16,
    dst: Ipv4Addr,
    dport: u16,
    tos: Tos,
    id: u16,
) -> usize {
    let size = size.max(28);
    let p = write_header(buf, size, PROTO_UDP, src, dst, tos, id);
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

/// A TCP segment's sequence number and payload length, of a packet that
/// [`parse`] accepted as TCP.
pub fn tcp_segment(buf: &[u8]) -> Option<(u32, u32)> {
    let ihl = (buf[0] & 0x0f) as usize * 4;
    let tcp = buf.get(ihl..ihl + 20)?;
    let data_at = ihl + (tcp[12] >> 4) as usize * 4;
    let len = buf.len().checked_sub(data_at)?;
    Some((
        u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        len as u32,
    ))
}

/// The flags of a TCP segment that [`parse`] accepted as TCP; 0 for anything
/// else.
pub fn tcp_flags(buf: &[u8]) -> u8 {
    let ihl = (buf[0] & 0x0f) as usize * 4;
    match parse(buf) {
        Some(h) if h.proto == PROTO_TCP => buf.get(ihl + 13).copied().unwrap_or(0),
        _ => 0,
    }
}

/// The sequence number of an ICMP echo request or reply that [`parse`] accepted.
pub fn echo_seq(buf: &[u8]) -> u16 {
    let ihl = (buf[0] & 0x0f) as usize * 4;
    u16::from_be_bytes([buf[ihl + 6], buf[ihl + 7]])
}

/// Whether an ICMP packet that [`parse`] accepted is an echo reply.
pub fn is_echo_reply(buf: &[u8]) -> bool {
    let ihl = (buf[0] & 0x0f) as usize * 4;
    buf[ihl] == ICMP_ECHO_REPLY
}

/// Writes into `buf` an ICMP echo request of `size` bytes in all (at least 28)
/// from `src` to `dst` with identifier `ident` and sequence number `seq`,
/// with the TOS byte `tos`, with valid IP and ICMP checksums; `id` numbers it (IP
/// identification). Returns the length.
#[allow(clippy::too_many_arguments)]
pub fn write_echo_request(
    buf: &mut [u8],
    size: usize,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ident: u16,
    seq: u16,
    tos: Tos,
    id: u16,
) -> usize {
    let size = size.max(28);
    let p = write_header(buf, size, PROTO_ICMP, src, dst, tos, id);
    p[20] = ICMP_ECHO_REQUEST;
    p[24..26].copy_from_slice(&ident.to_be_bytes());
    p[26..28].copy_from_slice(&seq.to_be_bytes());
    let c = !(sum16(&p[20..], 0) as u16);
    p[22..24].copy_from_slice(&c.to_be_bytes());
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(ecn: Ecn) -> Vec<u8> {
        udp_tos(Tos { dscp: 0, ecn })
    }

    fn udp_tos(tos: Tos) -> Vec<u8> {
        let mut b = vec![0u8; 1000];
        let n = write_udp(
            &mut b,
            1000,
            Ipv4Addr::new(198, 18, 0, 1),
            10_000,
            Ipv4Addr::new(198, 19, 0, 1),
            5002,
            tos,
            7,
        );
        b.truncate(n);
        b
    }

    #[test]
    fn a_written_udp_packet_parses_and_verifies() {
        let b = udp(Ecn::Ect);
        let h = parse(&b).unwrap();
        assert_eq!(
            h,
            Header {
                len: 1000,
                proto: PROTO_UDP,
                src_port: 10_000,
                dst_port: 5002,
                tos: Tos {
                    dscp: 0,
                    ecn: Ecn::Ect
                },
            }
        );
        assert!(header_checksum_ok(&b));
    }

    #[test]
    fn the_dscp_is_written_above_the_ecn_bits_and_read_back() {
        let b = udp_tos(Tos {
            dscp: 46,
            ecn: Ecn::Ect1,
        });
        assert_eq!(b[1], 0xb9, "EF (46) << 2 | ECT(1)");
        let h = parse(&b).unwrap();
        assert_eq!((h.tos.dscp, h.tos.ecn), (46, Ecn::Ect1));
        assert!(header_checksum_ok(&b));
        // A CE mark rewrites the ECN bits only.
        let mut m = b.clone();
        mark_ce(&mut m);
        assert_eq!(parse(&m).unwrap().tos.dscp, 46);
        assert!(header_checksum_ok(&m));
    }

    #[test]
    fn a_ce_mark_keeps_the_checksum_valid() {
        for ecn in [Ecn::Ect, Ecn::Ect1, Ecn::NotEct] {
            let mut b = udp(ecn);
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

    /// A TCP SYN from Linux's option layout: MSS, then `opts`, padded; ECE
    /// and CWR set (an ECN-setup SYN), with a valid TCP checksum.
    fn syn(opts: &[u8], flags: u8) -> Vec<u8> {
        let mut tcp = vec![0u8; 20];
        tcp[0..2].copy_from_slice(&10_000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&5001u16.to_be_bytes());
        tcp.extend_from_slice(&[2, 4, 0x05, 0xb4]);
        tcp.extend_from_slice(opts);
        while !tcp.len().is_multiple_of(4) {
            tcp.push(0);
        }
        tcp[12] = ((tcp.len() / 4) as u8) << 4;
        tcp[13] = flags;
        let mut b = vec![0u8; 20];
        b[0] = 0x45;
        b[2..4].copy_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
        b[8] = 64;
        b[9] = PROTO_TCP;
        b[12..16].copy_from_slice(&[198, 18, 0, 1]);
        b[16..20].copy_from_slice(&[198, 19, 0, 1]);
        let c = header_checksum(&b[..20]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b.extend_from_slice(&tcp);
        let c = tcp_checksum(&b);
        b[36..38].copy_from_slice(&c.to_be_bytes());
        b
    }

    /// The TCP checksum of `b` computed from scratch (its field taken as zero).
    fn tcp_checksum(b: &[u8]) -> u16 {
        let mut seg = b[20..].to_vec();
        seg[16] = 0;
        seg[17] = 0;
        let acc = sum16(&b[12..20], 0) + u32::from(PROTO_TCP) + seg.len() as u32;
        !(sum16(&seg, acc) as u16)
    }

    fn options(b: &[u8]) -> &[u8] {
        &b[40..20 + (b[32] >> 4) as usize * 4]
    }

    const SYN_ECN: u8 = TCP_SYN | TCP_ECE | TCP_CWR;
    const BOTH: SynStrip = SynStrip {
        sack: true,
        ecn: true,
    };

    #[test]
    fn a_syn_is_stripped_of_sack_and_ecn_with_its_checksum_kept_valid() {
        // Linux's layout with timestamps (SACK-permitted at an even offset) and
        // without (NOP, NOP, SACK-permitted), and an odd offset.
        for opts in [
            &[4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7][..],
            &[1, 1, 4, 2, 1, 3, 3, 7],
            &[1, 4, 2, 3, 3, 7],
        ] {
            let mut b = syn(opts, SYN_ECN);
            assert!(strip_syn(&mut b, BOTH));
            assert_eq!(b[33], TCP_SYN, "ECE and CWR cleared");
            let o = options(&b);
            assert!(!o.windows(2).any(|w| w == [4, 2]), "{o:?}");
            assert_eq!(o.len(), options(&syn(opts, SYN_ECN)).len());
            assert_eq!(u16::from_be_bytes([b[36], b[37]]), tcp_checksum(&b));
            assert!(header_checksum_ok(&b));
            // The window scale option survives.
            assert!(o.windows(3).any(|w| w == [3, 3, 7]), "{o:?}");
        }
    }

    #[test]
    fn only_what_is_asked_is_stripped_and_only_from_a_syn() {
        let opts = [4, 2, 1, 3, 3, 7];
        let mut b = syn(&opts, SYN_ECN);
        assert!(strip_syn(
            &mut b,
            SynStrip {
                sack: false,
                ecn: true
            }
        ));
        assert_eq!(options(&b), options(&syn(&opts, SYN_ECN)));
        let mut b = syn(&opts, SYN_ECN);
        assert!(strip_syn(
            &mut b,
            SynStrip {
                sack: true,
                ecn: false
            }
        ));
        assert_eq!(b[33], SYN_ECN);
        assert_eq!(u16::from_be_bytes([b[36], b[37]]), tcp_checksum(&b));
        // A SYN-ACK, a plain ACK and a SYN without either are left alone.
        for flags in [SYN_ECN | TCP_ACK, TCP_ACK, TCP_SYN] {
            let mut b = syn(&[1, 3, 3, 7], flags);
            let before = b.clone();
            assert!(!strip_syn(&mut b, BOTH));
            assert_eq!(b, before);
        }
        let mut b = syn(&opts, SYN_ECN | TCP_ACK);
        assert!(!strip_syn(&mut b, BOTH));
        // A malformed option length stops the walk without a panic.
        let mut b = syn(&[8, 40, 4, 2], TCP_SYN);
        assert!(!strip_syn(&mut b, BOTH));
        let mut u = udp(Ecn::NotEct);
        assert!(!strip_syn(&mut u, BOTH));
    }

    #[test]
    fn an_echo_request_parses_verifies_and_carries_its_identifier_and_sequence() {
        let mut b = vec![0u8; 100];
        let n = write_echo_request(
            &mut b,
            64,
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 19, 0, 1),
            10_003,
            0xbeef,
            Tos {
                dscp: 0,
                ecn: Ecn::Ect,
            },
            9,
        );
        b.truncate(n);
        let h = parse(&b).unwrap();
        assert_eq!((h.len, h.proto, h.tos.ecn), (64, PROTO_ICMP, Ecn::Ect));
        assert_eq!((h.src_port, h.dst_port), (10_003, 10_003));
        assert_eq!(echo_seq(&b), 0xbeef);
        assert!(!is_echo_reply(&b));
        assert!(header_checksum_ok(&b));
        assert_eq!(sum16(&b[20..], 0), 0xffff, "the ICMP checksum verifies");
        // The kernel's reply: type 0, the rest echoed.
        b[20] = ICMP_ECHO_REPLY;
        assert!(is_echo_reply(&b));
        assert_eq!(parse(&b).unwrap().src_port, 10_003);
        // The smallest probe is the headers alone.
        let mut small = vec![0u8; 28];
        let n = write_echo_request(
            &mut small,
            1,
            Ipv4Addr::LOCALHOST,
            Ipv4Addr::LOCALHOST,
            1,
            2,
            Tos::default(),
            3,
        );
        assert_eq!(n, 28);
        assert_eq!(sum16(&small[20..], 0), 0xffff);
    }

    #[test]
    fn a_segment_gives_its_sequence_and_payload_length() {
        let mut b = syn(&[1, 3, 3, 7], TCP_ACK);
        b[24..28].copy_from_slice(&0xfedc_ba98u32.to_be_bytes());
        let header = b.len();
        b.extend_from_slice(&[0; 100]);
        let len = b.len() as u16;
        b[2..4].copy_from_slice(&len.to_be_bytes());
        assert_eq!(tcp_segment(&b), Some((0xfedc_ba98, 100)));
        assert_eq!(tcp_segment(&b[..header]), Some((0xfedc_ba98, 0)));
    }

    #[test]
    fn truncated_or_foreign_packets_are_not_classified() {
        let b = udp(Ecn::NotEct);
        assert!(parse(&b[..999]).is_none());
        let mut v6 = b.clone();
        v6[0] = 0x60;
        assert!(parse(&v6).is_none());
        // ICMP other than an echo (a UDP packet's bytes read as ICMP: type 0x27).
        let mut icmp = b.clone();
        icmp[9] = PROTO_ICMP;
        assert!(parse(&icmp).is_none());
    }
}
