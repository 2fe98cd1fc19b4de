use std::collections::HashMap;

use clap::Command;

use super::*;

const NOW: u64 = 1_796_061_600 * 1_000_000_000; // 2026-11-30T18:00:00Z

fn part_of(args: &[&str], env: &[(&str, &str)]) -> Result<Part, String> {
    let command = Command::new("t").no_binary_name(true).args(args_table());
    let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    let matches = command
        .try_get_matches_from(argv.clone())
        .map_err(|e| e.to_string())?;
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    part(&matches, &argv, &|name| env.get(name).cloned(), NOW).map_err(|e| e.to_string())
}

fn args_table() -> Vec<Arg> {
    let mut all: Vec<Arg> = vec![
        shard_arg(For::Run),
        shards_arg(),
        start_at_arg(For::Run),
        run_id_arg(For::Run),
    ];
    all.push(value("json", None, "json"));
    all.push(value("rate", Some('R'), "rate"));
    all.push(value("vs", None, "vs"));
    all.push(super::super::bind::arg(For::Run));
    all
}

#[test]
fn shard_from_the_flag_or_the_indexed_job() {
    let p = part_of(&["--shard", "2/4"], &[]).unwrap();
    assert_eq!(p.shard, Shard { index: 1, count: 4 });
    let p = part_of(&[], &[("JOB_COMPLETION_INDEX", "3"), ("TSUMO_SHARDS", "4")]).unwrap();
    assert_eq!(p.shard, Shard { index: 3, count: 4 });
    let p = part_of(&["--shards", "8"], &[("JOB_COMPLETION_INDEX", "0")]).unwrap();
    assert_eq!(p.shard, Shard { index: 0, count: 8 });
    // The flag wins over the environment.
    let p = part_of(&["--shard", "1/2"], &[("JOB_COMPLETION_INDEX", "5")]).unwrap();
    assert_eq!(p.shard, Shard { index: 0, count: 2 });
    assert_eq!(part_of(&[], &[]).unwrap().shard, Shard::WHOLE);
}

#[test]
fn bad_shards_are_one_line_saying_what_to_do() {
    for (args, env, want) in [
        (&["--shard", "0/4"][..], &[][..], "expected I/N"),
        (
            &["--shard", "5/4"][..],
            &[][..],
            "shards are counted from 1 to 4",
        ),
        (&["--shard", "2"][..], &[][..], "expected I/N"),
        (
            &["--shard", "1/2", "--shards", "3"][..],
            &[][..],
            "give one of them",
        ),
        (&["--shards", "4"][..], &[][..], "JOB_COMPLETION_INDEX"),
        (
            &[][..],
            &[("JOB_COMPLETION_INDEX", "1")][..],
            "TSUMO_SHARDS",
        ),
        (
            &[][..],
            &[("JOB_COMPLETION_INDEX", "4"), ("TSUMO_SHARDS", "4")][..],
            "indexes 0 to 3",
        ),
        (
            &[][..],
            &[("JOB_COMPLETION_INDEX", "x"), ("TSUMO_SHARDS", "4")][..],
            "not an index",
        ),
        (
            &[][..],
            &[("JOB_COMPLETION_INDEX", "0"), ("TSUMO_SHARDS", "0")][..],
            "TSUMO_SHARDS",
        ),
    ] {
        let e = part_of(args, env).unwrap_err();
        assert!(e.contains(want), "{args:?} {env:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn uneven_splits_say_how_to_fix_them() {
    let four = Shard { index: 0, count: 4 };
    assert_eq!(split_http(8, Some(2000), 2, four), Ok((2, Some(500))));
    assert_eq!(split_http(8, None, 1, four), Ok((2, None)));
    assert_eq!(split_http(10, Some(7), 2, Shard::WHOLE), Ok((10, Some(7))));
    let e = split_http(10, Some(2000), 1, four).unwrap_err().to_string();
    assert!(e.contains("use a multiple of 4 (8 or 12)"), "{e}");
    let e = split_http(8, Some(2001), 1, four).unwrap_err().to_string();
    assert!(e.contains("-R 2001") && e.contains("(2000 or 2004)"), "{e}");
    let e = split_http(8, Some(2000), 4, four).unwrap_err().to_string();
    assert!(e.contains("use -c 16 or fewer threads"), "{e}");
    assert_eq!(split_players(32, 4, four, true), Ok(8));
    let e = split_players(20, 4, four, true).unwrap_err().to_string();
    assert_eq!(
        e,
        "-c 20 players are 5 tables, which do not split evenly into 4 shards: use a multiple \
         of 16 players (16 or 32)"
    );
    // The default -c: said as the default, one table as one.
    let two = Shard { index: 0, count: 2 };
    let e = split_players(4, 4, two, false).unwrap_err().to_string();
    assert_eq!(
        e,
        "the default 4 players (no -c) are 1 table, which does not split evenly into 2 shards: \
         give -c a multiple of 8 players (8)"
    );
}

#[test]
fn a_profile_splits_over_any_shards_in_whole_tables() {
    let shard = |index, count| Shard { index, count };
    // 5 tables at the peak over 2 shards: tables 0, 2, 4 and 1, 3.
    assert_eq!(split_profile(20, 4, shard(0, 2)), 12);
    assert_eq!(split_profile(20, 4, shard(1, 2)), 8);
    // A shard the peak leaves without a table still sizes for one.
    assert_eq!(split_profile(4, 4, shard(1, 2)), 4);
    assert_eq!(split_profile(16, 4, Shard::WHOLE), 16);
}

#[test]
fn start_at_absolute_or_from_now_and_never_in_the_past() {
    let p = part_of(&["--start-at", "2026-11-30T18:00:02Z"], &[]).unwrap();
    assert_eq!(p.start_at, Some(NOW + 2_000_000_000));
    let p = part_of(&["--start-at", "+30s"], &[]).unwrap();
    assert_eq!(p.start_at, Some(NOW + 30_000_000_000));
    let p = part_of(&["--start-at", "+250ms"], &[]).unwrap();
    assert_eq!(p.start_at, Some(NOW + 250_000_000));
    let e = part_of(&["--start-at", "2026-11-30T17:59:58Z"], &[]).unwrap_err();
    assert!(
        e.contains("is 2.000s in the past (now 2026-11-30T18:00:00Z)"),
        "{e}"
    );
    for bad in ["+0s", "tomorrow", "+x", "2026-11-30"] {
        let e = part_of(&["--start-at", bad], &[]).unwrap_err();
        assert!(
            e.starts_with("invalid value") || e.contains("past"),
            "{bad}: {e}"
        );
    }
    assert_eq!(part_of(&[], &[]).unwrap().start_at, None);
    let e = part_of(&["--start-at", "+5s", "--vs", "http://b/"], &[]).unwrap_err();
    assert!(e.contains("--start-at and --vs do not go together"), "{e}");
}

#[test]
fn every_shard_derives_the_same_run_id() {
    let at = ["--start-at", "2026-11-30T18:00:02Z", "-R", "2000"];
    let ids: Vec<String> = (1..=4)
        .map(|i| {
            let shard = format!("{i}/4");
            let json = format!("--json=shard{i}.json");
            // Each machine has its own source addresses.
            let bind = format!("127.0.0.{}", i + 1);
            let args = [&at[..], &["--shard", &shard, &json, "--bind", &bind]].concat();
            part_of(&args, &[]).unwrap().run_id
        })
        .collect();
    assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
    assert!(ids[0].starts_with("20261130T180002Z-"), "{}", ids[0]);
    // Another rate is another run.
    let other = part_of(&["--start-at", "2026-11-30T18:00:02Z", "-R", "3000"], &[]).unwrap();
    assert_ne!(other.run_id, ids[0]);
    let given = part_of(&["--run-id", "nightly-42"], &[]).unwrap();
    assert_eq!(given.run_id, "nightly-42");
    let e = part_of(&["--run-id", "a b"], &[]).unwrap_err();
    assert!(e.contains("--run-id"), "{e}");
}

#[test]
fn shards_of_both_command_lines() {
    let run = crate::cli::parse([
        "tsumo",
        "-t1",
        "-c8",
        "-R2000",
        "--shard",
        "2/4",
        "http://h/",
    ]);
    match run {
        Ok(crate::cli::Parsed::Run(plan)) => {
            assert_eq!((plan.connections, plan.rate), (2, Some(500)));
            assert_eq!(plan.options.part.shard, Shard { index: 1, count: 4 });
        }
        other => panic!("{other:?}"),
    }
    let session = crate::cli::parse(["tsumo", "mahjong", "-c32", "--shard", "4/4", "http://h/s"]);
    match session {
        Ok(crate::cli::Parsed::Mahjong(plan)) => {
            assert_eq!((plan.players, plan.options.threads), (8, 2));
            assert_eq!(plan.options.part.shard, Shard { index: 3, count: 4 });
        }
        other => panic!("{other:?}"),
    }
    // The tables of the shards are the whole session's, each once.
    let mut tables: Vec<usize> = (0..4)
        .flat_map(|index| (0..2).map(move |local| Shard { index, count: 4 }.global(local)))
        .collect();
    tables.sort_unstable();
    assert_eq!(tables, (0..8).collect::<Vec<_>>());
}

/// `+30s` counts from each process's own launch: shards launched 1.1 s apart would start 1.1 s
/// apart under two run ids (the id holds the start's second), and merge would refuse them. A
/// shard refuses it at once and says what agrees: one instant for all.
#[test]
fn shards_refuse_a_start_counted_from_their_own_launch() {
    let job = [("JOB_COMPLETION_INDEX", "0"), ("TSUMO_SHARDS", "4")];
    for (args, env) in [
        (&["--shard", "1/4", "--start-at", "+30s"][..], &[][..]),
        (&["--start-at", "+30s"][..], &job[..]),
    ] {
        let e = part_of(args, env).unwrap_err();
        assert!(
            e.starts_with("--start-at +30s counts from each process's own start")
                && e.contains("give every shard one instant")
                && e.contains("e.g. --start-at 2026-11-30T18:00:30Z"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
    // One process may count from its own start; shards may share an instant.
    let one = part_of(&["--shard", "1/1", "--start-at", "+30s"], &[]).unwrap();
    assert_eq!(one.start_at, Some(NOW + 30_000_000_000));
    let shard = part_of(
        &["--shard", "2/4", "--start-at", "2026-11-30T18:00:30Z"],
        &[],
    )
    .unwrap();
    assert_eq!(shard.start_at, Some(NOW + 30_000_000_000));
}
