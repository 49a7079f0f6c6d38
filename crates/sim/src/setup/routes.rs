//! Finding routes: static, fewest hops, ties to the lower link index, computed
//! once per flow group as the list of link directions its data and its ACKs cross
//! (stored in `net::routes::Routes`). ECMP's per-flow routes over the
//! same graph are `ecmp.rs`'s.

use std::collections::{HashMap, VecDeque};

/// A breadth-first search from one source, carried only as far as the paths asked
/// of it so far needed: each node reached, with how (previous node, link
/// direction), and the nodes whose links are still to be followed.
struct Search {
    prev: HashMap<u32, (u32, u32)>,
    queue: VecDeque<u32>,
}

/// A graph's adjacency, for shortest paths: per node, (neighbour, link direction)
/// in link order.
///
/// Each source's search goes on from where the last path from it stopped, until
/// it reaches the destination asked for. A node's predecessor is fixed when the
/// search first reaches it, and the order of a breadth-first search does not
/// depend on where it pauses, so every path is the one a whole search gives; but a
/// path costs the nodes nearer its source than its destination, not the graph. (A
/// whole tree per source was quadratic where every node is a source: 10,000 nodes
/// took 1.2 GB and 40 s to set up.)
pub struct Graph {
    adj: Vec<Vec<(u32, u32)>>,
    /// Per source node asked so far, its search.
    searches: HashMap<u32, Search>,
    /// Nodes whose links a search followed, over all searches (the cost).
    #[cfg(test)]
    expanded: usize,
}

impl Graph {
    pub fn new(nodes: usize) -> Self {
        Graph {
            adj: vec![Vec::new(); nodes],
            searches: HashMap::new(),
            #[cfg(test)]
            expanded: 0,
        }
    }

    /// Link direction `link` goes from node `a` to node `b`.
    pub fn add(&mut self, a: u32, b: u32, link: u32) {
        self.adj[a as usize].push((b, link));
    }

    pub fn nodes(&self) -> usize {
        self.adj.len()
    }

    /// Node `a`'s (neighbour, link direction) pairs, in link order.
    pub fn out(&self, a: u32) -> &[(u32, u32)] {
        &self.adj[a as usize]
    }

    /// The link direction from `a` to `b`, if they are linked.
    pub fn link_between(&self, a: u32, b: u32) -> Option<u32> {
        self.adj[a as usize]
            .iter()
            .find(|&&(n, _)| n == b)
            .map(|&(_, l)| l)
    }

    /// A leaf's one neighbour and the link direction to it (a host on its switch).
    pub fn leaf(&self, a: u32) -> Option<(u32, u32)> {
        match self.adj[a as usize][..] {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The paths [`Graph::path`] gives for each pair (from, to), computed with one
    /// search per source alive at a time, and a leaf's search its neighbour's.
    ///
    /// From a leaf `s` on `u` the search reaches `u` and then goes on exactly as
    /// one from `u` (whose search meets `s` and finds nothing beyond it), so every
    /// path from `s` but the one to `u` is `s -> u` then `u`'s. The hosts of a
    /// switch thus share one search: a fat tree of k = 32 searches from its 512
    /// edge switches, not its 8,192 hosts, and holds one search's memory.
    pub fn shortest_paths(&self, pairs: &[(u32, u32)]) -> Vec<Option<Vec<u32>>> {
        let mut out = vec![None; pairs.len()];
        // (source searched from, the first link when a leaf's, pair).
        let mut order: Vec<(u32, Option<u32>, usize)> = Vec::with_capacity(pairs.len());
        for (i, &(from, to)) in pairs.iter().enumerate() {
            match self.leaf(from) {
                Some((u, l)) if u == to => out[i] = Some(vec![l]),
                Some((u, l)) => order.push((u, Some(l), i)),
                None => order.push((from, None, i)),
            }
        }
        order.sort_unstable_by_key(|&(root, _, i)| (root, i));
        let none = (u32::MAX, u32::MAX);
        let mut prev = vec![none; self.adj.len()];
        let mut reached: Vec<u32> = Vec::new();
        let mut run = 0;
        while run < order.len() {
            let root = order[run].0;
            let end = run + order[run..].partition_point(|o| o.0 == root);
            for &n in &reached {
                prev[n as usize] = none;
            }
            reached.clear();
            prev[root as usize] = (root, u32::MAX);
            reached.push(root);
            // A breadth-first search, paused at each destination reached.
            let mut next = 0;
            for &(_, first, i) in &order[run..end] {
                let to = pairs[i].1;
                while prev[to as usize] == none && next < reached.len() {
                    let a = reached[next];
                    next += 1;
                    for &(b, l) in &self.adj[a as usize] {
                        if prev[b as usize] == none {
                            prev[b as usize] = (a, l);
                            reached.push(b);
                        }
                    }
                }
                if prev[to as usize] == none {
                    continue;
                }
                let mut path = Vec::new();
                let mut at = to;
                while at != root {
                    let (m, l) = prev[at as usize];
                    path.push(l);
                    at = m;
                }
                path.extend(first);
                path.reverse();
                out[i] = Some(path);
            }
            run = end;
        }
        out
    }

    /// The link directions of a fewest-hop path from `from` to `to`, if any.
    pub fn path(&mut self, from: u32, to: u32) -> Option<Vec<u32>> {
        let search = self.searches.entry(from).or_insert_with(|| Search {
            prev: HashMap::from([(from, (from, u32::MAX))]),
            queue: VecDeque::from([from]),
        });
        while !search.prev.contains_key(&to) {
            let a = search.queue.pop_front()?;
            #[cfg(test)]
            {
                self.expanded += 1;
            }
            for &(b, l) in &self.adj[a as usize] {
                search.prev.entry(b).or_insert_with(|| {
                    search.queue.push_back(b);
                    (a, l)
                });
            }
        }
        let mut path = Vec::new();
        let mut at = to;
        while at != from {
            let (m, l) = search.prev[&at];
            path.push(l);
            at = m;
        }
        path.reverse();
        Some(path)
    }

    /// The whole search tree of `from` (for tests: what every path must agree with).
    #[cfg(test)]
    fn whole_tree(&self, from: u32) -> Vec<Option<(u32, u32)>> {
        let adj = &self.adj;
        let mut prev = vec![None; adj.len()];
        let mut seen = vec![false; adj.len()];
        seen[from as usize] = true;
        let mut queue = VecDeque::from([from]);
        while let Some(a) = queue.pop_front() {
            for &(b, l) in &adj[a as usize] {
                if !seen[b as usize] {
                    seen[b as usize] = true;
                    prev[b as usize] = Some((a, l));
                    queue.push_back(b);
                }
            }
        }
        prev
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::routes::{Routes, ROUTE_END};

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

    /// A small deterministic generator (xorshift), for graphs.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn a_paused_search_finds_the_path_a_whole_one_does() {
        let mut x = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20 {
            let n = 2 + (next(&mut x) % 40) as u32;
            let mut g = Graph::new(n as usize);
            for l in 0..(next(&mut x) % 120) as u32 {
                let (a, b) = (
                    (next(&mut x) % n as u64) as u32,
                    (next(&mut x) % n as u64) as u32,
                );
                g.add(a, b, l);
            }
            // Destinations asked in a scrambled order, so searches pause and go on.
            let mut pairs: Vec<(u32, u32)> =
                (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect();
            for i in (1..pairs.len()).rev() {
                pairs.swap(i, (next(&mut x) % (i as u64 + 1)) as usize);
            }
            for (from, to) in pairs {
                let tree = g.whole_tree(from);
                let mut expect = Vec::new();
                let mut at = to;
                let mut reachable = true;
                while at != from {
                    match tree[at as usize] {
                        Some((m, l)) => {
                            expect.push(l);
                            at = m;
                        }
                        None => {
                            reachable = false;
                            break;
                        }
                    }
                }
                expect.reverse();
                assert_eq!(
                    g.path(from, to),
                    reachable.then_some(expect),
                    "{from} -> {to}"
                );
            }
        }
    }

    /// The batched paths, a leaf's through its neighbour's search, are the
    /// paths one search per source gives (what `shortest` routing promised
    /// before they were batched).
    #[test]
    fn batched_paths_are_the_paths_of_a_search_per_source() {
        let mut x = 0x2545_f491_4f6c_dd1d;
        for _ in 0..30 {
            let n = 2 + (next(&mut x) % 30) as u32;
            let mut g = Graph::new(n as usize);
            let mut l = 0;
            let mut linked = std::collections::HashSet::new();
            for _ in 0..(next(&mut x) % 60) {
                let (a, b) = (
                    (next(&mut x) % n as u64) as u32,
                    (next(&mut x) % n as u64) as u32,
                );
                // Both directions of each link, as a graph topology has them.
                if a != b && linked.insert((a.min(b), a.max(b))) {
                    g.add(a, b, l);
                    g.add(b, a, l + 1);
                    l += 2;
                }
            }
            let pairs: Vec<(u32, u32)> = (0..3 * n)
                .map(|_| {
                    let a = (next(&mut x) % n as u64) as u32;
                    (a, (a + 1 + (next(&mut x) % (n as u64 - 1)) as u32) % n)
                })
                .collect();
            let batched = g.shortest_paths(&pairs);
            for (&(a, b), got) in pairs.iter().zip(batched) {
                assert_eq!(got, g.path(a, b), "{a} -> {b}");
            }
        }
    }

    #[test]
    fn paths_cost_the_nodes_they_search_not_the_graph() {
        // Every node of a long chain the source of a path to each neighbour: once a
        // whole tree per source, quadratic in time and memory.
        let n = 20_000u32;
        let mut g = Graph::new(n as usize);
        for i in 0..n - 1 {
            g.add(i, i + 1, 2 * i);
            g.add(i + 1, i, 2 * i + 1);
        }
        for i in 0..n - 1 {
            assert_eq!(g.path(i, i + 1), Some(vec![2 * i]));
            assert_eq!(g.path(i + 1, i), Some(vec![2 * i + 1]));
        }
        assert!(
            g.expanded <= 4 * n as usize,
            "{} nodes expanded",
            g.expanded
        );
        // Many paths from one source: one search, carried on.
        let mut g2 = Graph::new(n as usize);
        g2.adj = g.adj.clone();
        for to in (1..n).step_by(97) {
            assert_eq!(g2.path(0, to).map(|p| p.len()), Some(to as usize));
        }
        assert!(g2.expanded <= n as usize, "{} nodes expanded", g2.expanded);
    }
}
