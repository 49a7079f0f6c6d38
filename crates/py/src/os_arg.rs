//! A path from Python as the system has it: a `str` (a name Python could not
//! decode comes as surrogate escapes, `os.fsdecode`'s), `bytes` (`os.fsencode`'s)
//! or an `os.PathLike` of either. A path need not be UTF-8; errors write it lossily.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ffi::OsString;
use std::path::PathBuf;

/// A path argument (see the module header).
pub struct OsArg(pub OsString);

impl FromPyObject<'_, '_> for OsArg {
    type Error = PyErr;

    fn extract(ob: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        // os.fspath first: a PathLike of bytes gives bytes.
        let path = ob.py().import("os")?.call_method1("fspath", (ob,))?;
        if let Ok(b) = path.cast::<PyBytes>() {
            return Ok(OsArg(bytes_to_os(b.as_bytes())));
        }
        Ok(OsArg(path.extract::<PathBuf>()?.into_os_string()))
    }
}

#[cfg(unix)]
fn bytes_to_os(b: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b).to_os_string()
}

#[cfg(not(unix))]
fn bytes_to_os(b: &[u8]) -> OsString {
    String::from_utf8_lossy(b).into_owned().into()
}
