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

/// Tiles not yet seen (not in `visible`, not in the hand's `counts`) that lower the shanten
/// `base` of a hand without a drawn tile.
///
/// A tile with no tile of its own kind or within two of it in the hand cannot lower the
/// standard-form shanten of a 13-tile hand (it only adds an isolated tile, and a 13-tile hand
/// already has as many blocks as count), so only seven pairs and thirteen orphans are
/// recounted for it; a hand holding four of an honour is counted in full.
pub fn improving_tiles(counts: &mut Counts, melds: u8, base: i32, visible: &Counts) -> u32 {
    let standard = shanten::standard(counts, melds, false);
    let exact = counts[27..].contains(&4) || counts.iter().sum::<u8>() + 3 * melds != 13;
    let mut total = 0u32;
    for k in 0..tile::KINDS {
        let held = counts[k];
        if held >= 4 {
            continue;
        }
        let connected = exact
            || held > 0
            || k < 27 && {
                let (lo, hi) = ((k / 9) * 9, (k / 9) * 9 + 8);
                (k.saturating_sub(2).max(lo)..=(k + 2).min(hi)).any(|j| counts[j] > 0)
            };
        counts[k] += 1;
        let s = if connected {
            shanten::shanten(counts, melds, false)
        } else {
            standard
                .min(shanten::seven_pairs(counts, melds))
                .min(shanten::thirteen_orphans(counts, melds))
        };
        if s < base {
            total += u32::from(4u8.saturating_sub(visible[k]).saturating_sub(held));
        }
        counts[k] -= 1;
    }
    total
}

/// The discard that keeps the lowest shanten; ties go to the one leaving more unseen
/// improving tiles, then to honours and terminals, then to the drawn tile. `None` when the
/// hand has nothing to discard.
pub fn best_discard(hand: &Hand, visible: &Counts) -> Option<Discard> {
    let options = hand.legal_discards();
    let melds = hand.melds();
    let mut counts = hand.counts;
    let mut kinds: Vec<(Tile, i32)> = Vec::with_capacity(options.len());
    for text in &options {
        let Some((t, _)) = tile::parse(text) else {
            continue;
        };
        if kinds.iter().any(|&(k, _)| k == t) {
            continue;
        }
        counts[usize::from(t)] -= 1;
        kinds.push((t, shanten::shanten(&counts, melds, false)));
        counts[usize::from(t)] += 1;
    }
    let least = kinds.iter().map(|&(_, s)| s).min()?;
    let drawn = match hand.drawn {
        crate::mahjong::hand::Drawn::Tile { tile, .. } => Some(tile),
        _ => None,
    };
    let mut best: Option<((u32, u8, bool), Tile)> = None;
    for &(t, s) in kinds.iter().filter(|&&(_, s)| s == least) {
        counts[usize::from(t)] -= 1;
        let improving = improving_tiles(&mut counts, melds, s, visible);
        counts[usize::from(t)] += 1;
        let edge = if t >= 27 {
            2
        } else {
            u8::from(tile::is_yaojiu(t))
        };
        let key = (improving, edge, Some(t) == drawn);
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((key, t));
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
        let Some(discard) = best_discard(&after, visible) else {
            continue;
        };
        let value = |m: &crate::mahjong::hand::Meld| {
            m.kind != MeldKind::Chi && is_value_honour(m.tile, ctx.round_wind, ctx.seat_wind)
        };
        let value_pon = after.melds.last().is_some_and(value);
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
    fn improving_tiles_match_counting_every_tile() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3000 {
            let mut counts = [0u8; 34];
            let mut n = 0;
            while n < 13 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let k = (seed % 34) as usize;
                if counts[k] < 4 {
                    counts[k] += 1;
                    n += 1;
                }
            }
            let base = shanten::shanten(&counts, 0, false);
            let mut brute = 0u32;
            for k in 0..34 {
                if counts[k] < 4 {
                    counts[k] += 1;
                    if shanten::shanten(&counts, 0, false) < base {
                        brute += u32::from(4 - (counts[k] - 1));
                    }
                    counts[k] -= 1;
                }
            }
            assert_eq!(
                improving_tiles(&mut counts, 0, base, &[0; 34]),
                brute,
                "{counts:?}"
            );
        }
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
