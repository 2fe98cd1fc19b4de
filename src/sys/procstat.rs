//! CPU and memory of the server under test, sampled from `/proc` while a run goes on
//! (`--server-pid PID`).
//!
//! Why: a latency figure means little without knowing whether the server was idle or pinned at
//! 100% of a core, and "how much memory do 4096 players cost" is half of what a sizing test asks.
//! A server is usually a process tree (nginx master + workers, node + its children), so each
//! given PID counts with all its descendants, found again at every sample so that workers started
//! (or restarted) mid-run count too; processes that exit simply stop counting.
//!
//! The sampler is a plain OS thread, not a task: it works the same in HTTP mode and mahjong mode,
//! needs no runtime, and never competes with a worker's event loop.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// What the server processes used during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerUsage {
    /// The PIDs given with `--server-pid` (each counted with its descendants).
    pub pids: Vec<u32>,
    /// Samples taken: one per interval, plus one when sampling stops (unless that last
    /// stretch was under half an interval, which joins the sample before it).
    pub samples: u64,
    /// CPU time of the trees over the whole sampled wall time, in percent of one core
    /// (two busy cores = 200).
    pub cpu_percent_mean: f64,
    /// The highest single-interval CPU figure.
    pub cpu_percent_peak: f64,
    /// Mean over samples of the trees' summed resident set size (VmRSS).
    pub rss_bytes_mean: u64,
    pub rss_bytes_peak: u64,
}

/// One sample: the CPU over the span before it, and the memory at it (for the run's intervals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerSample {
    /// When it was taken (CLOCK_MONOTONIC ns), and the span its CPU figure covers (ns).
    pub at: u64,
    pub span: u64,
    pub cpu_percent: f64,
    pub rss_bytes: u64,
}

/// What is shown each sample as it is taken.
pub type OnSample = Box<dyn FnMut(ServerSample) + Send>;

/// Samples a set of process trees on its own thread until [`Sampler::stop`].
#[derive(Debug)]
pub struct Sampler {
    pids: Vec<u32>,
    stop: mpsc::Sender<()>,
    thread: JoinHandle<(ServerUsage, Vec<ServerSample>)>,
}

impl Sampler {
    /// Checks that every PID exists, takes a baseline and starts sampling every `interval`.
    pub fn start(pids: &[u32], interval: Duration) -> Result<Sampler, Error> {
        Sampler::start_with(pids, interval, None)
    }

    /// [`Sampler::start`], showing each sample to `on_sample` as it is taken (`--dashboard`).
    pub fn start_with(
        pids: &[u32],
        interval: Duration,
        on_sample: Option<OnSample>,
    ) -> Result<Sampler, Error> {
        for &pid in pids {
            if pid == 0 || read_stat(pid).is_none() {
                return Err(Error::Usage(format!("--server-pid {pid}: no such process")));
            }
        }
        let mut state = SampleState::new(pids.to_vec());
        state.on_sample = on_sample;
        state.baseline();
        let interval = interval.max(Duration::from_millis(10));
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("tsumo-procstat".to_string())
            .spawn(move || {
                // An absolute schedule, so sampling cost does not stretch the interval.
                let mut next = Instant::now() + interval;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            state.sample();
                            next += interval;
                        }
                        // Stopped (or the Sampler was dropped): one last sample.
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                            state.last_sample(interval);
                            return (state.usage(), state.series);
                        }
                    }
                }
            })
            .map_err(|e| Error::Thread(e.to_string()))?;
        Ok(Sampler {
            pids: pids.to_vec(),
            stop,
            thread,
        })
    }

    /// Takes a last sample and returns the usage over the whole sampling time.
    pub fn stop(self) -> ServerUsage {
        self.stop_with_samples().0
    }

    /// [`Sampler::stop`], with every sample in order.
    pub fn stop_with_samples(self) -> (ServerUsage, Vec<ServerSample>) {
        let _ = self.stop.send(());
        // Only a panic on the sampling thread lands here: report nothing measured.
        self.thread.join().unwrap_or_else(|_| {
            let usage = ServerUsage {
                pids: self.pids,
                samples: 0,
                cpu_percent_mean: 0.0,
                cpu_percent_peak: 0.0,
                rss_bytes_mean: 0,
                rss_bytes_peak: 0,
            };
            (usage, Vec::new())
        })
    }
}

/// Clock ticks per second, the unit of `utime`/`stime` in `/proc/PID/stat`.
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// Bytes per page, the unit of `/proc/PID/statm`.
fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as u64
    } else {
        4096
    }
}

/// The fields of `/proc/PID/stat` that sampling needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub ppid: u32,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    /// Start time in ticks after boot: with the PID, it names a process even if the PID is reused.
    pub start_time: u64,
}

/// Parses `/proc/PID/stat`. The command name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    // After the name: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    Some(ProcStat {
        ppid: u32::try_from(field(4)?).ok()?,
        cpu_ticks: field(14)? + field(15)?,
        start_time: field(22)?,
    })
}

pub fn read_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Resident set size in bytes (`statm`'s second field is VmRSS in pages).
pub fn read_rss(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

/// Every process's stat, by PID (one pass over `/proc`).
fn all_processes() -> HashMap<u32, ProcStat> {
    let mut all = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return all;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(stat) = read_stat(pid) {
            all.insert(pid, stat);
        }
    }
    all
}

/// The given roots and all their descendants that are alive now.
pub fn process_tree(roots: &[u32]) -> Vec<(u32, ProcStat)> {
    tree_of(roots, &all_processes())
}

fn tree_of(roots: &[u32], all: &HashMap<u32, ProcStat>) -> Vec<(u32, ProcStat)> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, stat) in all {
        children.entry(stat.ppid).or_default().push(pid);
    }
    let mut seen = HashSet::new();
    let mut queue: Vec<u32> = roots
        .iter()
        .copied()
        .filter(|p| all.contains_key(p))
        .collect();
    let mut tree = Vec::new();
    while let Some(pid) = queue.pop() {
        if !seen.insert(pid) {
            continue;
        }
        if let Some(stat) = all.get(&pid) {
            tree.push((pid, *stat));
        }
        queue.extend(children.get(&pid).into_iter().flatten());
    }
    tree
}

/// The tree's CPU counters read again in a window as short as the reads themselves, and the
/// window's midpoint: the time the counters stand at. The discovery scan reads every process's
/// stat, which takes milliseconds, and a busy machine can preempt the sampler anywhere in it;
/// timed by the scans' ends, a counter read early in one scan and late in the next would be
/// divided by a wall time that is not its own. A process gone since the scan, or whose PID now
/// names another (its start time differs), is left out.
fn timed_tree(roots: &[u32]) -> (Vec<(u32, ProcStat)>, Instant) {
    let pids = process_tree(roots);
    let before = Instant::now();
    let tree = pids
        .into_iter()
        .filter_map(|(pid, seen)| {
            read_stat(pid)
                .filter(|now| now.start_time == seen.start_time)
                .map(|now| (pid, now))
        })
        .collect();
    let after = Instant::now();
    (tree, before + after.duration_since(before) / 2)
}

/// Running totals, owned by the sampling thread.
struct SampleState {
    roots: Vec<u32>,
    ticks_per_second: f64,
    /// CPU ticks at the previous sample, by (PID, start time).
    previous: HashMap<(u32, u64), u64>,
    previous_at: Instant,
    started_at: Instant,
    total_ticks: u64,
    samples: u64,
    cpu_peak: f64,
    rss_sum: u128,
    rss_peak: u64,
    /// Every sample, for the run's intervals.
    series: Vec<ServerSample>,
    /// The CPU ticks of the last sample in `series`.
    last_ticks: u64,
    on_sample: Option<OnSample>,
}

impl SampleState {
    fn new(roots: Vec<u32>) -> SampleState {
        let now = Instant::now();
        SampleState {
            roots,
            ticks_per_second: clock_ticks(),
            previous: HashMap::new(),
            previous_at: now,
            started_at: now,
            total_ticks: 0,
            samples: 0,
            cpu_peak: 0.0,
            rss_sum: 0,
            rss_peak: 0,
            series: Vec::new(),
            last_ticks: 0,
            on_sample: None,
        }
    }

    /// Records the CPU time already used, so only what is used from now on counts.
    fn baseline(&mut self) {
        let (tree, at) = timed_tree(&self.roots);
        self.previous = tree
            .into_iter()
            .map(|(pid, stat)| ((pid, stat.start_time), stat.cpu_ticks))
            .collect();
        self.previous_at = at;
        self.started_at = at;
    }

    /// The sample taken when sampling stops. Its stretch since the last sample is often a few
    /// clock ticks (10 ms each), whose CPU figure is mostly rounding: two ticks in 12 ms read
    /// as 160 % of a core. A stretch shorter than half an interval therefore joins the sample
    /// before it, which then covers both; a longer one is a sample of its own.
    fn last_sample(&mut self, interval: Duration) {
        let short = self.previous_at.elapsed() < interval / 2;
        self.take(short && !self.series.is_empty());
    }

    fn sample(&mut self) {
        self.take(false);
        if let (Some(show), Some(last)) = (self.on_sample.as_mut(), self.series.last()) {
            show(*last);
        }
    }

    /// Reads the trees; `fold` adds what they used to the last sample instead of a new one.
    fn take(&mut self, fold: bool) {
        let (tree, now) = timed_tree(&self.roots);
        let mut ticks = 0;
        let mut rss = 0;
        let mut current = HashMap::with_capacity(tree.len());
        for (pid, stat) in tree {
            let key = (pid, stat.start_time);
            // A process not seen before was born since the last sample: all its time is new.
            let before = self.previous.get(&key).copied().unwrap_or(0);
            ticks += stat.cpu_ticks.saturating_sub(before);
            current.insert(key, stat.cpu_ticks);
            rss += read_rss(pid).unwrap_or(0);
        }
        self.total_ticks += ticks;
        self.previous = current;
        let mut span = now.duration_since(self.previous_at).as_nanos() as u64;
        self.previous_at = now;
        self.rss_peak = self.rss_peak.max(rss);
        let folded = match self.series.last_mut() {
            Some(last) if fold => {
                span += last.span;
                self.last_ticks += ticks;
                // The joined sample's memory is the newer reading.
                self.rss_sum = self.rss_sum - u128::from(last.rss_bytes) + u128::from(rss);
                Some(last)
            }
            _ => {
                self.last_ticks = ticks;
                self.samples += 1;
                self.rss_sum += u128::from(rss);
                None
            }
        };
        let mut percent = 0.0;
        if span > 0 {
            percent = self.last_ticks as f64 / self.ticks_per_second / (span as f64 / 1e9) * 100.0;
            self.cpu_peak = self.cpu_peak.max(percent);
        }
        let sample = ServerSample {
            // CLOCK_MONOTONIC, the clock of the run's intervals.
            at: super::wallclock::clock_ns(libc::CLOCK_MONOTONIC),
            span,
            cpu_percent: percent,
            rss_bytes: rss,
        };
        match folded {
            Some(last) => *last = sample,
            None => self.series.push(sample),
        }
    }

    fn usage(&self) -> ServerUsage {
        let wall = self
            .previous_at
            .duration_since(self.started_at)
            .as_secs_f64();
        let cpu_percent_mean = if wall > 0.0 {
            self.total_ticks as f64 / self.ticks_per_second / wall * 100.0
        } else {
            0.0
        };
        ServerUsage {
            pids: self.roots.clone(),
            samples: self.samples,
            cpu_percent_mean,
            cpu_percent_peak: self.cpu_peak,
            rss_bytes_mean: (self.rss_sum / u128::from(self.samples.max(1))) as u64,
            rss_bytes_peak: self.rss_peak,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        let text = "42 (a (b) c) S 7 42 42 0 -1 4194304 99 0 0 0 150 25 0 0 20 0 1 0 380895 \
                    3133440 414 18446744073709551615";
        let stat = parse_stat(text).expect("parses");
        assert_eq!(
            stat,
            ProcStat {
                ppid: 7,
                cpu_ticks: 175,
                start_time: 380895
            }
        );
        assert_eq!(parse_stat("42 (x) S 1"), None);
    }

    #[test]
    fn own_process_is_readable() {
        let me = std::process::id();
        let stat = read_stat(me).expect("own stat");
        assert!(stat.ppid > 0);
        let rss = read_rss(me).expect("own statm");
        assert!(rss > 100 * 1024, "rss {rss}");
        let tree = process_tree(&[me]);
        assert!(tree.iter().any(|(pid, _)| *pid == me));
    }

    #[test]
    fn tree_includes_descendants_once() {
        let stat = |ppid| ProcStat {
            ppid,
            cpu_ticks: 0,
            start_time: 0,
        };
        let all: HashMap<u32, ProcStat> = [
            (1, stat(0)),
            (10, stat(1)),
            (11, stat(10)),
            (12, stat(10)),
            (20, stat(1)),
        ]
        .into_iter()
        .collect();
        let mut pids: Vec<u32> = tree_of(&[10, 11, 99], &all)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        pids.sort_unstable();
        assert_eq!(pids, [10, 11, 12]);
    }

    #[test]
    fn missing_pid_is_one_line_error() {
        // PIDs are below pid_max (at most 2^22), so this one never exists.
        let err = Sampler::start(&[4_000_000_000], Duration::from_secs(1))
            .map(|_| ())
            .expect_err("no such process");
        assert_eq!(err.to_string(), "--server-pid 4000000000: no such process");
    }

    #[test]
    fn a_stop_soon_after_a_sample_joins_it() {
        let mut state = SampleState::new(vec![std::process::id()]);
        state.baseline();
        state.sample();
        state.last_sample(Duration::from_secs(3600));
        assert_eq!((state.samples, state.series.len()), (1, 1));
        let whole = state.previous_at.duration_since(state.started_at);
        assert_eq!(state.series[0].span, whole.as_nanos() as u64);
        assert_eq!(state.last_ticks, state.total_ticks);
        // A stretch of half an interval or more is a sample of its own.
        state.last_sample(Duration::ZERO);
        assert_eq!((state.samples, state.series.len()), (2, 2));
        let spans: u64 = state.series.iter().map(|s| s.span).sum();
        let whole = state.previous_at.duration_since(state.started_at);
        assert_eq!(spans, whole.as_nanos() as u64);
    }

    #[test]
    fn short_run_still_has_a_sample() {
        let sampler =
            Sampler::start(&[std::process::id()], Duration::from_secs(60)).expect("start");
        let usage = sampler.stop();
        assert_eq!(usage.samples, 1);
        assert!(usage.rss_bytes_peak > 0);
        assert_eq!(usage.pids, [std::process::id()]);
    }
}
