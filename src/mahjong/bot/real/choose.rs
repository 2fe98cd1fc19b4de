//! The choices of the real player, as pure functions of a hand and the tiles in sight: which
//! tile to discard, whether to call, whether a win is legal. Separate from the table-following
//! code so they can be tested on fixed hands and timed (`benches/decide.rs`).

use crate::mahjong::hand::shanten;
use crate::mahjong::hand::tile::{self, Counts, Tile};
use crate::mahjong::hand::yaku::{self, WinContext};
use crate::mahjong::hand::{Hand, MeldKind};

/// A discard chosen: the exact text to send and the shanten it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discard {
    pub text: String,
    pub shanten: i32,
    /// Tiles still unseen that would lower that shanten.
    pub improving: u32,
}

/// The discard that keeps the lowest shanten; ties go to the one leaving more unseen
/// improving tiles, then to honours and terminals, then to the drawn tile. `None` when the
/// hand has nothing to discard.
pub fn best_discard(hand: &Hand, visible: &Counts) -> Option<Discard> {
    let options = hand.legal_discards();
    let mut outlook = shanten::Outlook::new(&hand.counts, hand.melds());
    // Each kind once, with the hand it leaves and that hand's shanten.
    let mut kinds: Vec<(Tile, shanten::Parts, i32)> = Vec::with_capacity(options.len());
    for text in &options {
        let Some((t, _)) = tile::parse(text) else {
            continue;
        };
        if kinds.iter().any(|&(k, _, _)| k == t) {
            continue;
        }
        let after = outlook.after(t);
        let s = after.shanten(false);
        kinds.push((t, after, s));
    }
    let least = kinds.iter().map(|&(_, _, s)| s).min()?;
    let drawn = match hand.drawn {
        crate::mahjong::hand::Drawn::Tile { tile, .. } => Some(tile),
        _ => None,
    };
    let mut best: Option<((u32, u8, bool), Tile)> = None;
    for (t, after, s) in kinds.iter().filter(|&&(_, _, s)| s == least) {
        let lowering = outlook.lowering_after(*t, after, *s);
        let improving = unseen(lowering, &hand.counts, *t, visible);
        let edge = if *t >= 27 {
            2
        } else {
            u8::from(tile::is_yaojiu(*t))
        };
        let key = (improving, edge, Some(*t) == drawn);
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((key, *t));
        }
    }
    let ((improving, _, _), t) = best?;
    // The text for that kind: keep red fives (they are dora), prefer the drawn copy.
    let text = options
        .iter()
        .filter(|o| tile::parse(o).is_some_and(|(k, _)| k == t))
        .min_by_key(|o| (o.contains('0'), !o.contains('_')))?
        .clone();
    Some(Discard {
        text,
        shanten: least,
        improving,
    })
}

/// Tiles of the kinds in `kinds` (a bit set) not yet seen: neither in `visible` nor in the
/// hand `counts` once `discarded` has left it.
fn unseen(kinds: u64, counts: &Counts, discarded: Tile, visible: &Counts) -> u32 {
    let mut total = 0u32;
    let mut bits = kinds;
    while bits != 0 {
        let k = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let held = counts[k] - u8::from(k == usize::from(discarded));
        total += u32::from(4u8.saturating_sub(visible[k]).saturating_sub(held));
    }
    total
}

/// The value honours of a seat: dragons, the round wind, the seat wind.
pub fn is_value_honour(t: Tile, round_wind: u8, seat_wind: u8) -> bool {
    t >= 31 || t == 27 + round_wind || t == 27 + seat_wind
}

/// The call to make on a discard, from the melds the server offers (`options`), or `None`:
/// pon a value honour always; otherwise call only when it lowers the shanten and the hand
/// after the call surely has a yaku (a value-honour meld, or all simples where open all
/// simples counts). Among several, the one leaving the lowest shanten.
pub fn choose_call(
    hand: &Hand,
    options: &[String],
    ctx: &WinContext,
    visible: &Counts,
) -> Option<String> {
    let before = hand.shanten();
    let mut best: Option<((bool, i32), String)> = None;
    for meld in options {
        let mut after = hand.clone();
        if after.call(meld).is_err() {
            continue;
        }
        let value = |m: &crate::mahjong::hand::Meld| {
            m.kind != MeldKind::Chi && is_value_honour(m.tile, ctx.round_wind, ctx.seat_wind)
        };
        let value_pon = after.melds.last().is_some_and(value);
        if !value_pon && !after.melds.iter().any(value) && !simples_possible(&after, ctx) {
            // No yaku whatever the discard: the call is refused below, so the discard (most of
            // a call decision's time) is not worth choosing.
            continue;
        }
        let Some(discard) = best_discard(&after, visible) else {
            continue;
        };
        let simples = ctx.open_tanyao && {
            let mut counts = after.counts;
            if let Some((t, _)) = tile::parse(&discard.text) {
                counts[usize::from(t)] -= 1;
            }
            let concealed = (0..tile::KINDS as Tile).filter(|&t| counts[usize::from(t)] > 0);
            !concealed
                .chain(after.melds.iter().flat_map(|m| m.tiles()))
                .any(tile::is_yaojiu)
        };
        let has_yaku = after.melds.iter().any(value) || simples;
        if !(value_pon || discard.shanten < before && has_yaku) {
            continue;
        }
        let key = (value_pon, -discard.shanten);
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((key, meld.clone()));
        }
    }
    best.map(|(_, meld)| meld)
}

/// Whether all simples can still hold after one discard from `hand` (just after a call): open
/// all simples allowed, no meld with a terminal or honour, and at most one such tile
/// concealed (the discard may be it).
fn simples_possible(hand: &Hand, ctx: &WinContext) -> bool {
    let concealed: u8 = tile::YAOJIU
        .iter()
        .map(|&t| hand.counts[usize::from(t)])
        .sum();
    ctx.open_tanyao
        && concealed <= 1
        && !hand
            .melds
            .iter()
            .flat_map(|m| m.tiles())
            .any(tile::is_yaojiu)
}

/// Whether the server accepts a win with `counts` (the winning tile included): complete, and
/// either a situational yaku is certain (`situational`: riichi, a draw after a kan, robbing a
/// kan, the last tile) or [`yaku::sure_yaku`] finds one.
pub fn win_is_legal(hand: &Hand, counts: &Counts, ctx: &WinContext, situational: bool) -> bool {
    yaku::complete(counts, &hand.melds)
        && (situational || yaku::sure_yaku(counts, &hand.melds, ctx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(tsumo: bool) -> WinContext {
        WinContext {
            tsumo,
            round_wind: 0,
            seat_wind: 2,
            open_tanyao: true,
        }
    }

    #[test]
    fn discard_keeps_the_wait_with_more_tiles_left() {
        let mut hand = Hand::parse("m123p456s789m111z1").unwrap();
        hand.draw("z7").unwrap();
        let d = best_discard(&hand, &[0; 34]).unwrap();
        assert_eq!((d.shanten, d.improving), (0, 3), "{d:?}");
        assert!(d.text == "z1" || d.text == "z7_", "{d:?}");
        let mut visible = [0u8; 34];
        visible[27] = 2; // two Easts seen: an East wait has one left, a Red wait three
        let d = best_discard(&hand, &visible).unwrap();
        assert_eq!((d.text.as_str(), d.improving), ("z1", 3));
    }

    #[test]
    fn calls_by_the_rule() {
        let hand = Hand::parse("m123p456s78z55z123").unwrap();
        // A pair of White: pon it.
        let pon = hand.pon_options("z5", '+');
        assert_eq!(
            choose_call(&hand, &pon, &ctx(false), &[0; 34]),
            Some("z555+".into())
        );
        // A chi that lowers shanten but leaves no sure yaku: pass.
        let chi = hand.chi_options("s6");
        assert!(!chi.is_empty());
        assert_eq!(choose_call(&hand, &chi, &ctx(false), &[0; 34]), None);
        // All simples: chi that lowers shanten.
        let hand = Hand::parse("m234p456s78m66p338").unwrap();
        let chi = hand.chi_options("s6");
        assert_eq!(
            choose_call(&hand, &chi, &ctx(false), &[0; 34]),
            Some("s6-78".into())
        );
    }

    #[test]
    fn wins_only_when_legal() {
        let hand = Hand::parse("m123p456s789m11z22").unwrap();
        let mut counts = hand.counts;
        counts[28] += 1; // South, West seat: no yaku on ron
        assert!(!win_is_legal(&hand, &counts, &ctx(false), false));
        assert!(
            win_is_legal(&hand, &counts, &ctx(true), false),
            "closed tsumo"
        );
        assert!(win_is_legal(&hand, &counts, &ctx(false), true), "riichi");
        counts[28] -= 1;
        counts[33] += 1;
        assert!(
            !win_is_legal(&hand, &counts, &ctx(true), true),
            "not complete"
        );
    }
}
