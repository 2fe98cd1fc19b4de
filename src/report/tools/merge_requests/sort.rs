//! The external sort behind `tsumo merge --requests`: rows of any number of logs, in any order,
//! into one file ordered by intended time, in bounded memory.
//!
//! Rows are read in chunks (at most a number of rows or of bytes), each chunk sorted and spilled
//! to a file of ours beside the output, then the chunks are merged k ways (a binary heap of each
//! chunk's next row) into the output. Spilled files are removed at the end, also on an error.
//! A row is copied byte for byte but for its three times, moved onto the merged clock.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::stats::requests::HEADER;

/// A row's place in the merged log: its intended time on the merged clock, its shard, its
/// connection.
pub type Key = (i64, u64, u64);

/// How large a sorted chunk grows before it is spilled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkSize {
    pub rows: usize,
    pub bytes: usize,
}

/// Chunks merged at once; more are merged in rounds, so open files stay few.
const WAYS: usize = 256;

/// One input: its name for messages, how to open its rows (past its header lines), and how far
/// its times move (ns).
pub struct Source<'a> {
    pub name: String,
    pub rows: Box<dyn FnOnce() -> io::Result<Box<dyn BufRead + 'a>> + 'a>,
    pub offset_ns: i64,
}

/// What the sort did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sorted {
    /// Rows written.
    pub rows: u64,
    /// Sorted chunks spilled (0: the rows fitted in one chunk, sorted in memory).
    pub spilled: usize,
    /// Per input with rows that do not parse: its name and how many.
    pub skipped: Vec<(String, u64)>,
    /// Per input whose reading stopped before its end: its name, the rows read and why.
    pub cut: Vec<(String, u64, String)>,
}

/// A write that failed (of the output, or of a spilled chunk: its path) or a spilled chunk that
/// could not be read back.
#[derive(Debug)]
pub struct Failure {
    pub path: Option<PathBuf>,
    pub error: io::Error,
}

impl Failure {
    fn at(path: &Path) -> impl FnOnce(io::Error) -> Failure + '_ {
        move |error| Failure {
            path: Some(path.to_path_buf()),
            error,
        }
    }

    fn of_output(error: io::Error) -> Failure {
        Failure { path: None, error }
    }
}

/// Sorts the rows of `sources` by [`Key`] into `out` (which has its header already). Rows of
/// one key keep the order they were read in. Chunks are spilled into `spill_dir`, named after
/// `out_name`.
pub fn sort<'a>(
    sources: impl IntoIterator<Item = Source<'a>>,
    out: &mut dyn Write,
    (spill_dir, out_name): (&Path, &str),
    chunk: ChunkSize,
) -> Result<Sorted, Failure> {
    let mut sorted = Sorted::default();
    let mut spills = Spills {
        dir: spill_dir.to_path_buf(),
        name: out_name.to_string(),
        paths: Vec::new(),
        made: 0,
    };
    let mut rows = Chunk::default();
    let mut line = Vec::new();
    for source in sources {
        let (mut read, mut skipped) = (0u64, 0u64);
        let mut input = match (source.rows)() {
            Ok(input) => input,
            Err(e) => {
                let reason = crate::sys::io_reason(&e);
                sorted.cut.push((source.name, 0, reason));
                continue;
            }
        };
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    let reason = crate::sys::io_reason(&e);
                    sorted.cut.push((source.name.clone(), read, reason));
                    break;
                }
            }
            // Spilled before it would outgrow its budget (so its buffer never doubles past it).
            let full = rows.bytes.len() + line.len() + 24 > chunk.bytes;
            if !rows.keys.is_empty() && (rows.keys.len() >= chunk.rows || full) {
                spills.spill(&mut rows)?;
            }
            // A row without its end of line was cut short (a shard killed mid-row).
            let whole = line.pop() == Some(b'\n');
            if !whole || !rows.push(&line, source.offset_ns) {
                skipped += 1;
                continue;
            }
            read += 1;
        }
        if skipped > 0 {
            sorted.skipped.push((source.name, skipped));
        }
    }
    if spills.paths.is_empty() {
        // One chunk: sorted in memory, nothing spilled.
        rows.sort();
        sorted.rows = rows.write(out).map_err(Failure::of_output)?;
        return Ok(sorted);
    }
    if !rows.keys.is_empty() {
        spills.spill(&mut rows)?;
    }
    drop(rows);
    sorted.spilled = spills.made;
    // Rounds of at most WAYS chunks, until one merge writes the output.
    while spills.paths.len() > WAYS {
        let round: Vec<PathBuf> = spills.paths.drain(..WAYS).collect();
        let path = spills.next_path();
        let file = new_file(&path).map_err(Failure::at(&path))?;
        spills.paths.push(path.clone());
        let mut file = BufWriter::new(file);
        merge(&round, &mut file)?;
        file.flush().map_err(Failure::at(&path))?;
        remove(&round);
    }
    sorted.rows = merge(&spills.paths, out)?;
    Ok(sorted)
}

/// Merges sorted chunk files into `out`; ties go to the earlier chunk. Returns the rows.
fn merge(paths: &[PathBuf], out: &mut dyn Write) -> Result<u64, Failure> {
    let mut readers = Vec::with_capacity(paths.len());
    for path in paths {
        let file = File::open(path).map_err(Failure::at(path))?;
        readers.push(BufReader::with_capacity(1 << 16, file));
    }
    let mut lines: Vec<Vec<u8>> = vec![Vec::new(); paths.len()];
    let mut heap = BinaryHeap::with_capacity(paths.len());
    let next = |k: usize, line: &mut Vec<u8>, reader: &mut BufReader<File>| {
        line.clear();
        let n = reader
            .read_until(b'\n', line)
            .map_err(Failure::at(&paths[k]))?;
        Ok::<_, Failure>((n > 0).then(|| key_of(line).unwrap_or_default()))
    };
    for (k, reader) in readers.iter_mut().enumerate() {
        if let Some(key) = next(k, &mut lines[k], reader)? {
            heap.push(Reverse((key, k)));
        }
    }
    let mut rows = 0;
    while let Some(Reverse((_, k))) = heap.pop() {
        out.write_all(&lines[k]).map_err(Failure::of_output)?;
        rows += 1;
        if let Some(key) = next(k, &mut lines[k], &mut readers[k])? {
            heap.push(Reverse((key, k)));
        }
    }
    Ok(rows)
}

/// Rows of one chunk: their bytes one after another, and each row's key and place (a chunk's
/// bytes fit in `u32`: [`super::CHUNK`]'s budget is far below).
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    keys: Vec<(Key, u32, u32)>,
}

impl Chunk {
    /// Adds `line` with its times moved `offset_ns`; `false` (nothing added) when it is not a
    /// whole row.
    fn push(&mut self, line: &[u8], offset_ns: i64) -> bool {
        let start = self.bytes.len();
        let key = rebased(line, offset_ns, &mut self.bytes);
        let place = u32::try_from(start)
            .ok()
            .zip(u32::try_from(self.bytes.len()).ok());
        match key.zip(place) {
            Some((key, (start, end))) => {
                self.keys.push((key, start, end));
                true
            }
            None => {
                self.bytes.truncate(start);
                false
            }
        }
    }

    /// By key; rows of one key in the order they came (their place), with no buffer of a
    /// stable sort's.
    fn sort(&mut self) {
        self.keys
            .sort_unstable_by_key(|&(key, start, _)| (key, start));
    }

    /// The rows in key order, each with its end of line; emptied after.
    fn write(&mut self, out: &mut dyn Write) -> io::Result<u64> {
        for &(_, start, end) in &self.keys {
            out.write_all(&self.bytes[start as usize..end as usize])?;
            out.write_all(b"\n")?;
        }
        let rows = self.keys.len() as u64;
        self.keys.clear();
        self.bytes.clear();
        Ok(rows)
    }
}

/// The chunks spilled so far, removed when dropped (at the end, and on any error).
struct Spills {
    dir: PathBuf,
    name: String,
    paths: Vec<PathBuf>,
    made: usize,
}

impl Spills {
    fn next_path(&mut self) -> PathBuf {
        self.made += 1;
        self.dir.join(format!(
            ".{}.tsumo-{}-chunk-{}",
            self.name,
            std::process::id(),
            self.made
        ))
    }

    fn spill(&mut self, rows: &mut Chunk) -> Result<(), Failure> {
        rows.sort();
        let path = self.next_path();
        let file = new_file(&path).map_err(Failure::at(&path))?;
        self.paths.push(path.clone());
        let mut file = BufWriter::with_capacity(1 << 16, file);
        rows.write(&mut file)
            .and_then(|_| file.flush())
            .map_err(Failure::at(&path))
    }
}

impl Drop for Spills {
    fn drop(&mut self) {
        remove(&self.paths);
    }
}

fn remove(paths: &[PathBuf]) {
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
}

/// A file of ours that was not there (an old one of the same name is not ours to truncate).
fn new_file(path: &Path) -> io::Result<File> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            OpenOptions::new().write(true).create_new(true).open(path)
        }
        made => made,
    }
}

/// The columns a row has ([`HEADER`]'s).
fn columns() -> usize {
    HEADER.split(',').count()
}

/// How many fields a CSV row has (commas inside quotes do not count); 0 with a quote left open.
fn fields(line: &[u8]) -> usize {
    let (mut fields, mut quoted) = (1, false);
    for &b in line {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => fields += 1,
            _ => {}
        }
    }
    if quoted {
        0
    } else {
        fields
    }
}

fn number<T: std::str::FromStr>(field: &[u8]) -> Option<T> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// Appends `line` to `out` with its times (intended, sent, received: the first three columns)
/// moved `offset_ns` later, an empty time left empty; the rest as it is. Its key, or `None`
/// when it is not a whole row (a column missing or too many, a time that is not a number).
fn rebased(line: &[u8], offset_ns: i64, out: &mut Vec<u8>) -> Option<Key> {
    if fields(line) != columns() {
        return None;
    }
    let mut parts = line.splitn(4, |&b| b == b',');
    let start = out.len();
    for _ in 0..3 {
        let time = parts.next()?;
        if !time.is_empty() {
            let moved = number::<i64>(time)?.checked_add(offset_ns)?;
            write!(out, "{moved}").ok()?;
        }
        out.push(b',');
    }
    out.extend_from_slice(parts.next()?);
    key_of(&out[start..])
}

/// A row's key from its columns: intended time (required), shard and connection (empty: 0).
fn key_of(line: &[u8]) -> Option<Key> {
    let mut parts = line.split(|&b| b == b',');
    let intended = number(parts.next()?)?;
    let id = |part: Option<&[u8]>| match part? {
        b"" => Some(0),
        digits => number::<u64>(digits),
    };
    let (_sent, _received) = (parts.next(), parts.next());
    Some((intended, id(parts.next())?, id(parts.next())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(intended: i64, shard: u64, conn: u64) -> String {
        format!(
            "{intended},{},,{shard},{conn},0,200,51,10,70,60,10,",
            intended + 10
        )
    }

    #[test]
    fn times_move_and_the_rest_is_copied() {
        let mut out = Vec::new();
        let line = b"100,110,,2,7,0,200,51,10,70,60,10,\"read, reset\"";
        assert_eq!(rebased(line, 1000, &mut out), Some((1100, 2, 7)));
        assert_eq!(out, b"1100,1110,,2,7,0,200,51,10,70,60,10,\"read, reset\"");
        // Cut short, a column too many, a time that is no number: not a row.
        for bad in [
            &b"100,110,,2,7,0,200,5"[..],
            b"100,110,,2,7,0,200,51,10,70,60,10,,",
            b"1e2,110,,2,7,0,200,51,10,70,60,10,",
            b"100,110,,2,7,0,200,51,10,70,60,10,\"open",
        ] {
            let mut out = b"kept".to_vec();
            let mut chunk = Chunk::default();
            assert!(!chunk.push(bad, 5), "{}", String::from_utf8_lossy(bad));
            assert!(chunk.bytes.is_empty() && chunk.keys.is_empty());
            assert!(rebased(bad, 5, &mut out).is_none());
            assert_eq!(out, b"kept");
        }
    }

    fn sorted_rows(inputs: &[(&str, i64)], rows: usize) -> (Vec<String>, Sorted) {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tsumo-sort-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sources = inputs
            .iter()
            .enumerate()
            .map(|(k, &(text, offset_ns))| Source {
                name: format!("log{k}"),
                rows: Box::new(move || Ok(Box::new(text.as_bytes()) as Box<dyn BufRead>)),
                offset_ns,
            });
        let mut out = Vec::new();
        let chunk = ChunkSize {
            rows,
            bytes: 1 << 20,
        };
        let sorted = sort(sources, &mut out, (&dir, "out.csv"), chunk).unwrap();
        // Every spilled chunk is gone.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
        let text = String::from_utf8(out).unwrap();
        (text.lines().map(str::to_string).collect(), sorted)
    }

    #[test]
    fn chunks_spilled_or_not_give_one_order() {
        let a: String = [50, 10, 30, 70, 0].map(|t| row(t, 1, 1) + "\n").concat();
        let b: String = [5, 45, 25, 65].map(|t| row(t, 2, 3) + "\n").concat() + "99,1";
        let inputs = [(a.as_str(), 0), (b.as_str(), 10)];
        let (in_memory, sorted) = sorted_rows(&inputs, 100);
        assert_eq!(sorted.spilled, 0);
        assert_eq!(sorted.skipped, [("log1".to_string(), 1)]);
        assert_eq!(sorted.rows, 9);
        let intended: Vec<i64> = in_memory
            .iter()
            .map(|l| key_of(l.as_bytes()).unwrap().0)
            .collect();
        assert_eq!(intended, [0, 10, 15, 30, 35, 50, 55, 70, 75]);
        assert_eq!(in_memory[2], row(15, 2, 3));
        // Two rows a chunk: five chunks spilled, merged to the same file.
        let (spilled, sorted) = sorted_rows(&inputs, 2);
        assert_eq!(sorted.spilled, 5);
        assert_eq!(spilled, in_memory);
        // More chunks than are merged at once: merged in rounds, the same order.
        let many: String = (0..WAYS as i64 + 40)
            .rev()
            .map(|t| row(t, 1, 1) + "\n")
            .collect();
        let (rows, sorted) = sorted_rows(&[(many.as_str(), 0)], 1);
        assert_eq!(sorted.spilled, WAYS + 40);
        let expected: Vec<String> = (0..WAYS as i64 + 40).map(|t| row(t, 1, 1)).collect();
        assert_eq!(rows, expected);
    }

    #[test]
    fn ties_keep_shard_and_connection_order() {
        let a = [row(10, 2, 1), row(10, 1, 4), row(10, 1, 2)].join("\n") + "\n";
        let (rows, _) = sorted_rows(&[(a.as_str(), 0)], 1);
        assert_eq!(rows, [row(10, 1, 2), row(10, 1, 4), row(10, 2, 1)]);
    }
}
