//! The queue lab: the analytical models' queue, driven through a real qdisc
//! (`aqmlab queue-lab`, and `aqmlab.repro`'s Tables II and III through the Python
//! extension).
//!
//! N independent Poisson sources of rates lambda_i feed one queue served by
//! exponential service of rate mu, exactly the setting of the CHOKe paper's models
//! (INFOCOM 2000, section IV). Exponential service is simulated the way the paper
//! reasons about it: *service tokens* arrive as a Poisson process of rate mu and
//! each one dequeues the head packet, if any (a token that finds the queue empty is
//! wasted). So the packet "in service" stays in the qdisc until its token comes and
//! can still be a front-CHOKe victim, as in the model. Each source and the token
//! process draw from their own stream (`aqm::rng::stream(seed, 2 + i)` and
//! `stream(seed, 1)`), the qdisc from `stream(seed, 0)`. One model time unit is
//! one second of qdisc time.
//!
//! Two queues can be driven, both wrapped in [`aqm::Monitored`] so the usual
//! identities are checked after every call:
//!
//! - `choke`: the real CHOKe of `aqm` (built through [`aqm::QdiscSpec`]), with
//!   `candidate = front | back | random` and `candidates = m`. The models compare
//!   *every* arrival, so RED's part is switched off: `min_th = 0` (the average is
//!   never below it, so every arrival is compared), `max_th = 1e9` and
//!   `max_p = 1e-9` with `wait` (an early drop would need about 1e18 / avg arrivals
//!   in a row without a drop: never), `w_q = 1`, and `limit` = 100000 packets (an
//!   infinite waiting room in practice; overflow drops are reported and should be
//!   0). An arrival to an empty queue has nothing to be compared with and is
//!   admitted, as in the model.
//! - `mloc`: the paper's *model* of back CHOKe (section IV-B) as a qdisc
//!   ([`Mloc`]), so that the back-CHOKe chain can be checked by simulation and
//!   its gap to the real `candidate = back` measured (docs/models.md).
//!
//! Measured after `warmup` arrivals, over the next `packets` arrivals: each flow's
//! throughput (departures per unit time), share of the departures, and drop
//! probability (its packets dropped, on arrival or as queued victims, per arrival),
//! and the time-fraction the queue is empty (P_0). Where a model covers the
//! configuration (front CHOKe with m = 1; `mloc`), its numbers are given alongside.
//!
//! [`LabConfig`] takes the keys the command's flags name; [`LabResult`] is the
//! object `aqmlab queue-lab --json` prints.

pub use crate::mloc::Mloc;
use aqm::choke::{Candidate, ChokeParams};
use aqm::{
    rng, DropReason, DropSink, FlowId, LinkInfo, Monitored, Packet, Qdisc, QdiscSpec, Rate, Time,
};
use serde::{Deserialize, Serialize, Serializer};

/// Which queue the lab drives.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LabQdisc {
    /// The real CHOKe qdisc of `aqm`, configured to compare every arrival.
    #[default]
    Choke,
    /// The paper's back-CHOKe model: drop an arrival whose id is among the last
    /// `--memory` admitted.
    Mloc,
}

impl LabQdisc {
    /// Every queue, by the name the flag and the JSON use.
    pub const NAMES: [&'static str; 2] = ["choke", "mloc"];

    /// The queue named `name` (one of [`LabQdisc::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "choke" => Some(LabQdisc::Choke),
            "mloc" => Some(LabQdisc::Mloc),
            _ => None,
        }
    }
}

/// Where the real CHOKe takes its drop candidates from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LabCandidate {
    /// The head of the queue (front CHOKe).
    #[default]
    Front,
    /// The most recently admitted packet (back CHOKe).
    Back,
    /// A random queued packet (original CHOKe).
    Random,
}

impl LabCandidate {
    /// Every candidate, by name.
    pub const NAMES: [&'static str; 3] = ["front", "back", "random"];

    /// The candidate named `name` (one of [`LabCandidate::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "front" => Some(LabCandidate::Front),
            "back" => Some(LabCandidate::Back),
            "random" => Some(LabCandidate::Random),
            _ => None,
        }
    }

    /// The name the flag and `aqm`'s `candidate` use.
    pub fn name(self) -> &'static str {
        match self {
            LabCandidate::Front => "front",
            LabCandidate::Back => "back",
            LabCandidate::Random => "random",
        }
    }
}

impl From<LabCandidate> for Candidate {
    fn from(c: LabCandidate) -> Self {
        match c {
            LabCandidate::Front => Candidate::Front,
            LabCandidate::Back => Candidate::Back,
            LabCandidate::Random => Candidate::Random,
        }
    }
}

fn one_u32() -> u32 {
    1
}
fn one_usize() -> usize {
    1
}
fn one_f64() -> f64 {
    1.0
}
fn one_u64() -> u64 {
    1
}
fn million() -> u64 {
    1_000_000
}
fn big_limit() -> u32 {
    100_000
}

/// A queue-lab run. The defaults are the command line's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabConfig {
    #[serde(default)]
    pub qdisc: LabQdisc,
    #[serde(default)]
    pub candidate: LabCandidate,
    /// m, CHOKe's drop candidates per arrival (`choke` only).
    #[serde(default = "one_u32")]
    pub candidates: u32,
    /// M, the ids remembered (`mloc` only).
    #[serde(default = "one_usize")]
    pub memory: usize,
    #[serde(default = "one_f64")]
    pub mu: f64,
    pub rates: Vec<f64>,
    /// Arrivals measured, after the warm-up.
    #[serde(default = "million")]
    pub packets: u64,
    /// Arrivals simulated and discarded first; `None`: 1% of `packets`.
    #[serde(default)]
    pub warmup: Option<u64>,
    #[serde(default = "one_u64")]
    pub seed: u64,
    /// The queue's capacity in packets (large: the models' waiting room is infinite).
    #[serde(default = "big_limit")]
    pub limit: u32,
}

impl LabConfig {
    /// The defaults of the command line for these rates.
    pub fn new(rates: Vec<f64>) -> Self {
        LabConfig {
            qdisc: LabQdisc::Choke,
            candidate: LabCandidate::Front,
            candidates: one_u32(),
            memory: one_usize(),
            mu: one_f64(),
            rates,
            packets: million(),
            warmup: None,
            seed: one_u64(),
            limit: big_limit(),
        }
    }

    /// Arrivals discarded before measuring.
    pub fn warmup_arrivals(&self) -> u64 {
        self.warmup.unwrap_or(self.packets / 100)
    }

    /// Checks the arguments; the message names the flag.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.mu > 0.0 && self.mu.is_finite()) {
            return Err(format!("--mu = {} must be a positive number", self.mu));
        }
        if self.rates.is_empty() {
            return Err("--rates must list at least one flow's rate".into());
        }
        for (i, &r) in self.rates.iter().enumerate() {
            if !(r > 0.0 && r.is_finite()) {
                return Err(format!(
                    "--rates: flow {}'s rate {r} must be a positive number",
                    i + 1
                ));
            }
        }
        if self.packets < 1 {
            return Err("--packets = 0 must be at least 1".into());
        }
        if self.limit < 1 {
            return Err("--limit = 0 must be at least 1".into());
        }
        if self.limit > 10_000_000 {
            return Err(format!("--limit = {} must be at most 10000000", self.limit));
        }
        if self.candidates < 1 {
            return Err("--candidates = 0 must be at least 1".into());
        }
        if self.qdisc == LabQdisc::Mloc && self.memory >= self.rates.len() {
            return Err(format!(
                "--memory = {} must be below the number of flows ({})",
                self.memory,
                self.rates.len()
            ));
        }
        Ok(())
    }

    /// The CHOKe parameters that make the real qdisc compare every arrival and
    /// never drop early (see the module header).
    pub fn choke_params(&self) -> ChokeParams {
        ChokeParams {
            limit: self.limit,
            min_th: 0.0,
            max_th: 1e9,
            max_p: 1e-9,
            w_q: 1.0,
            mean_pkt_size: PACKET_SIZE,
            wait: true,
            ecn: false,
            // The models compare every arrival, even at a queue of one packet.
            qlen_gate: false,
            candidates: self.candidates,
            adaptive_candidates: false,
            regions: 1,
            candidate: self.candidate.into(),
        }
    }
}

/// The size of every packet, bytes (it matters only to RED's idle-time decay).
pub const PACKET_SIZE: u32 = 1000;

/// What a model predicts for one flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TheoryFlow {
    pub throughput: f64,
    pub share: f64,
    pub drop_prob: f64,
}

/// The model that covers a configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Theory {
    /// Which model, in words.
    pub model: String,
    pub flows: Vec<TheoryFlow>,
    /// `None` when the model says the queue is unstable.
    pub p0: Option<f64>,
}

/// One flow's measurements.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabFlow {
    /// The flow's number, from 1 (as the papers number flows).
    pub flow: usize,
    pub rate: f64,
    pub arrivals: u64,
    pub departures: u64,
    /// Packets of this flow dropped, on arrival or as queued victims.
    pub drops: u64,
    /// Departures per unit time.
    pub throughput: f64,
    /// Share of all departures.
    pub share: f64,
    /// drops / arrivals.
    pub drop_prob: f64,
}

/// A run's measurements: the configuration it ran (with its warm-up resolved), and
/// beside them the model's numbers where one applies.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabResult {
    #[serde(flatten)]
    pub config: LabConfig,
    /// Measured time (model time units).
    pub time: f64,
    pub flows: Vec<LabFlow>,
    /// Time-fraction the queue was empty.
    pub p0: f64,
    /// Time-average number of packets queued (including the one "in service").
    pub mean_queue: f64,
    /// Drops in the measured period by reason, in `DropReason` order (serialized
    /// as a map of the reasons that occurred).
    #[serde(serialize_with = "nonzero_reasons")]
    pub drops_by_reason: [u64; DropReason::COUNT],
    pub theory: Option<Theory>,
}

fn nonzero_reasons<S: Serializer>(
    counts: &[u64; DropReason::COUNT],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(
        DropReason::ALL
            .iter()
            .filter(|d| counts[d.index()] > 0)
            .map(|d| (d.name(), counts[d.index()])),
    )
}

/// Counts drops per flow and per reason.
struct LabSink {
    by_flow: Vec<u64>,
    by_reason: [u64; DropReason::COUNT],
}

impl DropSink for LabSink {
    fn drop(&mut self, pkt: Packet, reason: DropReason) {
        self.by_flow[pkt.flow.0 as usize] += 1;
        self.by_reason[reason.index()] += 1;
    }
    fn mark(&mut self, _pkt: &Packet, _reason: DropReason) {}
}

/// An exponential draw of rate `rate`.
fn exp(rng: &mut aqm::Rng, rate: f64) -> f64 {
    let u: f64 = rand::Rng::gen(rng);
    -(-u).ln_1p() / rate
}

fn to_time(t: f64) -> Time {
    Time::from_nanos((t * 1e9).round() as u64)
}

/// Runs the lab; a bad configuration is an error naming the flag.
pub fn run_lab(cfg: &LabConfig) -> Result<LabResult, String> {
    cfg.validate()?;
    let cfg = &LabConfig {
        warmup: Some(cfg.warmup_arrivals()),
        ..cfg.clone()
    };
    let bps = (cfg.mu * PACKET_SIZE as f64 * 8.0).round().max(1.0) as u64;
    let link = LinkInfo::new(Rate::from_bps(bps));
    let mut result = match cfg.qdisc {
        LabQdisc::Choke => {
            let q = QdiscSpec::Choke(cfg.choke_params())
                .build(&link)
                .map_err(|e| format!("qdisc: {e}"))?;
            simulate(Monitored::new(q), cfg)
        }
        LabQdisc::Mloc => simulate(Monitored::new(Mloc::new(cfg.memory, cfg.limit)), cfg),
    };
    result.theory = theory(cfg);
    Ok(result)
}

/// The model that covers `cfg`, if any.
pub fn theory(cfg: &LabConfig) -> Option<Theory> {
    match (cfg.qdisc, cfg.candidate, cfg.candidates) {
        (LabQdisc::Choke, LabCandidate::Front, 1) => {
            let m = crate::front_choke(cfg.mu, &cfg.rates).ok()?;
            let total = m.total_throughput();
            Some(Theory {
                model: "front CHOKe, p_i = lambda_i / (mu + 2 lambda_i) (CHOKe paper IV-A)".into(),
                flows: m
                    .flows
                    .iter()
                    .map(|f| TheoryFlow {
                        throughput: f.throughput,
                        share: f.throughput / total,
                        drop_prob: f.drop_prob,
                    })
                    .collect(),
                p0: Some(m.p0),
            })
        }
        (LabQdisc::Mloc, _, _) => {
            let m = crate::back_choke(cfg.memory, &cfg.rates).ok()?;
            Some(Theory {
                model: format!(
                    "back CHOKe with memory M = {} (CHOKe paper IV-B, eqs. 4-5)",
                    cfg.memory
                ),
                flows: m
                    .flows
                    .iter()
                    .map(|f| TheoryFlow {
                        throughput: f.throughput,
                        share: f.share,
                        drop_prob: f.drop_prob,
                    })
                    .collect(),
                p0: m.p0(cfg.mu),
            })
        }
        _ => None,
    }
}

/// The event loop: the next event is the earliest of each source's next arrival
/// and the next service token.
fn simulate<Q: Qdisc>(mut q: Monitored<Q>, cfg: &LabConfig) -> LabResult {
    let n = cfg.rates.len();
    let mut qrng = rng::stream(cfg.seed, 0);
    let mut token_rng = rng::stream(cfg.seed, 1);
    let mut src_rng: Vec<aqm::Rng> = (0..n)
        .map(|i| rng::stream(cfg.seed, 2 + i as u64))
        .collect();
    let mut next_arrival: Vec<f64> = (0..n).map(|i| exp(&mut src_rng[i], cfg.rates[i])).collect();
    let mut next_token = exp(&mut token_rng, cfg.mu);
    let mut sink = LabSink {
        by_flow: vec![0; n],
        by_reason: [0; DropReason::COUNT],
    };
    let mut arrivals = vec![0u64; n];
    let mut departures = vec![0u64; n];
    let (mut now, mut start, mut empty_time, mut area) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let warmup = cfg.warmup_arrivals();
    let total = warmup + cfg.packets;
    let mut seen = 0u64;
    while seen < total {
        // The earliest source (ties go to the lowest id; they have probability 0).
        let (i, t_arr) = next_arrival
            .iter()
            .copied()
            .enumerate()
            .fold((0, f64::INFINITY), |b, c| if c.1 < b.1 { c } else { b });
        let t = t_arr.min(next_token);
        let dt = t - now;
        let len = q.len();
        if len == 0 {
            empty_time += dt;
        }
        area += len as f64 * dt;
        now = t;
        if next_token <= t_arr {
            if let Some(p) = q.dequeue(to_time(now), &mut qrng, &mut sink) {
                departures[p.flow.0 as usize] += 1;
            }
            next_token += exp(&mut token_rng, cfg.mu);
        } else {
            let mut p = Packet::new(FlowId(i as u32), PACKET_SIZE);
            p.tag = seen as u32;
            q.enqueue(p, to_time(now), &mut qrng, &mut sink);
            arrivals[i] += 1;
            next_arrival[i] += exp(&mut src_rng[i], cfg.rates[i]);
            seen += 1;
            if seen == warmup {
                // Start measuring from here.
                arrivals.iter_mut().for_each(|v| *v = 0);
                departures.iter_mut().for_each(|v| *v = 0);
                sink.by_flow.iter_mut().for_each(|v| *v = 0);
                sink.by_reason = [0; DropReason::COUNT];
                (start, empty_time, area) = (now, 0.0, 0.0);
            }
        }
    }
    let time = now - start;
    let total_departures: u64 = departures.iter().sum();
    let flows = (0..n)
        .map(|i| LabFlow {
            flow: i + 1,
            rate: cfg.rates[i],
            arrivals: arrivals[i],
            departures: departures[i],
            drops: sink.by_flow[i],
            throughput: departures[i] as f64 / time,
            share: departures[i] as f64 / total_departures.max(1) as f64,
            drop_prob: sink.by_flow[i] as f64 / arrivals[i].max(1) as f64,
        })
        .collect();
    LabResult {
        config: cfg.clone(),
        time,
        flows,
        p0: empty_time / time,
        mean_queue: area / time,
        drops_by_reason: sink.by_reason,
        theory: None,
    }
}

fn describe(c: &LabConfig) -> String {
    match c.qdisc {
        LabQdisc::Choke => format!(
            "choke (candidate = {}, m = {})",
            c.candidate.name(),
            c.candidates
        ),
        LabQdisc::Mloc => format!("mloc (memory M = {})", c.memory),
    }
}

/// The result as the one JSON object `aqmlab queue-lab --json` prints.
pub fn to_json(r: &LabResult) -> String {
    serde_json::to_string(r).expect("a lab result serializes") + "\n"
}

/// The result as a small table, with the model's numbers beside the measured ones.
pub fn to_text(r: &LabResult) -> String {
    let c = &r.config;
    let mut s = format!(
        "queue lab: {}, mu = {}, {} Poisson flows, {} arrivals measured after {}, seed {}\n",
        describe(c),
        c.mu,
        c.rates.len(),
        c.packets,
        c.warmup_arrivals(),
        c.seed
    );
    let t = r.theory.as_ref();
    if let Some(t) = t {
        s += &format!("model: {}\n", t.model);
    }
    s += "flow  rate       throughput  share     drop prob";
    if t.is_some() {
        s += "  | model: throughput  share     drop prob";
    }
    s += "\n";
    for (i, f) in r.flows.iter().enumerate() {
        s += &format!(
            "{:<5} {:<10} {:<11.4} {:<9.4} {:.4}",
            i + 1,
            f.rate,
            f.throughput,
            f.share,
            f.drop_prob
        );
        if let Some(tf) = t.map(|t| &t.flows[i]) {
            s += &format!(
                "     |        {:<11.4} {:<9.4} {:.4}",
                tf.throughput, tf.share, tf.drop_prob
            );
        }
        s += "\n";
    }
    s += &format!("P0 (empty queue) = {:.4}", r.p0);
    match t.map(|t| t.p0) {
        Some(Some(p0)) => s += &format!("  | model: {p0:.4}"),
        Some(None) => s += "  | model: unstable queue",
        None => {}
    }
    s += &format!(
        "\nmean queue = {:.3} packets over {:.1} time units\n",
        r.mean_queue, r.time
    );
    let reasons: Vec<String> = DropReason::ALL
        .iter()
        .filter(|d| r.drops_by_reason[d.index()] > 0)
        .map(|d| format!("{} {}", d.name(), r.drops_by_reason[d.index()]))
        .collect();
    s += &format!(
        "drops: {}\n",
        if reasons.is_empty() {
            "none".to_string()
        } else {
            reasons.join(", ")
        }
    );
    s
}

#[cfg(test)]
mod tests;
