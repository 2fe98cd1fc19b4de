//! `tsumo completions SHELL` and `tsumo man` as their real readers take them: the bash script
//! loaded by Debian's bash-completion the way an interactive shell loads it (from its
//! completions directory, on first use) and asked what `tsumo --sl<TAB>` completes to; the man
//! page rendered by man(1) with every groff warning on. Nothing else is started. Without
//! bash-completion or man the tests fail and say what to install (scripts/test installs both).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;

const BASH_COMPLETION: &str = "/usr/share/bash-completion/bash_completion";
const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "elvish", "powershell"];

fn tsumo(args: &[&str]) -> Output {
    match common::tsumo().args(args).output() {
        Ok(output) => output,
        Err(e) => panic!("cannot run tsumo: {e}"),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn every_shell_gets_a_script() {
    for shell in SHELLS {
        let out = tsumo(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        // The wrk2 line's options and a subcommand's, from the same tables as --help.
        for word in ["slack", "mahjong", "think-jitter", "completions"] {
            assert!(script.contains(word), "{shell}'s script has no {word}");
        }
    }
}

#[test]
fn a_shell_without_a_script_is_one_line_and_exit_2() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["completions", "tcsh"],
            "tsumo: unknown shell 'tcsh' (usage: tsumo completions bash|zsh|fish|elvish|powershell)\n",
        ),
        (
            &["completions"],
            "tsumo: missing shell (usage: tsumo completions bash|zsh|fish|elvish|powershell)\n",
        ),
        (
            &["completions", "bash", "zsh"],
            "tsumo: unexpected argument 'zsh' (usage: tsumo completions bash|zsh|fish|elvish|powershell)\n",
        ),
        (
            &["man", "tsumo"],
            "tsumo: unexpected argument 'tsumo' (usage: tsumo man)\n",
        ),
    ];
    for (args, line) in cases {
        let out = tsumo(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr), line, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn both_are_in_the_help() {
    let help = text(&tsumo(&["--help"]).stdout);
    assert!(help.contains("\n  tsumo completions  "), "{help}");
    assert!(help.contains("\n  tsumo man  "), "{help}");
    for command in ["completions", "man"] {
        let out = tsumo(&[command, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).starts_with(&format!("tsumo {command} — ")));
    }
}

/// What bash-completion completes each command line (ending in the word being completed) to,
/// sorted: the script installed in a completions directory of bash-completion's, loaded by its
/// own loader on first use, its function called as readline calls it.
fn bash_completes(lines: &[&[&str]]) -> Vec<Vec<String>> {
    assert!(
        Path::new(BASH_COMPLETION).exists(),
        "{BASH_COMPLETION} is missing: install Debian's bash-completion \
         (apt-get install bash-completion; scripts/test installs it)"
    );
    let dir = TempDir::new("tsumo-completions");
    let completions = dir.path().join("bash-completion/completions");
    std::fs::create_dir_all(&completions).expect("create the completions directory");
    let script = tsumo(&["completions", "bash"]);
    assert_eq!(script.status.code(), Some(0));
    std::fs::write(completions.join("tsumo"), &script.stdout).expect("write the script");

    let mut program = format!(
        ". {BASH_COMPLETION} || exit 3\n\
         _completion_loader tsumo\n\
         spec=$(complete -p tsumo) || exit 4\n\
         function=${{spec##*-F }}; function=${{function%% *}}\n\
         ask() {{\n\
         COMP_WORDS=(\"$@\"); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
         COMP_LINE=\"$*\"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=()\n\
         \"$function\" tsumo \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\" | sort | tr '\\n' ' '; echo\n\
         }}\n"
    );
    for words in lines {
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        program.push_str(&format!("ask {}\n", quoted.join(" ")));
    }
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .env("XDG_DATA_HOME", dir.path())
        .env_remove("BASH_COMPLETION_USER_DIR")
        .output()
        .expect("run bash");
    assert_eq!(
        out.status.code(),
        Some(0),
        "bash-completion did not load the script: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn bash_completion_completes_options_commands_and_shells() {
    let got = bash_completes(&[
        &["tsumo", "--sl"],
        &["tsumo", "mahjong", "--thi"],
        &["tsumo", "capacity", "--step-c"],
        &["tsumo", "comp"],
        &["tsumo", "completions", ""],
    ]);
    assert_eq!(
        got,
        [
            vec!["--slack", "--slo"],
            vec!["--think", "--think-jitter"],
            vec!["--step-count"],
            vec!["compare", "completions"],
            vec![
                "--help",
                "-h",
                "bash",
                "elvish",
                "fish",
                "powershell",
                "zsh"
            ],
        ]
    );
}

#[test]
fn man_renders_the_page_without_warnings() {
    let dir = TempDir::new("tsumo-man");
    let out = tsumo(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = dir.path().join("tsumo.1");
    std::fs::write(&page, &out.stdout).expect("write the page");
    let rendered = Command::new("man")
        .args(["--warnings=w", "-l"])
        .arg(&page)
        .env("MANWIDTH", "80")
        .env_remove("MANPAGER")
        .env("PAGER", "cat")
        .output();
    let rendered = match rendered {
        Ok(rendered) => rendered,
        Err(e) => panic!("cannot run man ({e}): install man-db (scripts/test installs it)"),
    };
    assert_eq!(
        rendered.status.code(),
        Some(0),
        "{}",
        text(&rendered.stderr)
    );
    assert_eq!(text(&rendered.stderr), "", "man's warnings");
    let shown = text(&rendered.stdout);
    // The wrk2 line's options, then each command's section with its own.
    for words in [
        "tsumo [options] <url> [script arguments...]",
        "--slack <T|auto>",
        "TSUMO MAHJONG",
        "--think-jitter <T>",
        "TSUMO CAPACITY",
        "--step-count <K>",
        "TSUMO COMPLETIONS",
        "EXIT STATUS",
    ] {
        assert!(shown.contains(words), "the page has no {words}:\n{shown}");
    }
}
