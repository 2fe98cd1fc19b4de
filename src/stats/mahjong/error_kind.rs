//! What a mahjong player's error was, as the report groups errors: one variant per kind, named
//! in the words tsumo has always saved (`error_kinds`' keys); the player's own message, naming
//! it, is kept beside as an example.

use std::fmt;

/// The step of a player's session a failed attempt belongs to, as its kind opens: `login: …`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Login,
    Connect,
    /// The socket.io handshake, up to the server's HELLO.
    Ready,
    /// Seating a table (ROOM, and the room filling up).
    Form,
    Logout,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Login => "login",
            Step::Connect => "connect",
            Step::Ready => "ready",
            Step::Form => "form",
            Step::Logout => "logout",
        }
    }
}

/// A kind of error, the same for every player it happens to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A step that failed, and why in words without the player's name (`login: connect failed:
    /// Connection refused (os error 111)`, `logout: not done within --logout-timeout 5s`).
    Failed(Step, String),
    /// `WebSocket protocol violation`.
    WebSocketViolation,
    /// `the server disconnected the socket`.
    Disconnected,
    /// `socket.io connect error`.
    SocketIoConnect,
    /// `malformed socket.io frame`.
    MalformedFrame,
    /// `malformed message from the server`.
    MalformedMessage,
    /// `malformed GAME message`.
    MalformedGame,
    /// `HELLO null: the server did not accept the login cookie`.
    HelloNull,
    /// `END without a record: the server aborted the game`.
    AbortedGame,
    /// `server ERROR <message>`, its room numbers left out.
    ServerError(String),
    /// `players not done by the end`: the session's, not one player's.
    NotDoneByTheEnd,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fixed = match self {
            ErrorKind::Failed(step, why) => return write!(f, "{}: {why}", step.as_str()),
            ErrorKind::ServerError(message) => return write!(f, "server ERROR {message}"),
            ErrorKind::WebSocketViolation => "WebSocket protocol violation",
            ErrorKind::Disconnected => "the server disconnected the socket",
            ErrorKind::SocketIoConnect => "socket.io connect error",
            ErrorKind::MalformedFrame => "malformed socket.io frame",
            ErrorKind::MalformedMessage => "malformed message from the server",
            ErrorKind::MalformedGame => "malformed GAME message",
            ErrorKind::HelloNull => "HELLO null: the server did not accept the login cookie",
            ErrorKind::AbortedGame => "END without a record: the server aborted the game",
            ErrorKind::NotDoneByTheEnd => "players not done by the end",
        };
        f.write_str(fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind is saved as the words today's files hold.
    #[test]
    fn error_kinds_are_saved_in_todays_words() {
        let why = |text: &str| text.to_string();
        let cases = [
            (
                ErrorKind::Failed(Step::Login, why("no answer by the end of the run")),
                "login: no answer by the end of the run",
            ),
            (
                ErrorKind::Failed(Step::Connect, why("connect failed: Connection refused")),
                "connect: connect failed: Connection refused",
            ),
            (
                ErrorKind::Failed(Step::Ready, why("no HELLO from the server in time")),
                "ready: no HELLO from the server in time",
            ),
            (
                ErrorKind::Failed(Step::Form, why("room not full after 10s")),
                "form: room not full after 10s",
            ),
            (
                ErrorKind::Failed(Step::Logout, why("timed out")),
                "logout: timed out",
            ),
            (
                ErrorKind::WebSocketViolation,
                "WebSocket protocol violation",
            ),
            (
                ErrorKind::Disconnected,
                "the server disconnected the socket",
            ),
            (ErrorKind::SocketIoConnect, "socket.io connect error"),
            (ErrorKind::MalformedFrame, "malformed socket.io frame"),
            (
                ErrorKind::MalformedMessage,
                "malformed message from the server",
            ),
            (ErrorKind::MalformedGame, "malformed GAME message"),
            (
                ErrorKind::HelloNull,
                "HELLO null: the server did not accept the login cookie",
            ),
            (
                ErrorKind::AbortedGame,
                "END without a record: the server aborted the game",
            ),
            (
                ErrorKind::ServerError(why("room N is full")),
                "server ERROR room N is full",
            ),
            (ErrorKind::NotDoneByTheEnd, "players not done by the end"),
        ];
        for (kind, saved) in cases {
            assert_eq!(kind.to_string(), saved);
        }
    }
}
