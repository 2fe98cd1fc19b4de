//! Why a run ended, as the engine decides it and every result saves it (`ended_by`): one enum,
//! saved as the names tsumo has always written.

use serde::{Deserialize, Serialize};

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "&'static str")]
pub enum EndReason {
    /// The planned duration passed.
    Duration,
    /// A signal: `"SIGINT"`, `"SIGTERM"` or `"SIGHUP"`.
    Signal(&'static str),
    /// Every worker finished its work (every game played; every script thread stopped).
    Done,
    /// A worker ended the run.
    Ended,
    /// A script hook raised an error, and the run stopped there.
    ScriptError,
    /// The mode saw its verdict settled before the duration (a capacity step's errors).
    Settled,
    /// The server stopped answering mid-run (`--stages`): a whole second with no response and
    /// only failed connects, after it had answered.
    ServerGone,
}

/// The signals that end a run, by the names they are saved as.
const SIGNALS: [&str; 3] = ["SIGINT", "SIGTERM", "SIGHUP"];

impl EndReason {
    /// How the JSON and the report name it.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Duration => "duration",
            EndReason::Signal(name) => name,
            EndReason::Done => "done",
            EndReason::Ended => "ended",
            EndReason::ScriptError => "script error",
            EndReason::Settled => "settled",
            EndReason::ServerGone => "server gone",
        }
    }

    pub fn is_signal(self) -> bool {
        matches!(self, EndReason::Signal(_))
    }
}

impl From<EndReason> for &'static str {
    fn from(reason: EndReason) -> &'static str {
        reason.name()
    }
}

impl TryFrom<String> for EndReason {
    type Error = String;

    /// The saved name back: every name a tsumo has written.
    fn try_from(name: String) -> Result<EndReason, String> {
        Ok(match name.as_str() {
            "duration" => EndReason::Duration,
            "done" => EndReason::Done,
            "ended" => EndReason::Ended,
            "script error" => EndReason::ScriptError,
            "settled" => EndReason::Settled,
            "server gone" => EndReason::ServerGone,
            _ => match SIGNALS.iter().find(|signal| **signal == name) {
                Some(signal) => EndReason::Signal(signal),
                None => return Err(format!("unknown ended_by {name:?}")),
            },
        })
    }
}

impl<'de> Deserialize<'de> for EndReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<EndReason, D::Error> {
        let name = String::deserialize(deserializer)?;
        EndReason::try_from(name).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How parts of one run that went on side by side ended, as `tsumo merge` tells it: each
/// part's `ended_by` and `stopped_in_stage`. The most telling reason wins: a server gone in
/// any part (the server went away for the whole run), else a signal in any part, else the
/// first part's. Its stage: for a server gone, the earliest stage a part saw it go in (the
/// others only noticed later); otherwise the latest any part stopped in.
pub fn merged(parts: &[(Option<EndReason>, Option<usize>)]) -> (Option<EndReason>, Option<usize>) {
    let first = parts.first().and_then(|(reason, _)| *reason);
    let any = |pick: fn(EndReason) -> bool| {
        parts
            .iter()
            .filter_map(|(reason, _)| *reason)
            .find(|&r| pick(r))
    };
    let gone = any(|r| r == EndReason::ServerGone);
    let reason = gone.or_else(|| any(EndReason::is_signal)).or(first);
    let stages = parts.iter().filter(|(r, _)| gone.is_none() || *r == gone);
    let stage = match gone {
        Some(_) => stages.filter_map(|(_, stage)| *stage).min(),
        None => stages.filter_map(|(_, stage)| *stage).max(),
    };
    (reason, stage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_ends_by_a_server_gone_in_any_part_then_a_signal_then_the_first() {
        use EndReason::*;
        let gone = Some(ServerGone);
        // The server went away for every shard: the earliest stage one saw it go in.
        assert_eq!(
            merged(&[(Some(Duration), None), (gone, Some(3)), (gone, Some(2))]),
            (gone, Some(2))
        );
        assert_eq!(
            merged(&[(Some(Signal("SIGINT")), Some(4)), (gone, Some(3))]),
            (gone, Some(3))
        );
        let int = Some(Signal("SIGTERM"));
        assert_eq!(
            merged(&[(Some(Duration), None), (int, Some(2)), (int, Some(3))]),
            (int, Some(3))
        );
        assert_eq!(
            merged(&[(Some(Done), None), (Some(Duration), None)]),
            (Some(Done), None)
        );
        assert_eq!(merged(&[(None, None), (None, None)]), (None, None));
    }

    /// Every name a saved file may hold reads back into its reason and is written unchanged.
    #[test]
    fn ended_by_round_trips_from_todays_names() {
        let names = [
            "duration",
            "SIGINT",
            "SIGTERM",
            "SIGHUP",
            "done",
            "ended",
            "script error",
            "settled",
            "server gone",
        ];
        for name in names {
            let reason: EndReason = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(reason.name(), name);
            assert_eq!(
                serde_json::to_value(reason).unwrap(),
                serde_json::json!(name)
            );
        }
        let reason: Result<EndReason, _> = serde_json::from_value(serde_json::json!("SIGKILL"));
        assert!(reason.is_err());
    }
}
