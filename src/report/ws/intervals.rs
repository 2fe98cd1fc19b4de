//! A WebSocket run over time as saved: the `intervals` array of its JSON.

use serde::{Deserialize, Serialize};

use crate::report::timeline::{spans, IntervalHistogram, IntervalSpan};
use crate::stats::ws::timeline::Timeline;

/// One interval of a WebSocket run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWsInterval {
    #[serde(flatten)]
    pub span: IntervalSpan,
    /// Messages written in it.
    pub sent: u64,
    /// Replies matched in it.
    pub answered: u64,
    /// Messages it gave up on: no reply within `-T`, or none when their connection ended.
    pub unanswered: u64,
    /// Server messages that answered none of ours.
    pub pushed: u64,
    /// Connections the server closed or broke in it.
    pub disconnects: u64,
    /// The corrected round trip of the replies matched in it (µs).
    pub round_trip: IntervalHistogram,
}

/// A run's intervals as saved (none without a timeline).
pub fn saved(timeline: &Timeline, start_unix_ns: u64, elapsed_s: f64) -> Vec<SavedWsInterval> {
    let Some(length) = timeline.length else {
        return Vec::new();
    };
    let dense = timeline.dense();
    let spans = spans(dense.len(), length, start_unix_ns, elapsed_s);
    dense
        .iter()
        .zip(spans)
        .map(|(i, span)| SavedWsInterval {
            span,
            sent: i.sent,
            answered: i.answered,
            unanswered: i.unanswered,
            pushed: i.pushed,
            disconnects: i.disconnects,
            round_trip: IntervalHistogram::of(&i.round_trip.unpack()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;
    use crate::stats::ws::timeline::Interval;

    const S: u64 = 1_000_000_000;

    #[test]
    fn ws_intervals_are_saved_densely_with_their_round_trip() {
        let mut timeline = Timeline {
            length: Some(S),
            ..Timeline::default()
        };
        let mut h = new_histogram();
        h.record(1_500).unwrap();
        let interval = Interval {
            sent: 10,
            answered: 1,
            round_trip: Packed::pack(&h),
            ..Interval::default()
        };
        timeline.intervals.insert(1, interval);
        let saved = saved(&timeline, 5 * S, 1.5);
        assert_eq!(saved.len(), 2);
        assert_eq!(
            (saved[0].sent, saved[1].sent, saved[1].answered),
            (0, 10, 1)
        );
        assert_eq!(saved[1].round_trip.max, 1_500);
        assert_eq!(saved[1].span.duration_s, 0.5);
    }
}
