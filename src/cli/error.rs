//! A command line tsumo refuses, as a value: every parser of `cli` returns it, and it renders
//! as the one line `main` prints after `tsumo: ` (exit status 2, as [`Error::Usage`]).

use thiserror::Error;

use super::units::one_line;
use crate::error::Error;
use crate::slo;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgError {
    /// An option's value that does not parse or is out of range, quoted as typed (escaped, so
    /// the error stays one line); `option` as messages name it (`-c`, `--json`).
    #[error("invalid value '{value}' for {option}: {reason}")]
    Invalid {
        option: String,
        value: String,
        reason: String,
    },
    /// What clap refused (an unknown option, a missing value), in our words.
    #[error("{0}")]
    Clap(String),
    /// A `--slo` that does not parse or could never hold.
    #[error("{}", one_line(&format!("--slo '{expr}': {reason}")))]
    Objective {
        expr: String,
        reason: slo::ParseError,
    },
    /// Everything else the command line gets wrong, in its own words: options that do not go
    /// together, one missing that another needs, an argument too many, a value a check refused.
    #[error("{0}")]
    Refused(String),
}

impl From<ArgError> for Error {
    fn from(e: ArgError) -> Error {
        Error::Usage(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind renders as the line tsumo always printed, one line whatever was typed.
    #[test]
    fn each_kind_is_the_one_line_it_was() {
        let invalid = ArgError::Invalid {
            option: "-c".into(),
            value: one_line("1\n0"),
            reason: "expected a whole number".into(),
        };
        assert_eq!(
            invalid.to_string(),
            "invalid value '1\\n0' for -c: expected a whole number"
        );
        let objective = ArgError::Objective {
            expr: "p99>\n1ms".into(),
            reason: slo::parse_http("p99>\n1ms").unwrap_err(),
        };
        assert_eq!(
            objective.to_string(),
            "--slo 'p99>\\n1ms': p99 takes '<' (an upper limit), not '>'"
        );
        let usage = Error::from(ArgError::Refused("--rounds needs --vs URL".into()));
        assert_eq!(usage.to_string(), "--rounds needs --vs URL");
        assert_eq!(usage.exit_status(), crate::error::ExitStatus::BadInput);
    }
}
