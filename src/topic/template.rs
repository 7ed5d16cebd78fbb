//! `collect new`: a commented topic file with every section and its defaults written out.
//!
//! The values are not copies: they are what the topic deserializer gives a topic that leaves
//! them out (see [`defaults`]), serialized key by key; only the one-line comments are written
//! here, by key. A unit test parses the result back and compares it with the defaults.

use super::{SourceSpec, Topic, TopicError};
use serde_yaml::Value;
use std::path::Path;

/// Source kinds `collect new --source` knows, in the order of docs/topic-file.md.
pub const SOURCE_KINDS: &[&str] = &[
    "local",
    "warc",
    "mediawiki",
    "searxng",
    "brave",
    "yandex",
    "duckduckgo",
    "sites",
];

/// What the curator gave `collect new`.
#[derive(Debug, Clone, Default)]
pub struct NewTopic {
    /// Machine name of the collection.
    pub name: String,
    /// Human title (empty: the default).
    pub title: Option<String>,
    /// Languages (empty: the default).
    pub languages: Vec<String>,
    /// Keywords.
    pub keywords: Vec<String>,
    /// Source kinds (empty: a `mediawiki` source per language); `mediawiki` stands for one
    /// Wikipedia per language.
    pub sources: Vec<String>,
}

/// The topic a file with only `name` and `sources` gives: every other key at its default.
pub fn defaults() -> Topic {
    serde_yaml::from_str("name: x\nsources: [{kind: local, path: x}]")
        .expect("a topic of name and sources parses")
}

/// One-line comments of the top-level keys.
const TOP: &[(&str, &str)] = &[
    ("name", "Machine name: the collection goes to collections/<name>/ (ASCII letters, digits, - and _)."),
    ("title", "Human title, shown in the report."),
    ("languages", "Languages kept (ISO 639-1); also the stop-word lists used for shingles."),
    ("keywords", "The theme's keywords: queries sent to search sources, and what relevance scores by."),
    ("sources", "Where texts come from, in priority order (the earlier source's copy of a duplicate stays)."),
    ("filter", "Filters applied after cleaning."),
    ("relevance", "Relevance to the topic (`relevance: off` switches it off); texts below the threshold are `off_topic`."),
    ("dedup", "Near-duplicate detection (docs/methods.md, docs/method.md §5)."),
    ("crawl", "Politeness of web fetching."),
    ("review", "Curation: standing rules that build and update apply to the review queue, each application one entry of `collect review log` (undo it there)."),
    ("strict", "Stop a build or update at the first bad input (exit 2) instead of skipping and recording it."),
];

/// One-line comments of the keys of each section, by section and key.
const KEYS: &[(&str, &str, &str)] = &[
    (
        "filter",
        "min_words",
        "texts with fewer words after cleaning stay in the store as `short`",
    ),
    (
        "filter",
        "max_words",
        "texts with more words are `filtered` (0: no limit)",
    ),
    (
        "filter",
        "language",
        "keep only texts detected in one of `languages` (undetectable texts stay)",
    ),
    (
        "relevance",
        "enabled",
        "false is the same as `relevance: off`: no score, nothing kept out",
    ),
    (
        "relevance",
        "threshold",
        "texts scoring below it (0 to 1) are kept out as `off_topic`",
    ),
    (
        "relevance",
        "examples",
        "files or folders (.txt, .md) of texts on the topic, relative to this file",
    ),
    (
        "relevance",
        "example_terms",
        "stems taken from the examples beyond the keywords'",
    ),
    (
        "dedup",
        "method",
        "detector: modm, minn, full, megashingles, … (docs/methods.md)",
    ),
    (
        "dedup",
        "shingle",
        "words per shingle (null: the detector's own, 4; megashingles 5)",
    ),
    ("dedup", "modulus", "mod-m: modulus"),
    ("dedup", "min_n", "min-n: signature size"),
    ("dedup", "maps", "megashingles: min-wise maps"),
    (
        "dedup",
        "supershingles",
        "megashingles: supershingles (maps must divide evenly)",
    ),
    (
        "dedup",
        "resemblance",
        "resemblance at or above it: duplicates, one copy dropped",
    ),
    (
        "dedup",
        "containment",
        "containment at or above it: the pair is flagged for review",
    ),
    (
        "dedup",
        "min_elements",
        "mod-m: texts with fewer sampled fingerprints keep their full index",
    ),
    (
        "dedup",
        "agree",
        "infostream: heavy terms (of 12) two texts must share to be duplicates",
    ),
    (
        "dedup",
        "verify_from",
        "grey zone: pairs scoring at least this are re-scored on the full texts (above 1: off)",
    ),
    (
        "dedup",
        "passage_words",
        "grey zone: words a shared run spans to be a copied passage (0: off)",
    ),
    (
        "dedup",
        "passage_share",
        "grey zone: share of the shorter text in copied passages that makes a pair contained",
    ),
    (
        "dedup",
        "passage_common",
        "grey zone: a shingle in more of the texts verified together is boilerplate, not a copy",
    ),
    (
        "dedup",
        "stem",
        "canonical words are Snowball stems (ru/en); changes every signature",
    ),
    (
        "dedup",
        "min_shared_shingles",
        "a contained pair sharing fewer shingles is weak: stored, not reviewed",
    ),
    (
        "crawl",
        "per_host_rps",
        "requests per second to one host (a slower robots.txt Crawl-delay wins)",
    ),
    ("crawl", "concurrency", "requests in flight over all hosts"),
    (
        "crawl",
        "per_host_concurrency",
        "requests in flight to one host",
    ),
    (
        "crawl",
        "user_agent",
        "User-Agent header: put your own contact here",
    ),
    ("crawl", "connect_timeout_secs", "connect timeout, seconds"),
    (
        "crawl",
        "timeout_secs",
        "total timeout of one request, seconds",
    ),
    (
        "crawl",
        "max_body_bytes",
        "cap on the decompressed body, bytes",
    ),
    ("crawl", "max_redirects", "redirect hops followed per URL"),
    (
        "crawl",
        "retries",
        "retries on timeouts, connection errors, 5xx and 429",
    ),
    (
        "crawl",
        "backoff_ms",
        "first back-off, milliseconds (doubles each retry, with jitter)",
    ),
    (
        "crawl",
        "max_retry_after_secs",
        "a longer Retry-After fails the URL instead of waiting",
    ),
    (
        "crawl",
        "allow_private",
        "allow loopback and private addresses (tests, intranets)",
    ),
    (
        "crawl",
        "resolve",
        "host names pinned to addresses instead of DNS, like curl --resolve",
    ),
];

/// The comment of a section's key.
fn key_comment(section: &str, key: &str) -> Option<&'static str> {
    KEYS.iter()
        .find(|(s, k, _)| *s == section && *k == key)
        .map(|(_, _, c)| *c)
}

fn top_comment(key: &str) -> &'static str {
    TOP.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, c)| *c)
        .unwrap_or("")
}

/// A source of `kind` in its shortest form (required keys only), and its comment.
fn source_seed(kind: &str, lang: &str) -> Option<(String, String)> {
    let (seed, comment) = match kind {
        "local" => (
            "{kind: local, path: texts}".to_string(),
            "texts on disk: a folder of .txt/.html/.pdf/… files or a .jsonl file, relative to this file".to_string(),
        ),
        "warc" => (
            "{kind: warc, path: archives}".to_string(),
            "web archives on disk: .warc, .wet, plain or gzipped; a file, a folder or a list".to_string(),
        ),
        "mediawiki" => (
            format!("{{kind: mediawiki, api: \"https://{lang}.wikipedia.org/w/api.php\"}}"),
            format!("Wikipedia ({lang}); any MediaWiki Action API works"),
        ),
        "searxng" => (
            "{kind: searxng}".to_string(),
            "a SearXNG instance with the JSON format: add `url: http://your-searxng/`".to_string(),
        ),
        "brave" => (
            "{kind: brave}".to_string(),
            "Brave Web Search API; the key is read from the variable named by key_env".to_string(),
        ),
        "yandex" => (
            "{kind: yandex}".to_string(),
            "Yandex Search API v2; key and folder from the variables key_env and folder_env".to_string(),
        ),
        "duckduckgo" => (
            "{kind: duckduckgo}".to_string(),
            "DuckDuckGo's keyless HTML endpoint, best effort".to_string(),
        ),
        "sites" => (
            "{kind: sites, urls: []}".to_string(),
            "an expert list of sites, crawled same-site: put start URLs in `urls`".to_string(),
        ),
        _ => return None,
    };
    Some((seed, comment))
}

/// A source of `kind` with every default written out, as one flow-style YAML line.
fn source_line(kind: &str, lang: &str) -> Option<(String, String)> {
    let (seed, comment) = source_seed(kind, lang)?;
    let spec: SourceSpec = serde_yaml::from_str(&seed).expect("source seeds parse");
    let value = serde_yaml::to_value(&spec).expect("sources serialize");
    Some((flow(&value), comment))
}

/// A value in YAML flow style; strings plain only when they cannot be read as anything else.
fn flow(v: &Value) -> String {
    match v {
        Value::Mapping(m) => {
            let items: Vec<String> = m
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{}: {}", flow(k), flow(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Sequence(s) => {
            let items: Vec<String> = s.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::Tagged(t) => flow(&t.value),
        other => serde_json::to_string(other).expect("YAML scalars serialize as JSON"),
    }
}

/// Whether a string can be written unquoted (an identifier that is no YAML keyword).
fn plain_ok(s: &str) -> bool {
    let reserved = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ];
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
}

/// A section (`filter`, `dedup`, …) in block style, each key under its comment.
fn section(out: &mut String, name: &str, value: Value) {
    out.push_str(&format!("\n# {}\n{name}:\n", top_comment(name)));
    let Value::Mapping(m) = value else {
        unreachable!("sections serialize as maps")
    };
    for (k, v) in &m {
        let key = k.as_str().expect("section keys are strings");
        if let Some(c) = key_comment(name, key) {
            out.push_str(&format!("  # {c}\n"));
        }
        out.push_str(&format!("  {key}: {}\n", flow(v)));
    }
}

fn to_value<T: serde::Serialize>(t: &T) -> Value {
    serde_yaml::to_value(t).expect("settings serialize")
}

/// The topic file `collect new` writes, checked by [`Topic::parse`] as `path`.
pub fn render(spec: &NewTopic, path: &Path) -> Result<String, TopicError> {
    let d = defaults();
    let languages = if spec.languages.is_empty() {
        d.languages.clone()
    } else {
        spec.languages.clone()
    };
    let kinds: Vec<String> = if spec.sources.is_empty() {
        vec!["mediawiki".into()]
    } else {
        spec.sources.clone()
    };
    let bad = |message: String| TopicError {
        path: path.to_path_buf(),
        line: 1,
        column: 1,
        message,
    };
    let mut sources = Vec::new();
    for kind in &kinds {
        if kind == "mediawiki" {
            for lang in &languages {
                sources.push(source_line(kind, lang).expect("mediawiki is a kind"));
            }
        } else {
            sources.push(source_line(kind, "").ok_or_else(|| {
                bad(format!(
                    "unknown source kind `{kind}` (one of: {})",
                    SOURCE_KINDS.join(", ")
                ))
            })?);
        }
    }

    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = format!(
        "# {file}: the topic of the collection `{name}`, written by `collect new`.\n\
         # Every key is here with its default; each is explained in docs/topic-file.md.\n\
         # Check it with `collect check {p}`, build it with `collect build {p}`.\n",
        name = spec.name,
        p = path.display()
    );
    let title = spec.title.clone().unwrap_or(d.title.clone());
    out.push_str(&format!(
        "\n# {}\nname: {}\n",
        top_comment("name"),
        flow(&Value::String(spec.name.clone()))
    ));
    out.push_str(&format!(
        "# {}\ntitle: {}\n",
        top_comment("title"),
        flow(&Value::String(title))
    ));
    out.push_str(&format!(
        "# {}\nlanguages: {}\n",
        top_comment("languages"),
        flow(&to_value(&languages))
    ));
    out.push_str(&format!("# {}\nkeywords:", top_comment("keywords")));
    if spec.keywords.is_empty() {
        out.push_str(" []\n");
    } else {
        out.push('\n');
        for k in &spec.keywords {
            out.push_str(&format!("  - {}\n", flow(&Value::String(k.clone()))));
        }
    }

    out.push_str(&format!("\n# {}\n", top_comment("sources")));
    out.push_str("# Every kind and key: docs/topic-file.md, \"sources[]\".\nsources:\n");
    for (line, comment) in &sources {
        out.push_str(&format!("  # {comment}\n  - {line}\n"));
    }
    if !kinds.iter().any(|k| k == "local") {
        let (line, comment) = source_line("local", "").expect("local is a kind");
        out.push_str(&format!("  # {comment}\n  # - {line}\n"));
    }

    section(&mut out, "filter", to_value(&d.filter));
    section(&mut out, "relevance", to_value(&d.relevance));
    section(&mut out, "dedup", to_value(&d.dedup));
    section(&mut out, "crawl", to_value(&d.crawl));
    // Rules have no default to write out: an example shows their shape instead.
    out.push_str(&format!(
        "\n# {}\nreview:\n  # decide every pending pair a rule picks (fields and grammar: `collect review decide --help`), e.g.\n  \
         #   - {{where: \"cont >= 0.95 and words < 80\", decision: drop-contained, note: stubs inside articles}}\n  rules: []\n",
        top_comment("review")
    ));
    out.push_str(&format!(
        "\n# {}\nstrict: {}\n",
        top_comment("strict"),
        flow(&to_value(&d.strict))
    ));

    Topic::parse(&out, path)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acquire::CrawlConfig;
    use crate::filter::FilterSettings;
    use crate::relevance::RelevanceSettings;
    use crate::sign::DedupSettings;

    fn spec() -> NewTopic {
        NewTopic {
            name: "dogs".into(),
            keywords: vec!["овчарка".into(), "german shepherd".into(), "yes".into()],
            ..NewTopic::default()
        }
    }

    #[test]
    fn the_file_parses_back_to_the_defaults() {
        let p = Path::new("topics/dogs.yaml");
        let text = render(&spec(), p).unwrap();
        let t = Topic::parse(&text, p).unwrap();
        assert_eq!(t.name, "dogs");
        assert_eq!(t.keywords, ["овчарка", "german shepherd", "yes"]);
        assert_eq!(t.languages, ["ru", "en"]);
        assert_eq!(t.title, "");
        assert!(!t.strict);
        // The Default impls, not only what the deserializer gives.
        assert_eq!(t.filter, FilterSettings::default());
        assert_eq!(t.relevance, RelevanceSettings::default());
        assert_eq!(t.dedup, DedupSettings::default());
        assert_eq!(t.crawl, CrawlConfig::default());
        assert_eq!(t.review, crate::topic::ReviewSettings::default());
        // The example rule in the comment is one the topic accepts.
        let example = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("#   - "))
            .expect("an example rule");
        let with_rule = text.replace("  rules: []", &format!("  rules:\n    - {example}"));
        assert_eq!(Topic::parse(&with_rule, p).unwrap().review.rules.len(), 1);
        let names = t.source_names();
        assert_eq!(
            names,
            ["mediawiki:ru.wikipedia.org", "mediawiki:en.wikipedia.org"]
        );
    }

    #[test]
    fn every_key_of_every_section_has_a_comment() {
        let d = defaults();
        for (name, v) in [
            ("filter", to_value(&d.filter)),
            ("relevance", to_value(&d.relevance)),
            ("dedup", to_value(&d.dedup)),
            ("crawl", to_value(&d.crawl)),
        ] {
            for (k, _) in v.as_mapping().unwrap() {
                let k = k.as_str().unwrap();
                assert!(key_comment(name, k).is_some(), "{name}.{k} has no comment");
            }
        }
        for (k, _) in TOP {
            assert!(!top_comment(k).is_empty());
        }
    }

    #[test]
    fn every_source_kind_renders_with_its_defaults_and_parses() {
        for kind in SOURCE_KINDS {
            let s = NewTopic {
                sources: vec![kind.to_string()],
                ..spec()
            };
            let p = Path::new("topics/dogs.yaml");
            let text = render(&s, p).unwrap();
            let t = Topic::parse(&text, p).unwrap();
            assert!(t.sources.iter().all(|x| x.kind() == *kind), "{kind}");
        }
        let (line, _) = source_line("mediawiki", "ru").unwrap();
        assert!(line.contains("limit: 20"), "{line}");
        let (line, _) = source_line("local", "").unwrap();
        assert!(line.contains("max_file_bytes: "), "{line}");
    }

    #[test]
    fn the_commented_local_source_parses_when_uncommented() {
        let p = Path::new("topics/dogs.yaml");
        let text = render(&spec(), p)
            .unwrap()
            .replace("  # - {kind: local", "  - {kind: local");
        let t = Topic::parse(&text, p).unwrap();
        assert_eq!(t.sources.len(), 3);
        assert_eq!(t.sources[2].kind(), "local");
    }

    #[test]
    fn unknown_kind_and_bad_name_are_refused() {
        let p = Path::new("topics/x.yaml");
        let e = render(
            &NewTopic {
                sources: vec!["ftp".into()],
                ..spec()
            },
            p,
        )
        .unwrap_err();
        assert!(e.message.contains("ftp"), "{e}");
        let e = render(
            &NewTopic {
                name: "dogs and cats".into(),
                ..spec()
            },
            p,
        )
        .unwrap_err();
        assert!(e.message.contains("name"), "{e}");
    }
}
