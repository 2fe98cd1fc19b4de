//! The real player (`--bot shanten`): it follows its own hand and the tiles in sight, and plays
//! by simple rules a reader can state —
//!
//! - own draw: win if the hand is complete and the win legal; in riichi discard the drawn tile;
//!   kan (closed or added) when the hand after it is no further from ready; otherwise discard
//!   the tile that keeps the lowest shanten, ties to the most unseen improving tiles, and
//!   declare riichi with it when closed, ready after it, with 1,000 points and 4 tiles left;
//! - another's discard: ron when legal and not furiten; pon a value honour; chi or pon when it
//!   lowers shanten and the hand then surely has a yaku; else pass. After a call, discard as
//!   above. Robbing an added kan when it completes the hand.
//!
//! Legality mirrors the server: furiten follows majiang-core `Game` (`_neng_rong`): reset by our
//! own discard unless in riichi, lost when a winning tile is in our river after our discard,
//! and when we pass on a tile that completes the hand. Strength is secondary. After a
//! reconnect the current hand is replayed from the game record the server sends.

pub mod choose;

use serde_json::Value;

use super::{Decision, GameState, Request, StepKind, Strategy};
use crate::mahjong::hand::shanten;
use crate::mahjong::hand::tile::{self, Counts};
use crate::mahjong::hand::yaku::WinContext;
use crate::mahjong::hand::{Hand, Meld};
use crate::mahjong::messages::Action;

/// Draws in a hand's wall (136 tiles − 14 dead − 52 dealt).
const WALL: i32 = 70;

#[derive(Debug, Clone)]
pub struct Real {
    /// Our hand; `None` until the deal, or after we lost track (then we play tsumogiri).
    hand: Option<Hand>,
    /// Tiles in sight outside our hand: every river, the melds, the dora indicators.
    visible: Counts,
    /// Kinds we discarded this hand (bit set), for furiten.
    river: u64,
    /// The server would accept our ron now (majiang-core `_neng_rong`).
    can_ron: bool,
    /// Draws left in the wall (majiang-core `paishu`).
    wall: i32,
    /// Kans declared this hand by anyone.
    kans: u8,
    /// Our points at the deal.
    points: i64,
    round_wind: u8,
    /// Rule `クイタンあり`.
    open_tanyao: bool,
    lost: Option<String>,
}

impl Default for Real {
    fn default() -> Self {
        Real {
            hand: None,
            visible: [0; tile::KINDS],
            river: 0,
            can_ron: true,
            wall: WALL,
            kans: 0,
            points: 0,
            round_wind: 0,
            open_tanyao: true,
            lost: None,
        }
    }
}

fn pass(think: bool) -> Decision {
    Decision {
        action: Action::Pass,
        think,
    }
}

fn act(action: Action) -> Decision {
    Decision {
        action,
        think: true,
    }
}

fn field<'a>(payload: &'a Value, key: &str) -> &'a str {
    payload.get(key).and_then(Value::as_str).unwrap_or("")
}

impl Real {
    pub fn new() -> Real {
        Real::default()
    }

    fn lose_track(&mut self, why: String) {
        self.hand = None;
        self.lost.get_or_insert(why);
    }

    fn ctx(&self, tsumo: bool, my_l: u8) -> WinContext {
        WinContext {
            tsumo,
            round_wind: self.round_wind,
            seat_wind: my_l,
            open_tanyao: self.open_tanyao,
        }
    }

    fn deal(&mut self, payload: &Value, my_l: u8) {
        *self = Real {
            open_tanyao: self.open_tanyao,
            lost: self.lost.take(),
            ..Real::default()
        };
        self.round_wind = payload
            .get("zhuangfeng")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u8
            % 4;
        self.points = payload
            .get("defen")
            .and_then(|d| d.get(usize::from(my_l)))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if let Some((t, _)) = tile::parse(field(payload, "baopai")) {
            self.visible[usize::from(t)] += 1;
        }
        let shoupai = payload
            .get("shoupai")
            .and_then(|s| s.get(usize::from(my_l)))
            .and_then(Value::as_str)
            .unwrap_or("");
        match Hand::parse(shoupai) {
            Ok(hand) if hand.tiles() == 13 => self.hand = Some(hand),
            _ => self.lose_track(format!("cannot read the dealt hand {shoupai:?}")),
        }
    }

    /// Our draw: tsumo, kan, riichi or discard.
    fn on_draw(&mut self, drawn: &str, after_kan: bool, my_l: u8) -> Decision {
        let tsumogiri = act(Action::Discard(format!("{drawn}_")));
        let ctx = self.ctx(true, my_l);
        let Some(hand) = &mut self.hand else {
            return tsumogiri;
        };
        if let Err(e) = hand.draw(drawn) {
            self.lose_track(e.0);
            return tsumogiri;
        }
        let hand = &*hand;
        let situational = hand.riichi || after_kan || self.wall == 0;
        if choose::win_is_legal(hand, &hand.counts, &ctx, situational) {
            return act(Action::Hule);
        }
        if hand.riichi {
            return tsumogiri;
        }
        let Some(discard) = choose::best_discard(hand, &self.visible) else {
            return tsumogiri;
        };
        if self.wall > 0 && self.kans < 4 {
            for meld in hand.kan_options() {
                let mut after = hand.clone();
                if after.kan(&meld).is_ok() && after.shanten() <= discard.shanten {
                    return act(Action::Gang(meld));
                }
            }
        }
        let mut text = discard.text;
        if hand.closed() && self.wall >= 4 && self.points >= 1000 && discard.shanten == 0 {
            let mut after = hand.clone();
            if after.discard(&text).is_ok() && shanten::waits(&after.counts, after.melds()) != 0 {
                text.push('*');
            }
        }
        act(Action::Discard(text))
    }

    /// Our own discard, as the server announced it.
    fn own_discard(&mut self, p: &str) {
        let Some(hand) = &mut self.hand else { return };
        if !hand.riichi {
            self.can_ron = true;
        }
        if let Err(e) = hand.discard(p) {
            self.lose_track(e.0);
            return;
        }
        if let Some((t, _)) = tile::parse(p) {
            self.river |= 1 << t;
        }
        if hand.shanten() == 0 && shanten::waits(&hand.counts, hand.melds()) & self.river != 0 {
            self.can_ron = false;
        }
    }

    /// Another player's tile we may win on (a discard, or the tile of an added kan): ron when
    /// legal; if the tile completes our hand and we pass, we are furiten until our discard.
    fn on_offer(&mut self, p: &str, situational: bool, my_l: u8) -> Option<Decision> {
        let hand = self.hand.as_ref()?;
        let (t, _) = tile::parse(p)?;
        let mut counts = hand.counts;
        if counts[usize::from(t)] >= 4 {
            return None;
        }
        counts[usize::from(t)] += 1;
        let situational = situational || hand.riichi || self.wall == 0;
        let ctx = self.ctx(false, my_l);
        if !crate::mahjong::hand::yaku::complete(&counts, &hand.melds) {
            return None;
        }
        if self.can_ron && choose::win_is_legal(hand, &counts, &ctx, situational) {
            return Some(act(Action::Hule));
        }
        self.can_ron = false;
        Some(pass(true))
    }

    fn on_discard(&mut self, l: u8, p: &str, my_l: u8) -> Decision {
        if let Some(decision) = self.on_offer(p, false, my_l) {
            return decision;
        }
        let Some(hand) = &self.hand else {
            return pass(false);
        };
        if hand.riichi || self.wall == 0 {
            return pass(false);
        }
        let mark = ['_', '+', '=', '-'][usize::from((4 + l - my_l) % 4)];
        let mut options = hand.pon_options(p, mark);
        if mark == '-' {
            options.extend(hand.chi_options(p));
        }
        if options.is_empty() {
            return pass(false);
        }
        match choose::choose_call(hand, &options, &self.ctx(false, my_l), &self.visible) {
            Some(meld) => act(Action::Fulou(meld)),
            None => pass(true),
        }
    }

    /// In a replay: another's tile we could have won on went by unclaimed, so if it completes
    /// our hand we are furiten until our next discard (as after a pass).
    fn passed_offer(&mut self, p: &str) {
        let (Some(hand), Some((t, _))) = (&self.hand, tile::parse(p)) else {
            return;
        };
        let mut counts = hand.counts;
        if counts[usize::from(t)] >= 4 {
            return;
        }
        counts[usize::from(t)] += 1;
        if crate::mahjong::hand::yaku::complete(&counts, &hand.melds) {
            self.can_ron = false;
        }
    }

    /// Back after a disconnect: the reconnect `kaiju` (no seq) carries the game record so far,
    /// unfiltered (every hand and every draw shown), so the current hand — the last of the
    /// log — is replayed event by event as if it had been played: our hand, the tiles in
    /// sight, our river and furiten, the wall, the kans. `game` already has the round and hand
    /// number from the same log. A hand that is over (its last event a win or a draw) leaves
    /// nothing to rebuild: the next deal follows.
    fn rejoin(&mut self, game: &GameState, payload: &Value) {
        let open_tanyao = payload
            .get("rule")
            .and_then(|r| r.get("クイタンあり"))
            .and_then(Value::as_bool)
            .unwrap_or(self.open_tanyao);
        *self = Real {
            open_tanyao,
            lost: self.lost.take(),
            ..Real::default()
        };
        let Some(my_l) = game.my_l() else {
            return self.lose_track("rejoined without a seat".into());
        };
        let events = payload
            .get("log")
            .and_then(Value::as_array)
            .and_then(|hands| hands.last())
            .and_then(Value::as_array);
        for event in events.into_iter().flatten() {
            let Some((key, body)) = event.as_object().and_then(|o| o.iter().next()) else {
                continue;
            };
            let l = body.get("l").and_then(Value::as_u64).map(|l| l as u8);
            let ours = l == Some(my_l);
            match key.as_str() {
                "qipai" => self.deal(body, my_l),
                "zimo" | "gangzimo" => {
                    self.wall -= 1;
                    if let (true, Some(hand)) = (ours, &mut self.hand) {
                        if let Err(e) = hand.draw(field(body, "p")) {
                            self.lose_track(format!("rejoined: {}", e.0));
                        }
                    }
                }
                "dapai" => {
                    let p = field(body, "p");
                    if let Some((t, _)) = tile::parse(p) {
                        self.visible[usize::from(t)] += 1;
                    }
                    if ours {
                        self.own_discard(p);
                    } else {
                        self.passed_offer(p);
                    }
                }
                "fulou" => self.on_meld(StepKind::Fulou, field(body, "m"), ours),
                "gang" => {
                    let m = field(body, "m");
                    self.on_meld(StepKind::Gang, m, ours);
                    let added = m.bytes().any(|b| matches!(b, b'+' | b'=' | b'-'));
                    if !ours && added && m.len() >= 2 {
                        self.passed_offer(&format!("{}{}", &m[..1], &m[m.len() - 1..]));
                    }
                }
                "kaigang" => {
                    if let Some((t, _)) = tile::parse(field(body, "baopai")) {
                        self.visible[usize::from(t)] += 1;
                    }
                }
                // The hand is over; the next deal starts afresh.
                "hule" | "pingju" => self.hand = None,
                _ => {}
            }
        }
    }

    /// A meld announced (`fulou` or `gang`): tiles come into sight; ours change our hand.
    fn on_meld(&mut self, step: StepKind, m: &str, ours: bool) {
        let Some(meld) = Meld::parse(m) else { return };
        let added = step == StepKind::Gang && meld.open;
        if added {
            // Only the added tile is new in sight.
            if let Some(t) = meld.tiles().last() {
                self.visible[usize::from(t)] += 1;
            }
        } else {
            let from_discard = usize::from(step == StepKind::Fulou);
            for t in meld.tiles().skip(from_discard) {
                self.visible[usize::from(t)] += 1;
            }
        }
        if meld.kind == crate::mahjong::hand::MeldKind::Kan {
            self.kans += 1;
        }
        if ours {
            if let Some(hand) = &mut self.hand {
                let applied = if step == StepKind::Fulou {
                    hand.call(m)
                } else {
                    hand.kan(m)
                };
                if let Err(e) = applied {
                    self.lose_track(e.0);
                }
            }
        }
    }
}

impl Strategy for Real {
    fn decide(&mut self, game: &GameState, request: &Request<'_>) -> Decision {
        let payload = request.payload;
        let Some(my_l) = game.my_l() else {
            return match request.drawn {
                Some(p) => act(Action::Discard(format!("{p}_"))),
                None => pass(false),
            };
        };
        let l = payload.get("l").and_then(Value::as_u64).map(|l| l as u8);
        let ours = l == Some(my_l);

        match request.step {
            StepKind::Kaiju => {
                let rule = payload.get("rule");
                self.open_tanyao = rule
                    .and_then(|r| r.get("クイタンあり"))
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                pass(false)
            }
            StepKind::Qipai => {
                self.deal(payload, my_l);
                pass(false)
            }
            StepKind::Zimo | StepKind::Gangzimo => {
                self.wall -= 1;
                match request.drawn {
                    Some(p) if ours => self.on_draw(p, request.step == StepKind::Gangzimo, my_l),
                    Some(p) => act(Action::Discard(format!("{p}_"))),
                    None => pass(false),
                }
            }
            StepKind::Dapai => {
                let p = field(payload, "p");
                if let Some((t, _)) = tile::parse(p) {
                    self.visible[usize::from(t)] += 1;
                }
                match l {
                    Some(l) if l == my_l => {
                        self.own_discard(p);
                        pass(false)
                    }
                    Some(l) => self.on_discard(l, p, my_l),
                    None => pass(false),
                }
            }
            StepKind::Fulou => {
                let m = field(payload, "m");
                self.on_meld(StepKind::Fulou, m, ours);
                match &self.hand {
                    Some(hand) if ours && hand.drawn == crate::mahjong::hand::Drawn::Call => {
                        match choose::best_discard(hand, &self.visible) {
                            Some(d) => act(Action::Discard(d.text)),
                            None => pass(true),
                        }
                    }
                    _ => pass(false),
                }
            }
            StepKind::Gang => {
                let m = field(payload, "m");
                self.on_meld(StepKind::Gang, m, ours);
                let added = m.bytes().any(|b| matches!(b, b'+' | b'=' | b'-'));
                if ours || !added {
                    return pass(false);
                }
                // Robbing the kan: the added tile, a certain yaku of its own.
                let robbed = format!("{}{}", &m[..1], &m[m.len() - 1..]);
                self.on_offer(&robbed, true, my_l).unwrap_or(pass(false))
            }
            _ => pass(false),
        }
    }

    fn notice(&mut self, game: &GameState, key: &str, payload: &Value) {
        match key {
            "kaigang" => {
                if let Some((t, _)) = tile::parse(field(payload, "baopai")) {
                    self.visible[usize::from(t)] += 1;
                }
            }
            "kaiju" => self.rejoin(game, payload),
            _ => {}
        }
    }

    fn take_lost_track(&mut self) -> Option<String> {
        self.lost.take()
    }
}

#[cfg(test)]
mod tests;
