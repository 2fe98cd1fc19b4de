//! A server that stops answering in the middle of a capacity search (killed, crashed) has
//! failed, and the search with it: neither a system limit nor a step that held. After a step
//! that saw the server's connections fail, the search asks the server once more, by the same
//! pre-flight check every run starts with; a server that answers it was only overloaded (a full
//! listen backlog refuses some connections while the server answers others), one that does
//! not is gone.

use std::time::Duration;

use crate::error::Error;
use crate::net::preflight::{preflight_blocking, Probe};

/// How many times the server is asked before it counts as gone: a backlog that was full at
/// the step's end has room again a moment later.
const TRIES: usize = 3;

/// Between two tries.
const GAP: Duration = Duration::from_millis(300);

/// `Ok` when the server answers the pre-flight check (a TCP connect, and TLS for https) within
/// [`TRIES`] tries; else the last try's error, the words of a failed search.
pub fn check(probe: Probe<'_>) -> Result<(), Error> {
    let mut last = None;
    for attempt in 0..TRIES {
        if attempt > 0 {
            std::thread::sleep(GAP);
        }
        match preflight_blocking(probe) {
            Ok(_) => return Ok(()),
            Err(e) if answers_nothing(&e) => last = Some(e),
            // Anything else (a bind address, a thread) is not the server's answer.
            Err(_) => return Ok(()),
        }
    }
    last.map_or(Ok(()), Err)
}

/// The errors of a server that does not answer: a connect refused or timed out, a TLS
/// handshake that got no answer. (A name that no longer resolves is the network's.)
pub fn answers_nothing(e: &Error) -> bool {
    matches!(e, Error::Connect { .. } | Error::Tls { .. })
}

/// `the server stopped answering during step 3 at 16 players: unable to connect to …`: the
/// line a failed search ends with, on stderr and in its JSON's `failure`.
pub fn line(step: usize, load: &str, why: &Error) -> String {
    format!("the server stopped answering during step {step} at {load}: {why}")
}
