//! A table being assembled column by column: each column's Arrow type and
//! nullability from the helper that adds it, so a table's schema is the order
//! of its calls.

use crate::results::{ProbeStats, ReasonMap};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use std::sync::Arc;

/// Columns being assembled into one table.
#[derive(Default)]
pub(super) struct Columns {
    fields: Vec<Field>,
    arrays: Vec<ArrayRef>,
}

impl Columns {
    pub(super) fn push(&mut self, name: &str, ty: DataType, nullable: bool, column: ArrayRef) {
        self.fields.push(Field::new(name, ty, nullable));
        self.arrays.push(column);
    }
    pub(super) fn u32(&mut self, name: &str, v: impl Iterator<Item = u32>) {
        let a = UInt32Array::from_iter_values(v);
        self.push(name, DataType::UInt32, false, Arc::new(a));
    }
    pub(super) fn u64(&mut self, name: &str, v: impl Iterator<Item = u64>) {
        let a = UInt64Array::from_iter_values(v);
        self.push(name, DataType::UInt64, false, Arc::new(a));
    }
    pub(super) fn opt_u64(&mut self, name: &str, v: impl Iterator<Item = Option<u64>>) {
        let a = UInt64Array::from_iter(v);
        self.push(name, DataType::UInt64, true, Arc::new(a));
    }
    pub(super) fn f64(&mut self, name: &str, v: impl Iterator<Item = f64>) {
        let a = Float64Array::from_iter_values(v);
        self.push(name, DataType::Float64, false, Arc::new(a));
    }
    pub(super) fn opt_f64(&mut self, name: &str, v: impl Iterator<Item = Option<f64>>) {
        let a = Float64Array::from_iter(v);
        self.push(name, DataType::Float64, true, Arc::new(a));
    }
    pub(super) fn str<'a>(&mut self, name: &str, v: impl Iterator<Item = &'a str>) {
        // StringArray sizes its buffers from the iterator's upper bound: collect first.
        let v: Vec<&str> = v.collect();
        let a = StringArray::from_iter_values(v);
        self.push(name, DataType::Utf8, false, Arc::new(a));
    }
    pub(super) fn bool(&mut self, name: &str, v: impl Iterator<Item = bool>) {
        let a = BooleanArray::from(v.collect::<Vec<bool>>());
        self.push(name, DataType::Boolean, false, Arc::new(a));
    }
    pub(super) fn opt_bool(&mut self, name: &str, v: impl Iterator<Item = Option<bool>>) {
        let a = BooleanArray::from(v.collect::<Vec<Option<bool>>>());
        self.push(name, DataType::Boolean, true, Arc::new(a));
    }
    pub(super) fn opt_str<'a>(&mut self, name: &str, v: impl Iterator<Item = Option<&'a str>>) {
        let v: Vec<Option<&str>> = v.collect();
        let a = StringArray::from_iter(v);
        self.push(name, DataType::Utf8, true, Arc::new(a));
    }
    /// `<prefix>_<reason>` for every drop reason.
    pub(super) fn reasons<T>(
        &mut self,
        prefix: &str,
        rows: &[T],
        counts: impl Fn(&T) -> &ReasonMap,
    ) {
        for reason in aqm::DropReason::ALL {
            let i = reason.index();
            let name = format!("{prefix}_{}", reason.name());
            self.u64(&name, rows.iter().map(|r| counts(r).0[i]));
        }
    }
    /// A probe's columns, `probe_sent`, `probe_echoed`, `probe_lost` and
    /// `probe_rtt_<stat>_s` (as the delays table's `<stat>_s`), null on rows
    /// of the other kinds.
    pub(super) fn probe<'a>(&mut self, rows: impl Iterator<Item = Option<&'a ProbeStats>> + Clone) {
        let count = |get: fn(&ProbeStats) -> u64| rows.clone().map(move |p| p.map(get));
        self.opt_u64("probe_sent", count(|p| p.sent));
        self.opt_u64("probe_echoed", count(|p| p.echoed));
        self.opt_u64("probe_lost", count(|p| p.lost));
        let rtt = |get: fn(&ProbeStats) -> Option<f64>| rows.clone().map(move |p| p.and_then(get));
        self.opt_f64("probe_rtt_mean_s", rtt(|p| p.rtt_mean_s));
        self.opt_f64("probe_rtt_p50_s", rtt(|p| p.rtt_p50_s));
        self.opt_f64("probe_rtt_p95_s", rtt(|p| p.rtt_p95_s));
        self.opt_f64("probe_rtt_p99_s", rtt(|p| p.rtt_p99_s));
        self.opt_f64("probe_rtt_max_s", rtt(|p| p.rtt_max_s));
    }
    pub(super) fn finish(self) -> RecordBatch {
        let schema = Arc::new(Schema::new(self.fields));
        RecordBatch::try_new(schema, self.arrays)
            .unwrap_or_else(|e: ArrowError| panic!("a result table is malformed: {e}"))
    }
}
