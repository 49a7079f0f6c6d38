//! Writing a run's tables into a folder, so that the folder never looks finished
//! while it mixes two runs.
//!
//! `summary.json` is the mark of a finished run: it is removed before anything
//! else is written and written last. Every file goes through [`write_atomic`] (a
//! temporary file in the same folder, then a rename), tables an earlier run left
//! that this run does not write are removed, and so are temporary files a killed
//! writer left. The Python package writes `sweep` and `repro` folders by the same
//! steps (`aqmlab._io`).

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use sim::RunResult;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How tables are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Apache Parquet (Snappy-compressed), typed columns.
    Parquet,
    /// Comma-separated text with a header row; an empty cell is a missing value.
    Csv,
}

impl Format {
    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Csv => "csv",
        }
    }
}

/// The marker of a temporary file: `.STEM.partial-PID.EXT` (the extension kept,
/// for writers that go by it).
const PARTIAL: &str = ".partial-";

/// Writes `path` through a temporary file in the same folder and a rename, so a
/// reader sees the old file, the whole new file, or nothing; on an error the
/// temporary file is removed.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let stem = path
        .file_stem()
        .and_then(|n| n.to_str())
        .ok_or_else(|| anyhow::anyhow!("{} is not a file name", path.display()))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{stem}{PARTIAL}{}{ext}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        write(&mut file)?;
        file.flush()?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Checks, before a run, that `dir` can be its output folder: a folder, or a path
/// to create whose nearest existing ancestor is a folder. A run that would only
/// find out after simulating that `--out` names a file is a wasted run.
pub fn check_out_dir(dir: &Path) -> Result<(), String> {
    let mut at = Some(dir);
    while let Some(p) = at {
        // The empty parent of a relative path ("out") is the current folder.
        let here = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        match std::fs::metadata(here) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if p == dir => {
                return Err(format!(
                    "--out {}: is a file, not a folder (the results are a folder of tables)",
                    dir.display()
                ))
            }
            Ok(_) => {
                return Err(format!(
                    "--out {}: {} is a file, so the folder cannot be made",
                    dir.display(),
                    p.display()
                ))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                at = p.parent()
            }
            Err(e) => return Err(format!("--out {}: {e}", dir.display())),
        }
    }
    Ok(())
}

/// Writes one table to `file` in `format`.
pub fn write_table(
    file: &mut std::fs::File,
    batch: &RecordBatch,
    format: Format,
) -> anyhow::Result<()> {
    match format {
        Format::Parquet => {
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .build();
            let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))?;
            w.write(batch)?;
            w.close()?;
        }
        Format::Csv => {
            let mut w = arrow_csv::WriterBuilder::new()
                .with_header(true)
                .build(file);
            w.write(batch)?;
        }
    }
    Ok(())
}

/// Writes every table of [`sim::tables`] and `summary.json` (the `--json`
/// object) into `dir`, by the steps of the module header. Returns the files written.
pub fn write_run(dir: &Path, r: &RunResult, format: Format) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let summary = dir.join("summary.json");
    match std::fs::remove_file(&summary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    let mut written = Vec::new();
    for (name, batch) in sim::tables::tables(r) {
        let path = dir.join(format!("{name}.{}", format.ext()));
        write_atomic(&path, |f| write_table(f, &batch, format))?;
        written.push(path);
    }
    remove_stale(dir, &written)?;
    let json = serde_json::to_vec_pretty(&r.summary())?;
    write_atomic(&summary, |f| Ok(f.write_all(&json)?))?;
    written.push(summary);
    Ok(written)
}

/// Removes from `dir` the tables (any name of [`sim::tables::TABLES`], any
/// format) not in `keep`, and temporary files left by a killed writer.
fn remove_stale(dir: &Path, keep: &[PathBuf]) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let table = sim::tables::TABLES.iter().any(|(name, _)| {
            [Format::Parquet, Format::Csv]
                .iter()
                .any(|f| file == format!("{name}.{}", f.ext()))
        });
        let partial = file.starts_with('.') && file.contains(PARTIAL);
        if ((table && !keep.contains(&path)) || partial) && path.is_file() {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "old").unwrap();
        let e = write_atomic(&path, |f| {
            f.write_all(b"half")?;
            anyhow::bail!("disk on fire")
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t.csv"]);
        write_atomic(&path, |f| Ok(f.write_all(b"new")?)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }
}
