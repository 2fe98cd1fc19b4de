//! The run as it goes, for `--dashboard`: each worker hands over every interval it closes (the
//! same interval its timeline keeps for the report, a copy of it), and the live view and
//! `/metrics` are made from what was handed over. No second bookkeeping: the figures on the
//! live page are the report's intervals, added up.
//!
//! One [`Live`] per process (the dashboard serves one page), holding the runs of the process in
//! order (one; the rounds of `--vs`; a capacity search's steps): the last one is the one the
//! workers of a starting run feed. A worker takes its [`Feed`] once, when its timeline starts,
//! and sends a copy of each interval it closes (once a second by default) down a channel: it
//! never takes a lock the dashboard holds while it renders. Whoever locks the state next (the
//! dashboard's thread, the main thread) adds what was sent first.
//!
//! When a run ends, its intervals are replaced by the run's merged timeline (every interval,
//! the last open one and the never-sent requests included), so the totals the page and
//! `/metrics` show then are the JSON's exactly.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex, MutexGuard, OnceLock};

use hdrhistogram::Histogram;

use super::new_histogram;
use super::timeline::{HttpInterval, MahjongInterval, ServerSample};

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

/// An HTTP run's intervals handed over so far, and their sums.
#[derive(Debug, Clone)]
pub struct HttpLive {
    /// The target rate (`-R`), when paced.
    pub rate: Option<u64>,
    /// By index: how many workers handed it over, and their sum.
    pub intervals: BTreeMap<u64, (usize, HttpInterval)>,
    /// Every interval handed over, added up (counts and histograms).
    pub totals: HttpTotals,
}

/// The sums of an HTTP run's intervals.
#[derive(Debug, Clone)]
pub struct HttpTotals {
    /// The counts (the interval's histograms left empty: they are below, unpacked).
    pub counts: HttpInterval,
    pub latency: Histogram<u64>,
    pub server_latency: Histogram<u64>,
    pub send_lateness: Histogram<u64>,
}

impl Default for HttpTotals {
    fn default() -> Self {
        HttpTotals {
            counts: HttpInterval::default(),
            latency: new_histogram(),
            server_latency: new_histogram(),
            send_lateness: new_histogram(),
        }
    }
}

impl HttpTotals {
    fn add(&mut self, interval: &HttpInterval) {
        let counts = HttpInterval {
            latency: Default::default(),
            send_lateness: Default::default(),
            server_latency: Default::default(),
            own_delay: Default::default(),
            ..interval.clone()
        };
        self.counts.add(&counts);
        let _ = self.latency.add(interval.latency.unpack());
        let _ = self.server_latency.add(interval.server_latency.unpack());
        let _ = self.send_lateness.add(interval.send_lateness.unpack());
    }
}

/// A mahjong session's intervals handed over so far.
#[derive(Debug, Clone, Default)]
pub struct MahjongLive {
    /// By index: how many workers handed it over, and their sum.
    pub intervals: BTreeMap<u64, (usize, MahjongInterval)>,
    /// Every interval handed over, added up.
    pub totals: MahjongTotalsLive,
}

/// The sums of a session's intervals.
#[derive(Debug, Clone)]
pub struct MahjongTotalsLive {
    /// The counts (the players are the last interval's sum; the histograms are below).
    pub counts: MahjongInterval,
    pub draw_overshoot: Histogram<u64>,
    pub deal_overshoot: Histogram<u64>,
    pub reply_lateness: Histogram<u64>,
}

impl Default for MahjongTotalsLive {
    fn default() -> Self {
        MahjongTotalsLive {
            counts: MahjongInterval::default(),
            draw_overshoot: new_histogram(),
            deal_overshoot: new_histogram(),
            reply_lateness: new_histogram(),
        }
    }
}

impl MahjongTotalsLive {
    /// Adds another session's sums.
    fn merge(&mut self, other: &MahjongTotalsLive) {
        self.counts.add(&other.counts);
        let _ = self.draw_overshoot.add(&other.draw_overshoot);
        let _ = self.deal_overshoot.add(&other.deal_overshoot);
        let _ = self.reply_lateness.add(&other.reply_lateness);
    }

    fn add(&mut self, interval: &MahjongInterval) {
        let counts = MahjongInterval {
            draw_overshoot: Default::default(),
            deal_overshoot: Default::default(),
            reply_lateness: Default::default(),
            ..interval.clone()
        };
        self.counts.add(&counts);
        let _ = self.draw_overshoot.add(interval.draw_overshoot.unpack());
        let _ = self.deal_overshoot.add(interval.deal_overshoot.unpack());
        let _ = self.reply_lateness.add(interval.reply_lateness.unpack());
    }
}

/// What kind of run, and its intervals.
#[derive(Debug, Clone)]
pub enum LiveData {
    Http(Box<HttpLive>),
    Mahjong(Box<MahjongLive>),
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
        let last = match &self.data {
            LiveData::Http(h) => h.intervals.keys().next_back(),
            LiveData::Mahjong(m) => m.intervals.keys().next_back(),
        };
        last.is_some_and(|&last| last >= index + 2)
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

/// An interval a worker closed, for run `run` of the process.
#[derive(Debug)]
enum Handed {
    Http(usize, u64, Box<HttpInterval>),
    Mahjong(usize, u64, Box<MahjongInterval>),
}

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

    /// Adds what a worker handed over.
    fn take(&mut self, handed: Handed) {
        self.version += 1;
        match handed {
            Handed::Http(run, index, interval) => {
                if let Some(LiveData::Http(h)) = self.runs.get_mut(run).map(|r| &mut r.data) {
                    let (count, sum) = h.intervals.entry(index).or_insert_with(Default::default);
                    *count += 1;
                    sum.add(&interval);
                    h.totals.add(&interval);
                }
            }
            Handed::Mahjong(run, index, interval) => {
                if let Some(LiveData::Mahjong(m)) = self.runs.get_mut(run).map(|r| &mut r.data) {
                    let (count, sum) = m.intervals.entry(index).or_insert_with(Default::default);
                    *count += 1;
                    sum.add(&interval);
                    m.totals.add(&interval);
                }
            }
        }
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
    let mut sum = MahjongLive::default();
    let mut offsets = Vec::new();
    for run in sessions {
        let LiveData::Mahjong(m) = &run.data else {
            continue;
        };
        let since = run.start_unix_ns.unwrap_or(start).saturating_sub(start);
        let offset = (since + length / 2) / length;
        offsets.push((offset, run.workers));
        for (k, (handed, interval)) in &m.intervals {
            let (count, total) = sum.intervals.entry(offset + k).or_default();
            *count += handed;
            total.add(interval);
        }
        sum.totals.merge(&m.totals);
    }
    for (index, (count, _)) in sum.intervals.iter_mut() {
        *count += offsets
            .iter()
            .filter(|(offset, _)| offset > index)
            .map(|(_, workers)| workers)
            .sum::<usize>();
    }
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

/// Where a worker hands over the intervals it closes: one run of the process.
#[derive(Debug, Clone)]
pub struct Feed {
    live: Arc<Live>,
    run: usize,
}

impl Feed {
    /// Hands over an interval an HTTP worker closed (a send: it never waits).
    pub fn http(&self, index: u64, interval: &HttpInterval) {
        let _ = self
            .live
            .hand
            .send(Handed::Http(self.run, index, Box::new(interval.clone())));
    }

    /// Hands over an interval a mahjong worker closed (a send: it never waits).
    pub fn mahjong(&self, index: u64, interval: &MahjongInterval) {
        let _ = self
            .live
            .hand
            .send(Handed::Mahjong(self.run, index, Box::new(interval.clone())));
    }

    /// This HTTP run ended with these intervals (the merged timeline's, all of them).
    pub fn end_http(&self, intervals: &[HttpInterval]) {
        let mut state = self.live.lock();
        state.version += 1;
        if let Some(run) = state.runs.get_mut(self.run) {
            run.ended = true;
            if let LiveData::Http(h) = &mut run.data {
                h.intervals.clear();
                h.totals = HttpTotals::default();
                for (k, interval) in intervals.iter().enumerate() {
                    h.intervals
                        .insert(k as u64, (run.workers, interval.clone()));
                    h.totals.add(interval);
                }
            }
        }
    }

    /// This mahjong session ended with these intervals (the merged timeline's).
    pub fn end_mahjong(&self, intervals: &BTreeMap<u64, MahjongInterval>) {
        let mut state = self.live.lock();
        state.version += 1;
        if let Some(run) = state.runs.get_mut(self.run) {
            run.ended = true;
            if let LiveData::Mahjong(m) = &mut run.data {
                m.intervals = intervals
                    .iter()
                    .map(|(&k, interval)| (k, (run.workers, interval.clone())))
                    .collect();
                m.totals = MahjongTotalsLive::default();
                for interval in intervals.values() {
                    m.totals.add(interval);
                }
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
        while let Ok(interval) = handed.try_recv() {
            state.take(interval);
        }
        drop(handed);
        state
    }

    /// A new run of the process, the current one from now on.
    pub fn begin(self: &Arc<Self>, run: LiveRun) -> Feed {
        let mut state = self.lock();
        state.runs.push(run);
        state.version += 1;
        Feed {
            live: Arc::clone(self),
            run: state.runs.len() - 1,
        }
    }

    /// The current run's feed, for a worker whose timeline starts (none before any run).
    pub fn current(self: &Arc<Self>) -> Option<Feed> {
        let state = self.lock();
        let run = state.runs.len().checked_sub(1)?;
        Some(Feed {
            live: Arc::clone(self),
            run,
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

/// The feed a starting worker hands its intervals to, when `--dashboard` is on.
pub fn feed() -> Option<Feed> {
    get().and_then(Live::current)
}

#[cfg(test)]
mod tests {
    use super::*;
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
            data: LiveData::Http(Box::new(HttpLive {
                rate: Some(100),
                intervals: BTreeMap::new(),
                totals: HttpTotals::default(),
            })),
        }
    }

    fn interval(completed: u64, latency_us: u64) -> HttpInterval {
        let mut h = new_histogram();
        for _ in 0..completed {
            h.record(latency_us).unwrap();
        }
        HttpInterval {
            sent: completed,
            completed,
            latency: Packed::pack(&h),
            ..HttpInterval::default()
        }
    }

    #[test]
    fn intervals_handed_over_add_up_and_are_whole_once_every_worker_gave_its_own() {
        let live = Arc::new(Live::default());
        let feed = live.begin(run(2));
        feed.http(0, &interval(10, 100));
        {
            let state = live.lock();
            let r = &state.runs[0];
            assert!(!r.is_whole(0, 1));
        }
        feed.http(0, &interval(5, 300));
        feed.http(1, &interval(7, 100));
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

    fn playing(players: u64, games: u64) -> MahjongInterval {
        MahjongInterval {
            players: crate::stats::timeline::Players {
                logged_in: players,
                connected: players,
                playing: players,
            },
            games_started: games,
            ..MahjongInterval::default()
        }
    }

    #[test]
    fn sessions_playing_side_by_side_are_shown_as_one_on_the_earliest_clock() {
        let live = Arc::new(Live::default());
        let first = live.begin(session(1, 100));
        first.mahjong(0, &playing(4, 1));
        first.mahjong(1, &playing(4, 0));
        first.mahjong(2, &playing(4, 0));
        // The second step's tables began two intervals later, on a thread of their own.
        let second = live.begin(session(1, 102));
        second.mahjong(0, &playing(8, 2));
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
        first.end_mahjong(&BTreeMap::new());
        let state = live.lock();
        let (places, shown) = state.shown().expect("a run");
        assert_eq!(places, vec![1]);
        assert!(matches!(shown, Cow::Borrowed(_)));
    }

    #[test]
    fn the_end_replaces_what_was_handed_over_with_the_merged_timeline() {
        let live = Arc::new(Live::default());
        let feed = live.begin(run(2));
        feed.http(0, &interval(10, 100));
        feed.end_http(&[interval(12, 100), interval(3, 200)]);
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
