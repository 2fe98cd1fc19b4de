//! Shanten (向聴数: tiles away from ready; 0 = ready, −1 = complete) the way majiang-core's
//! `Majiang.Util.xiangting` counts it, because the server decides riichi, furiten and wins with
//! that function: a bot that counts differently would ask for things the server refuses.
//!
//! Standard form: majiang-core splits each suit on its own into two candidate summaries —
//! `a` (fewest isolated tiles) and `b` (most sets) — and combines the eight choices with the
//! honours. A suit's summary depends only on its nine counts, so it is computed once for every
//! suit of at most 14 tiles (405,350 of them) into a table indexed by the counts' rank among
//! those vectors; a shanten is then three lookups per pair candidate, a few dozen nanoseconds.
//! Seven pairs and thirteen orphans are counts, as in majiang-core.

use std::sync::OnceLock;

use super::tile::{Counts, YAOJIU};

/// "Not possible" (seven pairs or thirteen orphans with melds): majiang-core's `Infinity`.
pub const IMPOSSIBLE: i32 = 99;

/// Most tiles of one suit in a hand the table covers (a 14-tile hand, or 13 plus one).
const MAX_SUIT_TILES: usize = 14;

/// One of majiang-core's summaries of a suit: sets, partial sets (pairs and two-tile waits),
/// isolated tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    sets: u8,
    partial: u8,
    isolated: u8,
}

/// A suit's two summaries: `a` keeps the fewest isolated tiles, `b` the most sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SuitSplits {
    a: Split,
    b: Split,
}

impl Split {
    fn pack(self) -> u32 {
        u32::from(self.sets) | u32::from(self.partial) << 3 | u32::from(self.isolated) << 6
    }

    fn unpack(bits: u32) -> Split {
        Split {
            sets: (bits & 7) as u8,
            partial: (bits >> 3 & 7) as u8,
            isolated: (bits >> 6 & 15) as u8,
        }
    }
}

impl SuitSplits {
    fn pack(self) -> u32 {
        self.a.pack() | self.b.pack() << 10
    }

    fn unpack(bits: u32) -> SuitSplits {
        SuitSplits {
            a: Split::unpack(bits & 0x3ff),
            b: Split::unpack(bits >> 10),
        }
    }
}

/// majiang-core `dazi`: what is left after the sets, as partial sets and isolated tiles (tiles
/// less than three apart pair up).
fn dazi(b: &[u8; 9]) -> SuitSplits {
    let (mut run, mut partial, mut isolated) = (0u8, 0u8, 0u8);
    for n in 0..9 {
        run += b[n];
        if n <= 6 && b[n + 1] == 0 && b[n + 2] == 0 {
            partial += run >> 1;
            isolated += run % 2;
            run = 0;
        }
    }
    partial += run >> 1;
    isolated += run % 2;
    let split = Split {
        sets: 0,
        partial,
        isolated,
    };
    SuitSplits { a: split, b: split }
}

/// majiang-core `mianzi`: every way of taking sets from position `n` on, keeping the best `a`
/// and `b` (the comparisons and their order are majiang-core's).
fn mianzi(b: &mut [u8; 9], n: usize) -> SuitSplits {
    if n > 8 {
        return dazi(b);
    }
    let mut max = mianzi(b, n + 1);
    let consider = |mut r: SuitSplits, max: &mut SuitSplits| {
        r.a.sets += 1;
        r.b.sets += 1;
        if r.a.isolated < max.a.isolated
            || r.a.isolated == max.a.isolated && r.a.partial < max.a.partial
        {
            max.a = r.a;
        }
        if r.b.sets > max.b.sets || r.b.sets == max.b.sets && r.b.partial > max.b.partial {
            max.b = r.b;
        }
    };
    if n <= 6 && b[n] > 0 && b[n + 1] > 0 && b[n + 2] > 0 {
        b[n] -= 1;
        b[n + 1] -= 1;
        b[n + 2] -= 1;
        let r = mianzi(b, n);
        b[n] += 1;
        b[n + 1] += 1;
        b[n + 2] += 1;
        consider(r, &mut max);
    }
    if b[n] >= 3 {
        b[n] -= 3;
        let r = mianzi(b, n + 1);
        b[n] += 3;
        consider(r, &mut max);
    }
    max
}

/// `COMPLETIONS[i][r]`: how many count vectors for positions `i..9` (each 0–4) sum to at most
/// `r`. The rank of a suit is its index in the lexicographic order of all vectors of at most
/// [`MAX_SUIT_TILES`] tiles, which is also the order the table is built in.
struct Ranking {
    completions: [[u32; MAX_SUIT_TILES + 1]; 10],
    /// `offsets[i][left][count]`: the rank added by `count` tiles at position `i` with `left`
    /// tiles still allowed (the sum of the completions of every smaller count).
    offsets: [[[u32; 5]; MAX_SUIT_TILES + 1]; 9],
}

impl Ranking {
    fn new() -> Ranking {
        let mut completions = [[0u32; MAX_SUIT_TILES + 1]; 10];
        completions[9] = [1; MAX_SUIT_TILES + 1];
        for i in (0..9).rev() {
            for r in 0..=MAX_SUIT_TILES {
                completions[i][r] = (0..=r.min(4)).map(|c| completions[i + 1][r - c]).sum();
            }
        }
        let mut offsets = [[[0u32; 5]; MAX_SUIT_TILES + 1]; 9];
        for (i, by_left) in offsets.iter_mut().enumerate() {
            for (left, by_count) in by_left.iter_mut().enumerate() {
                for count in 1..=left.min(4) {
                    by_count[count] = by_count[count - 1] + completions[i + 1][left - (count - 1)];
                }
            }
        }
        Ranking {
            completions,
            offsets,
        }
    }

    fn total(&self) -> usize {
        self.completions[0][MAX_SUIT_TILES] as usize
    }

    /// The rank of `b`, or `None` if it holds more than [`MAX_SUIT_TILES`] tiles.
    fn rank(&self, b: &[u8]) -> Option<usize> {
        let mut rank = 0u32;
        let mut left = MAX_SUIT_TILES;
        for (i, &count) in b.iter().enumerate() {
            let count = usize::from(count);
            if count > left.min(4) {
                return None;
            }
            rank += self.offsets[i][left][count];
            left -= count;
        }
        Some(rank as usize)
    }
}

struct SuitTable {
    ranking: Ranking,
    splits: Vec<u32>,
}

fn build(table: &mut Vec<u32>, b: &mut [u8; 9], i: usize, left: usize) {
    if i == 9 {
        let mut copy = *b;
        table.push(mianzi(&mut copy, 0).pack());
        return;
    }
    for c in 0..=left.min(4) {
        b[i] = c as u8;
        build(table, b, i + 1, left - c);
    }
    b[i] = 0;
}

fn suit_table() -> &'static SuitTable {
    static TABLE: OnceLock<SuitTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let ranking = Ranking::new();
        let mut splits = Vec::with_capacity(ranking.total());
        build(&mut splits, &mut [0; 9], 0, MAX_SUIT_TILES);
        SuitTable { ranking, splits }
    })
}

/// Builds the suit table now (it is otherwise built on first use, in about 0.1 s).
pub fn warm_up() {
    suit_table();
}

fn suit_splits(b: &[u8]) -> SuitSplits {
    let table = suit_table();
    match table.ranking.rank(b) {
        Some(rank) => SuitSplits::unpack(table.splits[rank]),
        None => {
            // More than 14 tiles of a suit: not a hand, but answer as majiang-core would.
            let mut copy = [0u8; 9];
            copy.copy_from_slice(&b[..9]);
            mianzi(&mut copy, 0)
        }
    }
}

/// Honours: triplets (or more), pairs, singles.
fn honours(z: &[u8]) -> [u8; 3] {
    let mut out = [0u8; 3];
    for &count in z {
        match count {
            0 => {}
            1 => out[2] += 1,
            2 => out[1] += 1,
            _ => out[0] += 1,
        }
    }
    out
}

/// majiang-core `_xiangting`: shanten from sets, partial sets and isolated tiles, with a pair
/// set aside (`pair`) or not.
fn formula(mut m: i32, mut d: i32, mut g: i32, pair: bool) -> i32 {
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

/// majiang-core `mianzi_all`: the best of the eight a/b choices.
fn combine(suits: &[SuitSplits; 3], z: [u8; 3], melds: u8, pair: bool) -> i32 {
    let mut min = 13;
    for m in [suits[0].a, suits[0].b] {
        for p in [suits[1].a, suits[1].b] {
            for s in [suits[2].a, suits[2].b] {
                let sets = melds + m.sets + p.sets + s.sets + z[0];
                let partial = m.partial + p.partial + s.partial + z[1];
                let isolated = m.isolated + p.isolated + s.isolated + z[2];
                min = min.min(formula(
                    i32::from(sets),
                    i32::from(partial),
                    i32::from(isolated),
                    pair,
                ));
            }
        }
    }
    min
}

/// Standard-form shanten (majiang-core `xiangting_yiban`) of the concealed tiles `c` with
/// `melds` melds. `after_call`: the hand has just called and not yet discarded (majiang-core
/// then reports a complete-looking hand as 0, not −1).
pub fn standard(c: &Counts, melds: u8, after_call: bool) -> i32 {
    let suits = [
        suit_splits(&c[0..9]),
        suit_splits(&c[9..18]),
        suit_splits(&c[18..27]),
    ];
    let z = honours(&c[27..34]);
    let mut min = combine(&suits, z, melds, false);
    let mut work = *c;
    for t in 0..34 {
        if work[t] < 2 {
            continue;
        }
        work[t] -= 2;
        let n = if t < 27 {
            let mut with_pair = suits;
            let s = t / 9;
            with_pair[s] = suit_splits(&work[s * 9..s * 9 + 9]);
            combine(&with_pair, z, melds, true)
        } else {
            combine(&suits, honours(&work[27..34]), melds, true)
        };
        work[t] += 2;
        min = min.min(n);
    }
    if min == -1 && after_call {
        return 0;
    }
    min
}

/// Seven-pairs shanten (majiang-core `xiangting_qidui`).
pub fn seven_pairs(c: &Counts, melds: u8) -> i32 {
    if melds > 0 {
        return IMPOSSIBLE;
    }
    let (mut pairs, mut singles) = (0i32, 0i32);
    for &count in c {
        match count {
            0 => {}
            1 => singles += 1,
            _ => pairs += 1,
        }
    }
    pairs = pairs.min(7);
    singles = singles.min(7 - pairs);
    13 - pairs * 2 - singles
}

/// Thirteen-orphans shanten (majiang-core `xiangting_guoshi`).
pub fn thirteen_orphans(c: &Counts, melds: u8) -> i32 {
    if melds > 0 {
        return IMPOSSIBLE;
    }
    let kinds = YAOJIU.iter().filter(|&&t| c[usize::from(t)] >= 1).count() as i32;
    let pair = YAOJIU.iter().any(|&t| c[usize::from(t)] >= 2);
    if pair {
        12 - kinds
    } else {
        13 - kinds
    }
}

/// Shanten: the least of the three forms (majiang-core `xiangting`).
pub fn shanten(c: &Counts, melds: u8, after_call: bool) -> i32 {
    standard(c, melds, after_call)
        .min(seven_pairs(c, melds))
        .min(thirteen_orphans(c, melds))
}

/// Waits (majiang-core `tingpai`) of a hand without a drawn tile: the kinds that lower its
/// shanten, leaving out kinds the hand already holds four of. As a bit set over kinds.
pub fn waits(c: &Counts, melds: u8) -> u64 {
    let base = shanten(c, melds, false);
    let mut work = *c;
    let mut out = 0u64;
    for t in 0..34 {
        if work[t] >= 4 {
            continue;
        }
        work[t] += 1;
        if shanten(&work, melds, false) < base {
            out |= 1 << t;
        }
        work[t] -= 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mahjong::hand::parse_counts;

    fn sh(text: &str, melds: u8) -> i32 {
        shanten(&parse_counts(text).0, melds, false)
    }

    #[test]
    fn table_covers_every_small_suit() {
        let table = suit_table();
        assert_eq!(table.splits.len(), 405_350);
        assert_eq!(table.ranking.rank(&[0; 9]), Some(0));
        assert_eq!(table.ranking.rank(&[0, 0, 0, 0, 0, 0, 0, 0, 1]), Some(1));
        assert!(table.ranking.rank(&[4, 4, 4, 2, 0, 0, 0, 0, 0]).is_some());
        assert_eq!(table.ranking.rank(&[4, 4, 4, 3, 0, 0, 0, 0, 0]), None);
        // The ranks are the build order: spot-check against the direct computation.
        for b in [[1, 1, 1, 0, 2, 2, 0, 0, 3], [0, 4, 4, 4, 0, 0, 0, 1, 1]] {
            let rank = table.ranking.rank(&b).unwrap();
            let mut copy = b;
            assert_eq!(SuitSplits::unpack(table.splits[rank]), mianzi(&mut copy, 0));
        }
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
