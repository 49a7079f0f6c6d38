//! Back CHOKe with a memory of the last M admitted flow ids (Pan, Prabhakar &
//! Psounis, "CHOKe", INFOCOM 2000, section IV-B, eqs. (4)-(5), Table III).
//!
//! The paper's tractable back CHOKe ("a compromise between tractability and
//! practicality"): the router keeps in "Mloc" the flow ids of the M most recently
//! *admitted* packets; an arrival whose id is in Mloc is dropped, any other is
//! admitted and its id pushed into Mloc (evicting the oldest). Only arrivals are
//! dropped, never queued packets, and an arrival can be dropped even when the queue
//! is empty. With N independent Poisson flows of rates lambda_i and S = sum
//! lambda_i, the sequence of admitted ids is a Markov chain on ordered M-tuples of
//! distinct ids (N!/(N - M)! states): from r = (i_1, ..., i_M) the next admission is
//! k (not in r) with probability
//!
//! ```text
//! P_{r, (i_2, ..., i_M, k)} = lambda_k / (S - lambda_{i_1} - ... - lambda_{i_M})
//! ```
//!
//! Its stationary distribution pi gives the share of the admitted packets (hence of
//! the output link, for a stable queue) that each flow gets: T_i = pi_i, the sum of
//! pi over the states whose newest entry is i (Table III). M = 1 is eq. (4),
//! pi_i ~ lambda_i (S - lambda_i); M = 2 is eq. (5), pi_(ij) ~ lambda_i lambda_j
//! (S - lambda_i - lambda_j). The paper states that the chain is dynamically
//! reversible for every M; the distribution that satisfies its condition
//! pi_r P_rs = pi_{s+} P_{s+ r+} for every M is the product form
//!
//! ```text
//! pi_(i_1 ... i_M) ~ lambda_{i_1} ... lambda_{i_M} (S - lambda_{i_1} - ... - lambda_{i_M})
//! ```
//!
//! ([`back_choke_product_form`]; both sides of the condition equal
//! lambda_{i_1} ... lambda_{i_M} lambda_k). [`back_choke`] does not rely on it: it
//! builds the chain and solves pi = pi P numerically (dense Gaussian elimination
//! for small chains, power iteration otherwise), and the tests check that the two
//! agree.
//!
//! Beyond the paper's shares we also give absolute rates (the time spent in each
//! state gives the admission rate A; the queue is stable iff A < mu, not the
//! paper's condition) and solve N = M + 1, a deterministic cycle, on its reachable
//! class: `docs/models.md` says how and why.

use crate::error::{check_rates, ModelError};
use crate::linalg::{stationary_dense, stationary_power, Chain};

/// Largest number of states (N!/(N - M)!) [`back_choke`] accepts.
pub const MAX_STATES: u64 = 100_000;
/// Largest number of transitions (states x (N - M)) [`back_choke`] accepts.
pub const MAX_TRANSITIONS: u64 = 2_000_000;
/// Chains up to this many states are solved densely under [`Solver::Auto`].
pub const DENSE_MAX: usize = 400;
/// Power iteration's stopping tolerance (L1 change per iteration) and cap.
pub const POWER_TOL: f64 = 1e-14;
pub const POWER_MAX_ITER: usize = 1_000_000;

/// How [`back_choke_with`] solves the chain.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Solver {
    /// Dense up to [`DENSE_MAX`] states, power iteration above.
    Auto,
    /// Gaussian elimination with partial pivoting.
    Dense,
    /// Power iteration on the lazy chain.
    Power,
    /// The product form above (no chain is solved).
    ProductForm,
}

/// One flow's numbers under back CHOKe with memory.
#[derive(Debug, Clone, PartialEq)]
pub struct BackFlow {
    /// lambda_i, the offered rate.
    pub rate: f64,
    /// pi_i: this flow's share of the admitted packets (T_i of Table III).
    pub share: f64,
    /// A pi_i: admitted packets per unit time (the throughput, if the queue is
    /// stable).
    pub throughput: f64,
    /// The probability that an arrival of this flow is dropped (its id is in the
    /// memory): 1 - throughput / rate.
    pub drop_prob: f64,
}

/// Back CHOKe's stationary numbers for one (M, lambda) input.
#[derive(Debug, Clone, PartialEq)]
pub struct BackChoke {
    /// M, the number of admitted ids remembered.
    pub memory: usize,
    /// States of the chain that were solved (the class reachable from
    /// (1, ..., M); all N!/(N - M)! when N - M >= 2, N when N = M + 1).
    pub states: usize,
    pub flows: Vec<BackFlow>,
    /// A, the total admission rate (the same for every mu).
    pub admission_rate: f64,
    /// How the chain was solved.
    pub solver: Solver,
}

impl BackChoke {
    /// The probability that a FIFO served at rate `mu` is empty, 1 - A / mu, or
    /// `None` if the queue is unstable (A >= mu).
    pub fn p0(&self, mu: f64) -> Option<f64> {
        (self.admission_rate < mu).then(|| 1.0 - self.admission_rate / mu)
    }
}

/// The exact stationary numbers of the chain, solved as [`Solver::Auto`] picks.
pub fn back_choke(memory: usize, rates: &[f64]) -> Result<BackChoke, ModelError> {
    back_choke_with(memory, rates, Solver::Auto)
}

/// The same numbers from the product form, without solving the chain.
pub fn back_choke_product_form(memory: usize, rates: &[f64]) -> Result<BackChoke, ModelError> {
    back_choke_with(memory, rates, Solver::ProductForm)
}

/// The ordered M-tuples of distinct flow ids, encoded in base N (oldest id most
/// significant), listed in increasing code order.
struct StateSpace {
    n: usize,
    m: usize,
    codes: Vec<u64>,
}

impl StateSpace {
    fn new(n: usize, m: usize) -> Result<Self, ModelError> {
        let too_large = |states: Option<u64>| ModelError::TooLarge {
            memory: m,
            flows: n,
            states,
            max_states: MAX_STATES,
            max_transitions: MAX_TRANSITIONS,
        };
        // N! / (N - M)!, with overflow and size checks before anything is allocated.
        let states = (0..m).try_fold(1u64, |acc, k| acc.checked_mul((n - k) as u64));
        let transitions = states.and_then(|s| s.checked_mul((n - m) as u64));
        match (states, transitions) {
            (Some(s), Some(t)) if s <= MAX_STATES && t <= MAX_TRANSITIONS => {}
            _ => return Err(too_large(states)),
        }
        // Codes must fit in a u64: N^M.
        if (n as u64).checked_pow(m as u32).is_none() {
            return Err(too_large(states));
        }
        let mut codes = Vec::with_capacity(states.unwrap_or(0) as usize);
        let mut tuple = Vec::with_capacity(m);
        let mut used = vec![false; n];
        Self::enumerate(n, m, &mut tuple, &mut used, &mut codes);
        debug_assert!(codes.windows(2).all(|w| w[0] < w[1]));
        Ok(StateSpace { n, m, codes })
    }

    fn enumerate(
        n: usize,
        m: usize,
        tuple: &mut Vec<usize>,
        used: &mut [bool],
        out: &mut Vec<u64>,
    ) {
        if tuple.len() == m {
            out.push(tuple.iter().fold(0u64, |c, &i| c * n as u64 + i as u64));
            return;
        }
        for i in 0..n {
            if !used[i] {
                used[i] = true;
                tuple.push(i);
                Self::enumerate(n, m, tuple, used, out);
                tuple.pop();
                used[i] = false;
            }
        }
    }

    /// The ids of state `code`, oldest first.
    fn decode(&self, code: u64, out: &mut Vec<usize>) {
        out.clear();
        let mut c = code;
        for _ in 0..self.m {
            out.push((c % self.n as u64) as usize);
            c /= self.n as u64;
        }
        out.reverse();
    }

    /// The state after admitting `k` into the state with ids `tuple`.
    fn next_code(&self, tuple: &[usize], k: usize) -> u64 {
        if self.m == 0 {
            return 0;
        }
        tuple[1..]
            .iter()
            .chain(std::iter::once(&k))
            .fold(0u64, |c, &i| c * self.n as u64 + i as u64)
    }

    fn index(&self, code: u64) -> usize {
        self.codes.binary_search(&code).expect("a valid state")
    }
}

/// The numbers, solving the chain with `solver`.
pub fn back_choke_with(
    memory: usize,
    rates: &[f64],
    solver: Solver,
) -> Result<BackChoke, ModelError> {
    check_rates(rates)?;
    let (n, m) = (rates.len(), memory);
    if m >= n {
        return Err(ModelError::MemoryTooLarge {
            memory: m,
            flows: n,
        });
    }
    let space = StateSpace::new(n, m)?;
    let s_total: f64 = rates.iter().sum();
    let mut tuple = Vec::with_capacity(m);
    let exit_rate = |tuple: &[usize]| s_total - tuple.iter().map(|&i| rates[i]).sum::<f64>();

    // The states to solve, as indices into `space.codes`, and their distribution.
    let (states, pi): (Vec<usize>, Vec<f64>) = if solver == Solver::ProductForm {
        let all: Vec<usize> = (0..space.codes.len()).collect();
        let w: Vec<f64> = all
            .iter()
            .map(|&s| {
                space.decode(space.codes[s], &mut tuple);
                tuple.iter().map(|&i| rates[i]).product::<f64>() * exit_rate(&tuple)
            })
            .collect();
        let z: f64 = w.iter().sum();
        (all, w.into_iter().map(|v| v / z).collect())
    } else {
        // Breadth-first from (0, 1, ..., M-1): the class the chain lives in.
        let start = space.index((0..m).fold(0u64, |c, i| c * n as u64 + i as u64));
        let mut local = vec![u32::MAX; space.codes.len()];
        let mut order = vec![start];
        local[start] = 0;
        let mut chain = Chain::new();
        let mut head = 0;
        while head < order.len() {
            let s = order[head];
            head += 1;
            space.decode(space.codes[s], &mut tuple);
            let e = exit_rate(&tuple);
            let mut row = Vec::with_capacity(n - m);
            for k in (0..n).filter(|k| !tuple.contains(k)) {
                let t = space.index(space.next_code(&tuple, k));
                if local[t] == u32::MAX {
                    local[t] = order.len() as u32;
                    order.push(t);
                }
                row.push((local[t], rates[k] / e));
            }
            chain.push_row(row);
        }
        chain.check_stochastic()?;
        let use_dense = match solver {
            Solver::Dense => true,
            Solver::Power => false,
            _ => chain.len() <= DENSE_MAX,
        };
        let pi = if use_dense {
            stationary_dense(&chain)?
        } else {
            stationary_power(&chain, POWER_TOL, POWER_MAX_ITER)?
        };
        (order, pi)
    };

    // Shares, admission rate and drop probabilities from pi.
    let mut share = vec![0.0; n];
    let mut mean_sojourn = 0.0;
    for (&s, &p) in states.iter().zip(&pi) {
        space.decode(space.codes[s], &mut tuple);
        let e = exit_rate(&tuple);
        mean_sojourn += p / e;
        for k in (0..n).filter(|k| !tuple.contains(k)) {
            share[k] += p * rates[k] / e;
        }
    }
    let admission_rate = 1.0 / mean_sojourn;
    let mut drop = vec![0.0; n];
    for (&s, &p) in states.iter().zip(&pi) {
        space.decode(space.codes[s], &mut tuple);
        let time_fraction = admission_rate * p / exit_rate(&tuple);
        for &i in &tuple {
            drop[i] += time_fraction;
        }
    }
    let flows = (0..n)
        .map(|i| BackFlow {
            rate: rates[i],
            share: share[i],
            throughput: admission_rate * share[i],
            drop_prob: drop[i],
        })
        .collect();
    let solver = match solver {
        Solver::Auto if states.len() <= DENSE_MAX => Solver::Dense,
        Solver::Auto => Solver::Power,
        other => other,
    };
    Ok(BackChoke {
        memory: m,
        states: states.len(),
        flows,
        admission_rate,
        solver,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds to the 4 decimals Table III prints, half up.
    fn r4(x: f64) -> f64 {
        (x * 1e4 + 1e-9).round() / 1e4
    }

    /// Table III: (M, lambdas, T).
    const TABLE_III: &[(usize, &[f64], &[f64])] = &[
        (0, &[1.0, 1.0, 1.0, 7.0], &[0.1, 0.1, 0.1, 0.7]),
        (1, &[1.0, 1.0, 1.0, 7.0], &[0.1875, 0.1875, 0.1875, 0.4375]),
        (2, &[1.0, 1.0, 1.0, 7.0], &[0.2273, 0.2273, 0.2273, 0.3182]),
        (3, &[1.0, 1.0, 1.0, 7.0], &[0.25, 0.25, 0.25, 0.25]),
        (1, &[1.0, 2.0, 3.0, 4.0], &[0.1286, 0.2286, 0.3000, 0.3429]),
        (2, &[1.0, 2.0, 3.0, 4.0], &[0.1733, 0.2533, 0.2800, 0.2933]),
        (
            3,
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            &[0.1405, 0.1953, 0.2135, 0.2226, 0.2281],
        ),
        (
            3,
            &[1.0, 3.0, 5.0, 7.0, 9.0],
            &[0.1101, 0.2034, 0.2220, 0.2300, 0.2345],
        ),
    ];

    fn shares(b: &BackChoke) -> Vec<f64> {
        b.flows.iter().map(|f| r4(f.share)).collect()
    }

    #[test]
    fn reproduces_table_iii_to_the_printed_digits_with_every_solver() {
        for solver in [
            Solver::Auto,
            Solver::Dense,
            Solver::Power,
            Solver::ProductForm,
        ] {
            for &(m, rates, want) in TABLE_III {
                let b = back_choke_with(m, rates, solver).unwrap();
                assert_eq!(shares(&b), want, "M = {m}, rates {rates:?}, {solver:?}");
            }
        }
    }

    #[test]
    fn memory_one_and_two_are_eqs_4_and_5() {
        let rates = [0.7, 1.3, 2.0, 0.2, 4.1];
        let s: f64 = rates.iter().sum();
        // Eq. (4): pi_i ~ lambda_i (S - lambda_i).
        let w: Vec<f64> = rates.iter().map(|l| l * (s - l)).collect();
        let z: f64 = w.iter().sum();
        let b = back_choke(1, &rates).unwrap();
        for (f, wi) in b.flows.iter().zip(&w) {
            assert!((f.share - wi / z).abs() < 1e-12);
        }
        // Eq. (5): pi_(ij) ~ lambda_i lambda_j (S - lambda_i - lambda_j), i != j,
        // and pi_i = sum_j pi_(ij).
        let mut w = vec![0.0; rates.len()];
        for i in 0..rates.len() {
            for j in (0..rates.len()).filter(|&j| j != i) {
                w[i] += rates[i] * rates[j] * (s - rates[i] - rates[j]);
            }
        }
        let z: f64 = w.iter().sum();
        let b = back_choke(2, &rates).unwrap();
        for (f, wi) in b.flows.iter().zip(&w) {
            assert!((f.share - wi / z).abs() < 1e-12);
        }
    }

    #[test]
    fn the_solved_chain_matches_the_product_form_for_every_memory() {
        let rates = [0.3, 1.7, 0.9, 2.2, 1.1, 0.5];
        for m in 0..rates.len() {
            let (a, b) = (
                back_choke(m, &rates).unwrap(),
                back_choke_product_form(m, &rates).unwrap(),
            );
            assert!((a.admission_rate - b.admission_rate).abs() < 1e-9);
            for (x, y) in a.flows.iter().zip(&b.flows) {
                assert!((x.share - y.share).abs() < 1e-10, "M = {m}");
                assert!((x.drop_prob - y.drop_prob).abs() < 1e-10, "M = {m}");
            }
        }
    }

    #[test]
    fn rates_are_consistent_and_more_memory_is_fairer() {
        let rates = [1.0, 1.0, 1.0, 7.0];
        let mut max_share = f64::INFINITY;
        for m in 0..4 {
            let b = back_choke(m, &rates).unwrap();
            let total_share: f64 = b.flows.iter().map(|f| f.share).sum();
            assert!((total_share - 1.0).abs() < 1e-12);
            for f in &b.flows {
                // What is admitted is what is not dropped (PASTA).
                assert!(
                    (f.rate * (1.0 - f.drop_prob) - f.throughput).abs() < 1e-10,
                    "M = {m}"
                );
            }
            let top = b.flows[3].share;
            assert!(top < max_share || m == 0);
            max_share = top;
        }
        // M = 1: the memory holds i a fraction lambda_i / S of the time.
        let b = back_choke(1, &rates).unwrap();
        assert!((b.flows[3].drop_prob - 0.7).abs() < 1e-12);
        assert!((b.admission_rate - 4.8).abs() < 1e-12);
        // Section IV-C: the top flow's share falls by 0.2625, then 0.1193, then 0.0682.
        let top: Vec<f64> = (0..4)
            .map(|m| back_choke(m, &rates).unwrap().flows[3].share)
            .collect();
        let falls: Vec<f64> = top.windows(2).map(|w| r4(w[0] - w[1])).collect();
        assert_eq!(falls, vec![0.2625, 0.1193, 0.0682]);
    }

    #[test]
    fn n_equal_m_plus_one_is_round_robin() {
        let rates = [1.0, 2.0, 4.0, 8.0];
        let b = back_choke(3, &rates).unwrap();
        assert_eq!(b.states, 4, "one cycle of the 24 states");
        // One cycle admits each flow once and lasts sum 1/lambda_k.
        let cycle: f64 = rates.iter().map(|l| 1.0 / l).sum();
        assert!((b.admission_rate - 4.0 / cycle).abs() < 1e-12);
        for f in &b.flows {
            assert!((f.share - 0.25).abs() < 1e-12);
        }
        // With two or more free ids the chain is irreducible: every state is reached.
        assert_eq!(back_choke(2, &rates).unwrap().states, 12);
        assert_eq!(
            back_choke(3, &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().states,
            60
        );
    }

    #[test]
    fn p0_is_one_minus_the_load() {
        let b = back_choke(1, &[0.1, 0.2, 0.3, 0.4]).unwrap();
        // A = sum lambda_i (1 - lambda_i / S) with S = 1: 0.7.
        assert!((b.admission_rate - 0.7).abs() < 1e-12);
        assert!((b.p0(1.0).unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(b.p0(0.5), None);
    }

    #[test]
    fn power_iteration_handles_a_chain_too_big_for_the_dense_solver() {
        let rates: Vec<f64> = (1..=9).map(|i| i as f64).collect();
        let b = back_choke(3, &rates).unwrap(); // 504 states
        assert_eq!((b.states, b.solver), (504, Solver::Power));
        let p = back_choke_product_form(3, &rates).unwrap();
        for (x, y) in b.flows.iter().zip(&p.flows) {
            assert!((x.share - y.share).abs() < 1e-10);
        }
    }

    #[test]
    fn bad_sizes_are_rejected_before_allocating() {
        let four = [1.0; 4];
        assert_eq!(
            back_choke(4, &four).unwrap_err().to_string(),
            "memory = 4 must be below the number of flows (4)"
        );
        let many = [1.0; 40];
        let e = back_choke(5, &many).unwrap_err();
        assert!(
            matches!(
                e,
                ModelError::TooLarge {
                    states: Some(78_960_960),
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(e.arg(), "memory");
        let e = back_choke(30, &many).unwrap_err();
        assert!(e.to_string().contains("more than 2^64"), "{e}");
        assert_eq!(back_choke(1, &[1.0, 0.0]).unwrap_err().arg(), "rates");
    }
}
