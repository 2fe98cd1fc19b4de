//! The pre-flight check every mode makes before any traffic: resolve the target and prove it
//! answers (a TCP connect and, for https, a full TLS handshake; for h2c, the server's answer to
//! HTTP/2's preface), so a wrong address, a bad certificate or a server that does not speak the
//! protocol stops the run with one clear line instead of thousands of counted errors. The TCP
//! connect and the handshake are timed apart, so that a handshake that stalls is named as such.
//! With `--http3` the check is a QUIC handshake, so that a server that does not answer over UDP
//! or does not offer `h3` is one line too. `tsumo doctor URL` makes the same check and reports
//! it as one of its lines.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::http3::{ConnectFailure, QuicTarget};
use super::stream::{ConnectError, Endpoint, Stream, TlsTarget};
use super::tls::{self, Alpn, Explanation};
use crate::error::Error;
use crate::plan::{Scheme, Target};
use crate::sys::doctor::{Check, DoctorPlan, Verdict};

/// How long `tsumo doctor` waits for the target to answer.
const DOCTOR_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the target did not answer.
enum Unreachable {
    Resolve(String),
    Connect {
        addr: SocketAddr,
        reason: String,
    },
    Tls(Explanation),
    /// TCP connected, but the TLS handshake got no answer within the time given.
    TlsStalled {
        addr: SocketAddr,
        waited: Duration,
    },
    /// The TLS handshake succeeded but the server did not agree to HTTP/2.
    NoH2(String),
    /// The server did not answer HTTP/2's preface on http:// (h2c): what it did instead.
    NoH2c {
        addr: SocketAddr,
        reason: NoH2c,
    },
    /// `--http3`: no answer over UDP within the time given.
    NoQuic {
        addr: SocketAddr,
        waited: Duration,
    },
    /// `--http3`: the QUIC handshake failed (a certificate, no `h3` in the server's ALPN).
    Quic(String),
}

/// No answer over QUIC in words: what happened, and the fix.
fn no_quic(addr: SocketAddr, waited: Duration) -> (String, &'static str) {
    (
        format!("no answer over UDP (QUIC) from {addr} within {waited:?}"),
        "check that the server serves HTTP/3 on this port and that UDP reaches it (most \
         firewalls drop UDP/443), or leave out --http3",
    )
}

/// A stalled handshake in words: what happened, and the fix.
fn stalled(addr: SocketAddr, waited: Duration) -> (String, &'static str) {
    (
        format!(
            "{addr} accepted the TCP connection, but no answer to the TLS handshake came within \
             {waited:?}"
        ),
        "check that this port serves TLS and that the server is not stalled",
    )
}

/// What the pre-flight check is told of a run, in one value since every mode (and `doctor`)
/// passes the same: the target, how to verify its certificate, how long to wait for it, the
/// protocol to offer, and the `--bind` source addresses.
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    pub target: &'a Target,
    pub insecure: bool,
    pub cacert: Option<&'a Path>,
    pub timeout: Duration,
    pub alpn: Alpn,
    pub bind: &'a [IpAddr],
    /// `--http3`: the run's QUIC TLS settings (its verifier and sessions), so that the run's
    /// first connection resumes the check's session; `None`: made for the check.
    pub quic: Option<&'a QuicTarget>,
}

/// Resolves the target and proves it answers: TCP connect, and the TLS handshake for https.
/// Shared by every mode: the mahjong players reach their server through the same check. With
/// `--bind` addresses, each must be one of this host's, and the check connects from the first.
pub async fn preflight(probe: Probe<'_>) -> Result<Endpoint, Error> {
    let target = probe.target;
    match reach(probe).await? {
        Ok(endpoint) => Ok(endpoint),
        Err(Unreachable::Resolve(reason)) => Err(Error::Resolve {
            host: target.host.clone(),
            port: target.port(),
            reason,
        }),
        Err(Unreachable::Connect { addr, reason }) => Err(Error::Connect {
            addr: addr.to_string(),
            reason,
        }),
        Err(Unreachable::Tls(explanation)) => Err(Error::Tls {
            host: target.host.clone(),
            reason: explanation.to_string(),
        }),
        Err(Unreachable::TlsStalled { addr, waited }) => {
            let (problem, fix) = stalled(addr, waited);
            Err(Error::Tls {
                host: target.host.clone(),
                reason: format!("{problem}; {fix}"),
            })
        }
        Err(Unreachable::NoH2(chosen)) => Err(Error::Tls {
            host: target.host.clone(),
            reason: format!(
                "the server does not speak HTTP/2 over TLS (ALPN chose {chosen}): enable \
                 http2 on the server, or leave out --http2"
            ),
        }),
        Err(Unreachable::NoH2c { addr, reason }) => Err(Error::NoH2c {
            addr: addr.to_string(),
            reason: format!(
                "{reason}; enable HTTP/2 on that port (nginx: `listen … http2`), or leave out \
                 --http2"
            ),
        }),
        Err(Unreachable::NoQuic { addr, waited }) => {
            let (problem, fix) = no_quic(addr, waited);
            Err(Error::Connect {
                addr: addr.to_string(),
                reason: format!("{problem}; {fix}"),
            })
        }
        Err(Unreachable::Quic(reason)) => Err(Error::Tls {
            host: target.host.clone(),
            reason,
        }),
    }
}

/// `tsumo doctor [--bind ADDRS] [URL]`: a line for the source addresses (with `--bind`) and the
/// pre-flight as one line (with a URL). Fails only on bad input (an unreadable `--cacert`).
pub fn doctor_checks(plan: &DoctorPlan) -> Result<Vec<Check>, Error> {
    let mut lines = Vec::new();
    if !plan.bind.is_empty() {
        let sources = source_check(&plan.bind);
        let failed = sources.verdict == Verdict::Fail;
        lines.push(sources);
        if failed {
            // Every connection from a missing address would fail: the target line would too.
            return Ok(lines);
        }
    }
    lines.extend(doctor_check(plan)?);
    Ok(lines)
}

/// Whether every `--bind` address is one of this host's.
fn source_check(bind: &[IpAddr]) -> Check {
    let name = "source addresses";
    let shown = match bind {
        [one] => one.to_string(),
        [first, .., last] => format!("{first} … {last}"),
        [] => String::new(),
    };
    let count = bind.len();
    match bind.iter().find_map(|&ip| super::source::unusable(ip)) {
        None => Check::ok(name, format!("{count} ({shown}), each on this host")),
        Some(reason) => Check::not_ok(
            Verdict::Fail,
            name,
            format!("{count} ({shown}): {reason}"),
            "add the address to an interface (`ip address add ADDR/32 dev DEVICE`) or leave it \
             out of --bind"
                .to_string(),
        ),
    }
}

/// The pre-flight as one check line (`None` without a URL).
fn doctor_check(plan: &DoctorPlan) -> Result<Option<Check>, Error> {
    let Some(target) = &plan.target else {
        return Ok(None);
    };
    let outcome = main_runtime()?.block_on(reach(Probe {
        target,
        insecure: plan.insecure,
        cacert: plan.cacert.as_deref(),
        timeout: DOCTOR_TIMEOUT,
        alpn: if plan.http3 { Alpn::H3 } else { Alpn::Http1 },
        bind: &plan.bind,
        quic: None,
    }))?;
    let fail = |finding: String, fix: String| Check {
        verdict: Verdict::Fail,
        name: "target",
        finding,
        fix: Some(fix),
    };
    let host = &target.host;
    let port = target.port();
    Ok(Some(match outcome {
        Ok(endpoint) => {
            let tls = match (target.scheme, plan.insecure, plan.http3) {
                (Scheme::Http, ..) => "",
                (Scheme::Https, false, false) => ", TLS handshake OK, certificate verified",
                (Scheme::Https, true, false) => {
                    ", TLS handshake OK (certificate not verified: --insecure)"
                }
                (Scheme::Https, false, true) => {
                    " over QUIC (h3), handshake OK, certificate verified"
                }
                (Scheme::Https, true, true) => {
                    " over QUIC (h3), handshake OK (certificate not verified: --insecure)"
                }
            };
            Check {
                verdict: Verdict::Ok,
                name: "target",
                finding: format!("{} answers{tls}", endpoint.addr),
                fix: None,
            }
        }
        Err(Unreachable::Resolve(reason)) => fail(
            format!("cannot resolve {host}:{port}: {reason}"),
            "check the host name in the URL".to_string(),
        ),
        Err(Unreachable::Connect { addr, reason }) => fail(
            format!("nothing answers at {addr}: {reason}"),
            "start the server, or correct the URL's host and port".to_string(),
        ),
        Err(Unreachable::Tls(explanation)) => fail(
            format!("TLS handshake with {host} failed: {}", explanation.problem),
            explanation
                .fix
                .unwrap_or_else(|| "check the server's TLS configuration".to_string()),
        ),
        Err(Unreachable::TlsStalled { addr, waited }) => {
            let (problem, fix) = stalled(addr, waited);
            fail(problem, fix.to_string())
        }
        Err(Unreachable::NoH2(chosen)) => fail(
            format!("{host} does not speak HTTP/2 (ALPN chose {chosen})"),
            "enable http2 on the server".to_string(),
        ),
        Err(Unreachable::NoH2c { addr, reason }) => fail(
            format!("{addr} does not speak h2c: {reason}"),
            "enable http2 on the server".to_string(),
        ),
        Err(Unreachable::NoQuic { addr, waited }) => {
            let (problem, fix) = no_quic(addr, waited);
            fail(problem, fix.to_string())
        }
        Err(Unreachable::Quic(reason)) => fail(
            format!("QUIC with {host} failed: {reason}"),
            "check the server's HTTP/3 configuration".to_string(),
        ),
    }))
}

/// The target's addresses, those of the `--bind` addresses' family when given; the outer error
/// is bad input (`--bind` addresses this host does not have, or of the other family only).
fn addresses(
    target: &Target,
    bind: &[IpAddr],
) -> Result<Result<Vec<SocketAddr>, Unreachable>, Error> {
    let mut addrs: Vec<SocketAddr> = match (target.host.as_str(), target.port()).to_socket_addrs() {
        Ok(addrs) => addrs.collect(),
        Err(e) => return Ok(Err(Unreachable::Resolve(e.to_string()))),
    };
    if addrs.is_empty() {
        return Ok(Err(Unreachable::Resolve("no addresses".into())));
    }
    if let Some(&first) = bind.first() {
        check_sources(bind)?;
        let resolved = addrs.clone();
        addrs.retain(|a| a.is_ipv4() == first.is_ipv4());
        if addrs.is_empty() {
            let (ours, theirs) = if first.is_ipv4() {
                ("IPv4", "IPv6")
            } else {
                ("IPv6", "IPv4")
            };
            let list: Vec<String> = resolved.iter().map(|a| a.ip().to_string()).collect();
            return Err(Error::Bind(format!(
                "the source addresses are {ours} but {} has only {theirs} addresses ({}); \
                 give {theirs} source addresses",
                target.host,
                list.join(", ")
            )));
        }
    }
    Ok(Ok(addrs))
}

/// Resolves and connects (and handshakes); the outer error is bad input (the TLS settings,
/// `--bind` addresses this host does not have or of the wrong family).
async fn reach(probe: Probe<'_>) -> Result<Result<Endpoint, Unreachable>, Error> {
    let Probe {
        target,
        insecure,
        cacert,
        timeout,
        alpn,
        bind,
        quic: _,
    } = probe;
    let port = target.port();
    let addrs = match addresses(target, bind)? {
        Ok(addrs) => addrs,
        Err(unreachable) => return Ok(Err(unreachable)),
    };
    if alpn == Alpn::H3 {
        return quic(probe, addrs).await;
    }
    let tls = match target.scheme {
        Scheme::Http => None,
        Scheme::Https => Some(TlsTarget::new(
            tls::client_config(insecure, cacert, alpn)?,
            tls::server_name(&target.host)?,
        )),
    };
    let mut last_error = None;
    for addr in addrs {
        let endpoint = Endpoint {
            addr,
            tls: tls.clone(),
            source: None,
        };
        let connect = endpoint.tcp_from(bind.first().copied());
        let tcp = match tokio::time::timeout(timeout, connect).await {
            Ok(Ok(tcp)) => tcp,
            Ok(Err(e)) => {
                last_error = Some((addr, e.to_string()));
                continue;
            }
            Err(_) => {
                last_error = Some((addr, format!("no answer within {timeout:?}")));
                continue;
            }
        };
        match tokio::time::timeout(timeout, endpoint.secure(tcp)).await {
            Ok(Ok((mut stream, _))) if alpn == Alpn::H2 && endpoint.tls.is_none() => {
                let answer = h2c_answer(&mut stream, timeout).await;
                close_politely(stream).await;
                return Ok(answer
                    .map(|()| endpoint.clone())
                    .map_err(|reason| Unreachable::NoH2c { addr, reason }));
            }
            Ok(Ok((stream, _))) => {
                let refused = match (alpn, &endpoint.tls, stream.alpn()) {
                    (Alpn::H2, Some(_), Some(b"h2"))
                    | (Alpn::H2, None, _)
                    | (Alpn::Http1 | Alpn::H3, ..) => None,
                    (Alpn::H2, Some(_), chosen) => Some(match chosen {
                        Some(id) => String::from_utf8_lossy(id).into_owned(),
                        None => "nothing".to_string(),
                    }),
                };
                close_politely(stream).await;
                return Ok(match refused {
                    None => Ok(endpoint),
                    Some(chosen) => Err(Unreachable::NoH2(chosen)),
                });
            }
            Ok(Err(ConnectError::Tls(e))) if alpn == Alpn::H2 && refused_alpn(&e) => {
                return Ok(Err(Unreachable::NoH2(
                    "nothing: it refused h2 with a no_application_protocol alert".into(),
                )))
            }
            Ok(Err(ConnectError::Tls(e))) => return Ok(Err(Unreachable::Tls(tls::explain(&e)))),
            Ok(Err(ConnectError::Tcp(e))) => last_error = Some((addr, e.to_string())),
            Err(_) => {
                return Ok(Err(Unreachable::TlsStalled {
                    addr,
                    waited: timeout,
                }))
            }
        }
    }
    let (addr, reason) =
        last_error.unwrap_or_else(|| (SocketAddr::from(([0, 0, 0, 0], port)), String::new()));
    Ok(Err(Unreachable::Connect { addr, reason }))
}

/// `--http3`'s check: a QUIC handshake (with `h3` offered) with the first address that
/// answers.
async fn quic(
    probe: Probe<'_>,
    addrs: Vec<SocketAddr>,
) -> Result<Result<Endpoint, Unreachable>, Error> {
    let target = probe.target;
    let made;
    let quic = match probe.quic {
        Some(quic) => quic,
        None => {
            made = QuicTarget::new(&target.host, probe.insecure, probe.cacert, false)?;
            &made
        }
    };
    let mut last = None;
    for addr in addrs {
        let client = quic.client(addr);
        let handshake = client.handshake(probe.bind.first().copied());
        match tokio::time::timeout(probe.timeout, handshake).await {
            Ok(Ok((endpoint, connection))) => {
                // The server's session ticket follows its handshake by a round trip: the run's
                // first connection resumes from it.
                tokio::time::sleep(connection.rtt() * 4 + Duration::from_millis(20)).await;
                connection.close(0u32.into(), b"");
                endpoint.wait_idle().await;
                let tls = TlsTarget::new(
                    tls::client_config(probe.insecure, probe.cacert, Alpn::H3)?,
                    tls::server_name(&target.host)?,
                );
                return Ok(Ok(Endpoint {
                    addr,
                    tls: Some(tls),
                    source: None,
                }));
            }
            Ok(Err(ConnectFailure::Quic(quinn::ConnectionError::TimedOut))) | Err(_) => {
                last = Some(Unreachable::NoQuic {
                    addr,
                    waited: probe.timeout,
                })
            }
            Ok(Err(ConnectFailure::Certificate(explained))) => {
                return Ok(Err(Unreachable::Tls(explained)))
            }
            Ok(Err(e)) => return Ok(Err(Unreachable::Quic(e.to_string()))),
        }
    }
    Ok(Err(
        last.unwrap_or(Unreachable::Resolve("no addresses".into()))
    ))
}

/// Every `--bind` address must be one this host can bind to: one line naming the first that is
/// not, before any traffic (else every connection from it would fail as a counted error).
fn check_sources(bind: &[IpAddr]) -> Result<(), Error> {
    match bind.iter().find_map(|&ip| super::source::unusable(ip)) {
        Some(reason) => Err(Error::Bind(reason)),
        None => Ok(()),
    }
}

/// Whether a handshake failed because the server speaks none of the protocols offered.
fn refused_alpn(e: &std::io::Error) -> bool {
    matches!(
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        Some(rustls::Error::AlertReceived(
            rustls::AlertDescription::NoApplicationProtocol
        )) | Some(rustls::Error::NoApplicationProtocol)
    )
}

/// HTTP/2's client preface and an empty SETTINGS frame (RFC 9113, section 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
/// SETTINGS ACK, then GOAWAY (last stream 0, NO_ERROR): the probe leaves as HTTP/2 would.
const H2_GOODBYE: &[u8] = b"\0\0\0\x04\x01\0\0\0\0\0\0\x08\x07\0\0\0\0\0\0\0\0\0\0\0\0\0";
/// The nine bytes of a frame header; a SETTINGS frame's type.
const FRAME_HEADER: usize = 9;
const SETTINGS: u8 = 0x4;

/// What an http:// server did instead of answering HTTP/2's preface with its SETTINGS.
#[derive(Debug, thiserror::Error)]
enum NoH2c {
    #[error("the connection failed on HTTP/2's preface: {0}")]
    Failed(std::io::Error),
    #[error("no answer to HTTP/2's preface within {0:?}")]
    Silent(Duration),
    #[error("it closed the connection on HTTP/2's preface")]
    Closed,
    /// An HTTP/1 server's status line, as it said it.
    #[error("it answered \"{0}\"")]
    Http1(String),
    #[error("its answer is not HTTP/2 (no SETTINGS frame first)")]
    Other,
}

/// Whether the server answers HTTP/2's preface with its own SETTINGS frame, as every HTTP/2
/// server must first (RFC 9113, section 3.4); else what it did, in words. By hand, these few
/// fixed bytes: hyper's client does not wait for the server's SETTINGS, and would tell an
/// HTTP/1.1 server's answer only as a frame error, not what the server said.
async fn h2c_answer(stream: &mut Stream, timeout: Duration) -> Result<(), NoH2c> {
    let exchange = async {
        stream.write_all(H2_PREFACE).await?;
        let mut first = Vec::new();
        let mut buf = [0u8; 512];
        while first.len() < FRAME_HEADER {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            first.extend_from_slice(&buf[..n]);
        }
        Ok::<_, std::io::Error>(first)
    };
    let first = match tokio::time::timeout(timeout, exchange).await {
        Ok(Ok(first)) => first,
        Ok(Err(e)) => return Err(NoH2c::Failed(e)),
        Err(_) => return Err(NoH2c::Silent(timeout)),
    };
    match first.get(..FRAME_HEADER) {
        Some(header) if header[3] == SETTINGS => {
            let _ = stream.write_all(H2_GOODBYE).await;
            Ok(())
        }
        _ if first.is_empty() => Err(NoH2c::Closed),
        _ if first.starts_with(b"HTTP/") => {
            let line = first.split(|&b| b == b'\n').next().unwrap_or_default();
            let line = String::from_utf8_lossy(line);
            Err(NoH2c::Http1(line.trim_end().to_string()))
        }
        _ => Err(NoH2c::Other),
    }
}

/// Closes the pre-flight connection with a TLS close_notify, so the server logs no error.
async fn close_politely(mut stream: Stream) {
    let _ = tokio::time::timeout(Duration::from_millis(100), stream.shutdown()).await;
}

/// [`preflight`] from outside a runtime, as every mode's main thread makes it before a run (and
/// `--vs` for both targets before round 1).
pub fn preflight_blocking(probe: Probe<'_>) -> Result<Endpoint, Error> {
    main_runtime()?.block_on(preflight(probe))
}

/// A current-thread runtime for the main thread's one-off checks.
fn main_runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Thread(e.to_string()))
}
