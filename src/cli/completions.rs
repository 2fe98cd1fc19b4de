//! `tsumo completions SHELL` and `tsumo man`: shell completion scripts (clap_complete) and a man
//! page (clap_mangen), both generated from one clap tree assembled here from every command's own
//! table — the tables each `--help` is rendered from and each parser parses with — so neither can
//! drift from what tsumo takes. The commands' one-line summaries are the top-level help's "Other
//! commands" list, read from it.

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command};
use clap_complete::Shell;
use roff::{roman, Roff};

use super::error::ArgError;
use super::help::Page;
use super::message::clap_message;
use super::shared;
use super::units::one_line;
use super::{capacity, doctor, mahjong, tools, wrk, ws, Parsed};

const COMPLETIONS_USAGE: &str = "usage: tsumo completions bash|zsh|fish|elvish|powershell";
const MAN_USAGE: &str = "usage: tsumo man";

const COMPLETIONS_PAGE: Page = Page {
    before: "\
tsumo completions — the shell completion script for tsumo's commands and options

Usage: tsumo completions bash|zsh|fish|elvish|powershell
",
    heading: "Options",
    column: 25,
    after: "\
The script goes to stdout, generated from the option tables every --help shows. Install it
where the shell looks for it (docs/completions.md), for example:
  tsumo completions bash > ~/.local/share/bash-completion/completions/tsumo
  tsumo completions zsh > ~/.zfunc/_tsumo      (with fpath+=~/.zfunc before compinit)
  tsumo completions fish > ~/.config/fish/completions/tsumo.fish

Exit status: 0 written, 2 a shell tsumo has no script for.
",
};

const MAN_PAGE: Page = Page {
    before: "\
tsumo man — tsumo's manual page: every command and its options

Usage: tsumo man
",
    heading: "Options",
    column: 25,
    after: "\
The page goes to stdout as roff, generated from the option tables every --help shows:
  tsumo man | man -l -
  tsumo man > ~/.local/share/man/man1/tsumo.1
",
};

/// Parses the arguments after the `completions` word.
pub(super) fn parse_completions(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = completions_command();
    let matches = matches(&command, args)?;
    if matches.get_flag("help") {
        return Ok(Parsed::Print(COMPLETIONS_PAGE.render(&command)));
    }
    let Some(&shell) = matches.get_one::<Shell>("shell") else {
        return Err(ArgError::Refused(format!(
            "missing shell ({COMPLETIONS_USAGE})"
        )));
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut tree(), "tsumo", &mut script);
    Ok(Parsed::Print(String::from_utf8_lossy(&script).into_owned()))
}

/// Parses the arguments after the `man` word.
pub(super) fn parse_man(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = man_command();
    let matches = matches(&command, args)?;
    if matches.get_flag("help") {
        return Ok(Parsed::Print(MAN_PAGE.render(&command)));
    }
    Ok(Parsed::Print(man_page()))
}

/// `tsumo completions`' table.
fn completions_command() -> Command {
    super::subcommand("tsumo completions").args([
        shared::help(),
        Arg::new("shell")
            .index(1)
            .action(ArgAction::Set)
            .value_name("SHELL")
            .value_parser(clap::value_parser!(Shell))
            .help("bash, zsh, fish, elvish or powershell"),
        extra(2),
    ])
}

/// `tsumo man`'s table.
fn man_command() -> Command {
    super::subcommand("tsumo man").args([shared::help(), extra(1)])
}

/// Whatever follows a command's arguments, kept (hidden, not refused by clap) to be named in our
/// own words.
fn extra(index: usize) -> Arg {
    Arg::new("extra")
        .index(index)
        .action(ArgAction::Append)
        .num_args(0..)
        .hide(true)
}

/// `command`'s matches, with our one-line errors: an argument too many, a shell we have no
/// script for.
fn matches(command: &Command, args: Vec<OsString>) -> Result<ArgMatches, ArgError> {
    let usage = if command.get_name().ends_with("man") {
        MAN_USAGE
    } else {
        COMPLETIONS_USAGE
    };
    let matches = command.clone().try_get_matches_from(args).map_err(|e| {
        let value = match e.get(ContextKind::InvalidValue) {
            Some(ContextValue::String(value)) => value.clone(),
            _ => String::new(),
        };
        match e.kind() {
            ErrorKind::InvalidValue if !value.is_empty() => {
                ArgError::Refused(format!("unknown shell '{}' ({usage})", one_line(&value)))
            }
            _ => ArgError::Clap(clap_message(command, &e)),
        }
    })?;
    match matches
        .get_many::<String>("extra")
        .and_then(|mut v| v.next())
    {
        Some(word) => Err(ArgError::Refused(format!(
            "unexpected argument '{}' ({usage})",
            one_line(word)
        ))),
        None => Ok(matches),
    }
}

/// Every command line tsumo takes, as one tree: the wrk2 line's table with each subcommand's,
/// each with its summary and its usage line as its help shows them.
pub(super) fn tree() -> Command {
    let help = wrk::help();
    let title = help.lines().next().unwrap_or_default();
    let about = title.split_once(" — ").map_or(title, |(_, about)| about);
    let summaries = other_commands(&help);
    // Each table is named as its help shows it (`tsumo mahjong`); in the tree, by its word.
    let subcommands = [
        ("mahjong", mahjong::command()),
        ("ws", ws::command()),
        ("capacity", capacity::parser()),
        ("compare", tools::compare_command()),
        ("merge", tools::merge_command()),
        ("plot", tools::plot_command()),
        ("report", tools::report_command()),
        ("doctor", doctor::command()),
        ("completions", completions_command()),
        ("man", man_command()),
    ]
    .map(|(word, command)| {
        let summary = summaries
            .iter()
            .find(|(listed, _)| listed == word)
            .map(|(_, summary)| summary.clone())
            .unwrap_or_default();
        let own_help = match super::parse(["tsumo", word, "--help"]) {
            Ok(Parsed::Print(text)) => text,
            _ => String::new(),
        };
        let command = command
            .name(word)
            .no_binary_name(false)
            .about(summary)
            .override_usage(usage(&own_help));
        // What follows a subcommand's arguments is only kept to be refused.
        if command.get_arguments().any(|arg| arg.get_id() == "extra") {
            command.mut_arg("extra", |arg| arg.hide(true))
        } else {
            command
        }
    });
    let (description, _) = prose(wrk::PAGE.after);
    wrk::command()
        .about(about.to_string())
        .long_about(format!("{about}\n\n{description}"))
        .version(env!("CARGO_PKG_VERSION"))
        .override_usage(format!("{}\ntsumo <command> [options]", usage(&help)))
        .subcommands(subcommands)
}

/// A help page's `Usage:` line, without the word.
fn usage(help: &str) -> String {
    help.lines()
        .find_map(|line| line.strip_prefix("Usage: "))
        .unwrap_or_default()
        // An example after the usage (`<server-url>   (e.g. http://…)`) is the help's alone.
        .split("  ")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The top-level help's "Other commands" list: each command's word and its summary.
fn other_commands(help: &str) -> Vec<(String, String)> {
    help.lines()
        .skip_while(|line| !line.starts_with("Other commands"))
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("tsumo ")?;
            let (name, about) = rest.split_once(' ')?;
            Some((name.to_string(), about.trim().to_string()))
        })
        .collect()
}

/// The man page: the wrk2 line's sections, then a section for each command with its summary,
/// synopsis and options (its own headings as subsections), then the version.
fn man_page() -> String {
    let mut tree = tree();
    tree.build();
    let mut page = Vec::new();
    // Writing to a Vec cannot fail.
    let man = clap_mangen::Man::new(tree.clone());
    let _ = man.render_title(&mut page);
    let _ = man.render_name_section(&mut page);
    let _ = man.render_synopsis_section(&mut page);
    let _ = man.render_description_section(&mut page);
    let _ = man.render_options_section(&mut page);
    let (_, sections) = prose(wrk::PAGE.after);
    let _ = sections.to_writer(&mut page);
    for command in tree.get_subcommands() {
        let name = command.get_bin_name().unwrap_or_else(|| command.get_name());
        page.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let man = clap_mangen::Man::new(command.clone());
        let mut section = Vec::new();
        let _ = man.render_description_section(&mut section);
        let _ = man.render_synopsis_section(&mut section);
        let _ = man.render_options_section(&mut section);
        for line in String::from_utf8_lossy(&section).lines() {
            // The command's sections are subsections of its own; its description is its summary.
            match line.strip_prefix(".SH ") {
                Some("DESCRIPTION") => {}
                Some(heading) => page.extend_from_slice(format!(".SS {heading}\n").as_bytes()),
                None => page.extend_from_slice(format!("{line}\n").as_bytes()),
            }
        }
    }
    let _ = man.render_version_section(&mut page);
    String::from_utf8_lossy(&page).into_owned()
}

/// A help page's prose for the man page: its paragraphs (the description's), and each block
/// under a `Heading:` as a section, its `TAG  text` lines (continued by deeper ones) as tagged
/// paragraphs and its other lines as they are (`Examples:`).
fn prose(after: &str) -> (String, Roff) {
    let mut paragraphs = Vec::new();
    let mut sections = Roff::new();
    for block in after.trim_end().split("\n\n") {
        let mut lines = block.lines();
        let heading = lines.next().unwrap_or_default();
        let Some(heading) = heading.strip_suffix(':').filter(|h| !h.starts_with(' ')) else {
            paragraphs.push(block);
            continue;
        };
        sections.control("SH", [heading.to_uppercase().as_str()]);
        for line in lines {
            let text = line.trim_start();
            let indent = line.len() - text.len();
            match text.split_once("  ") {
                Some((tag, text)) if indent <= 2 => {
                    sections.control("TP", []);
                    sections.text([roman(tag)]);
                    sections.text([roman(text.trim_start())]);
                }
                _ if indent > 2 => {
                    sections.text([roman(text)]);
                }
                _ => {
                    sections.control("PP", []);
                    sections.text([roman(text)]);
                }
            }
        }
    }
    (paragraphs.join("\n\n"), sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree's commands are the top-level help's "Other commands", and each word reaches its
    /// own parser (its help page is the one titled with its name).
    #[test]
    fn the_tree_is_every_command_the_help_lists() {
        let tree = tree();
        let words: Vec<&str> = tree.get_subcommands().map(Command::get_name).collect();
        let listed: Vec<String> = other_commands(&wrk::help())
            .into_iter()
            .map(|(word, _)| word)
            .collect();
        assert_eq!(words, listed);
        for command in tree.get_subcommands() {
            let word = command.get_name();
            assert!(command
                .get_about()
                .is_some_and(|a| !a.to_string().is_empty()));
            let Ok(Parsed::Print(help)) = super::super::parse(["tsumo", word, "--help"]) else {
                panic!("tsumo {word} --help printed no help")
            };
            assert!(help.starts_with(&format!("tsumo {word} — ")), "{word}");
        }
    }

    /// The page shows every option of every command, under its long name.
    #[test]
    fn the_man_page_names_every_option() {
        let page = man_page();
        let tree = tree();
        for command in std::iter::once(&tree).chain(tree.get_subcommands()) {
            for arg in command.get_arguments().filter(|arg| !arg.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    let roff = format!("\\-\\-{}", long.replace('-', "\\-"));
                    assert!(page.contains(&roff), "{}: --{long}", command.get_name());
                }
            }
        }
        for command in tree.get_subcommands() {
            let section = format!(".SH \"TSUMO {}\"", command.get_name().to_uppercase());
            assert!(page.contains(&section), "{section}");
        }
    }
}
