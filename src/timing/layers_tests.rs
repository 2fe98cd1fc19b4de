use super::*;
use crate::plan::Stage;

const S: u64 = 1_000_000_000;

fn stage(seconds: f64, from: u64, to: u64) -> Stage {
    Stage {
        duration_ns: (seconds * S as f64) as u64,
        from,
        to,
    }
}

#[test]
fn the_layers_sum_to_the_profile_and_each_stays_in_its_band() {
    // Ramps up and down that cross the layers' levels between two nanoseconds (7 connections),
    // a hold, a jump and a hold at 0.
    let profile = Profile::new(&[
        stage(1.3, 0, 1000),
        stage(0.7, 1000, 1000),
        stage(0.0, 1000, 333),
        stage(2.1, 333, 900),
        stage(0.5, 0, 0),
        stage(1.0, 700, 0),
    ]);
    let layers: Vec<Layer> = (0..7).map(|j| Layer::new(&profile, j, 7)).collect();
    let total = profile.requests() as f64;
    for t in (0..=profile.total()).step_by(37_000_001) {
        let sum: f64 = layers.iter().map(|layer| layer.integral(t)).sum();
        let whole = profile.due(t) as f64;
        assert!((sum - whole).abs() <= 1.0, "at {t}: {sum} of {whole}");
    }
    let sum: f64 = layers
        .iter()
        .map(|layer| layer.integral(profile.total()))
        .sum();
    assert!((sum - total).abs() < 1.0, "{sum} of {total}");
    for layer in &layers {
        for piece in &layer.pieces {
            for rate in [piece.from, piece.to] {
                assert!((0.0..=1000.0 / 7.0 + 1e-9).contains(&rate), "{piece:?}");
            }
        }
    }
    // Each connection's count: requests due before the end, one per `k`.
    let sent: u64 = layers.iter().map(|layer| layer.due(profile.total())).sum();
    assert!(sent.abs_diff(profile.requests()) <= 7, "{sent}");
    for layer in &layers {
        let due = layer.due(profile.total());
        assert!((0..due).all(|k| layer.at(k) < profile.total()));
        assert_eq!(layer.at(due), profile.total());
        assert!((1..due).all(|k| layer.at(k - 1) <= layer.at(k)));
    }
}

#[test]
fn a_hold_at_the_peak_is_the_constant_rate_schedule() {
    // Connection j of 10 at 2,000/s: its k-th request at (j + 10·k) / 2000 s, as `-R` has it.
    let profile = Profile::new(&[stage(2.0, 2000, 2000)]);
    for j in 0..10 {
        let layer = Layer::new(&profile, j, 10);
        assert_eq!(layer.due(2 * S), 400);
        for k in 0..400 {
            let r = (j + 10 * k) as u128 * S as u128 / 2000;
            assert!(layer.at(k).abs_diff(r as u64) <= 1, "{j} {k}");
        }
    }
}

#[test]
fn a_crossing_is_where_the_ramp_meets_the_level() {
    // 0 → 300 over 3 s on 3 connections: layer 1 is 100..200, crossed at 1 s and 2 s, and
    // carries 50 requests in the ramp (a triangle, then 100 for 0 s), 100/s after 2 s.
    let profile = Profile::new(&[stage(3.0, 0, 300), stage(1.0, 300, 300)]);
    let layer = Layer::new(&profile, 1, 3);
    assert_eq!(layer.pieces[0].start, S as f64);
    assert_eq!(layer.pieces[1].start, 2.0 * S as f64);
    assert!((layer.integral(2 * S) - 50.0).abs() < 1e-9);
    assert!((layer.integral(4 * S) - 250.0).abs() < 1e-9);
    // The first request (phase 1/3) is due once 50·s² passes 1/3, s in seconds after 1 s.
    let first = S as f64 + (1.0f64 / 150.0).sqrt() * S as f64;
    assert!((layer.at(0) as f64 - first).abs() < 2.0);
    assert_eq!(
        due_in_process(&profile, crate::plan::Shard::WHOLE, 3)(4 * S),
        750
    );
}
