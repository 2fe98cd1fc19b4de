//! Tiles as small integers, and majiang-core's tile notation. A tile kind is `0..34`: `m1..m9`
//! are 0–8, `p1..p9` 9–17, `s1..s9` 18–26, `z1..z7` (East, South, West, North, White, Green,
//! Red) 27–33. Red fives are the same kind as the other fives; the hand counts them apart
//! because the server's strings name them (`m0`).

/// A tile kind, `0..34`.
pub type Tile = u8;

/// Number of tile kinds.
pub const KINDS: usize = 34;

/// Tile counts by kind.
pub type Counts = [u8; KINDS];

/// The suit letters in kind order.
pub const SUITS: [u8; 4] = *b"mpsz";

/// The suit of a kind: 0 = m, 1 = p, 2 = s, 3 = z.
pub fn suit(tile: Tile) -> usize {
    usize::from(tile / 9)
}

/// The number of a kind: 1–9 (1–7 for honours).
pub fn number(tile: Tile) -> u8 {
    tile % 9 + 1
}

/// The kind of suit letter `s` and number `n` (`0` = red five); `None` when not a tile.
pub fn kind(s: u8, n: u8) -> Option<Tile> {
    let n = match n {
        b'0' if s != b'z' => 5,
        _ => n.checked_sub(b'0')?,
    };
    match s {
        b'm' | b'p' | b's' if (1..=9).contains(&n) => {
            Some((SUITS.iter().position(|&x| x == s)? * 9) as u8 + n - 1)
        }
        b'z' if (1..=7).contains(&n) => Some(27 + n - 1),
        _ => None,
    }
}

/// A tile as majiang-core writes it, e.g. `m3`, `p0` (red five), `z7`. Only the first two
/// bytes are read, so a discard such as `m3_*` or a claim such as `s4-` also parses.
pub fn parse(text: &str) -> Option<(Tile, bool)> {
    let bytes = text.as_bytes();
    let (&s, &n) = (bytes.first()?, bytes.get(1)?);
    let tile = kind(s, n)?;
    Some((tile, n == b'0' && s != b'z'))
}

/// The name of a kind (`red` writes a five as `0`).
pub fn name(tile: Tile, red: bool) -> String {
    let n = if red && number(tile) == 5 && tile < 27 {
        0
    } else {
        number(tile)
    };
    format!("{}{}", SUITS[suit(tile)] as char, n)
}

/// Terminals and honours (yaojiu): 1, 9 and every honour.
pub fn is_yaojiu(tile: Tile) -> bool {
    tile >= 27 || matches!(number(tile), 1 | 9)
}

/// The 13 kinds of thirteen orphans, in kind order.
pub const YAOJIU: [Tile; 13] = [0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33];

/// The dora a dora indicator points at (majiang-core `Shan.zhenbaopai`).
pub fn dora_of(indicator: Tile) -> Tile {
    let (s, n) = (suit(indicator), number(indicator));
    if s == 3 {
        let next = if n < 5 { n % 4 + 1 } else { (n - 4) % 3 + 5 };
        27 + next - 1
    } else {
        (s * 9) as u8 + n % 9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for t in 0..KINDS as u8 {
            let text = name(t, false);
            assert_eq!(parse(&text), Some((t, false)), "{text}");
        }
        assert_eq!(parse("m0"), Some((4, true)));
        assert_eq!(parse("s0_*"), Some((22, true)));
        assert_eq!(parse("z7-"), Some((33, false)));
        assert_eq!(name(13, true), "p0");
        assert_eq!(parse("z8"), None);
        assert_eq!(parse("z0"), None);
        assert_eq!(parse("x1"), None);
        assert_eq!(parse("m"), None);
    }

    #[test]
    fn dora_wraps() {
        assert_eq!(dora_of(8), 0); // m9 -> m1
        assert_eq!(dora_of(30), 27); // North -> East
        assert_eq!(dora_of(33), 31); // Red -> White
        assert!(is_yaojiu(0) && is_yaojiu(31) && !is_yaojiu(4));
    }
}
