//! Topic-file YAML for sources and crawl settings.

use collect::acquire::{CrawlConfig, WebSourceConfig, WikiText, DEFAULT_USER_AGENT};

#[test]
fn sources_parse_with_defaults() {
    let yaml = r#"
- kind: mediawiki
  api: https://ru.wikipedia.org/w/api.php
  limit: 50
  text: extracts
- kind: searxng
  url: http://127.0.0.1:8888
  tuples: {size: 3, count: 10, seed: 1}
- kind: brave
- kind: yandex
  folder_id: b1g
- kind: duckduckgo
  region: ru-ru
- {kind: sites, urls: [https://example.org/], depth: 2, max_pages: 500}
"#;
    let s: Vec<WebSourceConfig> = serde_yaml::from_str(yaml).unwrap();
    assert_eq!(s.len(), 6);
    match &s[0] {
        WebSourceConfig::Mediawiki(m) => {
            assert_eq!(m.text, WikiText::Extracts);
            assert_eq!(m.concurrency, 3);
            assert_eq!(m.limit, 50);
        }
        o => panic!("{o:?}"),
    }
    match &s[2] {
        WebSourceConfig::Brave(b) => {
            assert_eq!(b.key_env, "BRAVE_API_KEY");
            assert_eq!(b.api, "https://api.search.brave.com/res/v1/web/search");
        }
        o => panic!("{o:?}"),
    }
    match &s[5] {
        WebSourceConfig::Sites(c) => assert_eq!((c.depth, c.max_pages, c.sitemaps), (2, 500, true)),
        o => panic!("{o:?}"),
    }
    assert_eq!(s[1].tuples().unwrap().count, 10);
    assert_eq!(s[0].display_name(), "mediawiki:ru.wikipedia.org");
    // Round trip.
    let back: Vec<WebSourceConfig> =
        serde_yaml::from_str(&serde_yaml::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
}

#[test]
fn unknown_keys_and_kinds_are_rejected() {
    let e =
        serde_yaml::from_str::<WebSourceConfig>("{kind: sites, urls: [], deep: 3}").unwrap_err();
    assert!(e.to_string().contains("deep"), "{e}");
    assert!(serde_yaml::from_str::<WebSourceConfig>("{kind: bing}").is_err());
    assert!(serde_yaml::from_str::<CrawlConfig>("{per_host_rps: 1, speed: 9}").is_err());
}

#[test]
fn crawl_defaults() {
    let c: CrawlConfig = serde_yaml::from_str("{per_host_rps: 1, concurrency: 8}").unwrap();
    assert_eq!(c, CrawlConfig::default());
    assert_eq!(c.user_agent, DEFAULT_USER_AGENT);
    assert!(!c.allow_private);
    assert_eq!((c.max_redirects, c.retries), (10, 3));
    let c: CrawlConfig = serde_yaml::from_str("{per_host_rps: 0.5, allow_private: true}").unwrap();
    assert_eq!(c.per_host_rps, 0.5);
    assert!(c.allow_private);
}
