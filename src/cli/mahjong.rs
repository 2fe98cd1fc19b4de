//! `tsumo mahjong [options] <server-url>`: the mahjong session command line, turned into a
//! validated [`MahjongPlan`]. Same conventions as the wrk2 command line: wrk's units, options
//! before or after the URL, every mistake one line naming the option and the fix.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Command;

use super::error::ArgError;
use super::help::Page;
use super::shared::{self, file, flag, value, For};
use super::units::duration_text;
use super::{
    bind, extra_argument, mahjong_capacity, shard, slo, subcommand_matches, url, url_args, Parsed,
};
use crate::mahjong::rules;
use crate::plan::{BotKind, MahjongPlan, RunOptions, Target};

const DEFAULT_PLAYERS: usize = 4;
const DEFAULT_SEATS: usize = 4;
const DEFAULT_THREADS: usize = 2;
const DEFAULT_DURATION: Duration = Duration::from_secs(30 * 60);
const DEFAULT_RAMP: Duration = Duration::from_millis(40);
const DEFAULT_THINK: Duration = Duration::from_secs(1);
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_RETRIES: u32 = 3;
const DEFAULT_GAMES: usize = 1;
const DEFAULT_ROUNDS: usize = 1;
const DEFAULT_LOGOUT_TIMEOUT: Duration = Duration::from_secs(30);
/// What each player of the whole session adds to the default `--logout-timeout`, see
/// [`default_logout_timeout`].
const LOGOUT_TIMEOUT_PER_PLAYER: Duration = Duration::from_millis(10);

const USAGE: &str = "usage: tsumo mahjong [options] <server-url>";

/// The help page's prose around the option lists.
const PAGE: Page = Page {
    before: "\
tsumo mahjong — bot players in full mahjong games against a majiang-server

Usage: tsumo mahjong [options] <server-url>     (e.g. http://127.0.0.1:4615/server)

Every player logs in, opens its socket.io WebSocket, sits at a table (four to a table: one
creates the room, three join; see --seats), all tables start together, play their games
with a think time on every decision, and every player logs out. Each phase completes for
every player before the next starts. The report shows how long each phase took, how the
server paced the games, and how late tsumo itself replied.
",
    heading: "Options",
    column: 29,
    after: "\
Units: numbers take k/M/G; times take us, ms, s, m, h (e.g. 500ms, 2m).

Exit status: 0 the session ran; 1 it failed (sessions left on the server, most players
failed before they could play, the server did not answer); 2 bad command line or input
(an option or value, a --rule file that does not load); 99 the session ran and an
objective (--slo) broke.
",
};

/// Parses the arguments after the `mahjong` word.
pub fn parse(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = command();
    let matches = subcommand_matches(&command, args.clone())?;
    if matches.get_flag("help") {
        return Ok(Parsed::Print(PAGE.render(&command)));
    }
    // The mode's word is part of the command line a derived run id hashes.
    let argv: Vec<OsString> = std::iter::once(OsString::from("mahjong"))
        .chain(args)
        .collect();
    let options = super::Options {
        command: &command,
        matches: &matches,
    };
    let numbers = Numbers::read(&options)?;
    let (url, server) = server(&matches)?;
    let mut numbers = numbers.checked(&options)?;
    let (stages, stay) = profile(&options)?;
    sized_by_profile(&mut numbers, &stages, &options)?;
    let (rounds, vs) = rounds_and_vs(&options)?;
    let (rule, timer, bot) = game(&options)?;
    let part = super::shard::part(
        &matches,
        &argv,
        &super::shard::process_env,
        crate::sys::wallclock::unix_now_ns(),
    )?;
    let players_given = matches.contains_id("players");
    let seats = numbers.seats;
    let players = match stages.is_empty() {
        true => super::shard::split_players(numbers.players, seats, part.shard, players_given)?,
        false => super::shard::split_profile(numbers.players, seats, part.shard),
    };
    let bind = super::bind::parse(&matches)?;
    let json = super::json_out(matches.get_one::<PathBuf>("json").cloned());
    let plan = MahjongPlan {
        options: RunOptions {
            label: matches
                .get_one::<String>("label")
                .cloned()
                .unwrap_or_else(|| url.clone()),
            server_pids: super::server_pids(&matches)?,
            interval: super::interval(&options)?,
            vs,
            vs_label: matches.get_one::<String>("vs_label").cloned(),
            rounds,
            part,
            bind,
            threads: numbers.threads.min(players / seats),
            duration: numbers.duration,
            latency: matches.get_flag("latency"),
            insecure: matches.get_flag("insecure"),
            cacert: matches.get_one::<PathBuf>("cacert").cloned(),
            json,
            html: matches.get_one::<PathBuf>("html").cloned(),
            junit: matches.get_one::<PathBuf>("junit").cloned(),
            quiet: matches.get_flag("quiet"),
            progress: matches.get_flag("progress"),
            objectives: super::slo::mahjong(&matches, numbers.think)?,
            dashboard: super::shared::dashboard_at(&options)?,
            remote_write: super::shared::remote_write(&options)?,
        },
        server,
        players,
        seats,
        ramp: numbers.ramp,
        think: numbers.think,
        think_jitter: numbers.think_jitter,
        bot,
        games: numbers.games,
        rule,
        rule_file: matches.get_one::<PathBuf>("rule").cloned(),
        timer,
        connect_timeout: numbers.connect_timeout,
        logout_timeout: numbers.logout_timeout,
        retries: numbers.retries,
        // Under a profile, each table starts as soon as it is full.
        lockstep: !matches.get_flag("start_when_full") && stages.is_empty(),
        stages,
        stay,
        requests: super::wrk::requests(&options)?,
    };
    if matches.get_flag("capacity") {
        // The default grows with the players: the search's most, there.
        let default_logout = (!numbers.logout_timeout_given).then_some(default_logout_timeout as _);
        return super::mahjong_capacity::plan(&matches, plan, default_logout);
    }
    super::mahjong_capacity::not_without(&matches)?;
    Ok(Parsed::Mahjong(Box::new(plan)))
}

/// Under `--stages`, the players (this process's most at once, in whole tables) and the
/// duration (the profile's) come from the profile.
fn sized_by_profile(
    numbers: &mut Numbers<u32, Duration>,
    stages: &[crate::plan::Stage],
    options: &super::Options,
) -> Result<(), ArgError> {
    let Some(peak) = crate::timing::stages::peak(stages) else {
        return Ok(());
    };
    let seats = numbers.seats as u64;
    let most = peak.div_ceil(seats).saturating_mul(seats).max(seats);
    numbers.players =
        usize::try_from(most).map_err(|_| options.invalid("stages", "too many players"))?;
    numbers.duration = Duration::from_nanos(stages.iter().map(|s| s.duration_ns).sum());
    if !numbers.logout_timeout_given {
        numbers.logout_timeout = default_logout_timeout(numbers.players);
    }
    Ok(())
}

/// The session's numbers and times: read (or defaulted) first, checked once the URL is read,
/// so a mistake in either is reported in the order it always was. Checked, they are a
/// `Numbers<u32, Duration>`: the games and tries as the plan holds them, the logout timeout set.
struct Numbers<Count = usize, Logout = Option<Duration>> {
    seats: usize,
    players: usize,
    threads: usize,
    games: Count,
    retries: Count,
    duration: Duration,
    ramp: Duration,
    think: Duration,
    think_jitter: Duration,
    connect_timeout: Duration,
    logout_timeout: Logout,
    /// Whether `--logout-timeout` was given (a capacity search grows the default).
    logout_timeout_given: bool,
}

impl Numbers {
    /// The numbers as given, or their defaults.
    fn read(options: &super::Options) -> Result<Self, ArgError> {
        let count = |id: &str, default: usize| options.count(id).map(|n| n.unwrap_or(default));
        let duration =
            |id: &str, default: Duration| options.duration(id).map(|d| d.unwrap_or(default));
        let seats = count("seats", DEFAULT_SEATS)?;
        // A capacity search sets the players itself: one table until then.
        let default_players = if options.matches.get_flag("capacity") {
            seats.max(1)
        } else {
            DEFAULT_PLAYERS
        };
        let players = count("players", default_players)?;
        let threads = count("threads", DEFAULT_THREADS)?;
        let games = count("games", DEFAULT_GAMES)?;
        let retries = count("retries", DEFAULT_RETRIES as usize)?;
        let max_duration = duration("duration", DEFAULT_DURATION)?;
        let ramp = duration("ramp", DEFAULT_RAMP)?;
        let think = duration("think", DEFAULT_THINK)?;
        let think_jitter = duration("think_jitter", Duration::ZERO)?;
        let connect_timeout = duration("connect_timeout", DEFAULT_CONNECT_TIMEOUT)?;
        let logout_timeout = options.duration("logout_timeout")?;
        Ok(Numbers {
            seats,
            players,
            threads,
            games,
            retries,
            duration: max_duration,
            ramp,
            think,
            think_jitter,
            connect_timeout,
            logout_timeout,
            logout_timeout_given: logout_timeout.is_some(),
        })
    }

    /// The numbers in range, or one line naming the first that is not.
    fn checked(self, options: &super::Options) -> Result<Numbers<u32, Duration>, ArgError> {
        let invalid = |id: &str, reason: &str| options.invalid(id, reason);
        let (seats, players) = (self.seats, self.players);
        if !(1..=4).contains(&seats) {
            return Err(invalid(
                "seats",
                "must be 1, 2, 3 or 4 (a table has four seats)",
            ));
        }
        if players == 0 || players % seats != 0 {
            return Err(invalid(
                "players",
                &format!("must be a positive multiple of {seats} ({seats} tsumo players to a table; see --seats)"),
            ));
        }
        if self.threads == 0 {
            return Err(invalid("threads", "must be at least 1"));
        }
        if self.games == 0 {
            return Err(invalid("games", "must be at least 1"));
        }
        if self.retries == 0 {
            return Err(invalid("retries", "must be at least 1"));
        }
        let too_large = |id: &str| invalid(id, "number is too large");
        let retries = u32::try_from(self.retries).map_err(|_| too_large("retries"))?;
        let games = u32::try_from(self.games).map_err(|_| too_large("games"))?;
        if self.duration.is_zero() {
            return Err(invalid("duration", "must be longer than zero"));
        }
        if self.connect_timeout.is_zero() {
            return Err(invalid("connect_timeout", "must be longer than zero"));
        }
        let logout_timeout = self
            .logout_timeout
            .unwrap_or_else(|| default_logout_timeout(players));
        if logout_timeout.is_zero() {
            return Err(invalid("logout_timeout", "must be longer than zero"));
        }
        Ok(Numbers {
            games,
            retries,
            logout_timeout,
            seats,
            players,
            threads: self.threads,
            duration: self.duration,
            ramp: self.ramp,
            think: self.think,
            think_jitter: self.think_jitter,
            connect_timeout: self.connect_timeout,
            logout_timeout_given: self.logout_timeout_given,
        })
    }
}

/// `--stages` (the players online over time) and `--stay`, both empty without `--stages`. The
/// profile sets what `-c`, `--ramp`, `-d` and `--games` would: each is refused beside it, as
/// are `--capacity` (a search sets the players itself) and `--stay` without a profile.
fn profile(options: &super::Options) -> Result<(Vec<crate::plan::Stage>, Option<u32>), ArgError> {
    let matches = options.matches;
    let stay = options.count("stay")?;
    let Some(text) = matches.get_one::<String>("stages") else {
        return match stay {
            Some(_) => Err(ArgError::Refused(
                "--stay is for --stages (players leaving and others arriving in their place); \
                 without it, use --games"
                    .to_string(),
            )),
            None => Ok((Vec::new(), None)),
        };
    };
    for (id, name, instead) in [
        (
            "players",
            "-c",
            "the profile says how many players are online",
        ),
        ("ramp", "--ramp", "the profile paces the arrivals"),
        ("duration", "-d", "the run lasts the profile"),
        (
            "games",
            "--games",
            "use --stay N: the games a table plays before its players leave",
        ),
        (
            "capacity",
            "--capacity",
            "a capacity search sets the players itself",
        ),
    ] {
        let given = matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
        if given {
            return Err(ArgError::Refused(format!(
                "--stages sets the players over time: leave out {name} ({instead})"
            )));
        }
    }
    let stay = match stay {
        Some(0) => return Err(options.invalid("stay", "must be at least 1")),
        Some(n) => {
            Some(u32::try_from(n).map_err(|_| options.invalid("stay", "number is too large"))?)
        }
        None => None,
    };
    let stages = super::stages::parse(text).map_err(|reason| options.invalid("stages", &reason))?;
    Ok((stages, stay))
}

/// The server URL as typed and as a base URL, and no argument after it.
fn server(matches: &clap::ArgMatches) -> Result<(String, Target), ArgError> {
    let Some(url) = matches.get_one::<String>("url") else {
        return Err(ArgError::Refused(format!("missing server URL ({USAGE})")));
    };
    let mut server = url::parse_url(url)
        .map_err(|reason| ArgError::Refused(format!("invalid URL '{url}': {reason}")))?;
    server.path = base_path(&server.path);
    if let Some(extra) = extra_argument(matches) {
        return Err(ArgError::Refused(format!(
            "unexpected argument '{extra}' after the server URL ({USAGE})"
        )));
    }
    Ok((url.clone(), server))
}

/// `--rounds` and the `--vs` server's base URL (the `--vs-*` options only with `--vs`).
fn rounds_and_vs(options: &super::Options) -> Result<(u32, Option<Target>), ArgError> {
    let matches = options.matches;
    let rounds = super::ab_rounds(options, DEFAULT_ROUNDS)?;
    let vs = match matches.get_one::<String>("vs") {
        Some(text) => {
            let mut target = url::parse_url(text).map_err(|reason| {
                ArgError::Refused(format!("invalid URL '{text}' for --vs: {reason}"))
            })?;
            target.path = base_path(&target.path);
            Some(target)
        }
        None => None,
    };
    Ok((rounds, vs))
}

/// The game's rule (`--rule FILE` onto the default), its `--timer` and the `--bot` every seat runs.
fn game(
    options: &super::Options,
) -> Result<(serde_json::Value, Option<Vec<u64>>, BotKind), ArgError> {
    let matches = options.matches;
    let invalid = |id: &str, reason: &str| options.invalid(id, reason);
    let rule = match matches.get_one::<PathBuf>("rule") {
        Some(path) => rules::load(path)
            .map_err(|e| ArgError::Refused(format!("--rule {}: {e}", path.display())))?,
        None => rules::default_rule(),
    };
    let timer = matches
        .get_one::<String>("timer")
        .map(|text| rules::parse_timer(text).map_err(|e| invalid("timer", &e.to_string())))
        .transpose()?;
    let bot = match matches.get_one::<String>("bot") {
        Some(name) => {
            BotKind::parse(name).ok_or_else(|| invalid("bot", "must be shanten or tsumogiri"))?
        }
        None => BotKind::default(),
    };
    Ok((rule, timer, bot))
}

/// `--logout-timeout` when it is not given: 30 s, or 10 ms per player of the whole session
/// (`-c`, every shard's players) when that is longer. Every player logs out at the end at once
/// and one server answers them all, so the time grows with the session, not with one shard:
/// measured (BENCHMARKS.md, 4 generators on one majiang-server), 4,096 players logged out
/// within 12 s (p99), 8,192 took up to 65 s and with 30 s none of them did. 10 ms per player
/// gives 8,192 players 82 s.
fn default_logout_timeout(players: usize) -> Duration {
    let players = u32::try_from(players).unwrap_or(u32::MAX);
    DEFAULT_LOGOUT_TIMEOUT.max(LOGOUT_TIMEOUT_PER_PLAYER.saturating_mul(players))
}

/// The server's base path from a URL's path: no query, no trailing slash (majiang-server strips
/// a trailing slash from its --baseurl too).
fn base_path(path: &str) -> String {
    path.split('?')
        .next()
        .unwrap_or("/")
        .trim_end_matches('/')
        .to_string()
}

/// `--stages` and `--stay`, after the session's other options.
fn profile_args() -> [clap::Arg; 2] {
    [
        value("stages", None, "stages").value_name("PROFILE").help(
            "Instead of -c, --ramp, -d and --games: the players online over\n\
             time, as comma-separated DURATION:N (a hold) or DURATION:FROM-TO\n\
             (a linear ramp; over 0s, a jump): 2m:0-4096,10m:4096,2m:4096-0.\n\
             Players arrive (log in, connect, sit) as it rises, tables form\n\
             as they arrive, and tables leave after their game as it falls;\n\
             at its end every player still online logs out (a game still\n\
             being played is cut)",
        ),
        value("stay", None, "stay").value_name("N").help(
            "With --stages: each table's players log out after N games and\n\
             new players arrive in their place (churn) [default: they stay\n\
             until the profile falls or ends]",
        ),
    ]
}

/// The option table, in the help's order.
pub(super) fn command() -> Command {
    super::subcommand("tsumo mahjong")
        .args([
            value("players", Some('c'), "players")
                .value_name("N")
                .help(format!(
                    "Bot players, a multiple of --seats [default: {DEFAULT_PLAYERS}]"
                )),
            value("seats", None, "seats").value_name("N").help(format!(
                "tsumo's players per table, 1 to 4 [default: {DEFAULT_SEATS}]. With fewer\n\
                 than 4, the other seats are for players from outside, such as\n\
                 majiang-server's AI (majiang-bot -r ROOM URL): each table's room\n\
                 number is printed on stderr (`tsumo: room N5702 ...`) and the\n\
                 table starts once its room is full (waiting up to\n\
                 --connect-timeout)"
            )),
            shared::threads(For::Mahjong, DEFAULT_THREADS),
            shared::duration(For::Mahjong, DEFAULT_DURATION),
            value("ramp", None, "ramp").value_name("T").help(format!(
                "Interval between successive logins, and connects [default: {}]",
                duration_text(DEFAULT_RAMP)
            )),
            value("bot", None, "bot").value_name("NAME").help(format!(
                "The player: shanten (plays: discards by shanten, riichi,\n\
                 calls, wins) or tsumogiri (discards every draw, never calls\n\
                 or wins: every game the same length) [default: {}]",
                BotKind::default().as_str()
            )),
            value("think", None, "think").value_name("T").help(format!(
                "Delay before each decision a person would think about: a\n\
                 draw, a discard after a call, a call or win on offer [default: {}]",
                duration_text(DEFAULT_THINK)
            )),
            value("think_jitter", None, "think-jitter")
                .value_name("T")
                .help("Add a uniform random 0..T to each think time [default: 0]"),
            value("games", None, "games")
                .value_name("N")
                .help(format!("Games each table plays [default: {DEFAULT_GAMES}]")),
            file("rule", None, "rule").help(
                "JSON rule object merged onto tsumo's complete default rule\n\
                 (東風戦, no dealer repeat, no bankruptcy end, no abortive draws)",
            ),
            value("timer", None, "timer").value_name("L[+B]").help(
                "START timer: L seconds per action plus a bank of B (e.g. 10+20);\n\
                 without it a silent player stalls its table for ever",
            ),
            flag("start_when_full", None, "start-when-full")
                .help("Start each table as soon as it is full, not all together"),
            value("connect_timeout", None, "connect-timeout")
                .value_name("T")
                .help(format!(
                    "Time for each login, connect and logout [default: {}]",
                    duration_text(DEFAULT_CONNECT_TIMEOUT)
                )),
            value("retries", None, "retries")
                .value_name("N")
                .help(format!(
                    "Tries of a failed login, connect or logout [default: {DEFAULT_RETRIES}]"
                )),
            value("logout_timeout", None, "logout-timeout")
                .value_name("T")
                .help(format!(
                    "Time each player's logout gets once its session is over, its\n\
                     tries going on past --retries within it [default: {}, or {}\n\
                     per player of the whole session (-c, all shards) when longer:\n\
                     82s at 8,192]; logouts go at most 32 at a time per thread, and\n\
                     sessions left on the server are listed",
                    duration_text(DEFAULT_LOGOUT_TIMEOUT),
                    duration_text(LOGOUT_TIMEOUT_PER_PLAYER)
                )),
            shared::label(For::Mahjong),
            shard::shard_arg(For::Mahjong),
            shard::shards_arg(),
            shard::start_at_arg(For::Mahjong),
            shard::run_id_arg(For::Mahjong),
            bind::arg(For::Mahjong),
            shared::server_pid(),
            shared::interval(For::Mahjong),
            shared::vs(For::Mahjong),
            shared::vs_label(For::Mahjong),
            shared::rounds(DEFAULT_ROUNDS),
            shared::latency(For::Mahjong),
            shared::insecure(For::Mahjong),
            shared::cacert(For::Mahjong),
            shared::json(For::Mahjong),
            shared::html(For::Mahjong),
            shared::junit(For::Mahjong),
            shared::dashboard(),
            shared::dashboard_linger(),
            shared::prometheus_rw(),
            shared::quiet(For::Mahjong),
            shared::progress(For::Mahjong),
            slo::arg(For::Mahjong),
            shared::help(),
        ])
        .args(requests_args().into_iter().chain(profile_args()))
        .args(mahjong_capacity::args())
        .args(url_args())
}

/// `--requests FILE` and `--requests-sample F`: the bots' timed replies on record.
fn requests_args() -> [clap::Arg; 2] {
    [
        shared::file("requests", None, "requests").help(
            "Also write each timed reply of the bots as one CSV row (times,\n\
             player, reply number, bytes, lateness, error); zstd-compressed\n\
             when FILE ends in .zst",
        ),
        value("requests_sample", None, "requests-sample")
            .value_name("F")
            .help("With --requests, log this fraction of the replies, in (0, 1]"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<MahjongPlan, String> {
        match parse(args.iter().map(OsString::from).collect()) {
            Ok(Parsed::Mahjong(plan)) => Ok(*plan),
            Ok(_) => Err("not a mahjong plan".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn defaults_and_base_path() {
        let p = run(&["http://127.0.0.1:4615/server/"]).unwrap();
        assert_eq!(p.players, 4);
        assert_eq!(
            p.options.threads, 1,
            "threads are capped at the number of tables"
        );
        assert_eq!(p.server.path, "/server");
        assert_eq!(p.ramp, Duration::from_millis(40));
        assert_eq!(p.think, Duration::from_secs(1));
        assert!(p.lockstep);
        assert_eq!(p.rule.as_object().map(|o| o.len()), Some(rules::RULE_KEYS));
        assert_eq!(p.options.label, "http://127.0.0.1:4615/server/");
        assert_eq!(p.bot, BotKind::Shanten);
        let p = run(&["--bot", "tsumogiri", "http://h/s"]).unwrap();
        assert_eq!(p.bot, BotKind::Tsumogiri);
        assert_eq!(p.seats, 4);
        let p = run(&["--seats", "1", "-c", "3", "-t", "2", "http://h/s"]).unwrap();
        assert_eq!((p.seats, p.tables(), p.options.threads), (1, 3, 2));
    }

    #[test]
    fn options() {
        let p = run(&[
            "-c16",
            "-t",
            "2",
            "--think",
            "0",
            "--ramp",
            "5ms",
            "--games",
            "2",
            "--timer",
            "10+20",
            "--start-when-full",
            "http://h:1/s",
            "--label",
            "direct",
        ])
        .unwrap();
        assert_eq!((p.players, p.options.threads, p.games), (16, 2, 2));
        assert_eq!(p.think, Duration::ZERO);
        assert_eq!(p.timer, Some(vec![10, 20]));
        assert!(!p.lockstep);
        assert_eq!(p.options.label, "direct");
        assert_eq!(p.tables_for_thread(0) + p.tables_for_thread(1), 4);
    }

    #[test]
    fn the_default_logout_timeout_grows_with_the_whole_sessions_players() {
        let timeout = |args: &[&str]| run(args).unwrap().logout_timeout;
        let ms = Duration::from_millis;
        assert_eq!(timeout(&["http://h/s"]), ms(30_000));
        assert_eq!(timeout(&["-c", "3000", "http://h/s"]), ms(30_000));
        assert_eq!(timeout(&["-c", "4096", "http://h/s"]), ms(40_960));
        assert_eq!(timeout(&["-c", "8192", "http://h/s"]), ms(81_920));
        // A shard's logouts go to the server with every other shard's.
        let shard = ["-c", "8192", "--shard", "2/4", "http://h/s"];
        assert_eq!(run(&shard).unwrap().players, 2048);
        assert_eq!(timeout(&shard), ms(81_920));
        // Given, it wins, shorter or longer.
        let given = ["-c", "8192", "--logout-timeout", "10s", "http://h/s"];
        assert_eq!(timeout(&given), ms(10_000));
        assert_eq!(
            timeout(&["--logout-timeout", "3m", "http://h/s"]),
            ms(180_000)
        );
        assert_eq!(
            default_logout_timeout(usize::MAX),
            ms(10 * u64::from(u32::MAX))
        );
    }

    #[test]
    fn capacity_search_plan() {
        let parse_capacity = |args: &[&str]| match parse(args.iter().map(OsString::from).collect())
        {
            Ok(Parsed::MahjongCapacity(plan)) => *plan,
            other => panic!("{args:?}: {other:?}"),
        };
        let slo = "draw_overshoot.p99<100ms";
        let p = parse_capacity(&["--capacity", "--slo", slo, "http://h/s"]);
        assert_eq!(
            (p.search.from, p.search.to, p.search.step),
            (16, None, Duration::from_secs(10))
        );
        assert_eq!(p.session.games, u32::MAX);
        assert!(!p.session.lockstep);
        assert_eq!(p.session.logout_timeout, Duration::from_millis(81_920));
        let p = parse_capacity(&[
            "--capacity",
            "--slo",
            slo,
            "--seats",
            "3",
            "--from",
            "6",
            "--to",
            "60",
            "--step",
            "5s",
            "--pause",
            "0",
            "--resolution",
            "10%",
            "http://h/s",
        ]);
        assert_eq!(
            (p.search.from, p.search.to, p.session.seats),
            (6, Some(60), 3)
        );
        assert_eq!(
            (p.search.step, p.search.pause, p.search.resolution),
            (Duration::from_secs(5), Duration::ZERO, 0.1)
        );
        assert_eq!(p.session.logout_timeout, Duration::from_secs(30));
    }

    #[test]
    fn a_profile_sets_the_players_the_length_and_starts_tables_when_full() {
        let p = run(&[
            "--stages",
            "2s:0-14,3s:14,1s:14-0",
            "--stay",
            "2",
            "http://h/s",
        ])
        .unwrap();
        // The most at once, in whole tables.
        assert_eq!((p.players, p.options.threads, p.stay), (16, 2, Some(2)));
        assert_eq!(p.options.duration, Duration::from_secs(6));
        assert_eq!(p.stages.len(), 3);
        assert!(!p.lockstep);
        let p = run(&["--stages", "1s:1", "http://h/s"]).unwrap();
        assert_eq!((p.players, p.options.threads, p.stay), (4, 1, None));
        let p = run(&["http://h/s"]).unwrap();
        assert!(p.stages.is_empty() && p.stay.is_none());
    }

    #[test]
    fn errors_are_one_line() {
        for (args, needle) in [
            (&["-c", "6", "http://h/s"][..], "multiple of 4"),
            (&["-c", "0", "http://h/s"][..], "multiple of 4"),
            (&["http://h/s", "extra"][..], "unexpected argument"),
            (&[][..], "missing server URL"),
            (&["--games", "0", "http://h/s"][..], "--games"),
            (&["--timer", "x", "http://h/s"][..], "--timer"),
            (&["--rule", "/nonexistent.json", "http://h/s"][..], "--rule"),
            (&["--bogus", "http://h/s"][..], "unknown option"),
            (&["--bot", "mortal", "http://h/s"][..], "--bot"),
            (&["--seats", "0", "http://h/s"][..], "--seats"),
            (&["--seats", "5", "http://h/s"][..], "--seats"),
            (&["--seats", "x", "http://h/s"][..], "--seats"),
            (
                &["--seats", "3", "-c", "4", "http://h/s"][..],
                "multiple of 3",
            ),
            (&["ftp://h/s"][..], "invalid URL"),
        ] {
            let e = run(args).unwrap_err();
            assert!(e.contains(needle), "{args:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
