//! The collection's SQLite store: documents, signature postings, pairs and runs.
//!
//! One file per collection, WAL mode, schema versioned with `PRAGMA user_version`. Every change
//! goes through a transaction, so a process killed at any moment leaves a consistent store.

pub mod changes;
pub mod figures;
pub mod files;
mod fp_index;
pub use fp_index::HeldSignatures;
pub mod health;
pub mod kept;
pub mod queries;
pub mod review_log;
pub mod sha_streams;
pub mod signature;
pub mod skipped;
pub mod text;

use crate::acquire::{Frontier, UrlRecord, UrlState};
use crate::error::StoreCorrupt;
use crate::sign::{Detector, SigSize, Verdict};
use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};
use std::path::{Path, PathBuf};

/// Schema migrations; entry i brings the schema from version i to i + 1.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    command TEXT NOT NULL,
    params TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL
);
CREATE TABLE documents (
    num INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    source_rank INTEGER NOT NULL,
    locator TEXT NOT NULL,
    url TEXT,
    title TEXT,
    lang TEXT,
    raw_bytes INTEGER NOT NULL,
    text TEXT NOT NULL,
    words INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    duplicate_of TEXT,
    sig_size INTEGER NOT NULL DEFAULT 0,
    added_run INTEGER NOT NULL REFERENCES runs(id)
);
CREATE INDEX documents_status ON documents(status);
CREATE TABLE postings (
    fp INTEGER NOT NULL,
    doc INTEGER NOT NULL REFERENCES documents(num),
    PRIMARY KEY (fp, doc)
) WITHOUT ROWID;
CREATE INDEX postings_doc ON postings(doc);
CREATE TABLE pairs (
    id INTEGER PRIMARY KEY,
    a TEXT NOT NULL REFERENCES documents(id),
    b TEXT NOT NULL REFERENCES documents(id),
    inter INTEGER NOT NULL,
    resemblance REAL NOT NULL,
    cont_a_in_b REAL,
    cont_b_in_a REAL,
    verdict TEXT NOT NULL,
    verified INTEGER NOT NULL DEFAULT 0,
    decision TEXT,
    note TEXT,
    decided_at TEXT,
    run INTEGER NOT NULL REFERENCES runs(id),
    UNIQUE (a, b)
);
CREATE INDEX pairs_verdict ON pairs(verdict);
"#,
    r#"
CREATE TABLE urls (
    url TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    record TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX urls_source_state ON urls(source, state);
"#,
    // v3 (update and review): which review decision dropped a document, and every decision taken.
    r#"
ALTER TABLE documents ADD COLUMN dropped_by INTEGER;
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    pair INTEGER NOT NULL REFERENCES pairs(id),
    decision TEXT NOT NULL,
    note TEXT,
    decided_at TEXT NOT NULL
);
CREATE INDEX decisions_pair ON decisions(pair);
CREATE INDEX pairs_a ON pairs(a);
CREATE INDEX pairs_b ON pairs(b);
"#,
    // v4 (web archives): the date a source gives a document (a WARC record's `WARC-Date`).
    r#"
ALTER TABLE documents ADD COLUMN date TEXT;
"#,
    // v5 (relevance): each text's relevance to the topic and the topic stems that carried it;
    // NULL for texts stored before the stage existed or with it switched off.
    r#"
ALTER TABLE documents ADD COLUMN relevance REAL;
ALTER TABLE documents ADD COLUMN relevance_terms TEXT;
"#,
    // v6 (documents): the format a text was read from (html, text, wikitext, pdf, docx, odt,
    // epub); NULL for documents stored before it was recorded.
    r#"
ALTER TABLE documents ADD COLUMN format TEXT;
"#,
    // v7 (curation at scale): the review log — one entry per decision taken, on a pair, a
    // cluster or a rule's pairs, undone as one. Decisions stored before it become one entry each.
    r#"
CREATE TABLE review_log (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    decision TEXT,
    note TEXT,
    pairs INTEGER NOT NULL,
    at TEXT NOT NULL,
    undone_by INTEGER REFERENCES review_log(id)
);
ALTER TABLE decisions ADD COLUMN entry INTEGER REFERENCES review_log(id);
INSERT INTO review_log(id, kind, target, decision, note, pairs, at)
    SELECT id, 'pair', CAST(pair AS TEXT), decision, note, 1, decided_at FROM decisions;
UPDATE decisions SET entry = id;
CREATE INDEX decisions_entry ON decisions(entry);
ALTER TABLE pairs ADD COLUMN shared INTEGER;
"#,
    // v8 (speed): postings in insertion order, with the fingerprint index apart. A B-tree keyed
    // on random fingerprints had every batch of a build rewrite pages all over the table; a
    // build now appends postings and makes the index once at its end (`Store::index_postings`).
    r#"
CREATE TABLE postings_v8 (fp INTEGER NOT NULL, doc INTEGER NOT NULL REFERENCES documents(num));
INSERT INTO postings_v8(fp, doc) SELECT fp, doc FROM postings ORDER BY doc, fp;
DROP TABLE postings;
ALTER TABLE postings_v8 RENAME TO postings;
CREATE INDEX postings_doc ON postings(doc);
CREATE INDEX postings_fp ON postings(fp);
"#,
    // v9 (speed): texts in a table of their own. A status changes for every document after
    // comparison, and SQLite rewrites a whole row to change one field: with the text in the
    // row, a build wrote every text twice more (the 656 MB dev corpus: 5.7 s of a 44 s build).
    r#"
CREATE TABLE texts (num INTEGER PRIMARY KEY REFERENCES documents(num), text TEXT NOT NULL);
INSERT INTO texts(num, text) SELECT num, text FROM documents;
ALTER TABLE documents ADD COLUMN text_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE documents SET text_bytes = octet_length(text);
ALTER TABLE documents DROP COLUMN text;
"#,
    // v10 (size): texts packed as zstd frames (`text.rs`), and postings clustered by document
    // without a rowid, so the table is the by-document index; the fingerprint index stays apart.
    // The dev corpus's store: 110 MB for 76 MB of text before.
    r#"
UPDATE texts SET text = zstd_pack(text) WHERE typeof(text) = 'text';
CREATE TABLE postings_v10 (
    doc INTEGER NOT NULL REFERENCES documents(num),
    fp INTEGER NOT NULL,
    PRIMARY KEY (doc, fp)
) WITHOUT ROWID;
INSERT OR IGNORE INTO postings_v10(doc, fp) SELECT doc, fp FROM postings ORDER BY doc, fp;
DROP TABLE postings;
ALTER TABLE postings_v10 RENAME TO postings;
CREATE INDEX postings_fp ON postings(fp);
"#,
    // v11 (speed): the fingerprint index in two parts split at a document number (`fp_index.rs`),
    // so an update's postings enter a small index instead of touching every page of one over the
    // whole store. The split depends on the data, so the next `index_postings` (every update
    // calls it) makes the parts; the version bump keeps an older collect, whose lookups could not
    // use a partial index, from opening the store. Only the part up to the split is indexed now
    // (`fp_index.rs`): the postings after it are read in order, which needs no new version.
    r#"
DROP INDEX IF EXISTS postings_fp;
"#,
    // v12 (size): the text of a kept document lives only in `docs/` (`kept.rs`). Nothing moves
    // here: the next sync of the collection checks each kept file and drops the store's copy.
    // The version bump keeps an older collect, which reads every text from `texts`, from
    // opening the store.
    r#"
SELECT 1;
"#,
    // v13 (speed): the documents whose manifest line may have changed since the collection
    // directory was last brought in line with the store (`changes.rs`), so an update or a
    // review decision rewrites the lines that changed instead of reading every document.
    // Only recorded while a stamp of that sync stands; a store without one is synced whole.
    r#"
CREATE TABLE manifest_changes (id TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 1) WITHOUT ROWID;
CREATE TRIGGER manifest_change_insert AFTER INSERT ON documents
    WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'manifest_stamp')
BEGIN
    INSERT INTO manifest_changes(id) VALUES (NEW.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER manifest_change_update AFTER UPDATE OF id, source, locator, url, title, lang,
    words, sha256, status, reason, duplicate_of, date, relevance, format ON documents
    WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'manifest_stamp')
BEGIN
    INSERT INTO manifest_changes(id) VALUES (OLD.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
    INSERT INTO manifest_changes(id) VALUES (NEW.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER manifest_change_delete AFTER DELETE ON documents
    WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'manifest_stamp')
BEGIN
    INSERT INTO manifest_changes(id) VALUES (OLD.id) ON CONFLICT(id) DO UPDATE SET n = n + 1;
END;
"#,
    // v14 (speed): the report's figures by source and status (`status_figures`) are read from
    // an index of their own instead of every document's row: at 100,000 documents an
    // update's report took 0.10 s to count them, 0.01 s now.
    r#"
CREATE INDEX documents_figures ON documents(source, status, raw_bytes, text_bytes);
"#,
    // v15 (speed): the triggers of v13 exist only while a stamp stands (`changes.rs` creates
    // them with it), instead of asking for the stamp on every row: that question cost 10k
    // status updates 0.06–0.12 s of their 0.17–0.23 s, and a build asked it of every row it
    // wrote before the sync that stamps. A store stamped already gets them back in this same
    // transaction (`migrate`).
    r#"
DROP TRIGGER manifest_change_insert;
DROP TRIGGER manifest_change_update;
DROP TRIGGER manifest_change_delete;
"#,
    // v16 (speed): what judging a pair reads of a document's signature (`SigSize`: its
    // elements, sampled ones, whether it is a full index), so that `update` weighs a stored
    // partner from three numbers and the fingerprints it shares with the newcomers instead of
    // loading its whole signature (`sig_size` held the elements already). NULL where unknown:
    // stored before, or by a detector that reads whole signatures; `update` loads those whole
    // and fills them in.
    r#"
ALTER TABLE documents ADD COLUMN sig_sampled INTEGER;
ALTER TABLE documents ADD COLUMN sig_exact INTEGER;
"#,
    // v17 (speed, size): a document's signature is one value (`signature.rs`) instead of a row
    // per fingerprint, and the fingerprint index is buckets of (fingerprint, document) pairs
    // sorted from those values (`fp_index.rs`) instead of a B-tree that SQLite sorted: on the 80k dev corpus
    // 5.26 million posting rows and their index were 154 MB of a 213 MB store and 4–6 s of a
    // build's CPU. The next `index_postings` makes the index.
    r#"
CREATE TABLE signatures (doc INTEGER PRIMARY KEY REFERENCES documents(num), fps BLOB NOT NULL);
INSERT INTO signatures(doc, fps) SELECT doc, signature_pack(fp) FROM postings GROUP BY doc;
DROP TABLE postings;
CREATE TABLE fp_buckets (bucket INTEGER PRIMARY KEY, entries BLOB NOT NULL);
"#,
    // v18 (speed): the fingerprint index's filter (`fp_index.rs`), read before its buckets, so
    // that an update's lookup reads the buckets of the fingerprints the index may hold, not
    // of all its newcomers'. An index made before has none until it is made again.
    r#"
CREATE TABLE fp_filter (part INTEGER PRIMARY KEY, bits BLOB NOT NULL);
"#,
    // v19 (speed): the figures' index in the order of the documents within each source and
    // status, its sizes after the number: a document's entry was at a random place by its size,
    // so an update's newcomers, kept or not, changed a random page each (954 statuses into a
    // 100,000-document store, in the `sqlite3` shell: 36–39 ms and a 4.8 ms commit before,
    // 21–31 ms and 0.8–1.1 ms after); newcomers now join the end of their status's run.
    r#"
DROP INDEX documents_figures;
CREATE INDEX documents_figures ON documents(source, status, num, raw_bytes, text_bytes);
"#,
    // v20 (speed): the report's figures kept in a table of their own by triggers that the
    // first sync creates (`figures.rs`), instead of counted over the index of v19 at every
    // sync; the index goes.
    r#"
DROP INDEX documents_figures;
CREATE TABLE figures (
    source TEXT NOT NULL,
    status TEXT NOT NULL,
    documents INTEGER NOT NULL,
    raw_bytes INTEGER NOT NULL,
    text_bytes INTEGER NOT NULL,
    PRIMARY KEY (source, status)
) WITHOUT ROWID;
"#,
];

/// The schema version from which the change triggers come with the stamp (`changes.rs`).
const TRIGGERS_WITH_STAMP: i64 = 15;

/// The schema version from which a signature is one value (`signature.rs`).
const SIGNATURE_VALUES: i64 = 17;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The tables a store at [`SCHEMA_VERSION`] holds; one missing means the file is not (or no
/// longer) a whole store.
pub const TABLES: [&str; 13] = [
    "meta",
    "runs",
    "documents",
    "texts",
    "signatures",
    "fp_buckets",
    "fp_filter",
    "pairs",
    "urls",
    "decisions",
    "review_log",
    "manifest_changes",
    "figures",
];

/// Whether a SQLite error says the data itself is damaged, as opposed to the store being busy,
/// full or unwritable: the file is not a database, a page is malformed, or a value stored
/// does not decode into what the schema promises (text that is not UTF-8, a wrong type, an
/// unknown status name).
pub fn is_corruption(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            matches!(f.code, DatabaseCorrupt | NotADatabase)
        }
        rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::IntegralValueOutOfRange(..)
        | rusqlite::Error::Utf8Error(..) => true,
        _ => false,
    }
}

/// A SQLite error met on the store at `path`, turned into one that names the file, and into a
/// [`StoreCorrupt`] when the data is damaged, so that no command answers from a damaged store
/// as if it were a sound one.
pub fn store_error(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    if is_corruption(&e) {
        StoreCorrupt {
            path: path.to_path_buf(),
            what: e.to_string(),
        }
        .into()
    } else {
        anyhow::Error::new(e).context(format!("{}: store query failed", path.display()))
    }
}

/// `.at(path)` on a SQLite result: the error through [`store_error`].
pub(crate) trait At<T> {
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> At<T> for rusqlite::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|e| store_error(path, e))
    }
}

/// Status of a document in the collection, as stored in `documents.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Signed and stored, not yet compared.
    Pending,
    /// In the collection.
    Kept,
    /// A near-copy of a kept document (`duplicate_of` says which).
    Duplicate,
    /// Too few words after cleaning.
    Short,
    /// Rejected by another filter (`reason` says which).
    Filtered,
    /// Removed by a curator's review decision (`dropped_by` names the pair).
    Dropped,
    /// Scored below the topic's relevance threshold (`relevance` says by how much).
    OffTopic,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Status; 7] = [
        Status::Pending,
        Status::Kept,
        Status::Duplicate,
        Status::Short,
        Status::Filtered,
        Status::OffTopic,
        Status::Dropped,
    ];

    /// The name stored in the database and shown in manifests and listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Kept => "kept",
            Status::Duplicate => "duplicate",
            Status::Short => "short",
            Status::Filtered => "filtered",
            Status::Dropped => "dropped",
            Status::OffTopic => "off_topic",
        }
    }

    /// Parses the name written by [`Status::as_str`].
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether the text was read but never reached the dedup stage (its filter said no).
    pub fn is_filtered_out(self) -> bool {
        matches!(self, Status::Short | Status::Filtered | Status::OffTopic)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::types::ToSql for Status {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for Status {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        Status::parse(s).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown document status `{s}`").into())
        })
    }
}

impl rusqlite::types::ToSql for Verdict {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for Verdict {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        Verdict::parse(s).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown pair verdict `{s}`").into())
        })
    }
}

/// What the dedup stage decided for one document.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Document id.
    pub id: String,
    /// `Kept` or `Duplicate`.
    pub status: Status,
    /// The kept document it duplicates.
    pub duplicate_of: Option<String>,
}

/// One document as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Stable id (from the locator and the text).
    pub id: String,
    /// Report name of the source.
    pub source: String,
    /// Position of the source in the topic (lower is preferred when choosing a copy).
    pub source_rank: u32,
    /// Where it came from: URL or file path (and line for JSONL).
    pub locator: String,
    /// Web address, when it has one.
    pub url: Option<String>,
    /// Title, when known.
    pub title: Option<String>,
    /// Detected language (ISO 639-1), when known.
    pub lang: Option<String>,
    /// Size of the input before cleaning.
    pub raw_bytes: u64,
    /// Cleaned text.
    pub text: String,
    /// Words in the cleaned text.
    pub words: u64,
    /// SHA-256 of the cleaned text, hex.
    pub sha256: String,
    /// Where it stands.
    pub status: Status,
    /// Why it was rejected, for `filtered`.
    pub reason: Option<String>,
    /// The kept document this one duplicates.
    pub duplicate_of: Option<String>,
    /// When the source says the document was captured or published (a WARC record's
    /// `WARC-Date`, ISO 8601 as given), when it says.
    pub date: Option<String>,
    /// Relevance to the topic (None: not scored, the stage was off or the filters said no).
    pub relevance: Option<f64>,
    /// The topic stems that carried the score, as `collect explain` shows them.
    pub relevance_terms: Option<String>,
    /// The format it was read from (`html`, `text`, `wikitext`, `pdf`, `docx`, `odt`, `epub`);
    /// `None` when stored before formats were recorded.
    pub format: Option<String>,
}

/// A judged pair as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPair {
    /// Pair id (used by review commands).
    pub id: i64,
    /// First document id.
    pub a: String,
    /// Second document id.
    pub b: String,
    /// Shared signature elements.
    pub inter: u32,
    /// Resemblance.
    pub resemblance: f64,
    /// Containment of a in b (NaN when the method has none).
    pub cont_a_in_b: f64,
    /// Containment of b in a.
    pub cont_b_in_a: f64,
    /// The verdict (only duplicate and contained pairs are stored).
    pub verdict: Verdict,
    /// Whether scores come from the full shingle index.
    pub verified: bool,
    /// Shingles the texts share (counted or estimated: `dedup::shared_shingles`).
    pub shared: u64,
}

/// An open collection store.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

/// Seconds since the Unix epoch, as stored in `*_at` columns.
pub(crate) fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    secs.to_string()
}

pub(crate) fn nan_to_null(x: f64) -> Option<f64> {
    if x.is_nan() {
        None
    } else {
        Some(x)
    }
}

/// Documents with their signatures and their texts packed for the store (`text::pack`), or
/// written into `docs/`.
pub struct Packed {
    docs: Vec<(Document, Vec<u64>)>,
    /// None: the text is in `docs/`, on disk ([`Unwritten::write`]).
    frames: Vec<Option<Vec<u8>>>,
    /// Each signature's sizes, as the detector that made it tells them (`None`: it does not,
    /// or it was not asked).
    sizes: Vec<Option<SigSize>>,
}

/// What [`Store::insert_packed`] stored.
#[derive(Debug, Default)]
pub struct Inserted {
    /// Documents new to the store.
    pub added: usize,
    /// The id and the signature, as stored (sorted, each fingerprint once), of each new
    /// document bound for dedup: a build keeps them instead of reading them back (0.18 s of
    /// the 10k build).
    pub signatures: Vec<(String, Vec<u64>)>,
}

impl Packed {
    /// Packs the texts, and sizes the signatures `detector` made, on the rayon pool.
    pub fn new(docs: Vec<(Document, Vec<u64>)>, detector: Option<&dyn Detector>) -> Packed {
        Packed::packing(docs, detector, |_| true)
    }

    /// For a build: packs, on the rayon pool, the texts of the documents not bound for dedup;
    /// the others are to be written into `docs/` by [`Unwritten::write`].
    pub fn for_docs(docs: Vec<(Document, Vec<u64>)>, detector: Option<&dyn Detector>) -> Unwritten {
        Unwritten(Packed::packing(docs, detector, |d| {
            !kept::lives_in_docs(d.status)
        }))
    }

    fn packing(
        docs: Vec<(Document, Vec<u64>)>,
        detector: Option<&dyn Detector>,
        packs: impl Fn(&Document) -> bool + Sync,
    ) -> Packed {
        use rayon::prelude::*;
        let (frames, sizes) = docs
            .par_iter()
            .map(|(d, sig)| {
                (
                    packs(d).then(|| text::pack(&d.text)),
                    detector.and_then(|det| det.size_of(sig)),
                )
            })
            .unzip();
        Packed {
            docs,
            frames,
            sizes,
        }
    }
}

/// A build's batch whose texts bound for dedup are not in `docs/` yet.
pub struct Unwritten(Packed);

impl Unwritten {
    /// Writes the texts bound for dedup into `docs_dir`, one file after another. The file
    /// system creates the files of one directory one at a time whatever the threads (a second
    /// one spins on the directory's lock), so one thread writes while the cores prepare the
    /// next batch.
    ///
    /// The files are then flushed to disk, so that a row committed with its text in `docs/`
    /// finds it there after a power cut. The flush waits on the disk: here it overlaps the
    /// store's work on the batch before, where it held the storing thread (a tenth of the 10k
    /// build's wall clock).
    pub fn write(self, docs_dir: &Path) -> Result<Packed> {
        let Unwritten(packed) = self;
        let mut unwritten = packed
            .docs
            .iter()
            .zip(&packed.frames)
            .filter(|(_, frame)| frame.is_none())
            .map(|((d, _), _)| d)
            .peekable();
        if unwritten.peek().is_none() {
            return Ok(packed);
        }
        let dir = kept::DocsDir::open(docs_dir)?;
        let mut written = Vec::new();
        for d in unwritten {
            dir.write(&d.id, &d.text).with_context(|| {
                format!(
                    "{}: cannot write",
                    kept::kept_file(docs_dir, &d.id).display()
                )
            })?;
            written.push(d.id.as_str());
        }
        dir.flush_to_disk(written.into_iter())?;
        Ok(packed)
    }
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// For the commands that write. A file that exists but is not a sound store is refused
    /// before anything is written to it: migrating it would bury what it still holds.
    pub fn open(path: &Path) -> Result<Store> {
        let existed = path.exists();
        let conn = Connection::open(path).at(path)?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        if existed
            && std::fs::metadata(path)
                .map(|m| m.len() > 0)
                .unwrap_or(false)
        {
            store.check_schema(true)?;
        }
        store
            .conn
            .pragma_update(None, "journal_mode", "WAL")
            .and_then(|_| store.conn.pragma_update(None, "synchronous", "NORMAL"))
            .and_then(|_| store.conn.pragma_update(None, "foreign_keys", "ON"))
            .and_then(|_| store.conn.busy_timeout(std::time::Duration::from_secs(10)))
            .and_then(|_| rusqlite::vtab::array::load_module(&store.conn))
            .at(path)?;
        store.migrate()?;
        Ok(store)
    }

    /// Opens the store at `path` for reading only: nothing is created, migrated or written,
    /// so a read never changes a collection, damaged or not. The schema must be whole and
    /// current; a store an older `collect` wrote is upgraded by the next command that writes.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if !path.is_file() {
            return Err(crate::error::bad_input(format!(
                "no collection at {}: the store file is missing",
                path.display()
            )));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .at(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .and_then(|_| rusqlite::vtab::array::load_module(&conn))
            .at(path)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.check_schema(false)?;
        Ok(store)
    }

    /// Checks that the file is a store this `collect` can read: SQLite, a known schema
    /// version, every table there. `older_ok`: a writer will migrate an older schema.
    fn check_schema(&self, older_ok: bool) -> Result<()> {
        let corrupt = |what: String| -> anyhow::Error {
            StoreCorrupt {
                path: self.path.clone(),
                what,
            }
            .into()
        };
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .at(&self.path)?;
        if version > SCHEMA_VERSION {
            bail!(crate::error::BadInput(format!(
                "{}: store schema version {version} is newer than this collect understands ({SCHEMA_VERSION}); upgrade collect",
                self.path.display()
            )));
        }
        let tables = self.tables()?;
        if version == 0 {
            return Err(corrupt(if tables.is_empty() {
                "no tables: the file is empty or was never a collection store".into()
            } else {
                format!("no schema version, tables {}", tables.join(", "))
            }));
        }
        if version < SCHEMA_VERSION {
            if older_ok {
                return Ok(());
            }
            bail!(crate::error::BadInput(format!(
                "{}: store schema version {version} was written by an older collect (this one reads {SCHEMA_VERSION}); run a command that writes (`collect update TOPIC`) to upgrade it",
                self.path.display()
            )));
        }
        let missing: Vec<&str> = TABLES
            .iter()
            .copied()
            .filter(|t| !tables.iter().any(|have| have == t))
            .collect();
        if !missing.is_empty() {
            return Err(corrupt(format!("missing tables: {}", missing.join(", "))));
        }
        Ok(())
    }

    /// Names of the tables in the file.
    pub fn tables(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .at(&self.path)?;
        let rows = stmt.query_map([], |r| r.get(0)).at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<String>>>()
            .at(&self.path)
    }

    /// Whether the file holds a table of that name (tables created when first written, like
    /// `skipped` and `files`, are missing from older collections).
    pub(crate) fn has_table(&self, name: &str) -> Result<bool> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [name],
                |r| r.get(0),
            )
            .at(&self.path)?;
        Ok(n > 0)
    }

    /// Path of the store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn migrate(&mut self) -> Result<()> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .at(&self.path)?;
        if version > SCHEMA_VERSION {
            bail!(
                "{}: store schema version {version} is newer than this collect understands ({SCHEMA_VERSION}); upgrade collect",
                self.path.display()
            );
        }
        if version < SCHEMA_VERSION {
            text::register_pack(&self.conn).at(&self.path)?;
            signature::register_pack(&self.conn).at(&self.path)?;
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.transaction().at(&self.path)?;
            tx.execute_batch(sql)
                .at(&self.path)
                .with_context(|| format!("migration to v{} failed", i + 1))?;
            if i as i64 + 1 == TRIGGERS_WITH_STAMP {
                changes::restore_triggers(&tx, &self.path)?;
            }
            tx.pragma_update(None, "user_version", (i + 1) as i64)
                .at(&self.path)?;
            tx.commit().at(&self.path)?;
        }
        if version > 0 && version < SIGNATURE_VALUES {
            // Packing freed about half the pages of a store with texts, and the postings' rows
            // and index were most of the rest; without a vacuum the file would keep its old
            // size until new documents filled them.
            self.conn.execute_batch("VACUUM").at(&self.path)?;
        }
        Ok(())
    }

    /// `values` sorted and without repeats, bound as one parameter that a statement reads as
    /// the table `rarray(?)` (column `value`) and joins: a join walks the store's B-trees once
    /// in order, where a lookup per value pays a statement each. Filling a temporary table
    /// instead cost an update's lookup of 41,000 fingerprints 35–45 ms of inserts.
    fn value_array(values: impl Iterator<Item = i64>) -> rusqlite::vtab::array::Array {
        let mut v: Vec<i64> = values.collect();
        v.sort_unstable();
        v.dedup();
        std::rc::Rc::new(v.into_iter().map(rusqlite::types::Value::from).collect())
    }

    /// [`Store::value_array`] of strings (in byte order, as SQLite compares text).
    fn text_array<'a>(values: impl Iterator<Item = &'a str>) -> rusqlite::vtab::array::Array {
        let mut v: Vec<&str> = values.collect();
        v.sort_unstable();
        v.dedup();
        std::rc::Rc::new(
            v.into_iter()
                .map(|s| rusqlite::types::Value::Text(s.to_owned()))
                .collect(),
        )
    }

    /// A value from the meta table.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .at(&self.path)
    }

    /// Keeps this connection's temporary files in memory: the statement journals that the
    /// manifest triggers make every update of a document write, which otherwise go to a file
    /// in the temporary directory (an update of 1,000 newcomers into a 100,000-document store,
    /// `/var/tmp` on ext4: recording the statuses 21 → 11 ms, the whole update 0.30 → 0.29 s,
    /// 7 runs alternated; with the directory on tmpfs no change shows). For the small writes
    /// of `collect update`: a build's index sorts would hold their runs in memory too, so it
    /// keeps the default.
    pub fn keep_temporary_files_in_memory(&self) -> Result<()> {
        self.conn
            .pragma_update(None, "temp_store", "MEMORY")
            .at(&self.path)
    }

    /// Sets a value in the meta table.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .at(&self.path)?;
        Ok(())
    }

    /// Records the start of a command; returns the run id.
    pub fn begin_run(&self, command: &str, params_json: &str) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs(command, params, started_at, status) VALUES (?1, ?2, ?3, 'running')",
            params![command, params_json, now()],
        ).at(&self.path)?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records the end of a run.
    pub fn finish_run(&self, run: i64, status: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET finished_at = ?1, status = ?2 WHERE id = ?3",
                params![now(), status, run],
            )
            .at(&self.path)?;
        Ok(())
    }

    /// Whether the store holds any document.
    pub fn holds_documents(&self) -> Result<bool> {
        self.conn
            .query_row("SELECT EXISTS (SELECT 1 FROM documents)", [], |r| r.get(0))
            .at(&self.path)
    }

    /// Which of `ids` are stored as documents, asked in one statement: a build asks this of
    /// every document it reads, and a statement per id was a read transaction each (two file
    /// locks taken and released, 160,000 `fcntl` calls in an 80,000-document build).
    pub fn stored_ids<'a>(
        &self,
        ids: impl Iterator<Item = &'a str>,
    ) -> Result<rustc_hash::FxHashSet<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM documents WHERE id IN rarray(?1)")
            .at(&self.path)?;
        let rows = stmt
            .query_map([Store::text_array(ids)], |r| r.get::<_, String>(0))
            .at(&self.path)?;
        rows.collect::<rusqlite::Result<_>>().at(&self.path)
    }

    /// Stores documents and their signatures, made by `detector` (which tells their sizes),
    /// in one transaction; already stored ids are skipped. Returns how many were new.
    pub fn insert_documents(
        &mut self,
        run: i64,
        docs: Vec<(Document, Vec<u64>)>,
        detector: Option<&dyn Detector>,
    ) -> Result<usize> {
        Ok(self.insert_packed(run, &Packed::new(docs, detector))?.added)
    }

    /// [`Store::insert_documents`] for a batch packed beforehand (by the thread that prepares
    /// batches, while the store writes the one before).
    pub fn insert_packed(&mut self, run: i64, batch: &Packed) -> Result<Inserted> {
        // The signatures and texts of a batch reference the document rows inserted just before
        // them in the same transaction, by the number SQLite gave: checking them against
        // `documents` only costs time.
        self.without_foreign_keys(|store| store.insert_packed_rows(run, batch))
    }

    fn insert_packed_rows(&mut self, run: i64, batch: &Packed) -> Result<Inserted> {
        let (docs, frames, sizes) = (&batch.docs, &batch.frames, &batch.sizes);
        let tx = self.conn.transaction().at(&self.path)?;
        let mut added = Inserted::default();
        {
            let mut ins = tx.prepare_cached(
                "INSERT OR IGNORE INTO documents(id, source, source_rank, locator, url, title, lang,
                    raw_bytes, text_bytes, words, sha256, status, reason, duplicate_of, sig_size, added_run, date,
                    relevance, relevance_terms, format, sig_sampled, sig_exact)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17, ?18, ?19, ?20, ?21, ?22)",
            ).at(&self.path)?;
            let mut signature_row = tx
                .prepare_cached("INSERT INTO signatures(doc, fps) VALUES (?1, ?2)")
                .at(&self.path)?;
            let mut text = tx
                .prepare_cached("INSERT INTO texts(num, text) VALUES (?1, ?2)")
                .at(&self.path)?;
            for (((d, sig), frame), size) in docs.iter().zip(frames).zip(sizes) {
                let n = ins
                    .execute(params![
                        d.id,
                        d.source,
                        d.source_rank,
                        d.locator,
                        d.url,
                        d.title,
                        d.lang,
                        d.raw_bytes as i64,
                        d.text.len() as i64,
                        d.words as i64,
                        d.sha256,
                        d.status,
                        d.reason,
                        d.duplicate_of,
                        sig.len() as i64,
                        run,
                        d.date,
                        d.relevance,
                        d.relevance_terms,
                        d.format,
                        size.map(|s| s.sampled as i64),
                        size.map(|s| s.exact)
                    ])
                    .at(&self.path)?;
                if n == 0 {
                    continue;
                }
                added.added += 1;
                let num = tx.last_insert_rowid();
                if let Some(frame) = frame {
                    text.execute(params![num, frame]).at(&self.path)?;
                }
                let mut fps = sig.clone();
                fps.sort_unstable();
                fps.dedup();
                if !fps.is_empty() {
                    signature_row
                        .execute(params![num, signature::pack(&fps)])
                        .at(&self.path)?;
                }
                if !d.status.is_filtered_out() {
                    added.signatures.push((d.id.clone(), fps));
                }
            }
        }
        tx.commit().at(&self.path)?;
        Ok(added)
    }

    /// Ids and signatures of the documents with the given status, ordered by id.
    pub fn signatures(&self, status: Status) -> Result<Vec<(String, Vec<u64>)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT d.id, s.fps FROM documents d LEFT JOIN signatures s ON s.doc = d.num
                 WHERE d.status = ?1",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map([status], |r| {
                let sig: Option<signature::StoredSignature> = r.get(1)?;
                Ok((r.get(0)?, sig.map(|s| s.0).unwrap_or_default()))
            })
            .at(&self.path)?;
        let mut out = rows
            .collect::<rusqlite::Result<Vec<(String, Vec<u64>)>>>()
            .at(&self.path)?;
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Documents with the given status and their texts, ordered by id. Tests only: the
    /// commands read metadata and fetch texts one at a time, so no command holds a
    /// collection's texts.
    #[cfg(test)]
    pub fn documents(&self, status: Option<Status>) -> Result<Vec<Document>> {
        let sql =
            "SELECT id, source, source_rank, locator, url, title, lang, raw_bytes, t.text, words,
                    sha256, status, reason, duplicate_of, date, relevance, relevance_terms, format
                    FROM documents d JOIN texts t ON t.num = d.num
                    WHERE ?1 IS NULL OR status = ?1 ORDER BY id";
        let mut stmt = self.conn.prepare(sql).at(&self.path)?;
        let rows = stmt
            .query_map([status], |r| {
                Ok(Document {
                    id: r.get(0)?,
                    source: r.get(1)?,
                    source_rank: r.get(2)?,
                    locator: r.get(3)?,
                    url: r.get(4)?,
                    title: r.get(5)?,
                    lang: r.get(6)?,
                    raw_bytes: r.get::<_, i64>(7)? as u64,
                    text: r.get::<_, text::StoredText>(8)?.0,
                    words: r.get::<_, i64>(9)? as u64,
                    sha256: r.get(10)?,
                    status: r.get(11)?,
                    reason: r.get(12)?,
                    duplicate_of: r.get(13)?,
                    date: r.get(14)?,
                    relevance: r.get(15)?,
                    relevance_terms: r.get(16)?,
                    format: r.get(17)?,
                })
            })
            .at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }

    /// Writes the outcome of a build's dedup pass in one transaction: statuses, `duplicate_of`,
    /// pairs. A build settles every document it compared, so the indexes those writes touch
    /// ([`REMADE_INDEXES`]) are dropped and made again from their own definitions in the same
    /// transaction. Kept in step row by row (a random place in each index for every document
    /// and pair), they made this step 2.5–3.1 s of the 80k dev corpus's build; 1.0–1.2 s
    /// without them, 0.86–0.93 s with the statuses written in row order too.
    ///
    /// The pairs' references are checked here, not by SQLite: it looked both ids of each pair
    /// up in `documents`' id index, where [`write_dedup`] reads every id in row order anyway
    /// (100,000 documents, 91,582 pairs written in 0.35–0.55 s with SQLite's checks, 0.19–0.20 s
    /// without).
    pub fn record_dedup(
        &mut self,
        run: i64,
        outcomes: &[Outcome],
        pairs: &[StoredPair],
    ) -> Result<()> {
        self.without_foreign_keys(|store| store.record_dedup_checked(run, outcomes, pairs))
    }

    /// Runs `write` (its own transactions) with SQLite's foreign-key checks off, for writes
    /// whose references the caller has made sure of; they are on again afterwards, whatever
    /// `write` gave. The setting cannot change inside a transaction, hence the closure.
    fn without_foreign_keys<T>(&mut self, write: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.conn
            .pragma_update(None, "foreign_keys", "OFF")
            .at(&self.path)?;
        let written = write(self);
        let restored = self
            .conn
            .pragma_update(None, "foreign_keys", "ON")
            .at(&self.path);
        let written = written?;
        restored?;
        Ok(written)
    }

    fn record_dedup_checked(
        &mut self,
        run: i64,
        outcomes: &[Outcome],
        pairs: &[StoredPair],
    ) -> Result<()> {
        let tx = self.conn.transaction().at(&self.path)?;
        let remade = drop_indexes(&tx, &self.path, &REMADE_INDEXES)?;
        write_dedup(&tx, &self.path, run, outcomes, pairs)?;
        tx.execute_batch(&remade).at(&self.path)?;
        tx.commit().at(&self.path)?;
        Ok(())
    }

    /// Forgets answered search, API and sitemap requests, so the next acquisition asks again;
    /// fetched pages and final failures stay.
    pub fn forget_listings(&self) -> Result<()> {
        self.conn
            .execute("DELETE FROM urls WHERE state = 'listed'", [])
            .at(&self.path)?;
        Ok(())
    }

    /// Acquisition figures per web source (empty for collections without web sources).
    pub fn url_counts(&self) -> Result<std::collections::BTreeMap<String, UrlCounts>> {
        url_counts(&self.conn, &self.path)
    }

    /// Acquisition figures per host, for the report.
    pub fn host_counts(&self) -> Result<std::collections::BTreeMap<String, HostCounts>> {
        host_counts(&self.conn, &self.path)
    }

    /// All stored pairs, ordered by (a, b).
    pub fn pairs(&self) -> Result<Vec<StoredPair>> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT {} FROM pairs ORDER BY a, b",
                queries::PAIR_COLS
            ))
            .at(&self.path)?;
        let rows = stmt
            .query_map([], |r| queries::pair_row(r).map(|p| p.pair))
            .at(&self.path)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().at(&self.path)
    }
}

/// The web frontier kept in the store: every URL's state, and fetched pages until they are
/// turned into documents. Its own connection, so acquisition threads can share it.
pub struct StoreFrontier {
    conn: std::sync::Mutex<Connection>,
    path: PathBuf,
}

/// Acquisition figures of one source, from the frontier.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct UrlCounts {
    /// Search/API/sitemap requests answered.
    pub queries: u64,
    /// URLs found (all but the answered requests).
    pub results: u64,
    /// Fetched documents.
    pub fetched: u64,
    /// Failures by class (timeout, http-500, …).
    pub failed: std::collections::BTreeMap<String, u64>,
    /// Skipped by reason (robots, content-type, too-large, …).
    pub skipped: std::collections::BTreeMap<String, u64>,
}

impl StoreFrontier {
    /// Opens the frontier of the store at `path` (the store must exist and be migrated).
    pub fn open(path: &Path) -> Result<StoreFrontier> {
        // Opening through Store runs the migrations and sets WAL.
        let store = Store::open(path)?;
        Ok(StoreFrontier {
            conn: std::sync::Mutex::new(store.conn),
            path: path.to_path_buf(),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent: keep going.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fetched records of one source, ordered by URL.
    pub fn fetched(&self, source: &str) -> Result<Vec<UrlRecord>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT url, record FROM urls WHERE source = ?1 AND state = 'fetched' ORDER BY url",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map([source], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .at(&self.path)?;
        let mut out = Vec::new();
        for row in rows {
            let (url, json) = row.at(&self.path)?;
            let rec: UrlRecord = serde_json::from_str(&json).with_context(|| {
                format!(
                    "{}: frontier record of {url} is damaged",
                    self.path.display()
                )
            })?;
            out.push(rec);
        }
        Ok(out)
    }

    /// Acquisition figures per source.
    pub fn counts(&self) -> Result<std::collections::BTreeMap<String, UrlCounts>> {
        url_counts(&self.conn(), &self.path)
    }

    /// Acquisition figures per host.
    pub fn host_counts(&self) -> Result<std::collections::BTreeMap<String, HostCounts>> {
        host_counts(&self.conn(), &self.path)
    }

    /// How many pages of one source were fetched (what its reader will deliver).
    pub fn fetched_count(&self, source: &str) -> Result<u64> {
        self.conn()
            .query_row(
                "SELECT COUNT(*) FROM urls WHERE source = ?1 AND state = 'fetched'",
                [source],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
            .at(&self.path)
    }
}

/// Acquisition figures of one host, over every source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostCounts {
    /// Pages fetched.
    pub fetched: u64,
    /// URLs that failed (after retries).
    pub failed: u64,
    /// URLs skipped (robots.txt, content type, size, address, …).
    pub skipped: u64,
}

/// Acquisition figures per host (the URL's host name), from the `urls` table.
fn host_counts(
    conn: &Connection,
    path: &Path,
) -> Result<std::collections::BTreeMap<String, HostCounts>> {
    let mut stmt = conn
        .prepare("SELECT url, state FROM urls WHERE state IN ('fetched', 'failed', 'skipped')")
        .at(path)?;
    let mut rows = stmt.query([]).at(path)?;
    let mut out: std::collections::BTreeMap<String, HostCounts> = Default::default();
    while let Some(r) = rows.next().at(path)? {
        let (url, state): (String, String) =
            (|| Ok::<_, rusqlite::Error>((r.get(0)?, r.get(1)?)))().at(path)?;
        let Some(host) = url::Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        else {
            continue;
        };
        let c = out.entry(host).or_default();
        match state.as_str() {
            "fetched" => c.fetched += 1,
            "failed" => c.failed += 1,
            _ => c.skipped += 1,
        }
    }
    Ok(out)
}

/// Acquisition figures per source, from the `urls` table.
fn url_counts(
    conn: &Connection,
    path: &Path,
) -> Result<std::collections::BTreeMap<String, UrlCounts>> {
    let mut stmt = conn
        .prepare("SELECT source, state, reason, COUNT(*) FROM urls GROUP BY source, state, reason")
        .at(path)?;
    let mut rows = stmt.query([]).at(path)?;
    let mut out: std::collections::BTreeMap<String, UrlCounts> = Default::default();
    while let Some(r) = rows.next().at(path)? {
        let (source, state, reason, n): (String, String, Option<String>, i64) =
            (|| Ok::<_, rusqlite::Error>((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))()
                .at(path)?;
        let c = out.entry(source).or_default();
        let n = n as u64;
        match state.as_str() {
            "listed" => c.queries += n,
            "fetched" => c.fetched += n,
            "failed" => *c.failed.entry(reason.unwrap_or_default()).or_default() += n,
            "skipped" => *c.skipped.entry(reason.unwrap_or_default()).or_default() += n,
            _ => {}
        }
        if state != "listed" {
            c.results += n;
        }
    }
    Ok(out)
}

/// The failure class of a frontier failure message (`timeout: …` → `timeout`).
fn failure_class(msg: &str) -> String {
    msg.split(':').next().unwrap_or("failed").trim().to_string()
}

impl Frontier for StoreFrontier {
    fn seen(&self, url: &str) -> Option<UrlRecord> {
        let conn = self.conn();
        let json: Option<String> = conn
            .query_row("SELECT record FROM urls WHERE url = ?1", [url], |r| {
                r.get(0)
            })
            .optional()
            .ok()
            .flatten();
        // A damaged row is treated as unseen: the URL is fetched again rather than lost.
        json.and_then(|j| serde_json::from_str(&j).ok())
    }

    fn record(&self, rec: &UrlRecord) -> anyhow::Result<()> {
        let (state, reason) = match &rec.state {
            UrlState::Discovered => ("discovered", None),
            UrlState::Fetched => ("fetched", None),
            UrlState::Failed(m) => ("failed", Some(failure_class(m))),
            UrlState::Skipped(r) => ("skipped", Some(r.as_str().to_string())),
            UrlState::Listed { .. } => ("listed", None),
        };
        let json = serde_json::to_string(rec)?;
        self.conn()
            .execute(
                "INSERT INTO urls(url, source, state, reason, record, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(url) DO UPDATE SET source = excluded.source, state = excluded.state,
                    reason = excluded.reason, record = excluded.record, updated_at = excluded.updated_at",
                params![rec.url, rec.source, state, reason, json, now()],
            )
            .with_context(|| format!("{}: cannot record {}", self.path.display(), rec.url))?;
        Ok(())
    }
}

/// The indexes a build's dedup outcome rewrites throughout: of `documents` by status, of
/// `pairs` by anything but their key (which stays, as `ON CONFLICT` needs it).
const REMADE_INDEXES: [&str; 4] = ["documents_status", "pairs_a", "pairs_b", "pairs_verdict"];

/// The statement that made index `name`, as the store holds it (None: no such index).
fn index_definition(conn: &Connection, path: &Path, name: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?1",
        [name],
        |r| r.get(0),
    )
    .optional()
    .at(path)
}

/// Drops `names` (those the store has) and hands back the statements that make them again,
/// as the store defined them.
fn drop_indexes(tx: &Transaction<'_>, path: &Path, names: &[&str]) -> Result<String> {
    let mut remake = String::new();
    for name in names {
        if let Some(sql) = index_definition(tx, path, name)? {
            tx.execute_batch(&format!("DROP INDEX {name};")).at(path)?;
            remake.push_str(&sql);
            remake.push_str(";\n");
        }
    }
    Ok(remake)
}

fn write_dedup(
    tx: &Transaction<'_>,
    path: &Path,
    run: i64,
    outcomes: &[Outcome],
    pairs: &[StoredPair],
) -> Result<()> {
    // In row order, so that the table's pages are rewritten one after the other: the
    // outcomes come in id order, which visits the rows at random. A document not stored is
    // left out, as an update by its id would change nothing.
    let place: rustc_hash::FxHashMap<&str, usize> = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| (o.id.as_str(), i))
        .collect();
    let mut by_row: Vec<(i64, &Outcome)> = Vec::with_capacity(outcomes.len());
    // The ids the pairs name that `documents` lacks, once the scan has passed them all.
    let mut unknown: rustc_hash::FxHashSet<&str> = pairs
        .iter()
        .flat_map(|p| [p.a.as_str(), p.b.as_str()])
        .collect();
    {
        let mut rows = tx.prepare("SELECT num, id FROM documents").at(path)?;
        let mut rows = rows.query([]).at(path)?;
        while let Some(row) = rows.next().at(path)? {
            let id: String = row.get(1).at(path)?;
            unknown.remove(id.as_str());
            if let Some(&i) = place.get(id.as_str()) {
                by_row.push((row.get(0).at(path)?, &outcomes[i]));
            }
        }
    }
    if let Some(id) = unknown.iter().min() {
        anyhow::bail!(
            "{}: a pair names document {id}, which the store does not hold",
            path.display()
        );
    }
    if !pairs.is_empty() {
        let run_known: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
                [run],
                |r| r.get(0),
            )
            .at(path)?;
        if !run_known {
            anyhow::bail!("{}: no run {run} to record pairs under", path.display());
        }
    }
    by_row.sort_unstable_by_key(|(num, _)| *num);
    let mut upd = tx
        .prepare_cached("UPDATE documents SET status = ?1, duplicate_of = ?2 WHERE num = ?3")
        .at(path)?;
    for (num, o) in by_row {
        upd.execute(params![o.status, o.duplicate_of, num])
            .at(path)?;
    }
    let mut ins = tx.prepare_cached(
        "INSERT INTO pairs(a, b, inter, resemblance, cont_a_in_b, cont_b_in_a, verdict, verified, run, shared)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT(a, b) DO UPDATE SET inter = excluded.inter, resemblance = excluded.resemblance,
            cont_a_in_b = excluded.cont_a_in_b, cont_b_in_a = excluded.cont_b_in_a,
            verdict = excluded.verdict, verified = excluded.verified, shared = excluded.shared",
    ).at(path)?;
    // In key order, so that the key's index and the check of the first id (a reference to
    // `documents`) walk their B-trees forward instead of landing at random.
    let mut in_order: Vec<&StoredPair> = pairs.iter().collect();
    in_order.sort_unstable_by(|x, y| (&x.a, &x.b).cmp(&(&y.a, &y.b)));
    for p in in_order {
        ins.execute(params![
            p.a,
            p.b,
            p.inter,
            p.resemblance,
            nan_to_null(p.cont_a_in_b),
            nan_to_null(p.cont_b_in_a),
            p.verdict,
            p.verified as i64,
            run,
            p.shared as i64
        ])
        .at(path)?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(super) fn doc(id: &str, text: &str) -> Document {
        Document {
            id: id.into(),
            source: "local".into(),
            source_rank: 0,
            locator: format!("{id}.txt"),
            url: None,
            title: None,
            lang: Some("en".into()),
            raw_bytes: text.len() as u64,
            text: text.into(),
            words: 2,
            sha256: "00".into(),
            status: Status::Pending,
            reason: None,
            duplicate_of: None,
            date: None,
            relevance: None,
            relevance_terms: None,
            format: Some("text".into()),
        }
    }

    #[test]
    fn contained_pairs_count_by_the_contained_texts_source_with_one_source_or_several() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let docs = ["a", "b", "c", "d"].map(|id| (doc(id, "x y"), vec![]));
        s.insert_documents(run, docs.to_vec(), None).unwrap();
        // (a in b), (c in d), (d in a) contained, one pair of another verdict.
        for (a, b, ab, ba, verdict) in [
            ("a", "b", 0.9, 0.5, "contained"),
            ("c", "d", 0.9, 0.4, "contained"),
            ("a", "d", 0.3, 0.8, "contained"),
            ("b", "c", 0.9, 0.9, "duplicate"),
        ] {
            s.conn
                .execute(
                    "INSERT INTO pairs(a, b, inter, resemblance, cont_a_in_b, cont_b_in_a, verdict, run)
                     VALUES (?1, ?2, 1, 0.5, ?3, ?4, ?5, ?6)",
                    params![a, b, ab, ba, verdict, run],
                )
                .unwrap();
        }
        assert_eq!(
            s.contained_pairs_by_source(&["local"]).unwrap(),
            vec![("local".to_string(), 3)]
        );
        s.conn
            .execute(
                "UPDATE documents SET source = 'web' WHERE id IN ('c', 'd')",
                [],
            )
            .unwrap();
        let mut by_source = s.contained_pairs_by_source(&["local", "web"]).unwrap();
        by_source.sort();
        assert_eq!(
            by_source,
            vec![("local".to_string(), 1), ("web".to_string(), 2)]
        );
    }

    #[test]
    fn a_builds_dedup_outcome_leaves_the_indexes_as_the_schema_made_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let docs = ["a", "b", "c"].map(|id| (doc(id, "x y"), vec![]));
        s.insert_documents(run, docs.to_vec(), None).unwrap();
        let indexes = |s: &Store| -> Vec<(String, String)> {
            let mut stmt = s
                .conn
                .prepare(
                    "SELECT name, sql FROM sqlite_master
                     WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
                )
                .unwrap();
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            rows.collect::<rusqlite::Result<_>>().unwrap()
        };
        let before = indexes(&s);
        for name in REMADE_INDEXES {
            assert!(
                before.iter().any(|(n, _)| n == name),
                "{name} is in the schema"
            );
        }
        let outcome = |id: &str, status, of: Option<&str>| Outcome {
            id: id.into(),
            status,
            duplicate_of: of.map(String::from),
        };
        let pair = |a: &str, b: &str, verdict| StoredPair {
            id: 0,
            a: a.into(),
            b: b.into(),
            inter: 30,
            resemblance: 0.9,
            cont_a_in_b: 0.95,
            cont_b_in_a: 0.9,
            verdict,
            verified: true,
            shared: 0,
        };
        // Pairs given out of key order (they are written sorted): both stored.
        s.record_dedup(
            run,
            &[
                outcome("a", Status::Kept, None),
                outcome("b", Status::Duplicate, Some("a")),
                outcome("c", Status::Kept, None),
                // Not stored: left out, as an update by its id would be.
                outcome("gone", Status::Kept, None),
            ],
            &[
                pair("b", "c", Verdict::Contained),
                pair("a", "b", Verdict::Duplicate),
            ],
        )
        .unwrap();
        assert_eq!(indexes(&s), before);
        let ids = |st| -> Vec<String> {
            let metas = s.document_metas_with_status(st).unwrap();
            metas.into_iter().map(|m| m.id).collect()
        };
        assert_eq!(ids(Status::Kept), ["a", "c"]);
        assert_eq!(ids(Status::Duplicate), ["b"]);
        assert!(ids(Status::Pending).is_empty());
        let pairs: Vec<_> = s
            .pairs()
            .unwrap()
            .into_iter()
            .map(|p| (p.a, p.b, p.verdict))
            .collect();
        assert_eq!(
            pairs,
            [
                ("a".into(), "b".into(), Verdict::Duplicate),
                ("b".into(), "c".into(), Verdict::Contained)
            ]
        );
        let check: String = s
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    #[test]
    fn a_dedup_outcome_naming_a_document_not_stored_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let docs = ["a", "b"].map(|id| (doc(id, "x y"), vec![]));
        s.insert_documents(run, docs.to_vec(), None).unwrap();
        let kept = |id: &str| Outcome {
            id: id.into(),
            status: Status::Kept,
            duplicate_of: None,
        };
        let pair = |a: &str, b: &str| StoredPair {
            id: 0,
            a: a.into(),
            b: b.into(),
            inter: 30,
            resemblance: 0.3,
            cont_a_in_b: 0.95,
            cont_b_in_a: 0.2,
            verdict: Verdict::Contained,
            verified: true,
            shared: 0,
        };
        let err = s
            .record_dedup(run, &[kept("a"), kept("b")], &[pair("a", "ghost")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("ghost") && err.contains("c.sqlite"), "{err}");
        let err = s
            .record_dedup(run + 7, &[kept("a"), kept("b")], &[pair("a", "b")])
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("run {}", run + 7)), "{err}");
        // Nothing of either was written, and SQLite checks references again afterwards.
        assert!(s.pairs().unwrap().is_empty());
        assert_eq!(
            s.document_metas_with_status(Status::Pending).unwrap().len(),
            2
        );
        let on: bool = s
            .conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert!(on);
        s.record_dedup(run, &[kept("a"), kept("b")], &[pair("a", "b")])
            .unwrap();
        assert_eq!(s.pairs().unwrap().len(), 1);
    }

    #[test]
    fn documents_and_signatures_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let big = u64::MAX - 3; // does not fit an i64: stored as its bit pattern
        let added = s
            .insert_documents(
                run,
                vec![
                    (doc("b", "two words"), vec![5, big]),
                    (doc("a", "x y"), vec![]),
                ],
                None,
            )
            .unwrap();
        assert_eq!(added, 2);
        // Same ids again: nothing added, nothing duplicated.
        assert_eq!(
            s.insert_documents(run, vec![(doc("b", "two words"), vec![5])], None)
                .unwrap(),
            0
        );
        let sigs = s.signatures(Status::Pending).unwrap();
        assert_eq!(sigs, vec![("a".into(), vec![]), ("b".into(), vec![5, big])]);
        let asked = ["c", "a", "b", "a"];
        let stored = s.stored_ids(asked.into_iter()).unwrap();
        assert_eq!(
            stored,
            ["a".to_string(), "b".to_string()].into_iter().collect()
        );
        assert_eq!(s.documents(None).unwrap()[1].text, "two words");
    }

    #[test]
    fn signature_sizes_are_stored_when_the_detector_tells_them_and_filled_in_later() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        let det = crate::sign::ModM::new(4, 25, 8);
        // Ten sampled fingerprints (multiples of 25): a sample; three and one other: a full index.
        let sample: Vec<u64> = (1..=10).map(|i| i * 25).collect();
        s.insert_documents(
            run,
            vec![
                (doc("a", "x"), sample.clone()),
                (doc("b", "x"), vec![25, 50, 75, 76]),
            ],
            Some(&det),
        )
        .unwrap();
        s.insert_documents(run, vec![(doc("c", "x"), vec![25, 26])], None)
            .unwrap();
        let parts = s.partners(&[3, 1, 2, 9]).unwrap();
        let sizes: Vec<(&str, Option<SigSize>)> =
            parts.iter().map(|p| (p.id.as_str(), p.size)).collect();
        let size = |len, sampled, exact| {
            Some(SigSize {
                len,
                sampled,
                exact,
            })
        };
        assert_eq!(
            sizes,
            vec![
                ("a", size(10, 10, false)),
                ("b", size(4, 3, true)),
                ("c", None)
            ],
            "in number order, an unknown number left out"
        );
        assert_eq!(
            s.signatures_of(&[3, 1]).unwrap(),
            vec![(1, sample), (3, vec![25, 26])]
        );
        s.record_signature_sizes(&[(3, size(2, 1, true).unwrap())])
            .unwrap();
        assert_eq!(s.partners(&[3]).unwrap()[0].size, size(2, 1, true));
    }

    #[test]
    fn dedup_outcome_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("c.sqlite")).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        s.insert_documents(
            run,
            vec![(doc("a", "x"), vec![1]), (doc("b", "x"), vec![1])],
            None,
        )
        .unwrap();
        let pair = StoredPair {
            id: 0,
            a: "a".into(),
            b: "b".into(),
            inter: 1,
            resemblance: 1.0,
            cont_a_in_b: 1.0,
            cont_b_in_a: f64::NAN,
            verdict: Verdict::Duplicate,
            verified: false,
            shared: 1,
        };
        s.record_dedup(
            run,
            &[
                Outcome {
                    id: "a".into(),
                    status: Status::Kept,
                    duplicate_of: None,
                },
                Outcome {
                    id: "b".into(),
                    status: Status::Duplicate,
                    duplicate_of: Some("a".into()),
                },
            ],
            &[pair],
        )
        .unwrap();
        let docs = s.documents(Some(Status::Duplicate)).unwrap();
        assert_eq!(docs[0].duplicate_of.as_deref(), Some("a"));
        let pairs = s.pairs().unwrap();
        assert!(pairs[0].cont_b_in_a.is_nan());
        assert_eq!(pairs[0].verdict, Verdict::Duplicate);
    }

    #[test]
    fn frontier_round_trips_and_counts() {
        use crate::acquire::{FetchedPage, Payload, SkipReason};
        let dir = tempfile::tempdir().unwrap();
        let f = StoreFrontier::open(&dir.path().join("c.sqlite")).unwrap();
        let mut rec = UrlRecord {
            url: "http://a.example/x".into(),
            source: "sites".into(),
            query: None,
            state: UrlState::Discovered,
            fetched: None,
        };
        f.record(&rec).unwrap();
        assert_eq!(f.seen(&rec.url).unwrap().state, UrlState::Discovered);
        rec.state = UrlState::Fetched;
        rec.fetched = Some(FetchedPage {
            final_url: rec.url.clone(),
            title: Some("X".into()),
            body: "<p>тело</p>".into(),
            bytes: None,
            payload: Payload::Html,
            content_type: "text/html".into(),
            charset_note: None,
            fetched_at: 1,
        });
        f.record(&rec).unwrap();
        let robots = UrlRecord {
            url: "http://a.example/private".into(),
            state: UrlState::Skipped(SkipReason::Robots),
            fetched: None,
            ..rec.clone()
        };
        f.record(&robots).unwrap();
        let failed = UrlRecord {
            url: "http://a.example/500".into(),
            state: UrlState::Failed("http-500: http://a.example/500 answered 500".into()),
            fetched: None,
            ..rec.clone()
        };
        f.record(&failed).unwrap();
        assert_eq!(f.fetched("sites").unwrap(), vec![rec]);
        let c = &f.counts().unwrap()["sites"];
        assert_eq!((c.results, c.fetched), (3, 1));
        assert_eq!(c.skipped["robots"], 1);
        assert_eq!(c.failed["http-500"], 1);
    }

    /// A store at schema `version`, as an older collect left it, holding `rows` (SQL) and a
    /// finished build run numbered 1.
    fn store_at(p: &Path, version: usize, rows: &str) {
        let mut c = Connection::open(p).unwrap();
        text::register_pack(&c).unwrap();
        let tx = c.transaction().unwrap();
        for sql in &MIGRATIONS[..version] {
            tx.execute_batch(sql).unwrap();
        }
        tx.pragma_update(None, "user_version", version as i64)
            .unwrap();
        tx.execute_batch(
            "INSERT INTO runs(id, command, params, started_at, status)
                VALUES (1, 'build', '{}', '0', 'done');",
        )
        .unwrap();
        tx.execute_batch(rows).unwrap();
        tx.commit().unwrap();
    }

    #[test]
    fn a_v3_store_is_upgraded_by_a_writer_and_keeps_its_documents() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        store_at(
            &p,
            3,
            "INSERT INTO documents(id, source, source_rank, locator, raw_bytes, text, words,
                sha256, status, added_run)
                VALUES ('a', 'local', 0, 'a.txt', 3, 'x y', 2, '00', 'kept', 1);",
        );
        let e = Store::open_read_only(&p).err().unwrap();
        assert!(format!("{e:#}").contains("older collect"), "{e:#}");
        let s = Store::open(&p).unwrap();
        let v: i64 = s
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let d = &s.documents(None).unwrap()[0];
        assert_eq!((d.status, d.relevance), (Status::Kept, None));
        assert_eq!(d.text, "x y");
        assert_eq!(s.document_metas().unwrap()[0].text_bytes, 3);
        let (kind, free): (String, i64) = s
            .conn
            .query_row(
                "SELECT (SELECT typeof(text) FROM texts), (SELECT freelist_count FROM pragma_freelist_count)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(kind, "blob", "the upgrade packs the texts");
        assert_eq!(free, 0, "the upgrade gives back the pages packing freed");
    }

    #[test]
    fn a_v16_stores_postings_become_one_signature_value_per_document() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        store_at(
            &p,
            16,
            "INSERT INTO documents(num, id, source, source_rank, locator, raw_bytes, words,
                sha256, status, added_run)
                VALUES (1, 'a', 'local', 0, 'a.txt', 3, 2, '00', 'kept', 1),
                       (2, 'b', 'local', 0, 'b.txt', 3, 2, '00', 'kept', 1),
                       (3, 'c', 'local', 0, 'c.txt', 3, 2, '00', 'short', 1);
             INSERT INTO postings(doc, fp) VALUES (1, 9), (1, -4), (1, 2), (2, 9);
             CREATE INDEX postings_fp ON postings(fp) WHERE doc <= 2;",
        );
        let s = Store::open(&p).unwrap();
        assert_eq!(
            s.signatures_of(&[1, 2, 3]).unwrap(),
            vec![(1, vec![2, 9, -4i64 as u64]), (2, vec![9])],
            "sorted as unsigned, and none for the document without postings"
        );
        let tables: i64 = s
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'postings%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 0, "the postings and their index are gone");
        assert_eq!(
            s.postings_of_fingerprints(&[9, -4i64 as u64]).unwrap(),
            vec![(1, 9), (1, -4i64 as u64), (2, 9)]
        );
        s.index_postings().unwrap();
        assert_eq!(
            s.postings_of_fingerprints(&[9]).unwrap(),
            vec![(1, 9), (2, 9)]
        );
    }

    #[test]
    fn reopening_keeps_schema_version() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        Store::open(&p).unwrap().set_meta("k", "v").unwrap();
        let s = Store::open(&p).unwrap();
        assert_eq!(s.meta("k").unwrap().as_deref(), Some("v"));
    }

    #[test]
    fn read_only_open_creates_nothing_and_refuses_an_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        let e = Store::open_read_only(&p).err().unwrap();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        assert!(!p.exists(), "a read created the store");
        std::fs::write(&p, b"").unwrap();
        let e = Store::open_read_only(&p).err().unwrap();
        assert!(e.downcast_ref::<StoreCorrupt>().is_some(), "{e:#}");
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
    }

    #[test]
    fn a_value_that_does_not_decode_is_corruption_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        let mut s = Store::open(&p).unwrap();
        let run = s.begin_run("build", "{}").unwrap();
        s.insert_documents(run, vec![(doc("a", "x y"), vec![1])], None)
            .unwrap();
        s.conn
            .execute("UPDATE texts SET text = CAST(x'fffe' AS TEXT)", [])
            .unwrap();
        drop(s);
        let s = Store::open_read_only(&p).unwrap();
        let e = s
            .each_text_with_status(Status::Pending, queries::TextOrder::Stored, &mut |_, _| {
                Ok(())
            })
            .err()
            .unwrap();
        assert!(crate::error::is_bad_input(&e), "{e:#}");
        let msg = format!("{e:#}");
        assert!(msg.contains("c.sqlite") && msg.contains("corrupt"), "{msg}");
    }

    #[test]
    fn garbage_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.sqlite");
        std::fs::write(&p, b"this is not sqlite at all, just some bytes........").unwrap();
        let e = Store::open(&p).err().unwrap();
        assert!(format!("{e:#}").contains("c.sqlite"), "{e:#}");
        assert!(format!("{e:#}").contains("corrupt"), "{e:#}");
        assert!(
            std::fs::read(&p)
                .unwrap()
                .starts_with(b"this is not sqlite"),
            "opening for writing changed a file that is not a store"
        );
    }
}
