//! The run as it goes, for `--dashboard`: each worker hands over every interval it closes (the
//! same interval its timeline keeps for the report, a copy of it), and the live view and
//! `/metrics` are made from what was handed over. No second bookkeeping: the figures on the
//! live page are the report's intervals, added up.
//!
//! One [`Live`] per process (the dashboard serves one page), holding the runs of the process in
//! order (one; the rounds of `--vs`; a capacity search's steps): the last one is the one the
//! workers of a starting run feed. A worker takes its [`Feed`] once, when its timeline starts,
//! as its recorder's [`Sink`], and sends a copy of each interval it closes (once a second by
//! default) down a channel: it never takes a lock the dashboard holds while it renders.
//! Whoever locks the state next (the dashboard's thread, the main thread) adds what was sent
//! first. Each kind's part of a run (its intervals and their sums) is in its folder
//! (`stats::http::live`, `stats::mahjong::live`, `stats::ws::live`); [`LiveData`] is the one
//! dispatcher over them.
//!
//! When a run ends, its intervals are replaced by the run's merged timeline (every interval,
//! the last open one and the never-sent requests included), so the totals the page and
//! `/metrics` show then are the JSON's exactly.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::{mpsc, Arc, Mutex, MutexGuard, OnceLock};

use super::sink::{Kind, Sink};
use super::timeline::ServerSample;
use super::{http, mahjong, ws};

/// What names a run on the dashboard and in `/metrics`' labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunLabels {
    /// `--run-id`, or the one derived from the command line (the shards of one run share it).
    pub run_id: String,
    /// `--label` (default: the URL).
    pub label: String,
    /// `--shard I/N`: `I/N`, when the run is a part.
    pub shard: Option<String>,
}

/// The dispatcher: what kind of run, and its intervals. The one place in the live state that
/// names every kind: a new kind is its `live` in its folder, an arm here and its [`Arm`].
#[derive(Debug, Clone)]
pub enum LiveData {
    Http(Box<http::live::Data>),
    Mahjong(Box<mahjong::live::Data>),
    Ws(Box<ws::live::Data>),
}

/// Where a kind's part is in [`LiveData`].
pub trait Arm: Kind + Sized {
    fn arm(data: &mut LiveData) -> Option<&mut Self>;
    /// A run of this kind, as the dispatcher holds it.
    fn into_data(self) -> LiveData;
}

impl Arm for http::live::Data {
    fn arm(data: &mut LiveData) -> Option<&mut Self> {
        match data {
            LiveData::Http(h) => Some(h),
            _ => None,
        }
    }
    fn into_data(self) -> LiveData {
        LiveData::Http(Box::new(self))
    }
}

impl Arm for mahjong::live::Data {
    fn arm(data: &mut LiveData) -> Option<&mut Self> {
        match data {
            LiveData::Mahjong(m) => Some(m),
            _ => None,
        }
    }
    fn into_data(self) -> LiveData {
        LiveData::Mahjong(Box::new(self))
    }
}

impl Arm for ws::live::Data {
    fn arm(data: &mut LiveData) -> Option<&mut Self> {
        match data {
            LiveData::Ws(w) => Some(w),
            _ => None,
        }
    }
    fn into_data(self) -> LiveData {
        LiveData::Ws(Box::new(self))
    }
}

impl LiveData {
    /// The last index any worker handed over.
    fn last_index(&self) -> Option<u64> {
        match self {
            LiveData::Http(h) => h.last_index(),
            LiveData::Mahjong(m) => m.last_index(),
            LiveData::Ws(w) => w.last_index(),
        }
    }
}

/// One run of the process, as the dashboard shows it.
#[derive(Debug, Clone)]
pub struct LiveRun {
    pub labels: RunLabels,
    /// Its worker threads: an interval is whole once each has handed it over.
    pub workers: usize,
    /// One interval, ns.
    pub length: u64,
    /// When it started (Unix ns), once it has.
    pub start_unix_ns: Option<u64>,
    /// The same instant on CLOCK_MONOTONIC, where its intervals count from.
    pub t0: Option<u64>,
    /// `--server-pid`'s samples so far.
    pub server: Vec<ServerSample>,
    /// Ended: its intervals are the merged timeline's.
    pub ended: bool,
    pub data: LiveData,
}

impl LiveRun {
    /// How many of `intervals` are whole, from the first on, stopping at the first that is not.
    pub fn whole<T>(&self, intervals: &BTreeMap<u64, (usize, T)>) -> usize {
        intervals
            .iter()
            .enumerate()
            .take_while(|(k, (index, (handed, _)))| {
                **index == *k as u64 && self.is_whole(**index, *handed)
            })
            .count()
    }

    /// Whether interval `index` is whole: every worker handed it over, or a later one was
    /// handed over two intervals on (a worker that ended early, or hangs, holds none back).
    pub fn is_whole(&self, index: u64, handed: usize) -> bool {
        if self.ended || handed >= self.workers {
            return true;
        }
        self.data.last_index().is_some_and(|last| last >= index + 2)
    }
}

/// Everything the dashboard shows, behind one lock.
#[derive(Debug, Default)]
pub struct State {
    /// The process's runs, in order; the last is the current one.
    pub runs: Vec<LiveRun>,
    /// Bumped at every change: what was rendered for an older one is stale.
    pub version: u64,
    /// The final page (the same as `--html`'s), once the command has made it.
    pub final_page: Option<String>,
    /// The command ended: nothing more will change.
    pub done: bool,
    /// Lines about the command as a whole that the page shows above the run (a capacity
    /// search's standing, say), newest last.
    pub standing: Vec<String>,
    /// A capacity search's step and verdicts so far.
    pub capacity: Option<CapacityLive>,
    /// A capacity search's charts so far (the report's, of the steps judged), as HTML.
    pub search_charts: Option<String>,
}

/// A capacity search as it goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapacityLive {
    /// `requests/sec` or `players`.
    pub unit: &'static str,
    /// The load of the step now running.
    pub load: u64,
    /// Steps judged so far by class (`held`, `broke`, `generator-limited`, …).
    pub verdicts: BTreeMap<&'static str, u64>,
}

/// The process's live state.
#[derive(Debug)]
pub struct Live {
    state: Mutex<State>,
    /// What the workers hand over, waiting for the next [`Live::lock`]: a worker only sends
    /// (no lock it could wait on while the dashboard renders, on its requests' path).
    handed: Mutex<mpsc::Receiver<Handed>>,
    hand: mpsc::Sender<Handed>,
}

impl Default for Live {
    fn default() -> Self {
        let (hand, handed) = mpsc::channel();
        Live {
            state: Mutex::default(),
            handed: Mutex::new(handed),
            hand,
        }
    }
}

/// An interval a worker closed, to add to its run's part of the state.
type Handed = Box<dyn FnOnce(&mut State) + Send>;

impl State {
    /// The run the page shows, and the places of the runs it is made of: the current run; for
    /// a mahjong session, every session of the process still playing (a search over players
    /// seats each step's new tables as a session of their own while the earlier ones play on),
    /// added up interval by interval on the earliest one's clock.
    pub fn shown(&self) -> Option<(Vec<usize>, Cow<'_, LiveRun>)> {
        let current = self.runs.len().checked_sub(1)?;
        let last = &self.runs[current];
        if !matches!(last.data, LiveData::Mahjong(_)) {
            return Some((vec![current], Cow::Borrowed(last)));
        }
        let playing: Vec<usize> = (0..self.runs.len())
            .filter(|&k| {
                let run = &self.runs[k];
                matches!(run.data, LiveData::Mahjong(_))
                    && !run.ended
                    && (k == current || run.start_unix_ns.is_some())
            })
            .collect();
        match playing.as_slice() {
            [] => Some((vec![current], Cow::Borrowed(last))),
            [one] => Some((vec![*one], Cow::Borrowed(&self.runs[*one]))),
            many => {
                let sessions: Vec<&LiveRun> = many.iter().map(|&k| &self.runs[k]).collect();
                Some((playing.clone(), Cow::Owned(together(&sessions))))
            }
        }
    }

    /// Kind `K`'s part of run `run`, if it is of that kind.
    fn part<K: Arm>(&mut self, run: usize) -> Option<&mut K> {
        self.runs.get_mut(run).and_then(|r| K::arm(&mut r.data))
    }
}

/// Mahjong sessions playing side by side as one: their workers, and each interval the sum of
/// theirs at the same time (a session's interval `k` is the earliest's `k` plus the whole
/// intervals between their starts). An interval before a session began counts as handed over
/// by its workers: they had nothing to hand.
fn together(sessions: &[&LiveRun]) -> LiveRun {
    let first = sessions
        .iter()
        .min_by_key(|run| run.start_unix_ns.unwrap_or(u64::MAX))
        .copied()
        .unwrap_or(sessions[0]);
    let start = first.start_unix_ns.unwrap_or_default();
    let length = first.length.max(1);
    let mut sum = mahjong::live::Data::default();
    let mut offsets = Vec::new();
    for run in sessions {
        let LiveData::Mahjong(m) = &run.data else {
            continue;
        };
        let since = run.start_unix_ns.unwrap_or(start).saturating_sub(start);
        let offset = (since + length / 2) / length;
        offsets.push((offset, run.workers));
        sum.add_at(offset, m);
    }
    sum.before_began(&offsets);
    LiveRun {
        labels: first.labels.clone(),
        workers: sessions.iter().map(|run| run.workers).sum(),
        length: first.length,
        start_unix_ns: first.start_unix_ns,
        t0: first.t0,
        server: Vec::new(),
        ended: false,
        data: LiveData::Mahjong(Box::new(sum)),
    }
}

static LIVE: OnceLock<Arc<Live>> = OnceLock::new();

/// Turns the live view on for this process (`--dashboard`); the same one on a second call.
pub fn enable() -> Arc<Live> {
    Arc::clone(LIVE.get_or_init(Arc::default))
}

/// The process's live state, when `--dashboard` turned it on.
pub fn get() -> Option<&'static Arc<Live>> {
    LIVE.get()
}

/// Where a worker hands over the intervals it closes, of kind `K`: one run of the process.
pub struct Feed<K> {
    live: Arc<Live>,
    run: usize,
    kind: PhantomData<fn() -> K>,
}

impl<K> std::fmt::Debug for Feed<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed").field("run", &self.run).finish()
    }
}

impl<K: Arm> Sink<K::Interval> for Feed<K> {
    /// Hands over an interval a worker closed (a send: it never waits).
    fn closed(&self, index: u64, interval: &K::Interval) {
        let run = self.run;
        let interval = interval.clone();
        let _ = self.live.hand.send(Box::new(move |state: &mut State| {
            state.version += 1;
            if let Some(part) = state.part::<K>(run) {
                part.take(index, &interval);
            }
        }));
    }

    /// This run ended with these intervals (the merged timeline's, all of them).
    fn ended(&self, intervals: &BTreeMap<u64, K::Interval>) {
        let mut state = self.live.lock();
        state.version += 1;
        if let Some(run) = state.runs.get_mut(self.run) {
            run.ended = true;
            let workers = run.workers;
            if let Some(part) = K::arm(&mut run.data) {
                part.end(workers, intervals);
            }
        }
    }
}

impl Live {
    /// The state, to read or change (a poisoned lock is taken as it is: the dashboard only
    /// shows it).
    /// What the workers handed over since the last lock is added first.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let handed = self.handed.lock().unwrap_or_else(|e| e.into_inner());
        while let Ok(take) = handed.try_recv() {
            take(&mut state);
        }
        drop(handed);
        state
    }

    /// A new run of the process, of kind `K`, the current one from now on.
    pub fn begin<K: Arm>(self: &Arc<Self>, run: LiveRun) -> Feed<K> {
        let mut state = self.lock();
        state.runs.push(run);
        state.version += 1;
        Feed {
            live: Arc::clone(self),
            run: state.runs.len() - 1,
            kind: PhantomData,
        }
    }

    /// The current run's feed, for a worker of kind `K` whose timeline starts (none before
    /// any run).
    pub fn current<K: Arm>(self: &Arc<Self>) -> Option<Feed<K>> {
        let state = self.lock();
        let run = state.runs.len().checked_sub(1)?;
        Some(Feed {
            live: Arc::clone(self),
            run,
            kind: PhantomData,
        })
    }

    /// The current run started, at `unix_ns` (`t0` on CLOCK_MONOTONIC).
    pub fn started(&self, unix_ns: u64, t0: u64) {
        let mut state = self.lock();
        state.version += 1;
        if let Some(run) = state.runs.last_mut() {
            run.start_unix_ns.get_or_insert(unix_ns);
            run.t0.get_or_insert(t0);
        }
    }

    /// A `--server-pid` sample, taken during the current run.
    pub fn server_sample(&self, sample: ServerSample) {
        let mut state = self.lock();
        state.version += 1;
        if let Some(run) = state.runs.last_mut() {
            run.server.push(sample);
        }
    }

    /// A capacity search's step at `load` (in `unit`) begins.
    pub fn step_begins(&self, unit: &'static str, load: u64) {
        let mut state = self.lock();
        state.version += 1;
        let capacity = state.capacity.get_or_insert_with(CapacityLive::default);
        capacity.unit = unit;
        capacity.load = load;
    }

    /// A capacity search's charts of the steps judged so far.
    pub fn search_charts(&self, html: String) {
        let mut state = self.lock();
        state.version += 1;
        state.search_charts = Some(html);
    }

    /// The step was judged: its class (`held`, `broke`, …) and its line on the page.
    pub fn step_judged(&self, class: &'static str, line: String) {
        let mut state = self.lock();
        state.version += 1;
        let capacity = state.capacity.get_or_insert_with(CapacityLive::default);
        *capacity.verdicts.entry(class).or_default() += 1;
        state.standing.push(line);
    }

    /// The command made its final page; nothing more will change after [`Live::done`].
    pub fn final_page(&self, page: String) {
        let mut state = self.lock();
        state.version += 1;
        state.final_page = Some(page);
    }

    /// The command ended.
    pub fn done(&self) {
        let mut state = self.lock();
        state.version += 1;
        state.done = true;
    }
}

/// The sink a starting worker of kind `K` hands its intervals to, when `--dashboard` is on.
pub fn sink<K: Arm>() -> Option<Arc<dyn Sink<K::Interval>>> {
    let feed = get().and_then(Live::current::<K>)?;
    Some(Arc::new(feed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;

    fn run(workers: usize) -> LiveRun {
        LiveRun {
            labels: RunLabels::default(),
            workers,
            length: 1_000_000_000,
            start_unix_ns: None,
            t0: None,
            server: Vec::new(),
            ended: false,
            data: LiveData::Http(Box::new(http::live::Data {
                rate: Some(100),
                ..Default::default()
            })),
        }
    }

    fn interval(completed: u64, latency_us: u64) -> http::Interval {
        let mut h = new_histogram();
        for _ in 0..completed {
            h.record(latency_us).unwrap();
        }
        http::Interval {
            sent: completed,
            completed,
            latency: Packed::pack(&h),
            ..http::Interval::default()
        }
    }

    #[test]
    fn intervals_handed_over_add_up_and_are_whole_once_every_worker_gave_its_own() {
        let live = Arc::new(Live::default());
        let feed: Feed<http::live::Data> = live.begin(run(2));
        feed.closed(0, &interval(10, 100));
        {
            let state = live.lock();
            let r = &state.runs[0];
            assert!(!r.is_whole(0, 1));
        }
        feed.closed(0, &interval(5, 300));
        feed.closed(1, &interval(7, 100));
        let state = live.lock();
        let r = &state.runs[0];
        let LiveData::Http(h) = &r.data else {
            panic!("an HTTP run")
        };
        assert_eq!(h.intervals[&0].0, 2);
        assert!(r.is_whole(0, 2));
        assert!(!r.is_whole(1, 1));
        assert_eq!(h.intervals[&0].1.completed, 15);
        assert_eq!(h.totals.counts.completed, 22);
        assert_eq!(h.totals.latency.len(), 22);
        assert_eq!(h.totals.latency.max(), 300);
    }

    fn session(workers: usize, start_s: u64) -> LiveRun {
        LiveRun {
            start_unix_ns: Some(start_s * 1_000_000_000 + 300_000_000),
            data: LiveData::Mahjong(Box::default()),
            ..run(workers)
        }
    }

    fn playing(players: u64, games: u64) -> mahjong::Interval {
        mahjong::Interval {
            players: mahjong::Players {
                logged_in: players,
                connected: players,
                playing: players,
            },
            games_started: games,
            ..mahjong::Interval::default()
        }
    }

    #[test]
    fn sessions_playing_side_by_side_are_shown_as_one_on_the_earliest_clock() {
        let live = Arc::new(Live::default());
        let first: Feed<mahjong::live::Data> = live.begin(session(1, 100));
        first.closed(0, &playing(4, 1));
        first.closed(1, &playing(4, 0));
        first.closed(2, &playing(4, 0));
        // The second step's tables began two intervals later, on a thread of their own.
        let second: Feed<mahjong::live::Data> = live.begin(session(1, 102));
        second.closed(0, &playing(8, 2));
        let state = live.lock();
        let (places, shown) = state.shown().expect("a run");
        assert_eq!(places, vec![0, 1]);
        let LiveData::Mahjong(m) = &shown.data else {
            panic!("a session")
        };
        assert_eq!(shown.workers, 2);
        // Before the second began, its worker had nothing to hand over: those are whole.
        assert!(shown.is_whole(1, m.intervals[&1].0));
        assert_eq!(m.intervals[&1].1.players.playing, 4);
        assert_eq!(m.intervals[&2].0, 2);
        assert_eq!(m.intervals[&2].1.players.playing, 12);
        assert_eq!(m.totals.counts.games_started, 3);
        drop(state);
        // Once the first logged out, the second alone is shown.
        first.ended(&BTreeMap::new());
        let state = live.lock();
        let (places, shown) = state.shown().expect("a run");
        assert_eq!(places, vec![1]);
        assert!(matches!(shown, Cow::Borrowed(_)));
    }

    #[test]
    fn the_end_replaces_what_was_handed_over_with_the_merged_timeline() {
        let live = Arc::new(Live::default());
        let feed: Feed<http::live::Data> = live.begin(run(2));
        feed.closed(0, &interval(10, 100));
        feed.ended(&[(0, interval(12, 100)), (1, interval(3, 200))].into());
        let state = live.lock();
        let r = &state.runs[0];
        let LiveData::Http(h) = &r.data else {
            panic!("an HTTP run")
        };
        assert!(r.ended && r.is_whole(1, 0));
        assert_eq!(h.totals.counts.completed, 15);
        assert_eq!(h.totals.latency.len(), 15);
    }
}
