//! A1, TF: CRC32 of the 6 most frequent words of the document, alphabetised.

use super::stats::{long_words, term_counts, top_words_key};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;

/// One key from the `k` highest-tf long words (ties broken alphabetically).
#[derive(Debug, Clone, Copy)]
pub struct Tf {
    k: usize,
}

impl Default for Tf {
    fn default() -> Self {
        Tf { k: 6 }
    }
}

impl Detector for Tf {
    fn name(&self) -> &'static str {
        "tf"
    }

    fn key(&self) -> String {
        format!("tf:k={}", self.k)
    }

    fn shingle(&self) -> usize {
        4
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let words = long_words(text);
        let weighted = term_counts(&words)
            .into_iter()
            .map(|(_, w, tf)| (tf as f64, w))
            .collect();
        top_words_key(weighted, self.k).into_iter().collect()
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn key_is_crc_of_six_top_words() {
        // tf: zebra 4, apple 3, mango 3, kiwi 2, lemon 2, grape 2, peach 1, plum 1; "fig" has
        // three letters and is dropped however often it occurs.
        let text = "zebra zebra zebra zebra apple apple apple mango mango mango \
                    kiwi kiwi lemon lemon grape grape peach plum fig fig fig fig fig";
        let sig = Tf::default().sign(&canon(text));
        let hand = crc32fast::hash(b"apple grape kiwi lemon mango zebra") as u64;
        assert_eq!(sig, vec![hand]);
        // Word order does not matter, counts do.
        let shuffled = "apple mango zebra kiwi apple zebra mango lemon grape zebra apple \
                        mango zebra kiwi lemon grape plum";
        assert_eq!(Tf::default().sign(&canon(shuffled)), vec![hand]);
    }
}
