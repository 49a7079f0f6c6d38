//! Max-min fair shares by progressive filling: every flow's rate rises together
//! until a link on its path saturates or it reaches its own demand (a CBR's rate);
//! flows so stopped freeze and the rest keep rising. The share a perfectly fair
//! network would give each flow, to compare goodputs against.

/// A flow for the computation: its demand (infinite for TCP) and the link
/// directions its data crosses.
pub struct Demand<'a> {
    pub demand_bps: f64,
    pub path: &'a [u32],
}

/// Max-min fair rates, one per flow, for links of the given capacities.
pub fn max_min_fair(capacity_bps: &[f64], flows: &[Demand<'_>]) -> Vec<f64> {
    let mut rate = vec![0.0; flows.len()];
    let mut frozen: Vec<bool> = flows.iter().map(|f| f.demand_bps <= 0.0).collect();
    let mut remaining = capacity_bps.to_vec();
    const EPS: f64 = 1e-9;
    loop {
        let mut users = vec![0u32; capacity_bps.len()];
        let mut any = false;
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                any = true;
                for &l in f.path {
                    users[l as usize] += 1;
                }
            }
        }
        if !any {
            break;
        }
        let mut inc = f64::INFINITY;
        for (l, &n) in users.iter().enumerate() {
            if n > 0 {
                inc = inc.min(remaining[l] / n as f64);
            }
        }
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                inc = inc.min(f.demand_bps - rate[i]);
            }
        }
        if !inc.is_finite() {
            // Flows with infinite demand over no links: nothing bounds them.
            break;
        }
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                rate[i] += inc;
                for &l in f.path {
                    remaining[l as usize] -= inc;
                }
            }
        }
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i]
                && (rate[i] >= f.demand_bps - EPS * f.demand_bps.max(1.0)
                    || f.path
                        .iter()
                        .any(|&l| remaining[l as usize] <= EPS * capacity_bps[l as usize].max(1.0)))
            {
                frozen[i] = true;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_link_water_filling() {
        // 1 Mbps link: a 100 kbps CBR gets its demand, the three TCPs split the rest.
        let p = [0u32];
        let flows = [
            Demand {
                demand_bps: 100e3,
                path: &p,
            },
            Demand {
                demand_bps: f64::INFINITY,
                path: &p,
            },
            Demand {
                demand_bps: f64::INFINITY,
                path: &p,
            },
            Demand {
                demand_bps: f64::INFINITY,
                path: &p,
            },
        ];
        let r = max_min_fair(&[1e6], &flows);
        assert!((r[0] - 100e3).abs() < 1e-3);
        for x in &r[1..] {
            assert!((x - 300e3).abs() < 1e-3, "{r:?}");
        }
    }

    #[test]
    fn parking_lot_gives_the_long_flow_the_tightest_share() {
        // Links 0 (1 Mbps) and 1 (2 Mbps); flow A crosses both, B only 0, C only 1.
        let (both, l0, l1) = ([0u32, 1], [0u32], [1u32]);
        let flows = [
            Demand {
                demand_bps: f64::INFINITY,
                path: &both,
            },
            Demand {
                demand_bps: f64::INFINITY,
                path: &l0,
            },
            Demand {
                demand_bps: f64::INFINITY,
                path: &l1,
            },
        ];
        let r = max_min_fair(&[1e6, 2e6], &flows);
        assert!(
            (r[0] - 0.5e6).abs() < 1e-3
                && (r[1] - 0.5e6).abs() < 1e-3
                && (r[2] - 1.5e6).abs() < 1e-3,
            "{r:?}"
        );
    }
}
