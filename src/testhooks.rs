//! Hooks that let the kill-and-rerun tests interrupt the real binary at known points. A leaf:
//! any stage may call them, and they call nothing of the crate.

/// When `COLLECT_TEST_PAUSE_AFTER` names `stage`, stops here until killed.
pub fn pause(stage: &str) {
    if std::env::var("COLLECT_TEST_PAUSE_AFTER").as_deref() == Ok(stage) {
        eprintln!("collect: paused after {stage}");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// `COLLECT_TEST_BATCH`, when set: tests shrink batches to one size, to interrupt between two
/// of them on small inputs.
pub fn batch_size() -> Option<usize> {
    std::env::var("COLLECT_TEST_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
}
