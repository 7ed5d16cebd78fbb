//! URL normalisation so that one page is fetched once.

use url::Url;

/// Query parameters that only track the visitor and never change the page.
const TRACKING: &[&str] = &[
    "fbclid",
    "gclid",
    "dclid",
    "gbraid",
    "wbraid",
    "yclid",
    "ysclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "igshid",
    "_openstat",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
    "rb_clickid",
    "s_cid",
    "twclid",
    "ttclid",
    "li_fat_id",
];

fn is_tracking(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.starts_with("utm_") || TRACKING.contains(&k.as_str())
}

/// Normalises a parsed URL: no fragment, no tracking parameters, no empty query.
/// Host lowercasing and default-port removal are done by the `url` parser.
pub fn normalize(mut u: Url) -> Url {
    u.set_fragment(None);
    if u.query().is_some() {
        let kept: Vec<(String, String)> = u
            .query_pairs()
            .filter(|(k, _)| !is_tracking(k))
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if kept.is_empty() {
            u.set_query(None);
        } else if kept.len() != u.query_pairs().count() {
            u.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    if u.path().is_empty() && u.cannot_be_a_base() {
        return u;
    }
    u
}

/// Parses and normalises; `Err` names the URL.
pub fn normalize_str(s: &str) -> Result<Url, String> {
    let u = Url::parse(s.trim()).map_err(|e| format!("bad URL {s}: {e}"))?;
    Ok(normalize(u))
}

/// Rate-limit and concurrency key: host plus explicit port.
pub fn host_key(u: &Url) -> String {
    match (u.host_str(), u.port_or_known_default()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => String::new(),
    }
}

/// robots.txt scope: scheme, host and port (RFC 9309 §2.3).
pub fn origin_key(u: &Url) -> String {
    u.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_fragment_tracking_and_default_port() {
        let u = normalize_str("HTTP://Example.COM:80/a/b?utm_source=x&id=5&fbclid=1&YCLID=2#top")
            .unwrap();
        assert_eq!(u.as_str(), "http://example.com/a/b?id=5");
        let u = normalize_str("https://example.com:443/?utm_medium=a&gclid=b").unwrap();
        assert_eq!(u.as_str(), "https://example.com/");
        let u = normalize_str("https://example.com:8443/x?b=2&a=1").unwrap();
        assert_eq!(u.as_str(), "https://example.com:8443/x?b=2&a=1");
    }

    #[test]
    fn keys() {
        let u = normalize_str("http://127.0.0.1:8080/x").unwrap();
        assert_eq!(host_key(&u), "127.0.0.1:8080");
        assert_eq!(origin_key(&u), "http://127.0.0.1:8080");
        assert!(normalize_str("not a url")
            .unwrap_err()
            .contains("not a url"));
    }
}
