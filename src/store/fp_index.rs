//! The fingerprint index (fingerprint → documents), through which an update finds the stored
//! documents sharing a fingerprint with a newcomer.
//!
//! The index is made from the documents' signatures (`signature.rs`, one value per document):
//! every (fingerprint, document) pair, the fingerprint replaced by its key ([`key_of`], a
//! bijection), sorted in memory a range of keys at a time, cut into buckets by the key's top
//! bits and written as one BLOB per bucket (`fp_buckets`), each holding its pairs in order, 12
//! bytes apiece. A bucket holds about [`BUCKET_ENTRIES`] pairs, so it fits in one page of the
//! store, and a lookup reads the buckets of the fingerprints asked for and searches each. Stores before schema v17 had SQLite sort a B-tree over a table of postings
//! instead: 4–6 s of a build's CPU and 154 MB of its 213 MB store on the 80k dev corpus.
//!
//! The index covers the documents up to a number, the split; those after it (an update's
//! newcomers) have no index, and a lookup reads their signatures in order, checking each
//! fingerprint against those asked for, so that an update appends a row per newcomer and
//! touches no bucket. When the documents after the split outnumber a share of those before it,
//! the next [`Store::index_postings`] makes the index again up to the newest document.
//!
//! Beside the buckets, a Bloom filter of the index's fingerprints ([`Filter`], `fp_filter`)
//! tells a lookup which of the fingerprints asked for the index may hold, so that it reads
//! the buckets of those alone: an update's newcomers are mostly new text.
//!
//! The split and the widths of the buckets and the filter live in one meta value written in
//! the transaction that writes the buckets, so they can never disagree with them; without it (a build is storing
//! documents, or was killed before making the index, or the store was just migrated) every
//! signature is read in order.

use crate::error::StoreCorrupt;
use crate::store::signature::unpack_into;
use crate::store::{At, Store};
use anyhow::Result;
use rusqlite::OptionalExtension;
use rustc_hash::FxHashSet;

/// The meta key of the index's state: "SPLIT BITS FILTER" ([`parse_state`]).
const STATE: &str = "fp_index";

/// Pairs a bucket holds on average, at most: 2.4 KB, so that a bucket with a few more than
/// its share still fits in a 4 KB page and a lookup reads one page for it.
const BUCKET_ENTRIES: u64 = 200;

/// Bytes of one (key, document) pair in a bucket.
const ENTRY: usize = 12;

/// Pairs sorted in memory at once: making the index reads the signatures once for every this
/// many pairs, so that its memory stays near 13 MB whatever the store's size (it runs beside
/// the build's engine, at the build's peak).
const PASS_ENTRIES: u64 = 1 << 20;

/// A (fingerprint's key, document) pair as it is sorted: 12 bytes, as in a bucket, not 16.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(C, packed)]
struct Pair {
    key: u64,
    doc: u32,
}

/// The documents after the split are indexed once they are more than one in this many of
/// those before it. Making the index costs about 13 µs a stored document (1.0 s for the 80k
/// dev corpus's 80,000 documents and 5.26 million pairs), reading a document after the split
/// about 1 µs in every update: at 100,000 documents and updates of 1,000, a share of 4 makes
/// the index every 25 updates (52 ms each, spread) and reads 12,500 documents on average
/// (12 ms); the least sum, near a share of 2, is 51 ms, a difference lost in an update's
/// 0.6 s.
const RECENT_SHARE: i64 = 4;

/// Signatures the caller holds, from which [`Store::index_postings_held`] makes the index.
pub struct HeldSignatures<'a> {
    /// (document number, its signature), by number.
    by_num: Vec<(i64, &'a [u64])>,
}

impl<'a> HeldSignatures<'a> {
    /// The signatures of the documents numbered, in any order.
    pub fn new(signed: impl IntoIterator<Item = (i64, &'a [u64])>) -> Self {
        let mut by_num: Vec<(i64, &[u64])> = signed.into_iter().collect();
        by_num.sort_unstable_by_key(|&(num, _)| num);
        HeldSignatures { by_num }
    }

    /// Their (fingerprint, document) pairs.
    fn pairs(&self) -> u64 {
        self.by_num.iter().map(|(_, sig)| sig.len() as u64).sum()
    }
}

/// Where making the index reads the signatures.
#[derive(Clone, Copy)]
enum Signed<'a> {
    /// The store's own, read once a pass.
    Stored,
    /// The caller's.
    Held(&'a HeldSignatures<'a>),
}

/// How the fingerprint index stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Split {
    /// No index: every signature is read in order.
    Missing,
    /// An index of the documents up to `split`, in buckets by the top `bits` bits of the
    /// fingerprint; those after it are read in order. `filter`: the width of the index's
    /// filter ([`Filter`]), 0 for an index made before there was one.
    At { split: i64, bits: u32, filter: u32 },
}

/// Which fingerprints the index may hold: a bit array (a Bloom filter) with two bits set for
/// each fingerprint of the index, read by a lookup before any bucket. An update's newcomers
/// are mostly new text: of the 41,441 fingerprints of 1,000 newcomers to a 100,000-document
/// store, 1,827 are in the index, but reading the buckets of all of them read most of the
/// index (32,768 buckets), so the lookup's cost followed the store's size. A fingerprint the
/// index holds always passes; one it lacks, by chance, once in 15 to 40 (4 to 8 bits a pair;
/// in that store, once in 23).
struct Filter {
    bytes: Vec<u8>,
    bits: u32,
}

/// Filter bits for each (fingerprint, document) pair, at least (rounded up to a power of two).
const FILTER_BITS_PER_PAIR: u64 = 4;

/// The widest filter: 2^30 bits, 128 MiB, for a billion pairs and beyond.
const MAX_FILTER_BITS: u32 = 30;

/// Bytes of the filter a lookup reads at a time.
const FILTER_PIECE: usize = 64 * 1024;

impl Filter {
    /// An empty filter for an index of `pairs` pairs.
    fn for_pairs(pairs: u64) -> Filter {
        let want = (pairs * FILTER_BITS_PER_PAIR).max(64);
        let bits = (64 - (want - 1).leading_zeros()).min(MAX_FILTER_BITS);
        Filter {
            bytes: vec![0; (1usize << bits) / 8],
            bits,
        }
    }

    fn insert(&mut self, key: u64) {
        for at in filter_places(key, self.bits) {
            self.bytes[at / 8] |= 1 << (at % 8);
        }
    }
}

/// The two bits of `key` in a filter `bits` wide: its top bits, and the top bits of its low
/// half (the key is a mix whose bits are independent, so the two places are too).
fn filter_places(key: u64, bits: u32) -> [usize; 2] {
    let shift = 64 - bits;
    [
        (key >> shift) as usize,
        (key.rotate_left(32) >> shift) as usize,
    ]
}

/// Whether the filter `bytes`, `bits` wide, may hold `key`, all in memory: what a lookup's
/// reading of the stored filter in pieces ([`keep_in_filter`]) must agree with.
#[cfg(test)]
fn may_hold(bytes: &[u8], bits: u32, key: u64) -> bool {
    filter_places(key, bits)
        .iter()
        .all(|&at| bit_is_set(bytes[at / 8], at))
}

/// Keeps of `keyed` the keys whose two bits are set in the filter `blob`, `bits` wide, read
/// `piece` bytes at a time from its start, each key's bits taken in the filter's order.
fn keep_in_filter(
    blob: &rusqlite::blob::Blob<'_>,
    bits: u32,
    keyed: &mut Vec<(u64, u64)>,
    piece: usize,
) -> rusqlite::Result<()> {
    let mut places: Vec<u64> = keyed
        .iter()
        .enumerate()
        .flat_map(|(i, &(key, _))| filter_places(key, bits).map(|at| (at as u64) << 32 | i as u64))
        .collect();
    places.sort_unstable();
    let mut set = vec![0u8; keyed.len()];
    let mut buf = vec![0u8; piece.min(blob.len())];
    let mut next = places.iter().peekable();
    let mut start = 0;
    while start < blob.len() && next.peek().is_some() {
        let len = buf.len().min(blob.len() - start);
        blob.read_at_exact(&mut buf[..len], start)?;
        while let Some(&&place) = next.peek() {
            let at = (place >> 32) as usize;
            if at / 8 >= start + len {
                break;
            }
            set[(place & 0xffff_ffff) as usize] += u8::from(bit_is_set(buf[at / 8 - start], at));
            next.next();
        }
        start += len;
    }
    let mut both = set.iter().map(|&n| n == 2);
    keyed.retain(|_| both.next() == Some(true));
    Ok(())
}

/// Whether the filter's bit `at` is set in `byte`, the byte that holds it.
fn bit_is_set(byte: u8, at: usize) -> bool {
    byte & (1 << (at % 8)) != 0
}

/// What is wrong with a filter `bits` wide stored in `len` bytes, if anything: the one check a
/// lookup and `collect doctor` both make.
fn torn_filter(bits: u32, len: Option<usize>) -> Option<String> {
    let whole = (6..=MAX_FILTER_BITS).contains(&bits) && len == Some((1usize << bits) / 8);
    (!whole).then(|| {
        format!(
            "the fingerprint index's filter of 2^{bits} bits is {}",
            len.map_or("missing".to_string(), |n| format!("{n} bytes"))
        )
    })
}

/// The key the index orders a fingerprint by: splitmix64's finalizer, a bijection whose top
/// bits are spread evenly. Fingerprints themselves are not: the default detector's are CRC-32s,
/// all below 2^32, and other detectors tag their top bits, so buckets by the fingerprint's own
/// top bits held nearly every pair in a few of them.
fn key_of(fp: u64) -> u64 {
    let mut z = fp;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The split and the widths of the buckets and the filter that the index's state gives:
/// "SPLIT BITS FILTER", or "SPLIT BITS" for an index made before there was a filter (width 0).
fn parse_state(state: &str) -> Option<(i64, u32, u32)> {
    let fields: Vec<&str> = state.split(' ').collect();
    let (split, bits, filter) = match fields.as_slice() {
        [split, bits] => (split, bits, "0"),
        [split, bits, filter] => (split, bits, *filter),
        _ => return None,
    };
    Some((
        split.parse().ok()?,
        bits.parse().ok()?,
        filter.parse().ok()?,
    ))
}

/// The bucket of `key` among `1 << bits`.
fn bucket_of(key: u64, bits: u32) -> u64 {
    if bits == 0 {
        0
    } else {
        key >> (64 - bits)
    }
}

/// Whether `key` falls in one of the `buckets` (a pass's), by one comparison.
fn in_buckets(key: u64, bits: u32, buckets: std::ops::Range<u64>) -> bool {
    bucket_of(key, bits).wrapping_sub(buckets.start) < buckets.end - buckets.start
}

/// What is wrong with a bucket value of `len` bytes, if it is not whole entries: the one check
/// a lookup and `collect doctor` both make.
fn torn_bucket(bucket: u64, len: usize) -> Option<String> {
    (!len.is_multiple_of(ENTRY))
        .then(|| format!("fingerprint index bucket {bucket} has {len} bytes, not whole entries"))
}

/// The bucket width for `pairs` pairs: the fewest bits that leave [`BUCKET_ENTRIES`] or fewer
/// pairs to a bucket on average.
fn bits_for(pairs: u64) -> u32 {
    let mut bits = 0;
    while bits < 48 && pairs > BUCKET_ENTRIES << bits {
        bits += 1;
    }
    bits
}

impl Store {
    fn damaged(&self, what: String) -> anyhow::Error {
        StoreCorrupt {
            path: self.path.clone(),
            what,
        }
        .into()
    }

    fn fp_split(&self) -> Result<Split> {
        let Some(state) = self.meta(STATE)? else {
            return Ok(Split::Missing);
        };
        match parse_state(&state) {
            Some((split, bits, filter)) if bits <= 48 && filter <= MAX_FILTER_BITS => {
                Ok(Split::At {
                    split,
                    bits,
                    filter,
                })
            }
            _ => Err(self.damaged(format!(
                "the fingerprint index has an unreadable state: {state:?}"
            ))),
        }
    }

    /// Keeps of `keyed` (key, fingerprint) the keys that the index's filter, `bits` wide, may
    /// hold. The filter is read in pieces into one small buffer: read as a whole value, SQLite
    /// copied the 4 MiB filter of a 100,000-document store into memory fresh for each lookup,
    /// and the kernel's zeroing of those pages cost much of the read (an update of +1,000 there:
    /// 4.5–6.3 ms whole, 2.7–3.9 ms in pieces, the same 3,513 keys kept).
    fn retain_in_filter(&self, bits: u32, keyed: &mut Vec<(u64, u64)>) -> Result<()> {
        let blob =
            match self
                .conn
                .blob_open(rusqlite::DatabaseName::Main, "fp_filter", "bits", 0, true)
            {
                Ok(blob) => blob,
                // No filter row ("no such rowid"): the index is torn, as a filter of the wrong
                // length is.
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::Unknown =>
                {
                    return Err(self.damaged(torn_filter(bits, None).unwrap_or_default()))
                }
                Err(e) => return Err(e).at(&self.path),
            };
        if let Some(torn) = torn_filter(bits, Some(blob.len())) {
            return Err(self.damaged(torn));
        }
        keep_in_filter(&blob, bits, keyed, FILTER_PIECE).at(&self.path)
    }

    /// What is wrong with the index's filter, `bits` wide, if anything.
    fn filter_problem(&self, bits: u32) -> Result<Option<String>> {
        let len: Option<i64> = self
            .conn
            .query_row(
                "SELECT length(bits) FROM fp_filter WHERE part = 0",
                [],
                |r| r.get(0),
            )
            .optional()
            .at(&self.path)?;
        Ok(torn_filter(bits, len.map(|n| n as usize)))
    }

    /// Drops the fingerprint index while a build stores documents, so that lookups never take
    /// an index of documents that a rebuild is replacing for the truth.
    pub fn defer_postings_index(&self) -> Result<()> {
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        tx.execute_batch(&format!(
            "DELETE FROM meta WHERE key = '{STATE}'; DELETE FROM fp_buckets; DELETE FROM fp_filter;"
        ))
        .at(&self.path)?;
        tx.commit().at(&self.path)
    }

    /// Makes the fingerprint index if it is missing, and makes it again up to the newest
    /// document when the documents after the split have outgrown [`RECENT_SHARE`]; otherwise
    /// leaves it, and newcomers' signatures are read in order.
    pub fn index_postings(&self) -> Result<()> {
        self.index_postings_from(Signed::Stored)
    }

    /// [`Store::index_postings`] from signatures the caller holds, which must be every
    /// signature the store holds: the build's, kept as it stored them, so that making the
    /// index does not read the store's signatures once a pass (80k dev corpus: six reads of
    /// 40 MB, 0.37–0.44 s of a core beside the engine).
    pub fn index_postings_held(&self, held: &HeldSignatures<'_>) -> Result<()> {
        self.index_postings_from(Signed::Held(held))
    }

    fn index_postings_from(&self, from: Signed<'_>) -> Result<()> {
        if let Split::At { split, .. } = self.fp_split()? {
            let recent: i64 = self
                .conn
                .query_row(
                    "SELECT COUNT(*) FROM documents WHERE num > ?1",
                    [split],
                    |r| r.get(0),
                )
                .at(&self.path)?;
            // Numbers are given in order and documents are not deleted, so the index holds
            // about `split` documents.
            if recent * RECENT_SHARE <= split.max(1) {
                return Ok(());
            }
        }
        self.make_fp_index(PASS_ENTRIES, from)
    }

    /// Makes the fingerprint index up to the newest document from the signatures `from`,
    /// sorting at most `pass_entries` pairs at a time.
    fn make_fp_index(&self, pass_entries: u64, from: Signed<'_>) -> Result<()> {
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        // The split is the newest document, signed or not, so that the documents counted
        // after it are exactly those the index does not cover.
        let (newest, bytes): (i64, i64) = tx
            .query_row(
                "SELECT (SELECT COALESCE(MAX(num), 0) FROM documents),
                        (SELECT COALESCE(SUM(length(fps)), 0) FROM signatures)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .at(&self.path)?;
        if u32::try_from(newest).is_err() {
            anyhow::bail!(
                "{}: document number {newest} is beyond what the fingerprint index holds (2^32)",
                self.path.display()
            );
        }
        let pairs = bytes as u64 / 8;
        // Held signatures that are not all the store's (a caller's mistake) would make an index
        // that misses documents: the store's are read instead. The sum costs a read of the
        // table's pages, not of the signatures (80k dev corpus: 20 ms).
        let from = match from {
            Signed::Held(held) if held.pairs() != pairs => Signed::Stored,
            other => other,
        };
        let scan = |each: &mut dyn FnMut(i64, &[u64])| -> Result<()> {
            match from {
                Signed::Stored => self.each_signature(0, newest, each),
                Signed::Held(held) => {
                    for &(num, sig) in held.by_num.iter().take_while(|(num, _)| *num <= newest) {
                        each(num, sig);
                    }
                    Ok(())
                }
            }
        };
        let bits = bits_for(pairs);
        let buckets = 1u64 << bits;
        let passes = pairs.div_ceil(pass_entries).clamp(1, buckets);
        let mut filter = Filter::for_pairs(pairs);
        tx.execute_batch("DELETE FROM fp_buckets; DELETE FROM fp_filter;")
            .at(&self.path)?;
        let mut write = tx
            .prepare("INSERT INTO fp_buckets(bucket, entries) VALUES (?1, ?2)")
            .at(&self.path)?;
        let mut entries: Vec<Pair> = Vec::new();
        let mut blob = Vec::new();
        for pass in 0..passes {
            let (first, end) = (buckets * pass / passes, buckets * (pass + 1) / passes);
            // Keys are spread evenly over the buckets: a pass holds its share of the pairs, and
            // an eighth more is room for chance.
            let share = pairs * (end - first) / buckets;
            let mut kept = 0;
            entries.clear();
            entries.resize((share + share / 8 + 64) as usize, Pair { key: 0, doc: 0 });
            scan(&mut |doc, fps| {
                if entries.len() < kept + fps.len() {
                    entries.resize(kept + fps.len() + 4096, Pair { key: 0, doc: 0 });
                }
                // Each pair is written and kept by moving past it when its key is in the pass:
                // a branch on the key, taken at random, cost more than the writes.
                for &fp in fps {
                    let key = key_of(fp);
                    entries[kept] = Pair {
                        key,
                        doc: doc as u32,
                    };
                    kept += usize::from(in_buckets(key, bits, first..end));
                }
            })?;
            entries.truncate(kept);
            // Every pair is in exactly one pass: the filter gets each as its pass keeps it.
            for pair in &entries {
                filter.insert(pair.key);
            }
            // In place: a radix sort (the six passes of the 80k dev corpus 0.11 s, against
            // 0.15 s) needs as much memory again, at the build's peak.
            entries.sort_unstable();
            for bucket in entries.chunk_by(|a, b| bucket_of(a.key, bits) == bucket_of(b.key, bits))
            {
                blob.clear();
                for &Pair { key, doc } in bucket {
                    blob.extend_from_slice(&key.to_le_bytes());
                    blob.extend_from_slice(&doc.to_le_bytes());
                }
                let first = bucket[0].key;
                write
                    .execute(rusqlite::params![bucket_of(first, bits) as i64, blob])
                    .at(&self.path)?;
            }
        }
        drop(write);
        tx.execute(
            "INSERT INTO fp_filter(part, bits) VALUES (0, ?1)",
            [&filter.bytes],
        )
        .at(&self.path)?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            rusqlite::params![STATE, format!("{newest} {bits} {}", filter.bits)],
        )
        .at(&self.path)?;
        tx.commit().at(&self.path)
    }

    /// What is wrong with the fingerprint index, for `collect doctor`: an unreadable state, a
    /// filter missing or not of its width, or buckets that are not whole entries.
    pub(crate) fn fp_index_problems(&self) -> Result<Vec<String>> {
        let filter = match self.fp_split() {
            Err(e) => return Ok(vec![format!("{e:#}")]),
            Ok(Split::At { filter, .. }) => filter,
            Ok(Split::Missing) => 0,
        };
        if filter > 0 {
            if let Some(torn) = self.filter_problem(filter)? {
                return Ok(vec![torn]);
            }
        }
        let mut stmt = self
            .conn
            .prepare("SELECT bucket, length(entries) FROM fp_buckets ORDER BY bucket")
            .at(&self.path)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .at(&self.path)?;
        let mut problems = Vec::new();
        for row in rows {
            let (bucket, len) = row.at(&self.path)?;
            problems.extend(torn_bucket(bucket as u64, len as usize));
        }
        Ok(problems)
    }

    /// The postings `(document, fingerprint)` of any of `fps`, sorted.
    ///
    /// For the documents up to the split, the buckets of the fingerprints are read in one
    /// statement (an array parameter joined to the buckets' table) and searched; the
    /// signatures of those after it are read in order and checked against a hash set of the
    /// fingerprints.
    pub fn postings_of_fingerprints(&self, fps: &[u64]) -> Result<Vec<(i64, u64)>> {
        let mut wanted = fps.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let mut found = Vec::new();
        let after = match self.fp_split()? {
            Split::Missing => 0,
            Split::At {
                split,
                bits,
                filter,
            } => {
                let mut keyed: Vec<(u64, u64)> =
                    wanted.iter().map(|&fp| (key_of(fp), fp)).collect();
                if filter > 0 {
                    self.retain_in_filter(filter, &mut keyed)?;
                }
                keyed.sort_unstable();
                self.indexed_postings(&keyed, bits, &mut found)?;
                split
            }
        };
        let wanted: FxHashSet<u64> = wanted.into_iter().collect();
        self.each_signature(after, i64::MAX, |doc, sig| {
            found.extend(
                sig.iter()
                    .filter(|fp| wanted.contains(fp))
                    .map(|&fp| (doc, fp)),
            );
        })?;
        found.sort_unstable();
        Ok(found)
    }

    /// Calls `each` with the number and signature of every document after `after` up to
    /// `upto`, in number order (the table's own order), each decoded into the same buffer.
    fn each_signature(
        &self,
        after: i64,
        upto: i64,
        mut each: impl FnMut(i64, &[u64]),
    ) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT doc, fps FROM signatures WHERE doc > ?1 AND doc <= ?2")
            .at(&self.path)?;
        let mut rows = stmt.query([after, upto]).at(&self.path)?;
        let mut sig = Vec::new();
        while let Some(row) = rows.next().at(&self.path)? {
            let doc: i64 = row.get(0).at(&self.path)?;
            let damaged = |e: &dyn std::fmt::Display| {
                self.damaged(format!("the signature of document {doc}: {e}"))
            };
            sig.clear();
            let value = row.get_ref(1).at(&self.path)?;
            let value = value.as_blob().map_err(|e| damaged(&e))?;
            unpack_into(value, &mut sig).map_err(|e| damaged(&e))?;
            each(doc, &sig);
        }
        Ok(())
    }

    /// The postings that the buckets hold of the fingerprints `wanted`, given as (key,
    /// fingerprint) sorted by key, without repeats.
    fn indexed_postings(
        &self,
        wanted: &[(u64, u64)],
        bits: u32,
        found: &mut Vec<(i64, u64)>,
    ) -> Result<()> {
        let buckets =
            Store::value_array(wanted.iter().map(|&(key, _)| bucket_of(key, bits) as i64));
        // `CROSS JOIN` keeps the array the outer loop, read in order: knowing nothing of its
        // size, the planner may otherwise scan every bucket.
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT b.bucket, b.entries FROM rarray(?1) q
                 CROSS JOIN fp_buckets b ON b.bucket = q.value",
            )
            .at(&self.path)?;
        let mut rows = stmt.query([buckets]).at(&self.path)?;
        let mut rest = wanted;
        while let Some(row) = rows.next().at(&self.path)? {
            let bucket = row.get::<_, i64>(0).at(&self.path)? as u64;
            let entries = row.get_ref(1).at(&self.path)?;
            let entries = entries
                .as_blob()
                .map_err(|e| self.damaged(format!("fingerprint index bucket {bucket}: {e}")))?;
            if let Some(torn) = torn_bucket(bucket, entries.len()) {
                return Err(self.damaged(torn));
            }
            let key_at = |i: usize| {
                u64::from_le_bytes(entries[i * ENTRY..i * ENTRY + 8].try_into().expect("8"))
            };
            let doc_at = |i: usize| {
                u32::from_le_bytes(
                    entries[i * ENTRY + 8..(i + 1) * ENTRY]
                        .try_into()
                        .expect("4"),
                )
            };
            let n = entries.len() / ENTRY;
            rest = &rest[rest.partition_point(|&(key, _)| bucket_of(key, bits) < bucket)..];
            let here = rest.partition_point(|&(key, _)| bucket_of(key, bits) == bucket);
            let mut at = 0;
            for &(key, fp) in &rest[..here] {
                // Both are sorted: each search starts where the last one ended.
                let (mut lo, mut hi) = (at, n);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if key_at(mid) < key {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                at = lo;
                while at < n && key_at(at) == key {
                    found.push((i64::from(doc_at(at)), fp));
                    at += 1;
                }
            }
            rest = &rest[here..];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(store: &Store, num: i64, fps: &[u64]) {
        let run = store.begin_run("build", "{}").unwrap();
        store
            .conn
            .execute(
                "INSERT INTO documents(num, id, source, source_rank, locator, raw_bytes, words,
                    sha256, status, added_run) VALUES (?1, ?2, 's', 0, 'l', 0, 0, '', 'kept', ?3)",
                rusqlite::params![num, format!("d{num}"), run],
            )
            .unwrap();
        let mut fps = fps.to_vec();
        fps.sort_unstable();
        store
            .conn
            .execute(
                "INSERT INTO signatures(doc, fps) VALUES (?1, ?2)",
                rusqlite::params![num, crate::store::signature::pack(&fps)],
            )
            .unwrap();
    }

    fn lookup(store: &Store, fp: u64) -> Vec<i64> {
        let found = store.postings_of_fingerprints(&[fp]).unwrap();
        assert!(found.iter().all(|&(_, f)| f == fp), "{found:?}");
        found.into_iter().map(|(doc, _)| doc).collect()
    }

    fn buckets(store: &Store) -> i64 {
        store
            .conn
            .query_row("SELECT COUNT(*) FROM fp_buckets", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn newcomers_after_the_split_are_read_in_order_and_lookups_see_both_sides() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        for num in 1..=16 {
            add(&store, num, &[7, 100 + num as u64, u64::MAX - num as u64]);
        }
        store.index_postings().unwrap();
        assert!(matches!(
            store.fp_split().unwrap(),
            Split::At {
                split: 16,
                bits: 0,
                ..
            }
        ));
        add(&store, 17, &[7, 8]);
        add(&store, 18, &[8]);
        store.index_postings().unwrap();
        // Two recent documents against sixteen: within the share, no new index.
        assert!(matches!(
            store.fp_split().unwrap(),
            Split::At {
                split: 16,
                bits: 0,
                ..
            }
        ));
        assert_eq!(lookup(&store, 7), (1..=17).collect::<Vec<_>>());
        assert_eq!(lookup(&store, 8), vec![17, 18]);
        assert_eq!(lookup(&store, 105), vec![5]);
        assert_eq!(lookup(&store, u64::MAX - 3), vec![3]);
        assert!(lookup(&store, 9).is_empty());
        let mut wanted: Vec<(i64, u64)> = (1..=17).map(|doc| (doc, 7)).collect();
        wanted.extend([(5, 105), (17, 8), (18, 8), (2, u64::MAX - 2)]);
        wanted.sort_unstable();
        assert_eq!(
            store
                .postings_of_fingerprints(&[8, 105, 9, 7, u64::MAX - 2, 7])
                .unwrap(),
            wanted,
            "every posting of the fingerprints, from both sides of the split, sorted"
        );
    }

    fn bucket_rows(store: &Store) -> Vec<(i64, Vec<u8>)> {
        let mut stmt = store
            .conn
            .prepare("SELECT bucket, entries FROM fp_buckets ORDER BY bucket")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.collect::<rusqlite::Result<_>>().unwrap()
    }

    /// Spreads `i` over the whole range of fingerprints, as hashes are.
    fn spread(i: u64) -> u64 {
        i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Stores documents 1 to `n`, each with `width` fingerprints of its own, the next
    /// document's `width`, and 0, which all share; gives their signatures.
    fn add_neighbours(store: &Store, n: u64, width: u64) -> Vec<(i64, Vec<u64>)> {
        (1..=n)
            .map(|num| {
                let mut fps: Vec<u64> = (0..width).map(|k| spread(num * width + k)).collect();
                fps.extend((0..width).map(|k| spread((num + 1) * width + k)));
                fps.push(0);
                fps.sort_unstable();
                fps.dedup();
                add(store, num as i64, &fps);
                (num as i64, fps)
            })
            .collect()
    }

    #[test]
    fn an_index_made_from_held_signatures_is_the_one_made_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        // Keys with several documents each, whose order in a bucket the two ways must agree on.
        let mut sigs = add_neighbours(&store, 300, 30);
        store.make_fp_index(3_000, Signed::Stored).unwrap();
        let (stored, state) = (bucket_rows(&store), store.fp_split().unwrap());
        assert!(stored.len() > 50, "{}", stored.len());
        // Handed over in any order.
        sigs.reverse();
        let held = HeldSignatures::new(sigs.iter().map(|(num, fps)| (*num, fps.as_slice())));
        store.defer_postings_index().unwrap();
        store.make_fp_index(3_000, Signed::Held(&held)).unwrap();
        assert_eq!(store.fp_split().unwrap(), state);
        assert!(
            bucket_rows(&store) == stored,
            "the held signatures' index differs"
        );
        // Signatures that are not all the store's: the store's are read instead.
        let partial =
            HeldSignatures::new(sigs[1..].iter().map(|(num, fps)| (*num, fps.as_slice())));
        store.defer_postings_index().unwrap();
        store.make_fp_index(3_000, Signed::Held(&partial)).unwrap();
        assert!(
            bucket_rows(&store) == stored,
            "a partial hand-over was taken"
        );
        assert_eq!(lookup(&store, spread(300 * 30 + 31)), vec![300]);
    }

    #[test]
    fn many_pairs_are_cut_into_buckets_over_several_passes_and_all_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        add_neighbours(&store, 400, 40);
        // Sorted 5,000 pairs at a time: seven passes.
        store.make_fp_index(5_000, Signed::Stored).unwrap();
        let Split::At {
            split: 400, bits, ..
        } = store.fp_split().unwrap()
        else {
            panic!("{:?}", store.fp_split());
        };
        // 400 × 81 pairs: 2^8 buckets of 127 on average.
        assert_eq!(bits, bits_for(400 * 81));
        assert_eq!(bits, 8);
        assert!(buckets(&store) > 250, "{}", buckets(&store));
        for num in [1u64, 77, 400] {
            let a = spread(num * 40 + 3);
            let mut holders = vec![num as i64];
            if num > 1 {
                holders.insert(0, num as i64 - 1);
            }
            assert_eq!(lookup(&store, a), holders, "fingerprint of {num}");
        }
        assert_eq!(lookup(&store, 0), (1..=400).collect::<Vec<_>>());
        // Every posting at once equals the signatures they come from.
        let all: Vec<u64> = (40..401 * 40 + 40).map(spread).chain([0]).collect();
        let found = store.postings_of_fingerprints(&all).unwrap();
        assert_eq!(found.len(), 400 * 81);
    }

    #[test]
    fn passes_cut_the_buckets_without_losing_a_pair() {
        // Every key falls in exactly one pass, the one holding its bucket.
        let keys = [
            0,
            1,
            1 << 63,
            (1 << 63) - 1,
            u64::MAX,
            key_of(42),
            key_of(7),
        ];
        for bits in [0, 1, 5, 48] {
            let buckets = 1u64 << bits;
            let passes = 3.min(buckets);
            for &key in &keys {
                let holding: Vec<u64> = (0..passes)
                    .filter(|&pass| {
                        let (first, end) = (buckets * pass / passes, buckets * (pass + 1) / passes);
                        in_buckets(key, bits, first..end)
                    })
                    .collect();
                assert_eq!(holding.len(), 1, "key {key:#x}, bits {bits}: {holding:?}");
            }
        }
        assert_eq!(bucket_of(u64::MAX, 8), 255);
        // CRC-32 fingerprints, all below 2^32, spread over the buckets by their keys.
        let mut per_bucket = [0u32; 16];
        for fp in 0..16_000u64 {
            per_bucket[bucket_of(key_of(fp * 7919 % (1 << 32)), 4) as usize] += 1;
        }
        assert!(
            per_bucket.iter().all(|&n| (850..1150).contains(&n)),
            "{per_bucket:?}"
        );
        assert_eq!(bucket_of(u64::MAX, 0), 0);
        assert_eq!(bits_for(0), 0);
        assert_eq!(bits_for(BUCKET_ENTRIES), 0);
        assert_eq!(bits_for(BUCKET_ENTRIES + 1), 1);
    }

    #[test]
    fn documents_after_the_split_are_indexed_when_they_outgrow_the_share() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        for num in 1..=8 {
            add(&store, num, &[num as u64]);
        }
        store.index_postings().unwrap();
        add(&store, 9, &[1]);
        add(&store, 10, &[1]);
        store.index_postings().unwrap();
        // Two after the split against eight: one in four, not more.
        assert!(matches!(
            store.fp_split().unwrap(),
            Split::At {
                split: 8,
                bits: 0,
                ..
            }
        ));
        add(&store, 11, &[1]);
        store.index_postings().unwrap();
        assert!(matches!(
            store.fp_split().unwrap(),
            Split::At {
                split: 11,
                bits: 0,
                ..
            }
        ));
        assert_eq!(lookup(&store, 1), vec![1, 9, 10, 11]);
        store.defer_postings_index().unwrap();
        assert_eq!(store.fp_split().unwrap(), Split::Missing);
        assert_eq!(buckets(&store), 0);
        assert_eq!(lookup(&store, 1), vec![1, 9, 10, 11], "read in order");
    }

    #[test]
    fn the_filter_passes_every_fingerprint_it_holds_and_few_others() {
        let mut filter = Filter::for_pairs(10_000);
        assert_eq!(
            filter.bits, 16,
            "4 bits a pair, rounded up to a power of two"
        );
        for i in 0..10_000 {
            filter.insert(key_of(spread(i)));
        }
        let holds = |i: u64| may_hold(&filter.bytes, filter.bits, key_of(spread(i)));
        assert!((0..10_000).all(holds));
        let passed = (10_000..110_000).filter(|&i| holds(i)).count();
        // Two bits of 65,536 set for each of 10,000: (1 - e^(-20000/65536))^2 = 0.069.
        assert!(
            (4_000..10_000).contains(&passed),
            "{passed} of 100,000 passed"
        );
        assert_eq!(torn_filter(16, Some(filter.bytes.len())), None);
        assert!(
            torn_filter(17, Some(filter.bytes.len())).is_some(),
            "a wrong width"
        );
        assert!(
            torn_filter(16, None).is_some(),
            "no filter where the state says one"
        );
    }

    #[test]
    fn the_stored_filter_read_in_pieces_keeps_what_the_whole_filter_holds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let mut filter = Filter::for_pairs(10_000);
        for i in (0..20_000).step_by(2) {
            filter.insert(key_of(spread(i)));
        }
        store
            .conn
            .execute(
                "INSERT INTO fp_filter(part, bits) VALUES (0, ?1)",
                [&filter.bytes],
            )
            .unwrap();
        let blob = store
            .conn
            .blob_open(rusqlite::DatabaseName::Main, "fp_filter", "bits", 0, true)
            .unwrap();
        let all: Vec<(u64, u64)> = (0..20_000).map(|i| (key_of(spread(i)), i)).collect();
        let expected: Vec<(u64, u64)> = all
            .iter()
            .copied()
            .filter(|&(key, _)| may_hold(&filter.bytes, filter.bits, key))
            .collect();
        assert!(
            expected.len() > 10_000 && expected.len() < 12_000,
            "{}",
            expected.len()
        );
        // Pieces that split the 8 KiB filter unevenly, one byte, and more than the whole.
        for piece in [1000, 1, 1 << 20] {
            let mut keyed = all.clone();
            keep_in_filter(&blob, filter.bits, &mut keyed, piece).unwrap();
            assert_eq!(keyed, expected, "pieces of {piece} bytes");
        }
    }

    #[test]
    fn an_index_made_before_the_filter_is_read_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let signed = add_neighbours(&store, 40, 3);
        store.index_postings().unwrap();
        let all: Vec<u64> = signed.iter().flat_map(|(_, fps)| fps.clone()).collect();
        let with_filter = store.postings_of_fingerprints(&all).unwrap();
        // 40 documents of 7 fingerprints: 280 pairs, 1,120 bits at least, 2^11.
        assert!(matches!(
            store.fp_split().unwrap(),
            Split::At { filter: 11, .. }
        ));
        // As an older release left it: "SPLIT BITS", no filter row.
        let Split::At { split, bits, .. } = store.fp_split().unwrap() else {
            panic!("an index");
        };
        store.set_meta(STATE, &format!("{split} {bits}")).unwrap();
        store.conn.execute("DELETE FROM fp_filter", []).unwrap();
        assert!(matches!(
            store.fp_split().unwrap(),
            Split::At { filter: 0, .. }
        ));
        assert_eq!(store.postings_of_fingerprints(&all).unwrap(), with_filter);
        assert!(store.fp_index_problems().unwrap().is_empty());
        let expected: usize = signed.iter().map(|(_, fps)| fps.len()).sum();
        assert_eq!(
            with_filter.len(),
            expected,
            "every posting, through the filter"
        );
    }

    #[test]
    fn a_damaged_bucket_or_state_is_reported_as_damage() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        add(&store, 1, &[5]);
        store.index_postings().unwrap();
        store
            .conn
            .execute("UPDATE fp_buckets SET entries = x'0102'", [])
            .unwrap();
        let e = store.postings_of_fingerprints(&[5]).unwrap_err();
        assert!(e.is::<StoreCorrupt>(), "{e:#}");
        assert!(format!("{e:#}").contains("bucket 0 has 2 bytes"), "{e:#}");
        assert_eq!(
            store.fp_index_problems().unwrap(),
            ["fingerprint index bucket 0 has 2 bytes, not whole entries"],
            "what doctor lists"
        );
        store.set_meta(STATE, "seven").unwrap();
        let e = store.postings_of_fingerprints(&[5]).unwrap_err();
        assert!(format!("{e:#}").contains("unreadable state"), "{e:#}");
        // A torn filter is damage too, for a lookup and for doctor.
        store.defer_postings_index().unwrap();
        store.index_postings().unwrap();
        store
            .conn
            .execute("UPDATE fp_filter SET bits = x'0102'", [])
            .unwrap();
        let e = store.postings_of_fingerprints(&[5]).unwrap_err();
        assert!(e.is::<StoreCorrupt>(), "{e:#}");
        assert!(format!("{e:#}").contains("is 2 bytes"), "{e:#}");
        let problems = store.fp_index_problems().unwrap();
        assert!(
            problems.len() == 1 && problems[0].contains("filter of 2^6 bits is 2 bytes"),
            "{problems:?}"
        );
        // The state says there is a filter and its row is gone.
        store.conn.execute("DELETE FROM fp_filter", []).unwrap();
        let e = store.postings_of_fingerprints(&[5]).unwrap_err();
        assert!(e.is::<StoreCorrupt>(), "{e:#}");
        assert!(format!("{e:#}").contains("is missing"), "{e:#}");
        store.defer_postings_index().unwrap();
        store
            .conn
            .execute("UPDATE signatures SET fps = x'010203'", [])
            .unwrap();
        let e = store.postings_of_fingerprints(&[5]).unwrap_err();
        assert!(e.is::<StoreCorrupt>(), "{e:#}");
        assert!(
            format!("{e:#}").contains("signature of document 1"),
            "{e:#}"
        );
    }
}
