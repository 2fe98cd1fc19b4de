use super::*;

const S: u64 = 1_000_000_000;

fn stage(seconds: f64, from: u64, to: u64) -> Stage {
    Stage {
        duration_ns: (seconds * S as f64) as u64,
        from,
        to,
    }
}

#[test]
fn a_hold_is_the_constant_rate_schedule() {
    for rate in [1, 3, 7, 2000, 123_457] {
        let profile = Profile::new(&[stage(3.0, rate, rate)]);
        assert_eq!(profile.requests(), 3 * rate);
        assert_eq!(profile.total(), 3 * S);
        for n in (0..3 * rate).step_by((rate as usize / 50).max(1)) {
            // t0 + n / R, as `-R` computes it.
            assert_eq!(
                profile.at(n),
                (n as u128 * 1_000_000_000 / rate as u128) as u64
            );
        }
        assert_eq!(profile.at(3 * rate), 3 * S);
        assert_eq!(profile.mean(), rate);
    }
}

#[test]
fn a_ramp_from_zero_has_half_the_requests_at_the_square_root() {
    // 0 → 1000 req/s over 4 s: 2000 requests, request n at T·sqrt(2n / (R·T)).
    let profile = Profile::new(&[stage(4.0, 0, 1000)]);
    assert_eq!(profile.requests(), 2000);
    for n in [0u64, 1, 2, 10, 500, 1999] {
        let expected = 4.0 * (2.0 * n as f64 / 4000.0).sqrt() * S as f64;
        let at = profile.at(n) as f64;
        assert!((at - expected).abs() <= 2.0, "n {n}: {at} vs {expected}");
    }
    assert_eq!(profile.at(2000), 4 * S);
}

#[test]
fn a_ramp_down_to_zero_and_a_jump() {
    // 1 s at 400, a jump to 800, 1 s at 800, then 800 → 0 over 2 s: 400 + 800 + 800.
    let profile = Profile::new(&[
        stage(1.0, 400, 400),
        stage(0.0, 400, 800),
        stage(1.0, 800, 800),
        stage(2.0, 800, 0),
    ]);
    assert_eq!(profile.requests(), 2000);
    assert_eq!(profile.total(), 4 * S);
    assert_eq!(profile.peak(), 800);
    assert_eq!(profile.mean(), 500);
    // The jump: request 400 starts the 800/s hold at 1 s, each 1.25 ms apart.
    assert_eq!(profile.at(399), 997_500_000);
    assert_eq!(profile.at(400), S);
    assert_eq!(profile.at(401), S + 1_250_000);
    // Ramp down: the integral from 2 s is 800·s − 200·s²; 600 requests at s = 1 (3 s).
    let at = profile.at(1800) as i64;
    assert!((at - 3 * S as i64).abs() <= 2, "{at}");
    assert!(profile.at(1999) < 4 * S);
    assert_eq!(profile.due(4 * S), 2000);
}

#[test]
fn monotonic_and_due_is_the_count_of_requests_before_t() {
    let profile = Profile::new(&[
        stage(0.5, 0, 300),
        stage(0.3, 300, 300),
        stage(0.0, 300, 1000),
        stage(0.7, 1000, 10),
        stage(0.2, 0, 0),
        stage(0.4, 7, 7),
    ]);
    let total = profile.requests();
    let times: Vec<Nanos> = (0..=total).map(|n| profile.at(n)).collect();
    for pair in times.windows(2) {
        assert!(pair[0] <= pair[1], "{pair:?}");
    }
    assert!(times[total as usize - 1] < profile.total());
    for t in (0..profile.total() + 10).step_by(1_234_567) {
        let due = profile.due(t);
        assert_eq!(
            due,
            times.iter().filter(|&&at| at < t).count() as u64,
            "t {t}"
        );
        // at(due(t)) ≥ t and the last due one is before t.
        assert!(due == 0 || profile.at(due - 1) < t);
        assert!(profile.at(due) >= t);
    }
}

#[test]
fn a_zero_rate_sends_nothing() {
    // 1 s at 0, then 1 s at 10: the first request at 1 s.
    let profile = Profile::new(&[stage(1.0, 0, 0), stage(1.0, 10, 10)]);
    assert_eq!(profile.requests(), 10);
    assert_eq!(profile.at(0), S);
    assert_eq!(profile.due(S), 0);
    assert_eq!(profile.due(S + 1), 1);
}

#[test]
fn the_target_over_an_interval_is_its_integral_over_its_length() {
    // 0 → 400 over 1 s, 400 for 1 s, a jump to 800, 800 for 1 s.
    let stages = [
        stage(1.0, 0, 400),
        stage(1.0, 400, 400),
        stage(0.0, 400, 800),
        stage(1.0, 800, 800),
    ];
    let target = Target::new(Some(467), &stages, 1);
    let seconds: Vec<f64> = (0..3)
        .map(|k| target.over(k * S, (k + 1) * S).unwrap())
        .collect();
    assert_eq!(seconds, [200.0, 400.0, 800.0]);
    // Half a second into the ramp: 50 of its requests, 100 req/s; its rate then 200 req/s.
    assert_eq!(target.over(0, S / 2), Some(100.0));
    assert_eq!(target.at(S / 2), Some(200.0));
    assert_eq!(target.at(5 * S / 2), Some(800.0));
    assert_eq!(target.at(4 * S), Some(0.0));
    // Two shards: each its half.
    let halves = Target::new(Some(233), &stages, 2);
    assert_eq!(halves.over(2 * S, 3 * S), Some(400.0));
    // `-R` and a closed loop.
    assert_eq!(Target::new(Some(500), &[], 1).over(0, S), Some(500.0));
    assert_eq!(Target::new(None, &[], 1).at(0), None);
}

#[test]
fn the_level_follows_holds_ramps_and_jumps() {
    // 2 s ramp 0 → 16, a jump to 20, 1 s hold, 2 s ramp down to 0.
    let stages = [
        stage(2.0, 0, 16),
        stage(0.0, 16, 20),
        stage(1.0, 20, 20),
        stage(2.0, 20, 0),
    ];
    let profile = Profile::new(&stages);
    assert_eq!(profile.level(0), 0);
    assert_eq!(profile.level(1), 1);
    assert_eq!(profile.level(S / 8), 1);
    assert_eq!(profile.level(S / 8 + 1), 2);
    assert_eq!(profile.level(S), 8);
    assert_eq!(profile.level(2 * S - 1), 16);
    assert_eq!(profile.level(2 * S), 20);
    assert_eq!(profile.level(3 * S), 20);
    assert_eq!(profile.level(3 * S + 1), 20);
    assert_eq!(profile.level(3 * S + S / 10), 19);
    assert_eq!(profile.level(4 * S), 10);
    assert_eq!(profile.level(5 * S - 1), 1);
    assert_eq!(profile.level(5 * S), 0);
    // The stage of an instant: the jump holds none; past the end, the last.
    assert_eq!(stage_at(&stages, 0), 0);
    assert_eq!(stage_at(&stages, 2 * S - 1), 0);
    assert_eq!(stage_at(&stages, 2 * S), 2);
    assert_eq!(stage_at(&stages, 3 * S), 3);
    assert_eq!(stage_at(&stages, 9 * S), 3);
}

/// Auto pacing over a profile follows the rate: a ramp to 40,000/s on 2 threads is paced
/// precisely while a thread's share is under 8,000/s, then in slots that grow to 250 µs; the
/// hold keeps 250 µs, and the ramp down comes back to precise.
#[test]
fn pacing_follows_the_rate() {
    let profile = Profile::new(&[
        stage(4.0, 0, 40_000),
        stage(1.0, 40_000, 40_000),
        stage(4.0, 40_000, 0),
    ]);
    let changes = pacings(&profile, 0.5);
    let at = |t: f64| {
        let t = (t * 1e9) as Nanos;
        changes
            .iter()
            .take_while(|(from, _)| *from <= t)
            .last()
            .map(|(_, pacing)| pacing.slack)
    };
    assert_eq!(changes[0], (0, Pacing::auto(Some(1_000))));
    assert_eq!(at(0.5), Some(0));
    // 16,000/s by 1.6 s: 8,000 a thread.
    assert_eq!(at(1.45), Some(0));
    assert!(at(1.65).is_some_and(|slack| (100_000..250_000).contains(&slack)));
    assert_eq!(at(4.5), Some(250_000));
    assert_eq!(at(8.9), Some(0));
    // Every change is a change, in order.
    assert!(changes
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1));
    // One thread of a profile that stays low: precise throughout.
    let low = Profile::new(&[stage(2.0, 0, 1_000)]);
    assert_eq!(pacings(&low, 1.0), vec![(0, Pacing::auto(Some(1_000)))]);
}
