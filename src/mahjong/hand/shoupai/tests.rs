//! The options a hand offers, on hands whose answers were read off majiang-core by hand (the
//! bulk comparison is `tests/hand_vs_core.rs`).

use super::*;

fn hand(text: &str) -> Hand {
    Hand::parse(text).unwrap()
}

#[test]
fn discards_after_a_draw_name_red_fives_and_the_drawn_tile() {
    let mut h = hand("m405p123s789z1122");
    h.draw("m5").unwrap();
    assert_eq!(
        h.legal_discards(),
        ["m4", "m0", "m5", "p1", "p2", "p3", "s7", "s8", "s9", "z1", "z2", "m5_"]
    );
    let mut h = hand("m456p123s789z1122");
    h.draw("m0").unwrap();
    // The only red five is the drawn one: it goes only as `m0_`.
    assert_eq!(h.legal_discards()[..3], ["m4", "m5", "m6"]);
    assert_eq!(h.legal_discards().last().map(String::as_str), Some("m0_"));
    h.discard("m0_*").unwrap();
    assert!(h.riichi);
    h.draw("z3").unwrap();
    assert_eq!(h.legal_discards(), ["z3_"], "riichi: the drawn tile only");
}

#[test]
fn calls_and_swap_calling() {
    let h = hand("m3467p123s789z112");
    assert_eq!(h.chi_options("m5_"), ["m345-", "m45-6", "m5-67"]);
    assert_eq!(h.pon_options("z1", '='), ["z111="]);
    assert!(h.pon_options("z2", '+').is_empty());
    let mut h = hand("m3467p123s789z112");
    h.call("m45-6").unwrap();
    assert_eq!(h.drawn, Drawn::Call);
    // m4, m6 taken; the claimed m5 may not go back, nor its swap partner (none for a middle claim).
    let discards = h.legal_discards();
    assert!(!discards.iter().any(|d| d == "m5"), "{discards:?}");
    assert!(discards.iter().any(|d| d == "m3"), "{discards:?}");
    let mut h = hand("m3456p123s789z112");
    h.call("m3-45").unwrap();
    let discards = h.legal_discards();
    assert!(
        !discards.iter().any(|d| d == "m3" || d == "m6"),
        "{discards:?}"
    );
}

#[test]
fn kans() {
    let mut h = hand("m5550p123s789z112");
    h.draw("z1").unwrap();
    // Any four of a kind, not only with the drawn tile.
    assert_eq!(h.kan_options(), ["m5550"]);
    h.kan("m5550").unwrap();
    assert_eq!(h.melds[0].kind, MeldKind::Kan);
    assert!(h.closed());
    let mut h = hand("m2p123s789z11,m444+");
    h.draw("m4").unwrap();
    assert_eq!(h.kan_options(), ["m444+4"]);
    h.kan("m444+4").unwrap();
    assert_eq!(h.melds[0].text, "m444+4");
    assert_eq!(h.tiles(), 9);
}

#[test]
fn a_red_five_does_not_hide_the_other_tiles_of_its_suit() {
    let mut h = hand("m1p0s1z1234567m29");
    h.draw("m3").unwrap();
    h.discard("m1").unwrap();
    h.draw("p1").unwrap();
    h.discard("p1_").unwrap();
    assert_eq!(h.red, [0, 1, 0]);
    h.draw("m5").unwrap();
    h.discard("m5_").unwrap();
}
