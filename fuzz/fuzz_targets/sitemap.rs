//! Feeds arbitrary text (lossy UTF-8) to the XML/HTML answers the crawler reads: sitemaps,
//! Yandex XML and DuckDuckGo result pages. Never panics; errors and empty results are fine.
#![no_main]

use collect::acquire::sources::{duckduckgo, sites, yandex};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (locs, _index) = sites::parse_sitemap(&text);
    assert!(locs.iter().all(|l| !l.is_empty() && l.trim() == l));
    let _ = yandex::parse_xml(&text);
    let base = url::Url::parse("https://html.duckduckgo.com/html/").unwrap();
    let _ = duckduckgo::parse_page(&text, &base);
});
