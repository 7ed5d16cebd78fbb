//! Templates: which ones render running text on Wikipedia and what they
//! render; all others are dropped.

use super::inline::{normalize_name, Inline};

impl Inline<'_> {
    pub(super) fn template(&self, s: usize, e: usize, out: &mut String, depth: usize) {
        let parts = self.split(s, e);
        let (ns, ne) = parts[0];
        let raw = &self.src[ns..ne];
        // Comments inside the name are common (`{{foo<!-- x -->|…}}`).
        let raw = raw.split('<').next().unwrap_or("");
        let name = normalize_name(raw);
        let Some(rule) = inline_rule(&name) else {
            return;
        };
        let args = Args::new(self, &parts[1..]);
        let d = depth + 1;
        match rule {
            Rule::Text(t) => out.push_str(t),
            Rule::Arg(n) => {
                args.render(n, out, d);
            }
            Rule::Either(a, b) => {
                if !args.render(a, out, d) {
                    args.render(b, out, d);
                }
            }
            Rule::Join(sep) => {
                let mut first = true;
                for n in 1..=10 {
                    if args.get(n).is_some() {
                        if !first {
                            out.push_str(sep);
                        }
                        first = false;
                        args.render(n, out, d);
                    }
                }
            }
            Rule::Convert => {
                args.render(1, out, d);
                out.push(' ');
                let unit = args.text(2);
                args.render(2, out, d);
                if matches!(
                    unit.as_str(),
                    "to" | "to(-)"
                        | "-"
                        | "–"
                        | "and"
                        | "and(-)"
                        | "or"
                        | "by"
                        | "x"
                        | "×"
                        | "+"
                        | "+/-"
                        | "±"
                        | "-to-"
                ) {
                    out.push(' ');
                    args.render(3, out, d);
                    out.push(' ');
                    args.render(4, out, d);
                }
            }
            Rule::AsOf => {
                out.push_str(if args.get_named("lc").is_some() {
                    "as of "
                } else {
                    "As of "
                });
                args.render(1, out, d);
            }
            Rule::Frac => {
                args.render(1, out, d);
                if args.get(3).is_some() {
                    out.push(' ');
                    args.render(2, out, d);
                    out.push('⁄');
                    args.render(3, out, d);
                } else if args.get(2).is_some() {
                    out.push('⁄');
                    args.render(2, out, d);
                }
            }
            Rule::Quote => {
                // A blockquote is a paragraph of its own.
                out.push_str("\n\n");
                match ["text", "quote"].iter().find_map(|k| args.get_named(k)) {
                    Some((s, e)) => self.render(s, e, out, d),
                    None => {
                        args.render(1, out, d);
                    }
                }
                out.push_str("\n\n");
            }
            Rule::Wrap(l, r) => {
                out.push_str(l);
                args.render(1, out, d);
                out.push_str(r);
            }
        }
    }
}

/// Parsed template arguments, MediaWiki style: positional parts are numbered
/// in order, `n=` overrides, the last duplicate wins.
struct Args<'a, 'b> {
    inl: &'b Inline<'a>,
    named: Vec<(String, (usize, usize))>,
}

impl<'a, 'b> Args<'a, 'b> {
    fn new(inl: &'b Inline<'a>, parts: &[(usize, usize)]) -> Self {
        let mut named = Vec::with_capacity(parts.len());
        let mut pos = 0;
        for &(s, e) in parts {
            match inl.equals(s, e) {
                Some(eq) => {
                    let key = inl.src[s..eq].trim().to_string();
                    named.push((key, inl.trimmed(eq + 1, e)));
                }
                None => {
                    pos += 1;
                    named.push((pos.to_string(), inl.trimmed(s, e)));
                }
            }
        }
        Args { inl, named }
    }

    fn get_named(&self, key: &str) -> Option<(usize, usize)> {
        self.named
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|x| x.1)
            .filter(|(s, e)| s < e)
    }

    fn get(&self, n: usize) -> Option<(usize, usize)> {
        self.get_named(&n.to_string())
    }

    fn text(&self, n: usize) -> String {
        self.get(n).map_or(String::new(), |(s, e)| {
            self.inl.src[s..e].trim().to_string()
        })
    }

    /// Renders argument `n`; false when it is missing or empty.
    fn render(&self, n: usize, out: &mut String, depth: usize) -> bool {
        match self.get(n) {
            Some((s, e)) => {
                self.inl.render(s, e, out, depth);
                true
            }
            None => false,
        }
    }
}

#[derive(Clone, Copy)]
enum Rule {
    Text(&'static str),
    Arg(usize),
    /// The first argument if non-empty, else the second.
    Either(usize, usize),
    Join(&'static str),
    Convert,
    AsOf,
    Frac,
    Quote,
    Wrap(&'static str, &'static str),
}

/// Templates that on Wikipedia render running text (formatting wrappers,
/// language tags, units, dashes). All other templates are infoboxes,
/// navigation, citations or maintenance tags, and are dropped.
fn inline_rule(name: &str) -> Option<Rule> {
    const ARG1: &[&str] = &[
        "nowrap",
        "nobr",
        "nobreak",
        "small",
        "smaller",
        "big",
        "larger",
        "large",
        "nobold",
        "noitalic",
        "abbr",
        "tooltip",
        "mvar",
        "math",
        "var",
        "em",
        "strong",
        "code",
        "mono",
        "tt",
        "samp",
        "kbd",
        "smallcaps",
        "small caps",
        "sc",
        "sup",
        "sub",
        "unicode",
        "polytonic",
        "not a typo",
        "proper name",
        "typo",
        "sic",
        "visible anchor",
        "flag",
        "flagcountry",
        "flagu",
        "nts",
        "ill",
        "interlanguage link",
        "interlanguage link multi",
        "longitem",
        "val",
        "date",
        "linktext",
        "nihongo",
        "s",
        "iw",
        "comment",
        "ipa",
        "railgauge",
        "langi-en",
        "lang-ru",
    ];
    const ARG2: &[&str] = &[
        "lang",
        "langi",
        "script",
        "rtl-lang",
        "lang-rtl",
        "color",
        "colour",
        "font color",
        "lsj",
        "native name",
    ];
    if ARG1.contains(&name) {
        return Some(Rule::Arg(1));
    }
    if ARG2.contains(&name) {
        return Some(Rule::Arg(2));
    }
    if name.starts_with("lang-") {
        return Some(Rule::Arg(1));
    }
    Some(match name {
        "sort" | "resize" => Rule::Either(2, 1),
        // ruwiki's links to untranslated articles show their text argument.
        "нп3" | "нп5" | "не переведено" | "не переведено 3" | "не переведено 5" => {
            Rule::Either(2, 1)
        }
        // Number and optional unit.
        "число" | "num" => Rule::Join("\u{a0}"),
        "transl" | "transliteration" => Rule::Either(3, 2),
        "convert" | "cvt" => Rule::Convert,
        "as of" => Rule::AsOf,
        "respell" => Rule::Join("-"),
        "chem" => Rule::Join(""),
        "ship" | "sortname" => Rule::Join(" "),
        "frac" | "sfrac" => Rule::Frac,
        "quote" | "cquote" | "blockquote" | "quotation" | "poem quote" | "цитата" => {
            Rule::Quote
        }
        "angbr" => Rule::Wrap("⟨", "⟩"),
        "snd" | "spaced ndash" | "snds" | "spnd" | "снд" => Rule::Text("\u{a0}– "),
        "ndash" | "--" => Rule::Text("–"),
        "mdash" | "mdashb" | "---" => Rule::Text("—"),
        "nbsp" | "space" | "spaces" => Rule::Text("\u{a0}"),
        "·" | "dot" => Rule::Text(" · "),
        "•" | "bull" => Rule::Text(" • "),
        "!" => Rule::Text("|"),
        "=" => Rule::Text("="),
        "'" => Rule::Text("'"),
        "'s" => Rule::Text("'s"),
        "okina" => Rule::Text("ʻ"),
        "..." | "ell" => Rule::Text("…"),
        _ => return None,
    })
}
