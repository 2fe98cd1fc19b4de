//! When a fixed-rate run does not reach its rate: by how much, and which side held it back —
//! the server (or the network), whose responses kept every connection busy when requests fell
//! due, or tsumo itself, whose worker threads ran out of CPU and sent behind its own schedule,
//! or the machine's other load, which took the CPU from either. Neither wrk2 nor oha says this;
//! a user sizing a server must know which one they measured.
//!
//! And when tsumo sent late ([`Behind`]) without a shortfall: whether its own CPU was the limit
//! (more threads help), the machine's other load (they would not), or neither (a stall). The
//! report names one cause, with its evidence: never tsumo and the server in one breath.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Recorder;
use crate::stats::format::{format_metric, format_time_us};
use crate::stats::hdr;
use crate::sys::usage::ThreadUsage;

/// Below this share of the target the rate counts as not reached (requests still in flight at
/// the end are allowed for besides).
const REACHED_SHARE: f64 = 0.98;

/// A worker thread runnable (on a CPU or waiting for one) this share of the run (or more) never
/// had to wait for the network: it was the bottleneck.
const SATURATED_THREAD: f64 = 0.90;

/// A worker thread that used this share of a core (or more) over the run was limited by its
/// own CPU: more threads would spread its work.
const OWN_CPU: f64 = 0.80;

/// A worker thread that waited for a CPU this share of the run (or more) was kept off one.
const WAITED_FOR_CPU: f64 = 0.05;

/// Others on the machine using this many cores (or more), or the hypervisor stealing this share
/// of them, is a load beside the run worth naming.
const OTHERS_BUSY_CORES: f64 = 0.5;
const STEAL_SHARE: f64 = 0.2;

/// Send lateness p99 (µs) above which tsumo fell behind its own schedule.
pub const LATENESS_WARNING_US: u64 = 1000;

/// The machine during the run, from `/proc/stat`: the CPU others used (its busy cores less
/// tsumo's, and less the server's when `--server-pid` sampled it), and what the hypervisor stole.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MachineLoad {
    pub others_cores: f64,
    pub steal_cores: f64,
    pub cores: usize,
    /// The sampled server's CPU, in cores; `None`: not sampled, and in `others_cores`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cores: Option<f64>,
}

impl MachineLoad {
    /// From the machine's use over the run, tsumo's CPU in cores, and the server's if sampled.
    pub fn of(
        machine: crate::sys::machine::MachineUse,
        tsumo_cores: f64,
        server_cores: Option<f64>,
    ) -> MachineLoad {
        let others = machine.busy_cores - tsumo_cores - server_cores.unwrap_or(0.0);
        MachineLoad {
            others_cores: others.max(0.0),
            steal_cores: machine.steal_cores,
            cores: machine.cores,
            server_cores,
        }
    }

    /// Others (or the hypervisor) took a share of the machine worth naming.
    fn busy(&self) -> bool {
        self.others_cores >= OTHERS_BUSY_CORES
            || self.steal_cores >= STEAL_SHARE * self.cores.max(1) as f64
    }

    /// `other processes used 1.3 of 2 cores; steal 0.3 cores`.
    fn words(&self) -> String {
        let who = match self.server_cores {
            Some(_) => "other processes",
            None => "other processes (the server among them: --server-pid tells it apart)",
        };
        let mut said = format!(
            "{who} used {:.1} of {} cores",
            self.others_cores, self.cores
        );
        if self.steal_cores >= 0.05 {
            said.push_str(&format!(", the hypervisor stole {:.1}", self.steal_cores));
        }
        said
    }
}

/// Why tsumo sent behind its own schedule (saved as `own_cpu`, `other_load`, `stalled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LateCause {
    /// Its busiest worker thread used most of a core: more threads help.
    OwnCpu,
    /// Its threads waited for a CPU, or others used the machine: more threads would not help.
    OtherLoad,
    /// Neither busy nor waiting for a CPU: stopped, swapped out, frozen.
    Stalled,
}

/// tsumo sent late (send lateness p99 over [`LATENESS_WARNING_US`]), and why: saved as the
/// JSON's `behind_schedule`, so a saved run's report warns as the run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Behind {
    pub cause: LateCause,
    pub send_lateness_p99_us: u64,
    /// The busiest worker thread's CPU over the run (1.0 = a whole core).
    pub busiest_thread_cpu: f64,
    /// Its time runnable but off a CPU, over the run.
    pub busiest_thread_waiting: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineLoad>,
}

/// The busiest worker thread (by time runnable) as `(cpu, waiting)` shares of `seconds`.
fn busiest(threads: &[ThreadUsage], seconds: f64) -> (f64, f64) {
    let busiest = threads
        .iter()
        .copied()
        .max_by(|a, b| a.runnable_seconds.total_cmp(&b.runnable_seconds))
        .unwrap_or_default();
    let cpu = busiest.cpu_seconds / seconds;
    let waiting = (busiest.runnable_seconds - busiest.cpu_seconds).max(0.0) / seconds;
    (cpu, waiting)
}

impl Behind {
    /// `None` when tsumo kept to its schedule (send lateness p99 at most 1 ms).
    pub fn judge(
        send_lateness_p99_us: u64,
        threads: &[ThreadUsage],
        elapsed: Duration,
        machine: Option<MachineLoad>,
    ) -> Option<Behind> {
        let seconds = elapsed.as_secs_f64();
        if send_lateness_p99_us <= LATENESS_WARNING_US || seconds <= 0.0 {
            return None;
        }
        let (cpu, waiting) = busiest(threads, seconds);
        let cause = if cpu >= OWN_CPU {
            LateCause::OwnCpu
        } else if waiting >= WAITED_FOR_CPU || machine.is_some_and(|m| m.busy()) {
            LateCause::OtherLoad
        } else {
            LateCause::Stalled
        };
        Some(Behind {
            cause,
            send_lateness_p99_us,
            busiest_thread_cpu: cpu,
            busiest_thread_waiting: waiting,
            machine,
        })
    }

    /// The report's one warning, with its one cause and its evidence.
    pub fn line(&self) -> String {
        let head = format!(
            "Warning: tsumo fell behind its own schedule (send lateness p99 {})",
            format_time_us(self.send_lateness_p99_us as f64)
        );
        let (cpu, waiting) = (
            self.busiest_thread_cpu * 100.0,
            self.busiest_thread_waiting * 100.0,
        );
        match self.cause {
            LateCause::OwnCpu => format!(
                "{head}: its busiest worker thread used {cpu:.0}% of a core; latencies include \
                 its delay: add threads (-t) or lower the rate (-R)."
            ),
            LateCause::OtherLoad => {
                let machine = self
                    .machine
                    .filter(MachineLoad::busy)
                    .map_or(String::new(), |m| format!("{}; ", m.words()));
                format!(
                    "{head}, for the machine's other load: {machine}its busiest worker thread \
                     waited for a CPU {waiting:.0}% of the run and used {cpu:.0}% of one; \
                     latencies include its delay: more threads would not help, a quieter \
                     machine or a core of its own would."
                )
            }
            LateCause::Stalled => format!(
                "{head}, though its busiest worker thread neither used a core ({cpu:.0}% of \
                 one) nor waited for one: it was stopped or stalled (SIGSTOP, a debugger, \
                 swapping); latencies include its delay."
            ),
        }
    }
}

/// Which side held the rate back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Connections were busy waiting for responses when requests fell due.
    Server,
    /// Connections could not be opened (or re-opened): requests had nowhere to go.
    Connect,
    /// tsumo's worker threads were out of CPU.
    Generator,
    /// A worker thread hung (a script hook that never returned) and sent nothing after.
    Hung,
    /// tsumo left requests unsent while their connection was free (it fell behind its own
    /// schedule: stalled, kept off a CPU, a slow script hook), half the shortfall or more.
    Late,
}

/// A rate not reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    pub target_rate: u64,
    pub achieved_rate: f64,
    /// achieved / target.
    pub share: f64,
    pub side: Side,
    /// Share of the requests that fell due (sent or not) whose connection was still waiting
    /// for an earlier response then: sent late, or never sent.
    pub due_while_busy_share: f64,
    /// Of those, the requests never sent (their connection still waited at the end).
    #[serde(default)]
    pub unsent_while_busy: u64,
    /// The busiest worker thread's time runnable (on a CPU or waiting for one) over the run's
    /// duration: 1.0 = it never waited for the network.
    pub busiest_thread_runnable: f64,
    /// That thread's CPU time over the run's duration (1.0 = a whole core).
    pub busiest_thread_cpu: f64,
    pub send_lateness_p99_us: u64,
    pub connections: usize,
    pub connect_errors: u64,
    /// Requests never sent while their connection was free: tsumo's own (side `late`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub unsent_late: u64,
    /// Worker threads that hung (side `hung`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hung_threads: usize,
    /// The machine during the run, when `/proc/stat` could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineLoad>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl Shortfall {
    /// `None` when the run reached its rate.
    pub fn judge(
        rate: u64,
        connections: usize,
        total: &Recorder,
        elapsed: Duration,
        threads: &[ThreadUsage],
    ) -> Option<Shortfall> {
        let seconds = elapsed.as_secs_f64();
        let expected = rate as f64 * seconds;
        let completed = total.counters.requests as f64;
        if seconds <= 0.0 || completed + connections as f64 >= expected * REACHED_SHARE {
            return None;
        }
        // Requests that fell due and were never sent were held back too: leaving them out
        // would make a server too slow to be sent anything look idle.
        let unsent = &total.counters.unsent;
        let fell_due = total.send_lateness.len() + unsent.total();
        let due_while_busy_share = if fell_due == 0 {
            0.0
        } else {
            (total.counters.due_while_busy + unsent.busy) as f64 / fell_due as f64
        };
        let busiest = threads
            .iter()
            .copied()
            .max_by(|a, b| a.runnable_seconds.total_cmp(&b.runnable_seconds))
            .unwrap_or_default();
        let busiest_thread_runnable = busiest.runnable_seconds / seconds;
        let busiest_thread_cpu = busiest.cpu_seconds / seconds;
        let connect_errors = total.counters.errors.connect;
        let side = if busiest_thread_runnable >= SATURATED_THREAD {
            Side::Generator
        } else if unsent.late as f64 * 2.0 >= expected - completed {
            Side::Late
        } else if connect_errors > 0 && due_while_busy_share < 0.5 {
            Side::Connect
        } else {
            Side::Server
        };
        Some(Shortfall {
            target_rate: rate,
            achieved_rate: completed / seconds,
            share: completed / expected,
            side,
            due_while_busy_share,
            unsent_while_busy: unsent.busy,
            unsent_late: unsent.late,
            busiest_thread_runnable,
            busiest_thread_cpu,
            send_lateness_p99_us: hdr::value_at_percentile(&total.send_lateness, 99.0),
            connections,
            connect_errors,
            hung_threads: 0,
            machine: None,
        })
    }

    /// The machine during the run: its other load may be the cause the line names.
    pub fn with_machine(mut self, machine: Option<MachineLoad>) -> Shortfall {
        self.machine = machine;
        self
    }

    /// The machine's other load held the rate back rather than the side `side` names: tsumo's
    /// busiest thread was runnable but kept off a CPU, or the server (sampled) used less CPU
    /// than others did while requests waited on it.
    fn other_load(&self) -> Option<String> {
        match self.side {
            Side::Generator if self.busiest_thread_cpu < OWN_CPU => {
                let machine = self
                    .machine
                    .filter(MachineLoad::busy)
                    .map_or(String::new(), |m| format!("{}; ", m.words()));
                Some(format!(
                    "{machine}tsumo's busiest worker thread was ready to run {:.0}% of the run \
                     but used {:.0}% of a core: more threads (-t) would not help",
                    self.busiest_thread_runnable * 100.0,
                    self.busiest_thread_cpu * 100.0
                ))
            }
            Side::Server => {
                let m = self.machine.filter(MachineLoad::busy)?;
                let server = m.server_cores?;
                (m.others_cores > server).then(|| {
                    format!(
                        "{} beside the server's {server:.1}, which answered slower for it: \
                         {:.1}% of requests fell due while their connection still waited for \
                         a response (-c {})",
                        m.words(),
                        self.due_while_busy_share * 100.0,
                        self.connections
                    )
                })
            }
            _ => None,
        }
    }

    /// `threads` worker threads hung: whatever else was seen, they held the rate back.
    pub fn blame_hung(&mut self, threads: usize) {
        if threads > 0 {
            self.side = Side::Hung;
            self.hung_threads = threads;
        }
    }

    /// The report's one line.
    pub fn line(&self) -> String {
        let head = format!(
            "Rate not reached: {} of {} requests/sec ({:.1}%)",
            format_metric(self.achieved_rate),
            format_metric(self.target_rate as f64),
            self.share * 100.0
        );
        if let Some(evidence) = self.other_load() {
            return format!("{head}; held back by the machine's other load: {evidence}.");
        }
        let why = match self.side {
            Side::Server => format!(
                "held back by the server or the network: {:.1}% of requests fell due while \
                 their connection still waited for a response{} (-c {})",
                self.due_while_busy_share * 100.0,
                match self.unsent_while_busy {
                    0 => String::new(),
                    1 => ", 1 of them never sent".to_string(),
                    n => format!(", {n} of them never sent"),
                },
                self.connections
            ),
            Side::Connect => format!(
                "held back by the server or the network: connections could not be opened \
                 ({} connect errors)",
                self.connect_errors
            ),
            Side::Generator => format!(
                "held back by tsumo itself: its busiest worker thread never waited for the \
                 network ({:.0}% of the run on or waiting for a CPU, {:.0}% of a core used) and \
                 sent behind schedule (send lateness p99 {}); add threads (-t) or generators",
                self.busiest_thread_runnable * 100.0,
                self.busiest_thread_cpu * 100.0,
                format_time_us(self.send_lateness_p99_us as f64)
            ),
            Side::Late => format!(
                "held back by tsumo itself: {} requests fell due while their connection was \
                 free and were never sent: it fell behind its own schedule (stalled, kept off a \
                 CPU, or a slow script hook), not the server",
                self.unsent_late
            ),
            Side::Hung => format!(
                "held back by tsumo itself: {} worker thread{} hung (a script hook that never \
                 returned) and sent nothing after",
                self.hung_threads,
                if self.hung_threads == 1 { "" } else { "s" }
            ),
        };
        format!("{head}; {why}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 sends, 10 of them due while busy, and 100 more due but never sent because their
    /// connection still waited: 110 of 200 were held back by the server (issue 19: the unsent
    /// were left out, which gave 10%).
    #[test]
    fn the_share_counts_requests_that_were_never_sent() {
        let mut total = Recorder::new();
        for _ in 0..100 {
            total.record_send_lateness(5);
        }
        total.counters.due_while_busy = 10;
        total.counters.unsent.busy = 100;
        total.counters.requests = 100;
        let shortfall = Shortfall::judge(100, 4, &total, Duration::from_secs(2), &[])
            .expect("100 of 200 is a shortfall");
        assert_eq!(shortfall.side, Side::Server);
        assert_eq!(shortfall.due_while_busy_share, 0.55);
        assert_eq!(
            shortfall.line(),
            "Rate not reached: 50.00 of 100.00 requests/sec (50.0%); held back by the server or \
             the network: 55.0% of requests fell due while their connection still waited for a \
             response, 100 of them never sent (-c 4)."
        );
    }

    /// Connections that could not be opened, and most requests never sent for it: the judgement
    /// names the connect side, the never-sent requests counted in the share.
    #[test]
    fn requests_unsent_while_down_weigh_in_the_judgement() {
        let mut total = Recorder::new();
        for _ in 0..100 {
            total.record_send_lateness(5);
        }
        total.counters.due_while_busy = 60;
        total.counters.unsent.connect_failed = 300;
        total.counters.errors.connect = 5;
        total.counters.requests = 100;
        let shortfall =
            Shortfall::judge(100, 4, &total, Duration::from_secs(4), &[]).expect("a shortfall");
        assert_eq!(shortfall.due_while_busy_share, 60.0 / 400.0);
        assert_eq!(shortfall.side, Side::Connect);
    }

    /// Issue 43: the run's last 215 of 2,500 requests never sent while their connection was
    /// free (tsumo stalled at the end) is tsumo's shortfall, never the server's.
    #[test]
    fn requests_tsumo_left_unsent_on_a_free_connection_are_its_own_shortfall() {
        let mut total = Recorder::new();
        for _ in 0..2_285 {
            total.record_send_lateness(5);
        }
        total.counters.requests = 2_285;
        total.counters.unsent.late = 215;
        let idle = [thread(0.2, 0.2)];
        let shortfall =
            Shortfall::judge(500, 10, &total, Duration::from_secs(5), &idle).expect("a shortfall");
        assert_eq!(shortfall.side, Side::Late);
        assert_eq!(shortfall.due_while_busy_share, 0.0);
        assert!(
            shortfall.line().contains(
                "held back by tsumo itself: 215 requests fell due while their connection was \
                 free and were never sent"
            ),
            "{}",
            shortfall.line()
        );
        // Held back by the server (their connection busy), the same count is the server's.
        total.counters.unsent.late = 0;
        total.counters.unsent.busy = 215;
        let shortfall =
            Shortfall::judge(500, 10, &total, Duration::from_secs(5), &idle).expect("a shortfall");
        assert_eq!(shortfall.side, Side::Server);
    }

    fn thread(cpu_seconds: f64, runnable_seconds: f64) -> ThreadUsage {
        ThreadUsage {
            cpu_seconds,
            runnable_seconds,
        }
    }

    const QUIET: MachineLoad = MachineLoad {
        others_cores: 0.1,
        steal_cores: 0.0,
        cores: 2,
        server_cores: Some(0.3),
    };
    const HOGGED: MachineLoad = MachineLoad {
        others_cores: 1.3,
        ..QUIET
    };

    /// Threads are advised only when tsumo's own CPU was the limit; a late send beside other
    /// load names that load, and a stall names neither.
    #[test]
    fn lateness_names_one_cause() {
        let run = Duration::from_secs(10);
        let own = Behind::judge(5000, &[thread(9.5, 9.9)], run, Some(QUIET)).expect("late");
        assert_eq!(own.cause, LateCause::OwnCpu);
        assert!(own.line().contains("add threads (-t)"), "{}", own.line());
        // 2,000 req/s beside a hog on tsumo's core: little CPU, and waits for it.
        let other = Behind::judge(5000, &[thread(0.4, 1.4)], run, Some(HOGGED)).expect("late");
        assert_eq!(other.cause, LateCause::OtherLoad);
        let line = other.line();
        assert!(!line.contains("add threads"), "{line}");
        assert!(
            line.contains(
                "for the machine's other load: other processes used 1.3 of 2 cores; its busiest \
                 worker thread waited for a CPU 10% of the run and used 4% of one"
            ),
            "{line}"
        );
        // Stopped 150 ms a second: neither busy nor waiting.
        let stopped = Behind::judge(150_000, &[thread(0.4, 0.41)], run, Some(QUIET));
        let stopped = stopped.expect("late");
        assert_eq!(stopped.cause, LateCause::Stalled);
        assert!(
            !stopped.line().contains("add threads"),
            "{}",
            stopped.line()
        );
        assert!(Behind::judge(1000, &[thread(9.5, 9.9)], run, None).is_none());
    }

    /// The 50k POST beside two hogs: nginx used 0.4 cores, others 1.3, tsumo was late and the
    /// connections waited. One cause, the machine's load, where it said "held back by the server"
    /// under "tsumo fell behind … add threads (-t)".
    #[test]
    fn a_shortfall_beside_other_load_blames_that_load_alone() {
        let mut total = Recorder::new();
        for _ in 0..100 {
            total.record_send_lateness(1700);
        }
        total.counters.due_while_busy = 100;
        total.counters.requests = 100;
        let hogged = MachineLoad {
            server_cores: Some(0.4),
            ..HOGGED
        };
        let judged = |machine| {
            Shortfall::judge(100, 10, &total, Duration::from_secs(2), &[thread(0.6, 0.8)])
                .expect("a shortfall")
                .with_machine(machine)
                .line()
        };
        let line = judged(Some(hogged));
        assert!(
            line.contains(
                "; held back by the machine's other load: other processes used 1.3 of 2 cores \
                 beside the server's 0.4, which answered slower for it: 100.0% of requests"
            ),
            "{line}"
        );
        assert!(!line.contains("server or the network") && !line.contains("add threads"));
        // A quiet machine: the server held it back.
        let line = judged(Some(QUIET));
        assert!(
            line.contains("held back by the server or the network"),
            "{line}"
        );
        // tsumo's thread ready to run nearly all along but on a core a third of it: not tsumo.
        let line = Shortfall::judge(
            100,
            10,
            &total,
            Duration::from_secs(2),
            &[thread(0.6, 1.95)],
        )
        .map(|s| s.with_machine(Some(HOGGED)).line())
        .expect("a shortfall");
        assert!(
            line.contains("held back by the machine's other load"),
            "{line}"
        );
        assert!(line.contains("more threads (-t) would not help"), "{line}");
    }
}
