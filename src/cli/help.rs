//! Every command's `--help`: the option list is rendered from the command's own clap table, so an
//! option cannot be parsed without being in its command's help, nor shown without being parsed.
//! The prose around the list (title, usage, units, examples, exit status) is each command's.
//!
//! The layout is wrk's: `  -c, --connections <N>  text`, the text at one column per command (on
//! the next line when the names reach it) and continued under it; each heading (`help_heading`)
//! a list of its own after the command's main one. A text's line breaks are its author's; a line
//! that would pass [`WIDTH`] (a text built from a list, a shared text at a wider column) is
//! wrapped at its spaces.

use clap::{Arg, Command};

/// The widest line of an option list, the widest the hand-broken texts reach.
pub(super) const WIDTH: usize = 95;

/// One command's help page: its prose, and how its option list is laid out.
pub(super) struct Page {
    /// Title, usage and prose before the options, ending with a newline.
    pub before: &'static str,
    /// The heading of the options without a `help_heading` of their own, the first list.
    pub heading: &'static str,
    /// The column every option's text starts at.
    pub column: usize,
    /// The prose after the options.
    pub after: &'static str,
}

impl Page {
    /// The page, with `command`'s options (its positional arguments are the usage line's).
    pub(super) fn render(&self, command: &Command) -> String {
        format!("{}\n{}\n{}", self.before, self.options(command), self.after)
    }

    /// The option lists: the main heading's first, then each other in the table's order.
    fn options(&self, command: &Command) -> String {
        let shown: Vec<&Arg> = command
            .get_arguments()
            .filter(|arg| !arg.is_positional())
            .collect();
        let mut headings = vec![None];
        for arg in &shown {
            if !headings.contains(&arg.get_help_heading()) {
                headings.push(arg.get_help_heading());
            }
        }
        let lists: Vec<String> = headings
            .into_iter()
            .filter_map(|heading| {
                let entries: String = shown
                    .iter()
                    .filter(|arg| arg.get_help_heading() == heading)
                    .map(|arg| self.entry(arg))
                    .collect();
                let title = heading.unwrap_or(self.heading);
                (!entries.is_empty()).then(|| format!("{title}:\n{entries}"))
            })
            .collect();
        lists.join("\n")
    }

    /// One option: its names, then its text at the column.
    fn entry(&self, arg: &Arg) -> String {
        let column = self.column;
        let names = names(arg);
        let text = arg.get_help().map(ToString::to_string).unwrap_or_default();
        let mut lines = text
            .lines()
            .flat_map(|line| wrap(line, WIDTH.saturating_sub(column)));
        let mut entry = match lines.next() {
            // At least one space between the names and the text.
            Some(first) if names.len() < column => format!("{names:column$}{first}\n"),
            Some(first) => format!("{names}\n{:column$}{first}\n", ""),
            None => format!("{names}\n"),
        };
        for line in lines {
            entry.push_str(&format!("{:column$}{line}\n", ""));
        }
        entry
    }
}

/// How the help names an option: `  -c, --connections <N>`, `      --json <FILE>`.
pub(super) fn names(arg: &Arg) -> String {
    let short = arg
        .get_short()
        .map_or_else(|| "    ".to_string(), |short| format!("-{short}, "));
    let long = arg.get_long().map(|long| format!("--{long}"));
    let values: String = arg
        .get_value_names()
        .into_iter()
        .flatten()
        .map(|name| format!(" <{name}>"))
        .collect();
    format!("  {short}{}{values}", long.unwrap_or_default())
}

/// `line` as lines of at most `room` characters, broken at spaces (a longer word stays whole).
fn wrap(line: &str, room: usize) -> Vec<String> {
    if line.chars().count() <= room {
        return vec![line.to_string()];
    }
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let fits = current.chars().count() + 1 + word.chars().count() <= room;
        if current.is_empty() {
            current = word.to_string();
        } else if fits {
            current.push(' ');
            current.push_str(word);
        } else {
            lines.push(std::mem::replace(&mut current, word.to_string()));
        }
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ArgAction;

    #[test]
    fn names_then_text_at_the_column_or_under_it() {
        let page = Page {
            before: "t\n",
            heading: "Options",
            column: 20,
            after: "end\n",
        };
        let command = Command::new("t").args([
            Arg::new("c")
                .short('c')
                .long("count")
                .value_name("N")
                .help("How many\nof them"),
            Arg::new("a_long_option")
                .long("a-long-option")
                .value_name("T")
                .help("Its text"),
            Arg::new("x")
                .long("x")
                .action(ArgAction::SetTrue)
                .help_heading("More")
                .help("Another list"),
            Arg::new("url").index(1),
        ]);
        assert_eq!(
            page.render(&command),
            "t\n\nOptions:\n  -c, --count <N>   How many\n                    of them\n      \
             --a-long-option <T>\n                    Its text\n\nMore:\n      --x           \
             Another list\n\nend\n"
        );
    }

    #[test]
    fn a_line_past_the_width_wraps_at_spaces() {
        assert_eq!(wrap("one two three", 13), ["one two three"]);
        assert_eq!(wrap("one two three", 8), ["one two", "three"]);
        assert_eq!(wrap("unbreakable word", 4), ["unbreakable", "word"]);
    }
}
