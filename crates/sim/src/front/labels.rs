//! A single run's tables, labelled: every table starts with the columns
//! `scenario`, one per `--set` key, and `seed`, so the tables of runs made one by
//! one (`aqmlab run --out`, `aqmlab.run`) concatenate as a sweep's do.
//!
//! A key's column is named as a sweep names it: the key itself (`qdisc.kind`),
//! or `set.<key>` when a table of the run has a column of that name.

use crate::front::assign::Assignment;
use crate::results::RunResult;
use arrow_array::UInt64Array;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// The labels' column names and one value of each, for `r` run with `sets`.
fn columns(
    r: &RunResult,
    tables: &[(&str, RecordBatch)],
    sets: &[Assignment],
) -> Vec<(String, Cell)> {
    let taken = |name: &str| {
        name == "scenario"
            || name == "seed"
            || tables
                .iter()
                .any(|(_, t)| t.schema().fields().iter().any(|f| f.name() == name))
    };
    let mut out = vec![("scenario".to_string(), Cell::Text(r.scenario.clone()))];
    for a in sets {
        let name = if taken(&a.key) {
            format!("set.{}", a.key)
        } else {
            a.key.clone()
        };
        out.push((name, Cell::of(&a.value)));
    }
    out.push(("seed".to_string(), Cell::Seed(r.seed)));
    out
}

/// One label's value.
#[derive(Clone, Debug)]
enum Cell {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Seed(u64),
}

impl Cell {
    /// A scalar stays itself; a table or list becomes its JSON text.
    fn of(v: &toml::Value) -> Cell {
        match v {
            toml::Value::String(s) => Cell::Text(s.clone()),
            toml::Value::Integer(i) => Cell::Int(*i),
            toml::Value::Float(f) => Cell::Float(*f),
            toml::Value::Boolean(b) => Cell::Bool(*b),
            other => Cell::Text(serde_json::to_string(other).unwrap_or_else(|_| other.to_string())),
        }
    }

    fn column(&self, n: usize) -> (DataType, ArrayRef) {
        match self {
            Cell::Text(s) => (
                DataType::Utf8,
                Arc::new(StringArray::from(vec![s.as_str(); n])),
            ),
            Cell::Int(i) => (DataType::Int64, Arc::new(Int64Array::from(vec![*i; n]))),
            Cell::Float(f) => (DataType::Float64, Arc::new(Float64Array::from(vec![*f; n]))),
            Cell::Bool(b) => (DataType::Boolean, Arc::new(BooleanArray::from(vec![*b; n]))),
            Cell::Seed(s) => (DataType::UInt64, Arc::new(UInt64Array::from(vec![*s; n]))),
        }
    }
}

/// Every table of `r` ([`crate::tables::TABLES`] order), each starting with the
/// label columns: `scenario`, each key of `sets`, `seed` (the run table's own
/// `scenario` and `seed` moved there).
pub fn labelled(r: &RunResult, sets: &[Assignment]) -> Vec<(&'static str, RecordBatch)> {
    let tables = crate::tables::tables(r);
    let labels = columns(r, &tables, sets);
    tables
        .iter()
        .map(|(name, t)| {
            let n = t.num_rows();
            let schema = t.schema();
            let mut fields = Vec::new();
            let mut arrays = Vec::new();
            for (column, cell) in &labels {
                let (ty, a) = cell.column(n);
                fields.push(Field::new(column, ty, false));
                arrays.push(a);
            }
            for (f, a) in schema.fields().iter().zip(t.columns()) {
                if f.name() != "scenario" && f.name() != "seed" {
                    fields.push(f.as_ref().clone());
                    arrays.push(a.clone());
                }
            }
            let schema = Schema::new_with_metadata(fields, schema.metadata().clone());
            let batch = RecordBatch::try_new(Arc::new(schema), arrays)
                .expect("label columns have the table's length");
            (*name, batch)
        })
        .collect()
}
