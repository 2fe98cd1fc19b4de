//! Did the server do what the player asked? The server never says no: a reply it cannot accept
//! is dropped and its default applied (the drawn tile discarded, a call or win passed over). So
//! after each action the player remembers what must come next if it was accepted, and the
//! next request tells: our discard echoed, our win, kan or call announced — or something else.
//! Also counts what the player did, from the server's own announcements.

use serde_json::Value;

use super::StepKind;
use crate::mahjong::hand::{Meld, MeldKind};
use crate::mahjong::messages::quote;
use crate::mahjong::messages::Action;
use crate::stats::mahjong::PlayStats;

/// What the next request must be if our last action was carried out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Expect {
    #[default]
    Nothing,
    /// Our `dapai` with exactly this text (riichi `*` included).
    Discard(String),
    Tsumo,
    Kan(String),
    /// A chi, pon or open kan: `fulou` by us with this meld, unless a higher claim took the tile.
    Call {
        meld: String,
        kind: &'static str,
    },
    /// Ron: a `hule` by us, possibly after other winners' `hule`.
    Ron,
}

impl Expect {
    /// What an action on request `step` commits the server to, if accepted.
    pub fn of(action: &Action, step: StepKind) -> Expect {
        match action {
            Action::Pass => Expect::Nothing,
            Action::Discard(text) => Expect::Discard(text.clone()),
            Action::Hule if matches!(step, StepKind::Zimo | StepKind::Gangzimo) => Expect::Tsumo,
            Action::Hule => Expect::Ron,
            Action::Gang(meld) => Expect::Kan(meld.clone()),
            Action::Fulou(meld) => Expect::Call {
                meld: meld.clone(),
                kind: match Meld::parse(meld).map(|m| m.kind) {
                    Some(MeldKind::Chi) => "chi",
                    Some(MeldKind::Kan) => "open kan",
                    _ => "pon",
                },
            },
        }
    }

    /// Checks the request that followed; returns what is still expected (a ron waiting behind
    /// another winner) and records a rejection in `stats`.
    pub fn check(
        self,
        step: StepKind,
        payload: &Value,
        my_l: Option<u8>,
        stats: &mut PlayStats,
    ) -> Expect {
        let l = payload.get("l").and_then(Value::as_u64);
        let ours = l.is_some() && l == my_l.map(u64::from);
        let text = |key: &str| payload.get(key).and_then(Value::as_str).unwrap_or("");
        let rejected = |stats: &mut PlayStats, kind: &'static str, asked: String| {
            stats.reject(
                kind,
                format!(
                    "{kind}: asked {asked}, the server went on with {} {}",
                    step.as_str(),
                    quote(payload)
                ),
            );
        };
        match self {
            Expect::Nothing => {}
            Expect::Discard(sent) => {
                if !(step == StepKind::Dapai && ours && text("p") == sent) {
                    let kind = if sent.ends_with('*') && text("p") == sent.trim_end_matches('*') {
                        "riichi"
                    } else {
                        "discard"
                    };
                    rejected(stats, kind, sent);
                }
            }
            Expect::Tsumo => {
                if !(step == StepKind::Hule && ours) {
                    rejected(stats, "tsumo", "tsumo".into());
                }
            }
            Expect::Kan(meld) => {
                if !(step == StepKind::Gang && ours && text("m") == meld) {
                    rejected(stats, "kan", meld);
                }
            }
            Expect::Call { meld, kind } => {
                let done = step == StepKind::Fulou && ours && text("m") == meld;
                // Another player's higher claim (a pon over our chi, a ron) or a drawn hand.
                let overtaken = matches!(step, StepKind::Fulou | StepKind::Hule) && !ours
                    || step == StepKind::Pingju;
                if !done && !overtaken {
                    rejected(stats, kind, meld);
                }
            }
            Expect::Ron => match step {
                StepKind::Hule if !ours => return Expect::Ron,
                StepKind::Hule | StepKind::Pingju => {}
                _ => rejected(stats, "ron", "ron".into()),
            },
        }
        Expect::Nothing
    }
}

/// Counts what we did from the server's announcements (a request of kind `step`).
pub fn count(step: StepKind, payload: &Value, my_l: Option<u8>, stats: &mut PlayStats) {
    let l = payload.get("l").and_then(Value::as_u64);
    let ours = l.is_some() && l == my_l.map(u64::from);
    let text = |key: &str| payload.get(key).and_then(Value::as_str).unwrap_or("");
    match step {
        StepKind::Qipai => stats.hands += 1,
        StepKind::Pingju => stats.draws += 1,
        StepKind::Dapai if ours && text("p").ends_with('*') => stats.riichi += 1,
        StepKind::Fulou if ours => match Meld::parse(text("m")).map(|m| m.kind) {
            Some(MeldKind::Chi) => stats.chi += 1,
            Some(MeldKind::Kan) => stats.open_kan += 1,
            _ => stats.pon += 1,
        },
        StepKind::Gang if ours => {
            if text("m").bytes().any(|b| matches!(b, b'+' | b'=' | b'-')) {
                stats.added_kan += 1;
            } else {
                stats.closed_kan += 1;
            }
        }
        StepKind::Hule if ours => {
            if payload.get("baojia").is_none_or(Value::is_null) {
                stats.tsumo += 1;
            } else {
                stats.ron += 1;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn after(expect: Expect, step: StepKind, payload: Value) -> (Expect, PlayStats) {
        let mut stats = PlayStats::default();
        let next = expect.check(step, &payload, Some(2), &mut stats);
        (next, stats)
    }

    #[test]
    fn accepted_and_rejected() {
        let (_, s) = after(
            Expect::Discard("m3*".into()),
            StepKind::Dapai,
            json!({"l": 2, "p": "m3*"}),
        );
        assert_eq!(s.rejected_total(), 0);
        let (_, s) = after(
            Expect::Discard("m3*".into()),
            StepKind::Dapai,
            json!({"l": 2, "p": "m3"}),
        );
        assert_eq!(s.rejected.get("riichi"), Some(&1));
        let (_, s) = after(
            Expect::Discard("m3".into()),
            StepKind::Dapai,
            json!({"l": 2, "p": "s9_"}),
        );
        assert_eq!(s.rejected.get("discard"), Some(&1));
        assert!(
            s.first_rejected[0].starts_with("discard: asked m3"),
            "{:?}",
            s.first_rejected
        );
        let (_, s) = after(Expect::Tsumo, StepKind::Dapai, json!({"l": 2, "p": "s9_"}));
        assert_eq!(s.rejected.get("tsumo"), Some(&1));
        let call = Expect::of(&Action::Fulou("m3-45".into()), StepKind::Dapai);
        let (_, s) = after(call.clone(), StepKind::Fulou, json!({"l": 0, "m": "m333="}));
        assert_eq!(s.rejected_total(), 0, "a pon beats our chi");
        let (_, s) = after(call, StepKind::Zimo, json!({"l": 3, "p": ""}));
        assert_eq!(s.rejected.get("chi"), Some(&1));
        let (next, s) = after(Expect::Ron, StepKind::Hule, json!({"l": 1}));
        assert_eq!(
            (next, s.rejected_total()),
            (Expect::Ron, 0),
            "another winner first"
        );
        // A triple ron (the default rule's 最大同時和了数 3): two other winners, then ours.
        let (next, _) = after(Expect::Ron, StepKind::Hule, json!({"l": 3}));
        let (next, s) = after(next, StepKind::Hule, json!({"l": 2}));
        assert_eq!((next, s.rejected_total()), (Expect::Nothing, 0));
        let (_, s) = after(Expect::Ron, StepKind::Zimo, json!({"l": 3, "p": ""}));
        assert_eq!(s.rejected.get("ron"), Some(&1));
    }

    #[test]
    fn counts_from_announcements() {
        let mut s = PlayStats::default();
        count(
            StepKind::Dapai,
            &json!({"l": 2, "p": "m3_*"}),
            Some(2),
            &mut s,
        );
        count(
            StepKind::Dapai,
            &json!({"l": 1, "p": "m3*"}),
            Some(2),
            &mut s,
        );
        count(
            StepKind::Fulou,
            &json!({"l": 2, "m": "m3-45"}),
            Some(2),
            &mut s,
        );
        count(
            StepKind::Gang,
            &json!({"l": 2, "m": "p444+4"}),
            Some(2),
            &mut s,
        );
        count(
            StepKind::Hule,
            &json!({"l": 2, "baojia": 1}),
            Some(2),
            &mut s,
        );
        assert_eq!(
            (s.riichi, s.chi, s.added_kan, s.ron, s.tsumo),
            (1, 1, 1, 1, 0)
        );
    }
}
