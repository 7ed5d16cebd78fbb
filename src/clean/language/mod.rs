//! Language detection: whatlang's decision, computed faster for the Latin and Cyrillic scripts.
//!
//! whatlang scores a text against each language of its script by looking every one of the
//! language's 300 profile trigrams up in the text's ranked trigrams: 36 Latin languages make
//! 10,800 hash lookups a text, and that was a quarter of a build's CPU. Here the profiles of a
//! script are one index from trigram to a row of its ranks, a lane per language, so a text
//! costs one lookup and one row added to all languages' sums at once per trigram it has (at
//! most 600; a table read, not a hash, for trigrams of spaces and a–z), and the distances come
//! out the same integers. The script, the
//! alphabet scores and the text's trigrams are counted as whatlang counts them, with ASCII
//! chars tallied in tables instead of searched and hashed one by one; the two halves of the
//! score are combined, ranked and turned into a confidence as whatlang does, so every decision
//! is whatlang's: the tests compare them with `whatlang::detect` text by text, and the alphabet
//! scores with `whatlang::dev`'s. Other scripts go to whatlang.

mod profiles;

use rustc_hash::FxHashMap;
use std::sync::LazyLock;
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
    let chars = Chars::of(text);
    let profiles = match main_script_of(&chars, text)? {
        Script::Latin => &*LATIN,
        Script::Cyrillic => &*CYRILLIC,
        _ => return whatlang::detect(text).map(|i| (i.lang(), i.confidence())),
    };
    // The trigrams are counted in the text itself, each char lower-cased as it is read, where
    // every char beyond ASCII has a lower case of one char that does not depend on its
    // neighbours (capital sigma's does): a lower-cased copy of the sample was a tenth of
    // detection. The lower-cased text's chars come from the text's, without a pass over it
    // (the chars beyond ASCII are few, and searched instead of the text).
    let (lower_chars, trigrams) = match chars.lowercased() {
        (lower_chars, true) => (lower_chars, profiles.scores(text)),
        _ => {
            let lower = lowercase(text);
            (Chars::of(&lower), profiles.scores(&lower))
        }
    };
    let alphabet = profiles.alphabets.scores_of(&lower_chars);
    combine(&alphabet, &trigrams)
}

/// Whether `ch`'s lower case, `lower`, is one char and the same wherever `ch` stands: for
/// every char but capital sigma and those whose lower case is longer (İ).
fn lowers_alone(ch: char, lower: &std::char::ToLowercase) -> bool {
    ch != '\u{03A3}' && lower.len() == 1
}

/// The lower case of a char for which [`lowers_alone`] holds.
fn lower_char(ch: char) -> char {
    ch.to_lowercase().next().unwrap_or(ch)
}

/// A char beyond ASCII, lower-cased, as trigram counting reads it: with its code where its
/// lower case is ASCII (the Kelvin sign's is `k`).
fn coded_beyond(ch: char) -> (char, u8) {
    let lower = lower_char(ch);
    if lower.is_ascii() {
        coded_ascii(lower as u8)
    } else {
        (lower, NO_CODE)
    }
}

/// An ASCII byte, lower-cased, as trigram counting reads it: stop chars as spaces.
fn coded_ascii(b: u8) -> (char, u8) {
    match CODES[usize::from(b)] {
        NO_CODE => (b as char, NO_CODE),
        k => (decode(usize::from(k)), k),
    }
}

/// A text's chars as detection counts them: how often each ASCII byte occurs, and the others
/// in order.
struct Chars {
    ascii: [u32; 128],
    beyond: Vec<char>,
}

impl Chars {
    fn of(text: &str) -> Self {
        let mut beyond = Vec::new();
        let ascii = ascii_histogram(text, |ch| beyond.push(ch));
        Chars { ascii, beyond }
    }

    /// The chars of the text lower-cased a char at a time, as `str::to_lowercase` does for
    /// every char but capital sigma.
    /// Also whether [`lowers_alone`] holds for every char, told by the same lower-casing.
    fn lowercased(&self) -> (Self, bool) {
        let mut ascii = self.ascii;
        for upper in b'A'..=b'Z' {
            let n = std::mem::take(&mut ascii[usize::from(upper)]);
            ascii[usize::from(upper.to_ascii_lowercase())] += n;
        }
        let mut beyond = Vec::with_capacity(self.beyond.len());
        let mut alone = true;
        for &ch in &self.beyond {
            let lower = ch.to_lowercase();
            alone &= lowers_alone(ch, &lower);
            for lower in lower {
                match u8::try_from(lower).ok().filter(u8::is_ascii) {
                    Some(b) => ascii[usize::from(b)] += 1,
                    None => beyond.push(lower),
                }
            }
        }
        (Chars { ascii, beyond }, alone)
    }
}

/// `text.to_lowercase()`, which is what whatlang's `LowercaseText` calls, with the runs of
/// ASCII between other chars lower-cased whole: the standard library does that only for the
/// ASCII before the first other char, and web text has curly quotes and dashes early on.
/// Capital sigma is the one char whose lower case depends on its neighbours, so a text with
/// one is left to the standard library.
fn lowercase(text: &str) -> String {
    if text.contains('\u{03A3}') {
        return text.to_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let (run, after) = rest.split_at(ascii);
        let from = out.len();
        out.push_str(run);
        out[from..].make_ascii_lowercase();
        let mut chars = after.chars();
        if let Some(c) = chars.next() {
            out.extend(c.to_lowercase());
        }
        rest = chars.as_str();
    }
    out
}

/// whatlang's main script of the text. whatlang counts each letter under the first script
/// that claims it and ranks the counts with an unstable sort; when Latin (or Cyrillic) letters
/// outnumber all other letters together, no script can tie them and the answer is theirs
/// whatever whatlang's order. Any other text goes to whatlang. The ranges are whatlang's, and
/// no other script of its list claims a char in them.
#[cfg(test)]
fn main_script(text: &str) -> Option<Script> {
    main_script_of(&Chars::of(text), text)
}

/// [`main_script`] of the text whose chars are `chars`.
fn main_script_of(chars: &Chars, text: &str) -> Option<Script> {
    let (mut cyrillic, mut other) = (0usize, 0usize);
    let mut latin_beyond_ascii = 0usize;
    for &ch in &chars.beyond {
        match ch as u32 {
            0x80..=0x2AF => latin_beyond_ascii += 1,
            0x400..=0x484 | 0x487..=0x52F => cyrillic += 1,
            _ => other += 1,
        }
    }
    let ascii = &chars.ascii;
    let letters = |range: std::ops::RangeInclusive<u8>| -> usize {
        range.map(|b| ascii[b as usize] as usize).sum()
    };
    let latin = latin_beyond_ascii + letters(b'a'..=b'z') + letters(b'A'..=b'Z');
    // DEL is the one ASCII char that is neither a stop char nor a letter.
    other += ascii[0x7F] as usize;
    if latin > cyrillic + other {
        Some(Script::Latin)
    } else if cyrillic > latin + other {
        Some(Script::Cyrillic)
    } else {
        whatlang::detect_script(text)
    }
}

/// A profile trigram's distance from the text's trigram of the same rank when the text lacks
/// it, and the most a rank can be off.
const MAX_TRIGRAM_DISTANCE: u32 = 300;
/// The text trigrams ranked (whatlang keeps twice the distance).
const TEXT_TRIGRAMS: usize = 600;

/// Room for every language by its number (`Lang as usize`; whatlang 0.16 has 70).
const LANG_SLOTS: usize = 128;

/// Room for a script's languages (whatlang's Latin script has 36): a profile row's lanes, in
/// whole vectors of 16.
const MAX_LANGS: usize = 48;

/// One script's profiles, indexed by trigram.
struct Profiles {
    langs: Vec<Lang>,
    /// Each profile trigram's row: its rank in each language's profile, lane by language
    /// ([`NOT_IN_PROFILE`] where the language lacks it). A text's trigram adds its row to the
    /// scores all lanes at once ([`add_rows`]); a list of (language, rank) entries per trigram
    /// was a loop of varying length for each of the text's 600 trigrams (a quarter of detection).
    rows: Vec<Row>,
    /// The row of each trigram of spaces and a–z, by its table slot (no hash to compute for
    /// nearly every trigram of a Latin text; [`NO_ROW`] for one in no profile); of any other,
    /// its row in `index`.
    coded_rows: Vec<u16>,
    index: FxHashMap<u64, u16>,
    /// The profile lengths: a language's distance starts from one full miss per trigram.
    lengths: Vec<u32>,
    alphabets: Alphabets,
}

/// A profile trigram's ranks, a lane per language of the script.
type Row = [i16; MAX_LANGS];

/// A lane's rank where the language's profile lacks the trigram: far enough from every text
/// rank that no sum of ranks reaches it.
const NOT_IN_PROFILE: i16 = -10_000;

/// A trigram of spaces and a–z that no profile has.
const NO_ROW: u16 = u16::MAX;

static LATIN: LazyLock<Profiles> = LazyLock::new(|| {
    Profiles::new(
        profiles::LATIN,
        Alphabets::new(Script::Latin, profiles::LATIN_ALPHABETS),
    )
});
static CYRILLIC: LazyLock<Profiles> = LazyLock::new(|| {
    Profiles::new(
        profiles::CYRILLIC,
        Alphabets::new(Script::Cyrillic, profiles::CYRILLIC_ALPHABETS),
    )
});

/// Three chars in one number that orders as the chars do (a char is below 2^21).
fn trigram(a: char, b: char, c: char) -> u64 {
    wide_of([a as u64, b as u64, c as u64])
}

/// Three chars' numbers as a [`trigram`].
fn wide_of([a, b, c]: [u64; 3]) -> u64 {
    a << 42 | b << 21 | c
}

/// whatlang turns punctuation, digits and ASCII symbols into spaces.
fn is_stop_char(ch: char) -> bool {
    matches!(ch, '\u{0000}'..='\u{0040}' | '\u{005B}'..='\u{0060}' | '\u{007B}'..='\u{007E}')
}

/// How often each ASCII byte occurs in the text; every other char goes to `beyond`. Nearly
/// every char of an English text is ASCII: eight bytes that are all ASCII are counted at once,
/// into four tables, so that a byte's count does not wait on the count of an equal byte just
/// before it (one table and a byte at a time was a tenth of detection).
fn ascii_histogram(text: &str, mut beyond: impl FnMut(char)) -> [u32; 128] {
    let mut tables = [[0u32; 128]; 4];
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(eight) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(eight.try_into().unwrap_or_default());
            if word & 0x8080_8080_8080_8080 == 0 {
                for (i, &b) in eight.iter().enumerate() {
                    tables[i % 4][usize::from(b) % 128] += 1;
                }
                at += 8;
                continue;
            }
        }
        let b = bytes[at];
        if b < 0x80 {
            tables[0][usize::from(b)] += 1;
            at += 1;
        } else if let Some(ch) = text[at..].chars().next() {
            beyond(ch);
            at += ch.len_utf8();
        }
    }
    let mut counts = tables[0];
    for table in &tables[1..] {
        for (sum, &n) in counts.iter_mut().zip(table) {
            *sum += n;
        }
    }
    counts
}

/// A script's alphabets as whatlang scores a text by them: for each letter of the text, +1 to
/// every language whose alphabet has it and −1 to the others, floored at 0, over the count of
/// letters.
struct Alphabets {
    /// The script's languages in whatlang's order (`Script::langs`): ties keep that order.
    langs: Vec<Lang>,
    /// Every char of some alphabet, sorted.
    chars: Vec<char>,
    /// For each of `chars`, the positions in `langs` of the alphabets that have it, once per
    /// time an alphabet lists it (whatlang counts a char listed twice twice).
    langs_of: Vec<Vec<u8>>,
    /// For each char below [`DIRECT_CHARS`], its position in `chars` or [`NOT_A_LETTER`]:
    /// the letters of Latin and Cyrillic texts are found without a search.
    direct: Vec<u16>,
}

/// Chars looked up in a table rather than searched for (Latin to IPA, Greek, Cyrillic).
const DIRECT_CHARS: usize = 0x530;
/// A char of no alphabet.
const NOT_A_LETTER: u16 = u16::MAX;

/// whatlang's alphabet scores of a text: languages by score, highest first, and the count of
/// letters they are scored over.
struct AlphabetScores {
    scores: Vec<(Lang, f64)>,
    count: usize,
}

impl Alphabets {
    fn new(script: Script, alphabets: &[(Lang, &str)]) -> Self {
        let langs = script.langs().to_vec();
        let mut of: std::collections::BTreeMap<char, Vec<u8>> = Default::default();
        for (lang, alphabet) in alphabets {
            let Some(at) = langs.iter().position(|l| l == lang) else {
                continue;
            };
            for ch in alphabet.chars() {
                of.entry(ch).or_default().push(at as u8);
            }
        }
        let (chars, langs_of): (Vec<char>, Vec<Vec<u8>>) = of.into_iter().unzip();
        let mut direct = vec![NOT_A_LETTER; DIRECT_CHARS];
        for (at, &ch) in chars.iter().enumerate() {
            if let Some(slot) = direct.get_mut(ch as usize) {
                *slot = at as u16;
            }
        }
        Alphabets {
            langs,
            chars,
            langs_of,
            direct,
        }
    }

    fn position(&self, ch: char) -> Option<usize> {
        match self.direct.get(ch as usize) {
            Some(&NOT_A_LETTER) => None,
            Some(&at) => Some(at as usize),
            None => self.chars.binary_search(&ch).ok(),
        }
    }

    #[cfg(test)]
    fn scores(&self, lower: &str) -> AlphabetScores {
        self.scores_of(&Chars::of(lower))
    }

    /// The scores of the lower-cased text whose chars are `lower`.
    fn scores_of(&self, lower: &Chars) -> AlphabetScores {
        let mut seen = vec![0usize; self.chars.len()];
        // No char beyond ASCII is a stop char.
        let mut count = lower.beyond.len();
        for &ch in &lower.beyond {
            if let Some(at) = self.position(ch) {
                seen[at] += 1;
            }
        }
        for (b, &n) in lower.ascii.iter().enumerate() {
            if n == 0 || is_stop_char(b as u8 as char) {
                continue;
            }
            count += n as usize;
            if let Some(at) = self.position(b as u8 as char) {
                seen[at] += n as usize;
            }
        }
        // Scored as whatlang does: 2 for each letter an alphabet has, less the count of letters
        // at the end; a letter of every alphabet goes to all of them at once.
        let mut lang_scores = vec![0usize; self.langs.len()];
        let mut common = 0usize;
        for (at, &n) in seen.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let langs = &self.langs_of[at];
            if langs.len() == self.langs.len() {
                common += 2 * n;
            } else {
                for &l in langs {
                    lang_scores[l as usize] += 2 * n;
                }
            }
        }
        let mut raw: Vec<(Lang, usize)> = self
            .langs
            .iter()
            .zip(&lang_scores)
            .map(|(&lang, &score)| (lang, (score + common).saturating_sub(count)))
            .collect();
        raw.sort_unstable_by_key(|(_, score)| std::cmp::Reverse(*score));
        AlphabetScores {
            scores: raw
                .into_iter()
                .map(|(lang, score)| (lang, score as f64 / count as f64))
                .collect(),
            count,
        }
    }
}

/// A char without a code in the table: all its bits set, so that or-ing three codes tells
/// whether any lacks one.
const NO_CODE: u8 = 0xFF;

/// Each byte's code in the table as whatlang reads the lower-cased text: stop chars are spaces
/// (0), a–z and A–Z are 1–26; DEL has none, nor has any byte of a char beyond ASCII.
const CODES: [u8; 256] = {
    let mut codes = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        codes[b] = match b as u8 {
            b'a'..=b'z' => b as u8 - b'a' + 1,
            b'A'..=b'Z' => b as u8 - b'A' + 1,
            0x7F..=0xFF => NO_CODE,
            _ => 0,
        };
        b += 1;
    }
    codes
};

fn decode(code: usize) -> char {
    if code == 0 {
        ' '
    } else {
        (b'a' + code as u8 - 1) as char
    }
}

/// Slots of a thread's trigram table: three codes of five bits. A text's next slot is the last
/// one shifted by a code, and a slot masked to the table needs no bounds check. The trigrams of
/// spaces and a–z, nearly all of a Latin text's, are counted there rather than in a hash map,
/// and the profiles' row of each is found by its slot too ([`table_slot_of`]).
const TABLE_SLOTS: usize = 1 << 15;

/// A thread's trigram table, left all zero between texts (only the touched slots are reset).
/// Counts in 16 bits, so that it takes less of the cache ([`SHORT_TEXT`]).
struct TrigramTable {
    counts: Box<[u16; TABLE_SLOTS]>,
    /// Room for the list of slots a text touches.
    touched: Box<[u16; TABLE_SLOTS]>,
}

thread_local! {
    static TRIGRAM_TABLE: std::cell::RefCell<TrigramTable> = std::cell::RefCell::new(TrigramTable {
        counts: Box::new([0; TABLE_SLOTS]),
        touched: Box::new([0; TABLE_SLOTS]),
    });
}

/// Texts shorter than this many bytes have every trigram count in 16 bits (a count is below
/// the number of chars plus two); longer ones count in a hash map.
const SHORT_TEXT: usize = u16::MAX as usize - 2;

/// Counts of a text's table trigrams.
trait SlotCounts {
    fn count(&mut self, slot: usize);
    /// The trigrams whatlang counts, as `count << 16 | slot` keys in ascending order.
    fn ordered(self) -> Vec<u64>;
}

/// One short text's counting into the thread's table, each slot it touches listed once; the
/// count of listed slots is a local, kept in a register through the loop.
struct Tally<'a> {
    counts: &'a mut [u16; TABLE_SLOTS],
    touched: &'a mut [u16; TABLE_SLOTS],
    touched_len: usize,
}

/// A long text's counts.
#[derive(Default)]
struct LongTally(FxHashMap<u16, u32>);

impl SlotCounts for LongTally {
    fn count(&mut self, slot: usize) {
        *self.0.entry((slot % TABLE_SLOTS) as u16).or_insert(0) += 1;
    }

    fn ordered(self) -> Vec<u64> {
        let mut keys: Vec<u64> = self
            .0
            .into_iter()
            .filter(|&(slot, _)| !whatlang_skips(slot))
            .map(|(slot, n)| u64::from(n) << 16 | u64::from(slot))
            .collect();
        keys.sort_unstable();
        keys
    }
}

/// A text's trigrams as whatlang counts them (punctuation as spaces, a space before the text
/// and after it, no trigram with a space in the middle beside another space).
struct Counted {
    /// Trigrams of the table, as `count << 16 | slot`, ascending: table slots order as their
    /// trigrams do, so this is the order of (count, trigram).
    coded: Vec<u64>,
    /// The other trigrams, each with its count above it in one number.
    other: CountKeys,
}

impl Counted {
    fn empty() -> Self {
        Counted {
            coded: Vec::new(),
            other: CountKeys::Narrow(Vec::new()),
        }
    }
}

/// The trigrams of a text lower-cased, each char as it is read (so `lower` is lower-cased
/// already, or [`lowers_alone`] holds for each of its chars beyond ASCII): a short text's
/// table trigrams in the thread's table, a long one's in a map. Lower-casing a char keeps the
/// count of chars, so the text's length bounds every count as the lower case's would.
fn count_trigrams(lower: &str) -> Counted {
    if lower.is_empty() {
        return Counted::empty();
    }
    if lower.len() >= SHORT_TEXT {
        return count_with(lower, LongTally::default());
    }
    TRIGRAM_TABLE.with_borrow_mut(|table| {
        let tally = Tally {
            counts: &mut table.counts,
            touched: &mut table.touched,
            touched_len: 0,
        };
        count_with(lower, tally)
    })
}

/// [`count_trigrams`] with the table trigrams counted in `tally`.
fn count_with(lower: &str, mut tally: impl SlotCounts) -> Counted {
    // Trigrams whatlang skips are counted too, without a branch, and left out once counted.
    let mut other: FxHashMap<u64, u32> = FxHashMap::default();
    let bytes = lower.as_bytes();
    // The first char is only `c2`: the text starts after a space.
    let (mut c1, mut k1) = (' ', 0u8);
    let (mut c2, mut k2, mut at) = match lower.chars().next() {
        Some(ch) if ch.is_ascii() => {
            let (c, k) = coded_ascii(ch as u8);
            (c, k, 1)
        }
        Some(ch) => {
            let (c, k) = coded_beyond(ch);
            (c, k, ch.len_utf8())
        }
        None => return Counted::empty(),
    };
    loop {
        // The bulk of a Latin text: ASCII bytes with codes after two chars with codes,
        // counted straight into the table without decoding a char.
        if (k1 | k2) != NO_CODE {
            let mut slot = table_slot(0, k1, k2);
            while let Some(&b) = bytes.get(at) {
                let k3 = CODES[usize::from(b)];
                if k3 == NO_CODE {
                    break;
                }
                at += 1;
                slot = (slot << 5 | usize::from(k3)) % TABLE_SLOTS;
                tally.count(slot);
            }
            (k1, k2) = ((slot >> 5 & 31) as u8, (slot & 31) as u8);
            (c1, c2) = (decode(k1 as usize), decode(k2 as usize));
        }
        let (c3, k3) = match bytes.get(at) {
            Some(&b) if b < 0x80 => {
                at += 1;
                coded_ascii(b)
            }
            Some(_) => match lower[at..].chars().next() {
                Some(ch) => {
                    at += ch.len_utf8();
                    coded_beyond(ch)
                }
                None => break,
            },
            // The text ends with a space.
            None if at == bytes.len() => {
                at += 1;
                (' ', 0)
            }
            None => break,
        };
        if (k1 | k2 | k3) == NO_CODE {
            let skipped = c2 == ' ' && (c1 == ' ' || c3 == ' ');
            if !skipped {
                *other.entry(trigram(c1, c2, c3)).or_insert(0) += 1;
            }
        } else {
            tally.count(table_slot(k1, k2, k3));
        }
        (c1, c2, k1, k2) = (c2, c3, k2, k3);
    }
    let coded = tally.ordered();
    // No count passes the number of chars: the other trigrams decide, each narrowed once
    // (most of a Cyrillic text's are other).
    let narrow_other: Option<Vec<u64>> = if lower.len() < NARROW_COUNT {
        other
            .iter()
            .map(|(&t, &n)| Some(u64::from(n) << 48 | narrow_trigram(t)?))
            .collect()
    } else {
        None
    };
    let other = match narrow_other {
        Some(keys) => CountKeys::Narrow(keys),
        None => CountKeys::Wide(
            other
                .into_iter()
                .map(|(t, n)| u128::from(n) << 64 | u128::from(t))
                .collect(),
        ),
    };
    Counted { coded, other }
}

/// The table's `slots` (each once) as `count << 16 | slot` keys in ascending order, whatlang's
/// skipped trigrams left out, and every one of `slots` cleared in `counts` for the next text:
/// the slots in ascending order through a bitmap, then a counting sort by count, which keeps
/// that order among equal counts. A comparison sort of the keys was a fifth of detection
/// (nearly every count of a text is small); with two counting passes over the slot's bytes in
/// place of the bitmap, 100,000 detections took 1.98 s, not 1.84. Each count is read (and
/// cleared) once, in the bitmap's pass: the sort's passes read the keys in order, where a
/// read of the table at each slot, three times over, was a third of this function.
fn order_by_count(slots: &[u16], counts: &mut [u16]) -> Vec<u64> {
    let mut bits = [0u64; TABLE_SLOTS / 64];
    for &slot in slots {
        bits[usize::from(slot) / 64 % bits.len()] |= 1 << (slot % 64);
    }
    let mut ascending: Vec<u32> = Vec::with_capacity(slots.len());
    let mut most = 0;
    for (at, (&word, &skipped)) in bits.iter().zip(WHATLANG_SKIPS.iter()).enumerate() {
        let mut rest = word;
        while rest != 0 {
            let bit = rest.trailing_zeros();
            let slot = (at * 64) | bit as usize;
            let count = std::mem::take(&mut counts[slot % TABLE_SLOTS]);
            if skipped >> bit & 1 == 0 {
                most = most.max(count);
                ascending.push(u32::from(count) << 16 | slot as u32);
            }
            rest &= rest - 1;
        }
    }
    let most = usize::from(most);
    if most > 4 * ascending.len() + 256 {
        // A long text of few trigrams: its counts would need more buckets than it has slots.
        let mut keys: Vec<u64> = ascending.iter().map(|&k| u64::from(k)).collect();
        keys.sort_unstable();
        return keys;
    }
    let mut starts = vec![0usize; most + 1];
    for &key in &ascending {
        starts[(key >> 16) as usize] += 1;
    }
    // The running sum in a register: each count's start is the number of smaller ones.
    let mut before = 0;
    for start in &mut starts {
        (*start, before) = (before, before + *start);
    }
    let mut keys = vec![0u64; ascending.len()];
    for &key in &ascending {
        let at = &mut starts[(key >> 16) as usize];
        keys[*at] = u64::from(key);
        *at += 1;
    }
    keys
}

/// A bit for each table slot whose trigram whatlang leaves out ([`whatlang_skips`]), 64 slots
/// to a word.
static WHATLANG_SKIPS: [u64; TABLE_SLOTS / 64] = {
    let mut bits = [0u64; TABLE_SLOTS / 64];
    let mut slot = 0;
    while slot < TABLE_SLOTS {
        if whatlang_skips(slot as u16) {
            bits[slot / 64] |= 1 << (slot % 64);
        }
        slot += 1;
    }
    bits
};

/// A text's trigrams with their counts, each as one number that orders as (count, trigram):
/// in 64 bits when the counts and chars allow (16 bits a count, 16 a char; a 64-bit key sorts
/// faster, and ranking was a fifth of detection), else in 128 ([`trigram`] below the count).
enum CountKeys {
    Narrow(Vec<u64>),
    Wide(Vec<u128>),
}

/// Texts shorter than this many bytes have every trigram count in 16 bits (a count is below
/// the number of chars plus two).
const NARROW_COUNT: usize = 1 << 15;

/// A [`trigram`] in 48 bits, ordered as it is, when its chars are in the BMP.
fn narrow_trigram(trigram: u64) -> Option<u64> {
    const CHAR: u64 = (1 << 21) - 1;
    let chars = [trigram >> 42, trigram >> 21 & CHAR, trigram & CHAR];
    chars.iter().all(|&c| c < 1 << 16).then(|| narrow_of(chars))
}

/// Three chars' numbers (each in the BMP) in 48 bits, ordered as their [`trigram`].
fn narrow_of([a, b, c]: [u64; 3]) -> u64 {
    a << 32 | b << 16 | c
}

/// The [`trigram`] of a narrow count key.
fn wide_trigram(key: u64) -> u64 {
    const CHAR: u64 = (1 << 16) - 1;
    wide_of([key >> 32 & CHAR, key >> 16 & CHAR, key & CHAR])
}

/// The `TEXT_TRIGRAMS` highest count keys as (count, [`trigram`]), ascending (`split` reads a
/// key's two).
fn top_keys<K: Ord + Copy>(mut keys: Vec<K>, split: impl Fn(K) -> (u64, u64)) -> Vec<(u64, u64)> {
    // No two keys are equal, so only the top ones need sorting.
    if keys.len() > TEXT_TRIGRAMS {
        let cut = keys.len() - TEXT_TRIGRAMS;
        keys.select_nth_unstable(cut);
        keys.drain(..cut);
    }
    keys.sort_unstable();
    keys.into_iter().map(split).collect()
}

/// A trigram of the text's ranking: a table slot, or the [`trigram`] of one with other chars.
#[derive(Clone, Copy)]
enum Ranked {
    Slot(u16),
    Other(u64),
}

/// The text's `TEXT_TRIGRAMS` trigrams ranked as whatlang ranks them: by count, then by
/// trigram, both descending. The table's and the others come each in order already, so the
/// ranking is their merge.
fn ranked_trigrams(counted: Counted) -> Vec<Ranked> {
    let other = match counted.other {
        CountKeys::Narrow(keys) => top_keys(keys, |k| (k >> 48, wide_trigram(k))),
        CountKeys::Wide(keys) => top_keys(keys, |k| ((k >> 64) as u64, k as u64)),
    };
    let coded = counted.coded;
    let mut ranked = Vec::with_capacity(TEXT_TRIGRAMS.min(coded.len() + other.len()));
    let (mut i, mut j) = (coded.len(), other.len());
    while ranked.len() < TEXT_TRIGRAMS && i + j > 0 {
        let coded_first = match (i, j) {
            (0, _) => false,
            (_, 0) => true,
            _ => {
                let (key, (count, trigram)) = (coded[i - 1], other[j - 1]);
                // The trigram is read only to break a tie.
                match (key >> 16).cmp(&count) {
                    std::cmp::Ordering::Equal => slot_trigram((key & 0xFFFF) as usize) > trigram,
                    unequal => unequal.is_gt(),
                }
            }
        };
        if coded_first {
            i -= 1;
            ranked.push(Ranked::Slot((coded[i] & 0xFFFF) as u16));
        } else {
            j -= 1;
            ranked.push(Ranked::Other(other[j].1));
        }
    }
    ranked
}

/// The three codes of a table slot.
const fn codes_of(slot: usize) -> [usize; 3] {
    [slot >> 10 & 31, slot >> 5 & 31, slot & 31]
}

/// The [`trigram`] of a table slot.
fn slot_trigram(slot: usize) -> u64 {
    wide_of(codes_of(slot).map(|k| decode(k) as u64))
}

/// The table slot of three coded chars.
#[inline(always)]
fn table_slot(k1: u8, k2: u8, k3: u8) -> usize {
    (usize::from(k1) << 10 | usize::from(k2) << 5 | usize::from(k3)) % TABLE_SLOTS
}

/// Whether whatlang leaves out the trigram of a table slot: a space in the middle beside
/// another space.
const fn whatlang_skips(slot: u16) -> bool {
    let [a, b, c] = codes_of(slot as usize);
    b == 0 && (a == 0 || c == 0)
}

/// The table slot of a trigram of spaces and a–z ([`trigram`]'s number), if it is one.
fn table_slot_of(trigram: u64) -> Option<usize> {
    const CHAR: u64 = (1 << 21) - 1;
    let code = |ch: u64| match ch {
        0x20 => Some(0),
        0x61..=0x7A => Some(ch as u8 - 0x60),
        _ => None,
    };
    Some(table_slot(
        code(trigram >> 42)?,
        code(trigram >> 21 & CHAR)?,
        code(trigram & CHAR)?,
    ))
}

impl SlotCounts for Tally<'_> {
    #[inline(always)]
    fn count(&mut self, slot: usize) {
        // Without a branch: whether a slot is new is a coin toss the predictor loses.
        let slot = slot % TABLE_SLOTS;
        let n = self.counts[slot];
        self.touched[self.touched_len % TABLE_SLOTS] = slot as u16;
        self.touched_len += usize::from(n == 0);
        self.counts[slot] = n + 1;
    }

    fn ordered(self) -> Vec<u64> {
        order_by_count(&self.touched[..self.touched_len], &mut self.counts[..])
    }
}

impl Profiles {
    fn new(list: &[(Lang, &str)], alphabets: Alphabets) -> Self {
        let mut index: FxHashMap<u64, u16> = FxHashMap::default();
        let mut rows: Vec<Row> = Vec::new();
        let mut lengths = Vec::with_capacity(list.len());
        for (l, (_, profile)) in list.iter().enumerate() {
            let chars: Vec<char> = profile.chars().collect();
            for (rank, t) in chars.chunks_exact(3).enumerate() {
                let row = *index.entry(trigram(t[0], t[1], t[2])).or_insert_with(|| {
                    rows.push([NOT_IN_PROFILE; MAX_LANGS]);
                    (rows.len() - 1) as u16
                });
                rows[usize::from(row)][l % MAX_LANGS] = rank as i16;
            }
            lengths.push((chars.len() / 3) as u32);
        }
        let mut coded_rows = vec![NO_ROW; TABLE_SLOTS];
        index.retain(|&t, &mut row| match table_slot_of(t) {
            Some(slot) => {
                coded_rows[slot] = row;
                false
            }
            None => true,
        });
        Profiles {
            langs: list.iter().map(|(l, _)| *l).collect(),
            rows,
            coded_rows,
            index,
            lengths,
            alphabets,
        }
    }

    /// whatlang's trigram scores of the text lower-cased ([`count_trigrams`]): languages by
    /// distance, nearest first, with the count of distinct trigrams in the text.
    fn scores(&self, lower: &str) -> (Vec<(Lang, f64)>, usize) {
        let ranked = ranked_trigrams(count_trigrams(lower));
        let count = ranked.len() as u32;
        // The rows of the text's trigrams that some profile has, with the text's rank of each.
        let hits: Vec<(i16, u16)> = ranked
            .iter()
            .enumerate()
            .filter_map(|(rank, &trigram)| {
                let row = match trigram {
                    Ranked::Slot(slot) => self.coded_rows[usize::from(slot) % TABLE_SLOTS],
                    Ranked::Other(t) => self.index.get(&t).copied().unwrap_or(NO_ROW),
                };
                (row != NO_ROW).then_some((rank as i16, row))
            })
            .collect();
        let saved = add_rows(&self.rows, &hits);
        let max_total = (MAX_TRIGRAM_DISTANCE * MAX_TRIGRAM_DISTANCE) as i64;
        let mut distances: Vec<(Lang, u32)> = self
            .langs
            .iter()
            .zip(&self.lengths)
            .zip(&saved)
            .map(|((&lang, &len), &saved)| {
                let mut total = (len * MAX_TRIGRAM_DISTANCE) as i64 - i64::from(saved);
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

/// What each language's distance is less than one full miss per profile trigram: over the
/// text's trigrams `hits` (its rank of each, the trigram's row), the sum of
/// `MAX_TRIGRAM_DISTANCE − |text rank − profile rank|` in each lane whose profile has the
/// trigram. A match ranked far down the text "saves" less than nothing: its distance can pass
/// the full miss.
///
/// Done with the AVX2 instructions where the CPU has them (the same code, compiled for them),
/// otherwise as the target allows.
fn add_rows(rows: &[Row], hits: &[(i16, u16)]) -> [i32; MAX_LANGS] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { add_rows_avx2(rows, hits) };
    }
    add_rows_lanes(rows, hits)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_rows_avx2(rows: &[Row], hits: &[(i16, u16)]) -> [i32; MAX_LANGS] {
    add_rows_lanes(rows, hits)
}

/// [`add_rows`], written lane by lane for the compiler to do all lanes at once: in 16-bit lanes
/// for [`FLUSH`] trigrams at a time, then into 32-bit sums.
#[inline(always)]
fn add_rows_lanes(rows: &[Row], hits: &[(i16, u16)]) -> [i32; MAX_LANGS] {
    let full = MAX_TRIGRAM_DISTANCE as i16;
    let mut saved = [0i32; MAX_LANGS];
    for group in hits.chunks(FLUSH) {
        let mut part = [0i16; MAX_LANGS];
        for &(rank, row) in group {
            let Some(row) = rows.get(usize::from(row)) else {
                continue;
            };
            for (sum, &profile_rank) in part.iter_mut().zip(row) {
                let value = full - (rank - profile_rank).abs();
                *sum += if profile_rank == NOT_IN_PROFILE {
                    0
                } else {
                    value
                };
            }
        }
        for (sum, &p) in saved.iter_mut().zip(&part) {
            *sum += i32::from(p);
        }
    }
    saved
}

/// Trigrams added in 16-bit lanes before their sums move to 32 bits: a lane's value is
/// between 300 − 599 (text rank 599, profile rank 0) and 300, so the sums of 100 stay within
/// ±32,767.
const FLUSH: usize = 100;

/// whatlang's combination of the alphabet and trigram scores: the top language and the
/// confidence from its lead over the second.
fn combine(alphabet: &AlphabetScores, trigrams: &(Vec<(Lang, f64)>, usize)) -> Option<(Lang, f64)> {
    let (trigram_scores, trigram_count) = trigrams;
    let mut langs: Vec<Lang> = alphabet.scores.iter().map(|x| x.0).collect();
    let mut listed = [false; LANG_SLOTS];
    for &lang in &langs {
        listed[lang as usize % LANG_SLOTS] = true;
    }
    for &(lang, _) in trigram_scores {
        if !std::mem::replace(&mut listed[lang as usize % LANG_SLOTS], true) {
            langs.push(lang);
        }
    }
    // The longer the text, the less its alphabet weighs.
    let alphabet_weight =
        (-(alphabet.count as f64 / 300.0) + 2.0 / 3.0).clamp(1.0 / 3.0, 2.0 / 3.0);
    let trigram_weight = 1.0 - alphabet_weight;
    // Each language's scores by its number (whatlang searches each list for each language;
    // a language is in each list once).
    let mut by_lang = [(0.0, 0.0); LANG_SLOTS];
    for &(lang, a) in &alphabet.scores {
        by_lang[lang as usize % LANG_SLOTS].0 = a;
    }
    for &(lang, t) in trigram_scores {
        by_lang[lang as usize % LANG_SLOTS].1 = t;
    }
    let mut scores: Vec<(Lang, f64)> = langs
        .into_iter()
        .map(|lang| {
            let (a, t) = by_lang[lang as usize % LANG_SLOTS];
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
    fn lowercase_is_the_standard_librarys() {
        let mut state = 5u64;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        // ASCII runs between curly quotes, accented and Cyrillic capitals, chars whose lower
        // case is longer (İ), and the contextual sigma.
        let pieces = [
            "The ",
            "Dog",
            " SAYS ",
            "\u{201C}",
            "\u{201D}",
            "\u{00C9}t\u{00C9}",
            "\u{0416}\u{0401}",
            "\u{0130}",
            "\u{03A3}",
            "\u{039F}\u{03A3}",
            " ",
            "x",
            "\u{2014}",
            "ABC123",
        ];
        for _ in 0..2000 {
            let text: String = (0..next(12))
                .map(|_| pieces[next(pieces.len() as u64) as usize])
                .collect();
            assert_eq!(lowercase(&text), text.to_lowercase(), "{text:?}");
        }
        assert_eq!(lowercase(""), "");
    }

    #[test]
    fn a_lower_case_of_one_char_is_its_own_lower_case() {
        // Trigram counting lower-cases a char of an already lower-cased text again.
        for ch in (0..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|&c| lowers_alone(c, &c.to_lowercase()))
        {
            let lower = lower_char(ch);
            assert!(lowers_alone(lower, &lower.to_lowercase()), "{ch:?}");
            assert_eq!(lower_char(lower), lower, "{ch:?}");
            assert_eq!(lower.to_string(), ch.to_lowercase().to_string(), "{ch:?}");
        }
    }

    #[test]
    fn trigrams_of_a_text_are_those_of_its_lower_case() {
        let mut rng = Rng(0x51_7cc1_b727_220a);
        // Capitals of three scripts, the Kelvin sign (its lower case is ASCII), DEL, curly
        // quotes; texts that start with any of them.
        let pieces = [
            "The ",
            "DOG",
            " says ",
            "\u{00C9}t\u{00C9}",
            "\u{0416}\u{0401}\u{0436}",
            "\u{212A}",
            "\u{7F}",
            "\u{201C}x\u{201D}",
            "  ",
            "Ab",
            "\u{0391}\u{03B2}",
            ".",
            "\n",
            "QQ",
        ];
        for n in 0..3000 {
            let text: String = (0..rng.below(if n % 100 == 0 { 3000 } else { 40 }))
                .map(|_| pieces[rng.below(pieces.len())])
                .collect();
            assert!(text
                .chars()
                .all(|c| c.is_ascii() || lowers_alone(c, &c.to_lowercase())));
            let lower = text.to_lowercase();
            for profiles in [&*LATIN, &*CYRILLIC] {
                let (ours, theirs) = (profiles.scores(&text), profiles.scores(&lower));
                assert_eq!(ours.1, theirs.1, "{text:?}");
                let bits = |s: &[(Lang, f64)]| -> Vec<(Lang, u64)> {
                    s.iter().map(|&(l, x)| (l, x.to_bits())).collect()
                };
                assert_eq!(bits(&ours.0), bits(&theirs.0), "{text:?}");
            }
            assert_eq!(we_say(&text), whatlang_says(&text), "{text:?}");
        }
    }

    #[test]
    fn the_chars_of_a_text_lower_cased_are_those_of_its_lower_case() {
        let mut rng = Rng(11);
        // Capitals of three scripts, the Kelvin sign (its lower case is ASCII), İ (two chars).
        let pieces = [
            "The ",
            "DOG",
            "\u{00C9}t\u{00C9}",
            "\u{0416}\u{0401}ж",
            "\u{0130}",
            "\u{212A}",
            "\u{201C}",
            "\u{039F}",
            " ",
            "x",
            "ABC123",
        ];
        for _ in 0..2000 {
            let text: String = (0..rng.below(12))
                .map(|_| pieces[rng.below(pieces.len())])
                .collect();
            let (ours, std) = (
                Chars::of(&text).lowercased().0,
                Chars::of(&text.to_lowercase()),
            );
            assert_eq!(ours.ascii, std.ascii, "{text:?}");
            assert_eq!(ours.beyond, std.beyond, "{text:?}");
        }
    }

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
    fn decides_as_whatlang_where_ranking_needs_the_wide_keys() {
        let mut rng = Rng(7);
        let english = profiles::LATIN
            .iter()
            .find(|(l, _)| *l == Lang::Eng)
            .map(|(_, p)| *p)
            .unwrap_or_default();
        // Chars beyond the BMP among Latin letters, and a text too long for 16-bit counts.
        let emoji = format!("{} 😀𝔘𝔫𝔦 {}", text_of(english, 300, &mut rng), "a😀b");
        let long = text_of(english, 2 * NARROW_COUNT, &mut rng);
        for text in [emoji, long] {
            assert!(matches!(
                count_trigrams(&lowercase(&text)).other,
                CountKeys::Wide(_)
            ));
            let start: String = text.chars().take(80).collect();
            assert_eq!(we_say(&text), whatlang_says(&text), "{start}");
        }
        let short = text_of(english, 300, &mut rng);
        assert!(matches!(
            count_trigrams(&lowercase(&short)).other,
            CountKeys::Narrow(_)
        ));
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
    fn finds_whatlangs_script_for_every_char_it_decides_and_for_near_ties() {
        // The ranges decided here and every char around them.
        for ch in (0..0x3000).filter_map(char::from_u32) {
            let text = ch.to_string();
            assert_eq!(main_script(&text), whatlang::detect_script(&text), "{ch:?}");
        }
        // Latin against Cyrillic and Greek, from a clear lead to a tie and back.
        for latin in 0..6 {
            for cyrillic in 0..6 {
                for greek in 0..3 {
                    for order in 0..2 {
                        let parts = [
                            "ab".repeat(latin),
                            "жы".repeat(cyrillic),
                            "αβ".repeat(greek),
                        ];
                        let text = if order == 0 {
                            parts.join(" ")
                        } else {
                            parts.iter().rev().cloned().collect::<Vec<_>>().join(" ")
                        };
                        assert_eq!(
                            main_script(&text),
                            whatlang::detect_script(&text),
                            "{text:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn scores_alphabets_as_whatlang_does() {
        use whatlang::dev::{FilterList, LowercaseText};
        let mut rng = Rng(7);
        let alphabet: Vec<char> =
            "abcdefghijklmnopqrstuvwxyzäöüßéèàçñøåłśżąęčšžőűığşə̇ʻ·¡¿ạảấабвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґўђјљњћџѓѕќ0123456789 .,;:!?-\u{7f}"
                .chars()
                .collect();
        for n in 0..400 {
            let len = rng.below(if n % 10 == 0 { 3000 } else { 200 });
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let lower = LowercaseText::new(&text);
            for (ours, theirs) in [
                (
                    &LATIN.alphabets,
                    whatlang::dev::alphabet_latin_calculate_scores(&lower, &FilterList::default()),
                ),
                (
                    &CYRILLIC.alphabets,
                    whatlang::dev::alphabet_cyrillic_calculate_scores(
                        &lower,
                        &FilterList::default(),
                    ),
                ),
            ] {
                let ours = ours.scores(&lower);
                let bits = |s: &[(Lang, f64)]| {
                    s.iter().map(|(l, x)| (*l, x.to_bits())).collect::<Vec<_>>()
                };
                assert_eq!(bits(&ours.scores), bits(&theirs.scores), "{text:?}");
                assert_eq!(ours.count, theirs.count, "{text:?}");
            }
        }
    }

    #[test]
    fn orders_slots_by_count_then_slot_without_the_skipped() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut counts = vec![0u16; TABLE_SLOTS];
        // Few slots and many (a short and a long text), small counts, and counts too large
        // for the counting sort.
        for (len, most) in [(0, 1), (1, 3), (40, 2), (700, 50), (5000, 300), (30, 5000)] {
            let mut slots: Vec<u16> = Vec::new();
            while slots.len() < len {
                let slot = rng.below(TABLE_SLOTS) as u16;
                if counts[usize::from(slot)] == 0 {
                    counts[usize::from(slot)] = 1 + rng.below(most) as u16;
                    slots.push(slot);
                }
            }
            let mut expected: Vec<u64> = slots
                .iter()
                .filter(|&&s| !whatlang_skips(s))
                .map(|&s| u64::from(counts[usize::from(s)]) << 16 | u64::from(s))
                .collect();
            expected.sort_unstable();
            assert_eq!(order_by_count(&slots, &mut counts), expected, "{len} slots");
            assert!(counts.iter().all(|&n| n == 0), "{len} slots: counts left");
        }
    }

    #[test]
    fn rows_add_up_as_the_entries_one_by_one() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for profiles in [&*LATIN, &*CYRILLIC] {
            let rows = &profiles.rows;
            // Text ranks from 0 to the last, so that a lane's value takes both signs, over
            // more trigrams than one 16-bit round holds; rows at random, and one row
            // throughout (a lane's sums at their largest, of either sign).
            let lens = [0, 1, FLUSH - 1, FLUSH, FLUSH + 1, TEXT_TRIGRAMS];
            for (len, same) in lens.into_iter().flat_map(|len| [(len, false), (len, true)]) {
                let hits: Vec<(i16, u16)> = (0..len)
                    .map(|rank| {
                        let row = if same { 0 } else { rng.below(rows.len()) };
                        (rank as i16, row as u16)
                    })
                    .collect();
                let mut expected = [0i64; MAX_LANGS];
                for &(rank, row) in &hits {
                    for (lane, &p) in rows[usize::from(row)].iter().enumerate() {
                        if p != NOT_IN_PROFILE {
                            let off = (i64::from(rank) - i64::from(p)).abs();
                            expected[lane] += i64::from(MAX_TRIGRAM_DISTANCE) - off;
                        }
                    }
                }
                let expected = expected.map(|x| x as i32);
                assert_eq!(add_rows(rows, &hits), expected, "{len} trigrams, {same}");
                assert_eq!(
                    add_rows_lanes(rows, &hits),
                    expected,
                    "{len} trigrams, {same}"
                );
            }
        }
    }

    #[test]
    fn every_script_has_room_for_its_languages_scores() {
        for (list, profiles) in [(profiles::LATIN, &*LATIN), (profiles::CYRILLIC, &*CYRILLIC)] {
            assert!(list.len() <= MAX_LANGS, "{} languages", list.len());
            assert_eq!(profiles.langs.len(), list.len());
            assert!(profiles.rows.len() < usize::from(NO_ROW));
        }
        assert!(Lang::all().iter().all(|&l| (l as usize) < LANG_SLOTS));
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
