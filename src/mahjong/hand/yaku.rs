//! Is a win legal? The server (majiang-core `Game.allow_hule`) accepts a win when the hand is
//! complete and either a situational yaku is certain (riichi, a draw after a kan, robbing a
//! kan, the last tile) or `Majiang.Util.hule` finds a yaku in the hand itself. Scoring stays
//! the server's job; the bot only needs "surely a yaku", so this checks the yaku that do not
//! depend on how the hand is split into sets, and answers `false` when unsure — it may miss a
//! win (pinfu, iipeikou, toitoi…), it never claims one the server refuses.

use super::shanten;
use super::shoupai::{Meld, MeldKind};
use super::tile::{is_yaojiu, Counts, Tile};

/// The situation of a win that the yaku depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WinContext {
    /// Our own draw (tsumo), not another player's tile (ron).
    pub tsumo: bool,
    /// Round wind, 0 = East.
    pub round_wind: u8,
    /// Our seat wind in the hand (our wind position `l`), 0 = East.
    pub seat_wind: u8,
    /// Open all-simples counts (rule `クイタンあり`).
    pub open_tanyao: bool,
}

/// The concealed tiles `c` (the winning tile included) with `melds` make a complete hand
/// (majiang-core `xiangting == -1`).
pub fn complete(c: &Counts, melds: &[Meld]) -> bool {
    shanten::shanten(c, melds.len() as u8, false) == -1
}

/// A complete hand (see [`complete`]) surely has a yaku: seven pairs, thirteen orphans,
/// closed tsumo, all simples, a value-honour triplet, or one suit (with or without honours).
pub fn sure_yaku(c: &Counts, melds: &[Meld], ctx: &WinContext) -> bool {
    let n = melds.len() as u8;
    if shanten::seven_pairs(c, n) == -1 || shanten::thirteen_orphans(c, n) == -1 {
        return true;
    }
    let closed = !melds.iter().any(|m| m.open);
    if closed && ctx.tsumo {
        return true;
    }
    let concealed = (0..c.len() as Tile).filter(|&t| c[usize::from(t)] > 0);
    let all = || concealed.clone().chain(melds.iter().flat_map(Meld::tiles));
    if (closed || ctx.open_tanyao) && !all().any(is_yaojiu) {
        return true;
    }
    // Honours can only be sets as triplets, so three in the hand are a triplet in every split.
    let value = [27 + ctx.round_wind, 27 + ctx.seat_wind, 31, 32, 33];
    let triplet = |t: Tile| {
        c[usize::from(t)] >= 3 || melds.iter().any(|m| m.kind != MeldKind::Chi && m.tile == t)
    };
    if value.into_iter().any(triplet) {
        return true;
    }
    let mut suits = all().filter(|&t| t < 27).map(|t| t / 9);
    match suits.next() {
        None => true,
        Some(first) => suits.all(|s| s == first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mahjong::hand::{parse_counts, Hand};

    fn check(text: &str, tsumo: bool, seat_wind: u8) -> (bool, bool) {
        let hand = Hand::parse(text).unwrap();
        let ctx = WinContext {
            tsumo,
            round_wind: 0,
            seat_wind,
            open_tanyao: true,
        };
        (
            complete(&hand.counts, &hand.melds),
            sure_yaku(&hand.counts, &hand.melds, &ctx),
        )
    }

    #[test]
    fn sure_and_unsure() {
        // Closed tsumo: always; the same hand on ron, West seat, has no yaku at all.
        assert_eq!(check("m123p456s789m11z222", true, 2), (true, true));
        assert_eq!(check("m123p456s789m11z222", false, 2), (true, false));
        // South is the seat wind of l = 1, East the round wind: value triplets.
        assert_eq!(check("m123p456s789m11z222", false, 1), (true, true));
        assert_eq!(check("m123p456s789m11z111", false, 2), (true, true));
        // Open all simples, white pon, one suit.
        assert_eq!(check("m234p567s33s678,m456-", false, 2), (true, true));
        assert_eq!(check("m123p456s99s789,z555=", false, 2), (true, true));
        assert_eq!(check("m12345678999,s789-", false, 2), (true, false));
        assert_eq!(check("m12345678999,m789-", false, 2), (true, true));
        // Seven pairs and thirteen orphans on ron.
        assert_eq!(check("m1133p2244s5566z77", false, 2), (true, true));
        assert_eq!(check("m19p19s19z12345677", false, 2), (true, true));
        // Not complete.
        assert!(!check("m123p456s789m12z222", true, 1).0);
        let (c, _) = parse_counts("m123p456s789m11z22");
        assert!(!complete(&c, &[]));
    }
}
