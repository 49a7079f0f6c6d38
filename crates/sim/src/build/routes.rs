//! Routes: static, fewest hops, ties to the lower link index, computed once per
//! flow as the list of link directions its data and its ACKs cross.
//!
//! Every route is stored flat in one `Vec<u32>`, each ending in [`ROUTE_END`]; a
//! packet's header holds its position there, so forwarding reads neither the flow
//! nor a per-flow allocation (at 10,000 flows those were the costliest cache misses
//! of a run).

use std::collections::VecDeque;

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

/// Per node, how a breadth-first search from one source reached it: (previous
/// node, link direction used).
type BfsTree = Vec<Option<(u32, u32)>>;

/// A graph's adjacency, for shortest paths: per node, (neighbour, link direction)
/// in link order.
pub struct Graph {
    adj: Vec<Vec<(u32, u32)>>,
    /// Per source node, its search tree, computed on first use.
    trees: Vec<Option<BfsTree>>,
}

impl Graph {
    pub fn new(nodes: usize) -> Self {
        Graph {
            adj: vec![Vec::new(); nodes],
            trees: vec![None; nodes],
        }
    }

    /// Link direction `link` goes from node `a` to node `b`.
    pub fn add(&mut self, a: u32, b: u32, link: u32) {
        self.adj[a as usize].push((b, link));
    }

    /// The link directions of a fewest-hop path from `from` to `to`, if any.
    pub fn path(&mut self, from: u32, to: u32) -> Option<Vec<u32>> {
        let adj = &self.adj;
        let prev = self.trees[from as usize].get_or_insert_with(|| {
            let mut prev = vec![None; adj.len()];
            let mut seen = vec![false; adj.len()];
            seen[from as usize] = true;
            let mut queue = VecDeque::from([from]);
            while let Some(n) = queue.pop_front() {
                for &(m, l) in &adj[n as usize] {
                    if !seen[m as usize] {
                        seen[m as usize] = true;
                        prev[m as usize] = Some((n, l));
                        queue.push_back(m);
                    }
                }
            }
            prev
        });
        let mut path = Vec::new();
        let mut n = to;
        while n != from {
            let (m, l) = prev[n as usize]?;
            path.push(l);
            n = m;
        }
        path.reverse();
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fewest_hops_with_ties_to_the_lower_link() {
        // 0 -> 1 -> 3 (links 0, 1) and 0 -> 2 -> 3 (links 2, 3), and a long way round.
        let mut g = Graph::new(4);
        g.add(0, 1, 0);
        g.add(1, 3, 1);
        g.add(0, 2, 2);
        g.add(2, 3, 3);
        assert_eq!(g.path(0, 3), Some(vec![0, 1]));
        assert_eq!(g.path(3, 0), None);
        let mut r = Routes::default();
        let a = r.push(&[0, 1]);
        let b = r.push(&[2]);
        assert_eq!(r.route(a), &[0, 1]);
        assert_eq!(r.route(b), &[2]);
        assert_eq!(r.hop(a + 2), ROUTE_END);
    }
}
