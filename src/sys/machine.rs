//! The whole machine's CPU from `/proc/stat`, read before and after a capacity step: how many
//! cores were busy and how much the hypervisor stole, so that a step run while the machine was
//! busy can say so (issue 30).

use std::time::Instant;

/// The aggregate `cpu` line's counters at one instant.
#[derive(Debug, Clone, Copy)]
pub struct MachineStat {
    at: Instant,
    /// Ticks spent busy (user, nice, system, irq, softirq), steal apart.
    busy: u64,
    steal: u64,
    cores: usize,
}

/// What the machine did between two readings, in cores (1.0: one core the whole time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineUse {
    pub busy_cores: f64,
    pub steal_cores: f64,
    pub cores: usize,
}

/// `(busy, steal)` ticks of `/proc/stat`'s first line, and the number of `cpuN` lines.
pub fn parse(text: &str) -> Option<(u64, u64, usize)> {
    let first = text.lines().next()?;
    let mut fields = first.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let n: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
    let at = |i: usize| n.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user).
    let busy = at(0) + at(1) + at(2) + at(5) + at(6);
    let cores = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some((busy, at(7), cores.max(1)))
}

impl MachineStat {
    /// Now; `None` where `/proc/stat` cannot be read.
    pub fn read() -> Option<MachineStat> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let (busy, steal, cores) = parse(&text)?;
        Some(MachineStat {
            at: Instant::now(),
            busy,
            steal,
            cores,
        })
    }

    /// From this reading to now.
    pub fn since(&self) -> Option<MachineUse> {
        let now = MachineStat::read()?;
        let seconds = now.at.duration_since(self.at).as_secs_f64();
        if seconds <= 0.0 {
            return None;
        }
        let ticks = crate::sys::procstat::clock_ticks();
        let cores = |ticks_used: u64| ticks_used as f64 / ticks / seconds;
        Some(MachineUse {
            busy_cores: cores(now.busy.saturating_sub(self.busy)),
            steal_cores: cores(now.steal.saturating_sub(self.steal)),
            cores: now.cores,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_is_read() {
        let text = "cpu  100 5 50 1000 7 3 2 40 0 0\ncpu0 50 2 25 500 3 1 1 20 0 0\n\
                    cpu1 50 3 25 500 4 2 1 20 0 0\nintr 1 2 3\n";
        assert_eq!(parse(text), Some((160, 40, 2)));
        assert_eq!(parse("intr 1\n"), None);
    }
}
