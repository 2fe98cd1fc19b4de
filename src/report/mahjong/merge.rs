//! Mahjong sessions side by side merged into one ([`SavedResult::merge`](crate::report::result::SavedResult::merge)), exactly: phase
//! counts and histograms, games, step intervals, messages, errors; the objectives judged again
//! on the sums.

use std::collections::BTreeMap;

use super::intervals::merge_sessions;
use super::saved::SavedPhase;
use super::saved::{SavedHistogram, SavedSession};
use crate::error::Error;
use crate::report::objectives;
use crate::report::result::{add_encoded, add_sources, SearchStep};
use crate::stats::mahjong::{add_errors, LogoutCounts};
use crate::stats::new_histogram;
use std::collections::BTreeSet;

/// Most `first_errors` a merged document keeps (as one session does).
const KEPT_ERRORS: usize = crate::stats::mahjong::KEPT_ERRORS;

/// The sum of the saved histograms that `pick` finds in each session (sessions without one are
/// skipped), as a saved histogram again.
fn add_all<'a>(
    sessions: &[(&'a SavedSession, &str)],
    what: &str,
    pick: impl Fn(&'a SavedSession) -> Option<&'a SavedHistogram>,
) -> Result<SavedHistogram, Error> {
    let mut sum = new_histogram();
    for (session, source) in sessions {
        if let Some(saved) = pick(session) {
            add_encoded(&mut sum, &saved.histogram, source, what)?;
        }
    }
    Ok(SavedHistogram::of(&sum))
}

/// Sessions side by side merged exactly: phase counts and histograms, games, step intervals,
/// messages, errors.
pub(super) fn merge(
    sessions: &[(&SavedSession, &str)],
    label: &str,
) -> Result<SavedSession, Error> {
    let judged: Vec<_> = sessions
        .iter()
        .map(|(s, src)| (&s.objectives[..], *src))
        .collect();
    objectives::refuse_different(&judged)?;
    // Every field not summed below is the first session's (the same tool wrote them all).
    let mut merged = sessions[0].0.clone();
    // The first part's log is not the merge's (`tsumo merge --requests` writes that).
    merged.requests_log = None;
    let all = || sessions.iter().map(|(s, _)| *s);
    let sum = |f: fn(&SavedSession) -> u64| all().map(f).sum::<u64>();

    phases_and_steps(&mut merged, sessions)?;
    merged.games.duration = add_all(sessions, "games/duration", |s| Some(&s.games.duration))?;
    merged.draw_overshoot = add_all(sessions, "draw_overshoot", |s| Some(&s.draw_overshoot))?;
    merged.deal_overshoot = add_all(sessions, "deal_overshoot", |s| Some(&s.deal_overshoot))?;
    merged.start_burst = add_all(sessions, "start_burst", |s| Some(&s.start_burst))?;
    merged.reply_lateness = add_all(sessions, "reply_lateness", |s| Some(&s.reply_lateness))?;

    merged.games.started = sum(|s| s.games.started);
    merged.games.completed = sum(|s| s.games.completed);
    merged.games.aborted = sum(|s| s.games.aborted);
    merged.games.cut = sum(|s| s.games.cut);
    merged.messages.received = sum(|s| s.messages.received);
    merged.messages.sent = sum(|s| s.messages.sent);
    merged.messages.bytes_in = sum(|s| s.messages.bytes_in);
    merged.messages.bytes_out = sum(|s| s.messages.bytes_out);
    merged.disconnects = sum(|s| s.disconnects);
    merged.errors = sum(|s| s.errors);
    merged.plan.players = sum(|s| s.plan.players);
    merged.plan.threads = sum(|s| s.plan.threads);
    for s in all() {
        add_sources(&mut merged.plan.bind, &s.plan.bind);
    }
    // Separate processes: CPU adds up, and so do their peaks of memory.
    merged.tsumo.cpu_s = all().map(|s| s.tsumo.cpu_s).sum();
    merged.tsumo.peak_rss_bytes = sum(|s| s.tsumo.peak_rss_bytes);

    merged.elapsed_s = all().map(|s| s.elapsed_s).fold(0.0, f64::max);
    merged.plan.duration_s = all().map(|s| s.plan.duration_s).fold(0.0, f64::max);
    merged.interrupted = all().any(|s| s.interrupted);
    merged.timed_out = all().any(|s| s.timed_out);
    merged.first_errors = all()
        .flat_map(|s| s.first_errors.iter().cloned())
        .take(KEPT_ERRORS)
        .collect();
    merged.error_kinds = BTreeMap::new();
    for (kind, group) in all().flat_map(|s| s.error_kinds.iter()) {
        add_errors(&mut merged.error_kinds, kind, group);
    }
    merged.left_on_server = all()
        .flat_map(|s| s.left_on_server.iter().cloned())
        .collect();
    merged.logouts = LogoutCounts::default();
    all().for_each(|s| merged.logouts.add(&s.logouts));
    let failures: Vec<String> = all().filter_map(|s| s.failure.clone()).collect();
    merged.failure = (!failures.is_empty()).then(|| failures.join("; "));
    merged.bots.clear();
    for s in all() {
        for (kind, bot) in &s.bots {
            merged.bots.entry(kind.clone()).or_default().merge(bot);
        }
    }
    stages_and_end(&mut merged, sessions)?;
    let intervals: Vec<_> = sessions
        .iter()
        .map(|(s, src)| (&s.intervals[..], *src))
        .collect();
    merged.intervals = merge_sessions(&intervals)?;
    // The first part's objectives, judged on the whole.
    merged.objectives = merged.judge_again();
    merged.label = label.to_string();
    Ok(merged)
}

/// The sessions' phases and step kinds, every name any session has (sorted, as the maps keep
/// them): counts added and histograms merged.
fn phases_and_steps(
    merged: &mut SavedSession,
    sessions: &[(&SavedSession, &str)],
) -> Result<(), Error> {
    let all = || sessions.iter().map(|(s, _)| *s);
    let phase_names: BTreeSet<&String> = all().flat_map(|s| s.phases.keys()).collect();
    merged.phases = phase_names
        .into_iter()
        .map(|name| {
            let phases = all().filter_map(|s| s.phases.get(name));
            let latency = add_all(sessions, &format!("phases/{name}"), |s| {
                s.phases.get(name).map(|p| &p.latency)
            })?;
            let phase = SavedPhase {
                ok: phases.clone().map(|p| p.ok).sum(),
                failed: phases.map(|p| p.failed).sum(),
                latency,
            };
            Ok((name.clone(), phase))
        })
        .collect::<Result<_, Error>>()?;
    let step_kinds: BTreeSet<&String> = all().flat_map(|s| s.steps.keys()).collect();
    merged.steps = step_kinds
        .into_iter()
        .map(|kind| {
            let step = add_all(sessions, &format!("steps/{kind}"), |s| s.steps.get(kind))?;
            Ok((kind.clone(), step))
        })
        .collect::<Result<_, Error>>()?;
    Ok(())
}

/// `--stages`: the sessions' stages merged, and how the whole ended (a server gone in any part
/// says so; see [`crate::stats::end::merged`]).
fn stages_and_end(
    merged: &mut SavedSession,
    sessions: &[(&SavedSession, &str)],
) -> Result<(), Error> {
    let parts: Vec<_> = sessions
        .iter()
        .map(|(s, src)| (&s.stages[..], *src))
        .collect();
    merged.stages = super::stages::merge(&parts)?;
    let ends: Vec<_> = sessions
        .iter()
        .map(|(s, _)| (s.ended_by, s.stopped_in_stage))
        .collect();
    (merged.ended_by, merged.stopped_in_stage) = crate::stats::end::merged(&ends);
    Ok(())
}
