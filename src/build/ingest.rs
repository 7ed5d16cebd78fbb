//! The part of the pipeline `build` and `update` share: acquire the web sources into the
//! frontier, read every source, and store each document the store does not hold yet, cleaned,
//! filtered and signed, a batch at a time (a kill loses at most one batch; a rerun skips what
//! is stored).

use crate::acquire::{self, AcquireEvents, AcquireReport, UrlState, WebSourceConfig};
use crate::canon::{count_words, CanonText, Canonicalizer, StopWords};
use crate::clean;
use crate::error::Skip;
use crate::filter::{self, FilterSettings};
use crate::progress::Progress;
use crate::readers::local::LocalReader;
use crate::readers::warc::WarcReader;
use crate::readers::web::{wiki_language, WebReader};
use crate::readers::{FileRead, KnownFiles, Notice, RawDoc, Reader};
use crate::relevance::{Profile, RelevanceSettings};
use crate::sign::Detector;
use crate::store::kept::{sha256_hex_many, sha256_many};
use crate::store::{Document, Packed, Status, Store, StoreFrontier, Unwritten};
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// Documents in the first batch of a source's line, the unit stored in one transaction (a kill
/// loses at most the batches on their way): few, so the cores start soon, and an update of a
/// thousand documents is still a line of several batches.
pub const BATCH: usize = 256;

/// Documents in a batch at most: batches double from [`BATCH`] up to this many. Each batch costs
/// the line hand-overs between threads, a transaction and a flush of its files: the 80,000
/// documents of the perf corpus were read in 6.0–6.1 s in batches of 256, 5.5–5.8 s in
/// batches growing to 2,048 documents or [`BATCH_BYTES`].
const MOST_BATCH: usize = 2048;

/// Bytes of text a batch holds at most: a batch of large documents is sent on before it is
/// full, so the line's memory stays bounded whatever the documents' size. Twice this read the
/// 80,000 documents 0.2–0.3 s faster, for a peak of 394–405 MB instead of 376–380 MB.
const BATCH_BYTES: usize = 8 << 20;

/// How many documents the batches of a line hold: from `first`, doubling up to `most`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batches {
    /// Documents in the first batch.
    pub first: usize,
    /// Documents in a batch at most.
    pub most: usize,
}

impl Batches {
    /// [`BATCH`] growing to [`MOST_BATCH`]; all of one size where a test asks for it
    /// (`testhooks::batch_size`).
    pub fn growing() -> Batches {
        match crate::testhooks::batch_size() {
            Some(n) => Batches { first: n, most: n },
            None => Batches {
                first: BATCH,
                most: MOST_BATCH,
            },
        }
    }
}

/// Stable document id: from where the document came from and its content.
pub fn document_id(locator: &str, body: &str) -> String {
    let mut ids = document_ids([(locator, body)]);
    ids.pop().unwrap_or_default()
}

/// [`document_id`] of each (locator, body), in their order, hashed side by side.
pub fn document_ids<'a>(docs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let messages: Vec<_> = docs
        .into_iter()
        .map(|(locator, body)| {
            tape_sha256::Message::pair(locator.as_bytes(), b"\0", body.as_bytes())
        })
        .collect();
    sha256_many(&messages)
        .iter()
        .map(|digest| hex::encode(&digest[..8]))
        .collect()
}

/// Documents whose ids are computed together: enough messages to fill the vector unit's lanes
/// several times over, few enough to hold (a reader's records wait here before the store is
/// asked whether it has them).
const ID_BATCH: usize = 64;

/// SHA-256 of a text, hex.
pub use crate::store::kept::sha256_hex;

/// What turns a raw document into a stored one: the filter's settings, the stop words of the
/// canonical form and the detector that signs it.
pub struct Preparer<'a> {
    /// The topic's filter section.
    pub filter: &'a FilterSettings,
    /// The topic's languages (the language filter keeps these).
    pub languages: &'a [String],
    /// Stop words of the canonical form.
    pub stop: &'a StopWords,
    /// The detector that signs pending texts.
    pub detector: &'a dyn Detector,
    /// The topic's relevance section.
    pub relevance: &'a RelevanceSettings,
    /// What texts are scored against; None when the stage is off or has nothing to score by.
    pub profile: Option<Profile>,
}

impl<'a> Preparer<'a> {
    /// The topic's filter and languages, with the stop words and detector of this run.
    pub fn of(topic: &'a Topic, stop: &'a StopWords, detector: &'a dyn Detector) -> Self {
        let profile = topic.relevance_profile();
        Preparer {
            filter: &topic.filter,
            languages: &topic.languages,
            stop,
            detector,
            relevance: &topic.relevance,
            profile,
        }
    }

    /// Status, reason and relevance of a cleaned text: the filter stage's rules, then, for a
    /// text they let through, the relevance rule.
    pub fn judge(
        &self,
        text: &str,
        words: u64,
        lang: Option<&str>,
        defect: Option<clean::Defect>,
    ) -> Judged {
        let (status, reason) = filter::verdict(self.filter, self.languages, words, lang, defect);
        let scored = match (&self.profile, status) {
            (Some(p), Status::Pending) => Some(p.score(text)),
            _ => None,
        };
        match scored {
            Some(s) => {
                let (status, why) = filter::relevance_verdict(self.relevance, status, &s);
                Judged {
                    status,
                    reason: why.or(reason),
                    relevance: Some(s.score),
                    relevance_terms: Some(s.terms_text()),
                }
            }
            None => Judged {
                status,
                reason,
                relevance: None,
                relevance_terms: None,
            },
        }
    }

    /// The signature stored with a cleaned text of this status: the one place that decides
    /// what a stored document is signed with (`collect doctor --rebuild` signs through it too).
    /// `canonical` is the core's buffer of the canonical form, kept from text to text: made
    /// anew for each text, it grew by copying to each text's size (its allocations and copies
    /// were about 1 % of a build's reading CPU, with the page faults of the larger ones).
    pub fn signature(
        &self,
        canon: &mut Canonicalizer,
        canonical: &mut CanonText,
        text: &str,
        status: Status,
    ) -> Vec<u64> {
        // Filtered-out texts never meet the dedup stage; detectors weighing words by the
        // collection are signed by the build's dedup pass, once the whole collection is known.
        if !status.is_filtered_out() && !self.detector.needs_stats() {
            canon.canonicalize_into(text, canonical);
            self.detector.sign_doc(text, canonical)
        } else {
            Vec::new()
        }
    }

    /// Cleans, filters and signs a batch of raw documents (in parallel), each with its
    /// [`document_id`], which the caller has already computed to skip the stored ones.
    pub fn prepare(&self, raw: Vec<(String, RawDoc)>) -> Vec<(Document, Vec<u64>)> {
        let mut prepared: Vec<(Document, Vec<u64>)> = raw
            .into_par_iter()
            .map_init(
                || (Canonicalizer::new(self.stop), CanonText::default()),
                |(canon, canonical), (id, r)| {
                    let ctx = clean::CleanContext {
                        url: r.url.as_deref(),
                        lang: r.lang.as_deref(),
                    };
                    // A reader that could not read a document says why; there is no text to
                    // clean, and the filter keeps it out with that reason.
                    let cleaned = match r.defect {
                        Some(d) => clean::Cleaned {
                            title: None,
                            text: String::new(),
                            lang: None,
                            defect: Some(d),
                        },
                        None => clean::clean(r.payload, &r.body, &ctx),
                    };
                    let format = r.format().to_string();
                    let words = count_words(&cleaned.text) as u64;
                    let Judged {
                        status,
                        reason,
                        relevance,
                        relevance_terms,
                    } = self.judge(
                        &cleaned.text,
                        words,
                        cleaned.lang.as_deref(),
                        cleaned.defect,
                    );
                    let sig = self.signature(canon, canonical, &cleaned.text, status);
                    let doc = Document {
                        id,
                        source: r.source,
                        source_rank: r.source_rank,
                        locator: r.locator,
                        url: r.url,
                        title: r.title.or(cleaned.title),
                        lang: cleaned.lang,
                        raw_bytes: r.raw_bytes,
                        // Filled in below, for the whole batch at once.
                        sha256: String::new(),
                        text: cleaned.text,
                        words,
                        status,
                        reason,
                        duplicate_of: None,
                        date: r.date,
                        relevance,
                        relevance_terms,
                        format: Some(format),
                    };
                    (doc, sig)
                },
            )
            .collect();
        prepared
            .par_chunks_mut(SHA_CHUNK)
            .for_each(|chunk: &mut [(Document, Vec<u64>)]| {
                let hashes = sha256_hex_many(chunk.iter().map(|(d, _)| d.text.as_str()));
                for ((doc, _), sha256) in chunk.iter_mut().zip(hashes) {
                    doc.sha256 = sha256;
                }
            });
        prepared
    }
}

/// Texts of a batch hashed together on one core: half a batch, so both cores take part.
const SHA_CHUNK: usize = BATCH / 2;

/// What the filter and relevance stages decided for one text.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// `Pending` (goes on to dedup) or the status that keeps it out.
    pub status: Status,
    /// Why it is kept out.
    pub reason: Option<String>,
    /// Its relevance (None: not scored).
    pub relevance: Option<f64>,
    /// The topic stems that carried the relevance.
    pub relevance_terms: Option<String>,
}

/// One ingest pass: where it stores, under which run, how it reports.
pub struct Ingest<'a> {
    /// The collection's store.
    pub store: &'a mut Store,
    /// The run the new documents are recorded under.
    pub run: i64,
    /// Turns raw documents into stored ones.
    pub preparer: Preparer<'a>,
    /// Bars and warnings.
    pub progress: &'a Progress,
    /// Documents stored per transaction.
    pub batch: Batches,
    /// Called after each stored batch (a test hook interrupts there).
    pub after_batch: &'a mut dyn FnMut(),
    /// Stop at the first bad input instead of recording it and going on.
    pub strict: bool,
    /// The runtime and fetcher of a run building several topics (None: this pass's own).
    pub shared: Option<&'a super::multi::SharedWeb>,
    /// Where a build writes the texts bound for dedup as it stores them (the collection's
    /// `docs/`, incomplete until the build ends); None: the store holds every new text, as
    /// an update into a finished collection needs.
    pub docs_dir: Option<&'a std::path::Path>,
    /// Where a build keeps the signatures of the new documents bound for dedup (by id), so
    /// that it need not read them back from the store; None: not kept.
    pub signatures: Option<&'a mut Signatures>,
}

/// Signatures by document id.
pub type Signatures = FxHashMap<String, Vec<u64>>;

/// How an ingest pass tells the documents the store holds already from the new ones.
enum Admitted {
    /// The store held no document when the pass began: every id it holds is one of these,
    /// admitted by the pass (asking the store about each batch of ids was 2 % of a fresh 80k
    /// build's CPU).
    Remembered(FxHashSet<String>),
    /// Asked of the store.
    Asked,
}

impl Admitted {
    fn of(store: &Store) -> Result<Admitted> {
        Ok(if store.holds_documents()? {
            Admitted::Asked
        } else {
            Admitted::Remembered(FxHashSet::default())
        })
    }
}

/// What an ingest pass read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ingested {
    /// Documents the readers delivered.
    pub read: usize,
    /// Of those, documents the store did not hold yet.
    pub new: usize,
    /// Inputs skipped (and recorded in the store) in this pass.
    pub skipped: usize,
}

/// Skips printed one by one on stderr; past that, only their count (the store has them all).
const SKIPS_SHOWN: usize = 10;

/// Acquires the topic's web sources into the frontier, then reads every source and stores each
/// new document.
pub fn store_new_documents(topic: &Topic, ingest: Ingest<'_>) -> Result<Ingested> {
    let Ingest {
        store,
        run,
        preparer,
        progress,
        batch,
        after_batch,
        strict,
        shared,
        docs_dir,
        mut signatures,
    } = ingest;
    let web = web_sources(topic);
    let frontier = if web.is_empty() {
        None
    } else {
        let f = Arc::new(StoreFrontier::open(store.path())?);
        let started = crate::progress::Started::now();
        let report = acquire_web(&web, topic, &f, progress, shared)?;
        for s in &report.sources {
            let failed: usize = s.failed.values().sum();
            let skipped: usize = s.skipped.values().sum::<usize>() + s.robots_blocked;
            let what = match &s.not_run {
                Some(why) => format!("not run ({why})"),
                None => format!(
                    "{} queries, {} results, {} fetched, {} from an earlier run, {} failed, {} skipped",
                    s.queries, s.results, s.fetched, s.resumed, failed, skipped
                ),
            };
            progress.stage(
                &format!("acquire {}", s.source),
                &what,
                started,
                Some(s.fetched as u64),
            );
        }
        let hosts = f.host_counts()?;
        if !hosts.is_empty() {
            let fetched = hosts.values().map(|c| c.fetched).sum();
            progress.stage(
                "acquire hosts",
                &crate::collection::report::hosts_line(&hosts),
                started,
                Some(fetched),
            );
        }
        Some(f)
    };
    let mut counts = Ingested::default();
    let mut admitted = Admitted::of(store)?;
    for mut reader in readers_of(topic, &frontier) {
        let started = crate::progress::Started::now();
        let mut known = KnownFiles {
            files: store.known_files(reader.name())?,
            ..KnownFiles::default()
        };
        for path in known.grown_paths() {
            let ids = store.file_ids(reader.name(), &path)?;
            known.ids.insert(path, std::rc::Rc::new(ids));
        }
        reader.pass_unchanged(known);
        let before = counts;
        let label = format!("reading {}", reader.name());
        // A bar with an ETA where the reader knows how much it will deliver.
        let bar = match reader.expected()? {
            Some(n) => progress.bar(&label, n),
            None => progress.counter(&label),
        };
        let mut skips: Vec<Skip> = Vec::new();
        let mut files_read: Vec<FileRead> = Vec::new();
        let mut unchanged = 0u64;
        let shown = counts.skipped;
        let mut notice = |n: Notice| -> Result<()> {
            match n {
                Notice::Read(f) => files_read.push(f),
                Notice::Unchanged(_) => unchanged += 1,
                Notice::Warning(w) => progress.warn(&w),
                Notice::Skipped(s) if strict && s.reason.loses_input() => {
                    return Err(s.into_error())
                }
                Notice::Skipped(s) => {
                    if shown + skips.len() < SKIPS_SHOWN {
                        progress.warn(&format!("{s} ({}); skipped", s.reason));
                    }
                    skips.push(s);
                }
            }
            Ok(())
        };
        let mut read = 0;
        let mut new = 0;
        let preparer = &preparer;
        std::thread::scope(|scope| -> Result<()> {
            let mut line = Pipeline::start(scope, preparer, run, batch, docs_dir);
            line.signatures = signatures.as_deref_mut();
            // Records wait until their ids can be computed together, then go on in the
            // order they were read.
            let mut waiting: Vec<RawDoc> = Vec::with_capacity(ID_BATCH);
            let mut admit = |waiting: &mut Vec<RawDoc>,
                             line: &mut Pipeline<'_>,
                             store: &mut Store,
                             after_batch: &mut dyn FnMut()|
             -> Result<()> {
                let ids = document_ids(
                    waiting
                        .iter()
                        .map(|d| (d.locator.as_str(), d.body.as_str())),
                );
                // The store is asked about the ids together, and again about those left
                // whenever a batch is stored meanwhile: each is checked against the store as
                // it is when its turn comes. A store that held nothing when this pass began
                // holds only what it admitted, which it remembers instead.
                let mut stored = match admitted {
                    Admitted::Remembered(_) => Default::default(),
                    Admitted::Asked => store.stored_ids(ids.iter().map(String::as_str))?,
                };
                let mut asked_at = line.batches_stored;
                for (k, doc) in waiting.drain(..).enumerate() {
                    let id = &ids[k];
                    let known = match &mut admitted {
                        Admitted::Remembered(seen) => !seen.insert(id.clone()),
                        Admitted::Asked => {
                            if line.batches_stored != asked_at {
                                stored = store.stored_ids(ids[k..].iter().map(String::as_str))?;
                                asked_at = line.batches_stored;
                            }
                            line.in_flight(id) || stored.contains(id)
                        }
                    };
                    if known {
                        continue;
                    }
                    new += 1;
                    line.push(id.clone(), doc, store, after_batch)?;
                }
                Ok(())
            };
            reader.collect(
                &mut |doc| {
                    read += 1;
                    bar.inc(1);
                    waiting.push(doc);
                    if waiting.len() < ID_BATCH {
                        return Ok(());
                    }
                    admit(&mut waiting, &mut line, store, after_batch)
                },
                &mut notice,
            )?;
            admit(&mut waiting, &mut line, store, after_batch)?;
            line.finish(store, after_batch)
        })?;
        // Only after a complete read: an interrupted one leaves the previous record standing.
        store.replace_skipped(reader.name(), &skips)?;
        store.remember_files(reader.name(), &files_read)?;
        counts.read += read;
        counts.new += new;
        counts.skipped += skips.iter().filter(|s| s.reason.loses_input()).count();
        bar.finish_and_clear();
        progress.stage(
            &format!("read {}", reader.name()),
            &format!(
                "{} documents, {} new (cleaned, filtered, signed, stored), {} skipped{}",
                counts.read - before.read,
                counts.new - before.new,
                counts.skipped - before.skipped,
                match unchanged {
                    0 => String::new(),
                    n => format!("; {n} files unchanged since they were read, passed by"),
                }
            ),
            started,
            Some((counts.read - before.read) as u64),
        );
    }
    Ok(counts)
}

/// The reader of a `warc` source: its paths resolved, each labelled as the topic spells it.
pub fn warc_reader(
    topic: &Topic,
    name: String,
    rank: u32,
    c: &crate::topic::WarcConfig,
) -> WarcReader {
    let paths = c
        .path
        .paths()
        .into_iter()
        .map(|p| (topic.resolve(&p), p.to_string_lossy().replace('\\', "/")))
        .collect();
    WarcReader::new(name, rank, paths, c.options())
}

/// The topic's readers, in priority order: local ones read files, web ones read what
/// acquisition fetched into `frontier`.
fn readers_of(topic: &Topic, frontier: &Option<Arc<StoreFrontier>>) -> Vec<Box<dyn Reader>> {
    topic
        .sources
        .iter()
        .zip(topic.source_names())
        .enumerate()
        .filter_map(|(rank, (spec, name))| -> Option<Box<dyn Reader>> {
            let rank = rank as u32;
            match (spec, spec.web()) {
                (SourceSpec::Local(c), _) => Some(Box::new(LocalReader::new(
                    name,
                    rank,
                    topic.resolve(&c.path),
                    c.options(),
                ))),
                (SourceSpec::Warc(c), _) => Some(Box::new(warc_reader(topic, name, rank, c))),
                (_, Some(web)) => {
                    let lang = wiki_language(&web, topic.languages.first().map(String::as_str));
                    Some(Box::new(WebReader::new(
                        name,
                        rank,
                        frontier.clone()?,
                        lang,
                    )))
                }
                (_, None) => None,
            }
        })
        .collect()
}

/// The topic's web sources, each under its unique report name.
pub fn web_sources(topic: &Topic) -> Vec<WebSourceConfig> {
    topic
        .sources
        .iter()
        .zip(topic.source_names())
        .filter_map(|(spec, name)| spec.web().map(|w| w.with_name(name)))
        .collect()
}

/// Prints warnings and counts pages while acquisition runs.
struct AcquireProgress {
    progress: Progress,
    bar: indicatif::ProgressBar,
}

impl AcquireEvents for AcquireProgress {
    fn warning(&self, source: &str, msg: &str) {
        self.progress.warn(&format!("{source}: {msg}"));
    }

    fn url_done(&self, _source: &str, _url: &str, _state: &UrlState) {
        self.bar.inc(1);
    }
}

/// Runs the acquisition stage: every web source, politely, into the store's frontier.
/// Rerun after an interruption, it asks and fetches only what the frontier does not have.
/// With `shared`, through the run's one fetcher (see [`super::multi`]).
fn acquire_web(
    sources: &[WebSourceConfig],
    topic: &Topic,
    frontier: &StoreFrontier,
    progress: &Progress,
    shared: Option<&super::multi::SharedWeb>,
) -> Result<AcquireReport> {
    let events = AcquireProgress {
        progress: progress.clone(),
        bar: progress.counter("fetching"),
    };
    if let Some(web) = shared {
        let report = web.runtime.block_on(acquire::acquire_with(
            &web.fetcher,
            sources,
            &topic.keywords,
            frontier,
            &events,
        ))?;
        events.bar.finish_and_clear();
        return Ok(report);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(acquire::acquire(
        sources,
        &topic.keywords,
        &topic.crawl,
        frontier,
        &events,
    ))?;
    events.bar.finish_and_clear();
    Ok(report)
}

/// The batch a line is filling: how many documents it takes, and the bytes of text it holds.
#[derive(Debug)]
struct Filling {
    most: usize,
    size: usize,
    bytes: usize,
}

impl Filling {
    fn new(batches: Batches) -> Filling {
        Filling {
            most: batches.most,
            size: batches.first,
            bytes: 0,
        }
    }

    /// A document of `bytes` joined the batch, which now holds `docs`: whether it is full.
    fn full_with(&mut self, docs: usize, bytes: usize) -> bool {
        self.bytes += bytes;
        docs >= self.size || self.bytes >= BATCH_BYTES
    }

    /// The batch went on: the next one starts empty and takes twice as many, up to the most.
    fn sent(&mut self) {
        self.bytes = 0;
        self.size = self.size.saturating_mul(2).min(self.most);
    }
}

/// Batches ready to store at most: the reader and the store go on while this many are cleaned,
/// filtered and signed on the other cores.
const BATCHES_IN_FLIGHT: usize = 2;

/// The read → prepare → store line of one source. The calling thread reads and stores (the
/// store is its own); a second thread prepares the batches, on the rayon pool, in the order
/// they were read, so documents are stored in reading order, as if prepared on the spot.
struct Pipeline<'scope> {
    run: i64,
    filling: Filling,
    pending: Vec<(String, RawDoc)>,
    pending_ids: Vec<String>,
    /// Ids of the batches sent to be prepared and not stored yet, oldest first: a document
    /// read twice must count once, as if the first copy were stored already.
    sent: std::collections::VecDeque<Vec<String>>,
    flying: rustc_hash::FxHashSet<String>,
    /// Batches stored so far.
    batches_stored: u64,
    to_prepare: Option<std::sync::mpsc::SyncSender<Vec<(String, RawDoc)>>>,
    /// Where the stored signatures of documents bound for dedup are kept (None: dropped).
    signatures: Option<&'scope mut Signatures>,
    prepared: std::sync::mpsc::Receiver<Result<Packed>>,
    preparing: Option<std::thread::ScopedJoinHandle<'scope, ()>>,
}

impl<'scope> Pipeline<'scope> {
    fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        preparer: &'scope Preparer<'_>,
        run: i64,
        batches: Batches,
        docs_dir: Option<&'scope std::path::Path>,
    ) -> Self {
        let (to_prepare, raw) =
            std::sync::mpsc::sync_channel::<Vec<(String, RawDoc)>>(BATCHES_IN_FLIGHT);
        let (ready, prepared) = std::sync::mpsc::channel();
        // A failed send means the store side has gone (an error there): nothing waits for the
        // batch.
        let preparing = scope.spawn(move || match docs_dir {
            None => {
                for docs in raw {
                    if ready
                        .send(Ok(Packed::new(
                            preparer.prepare(docs),
                            Some(preparer.detector),
                        )))
                        .is_err()
                    {
                        break;
                    }
                }
            }
            // A thread of its own writes a batch's files while the next batch is prepared; a
            // panic there ends this scope with it.
            Some(dir) => std::thread::scope(|inner| {
                let (to_write, unwritten) = std::sync::mpsc::sync_channel::<Unwritten>(1);
                inner.spawn(move || {
                    for batch in unwritten {
                        if ready.send(batch.write(dir)).is_err() {
                            break;
                        }
                    }
                });
                for docs in raw {
                    if to_write
                        .send(Packed::for_docs(
                            preparer.prepare(docs),
                            Some(preparer.detector),
                        ))
                        .is_err()
                    {
                        break;
                    }
                }
            }),
        });
        Pipeline {
            run,
            filling: Filling::new(batches),
            pending: Vec::new(),
            pending_ids: Vec::new(),
            sent: Default::default(),
            flying: Default::default(),
            batches_stored: 0,
            to_prepare: Some(to_prepare),
            signatures: None,
            prepared,
            preparing: Some(preparing),
        }
    }

    fn in_flight(&self, id: &str) -> bool {
        self.flying.contains(id)
    }

    /// Queues a new document; a full batch goes to be prepared, and the oldest prepared batch
    /// is stored once enough are on their way.
    fn push(
        &mut self,
        id: String,
        doc: RawDoc,
        store: &mut Store,
        after_batch: &mut dyn FnMut(),
    ) -> Result<()> {
        self.flying.insert(id.clone());
        self.pending_ids.push(id.clone());
        let bytes = doc.body.len();
        self.pending.push((id, doc));
        if !self.filling.full_with(self.pending.len(), bytes) {
            return Ok(());
        }
        self.send()?;
        if self.sent.len() > BATCHES_IN_FLIGHT {
            self.store_oldest(store, after_batch)?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.sent.push_back(std::mem::take(&mut self.pending_ids));
        let docs = std::mem::take(&mut self.pending);
        self.filling.sent();
        match &self.to_prepare {
            Some(tx) if tx.send(docs).is_ok() => Ok(()),
            _ => self.preparer_failed(),
        }
    }

    fn store_oldest(&mut self, store: &mut Store, after_batch: &mut dyn FnMut()) -> Result<()> {
        let Ok(ready) = self.prepared.recv() else {
            return self.preparer_failed();
        };
        let stored = store.insert_packed(self.run, &ready?)?;
        if let Some(kept) = self.signatures.as_deref_mut() {
            kept.extend(stored.signatures);
        }
        for id in self.sent.pop_front().unwrap_or_default() {
            self.flying.remove(&id);
        }
        self.batches_stored += 1;
        after_batch();
        Ok(())
    }

    /// Sends the last batch and stores every batch still on its way.
    fn finish(mut self, store: &mut Store, after_batch: &mut dyn FnMut()) -> Result<()> {
        self.send()?;
        while !self.sent.is_empty() {
            self.store_oldest(store, after_batch)?;
        }
        Ok(())
    }

    /// The preparing thread ended early: only a panic ends it, which is passed on.
    fn preparer_failed(&mut self) -> Result<()> {
        self.to_prepare = None;
        if let Some(handle) = self.preparing.take() {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        anyhow::bail!("the preparing thread ended before its batches were stored")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_text_hashes_are_sha256_as_collections_recorded_them() {
        // Values from Python's hashlib: ids name files in `docs/` and hashes are in manifests,
        // so a change of hashing library must not change a byte of them.
        assert_eq!(document_id("corpus:1", "Hello, world"), "68932d5520c097e0");
        assert_eq!(
            sha256_hex("Первый абзац."),
            "2bb5e454669d15e0b2ac850b1a7c0ed6ff2eefa6e7b37a2f3eef09a2c9bc42ae"
        );
    }

    #[test]
    fn ids_and_text_hashes_of_a_batch_are_those_of_each_text_alone() {
        // Every length around the block and padding edges, a few long ones, multibyte text,
        // in an order unlike their lengths' (a batch is hashed sorted by length).
        let mut texts: Vec<String> = (0..200)
            .map(|n| "ж".repeat(n / 2) + &"a".repeat(n % 2))
            .collect();
        texts.extend((0..5).map(|n| "word ".repeat(1_000 * n + 17)));
        texts.reverse();
        texts.swap(3, 150);
        let one = |locator: &str, body: &str| {
            let mut h = ring::digest::Context::new(&ring::digest::SHA256);
            h.update(locator.as_bytes());
            h.update(&[0u8]);
            h.update(body.as_bytes());
            hex::encode(&h.finish().as_ref()[..8])
        };
        let locators: Vec<String> = (0..texts.len()).map(|i| format!("src:{i}")).collect();
        let ids = document_ids(
            locators
                .iter()
                .map(String::as_str)
                .zip(texts.iter().map(String::as_str)),
        );
        let hashes = sha256_hex_many(texts.iter().map(String::as_str));
        assert_eq!(ids.len(), texts.len());
        assert_eq!(hashes.len(), texts.len());
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(ids[i], one(&locators[i], text), "id of text {i}");
            assert_eq!(hashes[i], sha256_hex(text), "hash of text {i}");
        }
        assert!(document_ids(std::iter::empty()).is_empty());
    }

    /// The sizes of the batches a line of `docs` documents of `bytes` each is cut into.
    fn batch_sizes(batches: Batches, docs: usize, bytes: usize) -> Vec<usize> {
        let mut filling = Filling::new(batches);
        let (mut sizes, mut in_batch) = (Vec::new(), 0);
        for _ in 0..docs {
            in_batch += 1;
            if filling.full_with(in_batch, bytes) {
                sizes.push(in_batch);
                filling.sent();
                in_batch = 0;
            }
        }
        sizes.extend((in_batch > 0).then_some(in_batch));
        sizes
    }

    #[test]
    fn batches_double_to_their_most_and_large_documents_cut_them_short() {
        let growing = Batches {
            first: BATCH,
            most: MOST_BATCH,
        };
        assert_eq!(
            batch_sizes(growing, 10_000, 3_000),
            [256, 512, 1024, 2048, 2048, 2048, 2048, 16]
        );
        // An update of a thousand documents is still a line of several batches.
        assert_eq!(batch_sizes(growing, 1_000, 3_000), [256, 512, 232]);
        // However many documents a batch may take, it holds at most BATCH_BYTES of text.
        let large = BATCH_BYTES / 4 + 1;
        assert_eq!(batch_sizes(growing, 9, large), [4, 4, 1]);
        // A test's batches are all of its size.
        let fixed = Batches { first: 2, most: 2 };
        assert_eq!(batch_sizes(fixed, 5, 10), [2, 2, 1]);
    }
}
