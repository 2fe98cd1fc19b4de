//! clap's errors rewritten as tsumo's one line (clap's own text spans several lines, says
//! `error:` and names options by their value placeholders).

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Command;

use super::option_label;

/// Rewrites a clap error as our one line (clap's own text spans several lines and says
/// `error:`).
pub(super) fn clap_message(command: &Command, error: &clap::Error) -> String {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // clap names an option as `--connections <connections>`; we say `-c`.
    let option = || {
        let shown = context(ContextKind::InvalidArg).unwrap_or_default();
        let word = shown
            .split([' ', '='])
            .next()
            .unwrap_or_default()
            .to_string();
        command
            .get_arguments()
            .find(|a| {
                word.strip_prefix("--")
                    .is_some_and(|l| a.get_long() == Some(l))
                    || word
                        .strip_prefix('-')
                        .is_some_and(|s| s.chars().eq(a.get_short()))
            })
            .map(|a| option_label(command, a.get_id().as_str()))
            .unwrap_or(word)
    };
    match error.kind() {
        ErrorKind::UnknownArgument => {
            let word = context(ContextKind::InvalidArg).unwrap_or_default();
            // Only the commands that run have a dashboard (compare, merge, plot, report and
            // doctor take files or look, and send nothing).
            if word.starts_with("--dashboard") || word.starts_with("--prometheus-rw") {
                return format!(
                    "{word} is for a command that runs: a run, --vs, tsumo mahjong, tsumo \
                     capacity (this one sends no traffic)"
                );
            }
            match context(ContextKind::SuggestedArg) {
                Some(suggestion) => format!(
                    "unknown option '{word}' (did you mean '{suggestion}'? see tsumo --help)"
                ),
                None => format!("unknown option '{word}' (see tsumo --help)"),
            }
        }
        ErrorKind::InvalidValue | ErrorKind::TooFewValues | ErrorKind::WrongNumberOfValues
            if context(ContextKind::InvalidValue)
                .unwrap_or_default()
                .is_empty() =>
        {
            format!("option '{}' needs a value", option())
        }
        ErrorKind::TooManyValues | ErrorKind::NoEquals => {
            format!("option '{}' does not take a value", option())
        }
        ErrorKind::InvalidUtf8 => "an argument is not valid UTF-8".to_string(),
        _ => {
            // Unexpected kinds: clap's first line, without its `error: ` prefix.
            let text = error.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
    }
}
