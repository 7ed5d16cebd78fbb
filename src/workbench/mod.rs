//! The method workbench: compares detectors on labelled pairs (`collect eval`), trains the
//! learned detector and describes a detector's duplicate relation (`collect stats --relation`).
//! Research, not collection building: nothing here writes a collection.

pub mod eval;
pub mod learned;
pub mod relation;
pub mod relevance;
