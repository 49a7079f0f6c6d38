//! Reading a scenario file: a regular file of bounded size, as UTF-8 text.

use std::path::Path;

/// The most bytes a scenario file may have. The largest scenarios written so far
/// (40,000 flow groups) are a few MB; the bound is what keeps `/dev/zero` or a
/// runaway generator from filling memory.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The text of the scenario file at `path`, which must be a regular file of at
/// most [`MAX_FILE_BYTES`]: a FIFO would block the read until something writes to
/// it, and a device such as `/dev/zero` never ends. The error is the message.
pub fn read_file(path: &Path) -> Result<String, String> {
    read_text(path, "scenario file")
}

/// [`read_file`] for another kind of file the scenario names (`what`: "trace
/// file"), whose errors say what the file is.
pub fn read_text(path: &Path, what: &str) -> Result<String, String> {
    let kind = what;
    let cannot = |e: std::io::Error| format!("cannot read {kind}: {e}");
    // Asked before opening: opening a FIFO blocks until it has a writer.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    let what = |m: &std::fs::Metadata| {
        if m.is_dir() {
            "a folder"
        } else {
            "not a regular file (a pipe, socket or device)"
        }
    };
    if !meta.is_file() {
        return Err(format!("cannot read {kind}: it is {}", what(&meta)));
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(format!("cannot read {kind}: it is {}", what(&meta)));
    }
    let too_big = |n: u64| {
        format!(
            "{kind} is {n} bytes; at most {MAX_FILE_BYTES} ({} MiB) are read",
            MAX_FILE_BYTES >> 20
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(meta.len()));
    }
    // The file may grow while it is read: read one byte past the bound at most.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_FILE_BYTES + 1),
        &mut bytes,
    )
    .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        // The bytes before it are valid UTF-8: lines and columns (characters)
        // as the TOML parser counts them.
        let before = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
        let line = 1 + before.matches('\n').count();
        let column = 1 + before.chars().rev().take_while(|&c| c != '\n').count();
        format!(
            "cannot read {kind}: it is not UTF-8 text (line {line}, column {column}: \
             byte {at} of the file is not)"
        )
    })
}
