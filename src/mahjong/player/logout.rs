//! The end of a player's account on the server: its socket closed, then `POST {base}/logout`
//! with its session cookie — and with the cookie of every login of its that was answered after
//! its try gave up (the server made that session all the same). A logout is retried with
//! jittered backoff within `--logout-timeout`, then, while the server still takes its
//! connections, for [`overtime`] more: a slow server must not leave sessions behind, and only
//! one that refuses connections (or is gone) ends the tries early.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{oneshot as reply, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::account::{request_failed, session_cookie, signed_in, AccountError, LOGOUT};
use super::retry::{retry, Failed, GaveUp, Until};
use super::Player;
use crate::net::http1::oneshot::{self, OneshotError, Response};
use crate::net::http1::request;
use crate::net::stream::Endpoint;
use crate::stats::mahjong::{ErrorKind, Step};
use crate::timing::clock::{self, Nanos};

/// How long the logouts under way (and the sockets closing before them) still get after a
/// second signal; those not done by then are listed as left on the server.
pub(crate) const SECOND_SIGNAL_GRACE: Duration = Duration::from_secs(3);

/// The least a logout goes on past `--logout-timeout` while the server takes its connections.
const LEAST_OVERTIME: Duration = Duration::from_secs(10);

/// How long a player's logout waits at most for the answer to a login still unanswered (one
/// whose try gave up): a server that never answers must not hold the end of the run (tests/
/// mahjong.rs, logins never answered), and a late answer that comes within it is logged out.
const LATE_LOGIN_WAIT: Duration = Duration::from_secs(5);

/// How long a logout goes on past `--logout-timeout` (`bound`) while the server takes its
/// connections: as long again, and at least [`LEAST_OVERTIME`].
pub(crate) fn overtime(bound: Duration) -> Duration {
    bound.max(LEAST_OVERTIME)
}

/// A player's logins, each sent as a task of its own so that one whose try gave up (no answer
/// within `--connect-timeout`, or the run over) still reads its answer: the session it sets is
/// logged out with the player.
#[derive(Default)]
pub(super) struct SentLogins {
    /// Each login's task: the session cookie of an answer nobody waited for any more.
    tasks: RefCell<Vec<JoinHandle<Option<String>>>>,
}

impl SentLogins {
    /// Sends the login `request`; its answer, for as long as the receiver is kept.
    pub(super) fn send(
        &self,
        endpoint: &Rc<Endpoint>,
        request: &[u8],
    ) -> reply::Receiver<Result<Response, OneshotError>> {
        let (answer, answered) = reply::channel();
        let (endpoint, request) = (Rc::clone(endpoint), request.to_vec());
        let task = tokio::task::spawn_local(async move {
            match answer.send(oneshot::exchange(&endpoint, &request).await) {
                Ok(()) | Err(Err(_)) => None,
                // The try gave up on it: its session, if it made one, is the player's to end.
                Err(Ok(late)) => session_cookie(&late),
            }
        });
        self.tasks.borrow_mut().push(task);
        answered
    }

    fn take(&self) -> Vec<JoinHandle<Option<String>>> {
        std::mem::take(&mut self.tasks.borrow_mut())
    }
}

/// How one session's logout ended.
enum Ended {
    /// Answered: when its tries began, how many were made, and whether past the timeout.
    Done {
        started: Nanos,
        tries: u32,
        past_timeout: bool,
    },
    GaveUp(GaveUp<AccountError>),
    /// Not done within `--logout-timeout` and its overtime.
    TimedOut,
}

/// Completes [`SECOND_SIGNAL_GRACE`] after a second signal (never, without one).
async fn cut_short(mut hurry: watch::Receiver<bool>) {
    if hurry.wait_for(|hurried| *hurried).await.is_err() {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(SECOND_SIGNAL_GRACE).await;
}

/// Runs `step` unless a second signal's grace runs out first (`None`).
async fn unless_cut<T>(
    cut: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
    step: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        out = step => Some(out),
        _ = cut.as_mut() => None,
    }
}

impl Player {
    /// Closes the socket and logs out (retried on transient failures), then logs out the
    /// sessions of its logins answered late. After a second signal both get
    /// [`SECOND_SIGNAL_GRACE`] more at most; a session not logged out by then is listed as
    /// left on the server.
    pub(super) async fn log_out(&mut self) {
        let cut = cut_short(self.ctx.hurry.clone());
        tokio::pin!(cut);
        let closed = unless_cut(&mut cut, self.close_socket()).await.is_some();
        if !closed {
            // The socket is dropped unclosed; the server sees it go.
            self.ws = None;
        }
        // The bound starts now: waiting for a turn among the worker's logouts counts in it.
        let bound = self.ctx.plan.logout_timeout;
        let until = Instant::now() + bound;
        let last = until + overtime(bound);
        if let Some(cookie) = self.cookie.take() {
            let ended = match closed {
                true => unless_cut(&mut cut, self.end_session(cookie, until, last)).await,
                false => None,
            };
            signed_in(&self.ctx.signed_in).remove(&self.index);
            self.note_logout(ended, false);
        }
        let answer_by = last.min(Instant::now() + bound.min(LATE_LOGIN_WAIT));
        for login in self.sent_logins.take() {
            let stop = login.abort_handle();
            let late = match closed {
                true => unless_cut(&mut cut, tokio::time::timeout_at(answer_by, login)).await,
                false => None,
            };
            let Some(Ok(Ok(Some(cookie)))) = late else {
                // Answered in time (its session is the player's), never, or cut short.
                stop.abort();
                continue;
            };
            let ended = unless_cut(&mut cut, self.end_session(cookie, until, last)).await;
            self.note_logout(ended, true);
        }
    }

    /// `POST {base}/logout` with `cookie`, retried: within `until` (`--logout-timeout`) as
    /// long as another try may pass, then up to `last` while the server takes connections.
    async fn end_session(&self, cookie: String, until: Instant, last: Instant) -> Ended {
        let ctx = Rc::clone(&self.ctx);
        let endpoint = Rc::clone(&self.endpoint);
        let plan = &ctx.plan;
        let bytes = request::format(
            "POST",
            &format!("{}/logout", plan.server.path),
            &ctx.host,
            &[
                ("Cookie".to_string(), cookie),
                ("Content-Length".to_string(), "0".to_string()),
            ],
            None,
        );
        let bytes = &bytes;
        let tries = Cell::new(0u32);
        let attempts = async {
            let _turn = ctx.logouts.acquire().await;
            let started = clock::now();
            let seed = self.retry_seed(LOGOUT);
            let outcome = retry(plan.retries, seed, Some(Until::Bound(last)), || async {
                tries.set(tries.get() + 1);
                let response = oneshot::send(&endpoint, bytes, plan.connect_timeout)
                    .await
                    .map_err(|e| {
                        let refused = matches!(e, OneshotError::Connect(_));
                        match request_failed(&ctx.gauges, e) {
                            // The server is gone (the session ends on it): more tries only wait.
                            Failed::Transient(e) if ctx.gauges.gone.load(Ordering::Relaxed) => {
                                Failed::Final(e)
                            }
                            // Past the timeout, only while the server takes connections.
                            Failed::Transient(e) if refused && Instant::now() >= until => {
                                Failed::Final(e)
                            }
                            failed => failed,
                        }
                    })?;
                match response.status {
                    ..400 => Ok(()),
                    // A server's or proxy's error (a proxy out of connections answers 500, one
                    // that cannot reach the server 502 to 504): it may pass, and a session left
                    // behind is the worst outcome. The bound still ends the tries.
                    500.. => Err(Failed::Transient(AccountError::Status(response.status))),
                    status => Err(Failed::Final(AccountError::Status(status))),
                }
            })
            .await;
            (started, outcome)
        };
        match tokio::time::timeout_at(last, attempts).await {
            Ok((started, Ok(()))) => Ended::Done {
                started,
                tries: tries.get(),
                past_timeout: Instant::now() > until,
            },
            Ok((_, Err(gave_up))) => Ended::GaveUp(gave_up),
            Err(_) => Ended::TimedOut,
        }
    }

    /// Records how a logout ended (`None`: cut short by a second signal); `late`, of a login
    /// answered after its try gave up.
    fn note_logout(&self, ended: Option<Ended>, late: bool) {
        let ctx = Rc::clone(&self.ctx);
        let failed = match ended {
            Some(Ended::Done {
                started,
                tries,
                past_timeout,
            }) => {
                let mut recorder = ctx.recorder.borrow_mut();
                recorder.logouts.retried += u64::from(tries > 1);
                recorder.logouts.past_timeout += u64::from(past_timeout);
                if late {
                    recorder.logouts.late_logins += 1;
                } else {
                    let took = clock::to_us(clock::now() - started);
                    recorder.phase("logout").success(took);
                    ctx.gauges.logged_in.fetch_sub(1, Ordering::Relaxed);
                }
                return;
            }
            Some(Ended::GaveUp(gave_up)) => (
                gave_up.last.kind(),
                format!("logout of {}: {gave_up}", self.name()),
            ),
            Some(Ended::TimedOut) => {
                let limit =
                    |d: Duration| crate::stats::format::format_time_us(d.as_micros() as f64);
                let bound = ctx.plan.logout_timeout;
                let why = format!(
                    "not done within --logout-timeout {} and {} more",
                    limit(bound),
                    limit(overtime(bound))
                );
                (why.clone(), format!("logout of {}: {why}", self.name()))
            }
            None => {
                let grace = crate::engine::seconds(SECOND_SIGNAL_GRACE);
                (
                    format!("not done {grace} after a second signal"),
                    format!(
                        "logout of {}: not done {grace} after a second signal",
                        self.name()
                    ),
                )
            }
        };
        let what = match late {
            true => format!("{} (of a login answered late)", failed.1),
            false => failed.1,
        };
        let mut recorder = ctx.recorder.borrow_mut();
        recorder.phase("logout").failure();
        recorder.left_on_server.push(self.name());
        drop(recorder);
        self.note_error(ErrorKind::Failed(Step::Logout, failed.0), what);
    }
}
