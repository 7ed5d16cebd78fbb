//! Canonical form of a text (docs/method.md §1): lower-cased words without stop symbols and stop words.

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashSet;
use std::sync::OnceLock;

/// Languages whose stop words are removed when no other list is asked for.
pub const DEFAULT_STOP_LANGS: &[&str] = &["ru", "en"];

/// A stop-word list, looked up once per word on the hot path, and the canonical form's one
/// option, stemming: the two travel together because every canonicalizer is handed this list.
#[derive(Debug, Clone)]
pub struct StopWords {
    words: FxHashSet<Box<[u8]>>,
    /// The words of at most 15 bytes as [`short_key`]s, in a table answered without a branch
    /// (most stop words, and most words looked up, are that short).
    short: ShortKeys,
    langs: Vec<String>,
    stem: bool,
}

/// A word of at most 15 bytes as one number: its bytes, and its length in the top byte (so
/// that no two words share a key, whatever bytes they hold).
#[inline]
fn short_key(word: &[u8]) -> Option<u128> {
    (word.len() < 16).then(|| {
        let mut bytes = [0u8; 16];
        bytes[..word.len()].copy_from_slice(word);
        bytes[15] = word.len() as u8;
        u128::from_le_bytes(bytes)
    })
}

/// A set of [`short_key`]s where each key has two places (cuckoo hashing), so a lookup reads
/// both and compares, with no branch on the answer. Four words in ten of a text are stop
/// words, in no order a branch predictor can learn: deciding them by a branch (a filter bit,
/// then a hash set) was a third of the canonical form's time.
#[derive(Debug, Clone)]
struct ShortKeys {
    /// Power-of-two many slots; [`ShortKeys::EMPTY`] marks an empty one.
    slots: Box<[u128]>,
    /// Multipliers of the two places.
    seeds: [u64; 2],
    /// The places are the top `bits` of a product.
    bits: u32,
}

impl ShortKeys {
    /// No key: its top byte, a key's length, is over 15.
    const EMPTY: u128 = u128::MAX;

    fn new(keys: &FxHashSet<u128>) -> Self {
        // At most a third of the slots in use, where cuckoo insertion nearly always settles;
        // when it does not, other multipliers, then twice the slots.
        let mut bits = (3 * keys.len())
            .max(64)
            .next_power_of_two()
            .trailing_zeros();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next_seed = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state | 1
        };
        loop {
            for _ in 0..16 {
                let mut table = ShortKeys {
                    slots: vec![Self::EMPTY; 1 << bits].into_boxed_slice(),
                    seeds: [next_seed(), next_seed()],
                    bits,
                };
                if keys.iter().all(|&k| table.insert(k)) {
                    return table;
                }
            }
            bits += 1;
        }
    }

    #[inline]
    fn places(&self, key: u128) -> [usize; 2] {
        let x = (key as u64) ^ ((key >> 64) as u64).rotate_left(23);
        self.seeds
            .map(|s| (x.wrapping_mul(s) >> (64 - self.bits)) as usize)
    }

    /// Puts `key` in, moving keys to their other place as needed; false when a cycle of moves
    /// does not end.
    fn insert(&mut self, mut key: u128) -> bool {
        if self.contains(key) {
            return true;
        }
        let mut at = self.places(key)[0];
        for _ in 0..self.slots.len() {
            std::mem::swap(&mut key, &mut self.slots[at]);
            if key == Self::EMPTY {
                return true;
            }
            let [p, q] = self.places(key);
            at = if p == at { q } else { p };
        }
        false
    }

    #[inline]
    fn contains(&self, key: u128) -> bool {
        let [p, q] = self.places(key);
        (self.slots[p] == key) | (self.slots[q] == key)
    }
}

fn short_keys_of(words: &FxHashSet<Box<[u8]>>) -> ShortKeys {
    ShortKeys::new(&words.iter().filter_map(|w| short_key(w)).collect())
}

impl StopWords {
    /// The NLTK stop-word lists (crate `stop-words`) of the given languages, merged.
    ///
    /// Unknown languages have no list: they are reported as an error, not silently ignored.
    pub fn for_languages(langs: &[String]) -> Result<Self, String> {
        Self::have_lists(langs)?;
        let mut words = FxHashSet::default();
        for lang in langs {
            for w in stop_words::get(lang.as_str()) {
                // The lists are already lower case; ё is folded like the text is.
                words.insert(fold_word(&w).into_bytes().into_boxed_slice());
            }
        }
        Ok(StopWords {
            short: short_keys_of(&words),
            words,
            langs: langs.to_vec(),
            stem: false,
        })
    }

    /// Whether each of `langs` has a stop-word list, without building the list: the crate
    /// parses its whole JSON of every language for each list (about 1 ms a list in a profile
    /// of `update`), which a topic's check paid on top of the build of the same lists.
    pub fn have_lists(langs: &[String]) -> Result<(), String> {
        match langs.iter().find(|l| !NLTK_LANGS.contains(&l.as_str())) {
            Some(lang) => Err(format!(
                "no stop-word list for language `{lang}` (known: {})",
                NLTK_LANGS.join(", ")
            )),
            None => Ok(()),
        }
    }

    /// The same list, with canonical words replaced by their Snowball stems when `on`.
    pub fn with_stemming(mut self, on: bool) -> Self {
        self.stem = on;
        self
    }

    /// Whether canonical words are stems.
    pub fn stems(&self) -> bool {
        self.stem
    }

    /// The default Russian + English list, built once per process.
    pub fn default_shared() -> &'static StopWords {
        static SHARED: OnceLock<StopWords> = OnceLock::new();
        SHARED.get_or_init(|| {
            let langs: Vec<String> = DEFAULT_STOP_LANGS.iter().map(|s| s.to_string()).collect();
            StopWords::for_languages(&langs).expect("ru and en lists ship with stop-words")
        })
    }

    /// An empty list (nothing removed).
    pub fn none() -> Self {
        let words = FxHashSet::default();
        StopWords {
            short: short_keys_of(&words),
            words,
            langs: Vec::new(),
            stem: false,
        }
    }

    /// Whether `word` (already canonical) is a stop word.
    #[inline]
    pub fn contains(&self, word: &str) -> bool {
        self.contains_bytes(word.as_bytes())
    }

    /// [`StopWords::contains`] for the UTF-8 bytes of a word.
    #[inline]
    fn contains_bytes(&self, word: &[u8]) -> bool {
        match short_key(word) {
            Some(key) => self.short.contains(key),
            None => self.words.contains(word),
        }
    }

    /// [`StopWords::contains_bytes`] for a word of `len` bytes (1 to 15) given as the low
    /// bytes of `word` (little-endian, the bytes above them zero): its key comes from the
    /// number, with no bytes to copy.
    #[inline]
    fn contains_short_word(&self, word: u128, len: usize) -> bool {
        self.short.contains(word | (len as u128) << 120)
    }

    /// The languages this list was built from.
    pub fn languages(&self) -> &[String] {
        &self.langs
    }
}

/// Languages the `stop-words` crate has NLTK lists for.
const NLTK_LANGS: &[&str] = &[
    "ar", "az", "da", "nl", "en", "fi", "fr", "de", "el", "hu", "id", "it", "kk", "ne", "no", "pt",
    "ro", "ru", "sl", "es", "sv", "tg", "tr",
];

/// Lower-cases a word and folds ё to е, as canonical words are.
pub fn fold_word(w: &str) -> String {
    let mut out = String::with_capacity(w.len());
    for c in w.chars() {
        push_folded(&mut out, c);
    }
    out
}

#[inline]
fn push_folded(out: &mut String, c: char) {
    fold_char(c, |f| out.push(f));
}

/// The folded UTF-8 of the Russian letter `bytes` begin with (its two bytes), or None when
/// they begin with something else: [`fold_char`] for the common case, read from the bytes
/// without decoding the char (decoding, classifying and folding each char was most of the
/// canonical form's time on Russian text).
#[inline]
fn folded_cyrillic(bytes: &[u8]) -> Option<[u8; 2]> {
    match *bytes.get(..2)? {
        // а..п, р..я
        [0xD0, b @ 0xB0..=0xBF] | [0xD1, b @ 0x80..=0x8F] => Some([bytes[0], b]),
        // А..П to а..п, Р..Я to р..я
        [0xD0, b @ 0x90..=0x9F] => Some([0xD0, b + 0x20]),
        [0xD0, b @ 0xA0..=0xAF] => Some([0xD1, b - 0x20]),
        // Ё, ё to е
        [0xD0, 0x81] | [0xD1, 0x91] => Some([0xD0, 0xB5]),
        _ => None,
    }
}

/// [`push_folded`] onto UTF-8 bytes.
#[inline]
fn push_folded_bytes(out: &mut Vec<u8>, c: char) {
    fold_char(c, |f| {
        out.extend_from_slice(f.encode_utf8(&mut [0; 4]).as_bytes())
    });
}

/// The chars a word char folds to: lower case, ё as е.
#[inline]
fn fold_char(c: char, mut emit: impl FnMut(char)) {
    match c {
        _ if c.is_ascii() => emit(c.to_ascii_lowercase()),
        // The Russian alphabet, most non-ASCII text here, without the Unicode case tables
        // (seven times faster on Russian text).
        'а'..='я' => emit(c),
        'А'..='Я' => emit(char::from_u32(c as u32 + 0x20).unwrap_or(c)),
        // ё and е are used interchangeably in Russian print; folding them makes copies match.
        'ё' | 'Ё' => emit('е'),
        _ => {
            for l in c.to_lowercase() {
                emit(if l == 'ё' { 'е' } else { l });
            }
        }
    }
}

fn stemmer(cyrillic: bool) -> &'static Stemmer {
    static RU: OnceLock<Stemmer> = OnceLock::new();
    static EN: OnceLock<Stemmer> = OnceLock::new();
    if cyrillic {
        RU.get_or_init(|| Stemmer::create(Algorithm::Russian))
    } else {
        EN.get_or_init(|| Stemmer::create(Algorithm::English))
    }
}

/// The Snowball stem of one folded word: Russian rules for Cyrillic words, English for the
/// rest. Chosen by the word's script, not the text's detected language, so that a Russian page
/// quoting an English name stems it as English, and keywords (too short for language
/// detection) are stemmed exactly as the texts are.
pub fn stem(word: &str) -> std::borrow::Cow<'_, str> {
    let cyrillic = word.chars().any(|c| matches!(c, '\u{0400}'..='\u{04FF}'));
    stemmer(cyrillic).stem(word)
}

/// Word characters: letters and digits of any script, plus combining marks that belong to a word.
#[inline]
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        matches!(c, 'А'..='я' | 'ё' | 'Ё') || c.is_alphanumeric() || is_combining_mark(c)
    }
}

#[inline]
fn is_combining_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF)
}

/// The canonical words of one text, stored in one buffer separated by single spaces.
///
/// Keeping the words contiguous lets a shingle be hashed as one byte slice.
#[derive(Debug, Default, Clone)]
pub struct CanonText {
    /// Canonical words joined by single spaces.
    pub buf: String,
    /// Byte offset where each word starts in `buf`.
    pub starts: Vec<u32>,
}

impl CanonText {
    /// Number of canonical words.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the text has no canonical word.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The `i`-th canonical word.
    pub fn word(&self, i: usize) -> &str {
        &self.buf[self.starts[i] as usize..self.word_end(i)]
    }

    fn word_end(&self, i: usize) -> usize {
        match self.starts.get(i + 1) {
            Some(&next) => next as usize - 1,
            None => self.buf.len(),
        }
    }

    /// Byte slice of `w` consecutive words starting at word `i`, separated by single spaces.
    #[inline]
    pub fn span(&self, i: usize, w: usize) -> &[u8] {
        &self.buf.as_bytes()[self.span_range(i, w)]
    }

    /// Where [`CanonText::span`] lies in `buf`.
    #[inline]
    pub fn span_range(&self, i: usize, w: usize) -> std::ops::Range<usize> {
        self.starts[i] as usize..self.word_end(i + w - 1)
    }

    /// Iterates over the words.
    pub fn words(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(move |i| self.word(i))
    }
}

/// Turns raw text into canonical words (into an output whose buffers are reused between texts).
pub struct Canonicalizer<'s> {
    stop: &'s StopWords,
}

impl<'s> Canonicalizer<'s> {
    /// A canonicalizer removing the words of `stop`.
    pub fn new(stop: &'s StopWords) -> Self {
        Canonicalizer { stop }
    }

    /// Canonical form of `text` into `out` (cleared first).
    ///
    /// A word of ASCII letters and digits short enough for a stop-word key is read as one
    /// number and checked before it is copied ([`Canonicalizer::short_ascii_word`]); any
    /// other word is folded straight onto the output's bytes and taken back if it is a stop
    /// word: an ASCII word char is lower-cased by setting one bit, with no word buffer to copy
    /// from and no char to encode (canonicalizing was a third of `collect dedup`'s CPU). A
    /// test compares the result with the char-at-a-time definition.
    pub fn canonicalize_into(&mut self, text: &str, out: &mut CanonText) {
        out.starts.clear();
        let mut buf = std::mem::take(&mut out.buf).into_bytes();
        buf.clear();
        buf.reserve(text.len() / 2);
        let bytes = text.as_bytes();
        // Stemming reads each word as a string: only the general path does. A local, not a
        // field read in the loop: read there, Russian text went 10 % slower.
        let blocks = !self.stop.stem;
        let mut i = 0;
        while i < bytes.len() {
            // Where the next 64 bytes are ASCII words and what lies between them, they are
            // read by one mask; the first word the mask cannot settle goes the way below. Not
            // tried unless the next 8 bytes are ASCII: in Cyrillic text the mask would find
            // little more than the space before the next word.
            if blocks && ascii_ahead(bytes, i) {
                if let Some(block) = bytes.get(i..i + BLOCK).and_then(|b| b.try_into().ok()) {
                    let done = self.ascii_block(bytes, i, block, &mut buf, &mut out.starts);
                    if done > 0 {
                        i += done;
                        continue;
                    }
                }
            }
            // The char at `i`: an ASCII byte is decided by table, any other char decoded once;
            // a word char starts a word, which the loop below reads from `i` on.
            let b = bytes[i];
            if b < 0x80 {
                if !ASCII_WORD[b as usize] {
                    i += 1;
                    continue;
                }
                if let Some(run) = self.short_ascii_word(bytes, i, &mut buf, &mut out.starts) {
                    i += run;
                    continue;
                }
            } else if folded_cyrillic(&bytes[i..]).is_none() {
                let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
                if !is_word_char(c) {
                    i += c.len_utf8();
                    continue;
                }
            }
            let before = buf.len();
            if before > 0 {
                buf.push(b' ');
            }
            let start = buf.len();
            loop {
                i += push_ascii_run(&bytes[i..], &mut buf);
                if i == bytes.len() || bytes[i] < 0x80 {
                    break;
                }
                if folded_cyrillic(&bytes[i..]).is_some() {
                    while let Some(folded) = folded_cyrillic(&bytes[i..]) {
                        buf.extend_from_slice(&folded);
                        i += 2;
                    }
                    continue;
                }
                let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
                if !is_word_char(c) {
                    break;
                }
                push_folded_bytes(&mut buf, c);
                i += c.len_utf8();
            }
            // Taken back by arithmetic, as in `short_ascii_word`.
            let keep = usize::from(!self.stop.contains_bytes(&buf[start..]));
            buf.truncate(before + keep * (buf.len() - before));
            out.starts.push(start as u32);
            out.starts.truncate(out.starts.len() - 1 + keep);
            if keep == 1 && self.stop.stem {
                // Whole chars were pushed, so the word is UTF-8.
                if let Ok(word) = std::str::from_utf8(&buf[start..]) {
                    if let std::borrow::Cow::Owned(stemmed) = stem(word) {
                        buf.truncate(start);
                        buf.extend_from_slice(stemmed.as_bytes());
                    }
                }
            }
        }
        debug_assert!(std::str::from_utf8(&buf).is_ok());
        // SAFETY: only whole chars were pushed (ASCII word bytes with their case bit set, the
        // UTF-8 of folded chars, and stems, which are strings), and the buffer was only cut
        // back to where a word or its separator began, so the bytes are UTF-8. Checking them
        // again was an eighth of the canonical form's time on Russian text.
        out.buf = unsafe { String::from_utf8_unchecked(buf) };
    }

    /// The common case of [`Canonicalizer::canonicalize_into`], decided on the 16 bytes at
    /// `at` as one number: a word of at most 15 ASCII letters and digits that an ASCII char
    /// follows. Its lower case is the stop-word key itself ([`short_key`]), checked before the
    /// word is copied, and pushed if it is not a stop word. Returns the word's length, or None
    /// when the bytes at `at` are not such a word (fewer than 16 bytes left, a longer word, one
    /// going on beyond ASCII, or stemming on) and the general path decides.
    #[inline]
    fn short_ascii_word(
        &self,
        bytes: &[u8],
        at: usize,
        buf: &mut Vec<u8>,
        starts: &mut Vec<u32>,
    ) -> Option<usize> {
        let chunk: [u8; 16] = bytes.get(at..at + 16)?.try_into().ok()?;
        let x = u128::from_le_bytes(chunk);
        let (low, high) = (x as u64, (x >> 64) as u64);
        // Most words end in the first half, which is classified alone.
        let mut run = ascii_word_run(low);
        let mut word = low | bytes_of(0x20);
        let upper = if run < 8 {
            word &= low_bytes(run);
            0
        } else {
            let more = ascii_word_run(high);
            run += more;
            (high | bytes_of(0x20)) & low_bytes(more)
        };
        // The byte after the word, from the number rather than the array the number was read
        // from (which the processor would wait to forward).
        if run == 16 || (x >> (8 * run)) as u8 >= 0x80 || self.stop.stem {
            return None;
        }
        let word = u128::from(upper) << 64 | u128::from(word);
        self.push_short_word(word, run, buf, starts);
        Some(run)
    }

    /// Pushes a lower-cased word of `len` bytes (1 to 15, the low bytes of `word`, the bytes
    /// above them zero) unless it is a stop word.
    ///
    /// Always inlined: `ascii_block` called it as a function, saving and restoring registers
    /// for every word (one-core signing of the 10k file 400 → 410 MB/s inlined).
    #[inline(always)]
    fn push_short_word(&self, word: u128, len: usize, buf: &mut Vec<u8>, starts: &mut Vec<u32>) {
        // Written whether or not it is a stop word, and taken back by arithmetic: a branch on
        // the answer would be mispredicted for about one word in three.
        let keep = usize::from(!self.stop.contains_short_word(word, len));
        let before = buf.len();
        let start = before + usize::from(before > 0);
        // Written through pointers, the room asked for once: pushes, each checking the room
        // and moving the length, then cut back, made the canonical form 10 % slower (one core,
        // the 10k dev corpus: 350–373 → 390–420 MB/s).
        buf.reserve(1 + 16);
        starts.reserve(1);
        // SAFETY: the room reserved holds a space and the word's 16 bytes after the text, and
        // a place after the starts; the lengths set cover only bytes written here (the space,
        // then the word's `len` bytes, or nothing).
        unsafe {
            let at = buf.as_mut_ptr().add(before);
            at.write(b' ');
            at.add(start - before)
                .cast::<[u8; 16]>()
                .write_unaligned(word.to_le_bytes());
            buf.set_len(before + keep * (start - before + len));
            starts.as_mut_ptr().add(starts.len()).write(start as u32);
            starts.set_len(starts.len() + keep);
        }
    }

    /// The words of the `BLOCK` bytes at `at` (`block`), found from one mask of its word
    /// bytes rather than a byte and a word at a time: each ASCII word of at most 15 bytes
    /// that an ASCII char ends inside the block is pushed as [`Canonicalizer::short_ascii_word`]
    /// pushes it, and the chars between words are passed over. Returns how many bytes were
    /// done: up to the first word it leaves to the general path (a longer word, one that
    /// may go on past the block or into a char beyond ASCII), or up to that char, or the
    /// whole block.
    ///
    /// Not inlined: out of the canonical form's loop, it left that loop's registers alone and
    /// ran faster itself (English text 348 → 392 MB/s).
    #[inline(never)]
    fn ascii_block(
        &self,
        bytes: &[u8],
        at: usize,
        block: &[u8; BLOCK],
        buf: &mut Vec<u8>,
        starts: &mut Vec<u32>,
    ) -> usize {
        let (words, beyond) = block_masks(block);
        let limit = beyond.trailing_zeros() as usize;
        let mut rest = words & !u64::MAX.checked_shl(limit as u32).unwrap_or(0);
        while rest != 0 {
            let start = rest.trailing_zeros() as usize;
            let end = start + (!(words >> start)).trailing_zeros() as usize;
            let len = end - start;
            // A word ending at the limit may go on beyond it.
            if end >= limit || len > 15 {
                return start;
            }
            let Some(chunk) = bytes.get(at + start..at + start + 16) else {
                return start;
            };
            let x = u128::from_le_bytes(chunk.try_into().unwrap_or_default());
            let word = (x | u128::from_le_bytes([0x20; 16])) & ((1u128 << (8 * len)) - 1);
            self.push_short_word(word, len, buf, starts);
            rest &= u64::MAX << end;
        }
        limit
    }

    /// Canonical form of `text` as a new value.
    pub fn canonicalize(&mut self, text: &str) -> CanonText {
        let mut out = CanonText::default();
        self.canonicalize_into(text, &mut out);
        out
    }
}

/// Bytes of text [`Canonicalizer::ascii_block`] reads at once: a mask bit each.
const BLOCK: usize = 64;

/// Of the [`BLOCK`] bytes of `block`, a bit each (bit k for byte k): where it is an ASCII letter
/// or digit, and where it is not ASCII. Sixteen bytes to an SSE2 comparison (every x86_64 CPU
/// has SSE2).
#[cfg(target_arch = "x86_64")]
#[inline]
fn block_masks(block: &[u8; BLOCK]) -> (u64, u64) {
    use std::arch::x86_64::*;
    let (mut words, mut beyond) = (0u64, 0u64);
    for k in 0..BLOCK / 16 {
        // SAFETY: SSE2 is part of every x86_64 CPU, and the load reads 16 bytes of the 64 in
        // `block`; an unaligned load takes any address.
        let (word, high) = unsafe {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            // Signed comparisons: a byte beyond ASCII is negative and in no range.
            let within = |x: __m128i, lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmpgt_epi8(_mm_set1_epi8(hi as i8 + 1), x),
                )
            };
            // Upper case letters join the lower case ones; no other byte enters 'a'..='z'.
            let letter = within(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', b'z');
            let digit = within(v, b'0', b'9');
            (
                _mm_movemask_epi8(_mm_or_si128(letter, digit)) as u16,
                _mm_movemask_epi8(v) as u16,
            )
        };
        words |= u64::from(word) << (16 * k);
        beyond |= u64::from(high) << (16 * k);
    }
    (words, beyond)
}

/// [`block_masks`] eight bytes at a time in a `u64`, where there is no SSE2.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
fn block_masks_swar(block: &[u8; BLOCK]) -> (u64, u64) {
    // The high bit of each byte of 8, gathered into the low 8 bits of the result.
    let gather = |high: u64| ((high >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let (mut words, mut beyond) = (0u64, 0u64);
    for (k, chunk) in block.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        words |= gather(ascii_word_bytes(x)) << (8 * k);
        beyond |= gather(x & HIGH_BITS) << (8 * k);
    }
    (words, beyond)
}

#[cfg(not(target_arch = "x86_64"))]
use block_masks_swar as block_masks;

/// Whether the 8 bytes at `at` are there and all ASCII.
#[inline]
fn ascii_ahead(bytes: &[u8], at: usize) -> bool {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .is_some_and(|b| u64::from_le_bytes(b) & HIGH_BITS == 0)
}

/// The high bit of each of 8 bytes.
const HIGH_BITS: u64 = u64::from_le_bytes([0x80; 8]);
/// 8 bytes of `b`.
const fn bytes_of(b: u8) -> u64 {
    u64::from_le_bytes([b; 8])
}

/// The high bit set in each byte of `x` (8 bytes of text) that is an ASCII letter or digit,
/// computed for all at once: with the high bits cleared, adding `0x80 - lo` to a byte sets its
/// high bit exactly when it is at least `lo`, and no sum carries into the next byte.
#[inline]
fn ascii_word_bytes(x: u64) -> u64 {
    let low = x & !HIGH_BITS;
    // Upper case letters join the lower case ones; no other byte enters 'a'..='z' by it.
    let folded = low | bytes_of(0x20);
    let at_least = |v: u64, lo: u8| v + bytes_of(0x80 - lo);
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    let digit = at_least(low, b'0') & !at_least(low, b'9' + 1);
    (letter | digit) & !x & HIGH_BITS
}

/// A mask of the lowest `n` bytes of 8.
#[inline]
fn low_bytes(n: usize) -> u64 {
    !u64::MAX.checked_shl(8 * n as u32).unwrap_or(0)
}

/// How many of the 8 bytes of `x` (from the lowest) are ASCII letters and digits before the
/// first that is not.
#[inline]
fn ascii_word_run(x: u64) -> usize {
    ((!ascii_word_bytes(x) & HIGH_BITS).trailing_zeros() / 8) as usize
}

/// The length of the run of ASCII letters and digits that `bytes` starts with, found eight
/// bytes at a time.
#[inline]
fn ascii_run_len(bytes: &[u8]) -> usize {
    let mut n = 0;
    while let Some(chunk) = bytes.get(n..n + 8) {
        let run = ascii_word_run(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        n += run;
        if run < 8 {
            return n;
        }
    }
    n + bytes[n..]
        .iter()
        .take_while(|&&b| b < 0x80 && ASCII_WORD[b as usize])
        .count()
}

/// Pushes the lower case of the run of ASCII letters and digits that `bytes` starts with onto
/// `buf` (a letter's or digit's lower case is its 0x20 bit set), and returns its length.
#[inline]
fn push_ascii_run(bytes: &[u8], buf: &mut Vec<u8>) -> usize {
    let n = ascii_run_len(bytes);
    buf.extend(bytes[..n].iter().map(|&b| b | 0x20));
    n
}

/// Which ASCII bytes are word chars ([`is_word_char`]).
const ASCII_WORD: [bool; 128] = {
    let mut word = [false; 128];
    let mut b = 0;
    while b < 128 {
        word[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    word
};

/// Number of words in a text as a reader counts them (runs of letters/digits), stop words included.
pub fn count_words(text: &str) -> usize {
    // ASCII bytes decided without decoding (the fast path of `canonicalize_into`) and by a
    // table, the rest of a run of them eight at a time: decoding every char was 2 % of a
    // build's CPU.
    const BLOCK: usize = 64;
    let bytes = text.as_bytes();
    let mut n = 0;
    let mut in_word = false;
    let mut i = 0;
    while i < bytes.len() {
        // A block of ASCII bytes: word starts counted with comparisons and no branch a byte,
        // which the compiler turns into vector operations.
        if let Some(block) = bytes.get(i..i + BLOCK).filter(|b| b.is_ascii()) {
            let mut word = [0u8; BLOCK + 1];
            word[0] = u8::from(in_word);
            for (w, &b) in word[1..].iter_mut().zip(block) {
                let folded = b | 0x20;
                // A byte below a range wraps round to a large number: one comparison a range.
                *w = u8::from((folded.wrapping_sub(b'a') < 26) | (b.wrapping_sub(b'0') < 10));
            }
            // A byte of 1 after a byte of 0 starts a word (`!prev` keeps bit 0 only after 0).
            let starts = word[1..]
                .iter()
                .zip(&word[..BLOCK])
                .fold(0u8, |sum, (&w, &prev)| sum + (w & !prev));
            n += usize::from(starts);
            in_word = word[BLOCK] == 1;
            i += BLOCK;
            continue;
        }
        let b = bytes[i];
        let w = if b < 0x80 {
            i += 1;
            let w = ASCII_WORD[b as usize];
            if w {
                i += ascii_run_len(&bytes[i..]);
            }
            w
        } else {
            let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
            i += c.len_utf8();
            is_word_char(c)
        };
        if w && !in_word {
            n += 1;
        }
        in_word = w;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_counted_as_runs_of_word_chars() {
        let by_chars = |t: &str| {
            let mut n = 0;
            let mut in_word = false;
            for c in t.chars() {
                n += usize::from(is_word_char(c) && !in_word);
                in_word = is_word_char(c);
            }
            n
        };
        for t in [
            "",
            "one",
            " two  words ",
            "Ёжик в\u{a0}тумане, 2024",
            "e\u{301}te\u{301} — 日本語 x",
            "a1-b2_c3",
            "\u{fffd}a\u{fffd}",
        ] {
            assert_eq!(count_words(t), by_chars(t), "{t:?}");
        }
        for c in (0..0x3100u32).filter_map(char::from_u32) {
            let t = format!("a{c}b {c} {c}{c}c");
            assert_eq!(count_words(&t), by_chars(&t), "{c:?}");
            // Runs of ASCII word chars are passed by eight bytes at a time.
            for len in [7, 8, 9, 16, 17] {
                let t = format!("{c}{}{c}x{c}", &"Abcdefgh12345678Z"[..len]);
                assert_eq!(count_words(&t), by_chars(&t), "{t:?}");
            }
        }
        // Blocks of 64 ASCII bytes are counted by comparisons: every ASCII char, words across
        // the blocks' edges, and blocks beside chars beyond ASCII.
        let mut pieces: Vec<String> = (0..128u8).map(|b| char::from(b).to_string()).collect();
        pieces.extend(["word", "Abcdefghij", "é", "Ёж", "e\u{301}", "日", " "].map(String::from));
        let mut state = 3u64;
        let mut next = |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % below
        };
        for _ in 0..3000 {
            let t: String = (0..next(200))
                .map(|_| pieces[next(pieces.len())].as_str())
                .collect();
            assert_eq!(count_words(&t), by_chars(&t), "{t:?}");
        }
    }

    fn canon(text: &str) -> Vec<String> {
        let stop = StopWords::default_shared();
        let mut c = Canonicalizer::new(stop);
        c.canonicalize(text).words().map(str::to_string).collect()
    }

    /// The canonical form by its definition, a character at a time: what the fast paths of
    /// `canonicalize_into` and `push_folded` must reproduce.
    fn reference(text: &str, stop: &StopWords) -> String {
        let mut words = Vec::new();
        let mut word = String::new();
        for c in text.chars().chain([' ']) {
            if is_word_char(c) {
                for l in c.to_lowercase() {
                    word.push(if l == 'ё' { 'е' } else { l });
                }
            } else if !word.is_empty() {
                if !stop.contains(&word) {
                    words.push(if stop.stems() {
                        stem(&word).into_owned()
                    } else {
                        word.clone()
                    });
                }
                word.clear();
            }
        }
        words.join(" ")
    }

    #[test]
    fn fast_paths_agree_with_the_definition() {
        let pieces = [
            "The",
            "dog",
            "ÉCOLE",
            "café",
            "Ёлка",
            "ЁЖ",
            "и",
            "в",
            "Москва",
            "İstanbul",
            "ß",
            "ǅemal",
            "x\u{0301}y",
            "Ǆ",
            "١٢٣",
            "日本語",
            "—",
            ", ",
            "  ",
            "\n",
            "42nd",
            "ДОМ-2",
            "o'clock",
            "straße",
            "ΣΊΣΥΦΟΣ",
            "a",
            "THEM",
            "Ω",
            "Ж",
            "\u{FFFD}",
            "ѣ",
            "Її",
            // Words around the 8- and 16-byte chunks the ASCII path reads, stop words among
            // them (`yourselves`, `themselves`), and the chars beside the letters' ranges.
            "abcdefg",
            "Abcdefgh",
            "ABCDEFGHIJKLMNO",
            "abcdefghijklmnop",
            "Internationalization",
            "YOURSELVES",
            "themselves",
            "1234567890123456",
            "Z9@[`{z",
        ];
        let mut state = 11u64;
        let mut texts: Vec<String> = pieces.iter().map(|p| p.to_string()).collect();
        for _ in 0..300 {
            let mut t = String::new();
            for _ in 0..12 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                t.push_str(pieces[(state >> 33) as usize % pieces.len()]);
                if state >> 60 & 1 == 1 {
                    t.push(' ');
                }
            }
            texts.push(t);
        }
        // Every ASCII char after words of each length up to 17, and inside them.
        for c in (0..0x80u8).map(char::from) {
            for len in 1..18 {
                let word = &"ThemselvesAbcdefgh"[..len];
                texts.push(format!("{word}{c}{word}{c} Ourselves{c}{word}{c}"));
            }
        }
        // Texts longer than the 64-byte blocks read by one mask, shifted a byte at a time so
        // that every kind of word meets the block's edge, and chars beyond ASCII near it.
        let long = "The dog, Abcdefgh and ABCDEFGHIJKLMNO met themselves 42nd; \
                    abcdefghijklmnop ourselves café x Москва ёлка\tZ9@[`{z o'clock Internationalization \
                    a b c YOURSELVES 1234567890123456 end.";
        for shift in 0..140 {
            texts.push(format!("{}{long}", "-".repeat(shift)));
            texts.push(format!("{}{long}{long}", "ab ".repeat(shift / 3)));
        }
        // Every char beside ASCII and Cyrillic words, inside them and alone.
        for c in (0..0x3100u32).filter_map(char::from_u32) {
            texts.push(format!("a{c}b {c} {c}{c}c Ж{c}ж The{c} и{c}"));
        }
        let lists = [
            StopWords::default_shared().clone(),
            StopWords::none(),
            StopWords::default_shared().clone().with_stemming(true),
        ];
        for stop in &lists {
            let mut c = Canonicalizer::new(stop);
            for t in &texts {
                let got = c.canonicalize(t);
                assert_eq!(got.buf, reference(t, stop), "{t:?}");
                let words: Vec<&str> = got.words().collect();
                assert_eq!(words.join(" "), got.buf, "{t:?}");
            }
        }
    }

    #[test]
    fn the_table_finds_every_stop_word_and_nothing_else() {
        let stop = StopWords::default_shared();
        assert!(stop.words.len() > 300);
        // Slovenian and Kazakh have stop words too long for a short key; every list at once
        // is thousands of keys, which the table grows for.
        let long = StopWords::for_languages(&["sl".into(), "kk".into()]).unwrap();
        assert!(long.words.iter().any(|w| w.len() >= 16));
        let all: Vec<String> = NLTK_LANGS.iter().map(|l| l.to_string()).collect();
        let all = StopWords::for_languages(&all).unwrap();
        assert!(all.words.len() > 5000, "{}", all.words.len());
        for list in [stop, &long, &all] {
            for w in &list.words {
                let w = std::str::from_utf8(w).unwrap();
                assert!(list.contains(w), "{w}");
                // Near misses: one byte changed, cut short, one letter more.
                let mut near: Vec<String> = vec![format!("{w}q"), format!("q{w}")];
                let chars: Vec<char> = w.chars().collect();
                for k in 0..chars.len() {
                    near.push(chars[..k].iter().collect());
                    let mut changed = chars.clone();
                    changed[k] = if changed[k] == 'x' { 'y' } else { 'x' };
                    near.push(changed.into_iter().collect());
                }
                for n in near {
                    let expected = list.words.contains(n.as_bytes());
                    assert_eq!(list.contains(&n), expected, "{n:?} near {w:?}");
                }
            }
        }
        assert!(long.contains("oseminštirideset") && !long.contains("oseminštiridese"));
        for w in ["tie", "toe", "иx", "ix", "", "themselvesandmore"] {
            assert!(!stop.contains(w), "{w}");
        }
        assert!(!StopWords::none().contains("the") && !StopWords::none().contains(""));
    }

    #[test]
    fn block_masks_mark_ascii_word_bytes_and_bytes_beyond_ascii() {
        let mut state = 5u64;
        for round in 0..2000 {
            let block: [u8; BLOCK] = std::array::from_fn(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Every byte value, and in half the rounds ASCII alone.
                (state >> 56) as u8 & if round % 2 == 0 { 0x7F } else { 0xFF }
            });
            let (mut words, mut beyond) = (0u64, 0u64);
            for (k, &b) in block.iter().enumerate() {
                words |= u64::from(b.is_ascii_alphanumeric()) << k;
                beyond |= u64::from(!b.is_ascii()) << k;
            }
            assert_eq!(block_masks(&block), (words, beyond), "{block:?}");
            assert_eq!(block_masks_swar(&block), (words, beyond), "{block:?}");
        }
    }

    #[test]
    fn lowercases_and_drops_punctuation_and_stop_words() {
        assert_eq!(
            canon("The Dog, and THE cat! Ran-away."),
            vec!["dog", "cat", "ran", "away"]
        );
    }

    #[test]
    fn russian_stop_words_and_yo_folding() {
        // «и», «в», «на» are NLTK Russian stop words; «Ёлка» folds to «елка».
        assert_eq!(
            canon("Ёлка и берёза в лесу, на опушке."),
            vec!["елка", "береза", "лесу", "опушке"]
        );
    }

    #[test]
    fn mixed_scripts_and_digits_are_words() {
        assert_eq!(
            canon("Породы собак: 300 breeds"),
            vec!["породы", "собак", "300", "breeds"]
        );
    }

    #[test]
    fn spans_cover_consecutive_words() {
        let stop = StopWords::none();
        let mut c = Canonicalizer::new(&stop);
        let t = c.canonicalize("a bb ccc dddd");
        assert_eq!(t.span(1, 2), b"bb ccc");
        assert_eq!(t.span(0, 4), b"a bb ccc dddd");
    }

    #[test]
    fn stemming_folds_inflections_after_stop_words() {
        let stop = StopWords::default_shared().clone().with_stemming(true);
        let mut c = Canonicalizer::new(&stop);
        let a: Vec<String> = c
            .canonicalize("Литовские земли и литовской земле; the breeds")
            .words()
            .map(str::to_string)
            .collect();
        // «и» and «the» are stop words before stemming; the inflected pairs share a stem.
        assert_eq!(a.len(), 5);
        assert_eq!(a[0], a[2]);
        assert_eq!(a[1], a[3]);
        assert_eq!(a[4], "breed");
        assert_eq!(stem("овчарки"), stem("овчарка"));
        assert_eq!(stem("собаками"), stem("собака"));
    }

    #[test]
    fn unknown_stop_language_is_an_error() {
        assert!(StopWords::for_languages(&["xx".to_string()]).is_err());
        let asked = |l: &[&str]| {
            StopWords::have_lists(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(asked(&["ru", "en"]), Ok(()));
        let e = asked(&["ru", "xx", "en"]).unwrap_err();
        assert!(e.starts_with("no stop-word list for language `xx`"), "{e}");
        assert_eq!(
            StopWords::for_languages(&["ru".to_string(), "xx".to_string()]).unwrap_err(),
            e,
            "the same check"
        );
    }

    #[test]
    fn counts_words_with_stop_words() {
        assert_eq!(count_words("The dog — и кот, 2 раза."), 6);
    }
}
