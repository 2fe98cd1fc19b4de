//! majiang-core's summary of one suit, tabled: a suit's summary depends only on its nine
//! counts, so it is computed once for every suit of at most 14 tiles (405,350 of them) into a
//! table indexed by the counts' rank among those vectors.

use std::sync::OnceLock;

/// Most tiles of one suit in a hand the table covers (a 14-tile hand, or 13 plus one).
const MAX_SUIT_TILES: usize = 14;

/// One of majiang-core's summaries of a suit: sets, partial sets (pairs and two-tile waits),
/// isolated tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    pub(super) sets: u8,
    pub(super) partial: u8,
    pub(super) isolated: u8,
}

/// A suit's two summaries: `a` keeps the fewest isolated tiles, `b` the most sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SuitSplits {
    pub(super) a: Split,
    pub(super) b: Split,
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

/// Built once per process, by [`warm_up`] before a session starts, else at first use.
static TABLE: OnceLock<SuitTable> = OnceLock::new();

fn suit_table() -> &'static SuitTable {
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

/// Whether the suit table is built (a session builds it before its start, so that no
/// player's first decision pays for it).
pub fn is_built() -> bool {
    TABLE.get().is_some()
}

pub(super) fn suit_splits(b: &[u8]) -> SuitSplits {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
