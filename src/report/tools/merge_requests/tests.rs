//! The logs' headers and where a log is found.

use super::*;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tsumo-mr-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read_header(text: &[u8]) -> Result<(u64, Option<f64>), String> {
    header(&mut &text[..], Path::new("log.csv")).map_err(|e| e.to_string())
}

#[test]
fn a_log_is_known_by_its_two_first_lines() {
    let good = format!("{MAGIC}; start_unix_ns=17; run_id=r; shard=1/2; sample=0.5\n{HEADER}\n1,");
    assert_eq!(read_header(good.as_bytes()), Ok((17, Some(0.5))));
    let no_sample = format!("{MAGIC}; start_unix_ns=17\r\n{HEADER}\r\n");
    assert_eq!(read_header(no_sample.as_bytes()), Ok((17, None)));
    for bad in [
        String::new(),
        format!("{MAGIC}0; start_unix_ns=17\n{HEADER}\n"),
        format!("{MAGIC}; start_unix_ns=x\n{HEADER}\n"),
        format!("{MAGIC}; start_unix_ns=17\nintended_ns,sent_ns\n"),
        format!("{HEADER}\n1,2\n"),
    ] {
        let e = read_header(bad.as_bytes()).unwrap_err();
        assert!(e.starts_with("log.csv: not a tsumo request log ("), "{e}");
    }
}

#[test]
fn a_log_not_where_recorded_is_found_beside_its_json() {
    let dir = temp("located");
    let log = dir.join("shard-1.csv");
    std::fs::write(&log, "x").unwrap();
    let json = dir.join("shard-1.json");
    // As recorded, when it is there.
    let recorded = log.display().to_string();
    assert_eq!(located(&recorded, Some(&json)).unwrap(), log);
    // Recorded on another machine: the same name beside the JSON.
    assert_eq!(located("/pods/out/shard-1.csv", Some(&json)).unwrap(), log);
    let e = located("/pods/out/shard-2.csv", Some(&json))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("/pods/out/shard-2.csv: request log not found, neither there nor in "),
        "{e}"
    );
    assert!(located("/pods/out/shard-2.csv", None).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compressed_logs_are_read_whatever_their_name() {
    let dir = temp("zstd");
    let text = format!("{MAGIC}; start_unix_ns=5; sample=1\n{HEADER}\n");
    let path = dir.join("log.csv");
    std::fs::write(&path, zstd::encode_all(text.as_bytes(), 0).unwrap()).unwrap();
    let mut rows = open(&path).unwrap();
    assert_eq!(header(rows.as_mut(), &path).unwrap(), (5, Some(1.0)));
    std::fs::remove_dir_all(&dir).unwrap();
}
