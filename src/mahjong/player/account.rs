//! A player's account on the server, from login to logout: the `POST {base}/auth/` that yields
//! the `MAJIANG` session cookie, the WebSocket it authorises (opened and shaken hands with up
//! to `HELLO`), and at the end the socket closed and `POST {base}/logout`. These are the only
//! steps that are retried (through [`retry`]), and the only ones that must happen whatever went
//! wrong before: a session that is never logged out lives 14 days on the server.

use std::sync::atomic::Ordering;

use thiserror::Error;

use super::retry::{retry, until_stopped, Failed, Until, SHUTDOWN_GRACE};
use super::{Interrupt, Player};
use crate::mahjong::messages;
use crate::mahjong::phase::SessionGauges;
use crate::net::http1::oneshot::{OneshotError, Response};
use crate::net::http1::request;
use crate::stats::mahjong::{ErrorKind, Step};
use crate::timing::clock;
use crate::ws::socketio;
use crate::ws::transport::{self, WsConnectError};

/// Why a login, connect or logout failed (the last try's reason, when retried).
#[derive(Debug, Error)]
pub(super) enum AccountError {
    #[error("{0}")]
    Request(OneshotError),
    #[error("answered {0} without a MAJIANG cookie (wrong base path?)")]
    NoCookie(u16),
    #[error("answered {0}")]
    Status(u16),
    #[error("{0}")]
    Socket(WsConnectError),
    #[error("timed out")]
    TimedOut,
}

impl AccountError {
    /// What failed without what differs between players or tries (a random handshake value):
    /// the key errors are grouped by.
    pub(super) fn kind(&self) -> String {
        match self {
            AccountError::Socket(e) => e.kind(),
            // A malformed answer quotes its bytes (`…: "<excerpt>"`): the example keeps them.
            AccountError::Request(e) => {
                let text = e.to_string();
                match text.find(": \"") {
                    Some(quote) => text[..quote].to_string(),
                    None => text,
                }
            }
            other => other.to_string(),
        }
    }
}

/// The `MAJIANG` session cookie a login's answer sets (`name=value`).
pub(super) fn session_cookie(response: &Response) -> Option<String> {
    response
        .header_values("set-cookie")
        .filter_map(|v| std::str::from_utf8(v).ok())
        .find_map(|v| {
            v.split(';')
                .next()
                .filter(|kv| kv.starts_with("MAJIANG=") && kv.len() > 8)
        })
        .map(str::to_string)
}

/// A step that failed for a reason with no part of its own: `login: no answer by the end of the
/// run`.
fn step_failed(step: Step, why: &str) -> ErrorKind {
    ErrorKind::Failed(step, why.to_string())
}

/// A one-shot request's failure, sorted for [`retry`]; one that may pass (a connection
/// refused, reset or timed out) counts as trouble for the watch on a server gone.
pub(super) fn request_failed(gauges: &SessionGauges, e: OneshotError) -> Failed<AccountError> {
    if e.is_transient() {
        gauges.trouble.fetch_add(1, Ordering::Relaxed);
        Failed::Transient(AccountError::Request(e))
    } else {
        Failed::Final(AccountError::Request(e))
    }
}

/// Salts of the retry seeds, so a player's three retried steps do not wait alike.
const LOGIN: u64 = 1;
const CONNECT: u64 = 2;
pub(super) const LOGOUT: u64 = 3;

impl Player {
    /// A seed for [`retry`]'s jitter, different for every player and step.
    pub(super) fn retry_seed(&self, step: u64) -> u64 {
        (self.index as u64 ^ step << 48).wrapping_mul(0xD1B5_4A32_D192_ED03)
    }

    /// `POST {base}/auth/`, keeping the `MAJIANG` cookie; retried.
    pub(super) async fn log_in(&mut self) -> bool {
        let ctx = std::rc::Rc::clone(&self.ctx);
        let endpoint = std::rc::Rc::clone(&self.endpoint);
        let plan = &ctx.plan;
        let body = format!("name={}&passwd=*", self.name());
        let bytes = request::format(
            "POST",
            &format!("{}/auth/", plan.server.path),
            &ctx.host,
            &[(
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            )],
            Some(body.as_bytes()),
        );
        let started = clock::now();
        let bytes = &bytes;
        let sent_logins = std::rc::Rc::clone(&self.sent_logins);
        let attempts = retry(
            plan.retries,
            self.retry_seed(LOGIN),
            Some(Until::Stopped(&ctx.shutdown)),
            || async {
                // The login runs on as a task of its own: answered after this try gave up, its
                // session is logged out with the player (see `logout`).
                let reply = sent_logins.send(&endpoint, bytes);
                let response = match tokio::time::timeout(plan.connect_timeout, reply).await {
                    Ok(Ok(answered)) => answered,
                    Ok(Err(_)) | Err(_) => Err(OneshotError::Timeout),
                }
                .map_err(|e| request_failed(&ctx.gauges, e))?;
                let cookie = session_cookie(&response);
                match cookie {
                    Some(cookie) if response.status == 302 || response.status == 200 => Ok(cookie),
                    _ => Err(Failed::Final(AccountError::NoCookie(response.status))),
                }
            },
        );
        let Some(logged_in) = until_stopped(&ctx.shutdown, SHUTDOWN_GRACE, attempts).await else {
            ctx.recorder.borrow_mut().phase("login").failure();
            self.note_error(
                step_failed(Step::Login, "no answer by the end of the run"),
                format!(
                    "login of {}: no answer {} after the end of the run (a session the server \
                     still makes for it stays there)",
                    self.name(),
                    crate::engine::seconds(SHUTDOWN_GRACE)
                ),
            );
            return false;
        };
        match logged_in {
            Ok(cookie) => {
                ctx.recorder
                    .borrow_mut()
                    .phase("login")
                    .success(clock::to_us(clock::now() - started));
                self.cookie = Some(cookie);
                self.in_stage(clock::now(), |stage| stage.logins += 1);
                signed_in(&ctx.signed_in).insert(self.index);
                ctx.gauges.logged_in.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(gave_up) => {
                ctx.recorder.borrow_mut().phase("login").failure();
                self.note_error(
                    ErrorKind::Failed(Step::Login, gave_up.last.kind()),
                    format!("login of {}: {gave_up}", self.name()),
                );
                false
            }
        }
    }

    /// Opens the WebSocket (retried) and completes the socket.io handshake up to `HELLO`.
    pub(super) async fn connect(&mut self) -> Result<bool, Interrupt> {
        let ctx = std::rc::Rc::clone(&self.ctx);
        let endpoint = std::rc::Rc::clone(&self.endpoint);
        let plan = &ctx.plan;
        let Some(cookie) = self.cookie.clone() else {
            return Ok(false);
        };
        let started = clock::now();
        let cookie = cookie.as_str();
        let attempts = retry(
            plan.retries,
            self.retry_seed(CONNECT),
            Some(Until::Stopped(&ctx.shutdown)),
            || async {
                match tokio::time::timeout(
                    plan.connect_timeout,
                    transport::connect(&endpoint, &ctx.ws_url, cookie),
                )
                .await
                {
                    Ok(Ok(ws)) => Ok(ws),
                    Ok(Err(e)) => {
                        ctx.gauges.trouble.fetch_add(1, Ordering::Relaxed);
                        Err(Failed::Transient(AccountError::Socket(e)))
                    }
                    Err(_) => Err(Failed::Transient(AccountError::TimedOut)),
                }
            },
        );
        // The run is over: the player logs out instead.
        let Some(opened) = until_stopped(&ctx.shutdown, SHUTDOWN_GRACE, attempts).await else {
            ctx.recorder.borrow_mut().phase("connect").failure();
            self.note_error(
                step_failed(Step::Connect, "not done by the end of the run"),
                format!("connect of {}: not done by the end of the run", self.name()),
            );
            return Err(Interrupt::Shutdown);
        };
        match opened {
            Ok(ws) => {
                ctx.recorder
                    .borrow_mut()
                    .phase("connect")
                    .success(clock::to_us(clock::now() - started));
                self.ws = Some(ws);
            }
            Err(gave_up) => {
                ctx.recorder.borrow_mut().phase("connect").failure();
                self.note_error(
                    ErrorKind::Failed(Step::Connect, gave_up.last.kind()),
                    format!("connect of {}: {gave_up}", self.name()),
                );
                return Ok(false);
            }
        }
        // socket.io: the Engine.IO open packet, our CONNECT, its ack, then HELLO with our uid.
        let deadline = started + plan.connect_timeout.as_nanos() as u64;
        match self.serve_until(Some(deadline), |p| p.uid.is_some()).await {
            Ok(()) if self.uid.is_some() => {
                ctx.recorder
                    .borrow_mut()
                    .phase("ready")
                    .success(clock::to_us(clock::now() - started));
                ctx.gauges.connected.fetch_add(1, Ordering::Relaxed);
                Ok(true)
            }
            Ok(()) => {
                ctx.recorder.borrow_mut().phase("ready").failure();
                self.note_error(
                    step_failed(Step::Ready, "no HELLO from the server in time"),
                    format!("{}: no HELLO from the server in time", self.name()),
                );
                self.close_socket().await;
                Ok(false)
            }
            Err(Interrupt::Disconnected) => {
                ctx.recorder.borrow_mut().phase("ready").failure();
                self.ws = None;
                Ok(false)
            }
            Err(Interrupt::Shutdown) => {
                ctx.recorder.borrow_mut().phase("ready").failure();
                self.note_error(
                    step_failed(Step::Ready, "no HELLO by the end of the run"),
                    format!("{}: no HELLO by the end of the run", self.name()),
                );
                Err(Interrupt::Shutdown)
            }
        }
    }

    /// Leaves a waiting room (an owner dissolves it: no ghost room), then closes the socket.
    pub(super) async fn close_socket(&mut self) {
        if let (Some(room_no), Some(uid)) = (self.room.clone(), self.uid.clone()) {
            if !self.playing {
                let _ = self.send(&messages::leave_room(&room_no, &uid)).await;
            }
        }
        if let Some(mut ws) = self.ws.take() {
            let _ = ws.send_text(socketio::DISCONNECT).await;
            // The close handshake, bounded: a server that never answers must not hold the logout.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), ws.close()).await;
        }
        if self.playing {
            self.ctx.gauges.playing.fetch_sub(1, Ordering::Relaxed);
            self.playing = false;
        }
    }
}

/// The set of players holding a session (a poisoned lock still holds the right set).
pub(super) fn signed_in(
    set: &std::sync::Mutex<std::collections::BTreeSet<usize>>,
) -> std::sync::MutexGuard<'_, std::collections::BTreeSet<usize>> {
    set.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
