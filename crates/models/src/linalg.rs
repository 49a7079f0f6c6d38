//! Stationary distributions of small finite Markov chains.
//!
//! A chain is given as a sparse row-stochastic matrix ([`Chain`], compressed rows).
//! Two solvers, each checked by its residual ||pi P - pi||_1 before it answers:
//!
//! - [`stationary_dense`]: Gaussian elimination with partial pivoting on
//!   (P - I)^T with the last equation replaced by sum(pi) = 1. O(n^3) time and
//!   O(n^2) memory, so only for small chains. Exact up to rounding, and fine for
//!   periodic chains.
//! - [`stationary_power`]: power iteration on the lazy chain (P + I) / 2, which has
//!   the same stationary distribution and is aperiodic, so it converges even when P
//!   is periodic (back CHOKe with N = M + 1 is a deterministic cycle). Stops when
//!   the L1 change of an iteration falls below a tolerance.
//!
//! Both assume one closed class is reachable from the states given; with several
//! the dense system is singular and the error says so.

use crate::error::ModelError;

/// A row-stochastic matrix in compressed sparse rows.
#[derive(Debug, Clone, Default)]
pub struct Chain {
    row_start: Vec<usize>,
    col: Vec<u32>,
    prob: Vec<f64>,
}

impl Chain {
    /// An empty chain; add rows in order with [`Chain::push_row`].
    pub fn new() -> Self {
        Chain {
            row_start: vec![0],
            col: Vec::new(),
            prob: Vec::new(),
        }
    }

    /// Appends the next row: `(column, probability)` pairs. Repeated columns add up.
    pub fn push_row(&mut self, entries: impl IntoIterator<Item = (u32, f64)>) {
        for (c, p) in entries {
            self.col.push(c);
            self.prob.push(p);
        }
        self.row_start.push(self.col.len());
    }

    /// Number of states (rows).
    pub fn len(&self) -> usize {
        self.row_start.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as `(column, probability)` pairs.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let (a, b) = (self.row_start[i], self.row_start[i + 1]);
        self.col[a..b]
            .iter()
            .zip(&self.prob[a..b])
            .map(|(&c, &p)| (c as usize, p))
    }

    /// y = x P.
    pub fn left_mul(&self, x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for (i, &xi) in x.iter().enumerate() {
            if xi != 0.0 {
                for (j, p) in self.row(i) {
                    y[j] += xi * p;
                }
            }
        }
    }

    /// ||x P - x||_1.
    pub fn residual(&self, x: &[f64]) -> f64 {
        let mut y = vec![0.0; x.len()];
        self.left_mul(x, &mut y);
        y.iter().zip(x).map(|(a, b)| (a - b).abs()).sum()
    }

    /// Checks every row sums to 1 (within rounding) and every entry is a probability.
    pub fn check_stochastic(&self) -> Result<(), ModelError> {
        for i in 0..self.len() {
            let mut sum = 0.0;
            for (j, p) in self.row(i) {
                if !(0.0..=1.0 + 1e-12).contains(&p) || j >= self.len() {
                    return Err(ModelError::Solver(format!(
                        "row {i} has entry {p} in column {j}"
                    )));
                }
                sum += p;
            }
            if (sum - 1.0).abs() > 1e-9 {
                return Err(ModelError::Solver(format!("row {i} sums to {sum}")));
            }
        }
        Ok(())
    }
}

/// Largest residual a solution may leave.
pub const RESIDUAL_TOL: f64 = 1e-9;

fn checked(chain: &Chain, pi: Vec<f64>, how: &str) -> Result<Vec<f64>, ModelError> {
    let r = chain.residual(&pi);
    let small = r.is_finite() && r <= RESIDUAL_TOL;
    if !small || pi.iter().any(|&v| v < -1e-12) {
        return Err(ModelError::Solver(format!(
            "{how} left a residual of {r:e} on {} states",
            chain.len()
        )));
    }
    // Clamp rounding noise below zero and renormalise.
    let mut pi: Vec<f64> = pi.into_iter().map(|v| v.max(0.0)).collect();
    let s: f64 = pi.iter().sum();
    pi.iter_mut().for_each(|v| *v /= s);
    Ok(pi)
}

/// The stationary distribution by Gaussian elimination with partial pivoting.
pub fn stationary_dense(chain: &Chain) -> Result<Vec<f64>, ModelError> {
    let n = chain.len();
    if n == 0 {
        return Err(ModelError::Solver("empty chain".into()));
    }
    // a = (P - I)^T, row-major; the last equation becomes sum(pi) = 1.
    let mut a = vec![0.0f64; n * n];
    for i in 0..n {
        a[i * n + i] -= 1.0;
        for (j, p) in chain.row(i) {
            a[j * n + i] += p;
        }
    }
    let mut b = vec![0.0f64; n];
    a[(n - 1) * n..].iter_mut().for_each(|v| *v = 1.0);
    b[n - 1] = 1.0;
    for k in 0..n {
        let (piv, max) = (k..n)
            .map(|r| (r, a[r * n + k].abs()))
            .fold((k, -1.0), |best, c| if c.1 > best.1 { c } else { best });
        if max < 1e-13 {
            return Err(ModelError::Solver(format!(
                "the stationary system is singular at column {k} of {n} (more than one closed class?)"
            )));
        }
        if piv != k {
            for c in 0..n {
                a.swap(k * n + c, piv * n + c);
            }
            b.swap(k, piv);
        }
        let d = a[k * n + k];
        for r in k + 1..n {
            let f = a[r * n + k] / d;
            if f != 0.0 {
                for c in k..n {
                    a[r * n + c] -= f * a[k * n + c];
                }
                b[r] -= f * b[k];
            }
        }
    }
    let mut x = vec![0.0f64; n];
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|c| a[k * n + c] * x[c]).sum();
        x[k] = (b[k] - s) / a[k * n + k];
    }
    checked(chain, x, "Gaussian elimination")
}

/// The stationary distribution by power iteration on (P + I) / 2, from the
/// uniform distribution, until an iteration changes it by less than `tol` in L1,
/// for at most `max_iter` iterations.
pub fn stationary_power(chain: &Chain, tol: f64, max_iter: usize) -> Result<Vec<f64>, ModelError> {
    let n = chain.len();
    if n == 0 {
        return Err(ModelError::Solver("empty chain".into()));
    }
    let mut x = vec![1.0 / n as f64; n];
    let mut y = vec![0.0; n];
    for _ in 0..max_iter {
        chain.left_mul(&x, &mut y);
        let mut change = 0.0;
        for (xi, yi) in x.iter_mut().zip(&y) {
            let next = 0.5 * (*xi + yi);
            change += (next - *xi).abs();
            *xi = next;
        }
        if change < tol {
            return checked(chain, x, "power iteration");
        }
    }
    Err(ModelError::Solver(format!(
        "power iteration did not converge to {tol:e} in {max_iter} iterations on {n} states"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_state(a: f64, b: f64) -> Chain {
        // 0 -> 1 with a, 1 -> 0 with b: pi = (b, a) / (a + b).
        let mut c = Chain::new();
        c.push_row([(0, 1.0 - a), (1, a)]);
        c.push_row([(0, b), (1, 1.0 - b)]);
        c
    }

    #[test]
    fn both_solvers_find_the_two_state_distribution() {
        let c = two_state(0.3, 0.1);
        c.check_stochastic().unwrap();
        for pi in [
            stationary_dense(&c).unwrap(),
            stationary_power(&c, 1e-15, 100_000).unwrap(),
        ] {
            assert!(
                (pi[0] - 0.25).abs() < 1e-12 && (pi[1] - 0.75).abs() < 1e-12,
                "{pi:?}"
            );
        }
    }

    #[test]
    fn a_periodic_cycle_is_solved_by_both() {
        // 0 -> 1 -> 2 -> 0: period 3, uniform stationary distribution.
        let mut c = Chain::new();
        for i in 0..3u32 {
            c.push_row([((i + 1) % 3, 1.0)]);
        }
        for pi in [
            stationary_dense(&c).unwrap(),
            stationary_power(&c, 1e-15, 100_000).unwrap(),
        ] {
            assert!(pi.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-12), "{pi:?}");
        }
    }

    #[test]
    fn two_closed_classes_are_reported_as_singular() {
        let mut c = Chain::new();
        c.push_row([(0, 1.0)]);
        c.push_row([(1, 1.0)]);
        let e = stationary_dense(&c).unwrap_err();
        assert!(e.to_string().contains("singular"), "{e}");
    }

    #[test]
    fn a_row_that_does_not_sum_to_one_is_caught() {
        let mut c = Chain::new();
        c.push_row([(0, 0.5)]);
        assert!(c.check_stochastic().is_err());
    }
}
