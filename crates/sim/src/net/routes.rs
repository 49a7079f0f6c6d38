//! Routes: every flow's data and ACK routes as the link directions they cross,
//! found once by the builder (`setup::routes`) and read by forwarding.
//!
//! Every route is stored flat in one `Vec<u32>`, each ending in [`ROUTE_END`]; a
//! packet's header holds its position there, so forwarding reads neither the flow
//! nor a per-flow allocation (at 10,000 flows those were the costliest cache misses
//! of a run).

/// Ends a route: the packet has arrived.
pub const ROUTE_END: u32 = u32::MAX;

/// Every route, flat.
#[derive(Default)]
pub struct Routes {
    hops: Vec<u32>,
}

impl Routes {
    pub fn reserve(&mut self, hops: usize) {
        self.hops.reserve_exact(hops);
    }

    /// Stores `path` (link directions) and returns where it starts.
    pub fn push(&mut self, path: &[u32]) -> u32 {
        let at = self.hops.len() as u32;
        self.hops.extend_from_slice(path);
        self.hops.push(ROUTE_END);
        at
    }

    /// The link direction at position `at` of a route ([`ROUTE_END`] at its end).
    #[inline]
    pub fn hop(&self, at: u32) -> u32 {
        self.hops[at as usize]
    }

    /// Per link direction of `links`, the one link direction every packet that
    /// enters it comes from, over all routes, or `None` when it has several, is
    /// the first hop of some route (packets enter it from a host) or carries no
    /// route. What the engine's cut-through needs (`engine::forward`): a link with
    /// one input sees its packets in the order that input's wire delivers them.
    pub fn sole_inputs(&self, links: usize) -> Vec<Option<u32>> {
        const UNUSED: u32 = u32::MAX - 1;
        const MANY: u32 = u32::MAX;
        let mut input = vec![UNUSED; links];
        let mut prev = ROUTE_END;
        for &l in &self.hops {
            if l != ROUTE_END {
                let from = if prev == ROUTE_END { MANY } else { prev };
                let slot = &mut input[l as usize];
                if *slot == UNUSED {
                    *slot = from;
                } else if *slot != from {
                    *slot = MANY;
                }
            }
            prev = l;
        }
        input
            .into_iter()
            .map(|i| (i != UNUSED && i != MANY).then_some(i))
            .collect()
    }

    /// The route that starts at `start`, without its end marker.
    pub fn route(&self, start: u32) -> &[u32] {
        let rest = &self.hops[start as usize..];
        let len = rest
            .iter()
            .position(|&l| l == ROUTE_END)
            .expect("routes end");
        &rest[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link has a sole input only if every route through it comes from that
    /// one link: a first hop (fed by a host) or a merge of two links has none.
    #[test]
    fn a_sole_input_is_the_only_link_any_route_enters_from() {
        let mut r = Routes::default();
        r.push(&[0, 2, 3]); // 2 from 0, 3 from 2
        r.push(&[1, 2, 4]); // 2 from 1 too: a merge
        r.push(&[5, 3]); // 3 from 5 too
        r.push(&[6, 7]);
        r.push(&[7]); // 7 is a first hop as well
        r.push(&[0, 8]);
        r.push(&[0, 8]); // the same input twice
        let want = [
            None,
            None,
            None,
            None,
            Some(2),
            None,
            None,
            None,
            Some(0),
            None,
        ];
        assert_eq!(r.sole_inputs(10), want);
    }
}
