//! The real player's decisions on fixed hands, fed as the server sends them (seat 0, first
//! dealer, so our wind position is 0 in the first hand).

use serde_json::{json, Value};

use super::Real;
use crate::mahjong::bot::Bot;
use crate::mahjong::messages::Action;

fn bot(hand: &str) -> Bot<Real> {
    let mut bot = Bot::with_strategy(Real::new());
    let kaiju = json!({"kaiju": {"id": 0, "rule": {"クイタンあり": true}, "title": "t",
        "player": ["a", "b", "c", "d"], "qijia": 0}, "seq": 1});
    bot.on_game(&kaiju).unwrap();
    let qipai = json!({"qipai": {"zhuangfeng": 0, "jushu": 0, "changbang": 0, "lizhibang": 0,
        "defen": [25000, 25000, 25000, 25000], "baopai": "s9",
        "shoupai": [hand, "", "", ""]}, "seq": 2});
    bot.on_game(&qipai).unwrap();
    bot
}

fn answer(bot: &mut Bot<Real>, msg: Value) -> Action {
    bot.on_game(&msg).unwrap().expect("a request").action
}

#[test]
fn wins_on_a_complete_draw() {
    let mut b = bot("m123p456s789m11z22");
    let a = answer(&mut b, json!({"zimo": {"l": 0, "p": "z2"}, "seq": 3}));
    assert_eq!(a, Action::Hule, "closed tsumo");
}

#[test]
fn declares_riichi_when_ready() {
    let mut b = bot("m123p456s789m11z12");
    let a = answer(&mut b, json!({"zimo": {"l": 0, "p": "z1"}, "seq": 3}));
    assert_eq!(a, Action::Discard("z2*".into()));
    answer(&mut b, json!({"dapai": {"l": 0, "p": "z2*"}, "seq": 4}));
    // In riichi: the drawn tile goes, whatever it is.
    let a = answer(&mut b, json!({"zimo": {"l": 0, "p": "m5"}, "seq": 5}));
    assert_eq!(a, Action::Discard("m5_".into()));
    assert_eq!(b.take_stats().rejected_total(), 0);
}

#[test]
fn no_ron_while_furiten() {
    // Ready on p6 (all simples) or p9 (no yaku).
    let mut b = bot("m234p456s678m55p78");
    let a = answer(&mut b, json!({"dapai": {"l": 1, "p": "p9"}, "seq": 3}));
    assert_eq!(a, Action::Pass, "p9 completes the hand but it has no yaku");
    let a = answer(&mut b, json!({"dapai": {"l": 2, "p": "p6"}, "seq": 4}));
    assert_eq!(a, Action::Pass, "furiten since passing on p9");
    answer(&mut b, json!({"zimo": {"l": 0, "p": "z7"}, "seq": 5}));
    answer(&mut b, json!({"dapai": {"l": 0, "p": "z7_"}, "seq": 6}));
    let a = answer(&mut b, json!({"dapai": {"l": 1, "p": "p6"}, "seq": 7}));
    assert_eq!(a, Action::Hule, "our discard ended the furiten");
}

#[test]
fn no_ron_on_a_wait_in_our_river() {
    let mut b = bot("m234p456s678m55p67");
    answer(&mut b, json!({"zimo": {"l": 0, "p": "p5"}, "seq": 3}));
    // We discard p5 ourselves (say): p5 is a wait, so every wait is furiten.
    answer(&mut b, json!({"dapai": {"l": 0, "p": "p5_"}, "seq": 4}));
    let a = answer(&mut b, json!({"dapai": {"l": 1, "p": "p8"}, "seq": 5}));
    assert_eq!(a, Action::Pass);
}

#[test]
fn calls_by_the_rule() {
    let mut b = bot("m123p456s78z55z123");
    let a = answer(&mut b, json!({"dapai": {"l": 2, "p": "z5"}, "seq": 3}));
    assert_eq!(a, Action::Fulou("z555=".into()), "pon a value honour");
    let a = answer(&mut b, json!({"fulou": {"l": 0, "m": "z555="}, "seq": 4}));
    assert!(
        matches!(a, Action::Discard(ref t) if !t.ends_with('_')),
        "{a:?}"
    );
    let mut b = bot("m123p456s78z55z123");
    let a = answer(&mut b, json!({"dapai": {"l": 3, "p": "s6"}, "seq": 3}));
    assert_eq!(a, Action::Pass, "a chi with no sure yaku");
}

#[test]
fn rejoining_replays_the_current_hand() {
    // The hand as the game record has it (every hand and draw shown) and as a seated player
    // is sent it (others' hands and draws hidden); kaigang is a notification live.
    let ours = "m234p456s678m55p78";
    let events = [
        (
            json!({"qipai": {"zhuangfeng": 0, "jushu": 0, "changbang": 0, "lizhibang": 0,
                "defen": [25000, 25000, 25000, 25000], "baopai": "s9",
                "shoupai": [ours, "m111999p111s1199", "s1111z1234567m1", "z5566p22334455"]}}),
            json!({"qipai": {"zhuangfeng": 0, "jushu": 0, "changbang": 0, "lizhibang": 0,
                "defen": [25000, 25000, 25000, 25000], "baopai": "s9",
                "shoupai": [ours, "", "", ""]}}),
        ),
        (
            json!({"zimo": {"l": 0, "p": "z7"}}),
            json!({"zimo": {"l": 0, "p": "z7"}}),
        ),
        (
            json!({"dapai": {"l": 0, "p": "z7_"}}),
            json!({"dapai": {"l": 0, "p": "z7_"}}),
        ),
        (
            json!({"zimo": {"l": 1, "p": "s2"}}),
            json!({"zimo": {"l": 1, "p": ""}}),
        ),
        // Completes our hand without a yaku: passed, so furiten.
        (
            json!({"dapai": {"l": 1, "p": "p9"}}),
            json!({"dapai": {"l": 1, "p": "p9"}}),
        ),
        (
            json!({"zimo": {"l": 2, "p": "s9"}}),
            json!({"zimo": {"l": 2, "p": ""}}),
        ),
        (
            json!({"gang": {"l": 2, "m": "s1111"}}),
            json!({"gang": {"l": 2, "m": "s1111"}}),
        ),
        (
            json!({"kaigang": {"baopai": "m5"}}),
            json!({"kaigang": {"baopai": "m5"}}),
        ),
        (
            json!({"gangzimo": {"l": 2, "p": "z1"}}),
            json!({"gangzimo": {"l": 2, "p": ""}}),
        ),
        (
            json!({"dapai": {"l": 2, "p": "z5"}}),
            json!({"dapai": {"l": 2, "p": "z5"}}),
        ),
        (
            json!({"fulou": {"l": 3, "m": "z555-"}}),
            json!({"fulou": {"l": 3, "m": "z555-"}}),
        ),
        (
            json!({"dapai": {"l": 3, "p": "m1"}}),
            json!({"dapai": {"l": 3, "p": "m1"}}),
        ),
        (
            json!({"zimo": {"l": 0, "p": "p3"}}),
            json!({"zimo": {"l": 0, "p": "p3"}}),
        ),
        (
            json!({"dapai": {"l": 0, "p": "p3_"}}),
            json!({"dapai": {"l": 0, "p": "p3_"}}),
        ),
        (
            json!({"zimo": {"l": 1, "p": "s3"}}),
            json!({"zimo": {"l": 1, "p": ""}}),
        ),
    ];
    let kaiju = |seq: Option<u64>, log: Option<Value>| {
        let mut msg = json!({"kaiju": {"id": 0, "rule": {"クイタンあり": true}, "title": "t",
            "player": ["a", "b", "c", "d"], "qijia": 0}});
        if let Some(seq) = seq {
            msg["seq"] = json!(seq);
        }
        if let Some(log) = log {
            msg["kaiju"]["log"] = log;
        }
        msg
    };
    let mut live = Bot::with_strategy(Real::new());
    live.on_game(&kaiju(Some(1), None)).unwrap();
    let mut seq = 2;
    for (_, sent) in &events {
        let mut msg = sent.clone();
        if sent.get("kaigang").is_none() {
            msg["seq"] = json!(seq);
            seq += 1;
        }
        live.on_game(&msg).unwrap();
    }
    let record: Vec<Value> = events.iter().map(|(logged, _)| logged.clone()).collect();
    let mut back = Bot::with_strategy(Real::new());
    back.on_game(&kaiju(None, Some(json!([[], record]))))
        .unwrap();
    assert!(live.strategy.hand.is_some());
    assert!(!live.strategy.can_ron, "furiten since p9 went by");
    assert_eq!(
        format!("{:?}", back.strategy),
        format!("{:?}", live.strategy)
    );
    assert_eq!(back.take_stats().lost_track, 0);

    // Rejoined after the hand ended: nothing to rebuild, nothing lost.
    let mut over = record.clone();
    over.push(
        json!({"pingju": {"name": "荒牌平局", "shoupai": ["", "", "", ""],
        "fenpei": [0, 0, 0, 0]}}),
    );
    let mut back = Bot::with_strategy(Real::new());
    back.on_game(&kaiju(None, Some(json!([over])))).unwrap();
    assert!(back.strategy.hand.is_none());
    assert!(back.strategy.lost.is_none());
}
