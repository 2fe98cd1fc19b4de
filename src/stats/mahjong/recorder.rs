//! One mahjong worker's record of a session: phases, games, the server's pacing of each step,
//! tsumo's reply lateness, message traffic, errors by kind and each bot kind's play; merged
//! at the end, and cut into windows (`since`) for a capacity search's steps.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{add_errors, ErrorGroup, ErrorKind, LogoutCounts, PhaseStats, PlayStats};
use super::{StageRecord, KEPT_ERRORS, PHASES};
use super::{Timeline, Totals};
use crate::stats::new_histogram;

/// One worker's record of a mahjong session (values in µs unless named otherwise).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Per phase, in [`PHASES`] order.
    pub phases: BTreeMap<&'static str, PhaseStats>,
    pub games_started: u64,
    pub games_completed: u64,
    pub games_aborted: u64,
    /// Games still being played when the session ended (the `-d` limit, a signal).
    pub games_cut: u64,
    /// Duration of completed games, µs.
    pub game_time: Histogram<u64>,
    /// Time between consecutive requests of one table, by the kind of step that opened it.
    pub steps: BTreeMap<&'static str, Histogram<u64>>,
    /// Own-draw steps: interval beyond the think time.
    pub draw_overshoot: Histogram<u64>,
    /// Deal (`qipai`) steps: interval beyond the server's 400 ms step minimum.
    pub deal_overshoot: Histogram<u64>,
    /// Per table: `START` sent to `kaiju` received.
    pub start_burst: Histogram<u64>,
    /// Actual − intended reply time (intended = receipt + think time).
    pub reply_lateness: Histogram<u64>,
    pub messages_in: u64,
    pub messages_out: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// WebSockets the server closed (or that failed) before the player was done.
    pub disconnects: u64,
    pub protocol_errors: u64,
    pub first_errors: Vec<String>,
    /// Every error by kind (see [`ErrorGroup`]); the counts add up to `protocol_errors`.
    pub error_kinds: BTreeMap<String, ErrorGroup>,
    /// Players tsumo did not see logged out (the session may stay on the server up to 14 days).
    pub left_on_server: Vec<String>,
    /// Logouts retried, done past `--logout-timeout`, and late logins' sessions logged out.
    pub logouts: LogoutCounts,
    /// Players whose table failed to form before they had played at it (the server never
    /// answered `ROOM`, or the room never filled): they failed before they could play.
    pub never_seated: u64,
    /// By bot kind (`tsumogiri`, `shanten`).
    pub bots: BTreeMap<&'static str, PlayStats>,
    /// The session interval by interval (`--interval`).
    pub timeline: Timeline,
    /// With `--stages`, each stage's record, in the profile's order (empty without it).
    pub stages: Vec<StageRecord>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            phases: PHASES.iter().map(|&p| (p, PhaseStats::default())).collect(),
            games_started: 0,
            games_completed: 0,
            games_aborted: 0,
            games_cut: 0,
            game_time: new_histogram(),
            steps: BTreeMap::new(),
            draw_overshoot: new_histogram(),
            deal_overshoot: new_histogram(),
            start_burst: new_histogram(),
            reply_lateness: new_histogram(),
            messages_in: 0,
            messages_out: 0,
            bytes_in: 0,
            bytes_out: 0,
            disconnects: 0,
            protocol_errors: 0,
            first_errors: Vec::new(),
            error_kinds: BTreeMap::new(),
            left_on_server: Vec::new(),
            logouts: LogoutCounts::default(),
            never_seated: 0,
            bots: BTreeMap::new(),
            timeline: Timeline::default(),
            stages: Vec::new(),
        }
    }
}

impl Recorder {
    /// The stats of a phase (one of [`PHASES`]).
    pub fn phase(&mut self, name: &'static str) -> &mut PhaseStats {
        self.phases.entry(name).or_default()
    }

    /// Records a step interval opened by a step of kind `kind`.
    pub fn step(&mut self, kind: &'static str, micros: u64) {
        self.steps
            .entry(kind)
            .or_insert_with(new_histogram)
            .saturating_record(micros);
    }

    /// Counts an error of `kind` (what failed and why, the same for every player it happens
    /// to: `login: connect failed: Connection refused`), keeping the first few messages
    /// (`what`, which names the player).
    pub fn error(&mut self, kind: &ErrorKind, what: String) {
        self.protocol_errors += 1;
        if self.first_errors.len() < KEPT_ERRORS {
            self.first_errors.push(what.clone());
        }
        let one = ErrorGroup {
            count: 1,
            first: vec![what],
        };
        add_errors(&mut self.error_kinds, &kind.to_string(), &one);
    }

    /// Adds another worker's record into this one.
    pub fn merge(&mut self, other: &Recorder) {
        self.add_failures(other);
        self.games_started += other.games_started;
        self.games_completed += other.games_completed;
        self.games_aborted += other.games_aborted;
        self.games_cut += other.games_cut;
        let _ = self.game_time.add(&other.game_time);
        for (kind, h) in &other.steps {
            let _ = self.steps.entry(kind).or_insert_with(new_histogram).add(h);
        }
        let _ = self.draw_overshoot.add(&other.draw_overshoot);
        let _ = self.deal_overshoot.add(&other.deal_overshoot);
        let _ = self.start_burst.add(&other.start_burst);
        let _ = self.reply_lateness.add(&other.reply_lateness);
        self.messages_in += other.messages_in;
        self.messages_out += other.messages_out;
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.left_on_server
            .extend(other.left_on_server.iter().cloned());
        for (kind, stats) in &other.bots {
            self.bots.entry(kind).or_default().merge(stats);
        }
        self.timeline.merge(&other.timeline);
        super::stage::merge_stages(&mut self.stages, &other.stages);
    }

    /// Stage `index`'s record (`--stages`), made when first needed.
    pub fn stage(&mut self, index: usize) -> &mut StageRecord {
        if self.stages.len() <= index {
            self.stages.resize_with(index + 1, StageRecord::default);
        }
        &mut self.stages[index]
    }

    /// Adds `other`'s phases, errors and disconnects, not its play (its games, messages and
    /// latencies): a capacity step counts the failures of its new tables' seating and of its
    /// warm-up, and measures its play over the judged window alone.
    pub fn add_failures(&mut self, other: &Recorder) {
        for (name, stats) in &other.phases {
            self.phase(name).merge(stats);
        }
        self.disconnects += other.disconnects;
        self.protocol_errors += other.protocol_errors;
        for e in &other.first_errors {
            if self.first_errors.len() < KEPT_ERRORS {
                self.first_errors.push(e.clone());
            }
        }
        for (kind, group) in &other.error_kinds {
            add_errors(&mut self.error_kinds, kind, group);
        }
        self.never_seated += other.never_seated;
        self.logouts.add(&other.logouts);
    }

    /// What was recorded since `earlier`, a copy of this recorder taken before (a capacity
    /// step's judged window): counts and histograms less `earlier`'s; the players left on the
    /// server and the first errors are this one's, the intervals none.
    pub fn since(&self, earlier: &Recorder) -> Recorder {
        let less = |now: &Histogram<u64>, was: &Histogram<u64>| {
            let mut h = now.clone();
            // `was` is an earlier state of `now`: never more in any bucket.
            let _ = h.subtract(was);
            h
        };
        let phases = self
            .phases
            .iter()
            .map(|(&name, now)| {
                let was = earlier.phases.get(name).cloned().unwrap_or_default();
                let stats = PhaseStats {
                    ok: now.ok.saturating_sub(was.ok),
                    failed: now.failed.saturating_sub(was.failed),
                    latency: less(&now.latency, &was.latency),
                };
                (name, stats)
            })
            .collect();
        let steps = self
            .steps
            .iter()
            .map(|(&kind, now)| {
                let h = match earlier.steps.get(kind) {
                    Some(was) => less(now, was),
                    None => now.clone(),
                };
                (kind, h)
            })
            .collect();
        let error_kinds = self
            .error_kinds
            .iter()
            .filter_map(|(kind, now)| {
                let was = earlier.error_kinds.get(kind).map_or(0, |g| g.count);
                let count = now.count.saturating_sub(was);
                (count > 0).then(|| {
                    let group = ErrorGroup {
                        count,
                        first: now.first.clone(),
                    };
                    (kind.clone(), group)
                })
            })
            .collect();
        let bots = self
            .bots
            .iter()
            .map(|(&kind, now)| {
                let was = earlier.bots.get(kind).cloned().unwrap_or_default();
                (kind, now.since(&was))
            })
            .collect();
        Recorder {
            phases,
            games_started: self.games_started.saturating_sub(earlier.games_started),
            games_completed: self.games_completed.saturating_sub(earlier.games_completed),
            games_aborted: self.games_aborted.saturating_sub(earlier.games_aborted),
            games_cut: self.games_cut.saturating_sub(earlier.games_cut),
            game_time: less(&self.game_time, &earlier.game_time),
            steps,
            draw_overshoot: less(&self.draw_overshoot, &earlier.draw_overshoot),
            deal_overshoot: less(&self.deal_overshoot, &earlier.deal_overshoot),
            start_burst: less(&self.start_burst, &earlier.start_burst),
            reply_lateness: less(&self.reply_lateness, &earlier.reply_lateness),
            messages_in: self.messages_in.saturating_sub(earlier.messages_in),
            messages_out: self.messages_out.saturating_sub(earlier.messages_out),
            bytes_in: self.bytes_in.saturating_sub(earlier.bytes_in),
            bytes_out: self.bytes_out.saturating_sub(earlier.bytes_out),
            disconnects: self.disconnects.saturating_sub(earlier.disconnects),
            protocol_errors: self.protocol_errors.saturating_sub(earlier.protocol_errors),
            first_errors: self.first_errors.clone(),
            error_kinds,
            left_on_server: self.left_on_server.clone(),
            logouts: LogoutCounts {
                retried: self.logouts.retried.saturating_sub(earlier.logouts.retried),
                past_timeout: (self.logouts.past_timeout)
                    .saturating_sub(earlier.logouts.past_timeout),
                late_logins: (self.logouts.late_logins).saturating_sub(earlier.logouts.late_logins),
            },
            never_seated: self.never_seated.saturating_sub(earlier.never_seated),
            bots,
            timeline: Timeline::default(),
            stages: Vec::new(),
        }
    }

    /// The players playing at the end of the last interval closed (one worker's, whose
    /// intervals are not merged with others').
    pub fn playing_now(&self) -> u64 {
        self.timeline
            .intervals
            .values()
            .next_back()
            .map_or(0, |i| i.players.playing)
    }

    /// The cumulative figures an interval is the difference of.
    pub fn totals(&self) -> Totals {
        Totals {
            games_started: self.games_started,
            games_completed: self.games_completed,
            games_aborted: self.games_aborted,
            games_cut: self.games_cut,
            hands: self.bots.values().map(|b| b.hands).sum(),
            messages_in: self.messages_in,
            messages_out: self.messages_out,
            errors: self.protocol_errors,
            draw_overshoot: self.draw_overshoot.clone(),
            deal_overshoot: self.deal_overshoot.clone(),
            reply_lateness: self.reply_lateness.clone(),
            disconnects: self.disconnects,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::mahjong::Step;

    #[test]
    fn add_failures_counts_errors_and_phases_but_not_play() {
        let mut seating = Recorder::default();
        seating.phase("connect").failure();
        seating.phase("login").success(10);
        seating.error(
            &ErrorKind::Failed(Step::Connect, "refused".to_string()),
            "connect of tsumo8: refused".to_string(),
        );
        seating.disconnects = 2;
        seating.never_seated = 4;
        seating.draw_overshoot.saturating_record(500_000);
        seating.games_started = 1;
        seating.messages_in = 7;
        let mut window = Recorder::default();
        window.draw_overshoot.saturating_record(2_000);
        window.error(
            &ErrorKind::ServerError("x".to_string()),
            "tsumo1: server ERROR x".to_string(),
        );
        window.add_failures(&seating);
        assert_eq!(window.phases["connect"].failed, 1);
        assert_eq!(window.phases["login"].ok, 1);
        assert_eq!(window.protocol_errors, 2);
        assert_eq!(window.error_kinds["connect: refused"].count, 1);
        assert_eq!((window.disconnects, window.never_seated), (2, 4));
        // The play stays the window's.
        assert_eq!(window.draw_overshoot.len(), 1);
        assert_eq!((window.games_started, window.messages_in), (0, 0));
    }

    #[test]
    fn since_keeps_only_what_was_recorded_after_the_earlier_copy() {
        let mut record = Recorder::default();
        record.draw_overshoot.saturating_record(500_000);
        record.phase("formed").success(10);
        record.error(
            &ErrorKind::Failed(Step::Login, "refused".to_string()),
            "login of tsumo1: refused".to_string(),
        );
        record.disconnects = 1;
        let earlier = record.clone();
        record.draw_overshoot.saturating_record(2_000);
        record.draw_overshoot.saturating_record(3_000);
        record.phase("formed").success(20);
        record.disconnects = 3;
        record.step("zimo", 1_000_000);
        let window = record.since(&earlier);
        assert_eq!(window.draw_overshoot.len(), 2);
        // The sample before the window is gone, its max with it.
        assert!(window.draw_overshoot.max() < 10_000);
        assert_eq!(window.phases["formed"].ok, 1);
        assert_eq!(window.disconnects, 2);
        assert_eq!(window.protocol_errors, 0);
        assert!(window.error_kinds.is_empty());
        assert_eq!(window.steps["zimo"].len(), 1);
    }
}
