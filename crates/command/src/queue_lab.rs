//! `aqmlab queue-lab`: the flags of [`models::queue_lab`].

use models::queue_lab::{self, LabCandidate, LabConfig, LabQdisc};

/// The flags of `aqmlab queue-lab`.
#[derive(clap::Args, Debug)]
pub struct QueueLabArgs {
    /// The queue: the real CHOKe qdisc, or the paper's back-CHOKe model (`mloc`).
    #[arg(long, default_value = "choke", value_parser = LabQdisc::NAMES)]
    pub qdisc: String,
    /// Where CHOKe's drop candidates come from (`choke` only).
    #[arg(long, default_value = "front", value_parser = LabCandidate::NAMES)]
    pub candidate: String,
    /// m, drop candidates per arrival (`choke` only).
    #[arg(long, default_value_t = 1)]
    pub candidates: u32,
    /// M, the admitted ids remembered (`mloc` only).
    #[arg(long, default_value_t = 1)]
    pub memory: usize,
    /// Service rate, packets per time unit.
    #[arg(long, default_value_t = 1.0)]
    pub mu: f64,
    /// Each Poisson source's rate, comma-separated: `--rates 0.5,1`.
    #[arg(long, value_delimiter = ',', required = true)]
    pub rates: Vec<f64>,
    /// Arrivals measured (after the warm-up).
    #[arg(long, default_value_t = 1_000_000, allow_negative_numbers = true)]
    pub packets: u64,
    /// Arrivals simulated and discarded first (default: 1% of --packets).
    #[arg(long, allow_negative_numbers = true)]
    pub warmup: Option<u64>,
    /// The seed of every random stream of the run.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub seed: u64,
    /// The queue's capacity in packets (large: the models' waiting room is infinite).
    #[arg(long, default_value_t = 100_000)]
    pub limit: u32,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl QueueLabArgs {
    pub fn config(&self) -> LabConfig {
        LabConfig {
            // The value parsers admit only these names.
            qdisc: LabQdisc::from_name(&self.qdisc).expect("a known queue"),
            candidate: LabCandidate::from_name(&self.candidate).expect("a known candidate"),
            candidates: self.candidates,
            memory: self.memory,
            mu: self.mu,
            rates: self.rates.clone(),
            packets: self.packets,
            warmup: self.warmup,
            seed: self.seed,
            limit: self.limit,
        }
    }
}

/// What `aqmlab queue-lab` prints.
pub(crate) fn text(a: &QueueLabArgs) -> Result<String, crate::Failure> {
    let r = queue_lab::run_lab(&a.config()).map_err(crate::Failure::Usage)?;
    Ok(if a.json {
        queue_lab::to_json(&r)
    } else {
        queue_lab::to_text(&r)
    })
}
