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

/// Fails when an output of a command is another of its outputs or one of its inputs, under any
/// name of the file: writing it would replace the other output, or destroy an input before or
/// while it is read. `outputs` are `(flag, path)` (`--json`, `--hlog`, `-o`) in the order the
/// command writes them; `inputs` are `(what, path)`, `what` saying what the input is (`the -s
/// script`, `one of the files to merge`).
pub fn check_distinct(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> Result<(), Error> {
    for (at, &(flag, path)) in outputs.iter().enumerate() {
        if let Some((what, input)) = inputs.iter().find(|(_, input)| same_file(path, input)) {
            return Err(Error::Usage(format!(
                "{flag} {} is {} ({what}): it would be overwritten; write to another file",
                path.display(),
                input.display()
            )));
        }
        if let Some((first, _)) = outputs[..at]
            .iter()
            .find(|(_, earlier)| same_file(path, earlier))
        {
            return Err(Error::Usage(format!(
                "{flag} {} is the {first} file too: one would overwrite the other; give each \
                 its own file",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Whether two paths name one file: the same inode when both exist (`./a.json`, `a.json`, a
/// symbolic or hard link), else the same name in the same folder once the folder's path is
/// made canonical (files not written yet).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        (Err(_), Err(_)) => {
            let (a, b) = (canonical_to_be(a), canonical_to_be(b));
            a.is_some() && a == b
        }
        // One exists and the other does not: two files.
        _ => false,
    }
}

/// The canonical path a file not yet there will have: its folder's canonical path and its name.
fn canonical_to_be(path: &Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    Some(folder.canonicalize().ok()?.join(name))
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

    #[test]
    fn one_file_by_two_names_is_one_file() {
        let dir = std::env::temp_dir().join(format!("tsumo-same-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let a = dir.join("a.json");
        let again = dir.join("sub/../a.json");
        // Neither there yet: the same name in the same folder.
        assert!(same_file(&a, &again));
        assert!(!same_file(&a, &dir.join("b.json")));
        std::fs::write(&a, "{}").unwrap();
        assert!(same_file(&a, &again));
        assert!(!same_file(&a, &dir.join("b.json")));
        std::fs::hard_link(&a, dir.join("link.json")).unwrap();
        assert!(same_file(&dir.join("link.json"), &a));
        let merged = "one of the files to merge";
        let e = check_distinct(
            &[("-o", &again)],
            &[(merged, &dir.join("b.json")), (merged, &a)],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("-o ") && e.contains("(one of the files to merge)"),
            "{e}"
        );
        let e = check_distinct(&[("--json", &a), ("--hgrm", &again)], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--hgrm ") && e.contains("the --json file too"),
            "{e}"
        );
        // Every pair, not only the first two: the third output onto the first, an output onto
        // the second input.
        let (b, c) = (dir.join("b.json"), dir.join("c.json"));
        let e = check_distinct(&[("--json", &a), ("--html", &b), ("--hlog", &again)], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--hlog ") && e.contains("the --json file too"),
            "{e}"
        );
        let e = check_distinct(
            &[("--json", &b), ("--hlog", &c)],
            &[
                ("the --cacert file", &dir.join("ca.pem")),
                ("the -s script", &c),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("--hlog ") && e.contains("(the -s script)"),
            "{e}"
        );
        assert!(
            check_distinct(&[("--json", &b), ("--hlog", &c)], &[("the -s script", &a)]).is_ok()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
