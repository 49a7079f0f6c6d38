//! The models as `aqmlab model ...` prints them: a small table for people, or one
//! JSON object. Both installs of the command (the binary and the Python package)
//! print through these functions, so their output is the same.

use crate::{back_choke, front_choke, sfb_misclassification, ModelError};
use serde_json::json;

fn json_line(v: serde_json::Value) -> String {
    v.to_string() + "\n"
}

/// `aqmlab model sfb-misclass`: SFB eq. (1).
pub fn sfb_misclass(
    levels: u32,
    bins: u64,
    nonresponsive: u64,
    as_json: bool,
) -> Result<String, ModelError> {
    let p = sfb_misclassification(levels, bins, nonresponsive)?;
    Ok(if as_json {
        json_line(json!({
            "levels": levels, "bins": bins, "nonresponsive": nonresponsive, "p": p,
        }))
    } else {
        format!("p = {p}\n")
    })
}

/// `aqmlab model choke-front`: front CHOKe (CHOKe paper IV-A).
pub fn choke_front(mu: f64, rates: &[f64], as_json: bool) -> Result<String, ModelError> {
    let m = front_choke(mu, rates)?;
    if as_json {
        return Ok(json_line(json!({
            "mu": m.mu,
            "p0": m.p0,
            "flows": m.flows.iter().enumerate().map(|(i, f)| json!({
                "flow": i + 1, "rate": f.rate, "head_prob": f.head_prob,
                "throughput": f.throughput, "drop_prob": f.drop_prob,
            })).collect::<Vec<_>>(),
        })));
    }
    let mut s = format!("front CHOKe (CHOKe paper IV-A), mu = {}\n", m.mu);
    s += "flow  rate       p_i       throughput  drop prob\n";
    for (i, f) in m.flows.iter().enumerate() {
        s += &format!(
            "{:<5} {:<10} {:<9.4} {:<11.4} {:.4}\n",
            i + 1,
            f.rate,
            f.head_prob,
            f.throughput,
            f.drop_prob
        );
    }
    Ok(s + &format!("P0 = {:.4}\n", m.p0))
}

/// `aqmlab model choke-back`: back CHOKe with memory (CHOKe paper IV-B); `mu`, when
/// given, adds P0 and the stability check.
pub fn choke_back(
    memory: usize,
    rates: &[f64],
    mu: Option<f64>,
    as_json: bool,
) -> Result<String, ModelError> {
    if let Some(mu) = mu {
        if !(mu > 0.0 && mu.is_finite()) {
            return Err(ModelError::NotPositive {
                arg: "mu",
                value: mu,
            });
        }
    }
    let m = back_choke(memory, rates)?;
    let p0 = mu.and_then(|mu| m.p0(mu));
    if as_json {
        return Ok(json_line(json!({
            "memory": m.memory,
            "states": m.states,
            "admission_rate": m.admission_rate,
            "mu": mu,
            "stable": mu.map(|_| p0.is_some()),
            "p0": p0,
            "flows": m.flows.iter().enumerate().map(|(i, f)| json!({
                "flow": i + 1, "rate": f.rate, "share": f.share,
                "throughput": f.throughput, "drop_prob": f.drop_prob,
            })).collect::<Vec<_>>(),
        })));
    }
    let mut s = format!(
        "back CHOKe with memory M = {} (CHOKe paper IV-B), {} states solved ({:?})\n",
        m.memory, m.states, m.solver
    );
    s += "flow  rate       share T_i  throughput  drop prob\n";
    for (i, f) in m.flows.iter().enumerate() {
        s += &format!(
            "{:<5} {:<10} {:<10.4} {:<11.4} {:.4}\n",
            i + 1,
            f.rate,
            f.share,
            f.throughput,
            f.drop_prob
        );
    }
    s += &format!("admission rate A = {:.4}\n", m.admission_rate);
    match (mu, p0) {
        (Some(_), Some(p0)) => s += &format!("P0 = {p0:.4}\n"),
        (Some(mu), None) => s += &format!("unstable: A = {:.4} >= mu = {mu}\n", m.admission_rate),
        _ => {}
    }
    Ok(s)
}
