//! Output files are checked before any traffic: a run of minutes whose `--json` path turns out
//! to be a directory, a missing folder or a full device would otherwise be lost at the very end.
//! And they are written whole or not at all: into a file of ours beside the target, then renamed
//! into place, so a full disk leaves no truncated file, and a good file already there survives.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::io_reason;
use crate::error::Error;

/// Fails, naming `flag`, when `path` cannot be written. It leaves nothing behind: nothing of
/// the user's is created, truncated or removed. The folder of the file (through any symbolic
/// link, dangling or not) gets a file of tsumo's own name, one byte, then removed again, which
/// is what the write will need and how a full disk shows itself; a character device (not a
/// terminal) gets one newline, which is how a full device such as `/dev/full` shows itself.
pub fn check_writable(flag: &str, path: &Path) -> Result<(), Error> {
    let error = |reason: String| Error::Output {
        flag: flag.to_string(),
        path: path.display().to_string(),
        reason,
    };
    if path.is_dir() {
        return Err(error("is a directory".into()));
    }
    let target = match placement(path) {
        Place::Replace(target) => target,
        Place::AsItIs => {
            let mut file = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| error(io_reason(&e)))?;
            let is_device = file
                .metadata()
                .is_ok_and(|m| m.file_type().is_char_device());
            if is_device && !file.is_terminal() {
                file.write_all(b"\n").map_err(|e| error(io_reason(&e)))?;
            }
            return Ok(());
        }
    };
    match temp_beside(&target) {
        Ok((mut file, temp)) => {
            let written = file.write_all(b"\n");
            drop(file);
            let _ = std::fs::remove_file(&temp);
            written.map_err(|e| error(io_reason(&e)))
        }
        // A folder that is not ours, with a file in it that is: written in place.
        Err(e) if in_place(&target, &e) => OpenOptions::new()
            .append(true)
            .open(&target)
            .map(drop)
            .map_err(|e| error(io_reason(&e))),
        Err(e) => Err(error(io_reason(&e))),
    }
}

/// Writes `bytes` to `path` whole or not at all: into a file of tsumo's own beside it (in the
/// folder of the file a symbolic link names), synced, then renamed into place; on any failure
/// that file is removed and whatever was at `path` is left as it was. A device or a pipe
/// (`/dev/stdout`, `/dev/null`) is written as it is, and so is an existing file in a folder
/// tsumo may not create files in. Every output file of every command goes through here.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = match placement(path) {
        Place::Replace(target) => target,
        Place::AsItIs => return std::fs::write(path, bytes),
    };
    let (mut file, temp) = match temp_beside(&target) {
        Ok(made) => made,
        Err(e) if in_place(&target, &e) => return std::fs::write(&target, bytes),
        Err(e) => return Err(e),
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| match std::fs::metadata(&target) {
            // A file replaced keeps its permissions.
            Ok(old) => file.set_permissions(old.permissions()),
            Err(_) => Ok(()),
        })
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&temp, &target)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// How an output path is written.
enum Place {
    /// Through a file of ours renamed onto this one (the file `path` names, links followed).
    Replace(PathBuf),
    /// As it is: a device, a pipe, or one of the system's names of an open file
    /// (`/dev/stdout`, `/proc/self/fd/1`, which may name a file a shell opened for tsumo).
    AsItIs,
}

fn placement(path: &Path) -> Place {
    let system = path.starts_with("/dev") || path.starts_with("/proc");
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if system || special {
        Place::AsItIs
    } else {
        Place::Replace(resolved(path))
    }
}

/// Whether a temporary file that could not be made is a reason to write `target` in place:
/// the folder is not writable, and the file is there already.
fn in_place(target: &Path, e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
    ) && std::fs::metadata(target).is_ok_and(|m| m.is_file())
}

/// A new file of tsumo's own in `target`'s folder, named after it (`.run.json.tsumo-PID-N`).
fn temp_beside(target: &Path) -> std::io::Result<(File, PathBuf)> {
    static MADE: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let folder = match target.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    loop {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let temp = folder.join(format!(".{name}.tsumo-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The file `path` names once every symbolic link is followed, also one that names a file
/// not there yet (a dangling link is written through, as `open` would).
fn resolved(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    // As many links as the kernel follows (ELOOP beyond).
    for _ in 0..40 {
        match std::fs::read_link(&path) {
            Ok(to) => {
                path = match path.parent() {
                    Some(folder) if to.is_relative() => folder.join(to),
                    _ => to,
                }
            }
            Err(_) => break,
        }
    }
    path
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
    fn the_check_leaves_a_dangling_link_and_its_folder_as_they_were() {
        let dir = std::env::temp_dir().join(format!("tsumo-dangling-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("page.html");
        std::os::unix::fs::symlink("elsewhere.html", &link).unwrap();
        check_writable("--html", &link).unwrap();
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["page.html"]);
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        // Written, through the link: the link stays, the page is where it points.
        write_whole(&link, b"page").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(dir.join("elsewhere.html")).unwrap(), b"page");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_replaced_whole_keeps_its_mode_and_nothing_else_is_left() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tsumo-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("run.json");
        std::fs::write(&file, "old, longer than the new").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&file, b"new").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // A folder that is gone: an error, nothing made.
        assert!(write_whole(&dir.join("gone/run.json"), b"new").is_err());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["run.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
        // A device is written as it is.
        write_whole(Path::new("/dev/null"), b"nothing").unwrap();
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
