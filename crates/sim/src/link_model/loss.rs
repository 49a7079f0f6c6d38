//! Random loss on a link, before its queue: Bernoulli, and the Gilbert-Elliott
//! model as Linux netem parameterises it (`loss gemodel p [r [1-h [1-k]]]`).
//!
//! The Gilbert-Elliott chain has a good and a bad state; per packet it first
//! moves (good to bad with `p`, bad to good with `r`), then loses the packet with
//! the loss probability of the state it was in (`1-k` in good, `1-h` in bad), in
//! that order as `sch_netem.c`'s `loss_gilb_ell` does. netem's defaults for what a
//! line leaves out: `r = 1 - p`, `1-h = 1`, `1-k = 0` (the "simple Gilbert" model).

use aqm::rng::Rng;
use rand::Rng as _;

/// A loss model's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossSpec {
    /// Each packet lost with probability `p`, independently.
    Bernoulli { p: f64 },
    /// netem's `gemodel`: `p` good to bad, `r` bad to good, `loss_bad` = 1-h,
    /// `loss_good` = 1-k.
    GilbertElliott {
        p: f64,
        r: f64,
        loss_bad: f64,
        loss_good: f64,
    },
}

impl LossSpec {
    /// netem's `gemodel` with its defaults for the parameters not given.
    pub fn gemodel(p: f64, r: Option<f64>, loss_bad: Option<f64>, loss_good: Option<f64>) -> Self {
        LossSpec::GilbertElliott {
            p,
            r: r.unwrap_or(1.0 - p),
            loss_bad: loss_bad.unwrap_or(1.0),
            loss_good: loss_good.unwrap_or(0.0),
        }
    }

    /// The parameters, named, each a probability; an error names the first that is not.
    pub fn check(&self) -> Result<(), String> {
        let named: Vec<(&str, f64)> = match *self {
            LossSpec::Bernoulli { p } => vec![("loss", p)],
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => vec![("p", p), ("r", r), ("1-h", loss_bad), ("1-k", loss_good)],
        };
        for (name, v) in named {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "{name} = {v} must be a probability between 0 and 1"
                ));
            }
        }
        Ok(())
    }

    /// The long-run fraction of packets lost.
    pub fn loss_rate(&self) -> f64 {
        match *self {
            LossSpec::Bernoulli { p } => p,
            LossSpec::GilbertElliott { .. } => {
                let ([good, bad], [lg, lb]) = self.chain();
                good * lg + bad * lb
            }
        }
    }

    /// The mean length of a run of consecutive losses (infinite when every
    /// packet is lost).
    pub fn mean_burst(&self) -> f64 {
        let lost = self.loss_rate();
        let both = match *self {
            LossSpec::Bernoulli { p } => p * p,
            LossSpec::GilbertElliott { p, r, .. } => {
                // P(loss at n-1 and at n): the state at n-1, its loss, the move, the
                // loss of the state moved to.
                let ([good, bad], [lg, lb]) = self.chain();
                good * lg * ((1.0 - p) * lg + p * lb) + bad * lb * (r * lg + (1.0 - r) * lb)
            }
        };
        lost / (lost - both)
    }

    /// The stationary distribution (good, bad) and the loss probability of each.
    fn chain(&self) -> ([f64; 2], [f64; 2]) {
        match *self {
            LossSpec::Bernoulli { p } => ([1.0, 0.0], [p, p]),
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let bad = if p + r == 0.0 { 0.0 } else { p / (p + r) };
                ([1.0 - bad, bad], [loss_good, loss_bad])
            }
        }
    }
}

/// A loss model with its state: one per link direction.
#[derive(Clone, Debug)]
pub struct Loss {
    spec: LossSpec,
    bad: bool,
}

impl Loss {
    /// Starts in the good state, as netem does.
    pub fn new(spec: LossSpec) -> Self {
        Loss { spec, bad: false }
    }

    pub fn spec(&self) -> &LossSpec {
        &self.spec
    }

    /// Whether the next packet is lost.
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        match self.spec {
            LossSpec::Bernoulli { p } => rng.gen::<f64>() < p,
            LossSpec::GilbertElliott {
                p,
                r,
                loss_bad,
                loss_good,
            } => {
                let was_bad = self.bad;
                let moves = rng.gen::<f64>() < if was_bad { r } else { p };
                if moves {
                    self.bad = !was_bad;
                }
                rng.gen::<f64>() < if was_bad { loss_bad } else { loss_good }
            }
        }
    }
}

#[cfg(test)]
mod tests;
