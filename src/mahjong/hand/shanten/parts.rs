//! Shanten kept in parts, so that a hand which differs from another in one suit costs one
//! suit's work. A bot asks for hundreds of shanten per decision — each discard, then each of
//! the 34 tiles that might come next — and recomputing all three suits and every pair for each
//! was most of its decision time. Here each suit keeps its summaries with no pair set aside and
//! with each of its pairs set aside (the distinct ones: equal summaries give equal shanten), so
//! one more tile recomputes one suit and the combination; seven pairs and thirteen orphans are
//! kept as counts that one more tile changes by rule.
//!
//! [`Outlook`] adds what the choice of a discard needs: the parts of the hand before the
//! discard, and each suit's part with one more tile, which every discard from another suit
//! shares.

use super::table::{suit_splits, Split, SuitSplits};
use super::{formula, seven_pairs_of, thirteen_orphans_of};
use crate::mahjong::hand::tile::{self, Counts, Tile, KINDS};

/// Most pairs one suit can set aside (one per position).
const MAX_PAIRED: usize = 9;

/// Sets, partial sets and isolated tiles packed in bits 0–3, 4–7 and 8–12, so that the
/// summaries of the suits add up in one addition each and the sum indexes [`FORMULA`]. A hand
/// of at most 15 tiles cannot overflow a field (at most 5 sets, 7 partial sets, 15 isolated).
type Packed = u32;

const PACKED_BITS: u32 = 13;

fn pack(split: Split) -> Packed {
    Packed::from(split.sets) | Packed::from(split.partial) << 4 | Packed::from(split.isolated) << 8
}

/// [`formula`] for every packed sum, without a pair set aside (first half) and with one.
static FORMULA: [i8; 2 << PACKED_BITS] = {
    let mut table = [0i8; 2 << PACKED_BITS];
    let mut i = 0;
    while i < table.len() {
        let sum = i & ((1 << PACKED_BITS) - 1);
        let (m, d, g) = (sum & 15, sum >> 4 & 15, sum >> 8 & 31);
        table[i] = formula(m as i32, d as i32, g as i32, i >> PACKED_BITS == 1) as i8;
        i += 1;
    }
    table
};

/// [`formula`] of a packed sum.
fn evaluate(sum: Packed, pair: bool) -> i32 {
    let i = (usize::from(pair) << PACKED_BITS) | (sum as usize & ((1 << PACKED_BITS) - 1));
    i32::from(FORMULA[i])
}

/// A suit's summaries as majiang-core chooses between them: `a` and `b` packed, or one of
/// them when they are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Choices {
    packed: [Packed; 2],
    n: u8,
}

impl Choices {
    const NONE: Choices = Choices {
        packed: [0; 2],
        n: 1,
    };

    fn new(splits: SuitSplits) -> Choices {
        Choices {
            packed: [pack(splits.a), pack(splits.b)],
            n: if splits.a == splits.b { 1 } else { 2 },
        }
    }

    fn all(&self) -> &[Packed] {
        &self.packed[..usize::from(self.n)]
    }
}

/// majiang-core `mianzi_all`: the best of the a/b choices of the three number suits and the
/// honours, beside `melds` melds.
fn combine(suits: [&Choices; 4], melds: u8, pair: bool) -> i32 {
    let mut min = 13;
    let fixed = Packed::from(melds) + suits[3].packed[0];
    for &m in suits[0].all() {
        for &p in suits[1].all() {
            for &s in suits[2].all() {
                min = min.min(evaluate(fixed + m + p + s, pair));
            }
        }
    }
    min
}

/// One suit (or the honours) of a hand: its summaries with no pair set aside, and the
/// distinct summaries with one of its pairs set aside.
#[derive(Debug, Clone, Copy)]
struct SuitPart {
    plain: Choices,
    paired: [Choices; MAX_PAIRED],
    n_paired: u8,
}

impl SuitPart {
    fn new(plain: SuitSplits) -> SuitPart {
        SuitPart {
            plain: Choices::new(plain),
            paired: [Choices::NONE; MAX_PAIRED],
            n_paired: 0,
        }
    }

    fn add_paired(&mut self, splits: SuitSplits) {
        let choices = Choices::new(splits);
        let n = usize::from(self.n_paired);
        if !self.paired[..n].contains(&choices) && n < MAX_PAIRED {
            self.paired[n] = choices;
            self.n_paired += 1;
        }
    }

    fn paired(&self) -> &[Choices] {
        &self.paired[..usize::from(self.n_paired)]
    }

    /// A number suit's nine counts.
    fn number(b: &[u8; 9]) -> SuitPart {
        let mut part = SuitPart::new(suit_splits(b));
        let mut work = *b;
        for n in 0..9 {
            if work[n] >= 2 {
                work[n] -= 2;
                part.add_paired(suit_splits(&work));
                work[n] += 2;
            }
        }
        part
    }

    /// The seven honour counts: triplets (or more) are sets, pairs partial sets, singles
    /// isolated; `a` and `b` are the same.
    fn honours(z: &[u8; 7]) -> SuitPart {
        let split = |sets: u8, partial: u8, isolated: u8| {
            let s = Split {
                sets,
                partial,
                isolated,
            };
            SuitSplits { a: s, b: s }
        };
        let (mut sets, mut pairs, mut singles) = (0u8, 0u8, 0u8);
        for &count in z {
            match count {
                0 => {}
                1 => singles += 1,
                2 => pairs += 1,
                _ => sets += 1,
            }
        }
        let mut part = SuitPart::new(split(sets, pairs, singles));
        for &count in z {
            match count {
                2 => part.add_paired(split(sets, pairs - 1, singles)),
                3 => part.add_paired(split(sets - 1, pairs, singles + 1)),
                4 => part.add_paired(split(sets - 1, pairs + 1, singles)),
                _ => {}
            }
        }
        part
    }

    /// The part of suit `s` (3 = honours) of `c`, with one more tile of kind `plus` if given.
    fn of(c: &Counts, s: usize, plus: Option<usize>) -> SuitPart {
        if s < 3 {
            let mut b = [0u8; 9];
            b.copy_from_slice(&c[s * 9..s * 9 + 9]);
            if let Some(k) = plus {
                b[k - s * 9] += 1;
            }
            SuitPart::number(&b)
        } else {
            let mut z = [0u8; 7];
            z.copy_from_slice(&c[27..34]);
            if let Some(k) = plus {
                z[k - 27] += 1;
            }
            SuitPart::honours(&z)
        }
    }
}

/// A hand's concealed tiles in parts: the standard form per suit, and the counts seven pairs
/// and thirteen orphans are decided by.
#[derive(Debug, Clone)]
pub struct Parts {
    counts: Counts,
    melds: u8,
    suits: [SuitPart; 4],
    /// Kinds held at least twice, and once (seven pairs).
    pairs: i32,
    singles: i32,
    /// Terminal and honour kinds held, and whether one is held twice (thirteen orphans).
    orphans: i32,
    orphan_pair: bool,
}

impl Parts {
    /// The parts of concealed tiles `c` beside `melds` melds.
    pub fn new(c: &Counts, melds: u8) -> Parts {
        let mut parts = Parts {
            counts: *c,
            melds,
            suits: [0, 1, 2, 3].map(|s| SuitPart::of(c, s, None)),
            pairs: 0,
            singles: 0,
            orphans: 0,
            orphan_pair: false,
        };
        parts.count_specials();
        parts
    }

    fn count_specials(&mut self) {
        let (mut pairs, mut singles) = (0, 0);
        for &count in &self.counts {
            match count {
                0 => {}
                1 => singles += 1,
                _ => pairs += 1,
            }
        }
        self.pairs = pairs;
        self.singles = singles;
        self.orphans = 0;
        self.orphan_pair = false;
        for t in tile::YAOJIU {
            let count = self.counts[usize::from(t)];
            self.orphans += i32::from(count >= 1);
            self.orphan_pair |= count >= 2;
        }
    }

    /// The same hand less one tile of kind `t` (which it must hold): one suit recomputed.
    pub fn without(&self, t: Tile) -> Parts {
        let k = usize::from(t);
        let mut out = self.clone();
        let held = out.counts[k];
        out.counts[k] -= 1;
        out.suits[tile::suit(t)] = SuitPart::of(&out.counts, tile::suit(t), None);
        match held {
            1 => out.singles -= 1,
            2 => {
                out.pairs -= 1;
                out.singles += 1;
            }
            _ => {}
        }
        if tile::is_yaojiu(t) {
            out.orphans -= i32::from(held == 1);
            if held == 2 {
                out.orphan_pair = tile::YAOJIU
                    .iter()
                    .any(|&y| out.counts[usize::from(y)] >= 2);
            }
        }
        out
    }

    /// Standard-form shanten with suit `s`'s part replaced by `part`; returns as soon as one
    /// choice is below `stop_below`.
    fn standard_with(&self, s: usize, part: &SuitPart, stop_below: i32) -> i32 {
        let at = |i: usize| if i == s { part } else { &self.suits[i] };
        let plain = [&at(0).plain, &at(1).plain, &at(2).plain, &at(3).plain];
        let mut min = combine(plain, self.melds, false);
        for i in 0..4 {
            for paired in at(i).paired() {
                if min < stop_below {
                    return min;
                }
                let mut with_pair = plain;
                with_pair[i] = paired;
                min = min.min(combine(with_pair, self.melds, true));
            }
        }
        min
    }

    /// Standard-form shanten (majiang-core `xiangting_yiban`); `after_call` as in
    /// [`super::standard`].
    pub fn standard(&self, after_call: bool) -> i32 {
        let min = self.standard_with(3, &self.suits[3], i32::MIN);
        if min == -1 && after_call {
            return 0;
        }
        min
    }

    /// Shanten: the least of the three forms (majiang-core `xiangting`).
    pub fn shanten(&self, after_call: bool) -> i32 {
        self.standard(after_call)
            .min(seven_pairs_of(self.pairs, self.singles, self.melds))
            .min(thirteen_orphans_of(
                self.orphans,
                self.orphan_pair,
                self.melds,
            ))
    }

    /// Seven-pairs and thirteen-orphans shanten with one more tile of kind `k`.
    fn specials_plus(&self, k: usize) -> i32 {
        let held = self.counts[k];
        let (mut pairs, mut singles) = (self.pairs, self.singles);
        match held {
            0 => singles += 1,
            1 => {
                singles -= 1;
                pairs += 1;
            }
            _ => {}
        }
        let (mut orphans, mut orphan_pair) = (self.orphans, self.orphan_pair);
        if tile::is_yaojiu(k as Tile) {
            orphans += i32::from(held == 0);
            orphan_pair |= held == 1;
        }
        seven_pairs_of(pairs, singles, self.melds).min(thirteen_orphans_of(
            orphans,
            orphan_pair,
            self.melds,
        ))
    }

    /// The kinds, held fewer than four times, whose one more tile lowers this hand's shanten
    /// `base` (majiang-core `tingpai` for a hand without a drawn tile), as a bit set.
    pub fn lowering(&self, base: i32) -> u64 {
        self.lowering_with(base, None)
    }

    /// The kinds whose one more tile may lower the standard form, as a bit set.
    ///
    /// A tile with no tile of its own kind or within two of it in the hand cannot lower the
    /// standard form of a 13-tile hand (it only adds an isolated tile, and such a hand already
    /// has as many blocks as count), so only seven pairs and thirteen orphans are recounted
    /// for it; a hand of another size, or holding four of an honour, is counted in full.
    fn joinable(&self) -> u64 {
        let tiles: u8 = self.counts.iter().sum();
        if self.counts[27..].contains(&4) || tiles + 3 * self.melds != 13 {
            return (1 << KINDS) - 1;
        }
        let mut held = 0u64;
        for (k, &count) in self.counts.iter().enumerate() {
            held |= u64::from(count > 0) << k;
        }
        let mut out = held;
        for s in 0..3 {
            let suit = held >> (s * 9) & 0x1ff;
            let near = suit | suit << 1 | suit << 2 | suit >> 1 | suit >> 2;
            out |= (near & 0x1ff) << (s * 9);
        }
        out
    }

    /// [`Parts::lowering`]; `plus`: parts of suits with one more tile of a kind, already
    /// computed (every joinable kind except those of suit `fresh`, computed here).
    fn lowering_with(&self, base: i32, plus: Option<(&[Option<SuitPart>; KINDS], usize)>) -> u64 {
        let joinable = self.joinable();
        let mut out = 0u64;
        for k in 0..KINDS {
            if self.counts[k] >= 4 {
                continue;
            }
            if self.specials_plus(k) < base {
                out |= 1 << k;
                continue;
            }
            if joinable & 1 << k == 0 {
                continue;
            }
            let s = k.min(27) / 9;
            let fresh;
            let part = match plus {
                Some((parts, fresh_suit)) if s != fresh_suit => match &parts[k] {
                    Some(part) => part,
                    None => continue,
                },
                _ => {
                    fresh = SuitPart::of(&self.counts, s, Some(k));
                    &fresh
                }
            };
            if self.standard_with(s, part, base) < base {
                out |= 1 << k;
            }
        }
        out
    }
}

/// A hand with a tile to discard, and for each discard the shanten it leaves and the kinds that
/// would then lower it. Each suit's part with one more tile is computed once, on first need,
/// and serves every discard from another suit.
#[derive(Debug, Clone)]
pub struct Outlook {
    hand: Parts,
    plus: [Option<SuitPart>; KINDS],
}

impl Outlook {
    /// The concealed tiles `c` (the drawn tile included) beside `melds` melds.
    pub fn new(c: &Counts, melds: u8) -> Outlook {
        Outlook {
            hand: Parts::new(c, melds),
            plus: [None; KINDS],
        }
    }

    /// The hand after discarding a tile of kind `t` (which it must hold).
    pub fn after(&self, t: Tile) -> Parts {
        self.hand.without(t)
    }

    /// The kinds whose one more tile lowers the shanten `base` of `after`, the hand after
    /// discarding `t` (as [`Outlook::after`] gave it), as a bit set.
    pub fn lowering_after(&mut self, t: Tile, after: &Parts, base: i32) -> u64 {
        let discarded = tile::suit(t);
        let mut wanted = after.joinable();
        while wanted != 0 {
            let k = wanted.trailing_zeros() as usize;
            wanted &= wanted - 1;
            let s = k.min(27) / 9;
            if s != discarded && self.plus[k].is_none() && self.hand.counts[k] < 4 {
                self.plus[k] = Some(SuitPart::of(&self.hand.counts, s, Some(k)));
            }
        }
        after.lowering_with(base, Some((&self.plus, discarded)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::shanten;
    use super::*;

    use crate::sys::rng::XorShift;

    /// `n` random tiles, drawn from `kinds` (so some hands are one suit and crowded).
    fn random_counts(rng: &mut XorShift, n: u8, kinds: &[usize]) -> Counts {
        let mut counts = [0u8; KINDS];
        let mut held = 0;
        while held < n {
            let k = kinds[rng.below(kinds.len() as u64) as usize];
            if counts[k] < 4 {
                counts[k] += 1;
                held += 1;
            }
        }
        counts
    }

    fn brute_lowering(counts: &Counts, melds: u8) -> u64 {
        let base = shanten(counts, melds, false);
        let mut work = *counts;
        let mut out = 0;
        for k in 0..KINDS {
            if work[k] < 4 {
                work[k] += 1;
                if shanten(&work, melds, false) < base {
                    out |= 1 << k;
                }
                work[k] -= 1;
            }
        }
        out
    }

    #[test]
    fn every_discard_and_tile_matches_the_whole_computation() {
        let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
        let all: Vec<usize> = (0..KINDS).collect();
        let one_suit: Vec<usize> = (0..9).chain(27..34).collect();
        let pin: Vec<usize> = (9..18).collect();
        for i in 0..4000 {
            let melds = (i % 5) as u8;
            let kinds = match i % 7 {
                0 => &one_suit,
                1 => &pin,
                _ => &all,
            };
            let counts = random_counts(&mut rng, 14 - 3 * melds, kinds);
            let mut outlook = Outlook::new(&counts, melds);
            assert_eq!(
                outlook.hand.shanten(false),
                shanten(&counts, melds, false),
                "{counts:?}"
            );
            for t in (0..KINDS).filter(|&t| counts[t] > 0) {
                let after = outlook.after(t as Tile);
                let mut c = counts;
                c[t] -= 1;
                let base = shanten(&c, melds, false);
                assert_eq!(after.shanten(false), base, "{counts:?} less {t}");
                assert_eq!(
                    outlook.lowering_after(t as Tile, &after, base),
                    brute_lowering(&c, melds),
                    "{counts:?} less {t}, {melds} melds"
                );
            }
        }
    }
}
