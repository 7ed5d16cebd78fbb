//! Progress bars on a terminal, plain warnings everywhere.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Progress reporting for one command. Everything goes to stderr, so stdout stays what a
/// script reads (`--json`).
#[derive(Clone)]
pub struct Progress {
    bars: bool,
    lines: bool,
    /// Every finished stage's times, shown or not: `--json` reports them.
    stages: Arc<Mutex<Vec<StageTime>>>,
}

/// When a stage started, on the wall clock and in the CPU time of the whole process, so that
/// a stage's CPU/wall says how many cores it kept busy.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Started {
    /// Now.
    pub fn now() -> Started {
        Started {
            wall: Instant::now(),
            cpu: process_cpu(),
        }
    }

    /// Wall seconds since the start.
    pub fn secs(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }
}

/// A finished stage: its name, wall seconds, and the CPU seconds (user + system) of all the
/// process's threads in that time, when the system tells them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StageTime {
    /// The stage's name, as its line on stderr starts.
    pub stage: String,
    /// Wall-clock seconds.
    pub secs: f64,
    /// CPU seconds of the process's threads over the stage.
    pub cpu_secs: Option<f64>,
}

/// The user + system CPU time of all the process's threads so far.
fn process_cpu() -> Option<Duration> {
    // SAFETY: getrusage only writes the struct it is given, which is plain data.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return None;
        }
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

impl Progress {
    /// Bars only when asked for and stderr is a terminal; stage lines whenever asked for (also
    /// in logs, where bars are not drawn); warnings always.
    pub fn new(wanted: bool) -> Progress {
        Progress {
            bars: wanted && std::io::stderr().is_terminal(),
            lines: wanted,
            stages: Arc::default(),
        }
    }

    /// The stages finished so far, in order.
    pub fn stage_times(&self) -> Vec<StageTime> {
        self.stages.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The one line a finished stage leaves: what it did, how long it took, its rate when it
    /// counted `items`, and the cores it kept busy (CPU time over wall time, for stages long
    /// enough to say).
    pub fn stage(&self, name: &str, what: &str, started: Started, items: Option<u64>) {
        let secs = started.secs();
        let cpu_secs = started
            .cpu
            .zip(process_cpu())
            .map(|(from, to)| to.saturating_sub(from).as_secs_f64());
        if let Ok(mut stages) = self.stages.lock() {
            stages.push(StageTime {
                stage: name.to_string(),
                secs,
                cpu_secs,
            });
        }
        if !self.lines {
            return;
        }
        let rate = match items {
            Some(n) if secs >= 0.05 && n > 0 => format!(", {:.0}/s", n as f64 / secs),
            _ => String::new(),
        };
        let cores = match cpu_secs {
            Some(cpu) if secs >= 0.05 => format!(", CPU/wall {:.2}", cpu / secs),
            _ => String::new(),
        };
        eprintln!("{name}: {what} [{secs:.1} s{rate}{cores}]");
    }

    /// A counter of items without a known total.
    pub fn counter(&self, label: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}: {pos} [{elapsed}] {per_sec}")
                .expect("valid template"),
        );
        bar.set_message(label.to_string());
        bar
    }

    /// A bar over `total` items.
    pub fn bar(&self, label: &str, total: u64) -> ProgressBar {
        if !self.bars {
            return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg}: {wide_bar} {pos}/{len} [{elapsed}<{eta}]")
                .expect("valid template"),
        );
        bar.set_message(label.to_string());
        bar
    }

    /// Prints a warning without breaking a bar that is being drawn.
    pub fn warn(&self, message: &str) {
        eprintln!("warning: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quiet or not, a stage is recorded with its wall time and the CPU time it took.
    #[test]
    fn stages_are_recorded_with_their_cpu_time() {
        let progress = Progress::new(false);
        let started = Started::now();
        let from = process_cpu().expect("getrusage works on this system");
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut spin = 0u64;
        while process_cpu().unwrap() < from + Duration::from_millis(30) && Instant::now() < deadline
        {
            spin = std::hint::black_box(spin.wrapping_mul(31).wrapping_add(7));
        }
        progress.stage("busy", "", started, None);
        let waited = Started::now();
        std::thread::sleep(Duration::from_millis(50));
        progress.stage("idle", "", waited, None);

        let stages = progress.stage_times();
        assert_eq!(stages.len(), 2);
        assert_eq!(stages[0].stage, "busy");
        assert!(stages[0].cpu_secs.unwrap() >= 0.03, "{stages:?}");
        assert!(stages[1].secs >= 0.05, "{stages:?}");
    }
}
