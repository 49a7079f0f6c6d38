//! Writing a run's tables into a folder, so that the folder never looks finished
//! while it mixes two runs, and nothing in it that aqmlab did not write is lost.
//!
//! `summary.json` is the mark of a finished run: it is removed before anything
//! else is written and written last. Every file goes through [`write_atomic`] (a
//! temporary file in the same folder, then a rename; never a rename over a device,
//! FIFO or symbolic link), tables an earlier run left that this run does not write
//! are removed, and so are temporary files a killed writer left. A writer holds an
//! exclusive lock on the folder's `.aqmlab-files` from its first step to its last,
//! so two writers of one folder take turns; that file lists what aqmlab wrote
//! there, and only those files are ever removed or replaced. The Python package
//! writes `run`, `sweep` and `repro` folders by the same steps (`aqmlab._io`).
//!
//! Run as root, a write never goes where another user chose ([`foreign_owner`]):
//! an `--out` that is their folder (or would be made in one) or their symbolic
//! link, or a link they left in the folder, is refused (`--allow-foreign-out`
//! writes anyway). The user who ran `sudo` is not another user.

use anyhow::Context;
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use sim::RunResult;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use aqmlab_command::Format;

/// The marker of a temporary file: `.STEM.partial-HOST-PID.EXT` (the extension
/// kept, for writers that go by it; the host and process tell a killed writer's
/// file from a live one's).
const PARTIAL: &str = ".partial-";

/// In every folder aqmlab writes: the names of the files it wrote there, one a
/// line, and the lock its writers take turns on.
pub const RECORD: &str = ".aqmlab-files";

/// This machine's name, as Python's `socket.gethostname()` has it (empty if unknown).
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// `--allow-foreign-out`: root writes where another user chose, knowingly.
static ALLOW_FOREIGN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets root write into folders and through links other users own (the flag).
pub fn allow_foreign_out(yes: bool) {
    ALLOW_FOREIGN.store(yes, std::sync::atomic::Ordering::Relaxed);
}

fn allow_foreign() -> bool {
    ALLOW_FOREIGN.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether this process runs as root: what another user owns may then steer a
/// write anywhere.
fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    cfg!(unix) && unsafe { libc::geteuid() } == 0
}

/// Who owns `meta`'s node, when that is a user other than root: as root, a
/// folder or symbolic link such a user owns lets them choose where the run's
/// files go (a `flows.csv` link to `/etc/shadow`, listed in a record they
/// wrote, would be written through). `None` when not root.
/// The user who ran `sudo aqmlab ...` is not foreign: they could run anything as
/// root already, and their own folder is where `--out results/` goes.
pub fn foreign_owner(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let uid = meta.uid();
    (as_root() && uid != 0 && Some(uid) != sudo_user()).then_some(uid)
}

/// The user `sudo` ran this process for (`SUDO_UID`), if any.
fn sudo_user() -> Option<u32> {
    std::env::var("SUDO_UID").ok()?.parse().ok()
}

/// Refuses `dir` as root's output folder when another user owns the folder (or,
/// for a new one, the folder it would be made in) or a symbolic link on the way
/// to it (`--out` itself, or any folder above).
fn check_owner(dir: &Path) -> Result<(), String> {
    if !as_root() || allow_foreign() {
        return Ok(());
    }
    let mut at = Some(dir);
    while let Some(p) = at {
        if p.as_os_str().is_empty() {
            break;
        }
        if let Ok(link) = std::fs::symlink_metadata(p) {
            if link.file_type().is_symlink() {
                if let Some(uid) = foreign_owner(&link) {
                    return Err(format!(
                        "--out {}: {} is a symbolic link of user {uid}, who would choose \
                         where root writes (--allow-foreign-out to write anyway)",
                        dir.display(),
                        p.display()
                    ));
                }
            }
        }
        at = p.parent();
    }
    // The folder, or the one a new folder goes into: its owner could replace
    // what root makes there by a link of theirs.
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let Some((at, meta)) = absolute
        .ancestors()
        .find_map(|p| std::fs::metadata(p).ok().map(|m| (p, m)))
    else {
        return Ok(());
    };
    match (meta.is_dir(), foreign_owner(&meta)) {
        (true, Some(uid)) if at == absolute => Err(format!(
            "--out {}: a folder of user {uid}, who could steer root's writes there \
             (--allow-foreign-out to write anyway)",
            dir.display()
        )),
        (true, Some(uid)) => Err(format!(
            "--out {}: it would be made in {}, a folder of user {uid}, who could steer \
             root's writes there (--allow-foreign-out to write anyway)",
            dir.display(),
            at.display()
        )),
        _ => Ok(()),
    }
}

/// Where a write of `path` goes, and whether by a rename: a symbolic link's target
/// (the link stays), a regular or new file by a rename, a device, FIFO or socket
/// written through (a rename would replace the node itself). A folder is an error.
fn destination(path: &Path) -> std::io::Result<(PathBuf, bool)> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        let meta = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((path, true)),
            m => m?,
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if let Some(uid) = foreign_owner(&meta).filter(|_| !allow_foreign()) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is a symbolic link of user {uid}: root does not write through it",
                        path.display()
                    ),
                ));
            }
            let target = std::fs::read_link(&path)?;
            path = match path.parent() {
                Some(parent) if target.is_relative() => parent.join(target),
                _ => target,
            };
            continue;
        }
        if kind.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("{} is a folder, not a file", path.display()),
            ));
        }
        return Ok((path, kind.is_file()));
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// Writes `path` through a temporary file in the same folder and a rename, so a
/// reader sees the old file, the whole new file, or nothing; on an error the
/// temporary file is removed. A symbolic link's target is written (the link
/// kept); a device or FIFO is written through, since there is nothing to rename.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (path, rename) = destination(path)?;
    if !rename {
        let mut file = std::fs::OpenOptions::new().write(true).open(&path)?;
        write(&mut file)?;
        file.flush()?;
        return Ok(());
    }
    let stem = path
        .file_stem()
        .and_then(|n| n.to_str())
        .ok_or_else(|| anyhow::anyhow!("{} is not a file name", path.display()))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(
        ".{stem}{PARTIAL}{}-{}{ext}",
        host(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        write(&mut file)?;
        file.flush()?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The names of `format`'s tables and `summary.json`: what a run writes.
fn run_files(format: Format) -> Vec<String> {
    sim::tables::TABLES
        .iter()
        .map(|(name, _)| format!("{name}.{}", format.ext()))
        .chain(["summary.json".to_string()])
        .collect()
}

/// Every name a run may have written into a folder (any format).
fn any_run_file(name: &str) -> bool {
    name == "summary.json"
        || [Format::Parquet, Format::Csv]
            .iter()
            .any(|&f| run_files(f).iter().any(|n| n == name))
}

/// The files of `dir` that are aqmlab's: the names in its record, or, in a folder
/// an aqmlab without records wrote (a `summary.json`, no record), its tables.
fn ours(dir: &Path) -> std::io::Result<Vec<String>> {
    match std::fs::read(dir.join(RECORD)) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !dir.join("summary.json").is_file() {
                return Ok(vec![]);
            }
            Ok(foreign(dir, &[])?
                .into_iter()
                .filter(|n| any_run_file(n))
                .collect())
        }
        Err(e) => Err(e),
    }
}

/// The regular files in `dir` that are not in `ours` (folders and temporary
/// files are not counted), sorted.
fn foreign(dir: &Path, ours: &[String]) -> std::io::Result<Vec<String>> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let partial = name.starts_with('.') && name.contains(PARTIAL);
        if name == RECORD || partial || ours.contains(&name) {
            continue;
        }
        if entry.path().is_file() {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// A file name fit for one line of a terminal.
fn printable(name: &str) -> String {
    if name.chars().any(char::is_control) {
        format!("{name:?}")
    } else {
        name.to_string()
    }
}

/// Checks, before a run, that `dir` can be its output folder: a folder, or a path
/// to create whose nearest existing ancestor is a folder, holding no file the run
/// would replace that aqmlab did not write. A run that would only find out after
/// simulating that `--out` names a file is a wasted run. Returns a warning to
/// print when the folder holds other files aqmlab did not write (left alone).
pub fn check_out_dir(dir: &Path, format: Format) -> Result<Option<String>, String> {
    if dir.as_os_str().is_empty() {
        return Err("--out '': an empty path (an unset shell variable?); name a folder".into());
    }
    let mut at = Some(dir);
    while let Some(p) = at {
        // The empty parent of a relative path ("out") is the current folder.
        let here = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        match std::fs::metadata(here) {
            Ok(m) if m.is_dir() => break,
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
    check_owner(dir)?;
    if !dir.is_dir() {
        return Ok(None);
    }
    let theirs = ours(dir)
        .and_then(|o| foreign(dir, &o))
        .map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let writes = run_files(format);
    if let Some(clash) = theirs.iter().find(|n| writes.contains(n)) {
        return Err(format!(
            "--out {}: {} was not written by aqmlab and would be replaced \
             (move it, or choose a new or empty folder)",
            dir.display(),
            printable(clash)
        ));
    }
    if theirs.is_empty() {
        return Ok(None);
    }
    let mut shown: Vec<String> = theirs.iter().take(5).map(|n| printable(n)).collect();
    if theirs.len() > 5 {
        shown.push("...".into());
    }
    Ok(Some(format!(
        "--out {} holds files aqmlab did not write ({}); they are left alone",
        dir.display(),
        shown.join(", ")
    )))
}

/// Writes one table to `file` in `format`.
pub fn write_table(
    file: &mut std::fs::File,
    batch: &RecordBatch,
    format: Format,
) -> anyhow::Result<()> {
    let mut out = KeepsIoError { file, error: None };
    let written: anyhow::Result<()> = (|| {
        match format {
            Format::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .build();
                let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props))?;
                w.write(batch)?;
                w.close()?;
            }
            Format::Csv => {
                let mut w = arrow_csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut out);
                w.write(batch)?;
            }
        }
        Ok(())
    })();
    // The file's own error ("No space left on device") rather than the writer's
    // rewording of it (Parquet's "External: transport error").
    match (written, out.error) {
        (Err(_), Some(io)) => Err(io.into()),
        (result, _) => result,
    }
}

/// A file that keeps the first error a write to it gave.
struct KeepsIoError<'a> {
    file: &'a mut std::fs::File,
    error: Option<std::io::Error>,
}

impl Write for KeepsIoError<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf).inspect_err(|e| self.keep(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush().inspect_err(|e| self.keep(e))
    }
}

impl KeepsIoError<'_> {
    fn keep(&mut self, e: &std::io::Error) {
        if self.error.is_none() {
            self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
    }
}

/// `dir`'s record, open and locked: one writer at a time, the others wait.
struct Record {
    file: std::fs::File,
    ours: Vec<String>,
}

impl Record {
    fn open(dir: &Path) -> anyhow::Result<Record> {
        std::fs::create_dir_all(dir)?;
        let ours_before = ours(dir)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(RECORD))?;
        if let Err(std::fs::TryLockError::WouldBlock) = file.try_lock() {
            eprintln!(
                "note: waiting for another aqmlab writing {} to finish",
                dir.display()
            );
            file.lock()?;
        }
        // Read again under the lock: the writer that held it may have changed it.
        let mut ours = ours(dir)?;
        if ours.is_empty() {
            ours = ours_before;
        }
        Ok(Record { file, ours })
    }

    /// Replaces the record by `names`, in place (the lock is on this file). A
    /// write cut short loses names: at worst a stale file of aqmlab's is kept.
    fn save(&mut self, mut names: Vec<String>) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom};
        names.sort();
        names.dedup();
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        let text: String = names.iter().map(|n| format!("{n}\n")).collect();
        self.file.write_all(text.as_bytes())?;
        self.ours = names;
        Ok(())
    }
}

/// Writes every table of [`sim::tables`], labelled with the scenario, the keys of
/// `sets` and the seed ([`sim::front::labels`]), and `summary.json` (the `--json`
/// object) into `dir`, by the steps of the module header. Returns the files written.
pub fn write_run(
    dir: &Path,
    r: &RunResult,
    sets: &[sim::front::assign::Assignment],
    format: Format,
) -> anyhow::Result<Vec<PathBuf>> {
    check_owner(dir).map_err(anyhow::Error::msg)?;
    let mut record = Record::open(dir)?;
    let names = run_files(format);
    let theirs = foreign(dir, &record.ours)?;
    if let Some(clash) = theirs.iter().find(|n| names.contains(n)) {
        anyhow::bail!(
            "{} was not written by aqmlab and would be replaced",
            printable(clash)
        );
    }
    let mut all = record.ours.clone();
    all.extend(names.iter().cloned());
    record.save(all)?;
    let summary = dir.join("summary.json");
    match std::fs::remove_file(&summary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    let mut written = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        for (name, batch) in sim::front::labels::labelled(r, sets) {
            let path = dir.join(format!("{name}.{}", format.ext()));
            write_atomic(&path, |f| write_table(f, &batch, format))
                .with_context(|| format!("{name}.{}", format.ext()))?;
            written.push(path);
        }
        remove_stale(dir, &mut record, &names)?;
        let json = serde_json::to_vec_pretty(&r.summary())?;
        write_atomic(&summary, |f| Ok(f.write_all(&json)?)).context("summary.json")?;
        Ok(())
    })();
    if result.is_err() {
        // A write that failed (a full disk) leaves no table: the ones written
        // would otherwise sit beside an earlier run's that were not replaced.
        let earlier: Vec<String> = [Format::Parquet, Format::Csv]
            .iter()
            .flat_map(|&f| run_files(f))
            .filter(|n| record.ours.contains(n))
            .collect();
        remove_tables(dir, &earlier);
    }
    result?;
    written.push(summary);
    Ok(written)
}

/// Removes the regular files `names` from `dir` (a link stays: it is the user's,
/// written through), ignoring errors: the clean-up after a failed write.
fn remove_tables(dir: &Path, names: &[String]) {
    for name in names {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Removes from `dir` the tables (any name of [`sim::tables::TABLES`], any
/// format) aqmlab wrote there and this run does not (`keep`), and temporary files
/// left by writers on this host that are no longer running.
fn remove_stale(dir: &Path, record: &mut Record, keep: &[String]) -> anyhow::Result<()> {
    let mine = format!("{PARTIAL}{}-", host());
    let mut left = vec![];
    for name in record.ours.clone() {
        let path = dir.join(&name);
        let stale = any_run_file(&name) && !keep.contains(&name);
        let meta = std::fs::symlink_metadata(&path);
        match meta {
            Ok(m) if stale && m.is_file() => std::fs::remove_file(&path)?,
            Err(_) if stale => {}
            _ => left.push(name),
        }
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let pid = file
            .strip_prefix('.')
            .and_then(|f| f.split_once(mine.as_str()))
            .and_then(|(_, rest)| rest.split('.').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            let dead = cfg!(target_os = "linux") && !Path::new(&format!("/proc/{pid}")).exists();
            if dead && path.is_file() {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    record.save(left)?;
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
