//! The `--requests` log as a run writes it: each worker formats its rows into a buffer of its
//! own (integers by `itoa`, no allocation per row) and hands every full buffer to one writer
//! thread, which writes it to the file (through zstd's streaming encoder, level 1, for a `.zst`
//! name). Rows are in the order buffers reach the writer: each worker's in the order its
//! responses completed, workers' buffers interleaved. A write error stops the log, says so in
//! one line, and the run goes on; the log's record then says it is not complete.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{RequestsLog, HEADER, MAGIC};
use crate::stats::http::split::ResponseTimes;

/// A worker's buffer is handed over once it holds this many bytes (some 600 rows).
const BUFFER: usize = 64 * 1024;

/// Full buffers waiting for the writer at most; a worker waits beyond (16 MiB in all).
const QUEUE: usize = 256;

/// How long the writer waits for a worker's last buffer once the run asked it to finish (a
/// worker thread that never ended holds its buffer).
const LAST_WAIT: Duration = Duration::from_secs(2);

/// zstd's level: its fastest. Level 3 cost 19 % more CPU per request than no log at 20,000
/// req/s, level 1 8 %, and its files were no smaller (BENCHMARKS.md).
const ZSTD_LEVEL: i32 = 1;

/// What the run's header line says of it.
#[derive(Debug, Clone)]
pub struct LogHeader {
    pub run_id: String,
    /// This process's shard, 0-based, and the shards in the run.
    pub shard: (usize, usize),
    pub sample: f64,
}

enum Message {
    /// The run's start on the wall clock (Unix ns).
    Start {
        unix_ns: u64,
    },
    Rows(Vec<u8>, u64),
}

/// What the writer thread and the workers share.
#[derive(Debug, Default)]
struct State {
    /// Set once a write failed: the workers stop formatting rows.
    stopped: AtomicBool,
    /// Set when the main thread asks the writer to end: it waits [`LAST_WAIT`] at most for
    /// buffers still on their way.
    closing: AtomicBool,
}

/// The log of one run, on the main thread's side: the writer thread and its channel.
pub struct LogFile {
    path: PathBuf,
    sample: f64,
    shard: u32,
    tx: SyncSender<Message>,
    state: Arc<State>,
    writer: JoinHandle<(u64, Option<String>)>,
}

impl LogFile {
    /// Creates (or truncates) the file at `path` and starts its writer thread. The header is
    /// written once the run starts ([`Rows::start`]).
    pub fn open(path: &Path, header: LogHeader) -> std::io::Result<LogFile> {
        let file = File::create(path)?;
        let out: Box<dyn Write + Send> = if path.extension().is_some_and(|e| e == "zst") {
            Box::new(zstd::stream::write::Encoder::new(file, ZSTD_LEVEL)?.auto_finish())
        } else {
            Box::new(file)
        };
        let (tx, rx) = sync_channel(QUEUE);
        let state = Arc::new(State::default());
        let shown = path.display().to_string();
        let writer = {
            let state = Arc::clone(&state);
            let header = header.clone();
            std::thread::Builder::new()
                .name("tsumo-requests".into())
                .spawn(move || write_all(out, rx, &state, &header, &shown))?
        };
        Ok(LogFile {
            path: path.to_path_buf(),
            sample: header.sample,
            shard: header.shard.0 as u32,
            tx,
            state,
            writer,
        })
    }

    /// One worker's rows, handed to this log.
    pub fn rows(&self) -> Rows {
        Rows {
            buf: Vec::with_capacity(BUFFER + 256),
            rows: 0,
            t0: 0,
            shard: self.shard,
            threshold: threshold(self.sample),
            tx: Some(self.tx.clone()),
            state: Arc::clone(&self.state),
        }
    }

    /// Ends the log once the workers ended (their last buffers in, or [`LAST_WAIT`] passed):
    /// its record for the run's JSON.
    pub fn finish(self) -> RequestsLog {
        let LogFile {
            path,
            sample,
            tx,
            writer,
            state,
            ..
        } = self;
        drop(tx);
        state.closing.store(true, Ordering::Relaxed);
        let (rows, error) = writer
            .join()
            .unwrap_or((0, Some("the log's writer thread panicked".to_string())));
        RequestsLog {
            path: path.display().to_string(),
            rows,
            sample,
            complete: error.is_none(),
            error,
        }
    }
}

/// The writer thread: the header, then every buffer as it comes, until every sender is gone
/// (or [`LAST_WAIT`] after the main thread's is). Returns the rows written and the error that
/// stopped it.
fn write_all(
    mut out: Box<dyn Write + Send>,
    rx: Receiver<Message>,
    state: &State,
    header: &LogHeader,
    path: &str,
) -> (u64, Option<String>) {
    let mut rows = 0;
    let mut error = None;
    let mut started = false;
    let fail = |e: std::io::Error, error: &mut Option<String>| {
        let reason = crate::sys::io_reason(&e);
        eprintln!("tsumo: --requests {path}: {reason}: the log stops here; the run goes on");
        state.stopped.store(true, Ordering::Relaxed);
        *error = Some(reason);
    };
    loop {
        let message = match rx.recv_timeout(LAST_WAIT) {
            Ok(message) => message,
            Err(RecvTimeoutError::Disconnected) => break,
            // A worker that never ended holds its sender: waited for once, then left.
            Err(RecvTimeoutError::Timeout) if state.closing.load(Ordering::Relaxed) => break,
            Err(RecvTimeoutError::Timeout) => continue,
        };
        if error.is_some() {
            continue;
        }
        let written = match message {
            Message::Start { unix_ns } if !started => {
                started = true;
                let line = format!(
                    "{MAGIC}; start_unix_ns={unix_ns}; run_id={}; shard={}/{}; sample={}\n{HEADER}\n",
                    header.run_id, header.shard.0, header.shard.1, header.sample
                );
                out.write_all(line.as_bytes())
            }
            Message::Start { .. } => Ok(()),
            Message::Rows(buf, n) => out.write_all(&buf).map(|()| rows += n),
        };
        if let Err(e) = written {
            fail(e, &mut error);
        }
    }
    if error.is_none() {
        // A run whose workers never started still gets its header line.
        if !started {
            let line = format!(
                "{MAGIC}; start_unix_ns=0; run_id={}; shard={}/{}; sample={}\n{HEADER}\n",
                header.run_id, header.shard.0, header.shard.1, header.sample
            );
            if let Err(e) = out.write_all(line.as_bytes()) {
                fail(e, &mut error);
            }
        }
        if let Err(e) = out.flush() {
            fail(e, &mut error);
        }
    }
    // The zstd encoder finishes its frame as it drops (`auto_finish`); a failure there shows
    // in the flush before.
    drop(out);
    (rows, error)
}

/// The sample's threshold on a 64-bit hash: a request is logged when its hash is below.
fn threshold(sample: f64) -> u64 {
    if sample >= 1.0 {
        u64::MAX
    } else {
        (sample * u64::MAX as f64) as u64
    }
}

/// splitmix64's finaliser: one request's identity to a uniform 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where a request went: its connection (this process's number of it) and stream (HTTP/2 and
/// HTTP/3's id; `None` for HTTP/1.1), and its number on the connection.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub conn: u32,
    pub stream: Option<u64>,
    pub seq: u64,
}

/// One worker's rows on their way to the log.
pub struct Rows {
    buf: Vec<u8>,
    rows: u64,
    /// The run's start, CLOCK_MONOTONIC ns.
    t0: u64,
    shard: u32,
    threshold: u64,
    tx: Option<SyncSender<Message>>,
    state: Arc<State>,
}

impl Rows {
    /// The run started at `t0` (CLOCK_MONOTONIC ns), `unix_ns` on the wall clock.
    pub fn start(&mut self, t0: u64, unix_ns: u64) {
        self.t0 = t0;
        if let Some(tx) = &self.tx {
            let _ = tx.send(Message::Start { unix_ns });
        }
    }

    /// Whether the request at `place` is logged: the same answer for it in every process
    /// (a hash of its shard, connection and number), `sample` of them in all.
    #[inline]
    pub fn wants(&self, place: &Place) -> bool {
        if self.threshold == u64::MAX {
            return self.tx.is_some();
        }
        let id = (u64::from(self.shard) << 56) ^ (u64::from(place.conn) << 36) ^ place.seq;
        self.tx.is_some() && mix(id) < self.threshold
    }

    /// A response: its times, status and bytes.
    pub fn response(
        &mut self,
        place: &Place,
        times: &ResponseTimes,
        status: u16,
        bytes: (u64, u64),
    ) {
        if !self.wants(place) {
            return;
        }
        let corrected = times.received.saturating_sub(times.intended);
        let server = times
            .server_done()
            .saturating_sub(times.intended)
            .min(corrected);
        let own = corrected - server + times.read.saturating_sub(times.received);
        self.row(
            place,
            (times.intended, times.sent, times.received),
            Some(status),
            bytes,
            Some((corrected, server, own)),
            "",
        );
    }

    /// A request that failed (`error`: its kind, as the counters name it) at `ended`.
    pub fn failed(&mut self, place: &Place, intended: u64, sent: u64, ended: u64, error: &str) {
        self.ended(place, (intended, sent, ended), None, error);
    }

    /// A message answered, for a mode that times its own (the WebSocket modes): its intended,
    /// sent and received times, its corrected round trip, the server's share and tsumo's own
    /// delay (ns), and its bytes in and out.
    pub fn answered(
        &mut self,
        place: &Place,
        times: (u64, u64, u64),
        split: (u64, u64, u64),
        bytes: (u64, u64),
    ) {
        if self.wants(place) {
            self.row(place, times, None, bytes, Some(split), "");
        }
    }

    /// A request or message that ended unanswered at `times.2` (`error`: its kind), with the
    /// status (or close code) it ended with, if any.
    pub fn ended(
        &mut self,
        place: &Place,
        times: (u64, u64, u64),
        status: Option<u16>,
        error: &str,
    ) {
        if self.wants(place) {
            self.row(place, times, status, (0, 0), None, error);
        }
    }

    fn row(
        &mut self,
        place: &Place,
        (intended, sent, received): (u64, u64, u64),
        status: Option<u16>,
        (bytes_in, bytes_out): (u64, u64),
        latency: Option<(u64, u64, u64)>,
        error: &str,
    ) {
        let mut n = itoa::Buffer::new();
        let b = &mut self.buf;
        let t0 = self.t0;
        for t in [intended, sent, received] {
            b.extend_from_slice(n.format(t.saturating_sub(t0)).as_bytes());
            b.push(b',');
        }
        b.extend_from_slice(n.format(self.shard).as_bytes());
        b.push(b',');
        b.extend_from_slice(n.format(place.conn).as_bytes());
        b.push(b',');
        if let Some(stream) = place.stream {
            b.extend_from_slice(n.format(stream).as_bytes());
        }
        b.push(b',');
        if let Some(status) = status {
            b.extend_from_slice(n.format(status).as_bytes());
        }
        b.push(b',');
        b.extend_from_slice(n.format(bytes_in).as_bytes());
        b.push(b',');
        b.extend_from_slice(n.format(bytes_out).as_bytes());
        b.push(b',');
        if let Some((corrected, server, own)) = latency {
            for v in [corrected, server, own] {
                b.extend_from_slice(n.format(v).as_bytes());
                b.push(b',');
            }
        } else {
            b.extend_from_slice(b",,,");
        }
        b.extend_from_slice(error.as_bytes());
        b.push(b'\n');
        self.rows += 1;
        if self.buf.len() >= BUFFER {
            self.hand_over();
        }
    }

    /// Hands the buffer to the writer (a new one takes its place); after a write error, drops
    /// the rows and stops logging.
    fn hand_over(&mut self) {
        if self.rows == 0 {
            return;
        }
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(BUFFER + 256));
        let rows = std::mem::take(&mut self.rows);
        let sent = match &self.tx {
            Some(tx) if !self.state.stopped.load(Ordering::Relaxed) => {
                tx.send(Message::Rows(full, rows)).is_ok()
            }
            _ => false,
        };
        if !sent {
            self.tx = None;
        }
    }
}

impl Drop for Rows {
    /// The worker ended: its last rows go too.
    fn drop(&mut self) {
        self.hand_over();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(i: u64) -> ResponseTimes {
        ResponseTimes {
            intended: 1_000 + i,
            free: 0,
            sent: 1_100 + i,
            received: 5_000 + i,
            read: 5_050 + i,
        }
    }

    fn header(sample: f64) -> LogHeader {
        LogHeader {
            run_id: "r1".into(),
            shard: (1, 2),
            sample,
        }
    }

    #[test]
    fn rows_are_written_under_the_header_with_times_from_the_start() {
        let dir = std::env::temp_dir().join(format!("tsumo-reqlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.csv");
        let log = LogFile::open(&path, header(1.0)).unwrap();
        let mut rows = log.rows();
        rows.start(1_000, 42);
        for seq in 0..2000 {
            let place = Place {
                conn: 3,
                stream: None,
                seq,
            };
            rows.response(&place, &times(seq), 200, (120, 40));
        }
        let place = Place {
            conn: 4,
            stream: Some(5),
            seq: 0,
        };
        rows.failed(&place, 1_000, 1_010, 9_000, "timeout");
        drop(rows);
        let record = log.finish();
        assert_eq!((record.rows, record.complete), (2001, true));
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("# tsumo requests v1; start_unix_ns=42; run_id=r1; shard=1/2; sample=1")
        );
        assert_eq!(lines.next(), Some(HEADER));
        assert_eq!(
            lines.next(),
            Some("0,100,4000,1,3,,200,120,40,4000,3900,150,")
        );
        assert_eq!(lines.last(), Some("0,10,8000,1,4,5,,0,0,,,,timeout"));
        assert_eq!(text.lines().count(), 2003);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_full_device_stops_the_log_not_the_caller() {
        let log = LogFile::open(Path::new("/dev/full"), header(1.0)).unwrap();
        let mut rows = log.rows();
        rows.start(1_000, 42);
        for seq in 0..100_000 {
            let place = Place {
                conn: 0,
                stream: None,
                seq,
            };
            rows.response(&place, &times(seq), 200, (1, 1));
        }
        drop(rows);
        let record = log.finish();
        assert!(!record.complete);
        assert!(record.error.is_some_and(|e| e.contains("No space")));
    }

    #[test]
    fn sampling_is_deterministic_and_near_its_fraction() {
        let log = LogFile::open(Path::new("/dev/null"), header(0.1)).unwrap();
        let rows = log.rows();
        let picked = |seq| {
            rows.wants(&Place {
                conn: 7,
                stream: None,
                seq,
            })
        };
        let n = (0..100_000).filter(|&s| picked(s)).count();
        assert!((9_000..11_000).contains(&n), "{n}");
        assert_eq!(
            (0..1000).map(picked).collect::<Vec<_>>(),
            (0..1000).map(picked).collect::<Vec<_>>()
        );
        drop(rows);
        log.finish();
    }
}
