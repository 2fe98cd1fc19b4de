//! What a finished run writes, one way for every mode (a run, a session, an A/B comparison, a
//! capacity search): the text report on stdout, then each file asked for (`--json` to a file
//! or to stdout with `-`, `--html`, `--hgrm`, `--hlog`), and the results `--junit` and a CI
//! step summary are written from when the command ends (`run::ci`).
//!
//! Every output that can be written is: one that fails is its one line on stderr and the rest
//! are still written, so a full disk or a wrong directory for one file never costs the others.
//! A lost output makes the exit status 1 ("output lost"), unless the run failed in a way of its
//! own first (its caller says that before asking [`Outputs::status_or`]).

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::fail;
use crate::error::{Error, ExitStatus};
use crate::plan::{JsonOut, RunOptions};
use crate::report;
use crate::report::tools::saved::LoadedRun;

/// The outputs of one command's result, as its options ask for them.
pub struct Outputs<'a> {
    json: Option<&'a JsonOut>,
    html: Option<&'a Path>,
    /// The text report goes to stdout: not `--quiet`, and stdout is not `--json -`'s.
    shows_text: bool,
    /// An output could not be written (its line was said).
    lost: bool,
    /// `--junit` or a CI step summary: the results are noted for them (`run::ci`).
    ci: bool,
    /// `--dashboard`: the page is shown there too, as the final one.
    live: Option<&'static std::sync::Arc<crate::stats::live::Live>>,
}

impl<'a> Outputs<'a> {
    /// The outputs `options` ask for.
    pub fn of(options: &'a RunOptions) -> Outputs<'a> {
        Outputs {
            json: options.json.as_ref(),
            html: options.html.as_deref(),
            shows_text: !options.quiet && options.json != Some(JsonOut::Stdout),
            lost: false,
            ci: super::ci::wanted(options),
            live: options.dashboard.and_then(|_| crate::stats::live::get()),
        }
    }

    /// Whether the text report goes to stdout.
    pub fn shows_text(&self) -> bool {
        self.shows_text
    }

    /// Prints a text (a report, a round's, a table) on stdout when the text report is shown:
    /// `render` makes it (only then). A closed stdout is not an output lost.
    pub fn text(&self, render: impl FnOnce() -> String) {
        if self.shows_text {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(render().as_bytes());
            let _ = out.flush();
        }
    }

    /// Writes a document to `--json`, when given: `document` makes it (only then).
    pub fn json<D: Serialize>(&mut self, document: impl FnOnce() -> D) {
        if let Some(out) = self.json {
            if let Err(e) = report::schema::write_value(&document(), out) {
                self.lose(&format_args!("--json {e}"));
            }
        }
    }

    /// Writes one result's page to `--html`, when given; `run` makes the result to show (only
    /// then).
    pub fn page(&mut self, run: impl FnOnce() -> LoadedRun) {
        self.html(|| Ok(report::tools::page::render_one(&run())));
    }

    /// Writes the page of a comparison of `runs` to `--html`, when given.
    pub fn comparison_page(&mut self, runs: &[LoadedRun]) {
        self.html(|| report::tools::page::render_comparison(runs));
    }

    /// The command's results (`runs`, made only when asked for) for `--junit` and the CI step
    /// summary, which are written when the command ends (with the line it failed with, if it
    /// did).
    pub fn judged(&self, runs: impl FnOnce() -> Vec<LoadedRun>) {
        if self.ci {
            super::ci::results(runs());
        }
    }

    /// Writes one more file of the run's (`--hgrm`, `--hlog`), when `path` is given: `write`
    /// writes it there; a failure's line is `FLAG PATH: REASON`.
    pub fn file(
        &mut self,
        flag: &str,
        path: Option<&Path>,
        write: impl FnOnce(&Path) -> Result<(), Error>,
    ) {
        if let Some(path) = path {
            if let Err(e) = write(path) {
                self.lose(&format_args!("{flag} {e}"));
            }
        }
    }

    /// Whether an output could not be written.
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// The exit status once every output was written: 1 when one was lost (its line was
    /// said), else `verdict` (the run's own, which may say a line of its own).
    pub fn status_or(self, verdict: impl FnOnce() -> ExitStatus) -> ExitStatus {
        if self.lost {
            ExitStatus::Failed
        } else {
            verdict()
        }
    }

    /// `--html`: `page` renders it (only when asked for), then it is written.
    /// With `--dashboard`, the page is also its final page (made once for both).
    fn html(&mut self, page: impl FnOnce() -> Result<String, Error>) {
        if self.html.is_none() && self.live.is_none() {
            return;
        }
        let written = page().and_then(|page| {
            let written = match self.html {
                Some(path) => report::tools::page::write(&page, path, "--html"),
                None => Ok(()),
            };
            if let Some(live) = self.live {
                live.final_page(page);
            }
            written
        });
        if let Err(e) = written {
            if self.html.is_some() {
                self.lose(&e);
            }
        }
    }

    /// An output lost: its line on stderr.
    fn lose(&mut self, line: &dyn std::fmt::Display) {
        self.lost = true;
        fail(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_lost_leaves_the_others_written_and_the_status_1() {
        let dir = std::env::temp_dir().join(format!("tsumo-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let options = RunOptions {
            json: Some(JsonOut::File(dir.join("missing").join("run.json"))),
            quiet: true,
            ..RunOptions::for_tests()
        };
        let mut outputs = Outputs::of(&options);
        outputs.json(|| serde_json::json!({ "kind": "run" }));
        assert!(outputs.lost());
        let hgrm = dir.join("run.hgrm");
        outputs.file("--hgrm", Some(&hgrm), |path| {
            std::fs::write(path, "written").map_err(|e| Error::Write {
                path: path.display().to_string(),
                reason: e.to_string(),
            })
        });
        let written = std::fs::read_to_string(&hgrm);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(written.ok().as_deref(), Some("written"));
        // Lost: exit 1, whatever the run's verdict would have been.
        assert_eq!(
            outputs.status_or(|| ExitStatus::ObjectiveBroken),
            ExitStatus::Failed
        );
    }

    #[test]
    fn nothing_asked_nothing_lost_the_verdict_is_the_runs() {
        let options = RunOptions {
            quiet: true,
            ..RunOptions::for_tests()
        };
        let mut outputs = Outputs::of(&options);
        assert!(!outputs.shows_text());
        outputs.json(|| -> serde_json::Value { unreachable!("no --json asked") });
        outputs.page(|| unreachable!("no --html asked"));
        outputs.file("--hlog", None, |_| unreachable!("no --hlog asked"));
        assert_eq!(
            outputs.status_or(|| ExitStatus::ObjectiveBroken),
            ExitStatus::ObjectiveBroken
        );
    }
}
