//! The Kubernetes manifests in `deploy/kubernetes/`, checked so they cannot drift from the CLI:
//! they read as YAML, each Job has what an Indexed Job of tsumo shards needs (completions =
//! parallelism = TSUMO_SHARDS, anti-affinity per node, the port-range sysctl, resource requests,
//! no CPU limit), and its container args — with the manifest's `$(VAR)`s filled in and the
//! Indexed Job's JOB_COMPLETION_INDEX set — parse with tsumo's own command-line parser into a
//! sharded run that prints JSON on stdout.

#[path = "deploy/yaml.rs"]
mod yaml;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tsumo::cli::{parse, Parsed};
use tsumo::plan::JsonOut;
use tsumo::sys::wallclock::{format_rfc3339, unix_now_ns};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes")
}

/// Every manifest file and its documents.
fn manifests() -> Vec<(PathBuf, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("deploy/kubernetes")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read manifest");
            let docs =
                yaml::parse_documents(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, docs)
        })
        .collect()
}

fn of_kind(kind: &str) -> Vec<(PathBuf, Value)> {
    manifests()
        .into_iter()
        .flat_map(|(path, docs)| docs.into_iter().map(move |d| (path.clone(), d)))
        .filter(|(_, d)| d["kind"] == kind)
        .collect()
}

fn text<'a>(value: &'a Value, what: &str) -> &'a str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{what}: not a string: {value}"))
}

#[test]
fn the_yaml_reader_reads_the_manifest_subset_and_refuses_the_rest() {
    let docs = yaml::parse_documents(
        "# c\na: 1\nb:\n  - x\n  - y: \"2\"\n    z: [\"A\", b]\nc: |\n  line 1\n    two\nd:\n- e\n---\nf: 'g' # h\n",
    )
    .expect("parse");
    assert_eq!(
        docs[0],
        serde_json::json!({"a": 1, "b": ["x", {"y": "2", "z": ["A", "b"]}],
                           "c": "line 1\n  two\n", "d": ["e"]})
    );
    assert_eq!(docs[1], serde_json::json!({"f": "g"}));
    for bad in [
        "a: 1\n  b: 2\n",
        "a: &x 1\n",
        "a\n",
        "a:\n\t- b\n",
        "a: 1\na: 2\n",
    ] {
        assert!(yaml::parse_documents(bad).is_err(), "{bad:?}");
    }
}

/// Where Python's YAML library is installed, it reads every manifest as ours does.
#[test]
fn a_full_yaml_parser_agrees_where_one_is_installed() {
    const DUMP: &str = "import json, sys, yaml\n\
                        print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))";
    for (path, ours) in manifests() {
        let out = Command::new("python3")
            .args(["-c", DUMP])
            .arg(&path)
            .output();
        let out = match out {
            Ok(out) if out.status.success() => out,
            _ => {
                eprintln!(
                    "SKIPPED the cross-check of {}: python3 with PyYAML is not installed",
                    path.display()
                );
                continue;
            }
        };
        let theirs: Vec<Value> = serde_json::from_slice(&out.stdout).expect("PyYAML's JSON");
        assert_eq!(ours, theirs, "{}", path.display());
    }
}

#[test]
fn indexed_jobs_have_what_shards_need_and_args_tsumo_parses() {
    let jobs = of_kind("Job");
    assert_eq!(jobs.len(), 2, "an HTTP and a mahjong Job");
    let config_maps = of_kind("ConfigMap");
    let mut modes = Vec::new();
    for (path, job) in &jobs {
        let file = path.display();
        assert_eq!(job["apiVersion"], "batch/v1", "{file}");
        let spec = &job["spec"];
        assert_eq!(spec["completionMode"], "Indexed", "{file}");
        let shards = spec["completions"].as_u64().expect("completions");
        assert!(shards >= 2, "{file}");
        assert_eq!(
            spec["parallelism"], shards,
            "{file}: parallelism = completions"
        );
        assert_eq!(
            spec["backoffLimit"], 0,
            "{file}: a shard must not rerun late"
        );

        let template = &spec["template"];
        let pod = &template["spec"];
        assert_eq!(pod["restartPolicy"], "Never", "{file}");
        // One shard per node: anti-affinity on the hostname, selecting this Job's own pods.
        let terms = pod["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .expect("required anti-affinity");
        assert_eq!(terms[0]["topologyKey"], "kubernetes.io/hostname", "{file}");
        let selector = terms[0]["labelSelector"]["matchLabels"]
            .as_object()
            .expect("matchLabels");
        for (key, value) in selector {
            assert_eq!(&template["metadata"]["labels"][key], value, "{file}: {key}");
        }
        let sysctls = pod["securityContext"]["sysctls"]
            .as_array()
            .expect("sysctls");
        let range = sysctls
            .iter()
            .find(|s| s["name"] == "net.ipv4.ip_local_port_range")
            .expect("the port range sysctl");
        let ports: Vec<u32> = text(&range["value"], "port range")
            .split_whitespace()
            .map(|p| p.parse().expect("port"))
            .collect();
        assert!(
            ports.len() == 2 && ports[0] < ports[1] && ports[1] <= 65535,
            "{file}"
        );
        assert!(
            pod["terminationGracePeriodSeconds"].as_u64() >= Some(60),
            "{file}"
        );

        let containers = pod["containers"].as_array().expect("containers");
        assert_eq!(containers.len(), 1, "{file}");
        let container = &containers[0];
        let resources = &container["resources"];
        for what in ["cpu", "memory"] {
            assert!(resources["requests"][what].is_string(), "{file}: {what}");
        }
        assert!(resources["limits"]["memory"].is_string(), "{file}");
        assert!(resources["limits"]["cpu"].is_null(), "{file}: no CPU limit");

        // The manifest's env, with the start instant filled in as docs/many-machines.md's sed does.
        let start_at = format_rfc3339(unix_now_ns() + 3_600_000_000_000);
        let env: Vec<(String, String)> = container["env"]
            .as_array()
            .expect("env")
            .iter()
            .map(|e| {
                let value = text(&e["value"], "env value").replace("@START_AT@", &start_at);
                (text(&e["name"], "env name").to_string(), value)
            })
            .collect();
        let var = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        assert_eq!(var("TSUMO_SHARDS"), Some(shards.to_string()), "{file}");
        let args: Vec<String> = container["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|a| {
                let mut arg = text(a, "arg").to_string();
                for (name, value) in &env {
                    arg = arg.replace(&format!("$({name})"), value);
                }
                assert!(!arg.contains("$("), "{file}: {arg} names no env var");
                arg
            })
            .collect();

        // The last pod of the Indexed Job, as Kubernetes starts it.
        std::env::set_var("JOB_COMPLETION_INDEX", (shards - 1).to_string());
        std::env::set_var("TSUMO_SHARDS", shards.to_string());
        let parsed = parse(std::iter::once("tsumo".to_string()).chain(args.clone()));
        let (part, json, quiet) = match parsed {
            Ok(Parsed::Run(plan)) => {
                modes.push("http");
                if let Some(script) = &plan.script {
                    script_is_mounted(pod, container, script, &config_maps, &file.to_string());
                }
                (
                    plan.options.part.clone(),
                    plan.options.json.clone(),
                    plan.options.quiet,
                )
            }
            Ok(Parsed::Mahjong(plan)) => {
                modes.push("mahjong");
                // On SIGTERM every player logs out before tsumo prints its JSON: the pod is
                // given the logout timeout (its default grows with -c), the retries past it
                // while the server answers (as long again, at least 10 s) and a margin.
                let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap_or(0);
                let timeout = plan.logout_timeout.as_secs();
                assert!(
                    grace >= timeout + timeout.max(10) + 10,
                    "{file}: terminationGracePeriodSeconds {grace} for --logout-timeout {:?}",
                    plan.logout_timeout
                );
                (
                    plan.options.part.clone(),
                    plan.options.json.clone(),
                    plan.options.quiet,
                )
            }
            Ok(_) => panic!("{file}: {args:?} is not a run"),
            Err(e) => panic!("{file}: tsumo {args:?}: {e}"),
        };
        assert_eq!(part.shard.count as u64, shards, "{file}");
        assert_eq!(part.shard.index as u64, shards - 1, "{file}");
        assert!(part.start_at.is_some(), "{file}: --start-at");
        assert_eq!(json, Some(JsonOut::Stdout), "{file}: --json -");
        assert!(quiet, "{file}: --quiet");
    }
    modes.sort();
    assert_eq!(modes, ["http", "mahjong"]);
}

/// `-s /scripts/NAME.lua` is a key of a ConfigMap mounted at /scripts.
fn script_is_mounted(
    pod: &Value,
    container: &Value,
    script: &Path,
    config_maps: &[(PathBuf, Value)],
    file: &str,
) {
    let mounts = container["volumeMounts"].as_array().expect("volumeMounts");
    let mount = mounts
        .iter()
        .find(|m| script.starts_with(text(&m["mountPath"], "mountPath")))
        .unwrap_or_else(|| panic!("{file}: nothing mounted at {}", script.display()));
    let volume = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap_or_else(|| panic!("{file}: no volume {}", mount["name"]));
    let map_name = &volume["configMap"]["name"];
    let (_, map) = config_maps
        .iter()
        .find(|(_, m)| &m["metadata"]["name"] == map_name)
        .unwrap_or_else(|| panic!("{file}: no ConfigMap {map_name}"));
    let key = script.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(
        map["data"][key].is_string(),
        "{file}: {key} not in {map_name}"
    );
}

/// The ConfigMap's scripts are the tested ones in tests/scripts/, byte for byte.
#[test]
fn configmap_scripts_are_the_tested_scripts() {
    let maps = of_kind("ConfigMap");
    assert!(!maps.is_empty());
    for (path, map) in maps {
        for (name, body) in map["data"].as_object().expect("data") {
            let tested = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/scripts")
                .join(name);
            let tested = std::fs::read_to_string(&tested)
                .unwrap_or_else(|e| panic!("{}: {name}: {e}", path.display()));
            assert_eq!(body.as_str(), Some(tested.as_str()), "{name}");
        }
    }
}

#[test]
fn containerfile_packs_the_release_binary_with_ca_certificates() {
    let text = std::fs::read_to_string(dir().join("Containerfile")).expect("Containerfile");
    for line in [
        "FROM debian:bookworm-slim",
        "COPY target/release/tsumo /tsumo",
        "--no-install-recommends ca-certificates",
        "ENTRYPOINT [\"/usr/local/bin/tsumo\"]",
    ] {
        assert!(text.contains(line), "{line}");
    }
}
