//! Shanten (向聴数: tiles away from ready; 0 = ready, −1 = complete) the way majiang-core's
//! `Majiang.Util.xiangting` counts it, because the server decides riichi, furiten and wins with
//! that function: a bot that counts differently would ask for things the server refuses.
//!
//! Standard form: majiang-core splits each suit on its own into two candidate summaries —
//! `a` (fewest isolated tiles) and `b` (most sets) — and combines the eight choices with the
//! honours, once with no pair set aside and once for every pair. A suit's summary depends only
//! on its nine counts, so it is looked up in a table (`table`). What costs is the
//! combination over suits, and a bot asks for many shanten that differ in one suit (each
//! discard, then each tile that might come): `parts` keeps each suit's summaries, with and
//! without each of its pairs, so a changed tile recomputes one suit. Seven pairs and thirteen
//! orphans are counts, as in majiang-core.

mod parts;
mod table;

pub use parts::{Outlook, Parts};
pub use table::{is_built, warm_up};

use super::tile::{Counts, YAOJIU};

/// "Not possible" (seven pairs or thirteen orphans with melds): majiang-core's `Infinity`.
pub const IMPOSSIBLE: i32 = 99;

/// majiang-core `_xiangting`: shanten from sets, partial sets and isolated tiles, with a pair
/// set aside (`pair`) or not.
const fn formula(mut m: i32, mut d: i32, mut g: i32, pair: bool) -> i32 {
    let n = if pair { 4 } else { 5 };
    if m > 4 {
        d += m - 4;
        m = 4;
    }
    if m + d > 4 {
        g += m + d - 4;
        d = 4 - m;
    }
    if m + d + g > n {
        g = n - m - d;
    }
    if pair {
        d += 1;
    }
    13 - m * 3 - d * 2 - g
}

/// Standard-form shanten (majiang-core `xiangting_yiban`) of the concealed tiles `c` with
/// `melds` melds. `after_call`: the hand has just called and not yet discarded (majiang-core
/// then reports a complete-looking hand as 0, not −1).
pub fn standard(c: &Counts, melds: u8, after_call: bool) -> i32 {
    Parts::new(c, melds).standard(after_call)
}

/// Seven-pairs shanten (majiang-core `xiangting_qidui`).
pub fn seven_pairs(c: &Counts, melds: u8) -> i32 {
    let (mut pairs, mut singles) = (0i32, 0i32);
    for &count in c {
        match count {
            0 => {}
            1 => singles += 1,
            _ => pairs += 1,
        }
    }
    seven_pairs_of(pairs, singles, melds)
}

/// Seven-pairs shanten from the kinds held twice or more (`pairs`) and once (`singles`).
fn seven_pairs_of(pairs: i32, singles: i32, melds: u8) -> i32 {
    if melds > 0 {
        return IMPOSSIBLE;
    }
    let pairs = pairs.min(7);
    let singles = singles.min(7 - pairs);
    13 - pairs * 2 - singles
}

/// Thirteen-orphans shanten (majiang-core `xiangting_guoshi`).
pub fn thirteen_orphans(c: &Counts, melds: u8) -> i32 {
    let kinds = YAOJIU.iter().filter(|&&t| c[usize::from(t)] >= 1).count() as i32;
    let pair = YAOJIU.iter().any(|&t| c[usize::from(t)] >= 2);
    thirteen_orphans_of(kinds, pair, melds)
}

/// Thirteen-orphans shanten from the terminal and honour kinds held, and whether one of them
/// is held twice or more.
fn thirteen_orphans_of(kinds: i32, pair: bool, melds: u8) -> i32 {
    if melds > 0 {
        return IMPOSSIBLE;
    }
    if pair {
        12 - kinds
    } else {
        13 - kinds
    }
}

/// Shanten: the least of the three forms (majiang-core `xiangting`).
pub fn shanten(c: &Counts, melds: u8, after_call: bool) -> i32 {
    Parts::new(c, melds).shanten(after_call)
}

/// Waits (majiang-core `tingpai`) of a hand without a drawn tile: the kinds that lower its
/// shanten, leaving out kinds the hand already holds four of. As a bit set over kinds.
pub fn waits(c: &Counts, melds: u8) -> u64 {
    let parts = Parts::new(c, melds);
    parts.lowering(parts.shanten(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mahjong::hand::parse_counts;

    fn sh(text: &str, melds: u8) -> i32 {
        shanten(&parse_counts(text).0, melds, false)
    }

    #[test]
    fn known_hands() {
        assert_eq!(sh("m123p456s789z11z222", 0), -1);
        assert_eq!(sh("m123p456s789z11z22", 0), 0);
        assert_eq!(sh("m11223344556677", 0), -1);
        assert_eq!(sh("m19p19s19z1234567", 0), 0);
        assert_eq!(sh("m19p19s19z12345677", 0), -1);
        assert_eq!(sh("m1p1s1z1", 3), 2);
        assert_eq!(sh("m147p258s369z1234", 0), 6);
        assert_eq!(sh("m22", 4), -1);
        assert_eq!(sh("m2", 4), 0);
        assert_eq!(sh("m2233", 3), 0);
    }

    #[test]
    fn after_call_quirk_and_waits() {
        let (c, _) = parse_counts("m123p456s789z11z22");
        assert_eq!(standard(&c, 0, false), 0);
        let w = waits(&c, 0);
        assert_eq!(w, 1 << 27 | 1 << 28, "shanpon on East and South");
        let (c, _) = parse_counts("m123p456s789z22");
        assert_eq!(standard(&c, 1, false), -1);
        assert_eq!(standard(&c, 1, true), 0);
    }
}
