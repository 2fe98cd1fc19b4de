//! The supervisor's watch on a `tsumo mahjong --stages` session's server, once a second: the
//! server is gone (killed, crashed) when a whole second brought no message, after trouble —
//! sockets the server side closed, or connects (login, socket, logout) that failed — in that
//! second or the one before, and the server then refuses a new TCP connection. The check
//! matters because a dead server leaves a session quiet: its players' sockets close at once,
//! they log out (refused) and their tables, broken, are not replaced, so nothing more fails.
//! A server that stalls closes nothing and accepts connects (the kernel's backlog); one that
//! restarted accepts the check; a profile at zero players has no trouble to see.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::phase::SessionGauges;

/// The longest the check's connect may take: a server behind a dropped route times out.
const CHECK: Duration = Duration::from_secs(1);

/// What the watch remembers between ticks.
#[derive(Debug)]
pub struct GoneWatch {
    addr: SocketAddr,
    timeout: Duration,
    /// Messages and trouble at the last tick.
    last: (u64, u64),
    /// Trouble in the last second.
    troubled: bool,
    /// A message ever came.
    answered: bool,
}

impl GoneWatch {
    /// The watch on the server at `addr`, its check's connect bounded by `connect_timeout`
    /// (and a second).
    pub fn new(addr: SocketAddr, connect_timeout: Duration) -> GoneWatch {
        GoneWatch {
            addr,
            timeout: connect_timeout.min(CHECK),
            last: (0, 0),
            troubled: false,
            answered: false,
        }
    }

    /// Reads the gauges at a tick: `true` when the server is gone.
    pub fn tick(&mut self, gauges: &[Arc<SessionGauges>]) -> bool {
        let now = gauges.iter().fold((0, 0), |(m, t), g| {
            (
                m + g.messages.load(Ordering::Relaxed),
                t + g.trouble.load(Ordering::Relaxed),
            )
        });
        let quiet = now.0 == self.last.0;
        let trouble = now.1 > self.last.1;
        let suspect = self.answered && quiet && (trouble || self.troubled);
        self.troubled = trouble;
        self.answered |= now.0 > 0;
        self.last = now;
        let gone = suspect && self.refused();
        if gone {
            // The players' logouts stop trying: the server will not answer them.
            gauges
                .iter()
                .for_each(|g| g.gone.store(true, Ordering::Relaxed));
        }
        gone
    }

    /// Whether a new TCP connection to the server fails.
    fn refused(&self) -> bool {
        TcpStream::connect_timeout(&self.addr, self.timeout).is_err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets one worker's gauges: messages received, trouble seen.
    fn set(g: &SessionGauges, messages: u64, trouble: u64) {
        g.messages.store(messages, Ordering::Relaxed);
        g.trouble.store(trouble, Ordering::Relaxed);
    }

    #[test]
    fn gone_after_trouble_then_a_quiet_second_when_the_server_refuses() {
        // Nothing listens on a port just closed: refused.
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr")
        };
        let gauges = [Arc::new(SessionGauges::default())];
        let mut watch = GoneWatch::new(closed, Duration::from_secs(1));
        // Trouble before any message (the server never answered): not gone.
        set(&gauges[0], 0, 2);
        assert!(!watch.tick(&gauges));
        assert!(!watch.tick(&gauges));
        // Messages, then a second with messages and sockets closed (the kill's).
        set(&gauges[0], 40, 2);
        assert!(!watch.tick(&gauges));
        set(&gauges[0], 50, 6);
        assert!(!watch.tick(&gauges));
        // Then a quiet second: checked, refused; the logouts are told.
        assert!(!gauges[0].gone.load(Ordering::Relaxed));
        assert!(watch.tick(&gauges));
        assert!(gauges[0].gone.load(Ordering::Relaxed));
    }

    #[test]
    fn a_stall_or_a_server_that_answers_the_check_is_not_gone() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let gauges = [Arc::new(SessionGauges::default())];
        let mut watch = GoneWatch::new(listener.local_addr().expect("addr"), CHECK);
        set(&gauges[0], 40, 0);
        assert!(!watch.tick(&gauges));
        // A stall: quiet, no trouble.
        assert!(!watch.tick(&gauges));
        // Trouble and quiet, but the server accepts the check (it restarted).
        set(&gauges[0], 40, 3);
        assert!(!watch.tick(&gauges));
        assert!(!watch.tick(&gauges));
    }
}
