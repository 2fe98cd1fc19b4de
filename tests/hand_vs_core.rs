//! The bot's hand logic against majiang-core itself — the library the server decides with —
//! through `scripts/hand-check.js`: shanten (`Majiang.Util.xiangting`), complete hands and
//! sure yaku (`Majiang.Util.hule`), legal discards and kans, chi and pon options, on random
//! hands and on hands built to be complete (melds, kans, seven pairs, thirteen orphans) or one
//! tile off. They must agree on every hand; a yaku the bot is sure of must be one majiang-core
//! finds (the bot may miss yaku, never invent one).
//!
//! `TSUMO_HAND_CHECKS=N` sets the number of hands per kind of question (default 25,000, so
//! 100,000 questions in all).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use tsumo::mahjong::hand::tile::{self, Tile};
use tsumo::mahjong::hand::yaku::{complete, sure_yaku, WinContext};
use tsumo::mahjong::hand::Hand;
use tsumo::sys::rng::XorShift;

/// The tests' random source, with `below` over `usize`.
struct Rng(XorShift);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// The tiles still free for a hand being built: counts by kind and the three red fives.
struct Pool {
    left: [u8; 34],
    red_left: [bool; 3],
    /// Kinds the hand is built from (all simples, one suit and honours, or any).
    kinds: Vec<Tile>,
}

impl Pool {
    fn new(rng: &mut Rng) -> Pool {
        let kinds: Vec<Tile> = match rng.below(5) {
            0 => (0..34).filter(|&t| !tile::is_yaojiu(t)).collect(),
            1 => {
                let s = rng.below(3) as u8;
                (s * 9..s * 9 + 9).chain(27..34).collect()
            }
            _ => (0..34).collect(),
        };
        Pool {
            left: [4; 34],
            red_left: [true; 3],
            kinds,
        }
    }

    fn take(&mut self, t: Tile, n: u8) -> bool {
        if self.left[usize::from(t)] < n {
            return false;
        }
        self.left[usize::from(t)] -= n;
        true
    }

    /// One tile of kind `t` as text; a five is red while the red one is free, half the time.
    fn name(&mut self, rng: &mut Rng, t: Tile) -> String {
        let red =
            t < 27 && tile::number(t) == 5 && self.red_left[tile::suit(t)] && rng.below(2) == 0;
        if red {
            self.red_left[tile::suit(t)] = false;
        }
        tile::name(t, red)
    }

    fn any(&mut self, rng: &mut Rng) -> Tile {
        loop {
            let t = self.kinds[rng.below(self.kinds.len())];
            if self.take(t, 1) {
                return t;
            }
        }
    }
}

/// A hand being built: concealed tiles (as text) and melds.
struct Built {
    concealed: Vec<String>,
    melds: Vec<String>,
}

impl Built {
    fn text(&self, drawn: Option<&str>) -> String {
        let mut sorted = self.concealed.clone();
        sorted.sort_by_key(|p| (tile::parse(p).map(|(t, _)| t), p.clone()));
        let mut out = String::new();
        let mut last = ' ';
        for p in &sorted {
            let s = p.as_bytes()[0] as char;
            if s != last {
                out.push(s);
                last = s;
            }
            out.push(p.as_bytes()[1] as char);
        }
        if let Some(d) = drawn {
            out.push_str(d);
        }
        for m in &self.melds {
            out.push(',');
            out.push_str(m);
        }
        out
    }
}

fn mark(rng: &mut Rng) -> char {
    ['+', '=', '-'][rng.below(3)]
}

/// A meld from the pool (no red fives in pons and kans, as majiang-core would write them
/// otherwise), or `None` if the tiles are gone.
fn meld(rng: &mut Rng, pool: &mut Pool) -> Option<String> {
    let t = pool.kinds[rng.below(pool.kinds.len())];
    let s = tile::SUITS[tile::suit(t)] as char;
    let n = tile::number(t);
    let five = t < 27 && n == 5;
    match rng.below(5) {
        0 if t < 27 && n <= 7 => {
            if !(pool.take(t, 1) && pool.take(t + 1, 1) && pool.take(t + 2, 1)) {
                return None;
            }
            let claimed = rng.below(3);
            let mut out = String::from(s);
            for i in 0..3u8 {
                let name = pool.name(rng, t + i);
                out.push(name.as_bytes()[1] as char);
                if usize::from(i) == claimed {
                    out.push('-');
                }
            }
            Some(out)
        }
        1 | 0 if !five => pool
            .take(t, 3)
            .then(|| format!("{s}{n}{n}{n}{}", mark(rng))),
        2 if !five => pool
            .take(t, 4)
            .then(|| format!("{s}{n}{n}{n}{n}{}", mark(rng))),
        3 if !five => pool.take(t, 4).then(|| format!("{s}{n}{n}{n}{n}")),
        4 if !five => pool
            .take(t, 4)
            .then(|| format!("{s}{n}{n}{n}{}{n}", mark(rng))),
        _ => None,
    }
}

/// A concealed set (run or triplet) into `out`.
fn set(rng: &mut Rng, pool: &mut Pool, out: &mut Vec<String>) -> bool {
    let t = pool.kinds[rng.below(pool.kinds.len())];
    let tiles: Vec<Tile> = if rng.below(3) > 0 && t < 27 && tile::number(t) <= 7 {
        vec![t, t + 1, t + 2]
    } else {
        vec![t, t, t]
    };
    let mut taken = Vec::new();
    for &x in &tiles {
        if !pool.take(x, 1) {
            for &y in &taken {
                pool.left[usize::from(y)] += 1;
            }
            return false;
        }
        taken.push(x);
    }
    for x in tiles {
        let name = pool.name(rng, x);
        out.push(name);
    }
    true
}

/// A hand of 14 tiles (melds counted as 3): random, built complete, or built and then one tile
/// swapped.
fn hand14(rng: &mut Rng) -> Built {
    let mut pool = Pool::new(rng);
    let mut built = Built {
        concealed: Vec::new(),
        melds: Vec::new(),
    };
    match rng.below(10) {
        0..=2 => {
            for _ in 0..14 {
                let t = pool.any(rng);
                let name = pool.name(rng, t);
                built.concealed.push(name);
            }
            return built;
        }
        3 => {
            // Seven pairs (sometimes with a four of a kind, which majiang-core rejects).
            while built.concealed.len() < 14 {
                let t = pool.kinds[rng.below(pool.kinds.len())];
                let n = if rng.below(20) == 0 { 4 } else { 2 };
                if built.concealed.len() + n <= 14 && pool.take(t, n as u8) {
                    for _ in 0..n {
                        let name = pool.name(rng, t);
                        built.concealed.push(name);
                    }
                }
            }
        }
        4 => {
            for t in tile::YAOJIU {
                pool.take(t, 1);
                built.concealed.push(tile::name(t, false));
            }
            let extra = tile::YAOJIU[rng.below(13)];
            pool.take(extra, 1);
            built.concealed.push(tile::name(extra, false));
        }
        _ => {
            let melds = [0, 0, 1, 1, 2, 3, 4][rng.below(7)];
            while built.melds.len() < melds {
                if let Some(m) = meld(rng, &mut pool) {
                    built.melds.push(m);
                }
            }
            let mut sets = built.melds.len();
            while sets < 4 {
                if set(rng, &mut pool, &mut built.concealed) {
                    sets += 1;
                }
            }
            loop {
                let t = pool.kinds[rng.below(pool.kinds.len())];
                if pool.take(t, 2) {
                    for _ in 0..2 {
                        let name = pool.name(rng, t);
                        built.concealed.push(name);
                    }
                    break;
                }
            }
        }
    }
    if rng.below(3) == 0 {
        // One tile off: swap a concealed tile for another.
        let i = rng.below(built.concealed.len());
        let t = pool.any(rng);
        built.concealed[i] = pool.name(rng, t);
    }
    built
}

fn my_hand(built: &Built, drawn: Option<&str>) -> Hand {
    let mut hand = Hand::parse(&built.text(None)).expect("a built hand parses");
    if let Some(d) = drawn {
        hand.draw(d).expect("the drawn tile fits");
    }
    hand
}

#[test]
fn hands_agree_with_majiang_core() {
    common::majiang::ensure_installed();
    let per_kind: usize = std::env::var("TSUMO_HAND_CHECKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25_000);
    let mut rng = Rng(XorShift::new(0x2545_F491_4F6C_DD1D));
    let mut questions = Vec::new();
    let mut mine = Vec::new();
    for i in 0..per_kind * 4 {
        let mut built = hand14(&mut rng);
        let last = built.concealed.remove(rng.below(built.concealed.len()));
        let (zf, mf) = (rng.below(2) as u8, rng.below(4) as u8);
        match i % 4 {
            0 => {
                // Shanten of 13 or 14 tiles.
                let drawn = (rng.below(2) == 0).then_some(last.as_str());
                questions.push(format!("X\t{}", built.text(drawn)));
                mine.push(my_hand(&built, drawn).shanten().to_string());
            }
            1 => {
                let hand = my_hand(&built, Some(&last));
                let tsumo = rng.below(2) == 0;
                let rong = if tsumo {
                    "-".to_string()
                } else {
                    format!("{last}{}", mark(&mut rng))
                };
                let text = built.text(tsumo.then_some(last.as_str()));
                questions.push(format!("W\t{text}\t{rong}\t{zf}\t{mf}"));
                let ctx = WinContext {
                    tsumo,
                    round_wind: zf,
                    seat_wind: mf,
                    open_tanyao: true,
                };
                let done = complete(&hand.counts, &hand.melds);
                let sure = done && sure_yaku(&hand.counts, &hand.melds, &ctx);
                mine.push(format!("{}\t{}", u8::from(done), u8::from(sure)));
            }
            2 => {
                let mut hand = my_hand(&built, Some(&last));
                let riichi = rng.below(8) == 0;
                hand.riichi = riichi;
                questions.push(format!(
                    "O\t{}\t{}",
                    built.text(Some(&last)),
                    u8::from(riichi)
                ));
                mine.push(format!(
                    "{}\t{}",
                    hand.legal_discards().join(","),
                    hand.kan_options().join(",")
                ));
            }
            _ => {
                let hand = my_hand(&built, None);
                let m = mark(&mut rng);
                questions.push(format!("C\t{}\t{last}\t{m}", built.text(None)));
                let chi = if m == '-' {
                    hand.chi_options(&last)
                } else {
                    Vec::new()
                };
                mine.push(format!(
                    "{}\t{}",
                    chi.join(","),
                    hand.pon_options(&last, m).join(",")
                ));
            }
        }
    }
    let answers = ask_majiang_core(&questions);
    assert_eq!(answers.len(), questions.len(), "one answer per question");
    let (mut disagree, mut missed_yaku, mut wins, mut yaku) = (Vec::new(), 0, 0, 0);
    for ((q, theirs), ours) in questions.iter().zip(&answers).zip(&mine) {
        if q.starts_with('W') {
            let t: Vec<&str> = theirs.split('\t').collect();
            let o: Vec<&str> = ours.split('\t').collect();
            wins += usize::from(t[0] == "1");
            yaku += usize::from(t[1] == "1");
            let ok = t.len() == 2 && t[0] == o[0] && (o[1] == "0" || t[1] == "1");
            missed_yaku += usize::from(t[1] == "1" && o[1] == "0");
            if !ok {
                disagree.push(format!("{q} -> core {theirs}, ours {ours}"));
            }
        } else if theirs != ours {
            disagree.push(format!("{q} -> core {theirs:?}, ours {ours:?}"));
        }
    }
    eprintln!(
        "{} questions ({} hands each kind): {} disagree; {wins} complete hands, {yaku} with a yaku, \
         {missed_yaku} of those not sure to the bot",
        questions.len(),
        per_kind,
        disagree.len()
    );
    assert!(
        disagree.is_empty(),
        "{} disagreements, first:\n{}",
        disagree.len(),
        disagree[..disagree.len().min(15)].join("\n")
    );
    assert!(
        wins > per_kind / 10,
        "too few complete hands to mean anything: {wins}"
    );
}

fn ask_majiang_core(questions: &[String]) -> Vec<String> {
    let script = common::majiang::scripts_dir().join("hand-check.js");
    let mut child = Command::new("node")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run node scripts/hand-check.js");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = questions.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().expect("stdout");
    let answers: Vec<String> = BufReader::new(stdout)
        .lines()
        .map(|l| l.expect("a line"))
        .collect();
    writer.join().expect("writer").expect("write questions");
    assert!(child.wait().expect("node exits").success());
    answers
}
