use super::*;

fn en(s: &str) -> String {
    wikitext_to_text(s, &WikitextOptions::for_lang("en"))
}

fn ru(s: &str) -> String {
    wikitext_to_text(s, &WikitextOptions::for_lang("ru"))
}

#[test]
fn templates_dropped_including_nested_and_links_inside() {
    assert_eq!(
        en("A {{infobox|x={{nested|[[Link|y]]|{{deeper}}}}|z=1}} B"),
        "A B"
    );
    assert_eq!(en("{{Infobox\n| a = 1\n| b = [[X]]\n}}\nText."), "Text.");
    assert_eq!(en("x{{#if:{{{1|}}}|yes|no}}y"), "xy");
    assert_eq!(en("a {{DEFAULTSORT:Foo}} b"), "a b");
}

#[test]
fn inline_templates_keep_their_text() {
    assert_eq!(en("{{nowrap|5 km}} away"), "5 km away");
    assert_eq!(en("the {{lang|fr|mot juste}}"), "the mot juste");
    assert_eq!(en("{{lang-de|Haus}}"), "Haus");
    assert_eq!(en("{{convert|3200|m|ft}} high"), "3200 m high");
    assert_eq!(en("{{convert|1|to|2|km}}"), "1 to 2 km");
    assert_eq!(en("1990{{ndash}}1995"), "1990–1995");
    assert_eq!(en("{{Nowrap|{{lang|la|ad hoc}}}}"), "ad hoc");
    assert_eq!(ru("{{число|65300|км²}}"), "65300 км²");
    assert_eq!(ru("{{нп5|Имя|Текст|en|Name}} и {{нп3|Имя}}"), "Текст и Имя");
    assert_eq!(en("x {{quote|text=To be.}} y"), "x\n\nTo be.\n\ny");
}

#[test]
fn links() {
    assert_eq!(en("[[target|label]]"), "label");
    assert_eq!(en("[[target]]"), "target");
    assert_eq!(en("[[target]]s and [[dog]]'s"), "targets and dog's");
    assert_eq!(en("[[Foo (bar)|]]"), "Foo");
    assert_eq!(en("see [[Help:Contents|help]]"), "see help");
    assert_eq!(en("[[#History|below]]"), "below");
}

#[test]
fn external_links() {
    assert_eq!(en("[http://example.org Example site]"), "Example site");
    assert_eq!(en("a [https://example.org] b"), "a b");
    assert_eq!(en("[//example.org ''label'']"), "label");
    assert_eq!(en("[not a link] text"), "[not a link] text");
    assert_eq!(en("http://example.org"), "http://example.org");
}

#[test]
fn files_and_categories_en_aliases() {
    assert_eq!(
        en("A [[File:X.jpg|thumb|A [[caption]] here]] B [[image:y.png]] C"),
        "A B C"
    );
    assert_eq!(en("[[Media:Sound.ogg]]x"), "x");
    assert_eq!(
        en("Text\n[[Category:Animals]]\n[[category: Mammals|*]]"),
        "Text"
    );
    assert_eq!(en("[[File_:_X.jpg]]y"), "y");
    assert_eq!(
        en("see [[:Category:Dogs]] and [[:File:X.jpg|this]]"),
        "see Category:Dogs and this"
    );
}

#[test]
fn files_and_categories_ru_aliases() {
    assert_eq!(
        ru("А [[Файл:Герб.svg|мини|Герб]] Б [[изображение:x.png]] В [[Медиа:a.ogg]]"),
        "А Б В"
    );
    assert_eq!(
        ru("Текст\n[[Категория:Литва]]\n[[Category:Lithuania]]"),
        "Текст"
    );
    assert_eq!(
        ru("см. [[:Категория:Газеты Литвы]]"),
        "см. Категория:Газеты Литвы"
    );
    let ru_ru = WikitextOptions::for_lang("ru-RU");
    assert!(ru_ru.drop_sections.iter().any(|s| s == "Примечания"));
    assert_eq!(wikitext_to_text("[[Файл:x.png]]y", &ru_ru), "y");
    // Russian aliases are not namespaces on the English wiki.
    assert_eq!(en("[[Файл:x]]"), "Файл:x");
}

#[test]
fn interlanguage_links() {
    assert_eq!(
        en("Text\n[[de:Erdferkel]]\n[[fr:Oryctérope]]\n[[zh-min-nan:Thô͘-ti]]"),
        "Text"
    );
    assert_eq!(en("[[:de:Erdferkel|German article]]"), "German article");
    assert_eq!(en("[[wikt:aardvark|aardvark]]"), "aardvark");
}

#[test]
fn tables_dropped_with_nesting() {
    let src = "Before.\n{| class=\"wikitable\"\n|-\n! H\n|-\n| cell prose\n{|\n| inner\n|}\n| more\n|}\nAfter.";
    assert_eq!(en(src), "Before.\n\nAfter.");
    assert_eq!(en(":{|\n| x\n|}\nY"), "Y");
    assert_eq!(en("A<table><tr><td>x</td></tr></table>B"), "AB");
}

#[test]
fn unclosed_table_ends_at_heading() {
    assert_eq!(en("{|\n| x\n== H ==\nText"), "H\n\nText");
}

#[test]
fn refs_and_extension_tags() {
    assert_eq!(
        en(
            "Fact.<ref name=a>{{cite web|url=x}} note</ref> More.<ref name=a/><ref name=\"b\" /> End."
        ),
        "Fact. More. End."
    );
    assert_eq!(en("a <math>x^2</math> b <chem>H2O</chem> c"), "a b c");
    assert_eq!(en("x<gallery>\nA.jpg|cap\n</gallery>y"), "xy");
    assert_eq!(en("<poem>\nline one\n</poem>z"), "z");
    assert_eq!(en("<syntaxhighlight lang=c>int x;</syntaxhighlight>k"), "k");
    assert_eq!(en("== Notes ==\n<references/>\nx"), "");
    assert_eq!(
        en("a <timeline>\nfoo\n</timeline> b <source>c</source> d"),
        "a b d"
    );
    assert_eq!(en("<REF>x</REF>y"), "y");
}

#[test]
fn nowiki_and_pre_keep_markup_as_text() {
    assert_eq!(
        en("<nowiki>[[not a link]] ''x''</nowiki>"),
        "[[not a link]] ''x''"
    );
    assert_eq!(en("<nowiki>{{tpl}}</nowiki> &amp;"), "{{tpl}} &");
    assert_eq!(en("<pre>a = b</pre>"), "a = b");
}

#[test]
fn comments_and_behaviour_switches() {
    assert_eq!(en("a<!-- hidden {{x}} -->b __NOTOC__ c __TOC__"), "ab c");
    assert_eq!(ru("текст __БЕЗ_ОГЛАВЛЕНИЯ__ дальше"), "текст дальше");
    assert_eq!(
        en("snake_case and __init__ stay"),
        "snake_case and __init__ stay"
    );
    assert_eq!(en("a <!-- unclosed comment"), "a");
}

#[test]
fn bold_italic() {
    assert_eq!(
        en("'''bold''' and ''italic'' and '''''both'''''"),
        "bold and italic and both"
    );
    assert_eq!(en("''Eagle'''s footpad"), "Eagle's footpad");
    assert_eq!(en("l'''amour''"), "l'amour");
    assert_eq!(en("l'''amour'''"), "lamour");
    assert_eq!(en("rock 'n' roll"), "rock 'n' roll");
}

#[test]
fn headings_and_lists_on_own_lines() {
    let src = "Intro line one\nline two.\n\n== History ==\n=== Early ===\nText.\n* one\n* two\n# three\n: indented\n; term\n----\nEnd.";
    assert_eq!(
        en(src),
        "Intro line one line two.\n\nHistory\n\nEarly\n\nText.\n\none\ntwo\nthree\nindented\nterm\n\nEnd."
    );
    assert_eq!(en("==H==\nx"), "H\n\nx");
    assert_eq!(en("== ''Italic'' heading ==  "), "Italic heading");
}

#[test]
fn html_tags_stripped_divs_dropped() {
    assert_eq!(en("a <span style=\"x\">b</span> <small>c</small>"), "a b c");
    assert_eq!(en("a<br/>b<br>c"), "a b c");
    assert_eq!(
        en("x<div class=\"thumb\">caption <div>inner</div> more</div>y"),
        "xy"
    );
    assert_eq!(en("x <div>unclosed"), "x unclosed");
    assert_eq!(en("2 < 3 and <foo> stays"), "2 < 3 and <foo> stays");
    assert_eq!(en("a<sup>2</sup>"), "a2");
    assert_eq!(en("angle ''θ''<sub>''i''</sub> here"), "angle θi here");
}

#[test]
fn entities() {
    assert_eq!(
        en("a&nbsp;b&mdash;c &#8211; &#x41; &amp;lt;"),
        "a b—c – A &lt;"
    );
    assert_eq!(en("&unknown; & &#0; &#xZZ;"), "&unknown; & &#0; &#xZZ;");
    assert_eq!(en("&laquo;Литва&raquo;"), "«Литва»");
    assert_eq!(en("&fnof;&sup2;&rang;"), "ƒ²⟩");
}

#[test]
fn apparatus_sections_dropped_up_to_same_level() {
    let src = "Body.\n== See also ==\n* [[Other]]\n=== Sub ===\nsub text\n== References ==\n{{reflist}}\n== Later ==\nKept.";
    assert_eq!(en(src), "Body.\n\nLater\n\nKept.");
    let src = "Body.\n==External links==\n* [http://x.org Site]";
    assert_eq!(en(src), "Body.");
    // Case-insensitive, trailing colon ignored.
    assert_eq!(en("a\n== FURTHER READING: ==\nbook"), "a");
    // A deeper heading with an apparatus name drops only its subsection.
    assert_eq!(
        en("== Life ==\nx\n=== Notes ===\nn\n== Work ==\ny"),
        "Life\n\nx\n\nWork\n\ny"
    );
}

#[test]
fn drop_sections_configurable() {
    let mut o = WikitextOptions::for_lang("en");
    o.drop_sections = vec!["History".into()];
    assert_eq!(
        wikitext_to_text("a\n== History ==\nold\n== References ==\nr", &o),
        "a\n\nReferences\n\nr"
    );
    o.drop_sections.clear();
    assert_eq!(
        wikitext_to_text("a\n== See also ==\nb", &o),
        "a\n\nSee also\n\nb"
    );
}

#[test]
fn russian_snippet() {
    let src = "{{Государство\n|Русское название = Литовская Республика\n|Флаг = Flag of Lithuania.svg\n}}\n'''Литва́''' ({{lang-lt|Lietuva}}), официальное название — '''Лито́вская Респу́блика''' ({{lang-lt|Lietuvos Respublika}}) — [[государство]], расположенное в [[Северная Европа|Северной Европе]].<ref>{{книга|автор=Кто-то}}</ref> Столица — [[Вильнюс]].\n\n== История ==\nТекст.\n== Примечания ==\n{{примечания}}\n== Литература ==\n* Книга. — ISBN 978-609-437-165-3.\n== Ссылки ==\n* [http://lrv.lt Правительство]\n[[Категория:Литва]]\n[[en:Lithuania]]";
    assert_eq!(
        ru(src),
        "Литва́ (Lietuva), официальное название — Лито́вская Респу́блика (Lietuvos Respublika) — государство, расположенное в Северной Европе. Столица — Вильнюс.\n\nИстория\n\nТекст."
    );
}

#[test]
fn unclosed_constructs_are_text() {
    assert_eq!(en("a {{b c"), "a {{b c");
    assert_eq!(en("a [[b c"), "a [[b c");
    assert_eq!(en("a <ref>b c"), "a <ref>b c");
    assert_eq!(en("x {{a|[[b}} y"), "x {{a|[[b}} y");
    assert_eq!(en("{{{{{a}}}}}b"), "b");
    assert_eq!(en("}} ]] |} x"), "}} ]] |} x");
}

#[test]
fn deep_nesting_does_not_overflow() {
    let deep = "{{".repeat(100_000) + "x" + &"}}".repeat(100_000);
    assert_eq!(en(&deep), "");
    let open = "{{".repeat(100_000) + "x";
    assert!(en(&open).ends_with('x'));
    let links = "[[".repeat(50_000) + "x" + &"]]".repeat(50_000);
    let _ = en(&links);
    let inline = "{{nowrap|".repeat(20_000) + "x" + &"}}".repeat(20_000);
    let _ = en(&inline);
    let braces = "{".repeat(200_001) + &"}".repeat(199_999);
    let _ = en(&braces);
}

/// Hostile inputs must stay linear: each case is a few MB and would take
/// minutes if any unclosed opener rescanned the rest of the page.
#[test]
fn hostile_inputs_are_linear() {
    let body = "Lorem ipsum [[dolor]] sit '''amet''', {{x}} consectetur.\n".repeat(10_000);
    let cases = [
        format!("{{{{{body}"),
        format!("[[{body}"),
        format!("<ref>{body}"),
        format!("{{|\n{body}"),
        format!("<div>{body}"),
        format!("<!--{body}"),
        "<ref>".repeat(100_000),
        "[http://x ".repeat(100_000),
        "{{a|".repeat(100_000),
        "[[a|".repeat(100_000),
        "<div>".repeat(100_000),
        "<nowiki>".repeat(100_000),
        "__A".repeat(100_000),
        "'''''x''".repeat(70_000),
        "&#12345678".repeat(70_000),
        "<a b=\"c\"".repeat(70_000),
        "== x ==\n".repeat(70_000),
    ];
    for c in &cases {
        let t = std::time::Instant::now();
        let _ = en(c);
        let el = t.elapsed();
        eprintln!("{:?}: {} bytes in {el:?}", &c[..c.len().min(12)], c.len());
        assert!(
            el.as_secs_f64() < 5.0,
            "{:?}… took {el:?}",
            &c[..c.len().min(20)]
        );
    }
}

/// The worst case: a 10 MB page with an unclosed opener at the
/// start. Run with `cargo test --release -- --ignored --nocapture`.
#[test]
#[ignore]
fn ten_mb_page_with_unclosed_opener() {
    let body = "Lorem ipsum [[dolor]] sit '''amet''', {{x}} <ref>r</ref> elit.\n".repeat(160_000);
    for opener in ["{{", "[[", "<ref>", "{|\n", "<div>", "[http://x ", "<!--"] {
        let src = format!("{opener}{body}");
        let t = std::time::Instant::now();
        let out = en(&src);
        let el = t.elapsed();
        eprintln!("{opener:?} + {} MB: {el:?}", src.len() / 1_000_000);
        assert!(out.len() > 1_000_000 || matches!(opener, "{|\n" | "<!--"));
        assert!(el.as_secs_f64() < 2.0, "{opener:?}: {el:?}");
    }
}

#[test]
fn odd_bytes_do_not_panic() {
    for s in [
        "",
        "{",
        "[",
        "<",
        "&",
        "'",
        "=",
        "==",
        "===",
        "_",
        "__",
        "{|",
        "|}",
        "[[|]]",
        "[[]]",
        "{{}}",
        "{{{}}}",
        "[[:]]",
        "[[ : ]]",
        "<ref",
        "</ref>",
        "<!--",
        "-->",
        "[http://",
        "[http://]",
        "&#x110000;",
        "&#55296;",
        "\u{F7A0}",
        "é{{",
        "[[é|",
        "__É",
        "__ÉÉ__",
    ] {
        let _ = en(s);
        let _ = ru(s);
    }
}
