//! The flags of the subcommands written in Python (`python/aqmlab`): declared here
//! like every other, so both installs parse them (the Python package's handlers
//! receive these structs' fields) and show them in `--help` and the completion
//! scripts.

use crate::Format;
use serde::Serialize;
use std::ffi::OsString;
use std::path::PathBuf;

/// `aqmlab sweep`.
#[derive(clap::Args, Debug, Serialize)]
#[command(after_help = "Examples:
  aqmlab sweep choke-fig3 --set qdisc.kind=red,choke --seeds 10
  aqmlab sweep choke-fig5 --set flows.udp.rate=0.1Mbps,1Mbps,10Mbps --set qdisc.candidates=1,2,3
  aqmlab sweep my.toml --set 'qdisc={kind=\"droptail\", limit=300},{kind=\"sfb\"}'
  aqmlab sweep choke-fig3 --set qdisc.kind=red,choke --seeds 10 --baseline qdisc.kind=red
  aqmlab sweep choke-fig3 --set qdisc.kind=red,choke --precision tcp_goodput_bps=5% --max-seeds 40

Setting qdisc.kind keeps the table's other keys; where the kinds take different \
parameters, give whole tables, as in the last example.

Every finished run is stored in DIR/cache at once: a sweep stopped at any moment \
resumes with the runs it lacks. On a cluster: --scheduler tcp://host:8786.

The printed table has each metric's mean ± the half-width of its 95% Student-t \
interval over the seeds; DIR/stats has mean, sd, n and the interval of every \
metric, DIR/paired the paired differences against --baseline.")]
pub struct SweepArgs {
    /// A TOML scenario file, or the name of a built-in scenario.
    #[arg(value_parser = crate::complete::Offering::scenarios(), hide_possible_values = true)]
    #[serde(serialize_with = "crate::complete::os_text")]
    pub scenario: Option<OsString>,
    /// A grid axis: a dotted key and its values, e.g. qdisc.kind=red,choke (repeatable).
    #[arg(long = "set", value_name = "KEY=V1,V2")]
    pub sets: Vec<String>,
    /// Run seeds 1..N at every point [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "seed_list", allow_negative_numbers = true)]
    pub seeds: Option<u64>,
    /// Run exactly these seeds.
    #[arg(long, value_name = "S1,S2", allow_hyphen_values = true)]
    pub seed_list: Option<String>,
    /// Simulated time of every run, e.g. "30s".
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    /// Warm-up of every run, e.g. "5s" (results are measured after it).
    #[arg(long, allow_hyphen_values = true)]
    pub warmup: Option<String>,
    /// Compare every point with the point of this value, seed by seed: paired
    /// differences with their 95% intervals, e.g. qdisc.kind=red (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub baseline: Vec<String>,
    /// Add seeds to each point until the 95% interval's half-width of METRIC's mean
    /// is below the target: a fraction of the mean (tcp_goodput_bps=2%) or a width
    /// in the metric's unit (jain_tcp=0.01).
    #[arg(long, value_name = "METRIC=WIDTH")]
    pub precision: Option<String>,
    /// The most seeds --precision runs at a point.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..), requires = "precision", allow_negative_numbers = true)]
    pub max_seeds: u64,
    /// Emulate every run (`aqmlab emulate`: real Linux TCP, needs root) instead of
    /// simulating it, one at a time; a run that does not keep time fails.
    #[arg(long, conflicts_with_all = ["jobs", "scheduler"])]
    pub emulate: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub workers: Workers,
    /// Output folder.
    #[arg(long, value_name = "DIR", default_value = "sweep-out")]
    #[serde(serialize_with = "crate::complete::os_text_given")]
    pub out: PathBuf,
    #[command(flatten)]
    #[serde(flatten)]
    pub options: RunnerOptions,
}

/// `aqmlab repro`.
#[derive(clap::Args, Debug, Serialize)]
// What --json prints is the checks here, the runs table in a sweep.
#[command(mut_args(crate::help_of(
    "json",
    "Print the checks and the counts as one JSON object on stdout"
)))]
pub struct ReproArgs {
    /// Experiment ids, a paper ("choke") or "all".
    #[arg(value_name = "ID", value_parser = crate::complete::Offering::repro_ids(), hide_possible_values = true)]
    pub ids: Vec<String>,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// Output folder.
    #[arg(long, value_name = "DIR", default_value = "repro-out")]
    #[serde(serialize_with = "crate::complete::os_text_given")]
    pub out: PathBuf,
    /// Seeds per point [default: each experiment's own].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    pub seeds: Option<u64>,
    #[command(flatten)]
    #[serde(flatten)]
    pub workers: Workers,
    /// Shorten every run, e.g. "20s", with a warm-up of a fifth of it (a quick look,
    /// not the paper's runs).
    #[arg(long, allow_hyphen_values = true)]
    pub duration: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    pub options: RunnerOptions,
    /// Another simulator's values of the checks (JSON, as bench/vs_ns2.py writes
    /// for ns-2.35), shown as a column beside ours; repeatable.
    #[arg(long, value_name = "FILE")]
    pub peer: Vec<PathBuf>,
}

/// Where `sweep` and `repro` run their simulations, declared once for both.
#[derive(clap::Args, Debug, Serialize)]
pub struct Workers {
    /// Worker processes [default: one per core].
    #[arg(long, short, value_name = "J", value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    pub jobs: Option<u64>,
    /// Run on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786)
    /// instead of local processes; needs aqmlab[dask] here and on the workers.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "jobs")]
    pub scheduler: Option<String>,
}

/// How `sweep` and `repro` treat their runs and say what came of them, declared
/// once for both (`repro` words `--json`'s help for itself).
#[derive(clap::Args, Debug, Serialize)]
pub struct RunnerOptions {
    /// The tables' format.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: Format,
    /// Neither read nor write DIR/cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Stop at the first failed run [default: report it and run the others].
    #[arg(long)]
    pub fail_fast: bool,
    /// Print the runs table and the counts as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run as root, write into a folder or through a symbolic link another user
    /// owns (refused otherwise: they would choose where root writes).
    #[arg(long)]
    pub allow_foreign_out: bool,
}

/// What `aqmlab plot` draws.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlotKind {
    /// Queue length over time at each monitored link ([monitor] queue_interval).
    Queue,
    /// Each flow's throughput across a monitored link over time ([monitor] flow_series).
    Throughput,
    /// Each flow's goodput over the measured interval, with its max-min fair share.
    Goodput,
    /// The CDF of queueing delay at each monitored queue ([monitor] delays).
    Delay,
    /// Each probe group's RTT quantiles (p50, p95, p99, max) beside its base RTT.
    Probe,
    /// Each host's goodput and share, as sender and as receiver (groups' `host`).
    Hosts,
    /// One panel of each that the run recorded.
    All,
}

/// `aqmlab plot`.
#[derive(clap::Args, Debug, Serialize)]
#[command(after_help = "Examples:
  aqmlab run my.toml --out results/ && aqmlab plot results/
  aqmlab plot results/ --kind throughput --out throughput.pdf
  aqmlab sweep choke-fig5 --set flows.udp.rate=1Mbps,10Mbps --set qdisc.kind=red,choke --seeds 5 \
      --out sw/ && aqmlab plot sw/

A folder written by `aqmlab sweep --out` is drawn as each goodput, the probe \
groups' p99 RTT and each Jain index's mean with its 95% interval against the first --set key, a line per value of the \
second, in DIR/plot-sweep.png (--kind does not apply).

Queue samples are on by default; the throughput and delay panels need \
[monitor] flow_series = \"1s\" and delays = true in the scenario. With --kind all, \
a panel the run did not record is left out with a note on stderr (the probe panel \
silently, on a run without probes); asked for by name, it is an error that says \
what to switch on.")]
pub struct PlotArgs {
    /// A folder written by `aqmlab run --out` or `aqmlab sweep --out`.
    #[arg(value_name = "DIR")]
    #[serde(serialize_with = "crate::complete::os_text_given")]
    pub dir: PathBuf,
    /// The figure's file; its extension picks the format (png, pdf, svg)
    /// [default: DIR/plot-KIND.png].
    #[arg(long, value_name = "FILE")]
    #[serde(serialize_with = "crate::complete::os_text")]
    pub out: Option<PathBuf>,
    /// What to draw.
    #[arg(long, value_enum, default_value = "all")]
    pub kind: PlotKind,
}
