//! The dedup settings: which detector, its parameters and the two thresholds, with their
//! defaults in this one place. The topic file's `dedup` section, the flags of `collect dedup`
//! and `collect eval`, and the header a collection keeps all read into this struct.

use super::Thresholds;
use serde::{Deserialize, Serialize};

/// Detector, parameters and thresholds (docs/method.md §5 gives the reasons for the defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupSettings {
    /// Detector: one of [`super::METHODS`] (docs/methods.md).
    pub method: String,
    /// Words per shingle (`None`: the detector's default, 4; megashingles 5).
    pub shingle: Option<usize>,
    /// Modulus of mod-m.
    pub modulus: u64,
    /// Signature size of min-n.
    pub min_n: usize,
    /// Megashingles: number of min-wise maps.
    pub maps: usize,
    /// Megashingles: number of supershingles (the maps are split evenly among them).
    pub supershingles: usize,
    /// Resemblance at or above which two texts are duplicates.
    pub resemblance: f64,
    /// Containment at or above which a pair goes to the curator's review.
    pub containment: f64,
    /// mod-m: a text with fewer sampled fingerprints than this keeps its full index instead.
    pub min_elements: usize,
    /// infostream: heavy terms (of 12) two documents must share to be duplicates.
    pub agree: usize,
}

impl Default for DedupSettings {
    fn default() -> Self {
        DedupSettings {
            method: "modm".into(),
            shingle: None,
            modulus: 25,
            min_n: 160,
            maps: 84,
            supershingles: 6,
            resemblance: 0.5,
            containment: 0.5,
            min_elements: 8,
            agree: 6,
        }
    }
}

impl DedupSettings {
    /// The two thresholds pairs are judged against.
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            resemblance: self.resemblance,
            containment: self.containment,
        }
    }
}
