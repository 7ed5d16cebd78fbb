//! Progress bars on a terminal, plain warnings everywhere.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Progress reporting for one command.
#[derive(Clone)]
pub struct Progress {
    bars: bool,
}

impl Progress {
    /// Bars only when asked for and stderr is a terminal; warnings always go to stderr.
    pub fn new(wanted: bool) -> Progress {
        Progress {
            bars: wanted && std::io::stderr().is_terminal(),
        }
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
