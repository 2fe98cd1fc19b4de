//! The run over time as saved: the `intervals` array of an HTTP run's and a mahjong session's
//! JSON, and its merge.
//!
//! Each interval says where it lies twice: `start_s` from the run's start, and `start_unix_ns`
//! on the wall clock (with `--start-at`, interval `k` of every shard is the same wall-clock span).
//! Its histograms are whole, in the run's codec ([`encode_histogram`]), beside the figures read
//! from them, so `tsumo merge` adds shards' intervals exactly: lined up by wall clock, decoded,
//! added, encoded again.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::report::schema::{decode_histogram, encode_histogram};
use crate::stats::hdr;
use crate::stats::http::RunTimeline;
use crate::stats::http::{Errors, Unsent};
use crate::stats::mahjong::{self, Players};
use crate::stats::new_histogram;
use crate::stats::timeline::ServerInterval;

/// One histogram of an interval: the figures, and the whole histogram (base64 HdrHistogram
/// compressed V2, as the run's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalHistogram {
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
    pub histogram: String,
}

impl IntervalHistogram {
    pub fn of(h: &Histogram<u64>) -> IntervalHistogram {
        IntervalHistogram {
            count: h.len(),
            p50: hdr::value_at_percentile(h, 50.0),
            p99: hdr::value_at_percentile(h, 99.0),
            max: hdr::max(h),
            histogram: encode_histogram(h),
        }
    }

    pub fn decode(&self) -> Result<Histogram<u64>, Error> {
        decode_histogram(&self.histogram)
    }
}

/// The server's samples in one interval (`--server-pid`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedServerInterval {
    pub samples: u64,
    /// The mean of the samples' CPU, percent of one core.
    pub cpu_percent: f64,
    /// The highest resident memory sampled, bytes.
    pub rss_bytes: u64,
}

impl SavedServerInterval {
    fn of(server: &ServerInterval) -> SavedServerInterval {
        SavedServerInterval {
            samples: server.samples,
            cpu_percent: server.cpu_percent,
            rss_bytes: server.rss_bytes,
        }
    }

    fn add(&mut self, other: &SavedServerInterval) {
        let samples = self.samples + other.samples;
        if samples > 0 {
            self.cpu_percent = (self.cpu_percent * self.samples as f64
                + other.cpu_percent * other.samples as f64)
                / samples as f64;
        }
        self.samples = samples;
        self.rss_bytes = self.rss_bytes.max(other.rss_bytes);
    }
}

/// Where an interval lies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalSpan {
    /// From the run's start, seconds.
    pub start_s: f64,
    /// On the wall clock, Unix ns.
    pub start_unix_ns: u64,
    /// Its length, seconds (the last one ends with the run).
    pub duration_s: f64,
}

/// One interval of an HTTP run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedInterval {
    #[serde(flatten)]
    pub span: IntervalSpan,
    /// Requests written.
    pub sent: u64,
    /// Complete responses.
    pub completed: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    /// Requests due but never sent (counted at the end: in the last interval).
    pub unsent: Unsent,
    /// Corrected latency, µs.
    pub latency: IntervalHistogram,
    /// Send lateness, µs.
    pub send_lateness: IntervalHistogram,
    /// What the server caused of the corrected latency, µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency: Option<IntervalHistogram>,
    /// tsumo's own delay (send and read) per response, µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_delay: Option<IntervalHistogram>,
    /// The server's CPU and memory (`--server-pid`); absent without samples in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<SavedServerInterval>,
}

/// The spans of `count` intervals of `length` ns from a start, the last one ending at `elapsed_s`.
fn spans(count: usize, length: u64, start_unix_ns: u64, elapsed_s: f64) -> Vec<IntervalSpan> {
    let length_s = length as f64 / 1e9;
    (0..count)
        .map(|k| {
            let start_s = k as f64 * length_s;
            let duration_s = if k + 1 == count {
                (elapsed_s - start_s).clamp(0.0, length_s)
            } else {
                length_s
            };
            IntervalSpan {
                start_s,
                start_unix_ns: start_unix_ns.saturating_add(length.saturating_mul(k as u64)),
                duration_s,
            }
        })
        .collect()
}

/// The whole intervals of a live run already laid out as saved, kept between the dashboard's
/// renders: each is laid out (its histograms encoded) once, not at every render of a long run.
#[derive(Debug)]
pub struct Laid<T> {
    pub intervals: Vec<T>,
}

impl<T> Default for Laid<T> {
    fn default() -> Self {
        Laid {
            intervals: Vec::new(),
        }
    }
}

impl<T> Laid<T> {
    /// How many of the `whole` intervals are laid out already: none once the run `ended` (its
    /// intervals were replaced by the merged timeline's, laid out again, once).
    pub fn kept(&mut self, ended: bool, whole: usize) -> usize {
        if ended || self.intervals.len() > whole {
            self.intervals.clear();
        }
        self.intervals.len()
    }
}

/// An HTTP run's intervals as saved (`elapsed_s`: the run's, where the last one ends).
pub fn http_intervals(timeline: &RunTimeline, elapsed_s: f64) -> Vec<SavedInterval> {
    let spans = spans(
        timeline.intervals.len(),
        timeline.length,
        timeline.start_unix_ns,
        elapsed_s,
    );
    timeline
        .intervals
        .iter()
        .zip(spans)
        .map(|((interval, server), span)| SavedInterval {
            span,
            sent: interval.sent,
            completed: interval.completed,
            bytes_read: interval.bytes_read,
            bytes_written: interval.bytes_written,
            errors: interval.errors,
            unsent: interval.unsent,
            latency: IntervalHistogram::of(&interval.latency.unpack()),
            send_lateness: IntervalHistogram::of(&interval.send_lateness.unpack()),
            server_latency: Some(IntervalHistogram::of(&interval.server_latency.unpack())),
            own_delay: Some(IntervalHistogram::of(&interval.own_delay.unpack())),
            server: server.as_ref().map(SavedServerInterval::of),
        })
        .collect()
}

/// Players at an interval's end, by where they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedPlayers {
    pub logged_in: u64,
    pub connected: u64,
    pub playing: u64,
}

/// Games in an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedIntervalGames {
    pub started: u64,
    pub completed: u64,
    pub aborted: u64,
    /// Games still being played when the session ended (absent in files of older tsumos,
    /// which counted them as aborted).
    #[serde(default)]
    pub cut: u64,
}

/// The server's step overshoot in an interval, by kind of step, µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedOvershoot {
    /// Own-draw steps, beyond the think time.
    pub draw: IntervalHistogram,
    /// Deal steps, beyond the server's 400 ms minimum.
    pub deal: IntervalHistogram,
}

/// One interval of a mahjong session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSessionInterval {
    #[serde(flatten)]
    pub span: IntervalSpan,
    /// At the interval's end.
    pub players: SavedPlayers,
    pub games: SavedIntervalGames,
    /// Hands played, counted once per player, in the interval each ended (or its player
    /// stopped; files of older tsumos counted them all when their game ended).
    pub hands: u64,
    pub messages_in: u64,
    pub messages_out: u64,
    pub errors: u64,
    pub overshoot: SavedOvershoot,
}

/// A session's intervals as saved.
pub fn session_intervals(
    timeline: &mahjong::Timeline,
    start_unix_ns: u64,
    elapsed_s: f64,
) -> Vec<SavedSessionInterval> {
    let Some(length) = timeline.length else {
        return Vec::new();
    };
    let dense = timeline.dense();
    let spans = spans(dense.len(), length, start_unix_ns, elapsed_s);
    dense
        .iter()
        .zip(spans)
        .map(|(interval, span)| {
            let Players {
                logged_in,
                connected,
                playing,
            } = interval.players;
            SavedSessionInterval {
                span,
                players: SavedPlayers {
                    logged_in,
                    connected,
                    playing,
                },
                games: SavedIntervalGames {
                    started: interval.games_started,
                    completed: interval.games_completed,
                    aborted: interval.games_aborted,
                    cut: interval.games_cut,
                },
                hands: interval.hands,
                messages_in: interval.messages_in,
                messages_out: interval.messages_out,
                errors: interval.errors,
                overshoot: SavedOvershoot {
                    draw: IntervalHistogram::of(&interval.draw_overshoot.unpack()),
                    deal: IntervalHistogram::of(&interval.deal_overshoot.unpack()),
                },
            }
        })
        .collect()
}

/// How saved intervals are added: spans aside, every count and histogram.
pub(crate) trait Addable: Clone {
    fn span(&self) -> IntervalSpan;
    fn span_mut(&mut self) -> &mut IntervalSpan;
    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error>;
}

fn add_histograms(
    sum: &mut IntervalHistogram,
    other: &IntervalHistogram,
    source: &str,
) -> Result<(), Error> {
    let read = |h: &IntervalHistogram| {
        h.decode().map_err(|e| Error::File {
            path: source.to_string(),
            reason: format!("an interval's histogram: {e}"),
        })
    };
    let mut total = new_histogram();
    // Same bounds on both sides: adding cannot fail.
    let _ = total.add(read(sum)?);
    let _ = total.add(read(other)?);
    *sum = IntervalHistogram::of(&total);
    Ok(())
}

impl Addable for SavedInterval {
    fn span(&self) -> IntervalSpan {
        self.span
    }

    fn span_mut(&mut self) -> &mut IntervalSpan {
        &mut self.span
    }

    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error> {
        self.sent += other.sent;
        self.completed += other.completed;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.errors.add(&other.errors);
        self.unsent.add(&other.unsent);
        add_histograms(&mut self.latency, &other.latency, source)?;
        add_histograms(&mut self.send_lateness, &other.send_lateness, source)?;
        // Split only where every part has it (older files have none).
        for (sum, other) in [
            (&mut self.server_latency, &other.server_latency),
            (&mut self.own_delay, &other.own_delay),
        ] {
            match (sum.as_mut(), other) {
                (Some(sum), Some(other)) => add_histograms(sum, other, source)?,
                _ => *sum = None,
            }
        }
        match (&mut self.server, &other.server) {
            (Some(sum), Some(server)) => sum.add(server),
            (None, Some(server)) => self.server = Some(server.clone()),
            _ => {}
        }
        Ok(())
    }
}

impl Addable for SavedSessionInterval {
    fn span(&self) -> IntervalSpan {
        self.span
    }

    fn span_mut(&mut self) -> &mut IntervalSpan {
        &mut self.span
    }

    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error> {
        self.players.logged_in += other.players.logged_in;
        self.players.connected += other.players.connected;
        self.players.playing += other.players.playing;
        self.games.started += other.games.started;
        self.games.completed += other.games.completed;
        self.games.aborted += other.games.aborted;
        self.games.cut += other.games.cut;
        self.hands += other.hands;
        self.messages_in += other.messages_in;
        self.messages_out += other.messages_out;
        self.errors += other.errors;
        add_histograms(&mut self.overshoot.draw, &other.overshoot.draw, source)?;
        add_histograms(&mut self.overshoot.deal, &other.overshoot.deal, source)?;
        Ok(())
    }
}

/// The length of a run's intervals, ns: the longest (only a last interval is shorter); `None`
/// without intervals, or with only one (its length says nothing of `--interval`).
pub(crate) fn length_ns<T: Addable>(intervals: &[T]) -> Option<u64> {
    if intervals.len() < 2 {
        return None;
    }
    intervals
        .iter()
        .map(|i| (i.span().duration_s * 1e9).round() as u64)
        .max()
        .filter(|&n| n > 0)
}

/// The common interval of parts whose interval lengths are `lengths` (with their sources): the
/// longest, when every other divides it (1 s and 500 ms: 1 s); else the error naming two parts.
pub fn common_length(lengths: &[(u64, &str)]) -> Result<Option<u64>, Error> {
    let Some(&(longest, long_source)) = lengths.iter().max_by_key(|(n, _)| *n) else {
        return Ok(None);
    };
    for &(n, source) in lengths {
        if longest % n != 0 {
            return Err(Error::Usage(format!(
                "merge: {source} has intervals of {} but {long_source} of {}: their timelines do \
                 not add up (give every part the same --interval, or ones that divide each other)",
                seconds(n),
                seconds(longest)
            )));
        }
    }
    Ok(Some(longest))
}

/// ns as seconds for a message: `1 s`, `0.5 s`.
pub fn seconds(ns: u64) -> String {
    format!("{} s", ns as f64 / 1e9)
}

/// The intervals of runs made side by side, added where they cover the same wall-clock span.
///
/// The interval length is the longest any part has; a part with shorter intervals that divide
/// it is resampled (1 s from 500 ms: two intervals added into one, histograms exactly), and
/// parts whose lengths do not divide are refused. Each interval goes to the slot its wall-clock
/// start falls in (to the nearest of its own length), counted from the earliest start. With
/// `--start-at` every shard's interval `k` starts on the same nanosecond, so they line up
/// exactly; without it, shards that started apart are lined up to the nearest interval. Parts
/// without intervals (files of older tsumos) leave the merge without them.
fn merge_aligned<T: Addable>(parts: &[(&[T], &str)]) -> Result<Vec<T>, Error> {
    if parts.is_empty() || parts.iter().any(|(intervals, _)| intervals.is_empty()) {
        return Ok(Vec::new());
    }
    let lengths: Vec<(u64, &str)> = parts
        .iter()
        .filter_map(|(intervals, source)| Some((length_ns(intervals)?, *source)))
        .collect();
    let length = match common_length(&lengths)? {
        Some(length) => length,
        // One interval each: its longest.
        None => parts
            .iter()
            .filter_map(|(intervals, _)| intervals.first())
            .map(|i| (i.span().duration_s * 1e9).round() as u64)
            .max()
            .unwrap_or(0),
    };
    if length == 0 {
        return Ok(Vec::new());
    }
    let origin = parts
        .iter()
        .filter_map(|(intervals, _)| intervals.first().map(|i| i.span().start_unix_ns))
        .min()
        .unwrap_or(0);
    let mut slots: BTreeMap<u64, T> = BTreeMap::new();
    for (intervals, source) in parts {
        let own = length_ns(intervals).unwrap_or(length);
        let same_origin = intervals.first().map(|i| i.span().start_unix_ns) == Some(origin);
        for interval in *intervals {
            let from_origin = interval.span().start_unix_ns.saturating_sub(origin);
            // To the nearest of its own length: a 500 ms interval at 0.5 s is in slot 0.
            let slot = (from_origin + own / 2) / length;
            let duration_ns = (interval.span().duration_s * 1e9).round() as u64;
            // How far into its slot it reaches (a resampled slot is as long as its parts).
            let reach = (from_origin + duration_ns)
                .saturating_sub(slot * length)
                .min(length)
                .max(duration_ns);
            let reach_s = reach as f64 / 1e9;
            match slots.get_mut(&slot) {
                Some(sum) => {
                    sum.add(interval, source)?;
                    let span = sum.span_mut();
                    span.duration_s = span.duration_s.max(reach_s);
                }
                None => {
                    let mut first = interval.clone();
                    let start_unix_ns = origin + slot * length;
                    // An interval that is its slot keeps its own figures: through ns they
                    // could come back a bit off (a merge of one run is that run exactly).
                    let own_span = same_origin
                        && interval.span().start_unix_ns == start_unix_ns
                        && reach == duration_ns;
                    if !own_span {
                        *first.span_mut() = IntervalSpan {
                            start_s: slot as f64 * length as f64 / 1e9,
                            start_unix_ns,
                            duration_s: reach_s,
                        };
                    }
                    slots.insert(slot, first);
                }
            }
        }
    }
    Ok(slots.into_values().collect())
}

/// The intervals of HTTP runs made side by side (see [`merge_aligned`]).
pub fn merge_http(parts: &[(&[SavedInterval], &str)]) -> Result<Vec<SavedInterval>, Error> {
    merge_aligned(parts)
}

/// The intervals of mahjong sessions made side by side (see [`merge_aligned`]).
pub fn merge_sessions(
    parts: &[(&[SavedSessionInterval], &str)],
) -> Result<Vec<SavedSessionInterval>, Error> {
    merge_aligned(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::http::Interval;
    use crate::stats::timeline::Packed;

    const S: u64 = 1_000_000_000;

    /// A run of `n` intervals starting at `start`, interval k holding `per` latencies from
    /// `base` up, and its whole latency histogram.
    fn run(start: u64, n: usize, base: u64, per: u64) -> (Vec<SavedInterval>, Histogram<u64>) {
        let mut whole = new_histogram();
        let intervals = (0..n)
            .map(|k| {
                let mut h = new_histogram();
                for i in 0..per {
                    h.record(base + 13 * i + 1000 * k as u64).unwrap();
                }
                whole.add(&h).unwrap();
                let interval = Interval {
                    sent: per,
                    completed: per,
                    latency: Packed::pack(&h),
                    ..Interval::default()
                };
                (interval, None)
            })
            .collect();
        let timeline = RunTimeline {
            length: S,
            start_unix_ns: start,
            intervals,
        };
        (http_intervals(&timeline, n as f64 - 0.5), whole)
    }

    /// A last interval whose length in seconds does not survive a trip through ns (2.001468734 s
    /// less 2 s) is merged alone to the last bit.
    #[test]
    fn a_merge_of_one_run_keeps_its_spans_to_the_bit() {
        let (mut saved, _) = run(1_800_000_000 * S, 3, 100, 10);
        saved[2].span.duration_s = 2.001468734 - 2.0;
        assert_ne!(
            ((saved[2].span.duration_s * 1e9).round() as u64) as f64 / 1e9,
            saved[2].span.duration_s
        );
        let merged = merge_http(&[(&saved, "a.json")]).unwrap();
        assert_eq!(merged, saved);
    }

    #[test]
    fn intervals_say_where_they_lie_and_the_last_ends_with_the_run() {
        let (saved, _) = run(1_800_000_000 * S, 3, 100, 10);
        assert_eq!(saved.len(), 3);
        assert_eq!(saved[1].span.start_s, 1.0);
        assert_eq!(saved[1].span.start_unix_ns, 1_800_000_001 * S);
        assert_eq!(saved[1].span.duration_s, 1.0);
        assert_eq!(saved[2].span.duration_s, 0.5);
        assert_eq!(saved[0].latency.count, 10);
        assert!(saved[0].latency.histogram.starts_with("HISTF"));
        let v = serde_json::to_value(&saved[0]).unwrap();
        assert_eq!(v["start_s"], 0.0);
        assert_eq!(v["latency"]["p50"], saved[0].latency.p50);
        assert!(v.get("server").is_none());
    }

    /// Two shards started on the same instant (`--start-at`), one a second longer: their
    /// intervals line up by wall clock and add exactly, interval by interval and in all.
    #[test]
    fn shards_merge_by_wall_clock_exactly() {
        let start = 1_800_000_000 * S;
        let (a, whole_a) = run(start, 4, 100, 50);
        let (b, whole_b) = run(start, 5, 3000, 20);
        let merged = merge_http(&[(&a, "a.json"), (&b, "b.json")]).unwrap();
        assert_eq!(merged.len(), 5);
        assert_eq!(merged[3].completed, 70);
        assert_eq!(merged[4].completed, 20);
        assert_eq!(merged[2].span.start_unix_ns, start + 2 * S);
        let mut sum = new_histogram();
        for (k, interval) in merged.iter().enumerate() {
            let h = interval.latency.decode().unwrap();
            let mut expected = a
                .get(k)
                .map_or_else(new_histogram, |i| i.latency.decode().unwrap());
            if let Some(i) = b.get(k) {
                expected.add(i.latency.decode().unwrap()).unwrap();
            }
            assert_eq!(h, expected, "interval {k}");
            assert_eq!(interval.latency.count, h.len());
            sum.add(&h).unwrap();
        }
        let mut whole = whole_a;
        whole.add(&whole_b).unwrap();
        assert_eq!(sum, whole);
    }

    /// A shard that started 2 s after the other (its own start, no `--start-at`) lines up 2
    /// intervals later.
    #[test]
    fn a_later_shard_lines_up_later() {
        let start = 1_800_000_000 * S;
        let (a, _) = run(start, 3, 100, 10);
        let (b, _) = run(start + 2 * S + 1_000, 3, 100, 7);
        let merged = merge_http(&[(&b, "b.json"), (&a, "a.json")]).unwrap();
        let completed: Vec<u64> = merged.iter().map(|i| i.completed).collect();
        assert_eq!(completed, [10, 10, 17, 7, 7]);
        // A part without intervals (an older file) leaves the merge without them.
        assert!(merge_http(&[(&a, "a.json"), (&[], "old.json")])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn session_intervals_carry_players_games_and_overshoot() {
        let mut timeline = mahjong::Timeline {
            length: Some(S),
            ..mahjong::Timeline::default()
        };
        let mut draw = new_histogram();
        draw.record(1200).unwrap();
        timeline.intervals.insert(
            1,
            crate::stats::mahjong::Interval {
                players: Players {
                    logged_in: 8,
                    connected: 8,
                    playing: 4,
                },
                games_completed: 1,
                hands: 12,
                draw_overshoot: Packed::pack(&draw),
                ..Default::default()
            },
        );
        let saved = session_intervals(&timeline, 5 * S, 1.5);
        assert_eq!(saved.len(), 2);
        assert_eq!(saved[1].players.playing, 4);
        assert_eq!(saved[1].games.completed, 1);
        assert_eq!(saved[1].overshoot.draw.count, 1);
        assert_eq!(saved[1].span.duration_s, 0.5);
        let merged = merge_sessions(&[(&saved, "a"), (&saved, "b")]).unwrap();
        assert_eq!(merged[1].players.logged_in, 16);
        assert_eq!(merged[1].overshoot.draw.count, 2);
        assert_eq!(merged[1].overshoot.draw.max, 1200);
    }
}
