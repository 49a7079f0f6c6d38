//! Front CHOKe with Poisson arrivals and exponential service (Pan, Prabhakar &
//! Psounis, "CHOKe", INFOCOM 2000, section IV-A, eqs. (1)-(2), Table II).
//!
//! N independent Poisson flows of rates lambda_i feed one FIFO with an infinite
//! waiting room, served at rate mu (exponential service = service tokens arriving
//! as a Poisson process of rate mu, each freeing the head packet if there is one).
//! Every arrival is compared with the packet at the head of the queue: if both are
//! of the same flow both are dropped, otherwise the arrival is admitted; an arrival
//! to an empty queue is admitted. (The model compares *every* arrival: there is no
//! RED threshold below which comparisons are skipped.)
//!
//! Let p_i be the probability that the head of the queue is of flow i and p_0 that
//! the queue is empty. By PASTA, arrivals of every flow and service tokens all see
//! these time averages, so the flow-i rate conservation is
//! lambda_i (1 - 2 p_i) = mu p_i (a fraction p_i of flow i's arrivals is dropped on
//! arrival and as many of its queued packets are dropped at the head), giving
//!
//! ```text
//! p_i = lambda_i / (mu + 2 lambda_i)                        (1)
//! T_i = mu p_i                 (throughput, Table II)
//! P_0 = 1 - sum_i p_i          (probability the queue is empty, Table II)
//! drop fraction of flow i = 2 p_i
//! ```
//!
//! The queue is stable iff sum_i p_i < 1 (eq. 2), which always holds for N <= 2.
//! Each flow's throughput depends only on its own rate and mu, and never exceeds
//! mu / 2.

use crate::error::{check_positive, check_rates, ModelError};

/// One flow's numbers under front CHOKe.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontFlow {
    /// lambda_i, the offered rate.
    pub rate: f64,
    /// p_i: the probability the head of the queue is of this flow, which is also
    /// the probability that one of its arrivals is dropped on arrival.
    pub head_prob: f64,
    /// T_i = mu p_i = lambda_i (1 - 2 p_i), the departure rate (Table II).
    pub throughput: f64,
    /// 2 p_i: the fraction of this flow's packets lost (on arrival or at the head).
    pub drop_prob: f64,
}

/// Front CHOKe's stationary numbers for one (mu, lambda) input.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontChoke {
    pub mu: f64,
    pub flows: Vec<FrontFlow>,
    /// P_0 = 1 - sum p_i, the probability the queue is empty (Table II).
    pub p0: f64,
}

impl FrontChoke {
    /// Total departure rate, mu (1 - P_0).
    pub fn total_throughput(&self) -> f64 {
        self.flows.iter().map(|f| f.throughput).sum()
    }
}

/// Eq. (1) for every flow, with P_0. Errors if mu or a rate is not a positive
/// number, or if the queue is unstable (eq. 2).
pub fn front_choke(mu: f64, rates: &[f64]) -> Result<FrontChoke, ModelError> {
    check_positive("mu", mu)?;
    check_rates(rates)?;
    let flows: Vec<FrontFlow> = rates
        .iter()
        .map(|&rate| {
            let p = rate / (mu + 2.0 * rate);
            FrontFlow {
                rate,
                head_prob: p,
                throughput: mu * p,
                drop_prob: 2.0 * p,
            }
        })
        .collect();
    let load: f64 = flows.iter().map(|f| f.head_prob).sum();
    if load >= 1.0 {
        return Err(ModelError::Unstable { load });
    }
    Ok(FrontChoke {
        mu,
        flows,
        p0: 1.0 - load,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds to the 3 decimals Table II prints, half up as the table does
    /// (0.3 / 1.6 = 0.1875 is printed 0.188; in binary it is a hair below).
    fn r3(x: f64) -> f64 {
        (x * 1000.0 + 1e-9).round() / 1000.0
    }

    /// Table II, "Theory" columns: (mu, lambdas), (P0, T_1, T_2[, T_3]).
    const TABLE_II: &[(&[f64], &[f64])] = &[
        (&[0.5, 1.0], &[0.417, 0.250, 0.333]),
        (&[1.0, 2.0], &[0.267, 0.333, 0.400]),
        (&[2.0, 3.0], &[0.171, 0.400, 0.429]),
        (&[3.0, 4.0], &[0.127, 0.429, 0.444]),
        (&[3.0, 5.0], &[0.117, 0.429, 0.455]),
        (&[3.0, 6.0], &[0.110, 0.429, 0.462]),
        (&[0.3, 0.6, 0.9], &[0.218, 0.188, 0.273, 0.321]),
        (&[0.5, 1.0, 1.5], &[0.042, 0.250, 0.333, 0.375]),
    ];

    #[test]
    fn reproduces_table_ii_theory_to_the_printed_digits() {
        for (rates, want) in TABLE_II {
            let m = front_choke(1.0, rates).unwrap();
            let mut got = vec![r3(m.p0)];
            got.extend(m.flows.iter().map(|f| r3(f.throughput)));
            assert_eq!(&got, want, "rates {rates:?}");
        }
    }

    #[test]
    fn rate_conservation_holds_for_every_flow() {
        let m = front_choke(2.5, &[0.4, 1.1, 3.0, 0.05]).unwrap();
        for f in &m.flows {
            // lambda (1 - 2 p) = mu p: what is not dropped departs.
            assert!((f.rate * (1.0 - f.drop_prob) - f.throughput).abs() < 1e-12);
            assert!(f.throughput < m.mu / 2.0);
        }
        assert!((m.total_throughput() - m.mu * (1.0 - m.p0)).abs() < 1e-12);
    }

    #[test]
    fn a_flows_throughput_depends_only_on_its_own_rate() {
        // Section IV-C: with lambda_1 = 3, T_1 = 0.429 whatever lambda_2 is.
        let t1: Vec<f64> = [4.0, 5.0, 6.0]
            .iter()
            .map(|&l2| front_choke(1.0, &[3.0, l2]).unwrap().flows[0].throughput)
            .collect();
        assert!(t1.iter().all(|&t| t == t1[0]));
        // The UDP flow of Fig. 5: lambda = mu gives a drop fraction of 2/3 ("66%"),
        // lambda = mu/2 gives 50%, lambda = 3 mu gives 85.7%.
        let drop = |l: f64| front_choke(1000.0, &[l]).unwrap().flows[0].drop_prob;
        assert_eq!(r3(drop(1000.0)), 0.667);
        assert_eq!(r3(drop(500.0)), 0.5);
        assert_eq!(r3(drop(3000.0)), 0.857);
    }

    #[test]
    fn instability_and_bad_arguments_are_reported() {
        let e = front_choke(1.0, &[5.0, 5.0, 5.0]).unwrap_err();
        assert!(matches!(e, ModelError::Unstable { .. }), "{e}");
        assert!(e.to_string().contains("1.3636"), "{e}");
        assert_eq!(
            front_choke(0.0, &[1.0]).unwrap_err().to_string(),
            "mu = 0 must be a positive number"
        );
        assert_eq!(
            front_choke(1.0, &[1.0, -2.0]).unwrap_err().to_string(),
            "rates: flow 2's rate -2 must be a positive number"
        );
        assert_eq!(front_choke(1.0, &[]).unwrap_err(), ModelError::NoFlows);
    }
}
