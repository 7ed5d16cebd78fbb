//! SearXNG, Brave, Yandex and DuckDuckGo stand-ins serving captured answers,
//! with result URLs rewritten to a loopback site so the chain stays offline.

use std::sync::Arc;

use base64::Engine;
use serde_json::Value;

use super::server::{Handler, Reply, Request, Response};

const SX_SPECIES: &str = include_str!("fixtures/searxng/01_search_json_species.body.json");
const SX_PAGE2: &str = include_str!("fixtures/searxng/02_search_json_page2.body.json");
const SX_FAILING: &str =
    include_str!("fixtures/searxng/03_search_json_with_failing_engine.body.json");
const SX_RU: &str = include_str!("fixtures/searxng/04_search_json_ru.body.json");
const SX_NONE: &str = include_str!("fixtures/searxng/05_search_json_no_results.body.json");
const SX_CSV_403: &str = include_str!("fixtures/searxng/06_search_csv_forbidden.body.txt");
const SX_EMPTY_Q: &str = include_str!("fixtures/searxng/08_search_json_empty_query.body.json");
const BRAVE_WEB: &str = include_str!("fixtures/brave/web_search_hello_world.json");
const YANDEX_XML: &str = include_str!("fixtures/yandex/xml_response_structure_from_docs.xml");
const DDG_FOO: &str = include_str!("fixtures/duckduckgo/html_search_foo_page1.html");

/// Hand-written (no licensed capture exists): carries the markers SearXNG
/// and others document for DuckDuckGo's bot challenge.
const DDG_CHALLENGE: &str = "<!DOCTYPE html><html><body><div class=\"anomaly-modal__modal\">\
<p>Unfortunately, bots use DuckDuckGo too.</p><form id=\"challenge-form\" action=\"/anomaly.js\"></form>\
</div></body></html>";

/// Maps any result URL to `{site}/ext/{host}{path}` on the loopback results site.
pub fn rewrite(orig: &str, site_base: &str) -> String {
    match url::Url::parse(orig) {
        Ok(u) => {
            let host = match u.port() {
                Some(p) => format!("{}_{p}", u.host_str().unwrap_or("host")),
                None => u.host_str().unwrap_or("host").to_string(),
            };
            let mut s = format!("{site_base}/ext/{host}{}", u.path());
            if let Some(q) = u.query() {
                s.push('?');
                s.push_str(q);
            }
            s
        }
        Err(_) => format!("{site_base}/ext/unparseable"),
    }
}

fn rewrite_json(body: &str, site: &str, ptr: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(body) else {
        return body.to_string();
    };
    if let Some(arr) = v.pointer_mut(ptr).and_then(Value::as_array_mut) {
        for r in arr {
            if let Some(u) = r.get("url").and_then(Value::as_str).map(str::to_string) {
                r["url"] = Value::String(rewrite(&u, site));
            }
        }
    }
    v.to_string()
}

/// SearXNG `/search` with `format=json`.
pub fn searxng(site: String) -> Handler {
    Arc::new(move |req: &Request| -> Reply {
        if req.path != "/search" {
            return Response::not_found().into();
        }
        if req.param("format") != Some("json") {
            return Response::new(403, "text/html; charset=utf-8", SX_CSV_403).into();
        }
        let q = req.param("q").unwrap_or("").trim().to_lowercase();
        let page = req.param("pageno").unwrap_or("1");
        let body = if q.is_empty() {
            SX_EMPTY_Q
        } else if req.param("engines").is_some_and(|e| e.contains("deadwiki")) {
            SX_FAILING
        } else if q == "species" && page == "1" {
            SX_SPECIES
        } else if q == "species" && page == "2" {
            SX_PAGE2
        } else if q == "литва" && page == "1" {
            SX_RU
        } else {
            SX_NONE
        };
        Response::new(
            200,
            "application/json",
            rewrite_json(body, &site, "/results"),
        )
        .into()
    })
}

/// Brave `/res/v1/web/search`; the token must equal `key`.
pub fn brave(site: String, key: String) -> Handler {
    Arc::new(move |req: &Request| -> Reply {
        if req.path != "/res/v1/web/search" {
            return Response::not_found().into();
        }
        if req.header("x-subscription-token") != Some(key.as_str()) {
            return Response::new(
                401,
                "application/json",
                r#"{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","status":401,"detail":"The provided subscription token is invalid."}}"#,
            )
            .into();
        }
        if req.param("offset").unwrap_or("0") != "0" {
            return Response::json(r#"{"type":"search","query":{"more_results_available":false},"web":{"results":[]}}"#).into();
        }
        Response::json(rewrite_json(BRAVE_WEB, &site, "/web/results")).into()
    })
}

/// Yandex `/v2/web/search` (POST JSON, `Authorization: Api-Key KEY`).
pub fn yandex(site: String, key: String) -> Handler {
    Arc::new(move |req: &Request| -> Reply {
        if req.path != "/v2/web/search" || req.method != "POST" {
            return Response::not_found().into();
        }
        if req.header("authorization") != Some(format!("Api-Key {key}").as_str()) {
            return Response::new(
                401,
                "application/json",
                r#"{"code":16,"message":"Unauthenticated"}"#,
            )
            .into();
        }
        let xml = YANDEX_XML.replace(
            "https://www.yandex.ru/",
            &rewrite("https://www.yandex.ru/", &site),
        );
        let raw = base64::engine::general_purpose::STANDARD.encode(xml.as_bytes());
        Response::json(serde_json::json!({ "rawData": raw }).to_string()).into()
    })
}

/// DuckDuckGo `/html/`; the query `blocked` gets the bot challenge (HTTP 202).
pub fn duckduckgo(site: String) -> Handler {
    let page = rewrite_ddg(DDG_FOO, &site);
    Arc::new(move |req: &Request| -> Reply {
        if req.path != "/html/" && req.path != "/html" {
            return Response::not_found().into();
        }
        // Page 2+ arrives as a POSTed form.
        let form: Vec<(String, String)> = url::form_urlencoded::parse(&req.body)
            .into_owned()
            .collect();
        let q = req
            .param("q")
            .map(str::to_string)
            .or_else(|| form.iter().find(|(k, _)| k == "q").map(|(_, v)| v.clone()));
        if q.is_some_and(|q| q.contains("blocked")) {
            return Response::new(202, "text/html; charset=UTF-8", DDG_CHALLENGE).into();
        }
        Response::new(200, "text/html; charset=UTF-8", page.clone()).into()
    })
}

/// Rewrites every `uddg=` target of the captured page.
fn rewrite_ddg(html: &str, site: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("uddg=") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let end = rest.find(['&', '"', '\'']).unwrap_or(rest.len());
        let enc = &rest[..end];
        let dec: String = url::form_urlencoded::parse(format!("x={enc}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let new = rewrite(&dec, site);
        out.extend(url::form_urlencoded::byte_serialize(new.as_bytes()));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
