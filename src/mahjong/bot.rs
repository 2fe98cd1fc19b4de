//! One player's view of a game, as a state machine fed every `GAME` message. It answers every
//! request (the server stalls a table until all four reply) and keeps just enough state to know
//! whose turn it is and where the game stands. What to answer is a [`Strategy`]: [`Tsumogiri`]
//! (discard the drawn tile, never call or win: every game the same length) or [`real::Real`]
//! (plays: discards by shanten, riichi, calls, wins). The bot checks that the server did what
//! each answer asked ([`outcome`]) and counts what its player did.
//!
//! Pure logic: no clock and no socket. The driver sends [`Reply::body`] and applies think time
//! when [`Reply::think`] is set.

pub mod outcome;
pub mod real;

use crate::mahjong::messages::{quote, Action, ProtocolError};
use crate::stats::mahjong::PlayStats;
use outcome::Expect;
use serde_json::{json, Map, Value};

/// The kind of request that opened a step; the driver splits step intervals by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKind {
    Kaiju,
    Qipai,
    Zimo,
    Dapai,
    Fulou,
    Gang,
    Gangzimo,
    Hule,
    Pingju,
    Jieju,
    Unknown,
}

impl StepKind {
    /// Every kind, in report order.
    pub const ALL: [StepKind; 11] = [
        StepKind::Kaiju,
        StepKind::Qipai,
        StepKind::Zimo,
        StepKind::Dapai,
        StepKind::Fulou,
        StepKind::Gang,
        StepKind::Gangzimo,
        StepKind::Hule,
        StepKind::Pingju,
        StepKind::Jieju,
        StepKind::Unknown,
    ];

    /// The protocol's own name for the step (stable: used as a key in reports).
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Kaiju => "kaiju",
            StepKind::Qipai => "qipai",
            StepKind::Zimo => "zimo",
            StepKind::Dapai => "dapai",
            StepKind::Fulou => "fulou",
            StepKind::Gang => "gang",
            StepKind::Gangzimo => "gangzimo",
            StepKind::Hule => "hule",
            StepKind::Pingju => "pingju",
            StepKind::Jieju => "jieju",
            StepKind::Unknown => "unknown",
        }
    }

    fn from_key(key: &str) -> StepKind {
        match key {
            "kaiju" => StepKind::Kaiju,
            "qipai" => StepKind::Qipai,
            "zimo" => StepKind::Zimo,
            "dapai" => StepKind::Dapai,
            "fulou" => StepKind::Fulou,
            "gang" => StepKind::Gang,
            "gangzimo" => StepKind::Gangzimo,
            "hule" => StepKind::Hule,
            "pingju" => StepKind::Pingju,
            "jieju" => StepKind::Jieju,
            _ => StepKind::Unknown,
        }
    }
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub seq: u64,
    /// What to answer; [`crate::mahjong::messages::game_reply`] writes the frame.
    pub action: Action,
    pub step: StepKind,
    /// A decision a person would think about (our draw, our discard after a call, a call or
    /// win on offer): the driver applies think time before sending.
    pub think: bool,
}

impl Reply {
    /// The argument of the `GAME` event: `{"seq":n}` or `{"dapai":"<tile>_","seq":n}`.
    pub fn body(&self) -> Value {
        match &self.action {
            Action::Pass => json!({ "seq": self.seq }),
            Action::Discard(tile) => json!({ "dapai": tile, "seq": self.seq }),
            Action::Hule => json!({ "hule": "-", "seq": self.seq }),
            Action::Gang(meld) => json!({ "gang": meld, "seq": self.seq }),
            Action::Fulou(meld) => json!({ "fulou": meld, "seq": self.seq }),
        }
    }
}

/// A strategy's answer: the action, and whether a person would have thought about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub think: bool,
}

/// A request as a strategy sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub seq: u64,
    pub step: StepKind,
    /// The object under the request's payload key (`{"l":3,"p":"m0"}` for a zimo).
    pub payload: &'a Value,
    /// The tile we drew, on our own zimo/gangzimo.
    pub drawn: Option<&'a str>,
}

/// How a player plays. Only requests need an answer; notifications are offered for strategies
/// that keep their own view of the table.
pub trait Strategy {
    fn decide(&mut self, game: &GameState, request: &Request<'_>) -> Decision;

    /// Why the strategy lost track of its hand since last asked, if it did.
    fn take_lost_track(&mut self) -> Option<String> {
        None
    }

    /// A notification (`players`, `say`, `kaigang`, reconnect `kaiju`): its key and payload.
    fn notice(&mut self, _game: &GameState, _key: &str, _payload: &Value) {}
}

/// Discards every drawn tile and passes on everything else: never calls, never wins, so every
/// hand is an exhaustive draw of fixed length.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tsumogiri;

impl Strategy for Tsumogiri {
    fn decide(&mut self, _game: &GameState, request: &Request<'_>) -> Decision {
        match request.drawn {
            Some(tile) => Decision {
                action: Action::Discard(format!("{tile}_")),
                think: true,
            },
            None => Decision {
                action: Action::Pass,
                think: false,
            },
        }
    }
}

/// The strategy a run's `--bot` names, chosen once per player.
#[derive(Debug, Clone)]
pub enum AnyStrategy {
    Tsumogiri(Tsumogiri),
    Real(Box<real::Real>),
}

impl AnyStrategy {
    pub fn new(kind: crate::plan::BotKind) -> AnyStrategy {
        match kind {
            crate::plan::BotKind::Tsumogiri => AnyStrategy::Tsumogiri(Tsumogiri),
            crate::plan::BotKind::Shanten => AnyStrategy::Real(Box::default()),
        }
    }
}

impl Strategy for AnyStrategy {
    fn decide(&mut self, game: &GameState, request: &Request<'_>) -> Decision {
        match self {
            AnyStrategy::Tsumogiri(s) => s.decide(game, request),
            AnyStrategy::Real(s) => s.decide(game, request),
        }
    }

    fn notice(&mut self, game: &GameState, key: &str, payload: &Value) {
        match self {
            AnyStrategy::Tsumogiri(s) => s.notice(game, key, payload),
            AnyStrategy::Real(s) => s.notice(game, key, payload),
        }
    }

    fn take_lost_track(&mut self) -> Option<String> {
        match self {
            AnyStrategy::Tsumogiri(s) => s.take_lost_track(),
            AnyStrategy::Real(s) => s.take_lost_track(),
        }
    }
}

/// Where the game stands, from this player's seat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameState {
    /// Our seat id (0–3, fixed for the game), from `kaiju.id`.
    pub seat: Option<u8>,
    /// Seat id of the first dealer, from `kaiju.qijia`.
    pub qijia: Option<u8>,
    /// Round wind of the current hand (0 = East).
    pub zhuangfeng: u8,
    /// Hand number within the round (0–3).
    pub jushu: u8,
    /// Hands dealt (`qipai`).
    pub hands: u32,
    /// Wins announced (`hule`; a double ron counts twice).
    pub wins: u32,
    /// Drawn hands (`pingju`).
    pub draws: u32,
    /// Our own draws answered (zimo + gangzimo).
    pub own_draws: u32,
    /// The last request's seq.
    pub last_seq: Option<u64>,
    /// `jieju` seen: the game is over (`END` follows our reply).
    pub ended: bool,
    /// Our final rank (1–4) from `jieju`.
    pub rank: Option<u8>,
}

impl GameState {
    /// Our wind position in the current hand (0 = dealer): `(id + 8 - qijia - jushu) % 4`.
    pub fn my_l(&self) -> Option<u8> {
        let (seat, qijia) = (self.seat?, self.qijia?);
        Some((seat + 8 - qijia - self.jushu) % 4)
    }
}

/// A player: game state plus a strategy.
#[derive(Debug, Clone, Default)]
pub struct Bot<S = Tsumogiri> {
    strategy: S,
    game: GameState,
    /// What the next request must show if our last action was carried out.
    expect: Expect,
    /// What this player did, and what the server did not carry out.
    stats: PlayStats,
}

impl Bot<Tsumogiri> {
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S: Strategy> Bot<S> {
    pub fn with_strategy(strategy: S) -> Self {
        Bot {
            strategy,
            game: GameState::default(),
            expect: Expect::Nothing,
            stats: PlayStats::default(),
        }
    }

    /// What the player did since the last call (counts and rejected replies), and resets them.
    pub fn take_stats(&mut self) -> PlayStats {
        std::mem::take(&mut self.stats)
    }

    pub fn state(&self) -> &GameState {
        &self.game
    }

    /// Feeds one `GAME` message. A request (it has `seq`) gets a reply; a notification updates
    /// state and gets none.
    pub fn on_game(&mut self, msg: &Value) -> Result<Option<Reply>, ProtocolError> {
        let Some(obj) = msg.as_object() else {
            return Err(ProtocolError::NotObject(quote(msg)));
        };
        let Some(seq) = obj.get("seq") else {
            self.on_notification(obj)?;
            return Ok(None);
        };
        let seq = seq
            .as_u64()
            .ok_or_else(|| ProtocolError::BadSeq(quote(msg)))?;
        let (key, payload) = obj
            .iter()
            .find(|(key, _)| *key != "seq" && *key != "timer")
            .ok_or_else(|| ProtocolError::NoPayload {
                seq,
                message: quote(msg),
            })?;
        let step = StepKind::from_key(key);
        let drawn = self.apply(step, payload)?;
        let my_l = self.game.my_l();
        self.expect = std::mem::take(&mut self.expect).check(step, payload, my_l, &mut self.stats);
        outcome::count(step, payload, my_l, &mut self.stats);
        self.game.last_seq = Some(seq);
        let request = Request {
            seq,
            step,
            payload,
            drawn,
        };
        let Decision { action, think } = self.strategy.decide(&self.game, &request);
        if let Some(why) = self.strategy.take_lost_track() {
            self.stats.lost_track += 1;
            if self.stats.first_rejected.len() < crate::stats::mahjong::KEPT_ERRORS {
                self.stats
                    .first_rejected
                    .push(format!("lost track of the hand: {why}"));
            }
        }
        if self.expect == Expect::Nothing {
            self.expect = Expect::of(&action, step);
        }
        Ok(Some(Reply {
            seq,
            action,
            step,
            think,
        }))
    }

    /// Updates state for a request; returns the tile we drew, on our own draw.
    fn apply<'a>(
        &mut self,
        step: StepKind,
        payload: &'a Value,
    ) -> Result<Option<&'a str>, ProtocolError> {
        let game = &mut self.game;
        if step == StepKind::Unknown {
            return Ok(None);
        }
        let Some(fields) = payload.as_object() else {
            return Err(bad_field(step.as_str(), "payload object", payload));
        };
        match step {
            StepKind::Kaiju => {
                let (seat, qijia) = kaiju_seats(fields, payload)?;
                *game = GameState {
                    seat: Some(seat),
                    qijia: Some(qijia),
                    ..GameState::default()
                };
            }
            StepKind::Qipai => {
                game.zhuangfeng = small(fields, "zhuangfeng", "qipai", payload)?;
                game.jushu = small(fields, "jushu", "qipai", payload)?;
                game.hands += 1;
            }
            StepKind::Zimo | StepKind::Gangzimo => {
                small(fields, "l", step.as_str(), payload)?;
                let Some(tile) = fields.get("p").and_then(Value::as_str) else {
                    return Err(bad_field(step.as_str(), "p", payload));
                };
                if !tile.is_empty() {
                    game.own_draws += 1;
                    return Ok(Some(tile));
                }
            }
            StepKind::Hule => game.wins += 1,
            StepKind::Pingju => game.draws += 1,
            StepKind::Jieju => {
                game.ended = true;
                game.rank = game
                    .seat
                    .and_then(|seat| fields.get("rank")?.get(usize::from(seat))?.as_u64())
                    .and_then(|rank| u8::try_from(rank).ok());
            }
            StepKind::Dapai | StepKind::Fulou | StepKind::Gang | StepKind::Unknown => {}
        }
        Ok(None)
    }

    fn on_notification(&mut self, obj: &Map<String, Value>) -> Result<(), ProtocolError> {
        for (key, payload) in obj {
            if key == "kaiju" {
                self.on_rejoin(payload)?;
            }
            self.strategy.notice(&self.game, key, payload);
        }
        Ok(())
    }

    /// The `kaiju` sent on reconnect, without seq: rebuild state from its `log` (one array of
    /// events per hand so far, the last being the current hand).
    fn on_rejoin(&mut self, payload: &Value) -> Result<(), ProtocolError> {
        let Some(fields) = payload.as_object() else {
            return Err(bad_field("kaiju", "payload object", payload));
        };
        let (seat, qijia) = kaiju_seats(fields, payload)?;
        let mut game = GameState {
            seat: Some(seat),
            qijia: Some(qijia),
            last_seq: self.game.last_seq,
            ..GameState::default()
        };
        let hands = match fields.get("log") {
            None => &[][..],
            Some(Value::Array(hands)) => hands.as_slice(),
            Some(_) => return Err(bad_field("kaiju", "log", payload)),
        };
        for hand in hands {
            let Some(events) = hand.as_array() else {
                return Err(bad_field("kaiju", "log", payload));
            };
            for event in events {
                if let Some(qipai) = event.get("qipai").and_then(Value::as_object) {
                    game.zhuangfeng = small(qipai, "zhuangfeng", "kaiju log qipai", payload)?;
                    game.jushu = small(qipai, "jushu", "kaiju log qipai", payload)?;
                    game.hands += 1;
                } else if event.get("hule").is_some() {
                    game.wins += 1;
                } else if event.get("pingju").is_some() {
                    game.draws += 1;
                }
            }
        }
        self.game = game;
        // A reply sent before the disconnect may or may not have been carried out: not a
        // refusal either way.
        self.expect = Expect::Nothing;
        Ok(())
    }
}

fn bad_field(step: &'static str, field: &'static str, message: &Value) -> ProtocolError {
    ProtocolError::BadField {
        step,
        field,
        message: quote(message),
    }
}

/// A field that must be a number 0–3 (seat ids, wind positions, winds, hand numbers).
fn small(
    fields: &Map<String, Value>,
    field: &'static str,
    step: &'static str,
    payload: &Value,
) -> Result<u8, ProtocolError> {
    fields
        .get(field)
        .and_then(Value::as_u64)
        .filter(|n| *n <= 3)
        .map(|n| n as u8)
        .ok_or_else(|| bad_field(step, field, payload))
}

fn kaiju_seats(fields: &Map<String, Value>, payload: &Value) -> Result<(u8, u8), ProtocolError> {
    Ok((
        small(fields, "id", "kaiju", payload)?,
        small(fields, "qijia", "kaiju", payload)?,
    ))
}

#[cfg(test)]
mod tests;
