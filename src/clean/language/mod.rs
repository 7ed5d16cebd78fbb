//! Language detection: whatlang's decision, computed faster for the Latin and Cyrillic scripts.
//!
//! whatlang scores a text against each language of its script by looking every one of the
//! language's 300 profile trigrams up in the text's ranked trigrams: 36 Latin languages make
//! 10,800 hash lookups a text, and that was a quarter of a build's CPU. Here the profiles of a
//! script are one index from trigram to (language, rank), so a text costs one lookup per
//! trigram it has (at most 600), and the distances come out the same integers. The alphabet
//! half of the score is whatlang's own (`whatlang::dev`), and the two halves are combined,
//! ranked and turned into a confidence as whatlang does, so every decision is whatlang's: the
//! tests compare them with `whatlang::detect` text by text. Other scripts go to whatlang.

mod profiles;

use rustc_hash::FxHashMap;
use std::sync::LazyLock;
use whatlang::dev::{FilterList, LowercaseText, RawAlphabetsInfo};
use whatlang::{Lang, Script};

/// Bytes of a text's start that language detection reads (`examples/language_sample.rs`
/// measures how often a shorter sample changes the decision).
pub const LANGUAGE_SAMPLE_BYTES: usize = 4096;

/// ISO 639-1 code of the text's language (whatlang), or None when unsure.
pub fn detect_language(text: &str) -> Option<String> {
    detect_language_in(text, LANGUAGE_SAMPLE_BYTES)
}

/// [`detect_language`] on the first `sample` bytes (cut back to a character boundary).
pub fn detect_language_in(text: &str, sample: usize) -> Option<String> {
    let (lang, confidence) = detect(sample_of(text, sample))?;
    if confidence < 0.5 {
        return None;
    }
    let code = match lang {
        Lang::Eng => "en",
        Lang::Rus => "ru",
        Lang::Ukr => "uk",
        Lang::Bel => "be",
        Lang::Deu => "de",
        Lang::Fra => "fr",
        Lang::Spa => "es",
        Lang::Ita => "it",
        Lang::Por => "pt",
        Lang::Nld => "nl",
        Lang::Pol => "pl",
        Lang::Ces => "cs",
        Lang::Bul => "bg",
        Lang::Srp => "sr",
        Lang::Tur => "tr",
        Lang::Swe => "sv",
        Lang::Dan => "da",
        Lang::Fin => "fi",
        other => return Some(other.code().to_string()),
    };
    Some(code.to_string())
}

/// The first `bytes` of `text`, cut back to a character boundary: a prefix is enough to
/// identify the language and keeps detection cheap on long texts.
pub fn sample_of(text: &str, bytes: usize) -> &str {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The language and confidence `whatlang::detect` gives the text.
pub fn detect(text: &str) -> Option<(Lang, f64)> {
    let profiles = match whatlang::detect_script(text)? {
        Script::Latin => &*LATIN,
        Script::Cyrillic => &*CYRILLIC,
        _ => return whatlang::detect(text).map(|i| (i.lang(), i.confidence())),
    };
    let lower = LowercaseText::new(text);
    let alphabet = (profiles.alphabet)(&lower, &FilterList::default());
    let trigrams = profiles.scores(&lower);
    combine(&alphabet, &trigrams)
}

/// A profile trigram's distance from the text's trigram of the same rank when the text lacks
/// it, and the most a rank can be off.
const MAX_TRIGRAM_DISTANCE: u32 = 300;
/// The text trigrams ranked (whatlang keeps twice the distance).
const TEXT_TRIGRAMS: usize = 600;

/// One script's profiles, indexed by trigram.
struct Profiles {
    langs: Vec<Lang>,
    /// Each trigram's (language, rank in that language's profile) entries.
    index: FxHashMap<u64, Vec<(u16, u16)>>,
    /// The profile lengths: a language's distance starts from one full miss per trigram.
    lengths: Vec<u32>,
    alphabet: fn(&LowercaseText, &FilterList) -> RawAlphabetsInfo,
}

static LATIN: LazyLock<Profiles> = LazyLock::new(|| {
    Profiles::new(
        profiles::LATIN,
        whatlang::dev::alphabet_latin_calculate_scores,
    )
});
static CYRILLIC: LazyLock<Profiles> = LazyLock::new(|| {
    Profiles::new(
        profiles::CYRILLIC,
        whatlang::dev::alphabet_cyrillic_calculate_scores,
    )
});

/// Three chars in one number that orders as the chars do (a char is below 2^21).
fn trigram(a: char, b: char, c: char) -> u64 {
    (a as u64) << 42 | (b as u64) << 21 | c as u64
}

/// whatlang turns punctuation, digits and ASCII symbols into spaces.
fn is_stop_char(ch: char) -> bool {
    matches!(ch, '\u{0000}'..='\u{0040}' | '\u{005B}'..='\u{0060}' | '\u{007B}'..='\u{007E}')
}

impl Profiles {
    fn new(
        list: &[(Lang, &str)],
        alphabet: fn(&LowercaseText, &FilterList) -> RawAlphabetsInfo,
    ) -> Self {
        let mut index: FxHashMap<u64, Vec<(u16, u16)>> = FxHashMap::default();
        let mut lengths = Vec::with_capacity(list.len());
        for (l, (_, profile)) in list.iter().enumerate() {
            let chars: Vec<char> = profile.chars().collect();
            for (rank, t) in chars.chunks_exact(3).enumerate() {
                index
                    .entry(trigram(t[0], t[1], t[2]))
                    .or_default()
                    .push((l as u16, rank as u16));
            }
            lengths.push((chars.len() / 3) as u32);
        }
        Profiles {
            langs: list.iter().map(|(l, _)| *l).collect(),
            index,
            lengths,
            alphabet,
        }
    }

    /// whatlang's trigram scores of the text: languages by distance, nearest first, with the
    /// count of distinct trigrams in the text.
    fn scores(&self, lower: &str) -> (Vec<(Lang, f64)>, usize) {
        let mut counts: FxHashMap<u64, u32> =
            FxHashMap::with_capacity_and_hasher(lower.len().min(2048), Default::default());
        let mut chars = lower
            .chars()
            .map(|c| if is_stop_char(c) { ' ' } else { c })
            .chain(Some(' '));
        let mut c1 = ' ';
        let Some(mut c2) = chars.next() else {
            return (Vec::new(), 0);
        };
        for c3 in chars {
            if !(c2 == ' ' && (c1 == ' ' || c3 == ' ')) {
                *counts.entry(trigram(c1, c2, c3)).or_insert(0) += 1;
            }
            c1 = c2;
            c2 = c3;
        }
        // Ranked by count, then by trigram, both descending, as whatlang ranks them.
        let mut ranked: Vec<(u32, u64)> = counts.into_iter().map(|(t, n)| (n, t)).collect();
        ranked.sort_unstable_by(|a, b| b.cmp(a));
        ranked.truncate(TEXT_TRIGRAMS);
        let count = ranked.len() as u32;
        // A language's distance is the sum over its profile of |text rank − profile rank|, or
        // MAX for a trigram the text lacks: the full-miss total less what each match saves.
        // A match ranked far down the text "saves" less than nothing: its distance can pass MAX.
        let mut saved = vec![0i64; self.langs.len()];
        for (rank, (_, t)) in ranked.iter().enumerate() {
            if let Some(entries) = self.index.get(t) {
                for &(l, profile_rank) in entries {
                    let off = (rank as i64 - profile_rank as i64).abs();
                    saved[l as usize] += MAX_TRIGRAM_DISTANCE as i64 - off;
                }
            }
        }
        let max_total = (MAX_TRIGRAM_DISTANCE * MAX_TRIGRAM_DISTANCE) as i64;
        let mut distances: Vec<(Lang, u32)> = self
            .langs
            .iter()
            .zip(&self.lengths)
            .zip(&saved)
            .map(|((&lang, &len), &saved)| {
                let mut total = (len * MAX_TRIGRAM_DISTANCE) as i64 - saved;
                if MAX_TRIGRAM_DISTANCE > count {
                    total -= ((MAX_TRIGRAM_DISTANCE - count) * MAX_TRIGRAM_DISTANCE) as i64;
                }
                (lang, total.clamp(0, max_total) as u32)
            })
            .collect();
        distances.sort_unstable_by_key(|(_, d)| *d);
        let max = (count * MAX_TRIGRAM_DISTANCE) as i64;
        let scores = distances
            .into_iter()
            .map(|(lang, d)| (lang, (max - d as i64) as f64 / max as f64))
            .collect();
        (scores, count as usize)
    }
}

/// whatlang's combination of the alphabet and trigram scores: the top language and the
/// confidence from its lead over the second.
fn combine(
    alphabet: &RawAlphabetsInfo,
    trigrams: &(Vec<(Lang, f64)>, usize),
) -> Option<(Lang, f64)> {
    let (trigram_scores, trigram_count) = trigrams;
    let mut langs: Vec<Lang> = alphabet.scores.iter().map(|x| x.0).collect();
    for (lang, _) in trigram_scores {
        if !langs.contains(lang) {
            langs.push(*lang);
        }
    }
    // The longer the text, the less its alphabet weighs.
    let alphabet_weight =
        (-(alphabet.count as f64 / 300.0) + 2.0 / 3.0).clamp(1.0 / 3.0, 2.0 / 3.0);
    let trigram_weight = 1.0 - alphabet_weight;
    let score_in = |scores: &[(Lang, f64)], lang: Lang| {
        scores.iter().find(|(l, _)| *l == lang).map_or(0.0, |x| x.1)
    };
    let mut scores: Vec<(Lang, f64)> = langs
        .into_iter()
        .map(|lang| {
            let a = score_in(&alphabet.scores, lang);
            let t = score_in(trigram_scores, lang);
            (lang, a * alphabet_weight + t * trigram_weight)
        })
        .collect();
    scores.sort_unstable_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Less));
    let &(lang1, score1) = scores.first()?;
    let confidence = match scores.get(1) {
        Some(&(_, score2)) => confidence(score1, score2, *trigram_count),
        None => 1.0,
    };
    Some((lang1, confidence))
}

/// whatlang's confidence that the top score's language is right, from its lead over the second.
fn confidence(highest: f64, second: f64, count: usize) -> f64 {
    if highest == 0.0 {
        return 0.0;
    }
    if second == 0.0 {
        return highest;
    }
    let confident_rate = (3.0 / count as f64) + 0.015;
    let rate = (highest - second) / second;
    if rate > confident_rate {
        1.0
    } else {
        rate / confident_rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_russian_and_english() {
        let ru = "Немецкая овчарка — порода собак, первоначально использовавшаяся в качестве пастушьей и служебно-розыскной собаки.";
        let en = "The German Shepherd is a breed of working dog of medium to large size, originally used for herding sheep.";
        assert_eq!(detect_language(ru).as_deref(), Some("ru"));
        assert_eq!(detect_language(en).as_deref(), Some("en"));
    }

    fn whatlang_says(text: &str) -> Option<(Lang, u64)> {
        whatlang::detect(text).map(|i| (i.lang(), i.confidence().to_bits()))
    }

    fn we_say(text: &str) -> Option<(Lang, u64)> {
        detect(text).map(|(l, c)| (l, c.to_bits()))
    }

    /// Deterministic pseudo-random numbers (xorshift), so a failure names a text that reproduces.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Words made of a language's profile trigrams, picked with a bias to its frequent ones.
    fn text_of(profile: &str, chars: usize, rng: &mut Rng) -> String {
        let trigrams: Vec<&str> = {
            let cs: Vec<(usize, char)> = profile.char_indices().collect();
            cs.chunks_exact(3)
                .map(|t| {
                    let end = t[2].0 + t[2].1.len_utf8();
                    &profile[t[0].0..end]
                })
                .collect()
        };
        let mut out = String::new();
        while out.chars().count() < chars {
            let pick = rng.below(trigrams.len()).min(rng.below(trigrams.len()));
            out.push_str(trigrams[pick]);
            if rng.below(3) == 0 {
                out.push(' ');
            }
        }
        out
    }

    #[test]
    fn decides_as_whatlang_on_texts_of_every_profile_and_their_mixes() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let all: Vec<&(Lang, &str)> = profiles::LATIN.iter().chain(profiles::CYRILLIC).collect();
        let mut checked = 0;
        for (i, (_, profile)) in all.iter().enumerate() {
            for chars in [3, 12, 40, 150, 600, 2500] {
                let own = text_of(profile, chars, &mut rng);
                let (_, other) = all[(i + 1 + rng.below(all.len() - 1)) % all.len()];
                let mixed = format!("{own} {}", text_of(other, chars / 2 + 1, &mut rng));
                for text in [own, mixed] {
                    assert_eq!(we_say(&text), whatlang_says(&text), "{text:?}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, all.len() * 12);
    }

    #[test]
    fn decides_as_whatlang_on_noise_of_letters_digits_and_punctuation() {
        let alphabet: Vec<char> =
            "abcdefghijklmnopqrstuvwxyzäöüßéèàçñøåłśżąęčšžőűığşабвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў0123456789 .,;:!?-()'\"\n  "
                .chars()
                .collect();
        let mut rng = Rng(42);
        for n in 0..600 {
            let len = 1 + rng.below(if n % 10 == 0 { 5000 } else { 300 });
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            assert_eq!(we_say(&text), whatlang_says(&text), "{text:?}");
        }
    }

    #[test]
    fn decides_as_whatlang_on_sentences_and_other_scripts() {
        for text in [
            "Der Deutsche Schäferhund ist eine von der FCI anerkannte deutsche Hunderasse.",
            "Le berger allemand est une race de chien originaire d'Allemagne.",
            "El pastor alemán es una raza canina que proviene de Alemania.",
            "Німецька вівчарка — порода собак, виведена в Німеччині.",
            "Нямецкая аўчарка — парода сабак.",
            "Немска овчарка е порода кучета, произхождаща от Германия.",
            "Owczarek niemiecki – rasa psa, wyhodowana w Niemczech.",
            "Ο γερμανικός ποιμενικός είναι φυλή σκύλου.",
            "ジャーマン・シェパード・ドッグは犬の品種である。",
            "德国牧羊犬是一种犬种。",
            "הרועה הגרמני הוא גזע כלבים.",
            "जर्मन शेपर्ड कुत्ते की एक नस्ल है।",
            "الراعي الألماني هو سلالة من الكلاب.",
            "a",
            "--- 123 ---",
            "ab cd",
        ] {
            assert_eq!(we_say(text), whatlang_says(text), "{text:?}");
        }
    }

    #[test]
    fn profiles_are_those_of_the_whatlang_in_the_lock_file() {
        let lock = include_str!("../../../Cargo.lock");
        let at = lock
            .find("name = \"whatlang\"\nversion = \"")
            .expect("whatlang in Cargo.lock");
        let version = lock[at..].lines().nth(1).unwrap_or_default();
        assert_eq!(
            version,
            format!("version = \"{}\"", profiles::WHATLANG_VERSION),
            "rerun scripts/language_profiles.py"
        );
    }
}
