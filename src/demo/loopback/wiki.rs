//! A MediaWiki Action API stand-in answering from captured MediaWiki output.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::server::{Handler, Reply, Request, Response};

/// Which captured wiki to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WikiLang {
    /// enwiki 2016 sample (Aardvark, Aardwolf, ...).
    En,
    /// ruwiki «Литва».
    Ru,
}

macro_rules! fx {
    ($p:literal) => {
        (
            include_str!(concat!("fixtures/mediawiki/", $p, ".request.txt")),
            include_str!(concat!("fixtures/mediawiki/", $p, ".body.json")),
        )
    };
}

const EN: &[(&str, &str)] = &[
    fx!("enwiki/01_list_search_page1"),
    fx!("enwiki/02_list_search_page2_sroffset"),
    fx!("enwiki/02b_list_search_last_page"),
    fx!("enwiki/03_list_search_allprops"),
    fx!("enwiki/06_revisions_content_two_titles"),
    fx!("enwiki/08_revisions_redirect_followed_normalized"),
    fx!("enwiki/09_revisions_missing_and_invalid"),
    fx!("enwiki/11_extracts_plain_full"),
    fx!("enwiki/18_generator_search_revisions"),
];
const RU: &[(&str, &str)] = &[
    fx!("ruwiki/01_list_search_litva"),
    fx!("ruwiki/02_list_search_lowercase_multiword"),
    fx!("ruwiki/03_revisions_content_litva"),
    fx!("ruwiki/04_revisions_redirect_followed"),
    fx!("ruwiki/05_extracts_plain_full_litva"),
];
const NO_RESULTS: &str =
    include_str!("fixtures/mediawiki/enwiki/04_list_search_no_results.body.json");
const MAXLAG: &str = include_str!("fixtures/mediawiki/enwiki/19_maxlag_error.body.json");
const BADVALUE: &str = include_str!("fixtures/mediawiki/enwiki/20_badvalue_error.body.json");

/// Knowledge pulled out of the captures.
#[derive(Default)]
struct Wiki {
    searches: HashMap<(String, String), &'static str>,
    revisions: HashMap<String, Value>,
    extracts: HashMap<String, Value>,
    renames: HashMap<String, (&'static str, String)>,
}

fn request_params(req: &str) -> Vec<(String, String)> {
    let line = req.lines().next().unwrap_or("");
    let url = line.split_whitespace().nth(1).unwrap_or("");
    url::Url::parse(url)
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn load(lang: WikiLang) -> Wiki {
    let mut w = Wiki::default();
    for (req, body) in if lang == WikiLang::En { EN } else { RU } {
        let params = request_params(req);
        let p = |k: &str| params.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
        let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        if p("list").as_deref() == Some("search") {
            let key = (
                p("srsearch").unwrap_or_default().to_lowercase(),
                p("sroffset").unwrap_or_else(|| "0".into()),
            );
            w.searches.insert(key, body);
            continue;
        }
        for (kind, ptr) in [
            ("normalized", "/query/normalized"),
            ("redirects", "/query/redirects"),
        ] {
            for m in v
                .pointer(ptr)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(f), Some(t)) = (m["from"].as_str(), m["to"].as_str()) {
                    w.renames.insert(f.to_string(), (kind, t.to_string()));
                }
            }
        }
        for page in v
            .pointer("/query/pages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(t) = page["title"].as_str() else {
                continue;
            };
            if page.get("extract").is_some() {
                w.extracts.insert(t.to_string(), page.clone());
            } else if page.get("revisions").is_some() || page.get("missing").is_some() {
                w.revisions
                    .entry(t.to_string())
                    .or_insert_with(|| page.clone());
            }
        }
    }
    w
}

/// Handler for `/w/api.php`. The first `maxlag_first` requests get the captured
/// maxlag error (its Retry-After lowered to 1 s to keep tests quick).
pub fn handler(lang: WikiLang, maxlag_first: usize) -> Handler {
    let wiki = Arc::new(load(lang));
    let lagged = Arc::new(AtomicUsize::new(maxlag_first));
    Arc::new(move |req: &Request| -> Reply {
        if req.path == "/robots.txt" {
            // Wikipedia's real robots.txt keeps crawlers out of /w/: APIs must not depend on it.
            return Response::new(200, "text/plain", "User-agent: *\nDisallow: /w/\n").into();
        }
        if req.path != "/w/api.php" {
            return Response::not_found().into();
        }
        if req.param("maxlag").is_some()
            && lagged
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Response::json(MAXLAG)
                .with_header("Retry-After", "1")
                .with_header("X-Database-Lag", "7")
                .with_header("MediaWiki-API-Error", "maxlag")
                .into();
        }
        Response::json(answer(&wiki, req)).into()
    })
}

fn answer(w: &Wiki, req: &Request) -> String {
    if req.param("action") != Some("query") {
        return BADVALUE.to_string();
    }
    if req.param("list") == Some("search") {
        let key = (
            req.param("srsearch").unwrap_or("").to_lowercase(),
            req.param("sroffset").unwrap_or("0").to_string(),
        );
        return w
            .searches
            .get(&key)
            .copied()
            .unwrap_or(NO_RESULTS)
            .to_string();
    }
    let Some(titles) = req.param("titles") else {
        return BADVALUE.to_string();
    };
    let titles: Vec<&str> = titles.split('|').collect();
    let follow = req.param("redirects").is_some();
    let extracts = req
        .param("prop")
        .is_some_and(|p| p.split('|').any(|x| x == "extracts"));
    let mut normalized = Vec::new();
    let mut redirects = Vec::new();
    let mut finals = Vec::new();
    for t in &titles {
        let mut cur = t.to_string();
        while let Some((kind, to)) = w.renames.get(&cur) {
            if *kind == "redirects" && !follow {
                break;
            }
            let entry = json!({"from": cur, "to": to});
            if *kind == "normalized" {
                normalized.push(entry);
            } else {
                redirects.push(entry);
            }
            cur = to.clone();
        }
        if !finals.contains(&cur) {
            finals.push(cur);
        }
    }
    // TextExtracts gives one full-text extract per request and asks to continue.
    let start: usize = req
        .param("excontinue")
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut pages = Vec::new();
    for (i, t) in finals.iter().enumerate() {
        let stored = if extracts {
            w.extracts.get(t)
        } else {
            w.revisions.get(t)
        };
        let mut page = match stored {
            Some(p) => p.clone(),
            None => json!({"ns": 0, "title": t, "missing": true}),
        };
        if extracts && i != start && page.get("extract").is_some() {
            if let Some(o) = page.as_object_mut() {
                o.remove("extract");
            }
        }
        pages.push(page);
    }
    let mut query = serde_json::Map::new();
    if !normalized.is_empty() {
        query.insert("normalized".into(), Value::Array(normalized));
    }
    if !redirects.is_empty() {
        query.insert("redirects".into(), Value::Array(redirects));
    }
    query.insert("pages".into(), Value::Array(pages));
    let mut out = json!({"batchcomplete": true, "query": query});
    if extracts && start + 1 < finals.len() {
        out["continue"] = json!({"excontinue": start + 1, "continue": "||"});
        out.as_object_mut().map(|o| o.remove("batchcomplete"));
    }
    out.to_string()
}
