//! CAKE's flow and host classification (`sch_cake.c`'s `cake_hash`): which of
//! the 1024 queues a packet joins, 8-way set-associative, and which host slots
//! its queue counts against under the isolation mode.
//!
//! A packet's flow hash depends on the mode: its flow's own hash for `flows` and
//! the dual and triple modes, its source (or destination) host's for `srchost`
//! (`dsthost`), both hosts' together for `hosts`, nothing for `flowblind` (one
//! queue). The queue is found in the hash's set of 8: the queue tagged with this
//! hash, else an idle one, else the hash's own queue shared (a collision). A queue
//! newly given to a flow also takes host slots in the same way from the host
//! tables, keyed by the source and destination host hashes.

use super::{Flow, FlowSet, Host, Isolation, QUEUES, WAYS};

/// The bits of the isolation modes, as Linux's `CAKE_FLOW_*`.
const SRC_IP: u8 = 1;
const DST_IP: u8 = 2;
const FLOWS: u8 = 4;

impl Isolation {
    const fn bits(self) -> u8 {
        match self {
            Isolation::Flowblind => 0,
            Isolation::Srchost => SRC_IP,
            Isolation::Dsthost => DST_IP,
            Isolation::Hosts => SRC_IP | DST_IP,
            Isolation::Flows => FLOWS,
            Isolation::DualSrchost => FLOWS | SRC_IP,
            Isolation::DualDsthost => FLOWS | DST_IP,
            Isolation::TripleIsolate => FLOWS | SRC_IP | DST_IP,
        }
    }
    /// Flows share their source host's quantum (`cake_dsrc`).
    pub const fn dual_src(self) -> bool {
        self.bits() & (FLOWS | SRC_IP) == FLOWS | SRC_IP
    }
    /// Flows share their destination host's quantum (`cake_ddst`).
    pub const fn dual_dst(self) -> bool {
        self.bits() & (FLOWS | DST_IP) == FLOWS | DST_IP
    }
}

/// A packet's three hashes.
#[derive(Copy, Clone, Debug)]
pub struct Hashes {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
}

/// The hashes the mode uses, from the flow's, the source host's and the
/// destination host's keyed hashes.
pub fn mode_hashes(mode: Isolation, flow: u32, src: u32, dst: u32) -> Hashes {
    let bits = mode.bits();
    let src = if bits & SRC_IP != 0 { src } else { 0 };
    let dst = if bits & DST_IP != 0 { dst } else { 0 };
    let flow = if bits & FLOWS != 0 { flow } else { src ^ dst };
    Hashes { flow, src, dst }
}

/// The queue and host tables of one tin.
#[derive(Clone, Debug)]
pub struct Tables {
    pub flows: Vec<Flow>,
    pub tags: Vec<u32>,
    pub hosts: Vec<Host>,
    /// Lookups that found their queue tagged, found an idle one, or collided.
    pub way_hits: u64,
    pub way_misses: u64,
    pub way_collisions: u64,
}

impl Tables {
    /// Empty until the tin's first packet: a tin no traffic reaches (most of
    /// diffserv8's, say) costs no queues.
    pub fn new() -> Self {
        Tables {
            flows: Vec::new(),
            tags: Vec::new(),
            hosts: Vec::new(),
            way_hits: 0,
            way_misses: 0,
            way_collisions: 0,
        }
    }

    #[cold]
    fn allocate(&mut self) {
        self.flows = vec![Flow::default(); QUEUES];
        self.tags = vec![0; QUEUES];
        self.hosts = vec![Host::default(); QUEUES];
    }

    /// The queue for a packet of hashes `h`, its host slots set when the queue is
    /// (re)allocated, with the host bulk counts moved along if it is bulk.
    pub fn classify(&mut self, mode: Isolation, h: Hashes) -> usize {
        if self.flows.is_empty() {
            self.allocate();
        }
        let reduced = (h.flow % QUEUES as u32) as usize;
        if self.tags[reduced] == h.flow && self.flows[reduced].set != FlowSet::None {
            return reduced;
        }
        let inner = reduced % WAYS;
        let outer = reduced - inner;
        let way = |i: usize| outer + (inner + i) % WAYS;
        let (dsrc, ddst) = (mode.dual_src(), mode.dual_dst());
        let found = (0..WAYS).map(way).find(|&q| self.tags[q] == h.flow);
        let (q, allocate) = match found {
            Some(q) => {
                self.way_hits += 1;
                (q, self.flows[q].set == FlowSet::None)
            }
            None => match (0..WAYS)
                .map(way)
                .find(|&q| self.flows[q].set == FlowSet::None)
            {
                Some(q) => {
                    self.way_misses += 1;
                    (q, true)
                }
                None => {
                    // No idle queue in the set: share the hash's own, whose
                    // flow gives up its hosts' bulk counts.
                    self.way_collisions += 1;
                    if self.flows[reduced].set == FlowSet::Bulk {
                        self.bulk_dec(mode, reduced);
                    }
                    (reduced, true)
                }
            },
        };
        self.tags[q] = h.flow;
        if allocate && dsrc {
            let slot = self.host_slot(h.src, |host| host.src_tag, |host| host.src_bulk);
            self.hosts[slot].src_tag = h.src;
            self.flows[q].src = slot as u16;
            if self.flows[q].set == FlowSet::Bulk {
                self.hosts[slot].src_bulk += 1;
            }
        }
        if allocate && ddst {
            let slot = self.host_slot(h.dst, |host| host.dst_tag, |host| host.dst_bulk);
            self.hosts[slot].dst_tag = h.dst;
            self.flows[q].dst = slot as u16;
            if self.flows[q].set == FlowSet::Bulk {
                self.hosts[slot].dst_bulk += 1;
            }
        }
        q
    }

    /// The host slot of `hash` in its set: the one tagged with it, else one with
    /// no bulk flows, else its own slot.
    fn host_slot(
        &self,
        hash: u32,
        tag: impl Fn(&Host) -> u32,
        bulk: impl Fn(&Host) -> u16,
    ) -> usize {
        let idx = (hash % QUEUES as u32) as usize;
        let inner = idx % WAYS;
        let outer = idx - inner;
        let way = |i: usize| outer + (inner + i) % WAYS;
        (0..WAYS)
            .map(way)
            .find(|&s| tag(&self.hosts[s]) == hash)
            .or_else(|| (0..WAYS).map(way).find(|&s| bulk(&self.hosts[s]) == 0))
            .unwrap_or(idx)
    }

    /// Queue `q` became bulk: its hosts count one more bulk flow.
    pub fn bulk_inc(&mut self, mode: Isolation, q: usize) {
        let (src, dst) = (self.flows[q].src as usize, self.flows[q].dst as usize);
        if mode.dual_src() && (self.hosts[src].src_bulk as usize) < QUEUES {
            self.hosts[src].src_bulk += 1;
        }
        if mode.dual_dst() && (self.hosts[dst].dst_bulk as usize) < QUEUES {
            self.hosts[dst].dst_bulk += 1;
        }
    }

    /// Queue `q` stopped being bulk.
    pub fn bulk_dec(&mut self, mode: Isolation, q: usize) {
        let (src, dst) = (self.flows[q].src as usize, self.flows[q].dst as usize);
        if mode.dual_src() {
            let n = &mut self.hosts[src].src_bulk;
            *n = n.saturating_sub(1);
        }
        if mode.dual_dst() {
            let n = &mut self.hosts[dst].dst_bulk;
            *n = n.saturating_sub(1);
        }
    }

    /// The host load that divides queue `q`'s quantum: its source or destination
    /// host's bulk flows, whichever is more, at least 1.
    pub fn host_load(&self, mode: Isolation, q: usize) -> u16 {
        let f = &self.flows[q];
        let mut load = 1;
        if mode.dual_src() {
            load = load.max(self.hosts[f.src as usize].src_bulk);
        }
        if mode.dual_dst() {
            load = load.max(self.hosts[f.dst as usize].dst_bulk);
        }
        load
    }
}
