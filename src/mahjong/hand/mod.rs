//! A player's hand and what can be done with it, in majiang-core's own terms: the bot must ask
//! only for what the server will accept, so the rules that decide acceptance (shanten, the
//! legal discards, the calls offered, a complete hand, a yaku) are mirrored here, function by
//! function, and checked against majiang-core itself (`tests/hand_vs_core.rs`).
//!
//! - [`tile`]: tile kinds and the `m0`-style notation;
//! - [`shanten`]: shanten of the three forms, and waits, table-driven, kept per suit so that
//!   the shanten of every discard and every next tile costs one suit's work each;
//! - [`shoupai`]: the hand (concealed counts, red fives, melds, the drawn tile, riichi), its
//!   legal discards, calls and kans, as the server's `Shoupai` computes them;
//! - [`yaku`]: whether a complete hand surely has a yaku, so a win is never refused.

pub mod shanten;
pub mod shoupai;
pub mod tile;
pub mod yaku;

pub use shoupai::{Drawn, Hand, Meld, MeldKind};
pub use tile::{Counts, Tile};

/// Counts and red fives of the concealed part of a hand string (`m123p406z11`); melds after a
/// comma and unknown characters are skipped. For tests and tools.
pub fn parse_counts(text: &str) -> (Counts, [u8; 3]) {
    let mut counts = [0u8; tile::KINDS];
    let mut red = [0u8; 3];
    let concealed = text.split(',').next().unwrap_or("");
    let mut suit = None;
    for b in concealed.bytes() {
        if b"mpsz".contains(&b) {
            suit = Some(b);
        } else if let (Some(s), true) = (suit, b.is_ascii_digit()) {
            if let Some(t) = tile::kind(s, b) {
                counts[usize::from(t)] += 1;
                if b == b'0' {
                    red[tile::suit(t)] += 1;
                }
            }
        }
    }
    (counts, red)
}
