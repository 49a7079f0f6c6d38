//! ECMP routes: each flow hashed over the equal-cost (fewest-hop) paths at every
//! hop, as a switch hashes a flow's 5-tuple to one of its next hops.
//!
//! The hash of a flow at a node is keyed by the run's seed, the flow's number and
//! its direction (data or ACKs) and the node: the same seed gives the same paths,
//! another seed other paths, and each switch hashes on its own (one hash at every
//! switch would send the flows a switch gathered all up one link of the next).
//! Routes are found per destination: one breadth-first search gives every node's
//! hop count to it, and a node's next hops are its neighbours one hop nearer. A
//! leaf's routes are its neighbour's and the last link, so the hosts of a switch
//! share one search. Packets of a flow never take two paths: spraying them would
//! reorder them, which is not what the switches being modelled do.

use super::routes::Graph;
use aqm::rng;

/// The stream the hashes are keyed with (`rng::stream`'s numbering).
const STREAM_ECMP: u64 = 6 << 32;

/// A route asked for: from, to, and the key of the flow and direction
/// ([`flow_key`]).
pub type Query = (u32, u32, u64);

/// The key of flow `flow`'s data (`ack` false) or ACKs.
pub fn flow_key(flow: u32, ack: bool) -> u64 {
    2 * flow as u64 + ack as u64
}

/// Which of `n` equal next hops the flow keyed `key` takes at `node`.
fn pick(seed: u64, key: u64, node: u32, n: usize) -> usize {
    let h = rng::mix64(seed ^ rng::mix64(STREAM_ECMP ^ key) ^ rng::mix64(node as u64));
    ((h as u128 * n as u128) >> 64) as usize
}

/// Every query's route (link directions), or `None` when its ends are not
/// connected, for a run seeded `seed`.
pub fn routes(g: &Graph, seed: u64, queries: &[Query]) -> Vec<Option<Vec<u32>>> {
    let mut out = vec![None; queries.len()];
    // (node searched from, the last link when the destination is a leaf, query).
    let mut order: Vec<(u32, Option<u32>, usize)> = Vec::with_capacity(queries.len());
    for (i, &(from, to, _)) in queries.iter().enumerate() {
        match g.leaf(to) {
            Some((u, _)) if u != from => order.push((u, g.link_between(u, to), i)),
            _ => order.push((to, None, i)),
        }
    }
    order.sort_unstable_by_key(|&(root, _, i)| (root, i));
    let mut dist = vec![u32::MAX; g.nodes()];
    let mut reached: Vec<u32> = Vec::new();
    let mut run = 0;
    while run < order.len() {
        let root = order[run].0;
        let end = run + order[run..].partition_point(|o| o.0 == root);
        for &n in &reached {
            dist[n as usize] = u32::MAX;
        }
        reached.clear();
        // Hop counts to `root`: a graph's links carry both directions, so the
        // counts from it are the counts to it.
        dist[root as usize] = 0;
        reached.push(root);
        let mut next = 0;
        while next < reached.len() {
            let a = reached[next];
            next += 1;
            for &(b, _) in g.out(a) {
                if dist[b as usize] == u32::MAX {
                    dist[b as usize] = dist[a as usize] + 1;
                    reached.push(b);
                }
            }
        }
        for &(_, last, i) in &order[run..end] {
            let (from, _, key) = queries[i];
            if dist[from as usize] == u32::MAX {
                continue;
            }
            let mut path = Vec::with_capacity(dist[from as usize] as usize + 1);
            let mut at = from;
            while at != root {
                let nearer = |&&(b, _): &&(u32, u32)| dist[b as usize] + 1 == dist[at as usize];
                let n = g.out(at).iter().filter(nearer).count();
                let (b, l) = *g
                    .out(at)
                    .iter()
                    .filter(nearer)
                    .nth(pick(seed, key, at, n))
                    .expect("a node off its destination has a neighbour nearer it");
                path.push(l);
                at = b;
            }
            path.extend(last);
            out[i] = Some(path);
        }
        run = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two routers joined by `width` middle nodes: `width` equal paths.
    fn diamond(width: u32) -> Graph {
        let mut g = Graph::new(width as usize + 2);
        let mut l = 0;
        for m in 2..width + 2 {
            for end in [0, 1] {
                g.add(end, m, l);
                g.add(m, end, l + 1);
                l += 2;
            }
        }
        g
    }

    #[test]
    fn flows_spread_evenly_and_the_same_seed_gives_the_same_paths() {
        let g = diamond(8);
        let queries: Vec<Query> = (0..8000).map(|f| (0, 1, flow_key(f, false))).collect();
        let paths = routes(&g, 7, &queries);
        let mut per_middle = [0u32; 8];
        for p in paths.iter().flatten() {
            assert_eq!(p.len(), 2);
            per_middle[p[0] as usize / 4] += 1;
        }
        // 1,000 expected on each: a binomial's standard deviation is about 30.
        assert!(
            per_middle.iter().all(|&c| c.abs_diff(1000) < 150),
            "{per_middle:?}"
        );
        assert_eq!(routes(&g, 7, &queries), paths);
        assert_ne!(routes(&g, 8, &queries), paths);
    }

    #[test]
    fn every_route_is_a_fewest_hop_walk_to_its_destination() {
        // A ring of 6 with a leaf on node 0: both ways round are equal from 0 to 3.
        let mut g = Graph::new(7);
        let mut l = 0;
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (6, 0)] {
            g.add(a, b, l);
            g.add(b, a, l + 1);
            l += 2;
        }
        let queries: Vec<Query> = (0..64)
            .flat_map(|f| [(6, 3, flow_key(f, false)), (3, 6, flow_key(f, true))])
            .collect();
        let mut firsts = std::collections::HashSet::new();
        for (p, &(from, to, _)) in routes(&g, 1, &queries).iter().zip(&queries) {
            let p = p.as_ref().expect("connected");
            assert_eq!(p.len(), 4, "{p:?}");
            // Each link starts where the one before it ended.
            let ends = |l: u32| match l {
                12 => (6, 0),
                13 => (0, 6),
                l => {
                    let (a, b) = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)][l as usize / 2];
                    if l % 2 == 0 {
                        (a, b)
                    } else {
                        (b, a)
                    }
                }
            };
            let mut at = from;
            for &l in p {
                assert_eq!(ends(l).0, at);
                at = ends(l).1;
            }
            assert_eq!(at, to);
            if from == 6 {
                firsts.insert(p[1]);
            }
        }
        assert_eq!(firsts.len(), 2, "both ways round are taken");
        // No route between two components.
        let mut g = Graph::new(4);
        g.add(0, 1, 0);
        g.add(1, 0, 1);
        assert_eq!(routes(&g, 1, &[(0, 2, 0)]), vec![None]);
    }
}
