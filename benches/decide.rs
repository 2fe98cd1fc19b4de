//! Decision time of the real player (`--bot shanten`), on random hands: own turn (win check,
//! kans, the discard by shanten and unseen improving tiles, the riichi check) and a call
//! decision on another's discard (ron check, pon and chi options, the call rule). Plain
//! `harness = false` bench: `cargo bench --bench decide` prints p50/p99/max per kind, twice:
//! wall time, and the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), which leaves out the time
//! the thread was preempted, so other processes on a shared machine do not land in the p99.

use std::time::Instant;

use tsumo::mahjong::bot::real::choose;
use tsumo::mahjong::hand::shanten;
use tsumo::mahjong::hand::tile::{self, Tile};
use tsumo::mahjong::hand::yaku::WinContext;
use tsumo::mahjong::hand::Hand;
use tsumo::sys::rng::XorShift;

/// A dealt hand of 13, a drawn tile and another player's discard, from one shuffled wall.
fn deal(rng: &mut XorShift) -> (Hand, String, String) {
    let mut wall: Vec<Tile> = (0..136).map(|i| (i / 4) as Tile).collect();
    for i in (1..wall.len()).rev() {
        wall.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut text = String::new();
    let mut dealt: Vec<Tile> = wall[..13].to_vec();
    dealt.sort_unstable();
    for t in dealt {
        text.push_str(&tile::name(t, false));
    }
    let hand = Hand::parse(&text).expect("a dealt hand");
    (
        hand,
        tile::name(wall[13], false),
        tile::name(wall[14], false),
    )
}

/// This thread's CPU time, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall and CPU nanoseconds of each decision of one kind.
#[derive(Default)]
struct Times {
    wall: Vec<u64>,
    cpu: Vec<u64>,
}

impl Times {
    fn time<T>(&mut self, decide: impl FnOnce() -> T) -> T {
        let (wall, cpu) = (Instant::now(), thread_cpu_ns());
        let out = decide();
        self.cpu.push(thread_cpu_ns().saturating_sub(cpu));
        self.wall.push(wall.elapsed().as_nanos() as u64);
        out
    }

    fn print(self, name: &str) {
        percentiles(&format!("{name}, wall"), self.wall);
        percentiles(&format!("{name}, CPU"), self.cpu);
    }
}

fn percentiles(name: &str, mut ns: Vec<u64>) {
    ns.sort_unstable();
    let at = |p: f64| ns[((ns.len() as f64 * p) as usize).min(ns.len() - 1)] as f64 / 1000.0;
    println!(
        "{name:<34} {:>8} decisions  p50 {:>7.2} us  p99 {:>7.2} us  max {:>8.2} us",
        ns.len(),
        at(0.50),
        at(0.99),
        *ns.last().unwrap_or(&0) as f64 / 1000.0
    );
}

fn main() {
    let started = Instant::now();
    shanten::warm_up();
    println!(
        "suit table built in {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let mut rng = XorShift::new(0x9E37_79B9_7F4A_7C15);
    let visible = [0u8; 34];
    let ctx = WinContext {
        tsumo: true,
        round_wind: 0,
        seat_wind: 1,
        open_tanyao: true,
    };
    let (mut own, mut call) = (Times::default(), Times::default());
    for _ in 0..50_000 {
        let (hand, drawn, discard) = deal(&mut rng);

        // Own turn.
        let mut mine = hand.clone();
        if mine.draw(&drawn).is_err() {
            continue;
        }
        let (win, d, riichi) = own.time(|| {
            let win = choose::win_is_legal(&mine, &mine.counts, &ctx, false);
            let d = choose::best_discard(&mine, &visible);
            let kans = mine.kan_options();
            let mut riichi = false;
            if let Some(d) = &d {
                for m in &kans {
                    let mut after = mine.clone();
                    let _ = after.kan(m).is_ok() && after.shanten() <= d.shanten;
                }
                if d.shanten == 0 {
                    let mut after = mine.clone();
                    riichi = after.discard(&d.text).is_ok()
                        && shanten::waits(&after.counts, after.melds()) != 0;
                }
            }
            (win, d, riichi)
        });
        std::hint::black_box((win, d, riichi));

        // Another's discard, from the player on our left.
        let (ron, chosen) = call.time(|| {
            let mut counts = hand.counts;
            let (t, _) = tile::parse(&discard).unwrap_or((0, false));
            counts[usize::from(t)] += 1;
            let ron = choose::win_is_legal(
                &hand,
                &counts,
                &WinContext {
                    tsumo: false,
                    ..ctx
                },
                false,
            );
            let mut options = hand.pon_options(&discard, '-');
            options.extend(hand.chi_options(&discard));
            (ron, choose::choose_call(&hand, &options, &ctx, &visible))
        });
        std::hint::black_box((ron, chosen));
    }
    own.print("own turn (draw)");
    call.print("call decision (discard)");
}
