//! The senders' device hands the data plane what their kernel's TCP sent as it
//! sent it: one read per TSO super-packet (up to 64 KiB), behind a
//! `virtio_net_hdr` that says how to cut it (`IFF_VNET_HDR` and `TUNSETOFFLOAD`
//! with `TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN`, docs/emulation.md). Here it is
//! cut into the MTU-sized packets a router's bottleneck sees, before any qdisc
//! does, as Linux's `tcp_gso_segment` and `inet_gso_segment` cut it: every
//! segment carries the headers, its own IP identification (the first's plus
//! its index), total length, IP checksum, sequence number and full TCP
//! checksum; FIN and PSH stay on the last segment, CWR on the first. A packet
//! that is not cut but whose checksum the kernel left to the device
//! (`VIRTIO_NET_HDR_F_NEEDS_CSUM`, `CHECKSUM_PARTIAL`) gets it completed, so
//! every packet leaving here is valid as it stands on a wire.

/// The length of the `virtio_net_hdr` before every packet on a device opened
/// with `IFF_VNET_HDR` (the kernel's default `TUNSETVNETHDRSZ`).
pub const VNET_HDR_LEN: usize = 10;

/// `virtio_net_hdr.flags`: the checksum from `csum_start` on is left to do.
const F_NEEDS_CSUM: u8 = 1;
/// `virtio_net_hdr.gso_type` values.
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
/// Or'd into `gso_type`: the super-packet carries CWR (`SKB_GSO_TCP_ECN`).
const GSO_ECN: u8 = 0x80;

/// TCP flags that only the first (CWR) or only the last (FIN, PSH) segment keeps.
const TCP_CWR: u8 = 0x80;
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;

/// A `virtio_net_hdr` as the device wrote it (native byte order: the kernel's
/// legacy virtio layout unless `TUNSETVNETLE`/`BE` say otherwise).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    /// The header at the start of `b` (at least [`VNET_HDR_LEN`] bytes).
    pub fn parse(b: &[u8]) -> VnetHdr {
        let w = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        VnetHdr {
            flags: b[0],
            gso_type: b[1],
            gso_size: w(4),
            csum_start: w(6),
            csum_offset: w(8),
        }
    }
}

/// What cannot be cut: a GSO kind the device was not offered, or headers that
/// do not hold together.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Malformed;

/// The packets one read from the senders' device makes, taken one at a time
/// into the caller's buffers.
pub struct Segments<'a> {
    pkt: &'a [u8],
    /// Bytes of IP and TCP header every segment repeats (0: not cut).
    hl: usize,
    mss: usize,
    count: usize,
    next: usize,
    hdr: VnetHdr,
}

impl<'a> Segments<'a> {
    /// The segments of `pkt`, an IP packet as read after its `hdr`.
    pub fn new(hdr: VnetHdr, pkt: &'a [u8]) -> Result<Segments<'a>, Malformed> {
        let mut s = Segments {
            pkt,
            hl: 0,
            mss: 0,
            count: 1,
            next: 0,
            hdr,
        };
        match hdr.gso_type & !GSO_ECN {
            GSO_NONE => {
                let (start, off) = (usize::from(hdr.csum_start), usize::from(hdr.csum_offset));
                if hdr.flags & F_NEEDS_CSUM != 0 && start + off + 2 > pkt.len() {
                    return Err(Malformed);
                }
            }
            GSO_TCPV4 => {
                if pkt.len() < 20 || pkt[0] >> 4 != 4 {
                    return Err(Malformed);
                }
                let ihl = usize::from(pkt[0] & 0x0f) * 4;
                if ihl < 20 || pkt.len() < ihl + 20 || pkt[9] != crate::ipv4::PROTO_TCP {
                    return Err(Malformed);
                }
                let hl = ihl + usize::from(pkt[ihl + 12] >> 4) * 4;
                let mss = usize::from(hdr.gso_size);
                if hl > pkt.len() || mss == 0 {
                    return Err(Malformed);
                }
                s.hl = hl;
                s.mss = mss;
                s.count = (pkt.len() - hl).div_ceil(mss).max(1);
            }
            _ => return Err(Malformed),
        }
        Ok(s)
    }

    /// How many packets it makes.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The length of the largest packet it makes.
    pub fn largest(&self) -> usize {
        match self.hl {
            0 => self.pkt.len(),
            hl => hl + self.mss.min(self.pkt.len() - hl),
        }
    }

    /// Writes the next packet into `dst` (room for the largest: the headers
    /// and one MSS) and returns its length, or `None` after the last.
    pub fn next_into(&mut self, dst: &mut [u8]) -> Option<usize> {
        if self.next == self.count {
            return None;
        }
        let i = self.next;
        self.next += 1;
        if self.hl == 0 {
            let p = self.pkt;
            dst[..p.len()].copy_from_slice(p);
            if self.hdr.flags & F_NEEDS_CSUM != 0 {
                let start = usize::from(self.hdr.csum_start);
                let at = start + usize::from(self.hdr.csum_offset);
                // The field holds the pseudo-header's sum: summing over it
                // completes the checksum.
                let c = !fold(sum(&dst[start..p.len()], 0));
                dst[at..at + 2].copy_from_slice(&c.to_be_bytes());
            }
            return Some(p.len());
        }
        let (hl, mss) = (self.hl, self.mss);
        let from = hl + i * mss;
        let len = mss.min(self.pkt.len() - from);
        let total = hl + len;
        dst[..hl].copy_from_slice(&self.pkt[..hl]);
        dst[hl..total].copy_from_slice(&self.pkt[from..from + len]);
        let seg = &mut dst[..total];
        let ihl = usize::from(seg[0] & 0x0f) * 4;
        // IP: length, identification, checksum.
        seg[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        let id = u16::from_be_bytes([seg[4], seg[5]]).wrapping_add(i as u16);
        seg[4..6].copy_from_slice(&id.to_be_bytes());
        seg[10..12].fill(0);
        let c = !fold(sum(&seg[..ihl], 0));
        seg[10..12].copy_from_slice(&c.to_be_bytes());
        // TCP: sequence number, flags, checksum.
        let t = ihl;
        let seq = u32::from_be_bytes([seg[t + 4], seg[t + 5], seg[t + 6], seg[t + 7]]);
        let seq = seq.wrapping_add((i * mss) as u32);
        seg[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
        if i > 0 {
            seg[t + 13] &= !TCP_CWR;
        }
        if i + 1 < self.count {
            seg[t + 13] &= !(TCP_FIN | TCP_PSH);
        }
        seg[t + 16..t + 18].fill(0);
        let c = !fold(sum(&seg[t..], pseudo(seg, total - ihl)));
        seg[t + 16..t + 18].copy_from_slice(&c.to_be_bytes());
        Some(total)
    }
}

/// The TCP pseudo-header's sum: addresses, protocol, TCP length.
fn pseudo(ip: &[u8], tcp_len: usize) -> u64 {
    sum(&ip[12..20], 0) + u64::from(crate::ipv4::PROTO_TCP) + tcp_len as u64
}

/// The ones'-complement sum of `data` as big-endian 16-bit words, unfolded:
/// added four bytes at a time (RFC 1071: the sum does not depend on the word
/// size once folded).
fn sum(data: &[u8], mut acc: u64) -> u64 {
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let mut rest = words.remainder().chunks_exact(2);
    for w in &mut rest {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [b] = rest.remainder() {
        acc += u64::from(*b) << 8;
    }
    acc
}

/// [`sum`] folded to 16 bits.
fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

#[cfg(test)]
mod tests;
