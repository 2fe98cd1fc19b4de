//! Tests of the bot state machine, fed `GAME` messages as the server sends them. Kept apart from
//! `bot.rs` because they are half its length; they reach its private items through `super::*`.

use super::*;

fn kaiju(id: u8, qijia: u8, seq: u64) -> Value {
    json!({"kaiju": {"id": id, "rule": {}, "title": "電脳麻将: ネット対戦\n2026/11/30",
        "player": ["carol", "dave", "bob", "alice"], "qijia": qijia}, "seq": seq})
}

fn qipai(jushu: u8, seq: u64) -> Value {
    json!({"qipai": {"zhuangfeng": 0, "jushu": jushu, "changbang": 0, "lizhibang": 0,
        "defen": [25000, 25000, 25000, 25000], "baopai": "m3",
        "shoupai": ["", "", "", "m669p12247s16z167"]}, "seq": seq})
}

fn reply(bot: &mut Bot, msg: Value) -> Reply {
    bot.on_game(&msg).unwrap().expect("a request gets a reply")
}

#[test]
fn verified_sequence_for_alice() {
    let mut bot = Bot::new();
    let players = json!({"players": [{"name": "carol", "uid": "c"}, {"name": "dave", "uid": "d"},
        {"name": "bob", "uid": "b"}, {"name": "alice", "uid": "a"}]});
    for _ in 0..4 {
        assert_eq!(bot.on_game(&players).unwrap(), None);
    }
    let r = reply(&mut bot, kaiju(3, 0, 1));
    assert_eq!(
        (r.body(), r.step, r.think),
        (json!({"seq": 1}), StepKind::Kaiju, false)
    );
    let r = reply(&mut bot, qipai(0, 2));
    assert_eq!((r.body(), r.step), (json!({"seq": 2}), StepKind::Qipai));
    assert_eq!(bot.state().my_l(), Some(3));
    let others = [
        (json!({"zimo": {"l": 0, "p": ""}, "seq": 3}), StepKind::Zimo),
        (
            json!({"dapai": {"l": 0, "p": "s9_"}, "seq": 4}),
            StepKind::Dapai,
        ),
        (json!({"zimo": {"l": 1, "p": ""}, "seq": 5}), StepKind::Zimo),
        (
            json!({"dapai": {"l": 1, "p": "s0_"}, "seq": 6}),
            StepKind::Dapai,
        ),
        (json!({"zimo": {"l": 2, "p": ""}, "seq": 7}), StepKind::Zimo),
        (
            json!({"dapai": {"l": 2, "p": "s6_"}, "seq": 8}),
            StepKind::Dapai,
        ),
    ];
    for (msg, step) in others {
        let seq = msg["seq"].as_u64().unwrap();
        let r = reply(&mut bot, msg);
        assert_eq!(
            (r.seq, r.body(), r.step, r.think),
            (seq, json!({"seq": seq}), step, false)
        );
    }
    let r = reply(&mut bot, json!({"zimo": {"l": 3, "p": "m0"}, "seq": 9}));
    assert_eq!(r.body(), json!({"dapai": "m0_", "seq": 9}));
    assert_eq!((r.step, r.think), (StepKind::Zimo, true));
    let r = reply(&mut bot, json!({"dapai": {"l": 3, "p": "m0_"}, "seq": 10}));
    assert_eq!((r.body(), r.think), (json!({"seq": 10}), false));
    let r = reply(
        &mut bot,
        json!({"pingju": {"name": "荒牌平局", "shoupai": ["", "", "", ""],
        "fenpei": [0, 0, 0, 0]}, "seq": 143}),
    );
    assert_eq!((r.body(), r.step), (json!({"seq": 143}), StepKind::Pingju));
    let r = reply(
        &mut bot,
        json!({"jieju": {"title": "t", "player": [], "qijia": 0, "log": [[]],
        "defen": [25000, 25000, 25000, 25000], "point": ["35.0", "5.0", "-15.0", "-25.0"],
        "rank": [1, 2, 3, 4]}, "seq": 570}),
    );
    assert_eq!((r.body(), r.step), (json!({"seq": 570}), StepKind::Jieju));
    let state = bot.state();
    assert!(state.ended);
    assert_eq!(state.rank, Some(4));
    assert_eq!(
        (state.hands, state.draws, state.wins, state.own_draws),
        (1, 1, 0, 1)
    );
    assert_eq!(state.last_seq, Some(570));
}

#[test]
fn timer_field_is_not_the_payload() {
    let mut bot = Bot::new();
    let r = reply(
        &mut bot,
        json!({"timer": [10, 20], "zimo": {"l": 0, "p": "z7"}, "seq": 3}),
    );
    assert_eq!(r.body(), json!({"dapai": "z7_", "seq": 3}));
    let r = reply(&mut bot, json!({"hule": {"l": 1}, "seq": 4, "timer": null}));
    assert_eq!((r.step, r.body()), (StepKind::Hule, json!({"seq": 4})));
    assert_eq!(bot.state().wins, 1);
}

#[test]
fn notifications_get_no_reply() {
    let mut bot = Bot::new();
    reply(&mut bot, kaiju(1, 2, 1));
    for msg in [
        json!({"players": [null, null, null, null]}),
        json!({"say": {"l": 0, "name": "peng"}}),
        json!({"kaigang": {"baopai": "m6"}}),
        json!({"something_new": 1}),
    ] {
        assert_eq!(bot.on_game(&msg).unwrap(), None, "{msg}");
    }
    assert_eq!(bot.state().seat, Some(1));
}

#[test]
fn own_gangzimo_discards_the_replacement_tile() {
    let mut bot = Bot::new();
    reply(&mut bot, kaiju(0, 0, 1));
    let r = reply(
        &mut bot,
        json!({"gang": {"l": 0, "m": "p444+4"}, "seq": 88}),
    );
    assert_eq!((r.step, r.body()), (StepKind::Gang, json!({"seq": 88})));
    let r = reply(
        &mut bot,
        json!({"gangzimo": {"l": 0, "p": "p7"}, "seq": 89}),
    );
    assert_eq!(r.body(), json!({"dapai": "p7_", "seq": 89}));
    assert_eq!((r.step, r.think), (StepKind::Gangzimo, true));
    let r = reply(&mut bot, json!({"gangzimo": {"l": 2, "p": ""}, "seq": 90}));
    assert_eq!((r.body(), r.think), (json!({"seq": 90}), false));
    let r = reply(
        &mut bot,
        json!({"fulou": {"l": 0, "m": "p444+"}, "seq": 15}),
    );
    assert_eq!((r.step, r.body()), (StepKind::Fulou, json!({"seq": 15})));
}

#[test]
fn wind_position_follows_the_hand_number() {
    let mut bot = Bot::new();
    reply(&mut bot, kaiju(3, 0, 1));
    let mut positions = Vec::new();
    for jushu in 0..4u8 {
        reply(&mut bot, qipai(jushu, 2 + u64::from(jushu)));
        positions.push(bot.state().my_l().unwrap());
    }
    assert_eq!(positions, [3, 2, 1, 0]);
    let mut bot = Bot::new();
    reply(&mut bot, kaiju(0, 2, 1));
    reply(&mut bot, qipai(1, 2));
    assert_eq!(bot.state().my_l(), Some(1));
    assert_eq!(bot.state().hands, 1);
}

#[test]
fn reconnect_kaiju_rebuilds_state_from_the_log() {
    let mut bot = Bot::new();
    let rejoin = json!({"kaiju": {"id": 2, "qijia": 1, "rule": {}, "title": "t", "player": [],
    "log": [
        [{"qipai": {"zhuangfeng": 0, "jushu": 0}}, {"zimo": {"l": 0, "p": ""}},
         {"pingju": {"name": "荒牌平局"}}],
        [{"qipai": {"zhuangfeng": 0, "jushu": 1}}, {"zimo": {"l": 0, "p": ""}}],
    ]}});
    assert_eq!(bot.on_game(&rejoin).unwrap(), None);
    let state = bot.state();
    assert_eq!(
        (state.seat, state.qijia, state.jushu),
        (Some(2), Some(1), 1)
    );
    assert_eq!((state.hands, state.draws), (2, 1));
    assert_eq!(state.my_l(), Some(0));
    assert!(!state.ended);
}

#[test]
fn unknown_request_still_gets_a_reply() {
    let mut bot = Bot::new();
    let r = reply(&mut bot, json!({"newthing": {"x": 1}, "seq": 7}));
    assert_eq!((r.step, r.body()), (StepKind::Unknown, json!({"seq": 7})));
}

#[test]
fn malformed_messages_are_protocol_errors() {
    let cases = [
        (json!([1, 2]), "not a JSON object"),
        (json!("GAME"), "not a JSON object"),
        (json!({"zimo": {"l": 0, "p": ""}, "seq": "3"}), "seq"),
        (json!({"zimo": {"l": 0, "p": ""}, "seq": -1}), "seq"),
        (json!({"zimo": {"l": 0, "p": ""}, "seq": 1.5}), "seq"),
        (json!({"seq": 3}), "no payload"),
        (json!({"seq": 3, "timer": [1, 0]}), "no payload"),
        (
            json!({"zimo": {"l": 0}, "seq": 3}),
            "zimo without a valid p",
        ),
        (
            json!({"zimo": {"l": 0, "p": 5}, "seq": 3}),
            "zimo without a valid p",
        ),
        (
            json!({"zimo": {"p": "m1"}, "seq": 3}),
            "zimo without a valid l",
        ),
        (
            json!({"gangzimo": "m1", "seq": 3}),
            "gangzimo without a valid payload object",
        ),
        (
            json!({"kaiju": {"id": 4, "qijia": 0}, "seq": 1}),
            "kaiju without a valid id",
        ),
        (
            json!({"kaiju": {"id": 0}, "seq": 1}),
            "kaiju without a valid qijia",
        ),
        (
            json!({"qipai": {"zhuangfeng": 0}, "seq": 2}),
            "qipai without a valid jushu",
        ),
        (
            json!({"kaiju": {"id": 0, "qijia": 0, "log": 3}}),
            "kaiju without a valid log",
        ),
    ];
    for (msg, expected) in cases {
        let mut bot = Bot::new();
        let err = bot.on_game(&msg).unwrap_err().to_string();
        assert!(err.contains(expected), "{msg}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn step_names_are_stable() {
    let names: Vec<&str> = StepKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "kaiju", "qipai", "zimo", "dapai", "fulou", "gang", "gangzimo", "hule", "pingju",
            "jieju", "unknown"
        ]
    );
    for kind in StepKind::ALL {
        if kind != StepKind::Unknown {
            assert_eq!(StepKind::from_key(kind.as_str()), kind);
        }
    }
    assert_eq!(StepKind::from_key("unknown"), StepKind::Unknown);
}

#[test]
fn a_strategy_can_replace_tsumogiri() {
    struct AlwaysPass;
    impl Strategy for AlwaysPass {
        fn decide(&mut self, _game: &GameState, _request: &Request<'_>) -> Decision {
            Decision {
                action: Action::Pass,
                think: true,
            }
        }
    }
    let mut bot = Bot::with_strategy(AlwaysPass);
    let r = bot
        .on_game(&json!({"zimo": {"l": 0, "p": "m1"}, "seq": 3}))
        .unwrap()
        .unwrap();
    assert_eq!((r.body(), r.think), (json!({"seq": 3}), true));
}
