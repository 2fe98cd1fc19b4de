//! tsumo's entry point: parse, run, render, exit code (0 ran, 1 failed, 2 bad input: see
//! `tsumo::error::ExitStatus`). Nothing else: each command's run is in `tsumo::run`.

use std::path::Path;
use std::process::ExitCode;

use tsumo::cli::{self, Parsed};
use tsumo::error::Error;
use tsumo::plan::JsonOut;
use tsumo::{report, run};

/// mimalloc: the many small, short-lived allocations of an HTTP/2 request (hyper's headers and
/// streams) cost less than in glibc's malloc (the crate docs' layout section, BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` (4 in mimalloc.h's `mi_option_e`, v2 and v3): 0 commits
/// arena memory as it is used. The default (commit eagerly on systems that overcommit) made a
/// 4,096-player session 40 % larger (19.7 KB per player against 14.2 with glibc's malloc; 14.4
/// with this set to 0). It must be set before the first allocation reserves the first arena,
/// so a constructor (`.init_array`) sets it, before Rust's runtime allocates anything.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

#[used]
#[link_section = ".init_array"]
static SET_ALLOCATOR_OPTIONS: extern "C" fn() = set_allocator_options;

extern "C" fn set_allocator_options() {
    // SAFETY: mi_option_set has no precondition; it runs once, before any thread exists.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
}

fn main() -> ExitCode {
    match cli::parse(std::env::args_os()) {
        Ok(Parsed::Run(plan)) => run::http::run(&plan).into(),
        Ok(Parsed::Mahjong(plan)) => run::mahjong::run(&plan).into(),
        Ok(Parsed::Ws(plan)) => run::ws::run(&plan).into(),
        Ok(Parsed::Capacity(plan)) => run::capacity::run(&plan).into(),
        Ok(Parsed::MahjongCapacity(plan)) => run::mahjong_capacity::run(&plan).into(),
        Ok(Parsed::Doctor(plan)) => {
            let network = tsumo::net::preflight::doctor_checks(&plan);
            tsumo::sys::doctor::run(&plan, network)
        }
        Ok(Parsed::Compare(options)) => exit(report::tools::compare::run(&options)),
        Ok(Parsed::Merge(options)) => {
            let checked = match &options.output {
                JsonOut::File(path) => {
                    check_tool_output(path, &options.files, "the files to merge")
                }
                JsonOut::Stdout => Ok(()),
            };
            exit(checked.and_then(|()| report::tools::merge::run(&options)))
        }
        Ok(Parsed::Plot(options)) => {
            let output = (options.output.as_os_str() != "-").then_some(options.output.as_path());
            exit(
                output
                    .map_or(Ok(()), |path| {
                        check_tool_output(path, &options.files, "the files to plot")
                    })
                    .and_then(|()| report::tools::plot::run(&options)),
            )
        }
        Ok(Parsed::Report(options)) => {
            let checked = match options.output.as_os_str() == "-" && options.markdown {
                true => Ok(()),
                false => check_tool_output(&options.output, &options.files, "the files to report"),
            };
            exit(checked.and_then(|()| match options.markdown {
                true => report::tools::markdown::run(&options),
                false => report::tools::page::run(&options),
            }))
        }
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => run::error_exit(&e).into(),
    }
}

/// A tool's `-o FILE` is not one of its inputs and can be written: checked before any work.
fn check_tool_output(path: &Path, inputs: &[std::path::PathBuf], what: &str) -> Result<(), Error> {
    let what = format!("one of {what}");
    let files: Vec<(&str, Option<&Path>)> = inputs
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .map(|p| (what.as_str(), Some(p.as_path())))
        .collect();
    run::files::check(&[("-o", Some(path))], &files)
}

/// The exit code of a command that either worked or failed with one error line.
fn exit(result: Result<(), Error>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => run::error_exit(&e).into(),
    }
}
