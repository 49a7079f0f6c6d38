use super::*;
use crate::ipv4::header_checksum_ok;

const MSS: usize = 1448;

/// The ones'-complement sum of `b` word by word, as a receiver checks it.
fn ones(b: &[u8], mut acc: u32) -> u32 {
    for (i, x) in b.iter().enumerate() {
        acc += u32::from(*x) << if i % 2 == 0 { 8 } else { 0 };
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

/// Whether the TCP checksum of the IPv4 packet `p` (no IP options) verifies.
#[track_caller]
fn tcp_ok(p: &[u8]) -> bool {
    let len = p.len() - 20;
    let acc = ones(&p[12..20], 6 + len as u32);
    ones(&p[20..], acc) == 0xffff
}

/// A TSO super-packet as the kernel hands it over: IP header (identification
/// `id`), a TCP header with 12 bytes of options (timestamps), `payload` bytes
/// numbered from `seq`, the TCP flags `flags`, and in the checksum field only the
/// pseudo-header's sum (`CHECKSUM_PARTIAL`).
fn super_packet(payload: usize, seq: u32, id: u16, flags: u8) -> Vec<u8> {
    let total = 20 + 32 + payload;
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[1] = 0x02; // ECT(0)
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[6] = 0x40;
    p[8] = 64;
    p[9] = 6;
    p[12..16].copy_from_slice(&[198, 18, 0, 1]);
    p[16..20].copy_from_slice(&[198, 19, 0, 1]);
    p[20..22].copy_from_slice(&10_000u16.to_be_bytes());
    p[22..24].copy_from_slice(&5001u16.to_be_bytes());
    p[24..28].copy_from_slice(&seq.to_be_bytes());
    p[28..32].copy_from_slice(&77u32.to_be_bytes());
    p[32] = 8 << 4;
    p[33] = flags;
    p[34..36].copy_from_slice(&500u16.to_be_bytes());
    p[40..52].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 7]);
    for (i, b) in p[52..].iter_mut().enumerate() {
        *b = (i * 7 + i / 256) as u8;
    }
    let partial = ones(&p[12..20], 6 + (total - 20) as u32) as u16;
    p[36..38].copy_from_slice(&partial.to_be_bytes());
    p
}

fn tso(ecn: bool) -> VnetHdr {
    VnetHdr {
        flags: F_NEEDS_CSUM,
        gso_type: GSO_TCPV4 | if ecn { GSO_ECN } else { 0 },
        gso_size: MSS as u16,
        csum_start: 20,
        csum_offset: 16,
    }
}

fn cut(hdr: VnetHdr, p: &[u8]) -> Vec<Vec<u8>> {
    let mut s = Segments::new(hdr, p).unwrap();
    let (count, largest) = (s.count(), s.largest());
    let mut out = Vec::new();
    let mut buf = vec![0u8; 2048];
    while let Some(n) = s.next_into(&mut buf) {
        out.push(buf[..n].to_vec());
    }
    assert_eq!(out.len(), count);
    assert_eq!(out.iter().map(Vec::len).max(), Some(largest));
    out
}

#[test]
fn the_header_is_read_in_native_order() {
    let mut b = [0u8; VNET_HDR_LEN];
    b[0] = 1;
    b[1] = 0x81;
    b[4..6].copy_from_slice(&1448u16.to_ne_bytes());
    b[6..8].copy_from_slice(&20u16.to_ne_bytes());
    b[8..10].copy_from_slice(&16u16.to_ne_bytes());
    assert_eq!(VnetHdr::parse(&b), tso(true));
}

/// Three full segments and a short one: lengths, identification, sequence
/// numbers (across the wrap), flags, both checksums, and the payload in order.
#[test]
fn a_super_packet_is_cut_into_valid_mtu_segments() {
    let payload = 3 * MSS + 100;
    let (seq, id) = (u32::MAX - 2000, u16::MAX - 1);
    let flags = 0x80 | 0x10 | 0x08 | 0x01; // CWR ACK PSH FIN
    let p = super_packet(payload, seq, id, flags);
    let segs = cut(tso(true), &p);
    assert_eq!(segs.len(), 4);
    let mut data = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let len = if i < 3 { MSS } else { 100 };
        assert_eq!(s.len(), 52 + len, "segment {i}");
        assert!(s.len() <= 1500);
        assert_eq!(u16::from_be_bytes([s[2], s[3]]) as usize, s.len());
        assert_eq!(u16::from_be_bytes([s[4], s[5]]), id.wrapping_add(i as u16));
        let sq = u32::from_be_bytes([s[24], s[25], s[26], s[27]]);
        assert_eq!(sq, seq.wrapping_add((i * MSS) as u32), "segment {i}");
        let want = match i {
            0 => 0x80 | 0x10,
            3 => 0x10 | 0x08 | 0x01,
            _ => 0x10,
        };
        assert_eq!(s[33], want, "flags of segment {i}");
        assert!(header_checksum_ok(s), "IP checksum of segment {i}");
        assert!(tcp_ok(s), "TCP checksum of segment {i}");
        // Everything else of the headers is the super-packet's.
        assert_eq!(s[..2], p[..2]);
        assert_eq!(s[6..10], p[6..10]);
        assert_eq!(s[12..24], p[12..24]);
        assert_eq!(s[28..33], p[28..33]);
        assert_eq!(s[34..36], p[34..36]);
        assert_eq!(s[38..52], p[38..52]);
        data.extend_from_slice(&s[52..]);
    }
    assert_eq!(data, p[52..]);
}

/// A super-packet of exactly one MSS makes one segment, all flags kept.
#[test]
fn one_mss_makes_one_segment_with_every_flag() {
    let p = super_packet(MSS, 1, 1, 0x80 | 0x18 | 0x01);
    let segs = cut(tso(true), &p);
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].len(), p.len());
    assert_eq!(segs[0][33], 0x80 | 0x18 | 0x01);
    assert!(tcp_ok(&segs[0]) && header_checksum_ok(&segs[0]));
}

/// A packet not cut, its checksum left to the device: completed, nothing else
/// changed. Without the flag it passes untouched.
#[test]
fn a_partial_checksum_is_completed() {
    let p = super_packet(600, 5, 9, 0x18);
    let hdr = VnetHdr {
        flags: F_NEEDS_CSUM,
        csum_start: 20,
        csum_offset: 16,
        ..VnetHdr::default()
    };
    assert!(!tcp_ok(&p));
    let segs = cut(hdr, &p);
    assert_eq!(segs.len(), 1);
    assert!(tcp_ok(&segs[0]));
    assert_eq!(segs[0][..36], p[..36]);
    assert_eq!(segs[0][38..], p[38..]);
    let whole = cut(VnetHdr::default(), &segs[0]);
    assert_eq!(whole, segs);
}

/// Kinds the device was never offered, and headers that overrun the packet,
/// are refused rather than cut wrong.
#[test]
fn what_cannot_be_cut_is_refused() {
    let p = super_packet(3000, 5, 9, 0x10);
    for gso_type in [3, 4, 5] {
        let hdr = VnetHdr {
            gso_type,
            ..tso(false)
        };
        assert_eq!(Segments::new(hdr, &p).err(), Some(Malformed));
    }
    let zero_mss = VnetHdr {
        gso_size: 0,
        ..tso(false)
    };
    assert_eq!(Segments::new(zero_mss, &p).err(), Some(Malformed));
    assert_eq!(Segments::new(tso(false), &p[..30]).err(), Some(Malformed));
    let past = VnetHdr {
        flags: F_NEEDS_CSUM,
        csum_start: 3000,
        csum_offset: 16,
        ..VnetHdr::default()
    };
    assert_eq!(Segments::new(past, &p[..100]).err(), Some(Malformed));
}
