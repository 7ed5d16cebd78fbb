//! A0, MD5: the hash of the whole preprocessed text; finds exact duplicates only.

use super::stats::long_words;
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use md5::{Digest, Md5 as Md5Hasher};

/// One key: the first 8 bytes of MD5 over the long canonical words joined by spaces.
#[derive(Debug, Clone, Copy, Default)]
pub struct Md5;

impl Detector for Md5 {
    fn name(&self) -> &'static str {
        "md5"
    }

    fn key(&self) -> String {
        "md5".into()
    }

    fn shingle(&self) -> usize {
        4
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        let words = long_words(text);
        if words.is_empty() {
            return Vec::new();
        }
        let digest = Md5Hasher::digest(words.join(" ").as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        vec![u64::from_be_bytes(first)]
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn key_is_md5_of_preprocessed_text() {
        // "a", "is" and "the" are dropped (three letters or fewer); punctuation and case too.
        let sig = Md5.sign(&canon("The cat, a CAT is sleeping."));
        // "cat" has 3 letters, so only "sleeping" is left; `printf sleeping | md5sum` gives
        // d98cb5df35fc9e0f42fb883d794ad12f, whose first 8 bytes are the key.
        assert_eq!(sig, vec![0xd98c_b5df_35fc_9e0f]);
        assert_eq!(sig, Md5.sign(&canon("sleeping!")));
        assert_ne!(sig, Md5.sign(&canon("sleeping dogs")));
    }
}
