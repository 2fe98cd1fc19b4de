//! The rule object sent with `START`. majiang-server uses whatever the client sends, unchecked,
//! and a partial object crashes the game (every player gets an empty `END`), so tsumo always
//! sends every key: a verified 東風戦 default, with a user's partial rule file merged onto it
//! key by key and type-checked here, before any traffic.
//!
//! The object has [`RULE_KEYS`] = 28 keys. The protocol notes say "27", but their verified JSON
//! and majiang-core's current `lib/rule.js` have 28 (`連風牌は2符` was added); the JSON wins.
//!
//! Also the `--timer LIMIT[+BANK]` value, START's third argument.

use serde_json::{json, Map, Value};
use std::path::Path;
use thiserror::Error;

/// Node's setTimeout fires at once beyond 2^31-1 ms; the server's deadline is
/// `(limit + bank) * 1000 + 500` ms, so a longer timer would time every player out at once.
const MAX_TIMER_SECONDS: u64 = (i32::MAX as u64 - 500) / 1000;

/// Keys in a complete rule object (majiang-core `rule()`).
pub const RULE_KEYS: usize = 28;

/// A rule or timer the user gave that cannot be sent. One line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleError {
    #[error("{path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{origin}: the rule must be a JSON object, not {found}")]
    NotObject { origin: String, found: &'static str },
    #[error("{origin}: unknown rule key \"{key}\"")]
    UnknownKey { origin: String, key: String },
    #[error("{origin}: rule key \"{key}\" must be {expected}, not {found}")]
    WrongType {
        origin: String,
        key: String,
        expected: String,
        found: String,
    },
    #[error("--timer expects LIMIT or LIMIT+BANK in whole seconds (such as 10+20), not \"{0}\"")]
    Timer(String),
    #[error("--timer {0}: limit plus bank must be at most {MAX_TIMER_SECONDS} seconds")]
    TimerTooLong(String),
}

/// majiang-core's complete rule with the load-test 東風戦 settings: one wind round, no dealer
/// repeat, no bankruptcy end, no abortive draws, no overtime. Every table then plays exactly 4
/// hands. Verified against a running server (protocol notes §6), with one change from there:
/// `最大同時和了数` 3, since at 2 a triple ron is the abortive draw 三家和, which
/// `途中流局あり` does not turn off and after which the dealer deals again (a fifth hand;
/// checked in majiang-core by tests/mahjong.rs, `a_triple_ron_under_the_default_rule…`).
pub fn default_rule() -> Value {
    json!({
        "配給原点": 25000,
        "順位点": ["20.0", "10.0", "-10.0", "-20.0"],
        "連風牌は2符": false,
        "赤牌": {"m": 1, "p": 1, "s": 1},
        "クイタンあり": true,
        "喰い替え許可レベル": 0,
        "場数": 1,
        "途中流局あり": false,
        "流し満貫あり": true,
        "ノーテン宣言あり": false,
        "ノーテン罰あり": true,
        "最大同時和了数": 3,
        "連荘方式": 0,
        "トビ終了あり": false,
        "オーラス止めあり": true,
        "延長戦方式": 0,
        "一発あり": true,
        "裏ドラあり": true,
        "カンドラあり": true,
        "カン裏あり": true,
        "カンドラ後乗せ": true,
        "ツモ番なしリーチあり": false,
        "リーチ後暗槓許可レベル": 2,
        "役満の複合あり": true,
        "ダブル役満あり": true,
        "数え役満あり": true,
        "役満パオあり": true,
        "切り上げ満貫あり": false
    })
}

/// Merges a partial rule onto [`default_rule`]. Only known keys, each with the default's JSON
/// type; nested objects (`赤牌`) merge the same way. The result always has all
/// [`RULE_KEYS`] keys.
pub fn merge(partial: &Value) -> Result<Value, RuleError> {
    merge_from(partial, "rule")
}

/// Reads a JSON rule file (complete or partial) and [`merge`]s it.
pub fn load(path: &Path) -> Result<Value, RuleError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RuleError::Read {
        path: origin.clone(),
        reason: e.to_string(),
    })?;
    let partial: Value = serde_json::from_str(&text).map_err(|e| RuleError::Read {
        path: origin.clone(),
        reason: format!("not valid JSON: {e}"),
    })?;
    merge_from(&partial, &origin)
}

fn merge_from(partial: &Value, origin: &str) -> Result<Value, RuleError> {
    let mut rule = default_rule();
    if let Value::Object(target) = &mut rule {
        merge_object(target, partial, "", origin)?;
    }
    Ok(rule)
}

/// Overwrites `target`'s entries with `partial`'s; `prefix` names the enclosing key.
fn merge_object(
    target: &mut Map<String, Value>,
    partial: &Value,
    prefix: &str,
    origin: &str,
) -> Result<(), RuleError> {
    let Value::Object(partial) = partial else {
        return Err(RuleError::NotObject {
            origin: origin.to_owned(),
            found: type_name(partial),
        });
    };
    for (key, value) in partial {
        let path = format!("{prefix}{key}");
        let Some(default) = target.get_mut(key) else {
            return Err(RuleError::UnknownKey {
                origin: origin.to_owned(),
                key: path,
            });
        };
        if let (Value::Object(inner), Value::Object(_)) = (&mut *default, value) {
            merge_object(inner, value, &format!("{path}."), origin)?;
            continue;
        }
        if !same_shape(default, value) {
            return Err(RuleError::WrongType {
                origin: origin.to_owned(),
                key: path,
                expected: shape_name(default),
                found: type_name(value).to_owned(),
            });
        }
        *default = value.clone();
    }
    Ok(())
}

/// Same JSON type; integers stay integers; arrays keep the default's length and element types
/// (`順位点` is four strings, one per rank).
fn same_shape(default: &Value, value: &Value) -> bool {
    match (default, value) {
        (Value::Number(d), Value::Number(v)) => d.is_f64() || !v.is_f64(),
        (Value::Number(_), _) => false,
        (Value::Array(d), Value::Array(v)) => {
            d.len() == v.len() && d.iter().zip(v).all(|(d, v)| same_shape(d, v))
        }
        _ => type_name(default) == type_name(value),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn shape_name(default: &Value) -> String {
    match default {
        Value::Array(items) => match items.first() {
            Some(first) => format!(
                "an array of {} {}s",
                items.len(),
                type_name(first)
                    .trim_start_matches("a ")
                    .trim_start_matches("an ")
            ),
            None => "an array".to_owned(),
        },
        other => type_name(other).to_owned(),
    }
}

/// Parses `--timer LIMIT[+BANK]` ("10+20" → `[10, 20]`, "5" → `[5]`): seconds per move, plus a
/// bank of extra seconds refilled each hand. Sent as START's third argument.
pub fn parse_timer(text: &str) -> Result<Vec<u64>, RuleError> {
    let bad = || RuleError::Timer(text.to_owned());
    let parts: Vec<&str> = text.split('+').collect();
    if parts.len() > 2 {
        return Err(bad());
    }
    let seconds = parts
        .iter()
        .map(|part| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            part.parse::<u64>().map_err(|_| bad())
        })
        .collect::<Result<Vec<u64>, RuleError>>()?;
    let total = seconds.iter().try_fold(0u64, |sum, s| sum.checked_add(*s));
    if total.is_none_or(|total| total > MAX_TIMER_SECONDS) {
        return Err(RuleError::TimerTooLong(text.to_owned()));
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule JSON of protocol notes §6, byte for byte, but for `最大同時和了数` 3.
    const VERIFIED: &str = r#"{"配給原点":25000,"順位点":["20.0","10.0","-10.0","-20.0"],"連風牌は2符":false,"赤牌":{"m":1,"p":1,"s":1},"クイタンあり":true,"喰い替え許可レベル":0,"場数":1,"途中流局あり":false,"流し満貫あり":true,"ノーテン宣言あり":false,"ノーテン罰あり":true,"最大同時和了数":3,"連荘方式":0,"トビ終了あり":false,"オーラス止めあり":true,"延長戦方式":0,"一発あり":true,"裏ドラあり":true,"カンドラあり":true,"カン裏あり":true,"カンドラ後乗せ":true,"ツモ番なしリーチあり":false,"リーチ後暗槓許可レベル":2,"役満の複合あり":true,"ダブル役満あり":true,"数え役満あり":true,"役満パオあり":true,"切り上げ満貫あり":false}"#;

    fn keys(rule: &Value) -> usize {
        rule.as_object().map_or(0, Map::len)
    }

    #[test]
    fn default_is_the_verified_tonpuusen_rule() {
        let rule = default_rule();
        assert_eq!(RULE_KEYS, 28);
        assert_eq!(keys(&rule), RULE_KEYS);
        assert_eq!(rule, serde_json::from_str::<Value>(VERIFIED).unwrap());
        assert_eq!(rule["場数"], 1);
        assert_eq!(rule["連荘方式"], 0);
        assert_eq!(rule["トビ終了あり"], false);
        assert_eq!(rule["途中流局あり"], false);
        assert_eq!(rule["延長戦方式"], 0);
        assert_eq!(rule["最大同時和了数"], 3);
    }

    #[test]
    fn merge_keeps_every_key() {
        let rule = merge(&json!({"場数": 2})).unwrap();
        assert_eq!(keys(&rule), RULE_KEYS);
        assert_eq!(rule["場数"], 2);
        assert_eq!(rule["連荘方式"], 0);
        assert_eq!(merge(&json!({})).unwrap(), default_rule());
        let full = merge(&serde_json::from_str(VERIFIED).unwrap()).unwrap();
        assert_eq!(full, default_rule());
    }

    #[test]
    fn nested_red_fives_merge_key_by_key() {
        let rule = merge(&json!({"赤牌": {"p": 2}})).unwrap();
        assert_eq!(rule["赤牌"], json!({"m": 1, "p": 2, "s": 1}));
        let err = merge(&json!({"赤牌": {"z": 1}})).unwrap_err().to_string();
        assert_eq!(err, "rule: unknown rule key \"赤牌.z\"");
        let err = merge(&json!({"赤牌": 1})).unwrap_err().to_string();
        assert_eq!(
            err,
            "rule: rule key \"赤牌\" must be an object, not an integer"
        );
    }

    #[test]
    fn unknown_key_is_named_alone() {
        let err = merge(&json!({"場数": 1, "半荘": true})).unwrap_err();
        assert_eq!(
            err,
            RuleError::UnknownKey {
                origin: "rule".into(),
                key: "半荘".into()
            }
        );
        assert_eq!(err.to_string(), "rule: unknown rule key \"半荘\"");
    }

    #[test]
    fn wrong_types_name_key_and_expected_type() {
        let cases = [
            (
                json!({"場数": "1"}),
                "rule key \"場数\" must be an integer, not a string",
            ),
            (
                json!({"場数": 1.5}),
                "rule key \"場数\" must be an integer, not a fractional number",
            ),
            (
                json!({"一発あり": 1}),
                "rule key \"一発あり\" must be a boolean, not an integer",
            ),
            (
                json!({"場数": null}),
                "rule key \"場数\" must be an integer, not null",
            ),
            (
                json!({"順位点": [20, 10, -10, -20]}),
                "must be an array of 4 strings, not an array",
            ),
            (
                json!({"順位点": ["20.0"]}),
                "must be an array of 4 strings, not an array",
            ),
        ];
        for (partial, expected) in cases {
            let err = merge(&partial).unwrap_err().to_string();
            assert!(err.contains(expected), "{partial}: {err}");
        }
        let err = merge(&json!([1])).unwrap_err().to_string();
        assert_eq!(err, "rule: the rule must be a JSON object, not an array");
    }

    #[test]
    fn load_reads_and_merges_a_file() {
        let dir = std::env::temp_dir().join(format!("tsumo-rules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("east-south.json");
        std::fs::write(&good, r#"{"場数": 2, "延長戦方式": 1}"#).unwrap();
        let rule = load(&good).unwrap();
        assert_eq!(
            (keys(&rule), &rule["場数"], &rule["延長戦方式"]),
            (RULE_KEYS, &json!(2), &json!(1))
        );
        let typo = dir.join("typo.json");
        std::fs::write(&typo, r#"{"場数x": 2}"#).unwrap();
        let err = load(&typo).unwrap_err().to_string();
        assert!(
            err.starts_with(&typo.display().to_string()) && err.contains("場数x"),
            "{err}"
        );
        let broken = dir.join("broken.json");
        std::fs::write(&broken, "{").unwrap();
        assert!(load(&broken)
            .unwrap_err()
            .to_string()
            .contains("not valid JSON"));
        let missing = load(&dir.join("missing.json")).unwrap_err().to_string();
        assert!(missing.contains("missing.json"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn timer_values() {
        assert_eq!(parse_timer("10+20").unwrap(), vec![10, 20]);
        assert_eq!(parse_timer("5").unwrap(), vec![5]);
        assert_eq!(parse_timer("0+0").unwrap(), vec![0, 0]);
        for bad in [
            "", "+", "10+", "+5", "1+2+3", "-1", "1.5", "10s", " 5", "a", "１",
        ] {
            let err = parse_timer(bad).unwrap_err();
            assert_eq!(err, RuleError::Timer(bad.into()), "{bad:?}");
        }
        assert!(parse_timer("99999999999999999999").is_err());
        assert!(matches!(parse_timer("2147483"), Ok(v) if v == [2147483]));
        assert_eq!(
            parse_timer("2000000+147484"),
            Err(RuleError::TimerTooLong("2000000+147484".into()))
        );
    }
}
