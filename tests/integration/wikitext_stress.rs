//! Randomised stress test for the cleaner: real articles mutated with markup
//! fragments, deletions, duplications and random bytes must never panic and
//! must stay fast. The `fuzz/` target does the same with coverage guidance;
//! this one runs in plain `cargo test`. STRESS_ITERS overrides the count.

use collect::clean::wikitext::{wikitext_to_text, WikitextOptions};
use std::time::Instant;

use crate::common::{stress_iters, Rng, AARDVARK, AWARD, LITVA};

const ARTICLES: &[&str] = &[LITVA, AARDVARK, AWARD];

const FRAGMENTS: &[&str] = &[
    "{{",
    "}}",
    "{{{",
    "}}}",
    "[[",
    "]]",
    "[",
    "]",
    "{|",
    "|}",
    "|-",
    "|",
    "!",
    "=",
    "==",
    "\n== References ==\n",
    "\n== Примечания ==\n",
    "''",
    "'''",
    "<ref>",
    "</ref>",
    "<ref name=a/>",
    "<!--",
    "-->",
    "<nowiki>",
    "</nowiki>",
    "<pre>",
    "<div>",
    "</div>",
    "<table>",
    "</table>",
    "<math>",
    "<br/>",
    "&nbsp;",
    "&#x41;",
    "&#99999999;",
    "&",
    "<",
    "[http://x.org ",
    "[[File:",
    "[[Файл:",
    "[[Category:",
    "[[:Категория:",
    "[[de:",
    "__NOTOC__",
    "{{nowrap|",
    "{{lang|fr|",
    "{{convert|1|to|",
    "{{quote|text=",
    "{{#if:",
    "\n*",
    "\n#",
    "\n:",
    "\n;",
    "\n",
    "é",
    "ё",
    "\u{F727}",
    "\u{0}",
];

fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut b: Vec<u8> = src.as_bytes().to_vec();
    for _ in 0..1 + rng.below(20) {
        let at = rng.below(b.len() + 1);
        match rng.below(5) {
            0 | 1 => {
                let f = FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes();
                b.splice(at..at, f.iter().copied());
            }
            2 => {
                let end = (at + rng.below(2000)).min(b.len());
                b.drain(at..end);
            }
            3 => {
                let end = (at + rng.below(500)).min(b.len());
                let piece: Vec<u8> = b[at..end].to_vec();
                b.splice(at..at, piece);
            }
            _ => {
                let n = rng.below(8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                b.splice(at..at, bytes);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn mutated_articles_never_panic() {
    let iters = stress_iters(300);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (en, ru) = (
        WikitextOptions::for_lang("en"),
        WikitextOptions::for_lang("ru"),
    );
    let start = Instant::now();
    for i in 0..iters {
        let src = if i % 10 == 9 {
            // Pure noise, biased towards markup characters.
            let n = rng.below(5000);
            (0..n)
                .map(|_| {
                    const CHARS: &[u8] = b"{}[]|=!'<>&#:;*-_/ \nabcx";
                    let c = CHARS[rng.below(CHARS.len())];
                    if rng.below(10) == 0 {
                        char::from_u32(rng.next() as u32 % 0x11_0000).unwrap_or('?')
                    } else {
                        c as char
                    }
                })
                .collect()
        } else {
            let article = ARTICLES[rng.below(ARTICLES.len())];
            mutate(&mut rng, article)
        };
        let t = Instant::now();
        let a = wikitext_to_text(&src, &en);
        let b = wikitext_to_text(&src, &ru);
        assert!(a.len() <= src.len() * 3 + 16 && b.len() <= src.len() * 3 + 16);
        assert!(t.elapsed().as_secs() < 5, "iteration {i} too slow");
    }
    eprintln!("{iters} mutated inputs in {:?}", start.elapsed());
}
