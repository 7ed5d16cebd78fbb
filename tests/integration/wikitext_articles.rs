//! Whole real articles (see tests/fixtures/wikitext-articles/SOURCE.md), compared with
//! MediaWiki's own plain-text rendering by the bench's shingle metric.

use collect::clean::wikitext::{wikitext_to_text, WikitextOptions};
use std::collections::HashMap;

use crate::common::{AARDVARK, AWARD, LITVA};

const LITVA_REF: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/wikitext-articles/ruwiki_Litva.reference.txt"
));
const AARDVARK_REF: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/wikitext-articles/enwiki_Aardvark.reference.txt"
));
const AWARD_REF: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/wikitext-articles/enwiki_Academy_Award_for_Best_Production_Design.reference.txt"
));

fn shingles(text: &str) -> HashMap<Vec<&str>, usize> {
    let toks: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect();
    let mut m = HashMap::new();
    if toks.len() < 4 {
        if !toks.is_empty() {
            m.insert(toks, 1);
        }
        return m;
    }
    for w in toks.windows(4) {
        *m.entry(w.to_vec()).or_insert(0) += 1;
    }
    m
}

/// (precision, recall) of `pred` against `truth` over 4-token shingles.
fn score(truth: &str, pred: &str) -> (f64, f64) {
    let (t, p) = (shingles(truth), shingles(pred));
    let tp: usize = p.iter().map(|(k, &n)| n.min(*t.get(k).unwrap_or(&0))).sum();
    let np: usize = p.values().sum();
    let nt: usize = t.values().sum();
    (tp as f64 / np.max(1) as f64, tp as f64 / nt.max(1) as f64)
}

fn no_markup_left(text: &str) {
    for bad in [
        "{{",
        "}}",
        "[[",
        "]]",
        "<ref",
        "</ref",
        "{|",
        "|}",
        "thumb|",
        "__NOTOC__",
    ] {
        assert!(!text.contains(bad), "{bad:?} left in output");
    }
}

#[test]
fn russian_article_litva() {
    let opts = WikitextOptions::for_lang("ru");
    let text = wikitext_to_text(LITVA, &opts);
    no_markup_left(&text);
    for bad in [
        "Файл:",
        "Категория:Литва",
        "Примечания",
        "Flag of Lithuania",
    ] {
        assert!(!text.contains(bad), "{bad:?} left in output");
    }
    assert!(text.starts_with("Литва́ (Lietuva), официальное название — Лито́вская Респу́блика (Lietuvos Respublika) — государство"));
    assert!(text.contains("\n\nИстория\n\n"));
    let (p, r) = score(LITVA_REF, &text);
    assert!(p > 0.99, "precision {p}");
    assert!(r > 0.93, "recall {r}");
    // Without the apparatus policy the text is MediaWiki's, shingle for shingle.
    let mut keep = opts.clone();
    keep.drop_sections.clear();
    let (p, r) = score(LITVA_REF, &wikitext_to_text(LITVA, &keep));
    assert!(p > 0.99 && r > 0.99, "keep-sections P {p} R {r}");
}

#[test]
fn english_article_aardvark() {
    let text = wikitext_to_text(AARDVARK, &WikitextOptions::for_lang("en"));
    no_markup_left(&text);
    assert!(text.starts_with("The aardvark ( ARD-vark; Orycteropus afer) is a medium-sized"));
    assert!(text.contains("\n\nNaming and taxonomy\n\nNaming\n\nThe aardvark is sometimes"));
    assert!(!text.contains("\nReferences"));
    let (p, r) = score(AARDVARK_REF, &text);
    assert!(p > 0.99, "precision {p}");
    assert!(r > 0.95, "recall {r}");
}

#[test]
fn table_heavy_article_keeps_only_prose() {
    let text = wikitext_to_text(AWARD, &WikitextOptions::for_lang("en"));
    no_markup_left(&text);
    let (p, r) = score(AWARD_REF, &text);
    assert!(p > 0.95, "precision {p}");
    assert!(r > 0.85, "recall {r}");
    assert!(
        text.len() < 2 * AWARD_REF.len(),
        "table text leaked: {} bytes",
        text.len()
    );
}
