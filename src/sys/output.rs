//! Output files are checked before any traffic: a run of minutes whose `--json` path turns out
//! to be a directory, a missing folder or a full device would otherwise be lost at the very end.

use std::fs::OpenOptions;
use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use super::io_reason;
use crate::error::Error;

/// Fails, naming `flag`, when `path` cannot be written. Nothing is truncated: a file that did
/// not exist is created and removed again; a character device (not a terminal) gets one newline,
/// which is how a full device such as `/dev/full` shows itself.
pub fn check_writable(flag: &str, path: &Path) -> Result<(), Error> {
    let error = |reason: String| Error::Output {
        flag: flag.to_string(),
        path: path.display().to_string(),
        reason,
    };
    if path.is_dir() {
        return Err(error("is a directory".into()));
    }
    let existed = path.exists();
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| error(io_reason(&e)))?;
    let is_device = file
        .metadata()
        .map(|m| m.file_type().is_char_device())
        .unwrap_or(false);
    if is_device && !file.is_terminal() {
        file.write_all(b"\n").map_err(|e| error(io_reason(&e)))?;
    }
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritable_paths_are_named_with_their_flag() {
        let dir = std::env::temp_dir();
        let e = check_writable("--json", &dir).unwrap_err().to_string();
        assert!(e.starts_with("--json "), "{e}");
        assert!(e.contains("is a directory"), "{e}");
        let missing = dir.join("tsumo-no-such-folder-here/run.json");
        let e = check_writable("--hgrm", &missing).unwrap_err().to_string();
        assert!(e.starts_with("--hgrm "), "{e}");
        assert!(e.contains("No such file or directory"), "{e}");
        if Path::new("/dev/full").exists() {
            let e = check_writable("--json", Path::new("/dev/full"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("No space left on device"), "{e}");
        }
    }

    #[test]
    fn a_new_file_is_not_left_behind() {
        let path = std::env::temp_dir().join(format!("tsumo-check-{}.json", std::process::id()));
        check_writable("--json", &path).unwrap();
        assert!(!path.exists());
    }
}
