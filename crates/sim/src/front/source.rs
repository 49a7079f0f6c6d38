//! Where a scenario comes from: `aqmlab run ARG`, `aqmlab.run(ARG)` and
//! `aqmlab sweep ARG` all resolve ARG here, so they read the same file or built-in
//! and fail with the same message.
//!
//! ARG is a path when a file of that name exists, or when it looks like one (ends
//! in `.toml`, contains `/`, or is not UTF-8): then a missing file is an error
//! about the file, not an unknown built-in. Otherwise it is the name of a built-in
//! scenario; `None` is [`builtin::DEFAULT`]. A path is any the system allows
//! (`OsStr`); errors write it lossily.

use crate::front::builtin;
use crate::scenario::{read_file, Scenario, ScenarioError};
use std::ffi::OsStr;
use std::fmt;
use std::path::Path;

/// A scenario's TOML text and the name its errors carry (the path, or
/// `<built-in NAME>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub text: String,
    pub origin: String,
}

/// Why ARG did not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceError {
    /// A file that cannot be read, or a scenario that does not parse or validate.
    Scenario(ScenarioError),
    /// Neither a file nor a built-in scenario of that name.
    Unknown(String),
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::Scenario(e) => e.fmt(f),
            SourceError::Unknown(name) => write!(
                f,
                "no scenario file or built-in scenario named \"{name}\" (see `aqmlab scenarios`)"
            ),
        }
    }
}

impl std::error::Error for SourceError {}

impl From<ScenarioError> for SourceError {
    fn from(e: ScenarioError) -> Self {
        SourceError::Scenario(e)
    }
}

/// The text and origin of ARG (see the module header), without parsing it.
pub fn resolve<A: AsRef<OsStr> + ?Sized>(arg: Option<&A>) -> Result<Source, SourceError> {
    let arg = arg.map(AsRef::as_ref);
    let os_name = arg.unwrap_or(OsStr::new(builtin::DEFAULT));
    let path = Path::new(os_name);
    let looks_like_path = |a: &OsStr| match a.to_str() {
        Some(a) => a.ends_with(".toml") || a.contains('/'),
        None => true,
    };
    if path.exists() || arg.is_some_and(looks_like_path) {
        let origin = path.to_string_lossy().into_owned();
        let text = read_file(path).map_err(|message| ScenarioError {
            origin: origin.clone(),
            line: None,
            message,
        })?;
        return Ok(Source { text, origin });
    }
    let name = os_name
        .to_str()
        .expect("a name that is not UTF-8 is a path");
    match builtin::builtin(name) {
        Some(text) => Ok(Source {
            text: text.to_string(),
            origin: format!("<built-in {name}>"),
        }),
        None => Err(SourceError::Unknown(name.to_string())),
    }
}

/// ARG resolved and parsed.
pub fn load<A: AsRef<OsStr> + ?Sized>(arg: Option<&A>) -> Result<Scenario, SourceError> {
    let src = resolve(arg)?;
    Ok(Scenario::from_toml(&src.text, &src.origin)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::MAX_FILE_BYTES;

    #[test]
    fn a_name_a_path_and_nothing_resolve_as_documented() {
        let s = resolve(Some("choke-fig3")).unwrap();
        assert_eq!(s.origin, "<built-in choke-fig3>");
        assert_eq!(s.text, builtin::builtin("choke-fig3").unwrap());
        assert_eq!(
            resolve::<str>(None).unwrap().origin,
            format!("<built-in {}>", builtin::DEFAULT)
        );
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/choke-fig3.toml"
        );
        let s = resolve(Some(file)).unwrap();
        assert_eq!(
            (s.origin.as_str(), s.text.as_str()),
            (file, builtin::builtin("choke-fig3").unwrap())
        );
        assert_eq!(load(Some(file)).unwrap().file.name, "choke-fig3");
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        // /dev/zero never ends (it grew to 4 GB); a FIFO blocks the open until a
        // writer comes. Both are refused without reading.
        if Path::new("/dev/zero").exists() {
            let e = resolve(Some("/dev/zero")).unwrap_err().to_string();
            assert_eq!(
                e,
                "/dev/zero: cannot read scenario file: it is not a regular file (a pipe, socket or device)"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = resolve(Some(fifo.to_str().unwrap()))
                .unwrap_err()
                .to_string();
            assert!(
                e.ends_with("it is not a regular file (a pipe, socket or device)"),
                "{e}"
            );
        }
        let e = resolve(Some(dir.path().to_str().unwrap()))
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("cannot read scenario file: it is a folder"),
            "{e}"
        );
        // A sparse file one byte past the bound: refused by its size, unread.
        let big = dir.path().join("big.toml");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let e = resolve(Some(big.to_str().unwrap()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("scenario file is 67108865 bytes; at most 67108864 (64 MiB)"),
            "{e}"
        );
        let e = Scenario::from_path(&big).unwrap_err().to_string();
        assert!(e.contains("at most 67108864"), "{e}");
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, b"duration = \"1s\"\nname = \"\xc3\xa9\xff\"").unwrap();
        let e = resolve(Some(bad.to_str().unwrap()))
            .unwrap_err()
            .to_string();
        // Named by line and column (characters, as TOML's errors count them).
        assert!(
            e.ends_with("it is not UTF-8 text (line 2, column 10: byte 26 of the file is not)"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_read_and_written_lossily_in_errors() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(OsStr::from_bytes(b"runs-\xff"));
        std::fs::create_dir(&folder).unwrap();
        let file = folder.join("s");
        std::fs::write(&file, builtin::builtin("choke-fig3").unwrap()).unwrap();
        let s = resolve(Some(file.as_os_str())).unwrap();
        assert_eq!(s.text, builtin::builtin("choke-fig3").unwrap());
        assert!(s.origin.ends_with("runs-\u{fffd}/s"), "{}", s.origin);
        // Not UTF-8, so not a built-in's name: a missing file, named lossily.
        let e = resolve(Some(OsStr::from_bytes(b"choke\xff")))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("choke\u{fffd}: cannot read scenario file"),
            "{e}"
        );
    }

    #[test]
    fn errors_say_whether_a_file_or_a_name_was_meant() {
        let e = resolve(Some("no-such-builtin")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no scenario file or built-in scenario named \"no-such-builtin\" (see `aqmlab scenarios`)"
        );
        let e = resolve(Some("no/such/file.toml")).unwrap_err().to_string();
        assert!(
            e.starts_with("no/such/file.toml: cannot read scenario file: "),
            "{e}"
        );
        let e = resolve(Some("missing.toml")).unwrap_err().to_string();
        assert!(e.starts_with("missing.toml: cannot read"), "{e}");
    }
}
