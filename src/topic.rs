//! Topic files: the curator's description of a collection (YAML).

use crate::acquire::{self, CrawlConfig, WebSourceConfig};
pub use crate::error::TopicError;

pub mod template;
use crate::filter::FilterSettings;
use crate::relevance::{Profile, RelevanceSettings};
use crate::sign::DedupSettings;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The topic's `review` section.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReviewSettings {
    /// Decisions taken automatically, in order, on the pending pairs each rule picks, every
    /// time `build` or `update` settles new pairs; each application is one undoable entry of
    /// the review log.
    #[serde(default)]
    pub rules: Vec<StandingRule>,
}

/// A decision the topic takes on every pending pair a rule picks.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StandingRule {
    /// Which pairs (`cont >= 0.95 and words < 80`; the grammar of `review decide --where`).
    #[serde(rename = "where")]
    pub rule: crate::rule::Rule,
    /// keep-both (keep-all), drop-contained (keep-container) or drop-container.
    pub decision: crate::store::queries::Decision,
    /// Stored with each decision, as a curator's note is.
    #[serde(default)]
    pub note: Option<String>,
}

/// A topic file, parsed and checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topic {
    /// Machine name of the collection: its directory under `collections/`.
    pub name: String,
    /// Human title of the theme.
    #[serde(default)]
    pub title: String,
    /// Languages the collection keeps (ISO 639-1); also the stop-word lists used.
    #[serde(default = "default_languages")]
    pub languages: Vec<String>,
    /// The theme's keywords, sent as queries to search sources.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Where texts come from, in priority order (earlier wins ties when choosing a copy).
    pub sources: Vec<SourceSpec>,
    /// Filters applied after cleaning.
    #[serde(default)]
    pub filter: FilterSettings,
    /// Relevance to the topic: `off`, or threshold and example texts.
    #[serde(default)]
    pub relevance: RelevanceSettings,
    /// Near-duplicate detection.
    #[serde(default)]
    pub dedup: DedupSettings,
    /// Politeness of web fetching.
    #[serde(default)]
    pub crawl: CrawlConfig,
    /// Curation: standing rules that build and update apply to the review queue.
    #[serde(default)]
    pub review: ReviewSettings,
    /// Stop at the first bad input (exit 2) instead of recording it and going on.
    #[serde(default)]
    pub strict: bool,
    /// Directory of the topic file, against which relative paths resolve.
    #[serde(skip)]
    pub base_dir: PathBuf,
    /// The texts of `relevance.examples`, read by [`Topic::load`] (the scorer does no IO).
    #[serde(skip)]
    pub relevance_examples: Vec<String>,
    /// The topic file's absolute path, set by [`Topic::load`] (the store remembers it, so
    /// `collect update DIR` finds the topic again); `None` for a topic built in code.
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

fn default_languages() -> Vec<String> {
    vec!["ru".into(), "en".into()]
}

/// A `local` source: texts already on disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalConfig {
    /// Directory or `.jsonl` file, relative to the topic file.
    pub path: PathBuf,
    /// Name in reports (default `local`).
    #[serde(default)]
    pub name: Option<String>,
    /// Follow symbolic links whose target lies outside `path` (links inside it are followed).
    #[serde(default)]
    pub follow_links: bool,
    /// Largest file read, after decompression, and largest JSONL line; larger ones are skipped.
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
}

fn default_max_file_bytes() -> u64 {
    crate::readers::local::DEFAULT_MAX_FILE_BYTES
}

impl LocalConfig {
    /// How the reader of this source reads.
    pub fn options(&self) -> crate::readers::local::LocalOptions {
        crate::readers::local::LocalOptions {
            follow_links: self.follow_links,
            max_file_bytes: self.max_file_bytes,
        }
    }
}

/// A `warc` source: web archives (WARC, WET; plain or gzipped per record).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarcConfig {
    /// An archive, a directory of them, or a list of either, relative to the topic file.
    pub path: OneOrMany,
    /// Name in reports (default `warc`).
    #[serde(default)]
    pub name: Option<String>,
    /// Follow symbolic links whose target lies outside a listed directory.
    #[serde(default)]
    pub follow_links: bool,
    /// Largest record block read; larger records are read over and skipped.
    #[serde(default = "default_max_record_bytes")]
    pub max_record_bytes: u64,
}

/// A path, or a list of paths.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One path.
    One(PathBuf),
    /// Several.
    Many(Vec<PathBuf>),
}

impl OneOrMany {
    /// The paths, in the order given.
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            OneOrMany::One(p) => vec![p.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

fn default_max_record_bytes() -> u64 {
    crate::readers::warc::DEFAULT_MAX_RECORD_BYTES
}

impl WarcConfig {
    /// How the reader of this source reads.
    pub fn options(&self) -> crate::readers::warc::WarcOptions {
        crate::readers::warc::WarcOptions {
            follow_links: self.follow_links,
            max_record_bytes: self.max_record_bytes,
        }
    }
}

/// One source of texts; `kind` selects the implementation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SourceSpec {
    /// Texts already on disk: a directory of `.txt`/`.html` files or a JSONL file.
    Local(LocalConfig),
    /// Web archives on disk: WARC and WET files.
    Warc(WarcConfig),
    /// Any MediaWiki Action API.
    Mediawiki(acquire::MediaWikiConfig),
    /// A SearXNG instance.
    Searxng(acquire::SearxngConfig),
    /// Brave Web Search API.
    Brave(acquire::BraveConfig),
    /// Yandex Search API v2.
    Yandex(acquire::YandexConfig),
    /// DuckDuckGo's HTML endpoint.
    Duckduckgo(acquire::DuckDuckGoConfig),
    /// Expert list of sites, crawled same-site.
    Sites(acquire::SitesConfig),
}

impl SourceSpec {
    /// The web source configuration, for every kind but `local`.
    pub fn web(&self) -> Option<WebSourceConfig> {
        Some(match self {
            SourceSpec::Local(_) | SourceSpec::Warc(_) => return None,
            SourceSpec::Mediawiki(c) => WebSourceConfig::Mediawiki(c.clone()),
            SourceSpec::Searxng(c) => WebSourceConfig::Searxng(c.clone()),
            SourceSpec::Brave(c) => WebSourceConfig::Brave(c.clone()),
            SourceSpec::Yandex(c) => WebSourceConfig::Yandex(c.clone()),
            SourceSpec::Duckduckgo(c) => WebSourceConfig::Duckduckgo(c.clone()),
            SourceSpec::Sites(c) => WebSourceConfig::Sites(c.clone()),
        })
    }

    /// The topic-file form of a web source configuration.
    pub fn from_web(w: WebSourceConfig) -> SourceSpec {
        match w {
            WebSourceConfig::Mediawiki(c) => SourceSpec::Mediawiki(c),
            WebSourceConfig::Searxng(c) => SourceSpec::Searxng(c),
            WebSourceConfig::Brave(c) => SourceSpec::Brave(c),
            WebSourceConfig::Yandex(c) => SourceSpec::Yandex(c),
            WebSourceConfig::Duckduckgo(c) => SourceSpec::Duckduckgo(c),
            WebSourceConfig::Sites(c) => SourceSpec::Sites(c),
        }
    }

    /// Kind name as written in the topic file.
    pub fn kind(&self) -> &'static str {
        match (self, self.web()) {
            (SourceSpec::Warc(_), _) => "warc",
            (_, None) => "local",
            (_, Some(w)) => w.kind(),
        }
    }

    /// Report name: the curator's `name`, else the kind (web sources: kind and host).
    pub fn display_name(&self) -> String {
        match (self, self.web()) {
            (SourceSpec::Local(c), _) => c.name.clone().unwrap_or_else(|| "local".into()),
            (SourceSpec::Warc(c), _) => c.name.clone().unwrap_or_else(|| "warc".into()),
            (_, Some(w)) => w.display_name(),
            (_, None) => "local".into(),
        }
    }
}

impl Topic {
    /// Reads, parses and checks a topic file.
    pub fn load(path: &Path) -> Result<Topic, TopicError> {
        let text = std::fs::read_to_string(path).map_err(|e| TopicError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: format!("cannot read topic file: {e}"),
        })?;
        let mut topic = Topic::parse(&text, path)?;
        topic.relevance_examples = topic.read_examples(&text, path)?;
        topic.file = std::path::absolute(path).ok();
        Ok(topic)
    }

    /// The texts of the example files and folders the relevance section names (folders read
    /// one level deep, `.txt` and `.md` files only: examples are the curator's plain texts).
    fn read_examples(&self, text: &str, path: &Path) -> Result<Vec<String>, TopicError> {
        if !self.relevance.enabled {
            return Ok(Vec::new());
        }
        let (line, column) = locate_key(text, "examples");
        let err = |message: String| TopicError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        };
        let mut out = Vec::new();
        for e in &self.relevance.examples {
            let p = self.resolve(e);
            let files: Vec<PathBuf> = if p.is_dir() {
                let mut v: Vec<PathBuf> = std::fs::read_dir(&p)
                    .map_err(|x| {
                        err(format!(
                            "relevance.examples: cannot list {}: {x}",
                            p.display()
                        ))
                    })?
                    .filter_map(|d| d.ok().map(|d| d.path()))
                    .filter(|f| {
                        f.is_file()
                            && matches!(
                                f.extension().and_then(|x| x.to_str()),
                                Some("txt") | Some("md")
                            )
                    })
                    .collect();
                v.sort();
                v
            } else {
                vec![p.clone()]
            };
            if files.is_empty() {
                return Err(err(format!(
                    "relevance.examples: {} holds no .txt or .md file",
                    p.display()
                )));
            }
            for f in files {
                let t = std::fs::read(&f).map_err(|x| {
                    err(format!(
                        "relevance.examples: cannot read {}: {x}",
                        f.display()
                    ))
                })?;
                out.push(String::from_utf8_lossy(&t).into_owned());
            }
        }
        Ok(out)
    }

    /// What the relevance stage scores texts against; None when it is off, or when the topic
    /// has neither keywords nor examples to score by (every text then passes).
    pub fn relevance_profile(&self) -> Option<Profile> {
        if !self.relevance.enabled {
            return None;
        }
        let p = Profile::new(
            &self.keywords,
            &self.relevance_examples,
            self.relevance.example_terms,
        );
        (!p.is_empty()).then_some(p)
    }

    /// Parses and checks topic text; `path` names it in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Topic, TopicError> {
        let err_at = |line: usize, column: usize, message: String| TopicError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        };
        let mut topic: Topic = serde_yaml::from_str(text).map_err(|e| {
            let (line, col) = e
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((1, 1));
            // serde_yaml appends " at line X column Y" itself; the prefix already says where.
            let msg = e.to_string();
            let msg = match msg.find(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            err_at(line, col, msg)
        })?;
        let here = |key: &str| locate_key(text, key);
        let name_ok = !topic.name.is_empty()
            && topic
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            let (l, c) = here("name");
            return Err(err_at(
                l,
                c,
                format!(
                    "name `{}` must be non-empty ASCII letters, digits, `-` or `_` (it names the output directory)",
                    topic.name
                ),
            ));
        }
        if topic.sources.is_empty() {
            let (l, c) = here("sources");
            return Err(err_at(
                l,
                c,
                "sources: at least one source is needed".into(),
            ));
        }
        if let Err(e) = crate::canon::StopWords::have_lists(&topic.languages) {
            let (l, c) = here("languages");
            return Err(err_at(l, c, format!("languages: {e}")));
        }
        let d = &topic.dedup;
        for (key, v) in [
            ("resemblance", d.resemblance),
            ("containment", d.containment),
            ("passage_share", d.passage_share),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                let (l, c) = here(key);
                return Err(err_at(
                    l,
                    c,
                    format!("dedup.{key} must be in (0, 1], got {v}"),
                ));
            }
        }
        if d.verify_from.is_nan() || d.verify_from < 0.0 {
            let (l, c) = here("verify_from");
            return Err(err_at(
                l,
                c,
                format!("dedup.verify_from must be 0 or more, got {}", d.verify_from),
            ));
        }
        if let Err(e) = crate::sign::build_detector(d) {
            let (l, c) = here("dedup");
            return Err(err_at(l, c, format!("dedup: {e}")));
        }
        if topic.crawl.per_host_rps.is_nan()
            || topic.crawl.per_host_rps <= 0.0
            || topic.crawl.concurrency == 0
            || topic.crawl.per_host_concurrency == 0
        {
            let (l, c) = here("crawl");
            return Err(err_at(
                l,
                c,
                "crawl: per_host_rps and concurrency must be positive".into(),
            ));
        }
        let r = &topic.relevance;
        if !(0.0..=1.0).contains(&r.threshold) {
            let (l, c) = here("relevance");
            return Err(err_at(
                l,
                c,
                format!("relevance.threshold must be in [0, 1], got {}", r.threshold),
            ));
        }
        topic.base_dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(topic)
    }

    /// A path from the topic file, resolved against the topic file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base_dir.join(p)
        }
    }

    /// Report names of the sources, unique, in topic order.
    pub fn source_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for s in &self.sources {
            let base = s.display_name();
            let mut name = base.clone();
            let mut k = 2;
            while names.contains(&name) {
                name = format!("{base}#{k}");
                k += 1;
            }
            names.push(name);
        }
        names
    }
}

/// 1-based line and column of the first `key:` in the text (for checks serde cannot place).
fn locate_key(text: &str, key: &str) -> (usize, usize) {
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let after = trimmed
            .strip_prefix(key)
            .or_else(|| trimmed.strip_prefix("- ").and_then(|t| t.strip_prefix(key)));
        if let Some(rest) = after {
            if rest.trim_start().starts_with(':') {
                return (i + 1, line.len() - trimmed.len() + 1);
            }
        }
        if let Some(col) = line.find(&format!("{key}:")) {
            let before = line[..col].chars().last();
            if matches!(before, None | Some(' ') | Some('{') | Some(',')) {
                return (i + 1, col + 1);
            }
        }
    }
    (1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name: dogs
title: Породы собак
languages: [ru, en]
keywords: [породы собак, немецкая овчарка, dog breeds]
sources:
  - {kind: local, path: ../examples/texts}
filter: {min_words: 100}
dedup: {method: modm, shingle: 4, modulus: 25, resemblance: 0.6, containment: 0.6}
";

    fn parse(text: &str) -> Result<Topic, TopicError> {
        Topic::parse(text, Path::new("topics/x.yaml"))
    }

    #[test]
    fn parses_the_documented_shape() {
        let t = parse(GOOD).unwrap();
        assert_eq!(t.name, "dogs");
        assert_eq!(t.keywords.len(), 3);
        assert_eq!(t.dedup.modulus, 25);
        assert_eq!(t.filter.min_words, 100);
        assert_eq!(
            t.resolve(Path::new("../examples/texts")),
            Path::new("topics/../examples/texts")
        );
    }

    #[test]
    fn unknown_key_is_an_error_with_position() {
        let e = parse(&GOOD.replace("filter: {min_words: 100}", "filter: {min_wrods: 100}"))
            .unwrap_err();
        assert_eq!(e.line, 7);
        assert!(e.to_string().starts_with("topics/x.yaml:7:"), "{e}");
        assert!(e.message.contains("min_wrods"), "{e}");
    }

    #[test]
    fn wrong_type_is_an_error_with_position() {
        let e = parse(&GOOD.replace("modulus: 25", "modulus: many")).unwrap_err();
        assert_eq!(e.line, 8);
        assert!(e.message.contains("invalid type"), "{e}");
    }

    #[test]
    fn missing_required_field_is_named() {
        let e = parse(&GOOD.replace("name: dogs\n", "")).unwrap_err();
        assert!(e.message.contains("missing field `name`"), "{e}");
    }

    #[test]
    fn unknown_source_kind_is_named() {
        let e = parse(&GOOD.replace("kind: local", "kind: ftp")).unwrap_err();
        assert_eq!(e.line, 6);
        assert!(e.message.contains("ftp"), "{e}");
    }

    #[test]
    fn bad_threshold_points_at_its_line() {
        let e = parse(&GOOD.replace("resemblance: 0.6", "resemblance: 1.5")).unwrap_err();
        assert_eq!(e.line, 8);
        assert!(e.message.contains("resemblance"), "{e}");
    }

    #[test]
    fn grey_zone_settings_are_checked_and_read() {
        let e = parse(&GOOD.replace("containment: 0.6}", "containment: 0.6, passage_share: 0}"))
            .unwrap_err();
        assert!(e.message.contains("passage_share"), "{e}");
        let e = parse(&GOOD.replace("containment: 0.6}", "containment: 0.6, verify_from: -1}"))
            .unwrap_err();
        assert!(e.message.contains("verify_from"), "{e}");
        let t = parse(&GOOD.replace("containment: 0.6}", "containment: 0.6, stem: true}")).unwrap();
        assert!(t.dedup.stem);
        assert_eq!(
            t.dedup.passage_words,
            DedupSettings::default().passage_words
        );
    }

    #[test]
    fn bad_language_points_at_its_line() {
        let e = parse(&GOOD.replace("[ru, en]", "[ru, xx]")).unwrap_err();
        assert_eq!((e.line, e.column), (3, 1));
    }

    #[test]
    fn web_sources_and_crawl_parse() {
        let t = parse(&GOOD.replace(
            "  - {kind: local, path: ../examples/texts}\n",
            "  - {kind: sites, urls: [\"https://example.org/\"], depth: 2, max_pages: 500}\n  - {kind: mediawiki, api: \"https://ru.wikipedia.org/w/api.php\"}\ncrawl: {per_host_rps: 1, concurrency: 8}\n",
        ))
        .unwrap();
        assert_eq!(t.sources[0].kind(), "sites");
        assert_eq!(t.source_names()[1], "mediawiki:ru.wikipedia.org");
        assert_eq!(t.crawl.concurrency, 8);
    }

    #[test]
    fn unknown_key_in_a_web_source_is_an_error() {
        let e = parse(&GOOD.replace(
            "  - {kind: local, path: ../examples/texts}\n",
            "  - {kind: sites, urls: [], depht: 2}\n",
        ))
        .unwrap_err();
        assert_eq!(e.line, 6);
        assert!(e.message.contains("depht"), "{e}");
    }

    #[test]
    fn local_options_and_strict_parse_with_defaults() {
        let t = parse(GOOD).unwrap();
        assert!(!t.strict);
        let SourceSpec::Local(c) = &t.sources[0] else {
            panic!("local")
        };
        assert_eq!(c.options(), crate::readers::local::LocalOptions::default());
        let t = parse(&format!(
            "{}strict: true\n",
            GOOD.replace(
                "path: ../examples/texts}",
                "path: ../examples/texts, follow_links: true, max_file_bytes: 1000}"
            )
        ))
        .unwrap();
        assert!(t.strict);
        let SourceSpec::Local(c) = &t.sources[0] else {
            panic!("local")
        };
        assert!(c.follow_links);
        assert_eq!(c.max_file_bytes, 1000);
    }

    #[test]
    fn relevance_switches_off_and_checks_its_threshold() {
        let t = parse(GOOD).unwrap();
        assert!(t.relevance.enabled);
        assert!(t.relevance_profile().is_some());
        let t = parse(&format!("{GOOD}relevance: off\n")).unwrap();
        assert!(t.relevance_profile().is_none());
        let e = parse(&format!("{GOOD}relevance: {{threshold: 2}}\n")).unwrap_err();
        assert_eq!(e.line, 9);
        assert!(e.message.contains("relevance.threshold"), "{e}");
    }

    #[test]
    fn missing_examples_are_named_with_the_topic_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.yaml");
        std::fs::write(
            &p,
            format!("{GOOD}relevance: {{examples: [nowhere.txt]}}\n"),
        )
        .unwrap();
        let e = Topic::load(&p).unwrap_err();
        assert!(e.to_string().contains("t.yaml:9:"), "{e}");
        assert!(e.message.contains("nowhere.txt"), "{e}");
        std::fs::write(dir.path().join("ex.txt"), "Гончие собаки идут по следу.").unwrap();
        std::fs::write(&p, format!("{GOOD}relevance: {{examples: [ex.txt]}}\n")).unwrap();
        let t = Topic::load(&p).unwrap();
        assert_eq!(t.relevance_examples.len(), 1);
    }

    #[test]
    fn repeated_sources_get_unique_names() {
        let t = parse(&GOOD.replace(
            "  - {kind: local, path: ../examples/texts}\n",
            "  - {kind: local, path: a}\n  - {kind: local, path: b}\n",
        ))
        .unwrap();
        assert_eq!(t.source_names(), vec!["local", "local#2"]);
    }
}
