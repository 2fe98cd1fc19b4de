//! The hand as majiang-core's `Shoupai` keeps it, and the options it offers: legal discards
//! (`get_dapai`), chi, pon and kan melds (`get_chi_mianzi`, `get_peng_mianzi`,
//! `get_gang_mianzi`). The server accepts a reply only if it equals one of these strings
//! exactly, so they are built the same way, red fives (`0`) and direction marks included.

use super::shanten;
use super::tile::{self, Counts, Tile};

/// What the hand holds beyond its 13 (or fewer, with melds) tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    /// Waiting: others' turn.
    None,
    /// A drawn tile (our turn): its kind and whether it is a red five.
    Tile { tile: Tile, red: bool },
    /// Just called chi or pon: our turn, a discard is due, no drawn tile.
    Call,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeldKind {
    Chi,
    Pon,
    Kan,
}

/// A meld as the server writes it (`m3-45`, `p444+`, `s5550`, `z111=1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meld {
    pub text: String,
    pub kind: MeldKind,
    /// The lowest kind in the meld.
    pub tile: Tile,
    /// Made with another player's tile (a direction mark): the hand is no longer closed.
    pub open: bool,
}

impl Meld {
    /// Parses a meld string; `None` if it is not one.
    pub fn parse(text: &str) -> Option<Meld> {
        let bytes = text.as_bytes();
        let s = *bytes.first()?;
        let mut kinds: Vec<Tile> = bytes[1..]
            .iter()
            .filter(|b| b.is_ascii_digit())
            .map(|&n| tile::kind(s, n))
            .collect::<Option<_>>()?;
        kinds.sort_unstable();
        let kind = match kinds.as_slice() {
            [a, b, c] if a == b && b == c => MeldKind::Pon,
            [a, b, c, d] if a == b && b == c && c == d => MeldKind::Kan,
            [a, b, c] if s != b'z' && *b == a + 1 && *c == b + 1 => MeldKind::Chi,
            _ => return None,
        };
        Some(Meld {
            text: text.to_string(),
            kind,
            tile: kinds[0],
            open: text.bytes().any(|b| matches!(b, b'+' | b'=' | b'-')),
        })
    }

    /// Every tile of the meld, by kind.
    pub fn tiles(&self) -> impl Iterator<Item = Tile> + '_ {
        let s = self.text.as_bytes()[0];
        self.text
            .bytes()
            .filter(|b| b.is_ascii_digit())
            .filter_map(move |n| tile::kind(s, n))
    }

    /// The digits that came from the caller's hand (those not followed by a direction mark).
    fn hand_digits(&self) -> Vec<u8> {
        let b = self.text.as_bytes();
        (1..b.len())
            .filter(|&i| b[i].is_ascii_digit())
            .filter(|&i| !matches!(b.get(i + 1), Some(b'+' | b'=' | b'-')))
            .map(|i| b[i])
            .collect()
    }
}

/// One player's hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hand {
    /// Concealed tiles by kind, the drawn tile included; red fives are counted as fives.
    pub counts: Counts,
    /// Red fives among the concealed fives, per suit (m, p, s).
    pub red: [u8; 3],
    pub melds: Vec<Meld>,
    pub drawn: Drawn,
    pub riichi: bool,
}

/// A hand string or meld the hand cannot take (a tile it does not hold, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandError(pub String);

impl Hand {
    /// The dealt hand (`qipai.shoupai[l]`), e.g. `m669p12247s16z167`; melds after commas.
    pub fn parse(text: &str) -> Result<Hand, HandError> {
        let (counts, red) = super::parse_counts(text);
        if counts.iter().any(|&c| c > 4) {
            return Err(HandError(format!("more than four of a tile in {text}")));
        }
        let mut melds = Vec::new();
        for m in text.split(',').skip(1).filter(|m| !m.is_empty()) {
            melds.push(Meld::parse(m).ok_or_else(|| HandError(format!("bad meld {m}")))?);
        }
        Ok(Hand {
            counts,
            red,
            melds,
            drawn: Drawn::None,
            riichi: text.split(',').next().is_some_and(|c| c.ends_with('*')),
        })
    }

    /// Concealed tile count.
    pub fn tiles(&self) -> u8 {
        self.counts.iter().sum()
    }

    /// No meld made with another player's tile (closed kans keep a hand closed).
    pub fn closed(&self) -> bool {
        !self.melds.iter().any(|m| m.open)
    }

    pub fn melds(&self) -> u8 {
        self.melds.len() as u8
    }

    /// Shanten of the hand as it stands (majiang-core `xiangting`).
    pub fn shanten(&self) -> i32 {
        shanten::shanten(&self.counts, self.melds(), self.drawn == Drawn::Call)
    }

    /// Red fives held of kind `t` (0 unless `t` is a five of a suit).
    fn red_of(&self, t: Tile) -> u8 {
        if t < 27 && tile::number(t) == 5 {
            self.red[tile::suit(t)]
        } else {
            0
        }
    }

    fn add(&mut self, t: Tile, red: bool) -> Result<(), HandError> {
        let slot = &mut self.counts[usize::from(t)];
        if *slot >= 4 {
            return Err(HandError(format!("a fifth {}", tile::name(t, red))));
        }
        *slot += 1;
        if red {
            self.red[tile::suit(t)] += 1;
        }
        Ok(())
    }

    /// Removes one tile (majiang-core `decrease`): a red five only when asked for one.
    fn remove(&mut self, t: Tile, red: bool) -> Result<(), HandError> {
        let count = self.counts[usize::from(t)];
        let reds = self.red_of(t);
        let ok = count > 0 && if red { reds > 0 } else { count > reds };
        if !ok {
            return Err(HandError(format!("no {} to remove", tile::name(t, red))));
        }
        self.counts[usize::from(t)] -= 1;
        if red {
            self.red[tile::suit(t)] -= 1;
        }
        Ok(())
    }

    /// Our draw (`zimo` or `gangzimo`): `m3`, `p0`.
    pub fn draw(&mut self, text: &str) -> Result<(), HandError> {
        let (t, red) = tile::parse(text).ok_or_else(|| HandError(format!("bad tile {text}")))?;
        self.add(t, red)?;
        self.drawn = Drawn::Tile { tile: t, red };
        Ok(())
    }

    /// Our discard as the server announced it (`m3`, `m3_`, `m3*`, `m3_*`).
    pub fn discard(&mut self, text: &str) -> Result<(), HandError> {
        let (t, red) = tile::parse(text).ok_or_else(|| HandError(format!("bad tile {text}")))?;
        self.remove(t, red)?;
        self.drawn = Drawn::None;
        if text.ends_with('*') {
            self.riichi = true;
        }
        Ok(())
    }

    /// Our chi, pon or open kan (`fulou`): its tiles from the hand go into the meld.
    pub fn call(&mut self, text: &str) -> Result<(), HandError> {
        let meld = Meld::parse(text).ok_or_else(|| HandError(format!("bad meld {text}")))?;
        let s = text.as_bytes()[0];
        for n in meld.hand_digits() {
            let t = tile::kind(s, n).ok_or_else(|| HandError(format!("bad meld {text}")))?;
            self.remove(t, n == b'0')?;
        }
        self.drawn = if meld.kind == MeldKind::Kan {
            Drawn::None
        } else {
            Drawn::Call
        };
        self.melds.push(meld);
        Ok(())
    }

    /// Our closed (`m1111`) or added (`p444+4`) kan.
    pub fn kan(&mut self, text: &str) -> Result<(), HandError> {
        let meld = Meld::parse(text).ok_or_else(|| HandError(format!("bad meld {text}")))?;
        let s = text.as_bytes()[0];
        if meld.open {
            let base = text.get(..5).unwrap_or("");
            let i = self
                .melds
                .iter()
                .position(|m| m.text == base)
                .ok_or_else(|| HandError(format!("no pon for {text}")))?;
            let n = *text.as_bytes().last().unwrap_or(&b'x');
            let t = tile::kind(s, n).ok_or_else(|| HandError(format!("bad meld {text}")))?;
            self.remove(t, n == b'0')?;
            self.melds[i] = meld;
        } else {
            for n in text.bytes().skip(1) {
                let t = tile::kind(s, n).ok_or_else(|| HandError(format!("bad meld {text}")))?;
                self.remove(t, n == b'0')?;
            }
            self.melds.push(meld);
        }
        self.drawn = Drawn::None;
        Ok(())
    }

    /// The discards the server accepts now (majiang-core `get_dapai(true)`: no swap-calling),
    /// in its order; the drawn tile last, with `_`.
    pub fn legal_discards(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut deny = 0u64;
        match self.drawn {
            Drawn::None => return out,
            Drawn::Call => {
                if let Some(m) = self.melds.last() {
                    deny = swap_call_denied(&m.text);
                }
            }
            Drawn::Tile { .. } => {}
        }
        if !self.riichi {
            for t in 0..tile::KINDS as Tile {
                let count = self.counts[usize::from(t)];
                if count == 0 || deny & 1 << t != 0 {
                    continue;
                }
                if self.drawn
                    == (Drawn::Tile {
                        tile: t,
                        red: false,
                    })
                    && count == 1
                {
                    continue;
                }
                if t >= 27 || tile::number(t) != 5 {
                    out.push(tile::name(t, false));
                    continue;
                }
                let red = self.red_of(t);
                let drawn_red = self.drawn == Drawn::Tile { tile: t, red: true };
                if red > 0 && !drawn_red || red > 1 {
                    out.push(tile::name(t, true));
                }
                if red < count {
                    out.push(tile::name(t, false));
                }
            }
        }
        if let Drawn::Tile { tile: t, red } = self.drawn {
            out.push(format!("{}_", tile::name(t, red)));
        }
        out
    }

    fn b(&self, s: usize, n: u8) -> u8 {
        if (1..=9).contains(&n) {
            self.counts[s * 9 + usize::from(n) - 1]
        } else {
            0
        }
    }

    /// Chi melds on `discard` (its first two characters) from the player on our left
    /// (majiang-core `get_chi_mianzi(p + '-', true)`).
    pub fn chi_options(&self, discard: &str) -> Vec<String> {
        let mut out = Vec::new();
        let Some((t, _)) = tile::parse(discard) else {
            return out;
        };
        if self.drawn != Drawn::None || self.riichi || t >= 27 {
            return out;
        }
        let s = tile::suit(t);
        let sc = tile::SUITS[s] as char;
        let digit = discard.as_bytes()[1] as char;
        let n = tile::number(t);
        let red = self.red[s];
        let five = self.b(s, 5);
        let room = 14 - (i32::from(self.melds()) + 1) * 3;
        let b = |k: u8| i32::from(self.b(s, k));
        if n >= 3
            && b(n - 2) > 0
            && b(n - 1) > 0
            && (if n > 3 { b(n - 3) } else { 0 }) + b(n) < room
        {
            if n - 2 == 5 && red > 0 {
                out.push(format!("{sc}067-"));
            }
            if n - 1 == 5 && red > 0 {
                out.push(format!("{sc}406-"));
            }
            if n - 2 != 5 && n - 1 != 5 || red < five {
                out.push(format!("{sc}{}{}{digit}-", n - 2, n - 1));
            }
        }
        if (2..=8).contains(&n) && b(n - 1) > 0 && b(n + 1) > 0 && b(n) < room {
            if n - 1 == 5 && red > 0 {
                out.push(format!("{sc}06-7"));
            }
            if n + 1 == 5 && red > 0 {
                out.push(format!("{sc}34-0"));
            }
            if n - 1 != 5 && n + 1 != 5 || red < five {
                out.push(format!("{sc}{}{digit}-{}", n - 1, n + 1));
            }
        }
        if n <= 7 && b(n + 1) > 0 && b(n + 2) > 0 && b(n) + if n < 7 { b(n + 3) } else { 0 } < room
        {
            if n + 1 == 5 && red > 0 {
                out.push(format!("{sc}4-06"));
            }
            if n + 2 == 5 && red > 0 {
                out.push(format!("{sc}3-40"));
            }
            if n + 1 != 5 && n + 2 != 5 || red < five {
                out.push(format!("{sc}{digit}-{}{}", n + 1, n + 2));
            }
        }
        out
    }

    /// Pon melds on `discard` from the player in direction `mark` (`+`, `=`, `-`)
    /// (majiang-core `get_peng_mianzi`).
    pub fn pon_options(&self, discard: &str, mark: char) -> Vec<String> {
        let mut out = Vec::new();
        let Some((t, _)) = tile::parse(discard) else {
            return out;
        };
        if self.drawn != Drawn::None || self.riichi {
            return out;
        }
        let count = self.counts[usize::from(t)];
        let red = self.red_of(t);
        let s = tile::SUITS[tile::suit(t)] as char;
        let digit = discard.as_bytes()[1] as char;
        let n = tile::number(t);
        if count >= 2 {
            if n == 5 && red >= 2 {
                out.push(format!("{s}00{digit}{mark}"));
            }
            if n == 5 && red >= 1 && count - red >= 1 {
                out.push(format!("{s}50{digit}{mark}"));
            }
            if n != 5 || count - red >= 2 {
                out.push(format!("{s}{n}{n}{digit}{mark}"));
            }
        }
        out
    }

    /// Closed and added kans on our draw (majiang-core `get_gang_mianzi()`), before the
    /// table's limits (no tiles left, four kans already).
    pub fn kan_options(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Drawn::Tile { tile: drawn, .. } = self.drawn else {
            return out;
        };
        for t in 0..tile::KINDS as Tile {
            let count = self.counts[usize::from(t)];
            if count == 0 {
                continue;
            }
            let s = tile::SUITS[tile::suit(t)] as char;
            let n = tile::number(t);
            if count == 4 {
                if self.riichi && t != drawn {
                    continue;
                }
                let red = usize::from(self.red_of(t));
                if n == 5 {
                    out.push(format!("{s}{}{}", "5".repeat(4 - red), "0".repeat(red)));
                } else {
                    out.push(format!("{s}{n}{n}{n}{n}"));
                }
            } else if !self.riichi {
                // An added kan: a pon of this kind (held tiles of a kind rule out its kan).
                for m in &self.melds {
                    if m.kind == MeldKind::Pon && m.tile == t {
                        let add = if n == 5 && self.red_of(t) > 0 { 0 } else { n };
                        out.push(format!("{}{add}", m.text));
                    }
                }
            }
        }
        out
    }
}

/// Kinds a hand may not discard right after the chi or pon `meld` (no swap-calling): the
/// claimed kind, and for a chi the kind at the other end of the run.
fn swap_call_denied(meld: &str) -> u64 {
    let b = meld.as_bytes();
    let s = b[0];
    let mark = b.iter().position(|c| matches!(c, b'+' | b'=' | b'-'));
    let n = mark
        .and_then(|i| i.checked_sub(1))
        .map(|i| b[i])
        .filter(u8::is_ascii_digit)
        .map_or(5, |d| if d == b'0' { 5 } else { d - b'0' });
    let Some(claimed) = tile::kind(s, b'0' + n) else {
        return 0;
    };
    let mut deny = 1u64 << claimed;
    // majiang-core replaces only the first red five before it asks "is this a pon?".
    let normalized = meld.replacen('0', "5", 1).into_bytes();
    let pon_like =
        normalized.len() >= 4 && normalized[1] == normalized[2] && normalized[2] == normalized[3];
    if !pon_like && s != b'z' {
        // `s4-56`: the claimed tile first, so the kind three above would swap; `s456-`:
        // claimed last, three below.
        let claimed_first = b.len() == 5 && b[2] == b'-';
        let claimed_last = b.len() == 5 && b[4] == b'-';
        if n < 7 && claimed_first {
            deny |= 1 << (claimed + 3);
        }
        if n > 3 && claimed_last {
            deny |= 1 << (claimed - 3);
        }
    }
    deny
}

#[cfg(test)]
mod tests;
