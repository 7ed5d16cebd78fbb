//! Progress bars on a terminal, plain warnings everywhere.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Progress reporting for one command. Everything goes to stderr, so stdout stays what a
/// script reads (`--json`).
#[derive(Clone)]
pub struct Progress {
    bars: bool,
    lines: bool,
}

impl Progress {
    /// Bars only when asked for and stderr is a terminal; stage lines whenever asked for (also
    /// in logs, where bars are not drawn); warnings always.
    pub fn new(wanted: bool) -> Progress {
        Progress {
            bars: wanted && std::io::stderr().is_terminal(),
            lines: wanted,
        }
    }

    /// The one line a finished stage leaves: what it did, how long it took, and its rate when
    /// it counted `items`.
    pub fn stage(&self, name: &str, what: &str, started: std::time::Instant, items: Option<u64>) {
        if !self.lines {
            return;
        }
        let secs = started.elapsed().as_secs_f64();
        let rate = match items {
            Some(n) if secs >= 0.05 && n > 0 => format!(", {:.0}/s", n as f64 / secs),
            _ => String::new(),
        };
        eprintln!("{name}: {what} [{secs:.1} s{rate}]");
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
