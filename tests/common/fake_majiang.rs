//! An in-process stand-in for majiang-server that misbehaves where the real one cannot: it
//! logs players in and out as the real one does (a `MAJIANG` cookie, `302`), but its WebSocket
//! upgrade or its lobby is broken on purpose ([`Fault`]). Hand-written on std sockets, one
//! thread per connection: a test needs a few players only.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// What the stand-in gets wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers the upgrade `101` with a `Sec-WebSocket-Accept` of random bytes (a different
    /// one each time), then closes.
    BadAccept,
    /// A correct WebSocket and socket.io handshake up to `HELLO`, then silence: `ROOM` (create
    /// or join) is never answered. The close handshake is answered.
    RoomNeverAnswered,
}

/// How the stand-in answers logins and logouts (by default as the real one: at once).
#[derive(Debug, Clone, Copy, Default)]
pub struct Accounts {
    /// Every login answers after this long.
    pub login_delay: Duration,
    /// The first login of the run answers after this long (the others as `login_delay` says).
    pub first_login_delay: Duration,
    /// Logouts answer `503` until this long after the first logout came.
    pub logout_fails_for: Duration,
}

/// What the stand-in saw of the accounts.
#[derive(Debug, Default)]
struct Seen {
    /// Sessions made (cookies set) and not logged out.
    sessions: HashSet<String>,
    logins: u64,
    logins_in_flight: u64,
    most_logins_in_flight: u64,
    first_logout: Option<Instant>,
}

pub struct FakeMajiang {
    port: u16,
    seen: Arc<Mutex<Seen>>,
}

impl FakeMajiang {
    /// Listens on a free port of 127.0.0.1 for the rest of the test process.
    pub fn start(fault: Fault) -> FakeMajiang {
        FakeMajiang::with_accounts(fault, Accounts::default())
    }

    /// As [`FakeMajiang::start`], its logins and logouts answered as `accounts` says.
    pub fn with_accounts(fault: Fault, accounts: Accounts) -> FakeMajiang {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake majiang-server");
        let port = listener.local_addr().expect("local addr").port();
        let counter = Arc::new(AtomicU64::new(0));
        let shared = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counter = Arc::clone(&counter);
                let seen = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    let _ = serve(stream, fault, n, &Fake { accounts, seen });
                });
            }
        });
        FakeMajiang { port, seen }
    }

    /// Sessions made and not logged out.
    pub fn sessions_left(&self) -> usize {
        lock(&self.seen).sessions.len()
    }

    /// The most logins it was answering at once.
    pub fn most_logins_at_once(&self) -> u64 {
        lock(&self.seen).most_logins_in_flight
    }

    /// The base URL tsumo is given.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/server", self.port)
    }
}

/// What every connection's thread shares.
struct Fake {
    accounts: Accounts,
    seen: Arc<Mutex<Seen>>,
}

fn lock(seen: &Mutex<Seen>) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A login: counted in flight while it waits its delay, then a session made.
fn log_in(out: &mut TcpStream, fake: &Fake, n: u64) -> std::io::Result<()> {
    let delay = {
        let mut seen = lock(&fake.seen);
        seen.logins_in_flight += 1;
        seen.most_logins_in_flight = seen.most_logins_in_flight.max(seen.logins_in_flight);
        let first = seen.logins == 0;
        seen.logins += 1;
        match first {
            true => fake
                .accounts
                .first_login_delay
                .max(fake.accounts.login_delay),
            false => fake.accounts.login_delay,
        }
    };
    std::thread::sleep(delay);
    let cookie = format!("fake{n}");
    {
        let mut seen = lock(&fake.seen);
        seen.logins_in_flight -= 1;
        seen.sessions.insert(cookie.clone());
    }
    write!(
        out,
        "HTTP/1.1 302 Found\r\nSet-Cookie: MAJIANG={cookie}; Path=/\r\nLocation: /\r\n\
         Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// A logout: `503` while logouts fail, else the session (its cookie) ended.
fn log_out(out: &mut TcpStream, fake: &Fake, cookie: &str) -> std::io::Result<()> {
    let failing = {
        let mut seen = lock(&fake.seen);
        let first = *seen.first_logout.get_or_insert_with(Instant::now);
        let failing = first.elapsed() < fake.accounts.logout_fails_for;
        if !failing {
            seen.sessions.remove(cookie);
        }
        failing
    };
    match failing {
        true => out.write_all(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ),
        false => {
            out.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
    }
}

/// One connection: one request (login, logout, the upgrade, or anything else: 404).
fn serve(stream: TcpStream, fault: Fault, n: u64, fake: &Fake) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut key = String::new();
    let mut cookie = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        let (name, value) = line.split_once(':').unwrap_or((&line, ""));
        match name.to_ascii_lowercase().as_str() {
            "sec-websocket-key" => key = value.trim().to_string(),
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "cookie" => cookie = value.trim().trim_start_matches("MAJIANG=").to_string(),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    let path = request_line.split_whitespace().nth(1).unwrap_or("");
    if path.starts_with("/server/auth") {
        log_in(&mut out, fake, n)?;
    } else if path.starts_with("/server/logout") {
        log_out(&mut out, fake, &cookie)?;
    } else if path.starts_with("/server/socket.io/") && !key.is_empty() {
        let accept = match fault {
            // Random for every connection, as a broken proxy's would be.
            Fault::BadAccept => derive_accept_key(&random_bytes(n)),
            Fault::RoomNeverAnswered => derive_accept_key(key.as_bytes()),
        };
        write!(
            out,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\n\r\n"
        )?;
        if fault == Fault::RoomNeverAnswered {
            for text in [
                r#"0{"sid":"fake","upgrades":[],"pingInterval":25000,"pingTimeout":60000}"#
                    .to_string(),
                r#"40{"sid":"fake"}"#.to_string(),
                format!(r#"42["HELLO",{{"name":"fake{n}","uid":"uid{n}"}}]"#),
            ] {
                out.write_all(&frame(0x1, text.as_bytes()))?;
            }
            // Read the client's frames, answering nothing but its close.
            while let Some(opcode) = read_frame(&mut reader)? {
                if opcode == 0x8 {
                    out.write_all(&frame(0x8, &[0x03, 0xE8]))?;
                    break;
                }
            }
        }
    } else {
        out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
    }
    out.flush()
}

/// 16 bytes that differ for every `n`.
fn random_bytes(n: u64) -> [u8; 16] {
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    std::array::from_fn(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    })
}

/// An unmasked server frame (payloads under 126 bytes).
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut bytes = vec![0x80 | opcode, payload.len() as u8];
    bytes.extend_from_slice(payload);
    bytes
}

/// Reads one masked client frame; its opcode, or `None` at the end of the stream.
fn read_frame(reader: &mut impl Read) -> std::io::Result<Option<u8>> {
    let mut head = [0u8; 2];
    if reader.read_exact(&mut head).is_err() {
        return Ok(None);
    }
    let mut len = u64::from(head[1] & 0x7F);
    if len == 126 {
        let mut ext = [0u8; 2];
        reader.read_exact(&mut ext)?;
        len = u64::from(u16::from_be_bytes(ext));
    } else if len == 127 {
        let mut ext = [0u8; 8];
        reader.read_exact(&mut ext)?;
        len = u64::from_be_bytes(ext);
    }
    let mask = if head[1] & 0x80 != 0 { 4 } else { 0 };
    std::io::copy(&mut reader.take(mask + len), &mut std::io::sink())?;
    Ok(Some(head[0] & 0x0F))
}
