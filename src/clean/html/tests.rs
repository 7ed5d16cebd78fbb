use super::hints::{name_hint, HINT_COMMENTS, HINT_CONTENT, HINT_HARD, HINT_LAYOUT, HINT_WEAK};
use super::jsonld::{json_strings_for_key, keep_declared_lines};
use super::lines::{
    drop_author_boxes, drop_head_bylines, drop_source_lists, is_byline, is_control_line,
    is_counter_line, is_credit_line, is_furniture_line,
};
use super::*;
use std::time::{Duration, Instant};

/// Asserts which lines a line filter takes and which it leaves.
fn check_lines(filter: fn(&str) -> bool, taken: &[&str], left: &[&str]) {
    for l in taken {
        assert!(filter(l), "should be taken: {l}");
    }
    for l in left {
        assert!(!filter(l), "should be left: {l}");
    }
}

#[test]
fn credit_lines_dropped_but_not_code_or_prose() {
    check_lines(
        is_credit_line,
        &[
            "Credit: Apple",
            "Image: SiliconANGLE/ChatGPT",
            "Getty Images / Holger Leue",
            "Photo credit: Jane Doe",
            "(Photo by Jim Watson/AFP via Getty Images)",
            "AP Photo/Evan Vucci",
            "Image courtesy of NASA",
            "Фото: РИА Новости",
            // The Kelvin sign lowers to a shorter letter: the name is still read where it is.
            "Photo by \u{212A}elvin Lee",
        ],
        &[
            "Photo by photo, the album fills up",
            "(See the photo below.)",
            "    image: nginx:1.14.2",
            "image: busybox",
            "Credit: The committee said the results were far better than anyone expected",
            "Photo:",
            "Source: Python",
        ],
    );
}

#[test]
fn bylines_dropped_at_the_head_only() {
    check_lines(
        is_byline,
        &[
            "By",
            "By Chris McNamara",
            "Published June 23, 2025 10:39AM",
            "Reviewed by: Brian Stormont, CFP®",
            "Updated",
            "Last updated on September 16th, 2023 at 09:27 am",
            "Posted on December 18, 2025 Posted by John Scalzi 59 Comments",
            "By Craig Randall , Alli Miles , Eszter Horanyi on March 12, 2026 | Comments",
            "By Ann Lee and Bo Kim",
            "Автор: Иван Петров",
            "Опубликовано 12 марта 2024",
        ],
        &[
            "By manually extracting the files",
            "Bypass the cache",
            "Posters of the year",
            "Published works of the author include many books and essays on every topic",
            "By 2030, Lee and Kim expect half of the city to ride to work",
            "Published in 1998, the novel was translated into forty languages and sold well",
            "Авторы проекта",
        ],
    );
    let body = "A long paragraph of the article, which is well over one hundred and fifty \
                characters long, so that the head of the text (its title, byline and date) ends right here.";
    let text = format!(
        "Written by Madeline Puckette\n\nThe title line\nUpdated on October 21, 2025\n\n\
         {body}\n\nBy Ann Smith"
    );
    assert_eq!(
        drop_head_bylines(text),
        format!("The title line\n\n{body}\n\nBy Ann Smith")
    );
    let short = "By Ann Smith\n\nA short note.".to_string();
    assert_eq!(drop_head_bylines(short), "A short note.");
}

#[test]
fn author_boxes_below_the_article_dropped() {
    let body = "A long paragraph of the article, which is well over one hundred and fifty \
                characters long, so that the head of the text (its title, byline and date) ends right here.";
    let boxed = |byline: &str, bio: &str| format!("{body}\n\n{byline}\n\n{bio}\n\nThe footer.");
    for (byline, bio) in [
        (
            "Written by Cassidy Horton",
            "Cassidy Horton is a finance writer who is passionate about helping people.",
        ),
        (
            "By infuy",
            "Infuy is an international technology company specialized in outsourcing services.",
        ),
        (
            "Written by Madeline Puckette",
            "James Beard Award-winning author and Wine Communicator of the Year. @WineFolly",
        ),
        (
            "Автор: Иван Петров",
            "Иван Петров — журналист, пишет о науке и технике с 2010 года.",
        ),
    ] {
        assert_eq!(
            drop_author_boxes(boxed(byline, bio)),
            format!("{body}\n\nThe footer."),
            "{byline}"
        );
    }
    for (byline, next) in [
        // A forum's poster over their post, a brand over its product.
        (
            "by Quady",
            "Has he got an oven ready plan though? I doubt it very much.",
        ),
        (
            "By Wade Logan®",
            "Beige Performance Chenille, the sofa of the season.",
        ),
        // A byline whose next paragraph is not about a writer.
        (
            "By Ann Lee",
            "The council met on Tuesday to vote on the new budget for schools.",
        ),
    ] {
        let text = boxed(byline, next);
        assert_eq!(drop_author_boxes(text.clone()), text, "{byline}");
    }
    // In the head, a byline and a first paragraph naming the writer are the article's.
    let head = format!("By Ann Lee\n\nAnn Lee reports from the city council meeting.\n\n{body}");
    assert_eq!(drop_author_boxes(head.clone()), head);
    // A box under a label: each person's name and their role, handle or biography.
    let people = format!(
        "{body}\n\nMeet the testers\n\nAdrien Ramirez\n\nFormer Staff Writer\n\n@itsaramkat\n\n\
         Adrien has over 4 years of experience covering laptops.\n\nJoanna Nelius\n\n\
         Senior Editor, Tech\n\nThe footer."
    );
    assert_eq!(drop_author_boxes(people), format!("{body}\n\nThe footer."));
    for kept in [
        // The label over a sentence about the writer, which the text keeps.
        "About the Author\n\nAuthor Matt Check is the Head Winemaker of Cellar Beast.",
        // A name with nothing about them after it.
        "Author\n\nAnn Lee\n\nThe council met on Tuesday to vote on the budget for schools.",
    ] {
        let text = format!("{body}\n\n{kept}");
        assert_eq!(drop_author_boxes(text.clone()), text, "{kept}");
    }
}

#[test]
fn lists_of_works_cited_dropped_with_their_heading() {
    let body = "A long paragraph of the article, which is well over one hundred and fifty \
                characters long, so that the head of the text (its title, byline and date) ends right here.";
    for list in [
        // Numbered footnotes, under a heading with a note.
        "Footnotes ( returns to text)\n\n1. American College of Sports Medicine. ACSM's \
         Guidelines for Exercise Testing.\n2. Haff G, Triplett NT. Essentials of strength training.",
        // Citations without numbers: each has a year, a journal or a link.
        "References\n\nNiculescu, A.B. 2024. Precise, Personalized and Preventive Psychiatry.\n\
         Vogel AC, Black KJ. Brain Imaging in Routine Psychiatric Practice. Mo Med. 2024;121(1).\n\n\
         Mayo Clinic. Ergonomics. Retrieved from https://www.mayoclinic.org",
        // Numbered titles, each with a line describing it.
        "Sources:\n\n1. Wine School of Philadelphia\nExplore certifications and education.\n\
         2. Wine Folly - Wine Basics\nA comprehensive guide to understanding wine styles.",
        // A wiki's notes with their back-links.
        "Примечания\n\n↑ https://gitweb.gentoo.org/proj/portage.git\n↑ Иванов И. И. История. М., 2001.",
    ] {
        assert_eq!(
            drop_source_lists(format!("{body}\n\n{list}\n\nThe footer.")),
            format!("{body}\n\nThe footer."),
            "{list}"
        );
    }
    for kept in [
        // "Sources" over the people the article asked, and "Notes" over the author's remarks.
        format!(
            "{body}\n\nSources\n\nNigel Price, the founder of a coffee shop, told us how he brews."
        ),
        format!("{body}\n\nSources\n\nNigel Price, who has run the shop since 2010, told us how he brews."),
        format!("{body}\n\nNotes\n\n1. Use a fine mesh strainer.\n2. Let the mixture cool."),
        // A heading with no list after it, and one in the head of the text.
        format!("{body}\n\nReferences"),
        format!("References\n\n1. See the list below.\n\n{body}"),
    ] {
        assert_eq!(drop_source_lists(kept.clone()), kept);
    }
}

#[test]
fn embed_fallbacks_dropped_but_not_sentences_about_viewing() {
    check_lines(
        is_furniture_line,
        &[
            "View this post on Instagram",
            "View post on imgur.com",
            "A post shared by House Plant House. (@_houseplanthouse)",
            "Watch on YouTube",
        ],
        &[
            "View on the harbour from the hotel terrace",
            "Watch on",
            "A post shared by many readers last week",
            "View post on",
        ],
    );
}

#[test]
fn counter_lines_dropped() {
    check_lines(
        is_counter_line,
        &[
            "44 reactions",
            "27 comments",
            "7 min read",
            "1.2k views",
            "3 K likes",
            "1 reply",
            "5 комментариев",
            "1,2k просмотров",
            "3 мин. чтения",
        ],
        &[
            "2024 comments on the bill were filed",
            "5 комментариев к закону поступили в думу",
            "44",
            "reactions",
            "7min read",
            "10 answers to life",
        ],
    );
    let t = "Title\n\n27 comments\n\nBody line\n3 likes\nmore";
    assert_eq!(
        drop_furniture_lines(t.to_string()),
        "Title\n\nBody line\nmore"
    );
}

#[test]
fn control_labels_dropped_as_lone_lines_only() {
    check_lines(
        is_control_line,
        &[
            "Read more",
            "Read more »",
            "SPONSORED",
            "Permalink",
            "Continue reading…",
            "SKIP ADVERTISEMENT",
            "Story continues below advertisement",
            "Article Continues Below",
            "Share full article",
            "Thanks for signing up!",
            "Read more!",
            "This site uses Akismet to reduce spam. Learn how your comment data is processed.",
            "Читать далее »",
            "РЕКЛАМА",
            "Ответить с цитированием",
        ],
        &[
            "Read more about the harbour",
            "This site uses Akismet to reduce spam, and here is how Akismet decides what spam is: \
             it compares every comment with millions of others.",
            "Thanks for signing up, said the clerk.",
            "Loading docks",
            "Sponsored by the city",
            "The story continues below the fold, where the council's vote is reported.",
            "Подробнее о выборах в городской совет",
            "Реклама на телевидении дорожает.",
        ],
    );
    let t = "First paragraph.\nRead more\n\nSponsored\n\nRead more books, said the author.";
    assert_eq!(
        drop_furniture_lines(t.to_string()),
        "First paragraph.\n\nRead more books, said the author."
    );
}

#[test]
fn member_stats_and_placeholders_dropped() {
    check_lines(
        is_furniture_line,
        &[
            "Posts: 7",
            "Joined: Sep 2019",
            "Reaction score: 1,204",
            "READ MORE ↓",
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
        ],
        &[
            "Posts: the ones I wrote last winter about the harbour",
            "Joined: never",
            "The lorem ipsum text is a scrambled passage of Cicero.",
        ],
    );
}

#[test]
fn repeated_runs_of_paragraphs_dropped_single_lines_kept() {
    let t = "Intro words here.\n\nFast delivery on all items\n\nSave money every single day\n\nLove it or get your money back\n\nPrice\n\nFast delivery on all items\n\nSave money every single day\n\nLove it or get your money back\n\nPrice\n\nEnd.";
    let out = drop_repeated_runs(t.to_string());
    assert_eq!(out.matches("Fast delivery").count(), 1, "{out}");
    assert_eq!(out.matches("Price").count(), 1, "{out}");
    assert!(out.ends_with("End."));
    let list = "A\n\nMust be presented\n\nB\n\nMust be presented\n\nC\n\nMust be presented";
    assert_eq!(drop_repeated_runs(list.to_string()), list);
}

#[test]
fn json_ld_article_body_used_for_script_only_pages() {
    let html = r#"<html><head><script type="application/ld+json">
            {"@type":"NewsArticle","articleBody":"First paragraph of the story, told at length so that it counts as real text for the reader.\nSecond \"quoted\" paragraph \u00e9t\u00e9 \ud83d\ude00 continues here with more words to read and enjoy, and then some more words again to be long enough, with a third clause added so the count of letters is well above the floor."}
            </script></head><body><div id="app"></div></body></html>"#;
    let e = extract(html, None);
    assert!(e.text.starts_with("First paragraph"), "{}", e.text);
    assert!(
        e.text.contains("\n\nSecond \"quoted\" paragraph été 😀"),
        "{}",
        e.text
    );
    // Broken JSON does not panic.
    for bad in [
        "\"articleBody\"",
        "\"articleBody\": \"\\u12",
        "\"articleBody\":\"\\",
    ] {
        let _ = json_strings_for_key(bad, "\"articleBody\"");
    }
}

const PARA: &str = "This is a long paragraph of real article text, written by the author \
    with commas, full sentences and enough words to look like content.";

fn article(body: &str) -> String {
    format!(
        "<html><head><title>Big News | Example Site</title></head><body>\
         <nav><a href='/'>Home</a> <a href='/a'>About</a> <a href='/c'>Contact</a></nav>\
         <header class='site-header'><a href='/'>Example Site</a></header>\
         <article>{body}</article>\
         <footer>Copyright 2024 Example Site. All rights reserved.</footer></body></html>"
    )
}

#[test]
fn keeps_article_and_drops_nav_footer() {
    let html = article(&format!("<p>{PARA}</p><p>Second paragraph. {PARA}</p>"));
    let e = extract(&html, Some("https://example.com/news/1"));
    assert!(e.text.contains("Second paragraph."), "{}", e.text);
    assert!(!e.text.contains("Contact"), "{}", e.text);
    assert!(!e.text.contains("Copyright"), "{}", e.text);
    assert_eq!(e.text.matches("\n\n").count(), 1, "{:?}", e.text);
}

#[test]
fn drops_cookie_banner_share_buttons_and_related_links() {
    let html = article(&format!(
        "<p>{PARA}</p><div class='cookie-banner'>We use cookies to improve your experience.</div>\
         <div class='share-buttons'><a href='#'>Facebook</a><a href='#'>Twitter</a></div>\
         <p>{PARA}</p><div class='related-posts'><a href='/x'>Another story you may like</a></div>"
    ));
    let e = extract(&html, None);
    for junk in ["cookies", "Facebook", "Another story"] {
        assert!(!e.text.contains(junk), "{junk} in {}", e.text);
    }
    assert_eq!(e.text.matches("real article text").count(), 2);
}

#[test]
fn signup_boxes_around_contact_fields_dropped_with_their_plea() {
    // Utility class names only: nothing but the e-mail field says what the box is.
    let signup = "<section class='relative my-12 p-8'><div class='font-bold'>Awesome offers, \
         hand-picked for you.</div><div class='mt-2'>Sign up now for the daily deals letter.</div>\
         <form><input type='email' placeholder='Your email'><span>Sign Me Up</span></form>\
         <p class='text-xs'>By clicking Sign Me Up, you confirm you are 16+ and agree to our Terms.</p>\
         </section>";
    let html = article(&format!(
        "<p>{PARA}</p><p>{PARA}</p>{signup}<p>Second paragraph. {PARA}</p><p>{PARA}</p>"
    ));
    let e = extract(&html, None);
    for junk in ["hand-picked", "Sign up now", "By clicking"] {
        assert!(!e.text.contains(junk), "{junk} in {}", e.text);
    }
    assert!(e.text.contains("Second paragraph."), "{}", e.text);
    // On a short article the box would grow to the article itself: it stops below the
    // element named as content.
    let short = article(&format!(
        "<p>{PARA}</p><p>Write to us: <input name='contact-email'></p><p>Third paragraph. {PARA}</p>"
    ));
    let e = extract(&short, None);
    assert!(e.text.contains("Third paragraph."), "{}", e.text);
    assert_eq!(e.text.matches("real article text").count(), 2, "{}", e.text);
    assert!(!e.text.contains("Write to us"), "{}", e.text);
    // A phone field is known by its label; a keypad for a ZIP code is not one.
    let phone = article(&format!(
        "<p>{PARA}</p><p>{PARA}</p><div><p>Get deals texted to you!</p>\
         <input type='tel' placeholder='Enter Phone Number'></div>\
         <div><p>Quotes for your area, from the people who insure it.</p>\
         <input type='tel' name='ZipCode'></div><p>{PARA}</p>"
    ));
    let e = extract(&phone, None);
    assert!(!e.text.contains("texted"), "{}", e.text);
    assert!(e.text.contains("Quotes for your area"), "{}", e.text);
}

#[test]
fn text_marked_nosnippet_dropped_unless_named_as_content() {
    let html = article(&format!(
        "<div class='header-data'><div data-nosnippet>Jane is an experienced journalist who \
         has covered tech for ten years.</div></div><p>{PARA}</p><p>{PARA}</p>\
         <div class='card' data-nosnippet><h5>Four tools that save time</h5></div>\
         <div class='entry-content' data-nosnippet><p>Named as content. {PARA}</p></div>"
    ));
    let e = extract(&html, None);
    for junk in ["experienced journalist", "Four tools"] {
        assert!(!e.text.contains(junk), "{junk} in {}", e.text);
    }
    assert!(e.text.contains("Named as content."), "{}", e.text);
    assert_eq!(e.text.matches("real article text").count(), 3, "{}", e.text);
}

#[test]
fn section_headings_wrapped_in_header_kept_but_not_page_headers() {
    let html = article(&format!(
        "<p>{PARA}</p><header class='title-text'><h2>1. Myth: all fat is bad</h2></header>\
         <p>{PARA}</p><header><h2>Second section heading</h2><span>by the desk</span></header>\
         <p>{PARA}</p><header><h3><a href='/self'>A linked heading header</a></h3></header>\
         <p>{PARA}</p>"
    ));
    let e = extract(&html, None);
    assert!(e.text.contains("1. Myth: all fat is bad"), "{}", e.text);
    for junk in [
        "Second section heading",
        "A linked heading header",
        "Example Site",
    ] {
        assert!(!e.text.contains(junk), "{junk} in {}", e.text);
    }
}

#[test]
fn faq_questions_on_disclosure_buttons_kept_when_their_answer_is_on_the_page() {
    let html = article(&format!(
        "<p>{PARA}</p><h2>Frequently asked questions</h2>\
         <button aria-controls='a1' aria-expanded='true'><h3>Which tool is best?</h3></button>\
         <div id='a1'><p>The first answer, with a few words of its own.</p></div>\
         <p role='heading'><button aria-expanded='false'>Who is this program for?</button></p>\
         <div role='region'><p>The second answer, found beside its heading.</p></div>\
         <h3><button aria-controls='a3' aria-expanded='false'>Is the third one hidden?</button></h3>\
         <div id='a3' hidden><p>Hidden answer.</p></div>\
         <div><button aria-expanded='false'>Is there no panel at all?</button></div>\
         <button aria-controls='m' aria-expanded='false'>Menu</button><div id='m'><p>{PARA}</p></div>\
         <button aria-controls='t' aria-expanded='false'><h3>Agents work smarter</h3></button>\
         <div id='t'><p>{PARA}</p></div>"
    ));
    let e = extract(&html, None);
    for kept in [
        "Which tool is best?",
        "Who is this program for?",
        "The second answer",
    ] {
        assert!(e.text.contains(kept), "{kept} not in {}", e.text);
    }
    for junk in [
        "Is the third one hidden?",
        "Is there no panel at all?",
        "Menu",
        "Agents work smarter",
    ] {
        assert!(!e.text.contains(junk), "{junk} in {}", e.text);
    }
}

/// An article page whose JSON-LD declares `body` as its `articleBody`.
fn declared_article(body: &str, dom: &str) -> String {
    format!(
        "<html><head><script type='application/ld+json'>{{\"@type\":\"NewsArticle\",\
         \"articleBody\":\"{body}\"}}</script></head><body><article>{dom}</article></body></html>"
    )
}

#[test]
fn lines_the_declared_article_body_lacks_are_dropped() {
    let paras = [
        "The council voted on Tuesday to rebuild the old harbour wall before the winter storms arrive in force.",
        "Engineers said the stones had shifted by almost a metre since the spring, and that the repair could not wait.",
        "Fishermen welcomed the decision but asked that the work leave the slipway open during the herring season.",
        "The mayor promised a public meeting next month, where the plans and the cost will be laid out in full.",
        "Until then the harbour master has closed the outer quay to cars, and asked walkers to keep to the inner path.",
    ];
    // The standfirst above the body is the article's head, kept though the body lacks it.
    let dom = format!(
        "<p>A storm-battered town decides to act before the winter, at last.</p>\
         <p>{}</p><p>Every item on this page was chosen by an editor, and we may earn a commission.</p>\
         <p>{}</p><div class='card'><p>Rose marble napkin set of four, now ten percent off at the shop</p></div>\
         <p>{}</p><p>{}</p><p>{}</p>",
        paras[0], paras[1], paras[2], paras[3], paras[4]
    );
    // The body as publishers write it: markup and character references inside.
    let body = format!(
        "<p>{}</p>&lt;p&gt;{}\\n{} {} {}",
        paras[0],
        paras[1].replace("metre", "m&eacute;tre"),
        paras[2],
        paras[3],
        paras[4]
    );
    let e = extract(&declared_article(&body, &dom), None);
    for junk in ["Every item", "napkin"] {
        assert!(!e.text.contains(junk), "{junk} in {}", e.text);
    }
    for p in paras {
        assert!(e.text.contains(p), "{p} missing from {}", e.text);
    }
    assert!(e.text.starts_with("A storm-battered town"), "{}", e.text);
    assert_eq!(e.text.matches("\n\n").count(), 5, "{:?}", e.text);
    // A body cut short (a teaser) judges nothing: every paragraph of the page stays.
    let teaser = format!("{} {}", paras[0], paras[0]);
    let e = extract(&declared_article(&teaser, &dom), None);
    assert!(e.text.contains("Every item"), "{}", e.text);
    assert!(e.text.contains(paras[2]), "{}", e.text);
}

#[test]
fn declared_body_with_stray_markup_signs_judges_without_panicking() {
    let line = "Пять слов подряд в строке и ещё несколько слов для счёта";
    let text = std::iter::repeat_n(line, 3)
        .collect::<Vec<_>>()
        .join("\n\n");
    for body in [
        "&",
        "<",
        "a & b < c &",
        "<b",
        "&amp",
        "日本語&amp;テキスト<b>x</b>&#",
    ] {
        assert_eq!(keep_declared_lines(&text, body), None, "{body}");
    }
    // A long body in Cyrillic with a lone `&` and `<` in its prose still judges.
    let long: String = (0..12).map(|i| format!("{line} {i} & < ")).collect();
    assert_eq!(
        keep_declared_lines(&text, &long).as_deref(),
        Some(text.as_str())
    );
}

#[test]
fn layout_names_inside_content_are_sections_not_boilerplate() {
    let html = format!(
        "<html><body><div class='sidebar-widget'><p>Widget beside the text: {PARA}</p></div>\
         <div class='post-content'><p>{PARA}</p><div class='ck-widget'><h3>Snake plant</h3>\
         <p>Inside an editor widget: {PARA}</p></div><p>{PARA}</p>\
         <div class='author-box'>About the author, who writes here.</div></div></body></html>"
    );
    let e = extract(&html, None);
    assert!(e.text.contains("Inside an editor widget"), "{}", e.text);
    assert!(e.text.contains("Snake plant"), "{}", e.text);
    assert!(!e.text.contains("Widget beside"), "{}", e.text);
    assert!(!e.text.contains("About the author"), "{}", e.text);
}

#[test]
fn page_builders_heading_widgets_are_the_texts_headings() {
    let widget = |kind: &str, inner: &str| {
        format!("<div class='elementor-widget elementor-widget-{kind}'><div>{inner}</div></div>")
    };
    let html = format!(
        "<html><body><div class='elementor-section'>{}{}{}{}</div></body></html>",
        widget("heading", "<h2>Pro: interesting problems</h2>"),
        widget("text-editor", &format!("<p>{PARA}</p>")),
        widget("heading", "<h2>Con: long hours</h2>"),
        widget("text-editor", &format!("<p>Second. {PARA}</p>")),
    );
    let e = extract(&html, None);
    assert!(e.text.contains("Pro: interesting problems"), "{}", e.text);
    assert!(e.text.contains("Con: long hours"), "{}", e.text);
}

#[test]
fn quotes_of_earlier_posts_keep_only_the_reply() {
    let first = "The first post says something long enough to be quoted later on.";
    let html = format!(
        "<html><body><div class='conversation'>\
         <div class='post'><p>{first} {PARA}</p></div>\
         <div class='post'><blockquote><div>Ann said:</div><p>{first} {PARA}</p></blockquote>\
         <p>My reply adds a new thought. {PARA}</p></div>\
         <div class='post'><blockquote><p>A quote of a post that is not on this page at all.</p></blockquote>\
         <p>{PARA}</p></div></div></body></html>"
    );
    let e = extract(&html, None);
    assert_eq!(e.text.matches(first).count(), 1, "{}", e.text);
    assert!(e.text.contains("My reply adds"), "{}", e.text);
    assert!(!e.text.contains("Ann said"), "{}", e.text);
    assert!(e.text.contains("not on this page"), "{}", e.text);
}

#[test]
fn class_names_judged_by_their_last_known_word() {
    assert_eq!(name_hint("copy-legal"), HINT_HARD);
    assert_eq!(name_hint("site-disclaimer"), HINT_HARD);
    assert_eq!(name_hint("post-footer"), HINT_HARD);
    assert_eq!(name_hint("widget-theme-post-content"), HINT_CONTENT);
    assert_eq!(name_hint("ck-widget"), HINT_LAYOUT);
    assert_eq!(name_hint("elementor-widget-heading"), HINT_CONTENT);
    // A drawer is any panel that opens: the text's collapsible sections as often as a menu.
    assert_eq!(name_hint("drawer"), 0);
    assert_eq!(name_hint("nav-drawer"), HINT_HARD);
    assert_eq!(name_hint("cookie-banner"), HINT_HARD);
    assert_eq!(name_hint("author-box"), HINT_WEAK);
    assert_eq!(name_hint("comment-list"), HINT_COMMENTS);
    assert_eq!(name_hint("entry-pings"), HINT_COMMENTS);
    assert_eq!(name_hint("pingback"), HINT_COMMENTS);
    assert_eq!(name_hint("trackbacks"), HINT_COMMENTS);
    assert_eq!(name_hint("legalese-free-zone"), 0);
}

#[test]
fn names_of_layouts_with_a_part_are_not_the_part() {
    for wrapper in [
        "with-sidebar-layout",
        "interior-page-content-has-sidebar",
        "gdi-single-blog-post-with-sidebar",
        "anchorWithStickyNavbar_LWe7",
        "no-footer",
        "map-and-related",
        "content-and-sidebar",
    ] {
        assert_eq!(name_hint(wrapper), 0, "{wrapper}");
    }
    assert_eq!(name_hint("sidebar-left"), HINT_HARD);
    assert_eq!(name_hint("nav-and-search"), HINT_HARD);
    assert_eq!(name_hint("header-and-nav"), HINT_HARD);
    assert_eq!(name_hint("with-border"), 0);
}

#[test]
fn side_columns_read_more_boxes_and_buttons_are_hard_names() {
    for name in [
        "zox-post-side-wrap",
        "readmore-wrapper",
        "ai-summary-buttons",
        "share-button",
    ] {
        assert_eq!(name_hint(name), HINT_HARD, "{name}");
    }
    assert_eq!(name_hint("inside-article"), HINT_CONTENT);
}

#[test]
fn section_ids_made_of_their_headings_words_are_anchors_not_names() {
    let html = article(&format!(
        "<p>{PARA}</p><p>{PARA}</p><p>{PARA}</p><section id='client-side-certificates'><h3>Client Side Certificates\
         <a class='headerlink' href='#client-side-certificates'>¶</a></h3>\
         <p>You can also specify a local cert. {PARA}</p></section>\
         <div id='related-stories'><h3>More stories</h3><p>Another story you may like.</p></div>"
    ));
    let e = extract(&html, None);
    assert!(e.text.contains("specify a local cert"), "{}", e.text);
    assert!(!e.text.contains("Another story"), "{}", e.text);
}

#[test]
fn teasers_between_paragraphs_are_dropped_but_prose_with_labels_kept() {
    let html = article(&format!(
        "<p>{PARA}</p><p>Related: <a href='/x'>Cybersecurity roundup of the deals in August</a></p>\
         <p>{PARA}</p><ul><li><strong>See also:</strong> <a href='/y'>A brief history of photography</a></li></ul>\
         <p>Read more: the committee found that <a href='/r'>the report</a> was late.</p>\
         <p>Read more about <a href='/z'>environmental racism and zero waste</a>.</p>\
         <p>Читайте также: <a href='/ru'>Как выбрать ноутбук для учёбы</a></p>\
         <p>По теме: доклад <a href='/d'>комиссии</a> вышел с опозданием на месяц.</p>"
    ));
    let e = extract(&html, None);
    assert!(!e.text.contains("Как выбрать ноутбук"), "{}", e.text);
    assert!(e.text.contains("вышел с опозданием"), "{}", e.text);
    assert!(!e.text.contains("Cybersecurity roundup"), "{}", e.text);
    assert!(!e.text.contains("brief history"), "{}", e.text);
    assert!(e.text.contains("the committee found"), "{}", e.text);
    assert!(e.text.contains("environmental racism"), "{}", e.text);
}

#[test]
fn filing_lines_are_dropped_but_prose_opening_with_their_labels_kept() {
    let html = article(&format!(
        "<p>{PARA}</p><p><span>Topics</span> <a href='/category/apple'>Apple</a></p>\
         <p>Posted in <a href='/c/b'>Blockchain</a>, <a href='/c/t'>Smart Contracts</a></p>\
         <p>{PARA}</p><p>Category: <a href='/c/d'>December Comfort Watches</a></p>\
         <p>Теги: <a href='/t/e'>экономика</a>, <a href='/t/n'>нефть</a></p>\
         <p>Tags are how <a href='/t'>the archive</a> files each story by its subject.</p>\
         <p>Topics covered include <a href='/w'>watershed ecology</a> and planning.</p>"
    ));
    let e = extract(&html, None);
    assert!(!e.text.contains("Apple"), "{}", e.text);
    assert!(!e.text.contains("Blockchain"), "{}", e.text);
    assert!(!e.text.contains("Comfort Watches"), "{}", e.text);
    assert!(!e.text.contains("нефть"), "{}", e.text);
    assert!(e.text.contains("files each story"), "{}", e.text);
    assert!(e.text.contains("watershed ecology"), "{}", e.text);
}

/// `n` cards of other posts: a linked title, an excerpt and, when `dated`, a date.
fn post_cards(n: usize, dated: bool) -> String {
    (0..n)
        .map(|i| {
            let date = if dated {
                "<span>Feb 26, 2026</span>"
            } else {
                ""
            };
            format!(
                "<div class='post-card'><h3><a href='/blog/post-{i}'>Another story number {i}</a>\
                 </h3><p>A short excerpt of that other story, cut off after a line.</p>{date}</div>"
            )
        })
        .collect()
}

#[test]
fn dated_cards_of_other_posts_are_dropped_unless_they_are_the_page() {
    let long: String = (0..6)
        .map(|i| format!("<p>Paragraph {i}. {PARA}</p>"))
        .collect();
    let after_story = |n: usize, dated: bool| {
        let html = article(&format!(
            "{long}<div class='grid'>{}</div>",
            post_cards(n, dated)
        ));
        extract(&html, None).text
    };
    let text = after_story(3, true);
    assert!(text.contains("Paragraph 5."), "{text}");
    assert!(!text.contains("Another story"), "{text}");
    // Undated boxes under linked headings are a service's features or a manual's sections.
    let text = after_story(3, false);
    assert!(text.contains("Another story number 2"), "{text}");
    // Two are not a run.
    let text = after_story(2, true);
    assert!(text.contains("Another story number 1"), "{text}");
    // A blog's index is its cards.
    let e = extract(
        &article(&format!("<p>{PARA}</p>{}", post_cards(8, true))),
        None,
    );
    assert!(e.text.contains("Another story number 7"), "{}", e.text);
}

#[test]
fn microdata_author_boxes_with_a_description_are_dropped_but_not_bare_authors() {
    let html = article(&format!(
        "<p>{PARA}</p><p>Second paragraph. {PARA}</p>\
         <p>Posted by <span itemprop='author'>Sam Poster</span> in the garden forum.</p>\
         <div itemprop='author' itemscope itemtype='https://schema.org/Person'>\
         <span itemprop='name'>Jane Roe</span><p itemprop='description'>Jane Roe writes about \
         gardens and kitchens for the site, and has grown tomatoes for twenty years.</p></div>"
    ));
    let e = extract(&html, None);
    assert!(e.text.contains("Second paragraph."), "{}", e.text);
    assert!(e.text.contains("Sam Poster"), "{}", e.text);
    assert!(!e.text.contains("grown tomatoes"), "{}", e.text);
}

#[test]
fn pleas_to_subscribe_are_not_subscribers_articles() {
    assert_eq!(name_hint("subscriptionPleaContainer-D09dM"), HINT_HARD);
    assert_eq!(name_hint("subscribebox"), HINT_HARD);
    assert_eq!(name_hint("subscriber-only"), 0);
    assert_eq!(name_hint("subscriber-content"), HINT_CONTENT);
}

/// A page whose article sits in a wrapper named like a sidebar, beside a menu long enough that
/// the wrapper holds under 60 % of the page: trusting every name leaves almost nothing.
fn article_in_sidebar_named_wrapper(inner: &str) -> String {
    let menu: String = (0..20)
        .map(|i| format!("<li><a href='/topic/{i}'>Topic number {i} of the site</a></li>"))
        .collect();
    format!(
        "<html><body><nav><ul>{menu}</ul></nav><div class='sidebar-first-only'>\
         <p>{PARA}</p><p>Second paragraph. {PARA}</p>{inner}</div>\
         <footer>{PARA} {PARA}</footer></body></html>"
    )
}

#[test]
fn a_page_emptied_by_one_name_doubts_that_name_only() {
    let html = article_in_sidebar_named_wrapper(
        "<div class='author-box'><p>Peter is a writer who covers software for us.</p></div>",
    );
    let e = extract(&html, None);
    assert!(e.text.contains("Second paragraph."), "{}", e.text);
    // Doubting every name would keep the author box the page also names.
    assert!(!e.text.contains("Peter is a writer"), "{}", e.text);
}

#[test]
fn flexbox_utility_classes_are_not_content_names() {
    for utility in [
        "justify-content-start",
        "align-content-center",
        "place-content-end",
    ] {
        assert_eq!(name_hint(utility), 0, "{utility}");
    }
    let html = article(&format!(
        "<p>{PARA}</p><p>{PARA}</p>\
         <div class='author-box d-flex justify-content-start'>\
         <p>Maria is a growth analyst who writes about search and data.</p></div>"
    ));
    let e = extract(&html, None);
    assert!(!e.text.contains("growth analyst"), "{}", e.text);
    assert_eq!(e.text.matches("real article text").count(), 2);
}

#[test]
fn closed_tab_panels_are_content() {
    let html = format!(
        "<html><body><article><p>{PARA}</p><div role='tablist'><button>Python</button></div>\
         <div role='tabpanel'><p>Install Python first. {PARA}</p></div>\
         <div role='tabpanel' hidden><p>Install Node.js first. {PARA}</p></div>\
         <div hidden><p>Never shown to anyone. {PARA}</p></div></article></body></html>"
    );
    let e = extract(&html, None);
    assert!(e.text.contains("Install Node.js first."), "{}", e.text);
    assert!(!e.text.contains("Never shown"), "{}", e.text);
}

#[test]
fn no_glued_words_across_cells_items_and_breaks() {
    let html = article(&format!(
        "<p>{PARA}</p><table><tr><td>alpha</td><td>beta</td></tr><tr><td>gamma</td></tr></table>\
         <ul><li>one</li><li>two</li></ul><p>left<br>right</p><div>up</div><div>down</div>\
         <p><a href='/1'>first</a><a href='/2'>second</a></p>\
         <p>Sold at<span class='pl-1'>Market</span> Street by the<span class='text-sm'>se</span> traders.</p>\
         <p>{PARA}</p>"
    ));
    let text = extract(&html, None).text;
    for glued in [
        "alphabeta",
        "betagamma",
        "onetwo",
        "leftright",
        "updown",
        "firstsecond",
        "atMarket",
    ] {
        assert!(!text.contains(glued), "{glued} in {text:?}");
    }
    // A span without a spacing class is part of its word.
    assert!(text.contains("by these traders"), "{text:?}");
    assert!(text.contains("one\ntwo"), "{text:?}");
    assert!(text.contains("left\nright"), "{text:?}");
}

#[test]
fn headings_and_list_items_on_their_own_lines() {
    let html = article(&format!(
        "<h2>Section <b>title</b></h2><p>{PARA}</p><ul><li>first item</li><li>second item</li></ul><p>{PARA}</p>"
    ));
    let text = extract(&html, None).text;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"Section title"), "{text:?}");
    assert!(lines.contains(&"first item"), "{text:?}");
    assert!(lines.contains(&"second item"), "{text:?}");
}

#[test]
fn decodes_entities_and_normalises_spaces() {
    let html = article(&format!(
        "<p>Fish &amp; chips&nbsp;cost&#160;5&nbsp;&euro; &mdash; cheap. {PARA}</p>"
    ));
    let text = extract(&html, None).text;
    assert!(text.contains("Fish & chips cost 5 € — cheap."), "{text:?}");
    assert!(!text.contains('\u{a0}'));
    assert!(!text.contains("  "));
}

#[test]
fn cyrillic_text_is_preserved() {
    let para = "Это длинный абзац настоящего текста статьи, написанный автором, \
        с запятыми, полными предложениями и достаточным числом слов.";
    let html = format!(
        "<html><head><title>Новости — Пример</title></head><body><nav><a href='/'>Главная</a></nav>\
         <div class='content'><p>{para}</p><p>Ёжик и щука. {para}</p></div></body></html>"
    );
    let e = extract(&html, Some("https://пример.рф/"));
    assert!(e.text.contains("Ёжик и щука."), "{}", e.text);
    assert!(!e.text.contains("Главная"));
    assert_eq!(e.title.as_deref(), Some("Новости"));
}

#[test]
fn title_prefers_og_title_and_strips_site_name() {
    let html = "<html><head><title>Ignored | Site</title>\
        <meta property='og:title' content='Real Title'></head><body><p>x</p></body></html>";
    assert_eq!(extract(html, None).title.as_deref(), Some("Real Title"));
    let html = "<html><head><title>How to bake bread at home - Example Kitchen</title>\
        </head><body><p>x</p></body></html>";
    let e = extract(html, Some("https://www.example-kitchen.com/bread"));
    assert_eq!(e.title.as_deref(), Some("How to bake bread at home"));
    let html = "<html><body><h1>Only  <i>heading</i></h1><p>x</p></body></html>";
    assert_eq!(extract(html, None).title.as_deref(), Some("Only heading"));
    assert_eq!(extract("<p>no title</p>", None).title, None);
}

#[test]
fn title_heading_is_not_repeated_in_text() {
    let html = format!(
        "<html><head><title>Big News</title></head><body><article><h1>Big News</h1>\
         <p>{PARA}</p></article></body></html>"
    );
    let text = extract(&html, None).text;
    assert!(!text.contains("Big News"), "{text:?}");
}

#[test]
fn forum_posts_are_all_kept() {
    let posts: String = (0..6)
        .map(|i| {
            format!(
                "<div class='post'><div class='author'><a href='/u{i}'>user{i}</a></div>\
                 <div class='message'>Reply number {i}: I had the same problem with my \
                 router, and updating the firmware fixed it for me.</div></div>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href='/'>Forums</a></nav><div id='thread'>{posts}</div></body></html>"
    );
    let text = extract(&html, None).text;
    for i in 0..6 {
        assert!(
            text.contains(&format!("Reply number {i}:")),
            "{i} missing: {text}"
        );
    }
}

#[test]
fn pre_keeps_line_breaks() {
    let html = article(&format!(
        "<p>{PARA}</p><pre>fn main() {{\n    run();\n}}</pre>"
    ));
    let text = extract(&html, None).text;
    assert!(text.contains("fn main() {\n    run();\n}"), "{text:?}");
}

#[test]
fn empty_and_junk_input_do_not_panic() {
    for input in [
        "",
        " ",
        "<",
        "</",
        "<<>>",
        "&",
        "&#xFFFFFFFF;",
        "<html",
        "\u{0}\u{1}\u{fffd}",
    ] {
        let e = extract(input, None);
        assert!(e.text.len() <= input.len() + 8);
    }
    let junk: String = (0..200_000u32)
        .map(|i| char::from_u32((i.wrapping_mul(2654435761) >> 7) % 0x3000).unwrap_or('x'))
        .collect();
    let _ = extract(&junk, Some("not a url"));
}

fn assert_fast(name: &str, html: &str, limit: Duration) -> Extracted {
    let t = Instant::now();
    let e = extract(html, None);
    assert!(t.elapsed() < limit, "{name} took {:?}", t.elapsed());
    e
}

#[test]
fn deep_nesting_does_not_overflow() {
    // Debug builds are slow; the limits guard against quadratic blowups.
    let n = 100_000;
    let deep = format!("{}{PARA}{}", "<div>".repeat(n), "</div>".repeat(n));
    let e = assert_fast("divs", &deep, Duration::from_secs(60));
    assert!(e.text.contains("real article text"));
    let unclosed = format!("{}{PARA}", "<span><b><i>".repeat(n / 3));
    assert_fast("inline", &unclosed, Duration::from_secs(60));
    let tables = "<table><tr><td>".repeat(n / 3);
    assert_fast("tables", &tables, Duration::from_secs(60));
    let lists = "<ul><li>x".repeat(n / 2);
    assert_fast("lists", &lists, Duration::from_secs(60));
}

#[test]
fn huge_input_is_cut() {
    let para = format!("<p>{PARA}</p>");
    let huge = para.repeat(100 * 1024 * 1024 / para.len() + 1);
    assert!(huge.len() > 100 * 1024 * 1024);
    let e = assert_fast("huge", &huge, Duration::from_secs(120));
    assert!(e.text.len() < crate::markup::Limits::PAGE.max_bytes);
}

#[test]
fn long_link_split_by_a_block_does_not_underflow() {
    // Found by cargo-fuzz: the link's full length was credited to the
    // block it opened in.
    let html = format!(
        "<p>ab<a href='#'>{}<div>tail of the link</div></a></p><p>{PARA}</p>",
        "x".repeat(37)
    );
    let text = extract(&html, None).text;
    assert!(text.contains("tail of the link"), "{text:?}");
}

#[test]
fn paragraphs_beside_a_lone_winning_paragraph_are_kept() {
    // One long paragraph outscores its post body, whose link list drags the
    // body's score down; the short paragraphs after it are still the post.
    let links: String = (1..=12)
        .map(|i| format!("<li><a href='/p/{i}'>Project number {i}</a></li>"))
        .collect();
    let html = format!(
        "<html><body><div class='entry-content'><p>{PARA} {PARA} {PARA}</p>\
         <p>The planter I am sharing today is one I built last spring from scrap wood and paint.</p>\
         <p>Be sure to check out the other projects below!</p>\
         <ul>{links}</ul><p>YOU MIGHT ALSO LIKE:</p></div></body></html>"
    );
    let e = extract(&html, None);
    assert!(e.text.contains("The planter I am sharing"), "{}", e.text);
    assert!(
        e.text.contains("check out the other projects"),
        "{}",
        e.text
    );
    assert!(!e.text.contains("ALSO LIKE"), "{}", e.text);
    assert!(!e.text.contains("Project number"), "{}", e.text);
}

/// `n` article paragraphs, numbered.
fn numbered_paras(n: usize) -> String {
    (1..=n)
        .map(|i| format!("<p>Part {i}. {PARA}</p>"))
        .collect()
}

#[test]
fn article_named_as_content_beats_prose_boilerplate_around_it() {
    // A member offer and an author bio are prose without links: with them
    // the page wrapper outweighs the article, which the markup names.
    let paras = numbered_paras(12);
    let html = format!(
        "<html><body><div class='page'><div class='entry-content'>{paras}</div>\
         <div class='member-pitch'><p>Become a member at no charge and you will gain access \
         to every post published in the past year, our bookmark tool and the bulletin board.</p></div>\
         <div class='bio'><p>Jane Doe is a freelance writer living near the coast, who has \
         covered gardens, houses and the people who build them for over ten years.</p></div>\
         </div></body></html>"
    );
    let e = extract(&html, None);
    assert_eq!(
        e.text.matches("real article text").count(),
        12,
        "{}",
        e.text
    );
    assert!(!e.text.contains("Become a member"), "{}", e.text);
    assert!(!e.text.contains("freelance writer"), "{}", e.text);
}

#[test]
fn one_post_of_a_thread_does_not_stand_for_the_thread() {
    // The first post holds most of the thread's text and is named as
    // content, but its siblings share its markup: all posts are kept.
    let html = format!(
        "<html><body><div class='conversation'>\
         <div class='post-body'><p>{PARA} Again: {PARA} And: {PARA} Once more: {PARA}</p></div>\
         <div class='post-body'><p>A short reply that agrees with the first post here.</p></div>\
         <div class='post-body'><p>Another reply, asking a question about the first post.</p></div>\
         </div></body></html>"
    );
    let e = extract(&html, None);
    assert!(e.text.contains("A short reply"), "{}", e.text);
    assert!(e.text.contains("Another reply"), "{}", e.text);
}

#[test]
fn a_contents_box_does_not_take_the_lead_paragraph_with_it() {
    let paras = numbered_paras(8);
    let toc: String = (1..=10)
        .map(|i| format!("<li><a href='#s{i}'>Section number {i} of this long guide</a></li>"))
        .collect();
    let html = format!(
        "<html><body><article><h1>A guide</h1>\
         <div class='detail-body'><div><strong>Contents</strong><ol>{toc}</ol></div>\
         <p>The lead paragraph says what this guide is for, who should read it and why \
         the companies below were chosen for it, from the largest to the tenth largest by \
         their share of the market in the last year.</p></div>\
         {paras}</article></body></html>"
    );
    let e = extract(&html, None);
    assert!(e.text.contains("The lead paragraph"), "{}", e.text);
    assert!(!e.text.contains("Section number"), "{}", e.text);
}

#[test]
fn ordered_list_items_keep_their_numbers() {
    let html = article(&format!(
        "<p>{PARA}</p><ol><li><h3>Make a budget</h3><p>{PARA}</p></li><li>Pick a venue \
         <ol start='4'><li>Hall</li><li value='9'>Garden</li><li>Barn</li></ol></li>\
         <li><img src='x.png'></li></ol><p>Closing words. {PARA}</p>\
         <ul><li>a bullet</li></ul>"
    ));
    let text = extract(&html, None).text;
    let lines: Vec<&str> = text.lines().collect();
    for l in [
        "1. Make a budget",
        "2. Pick a venue",
        "4. Hall",
        "9. Garden",
        "10. Barn",
    ] {
        assert!(lines.contains(&l), "{l} in {text:?}");
    }
    // The third item has no text: its number goes to nobody.
    assert!(text.contains("\n\nClosing words."), "{text:?}");
    assert!(lines.contains(&"a bullet"), "{text:?}");
}

#[test]
fn heading_anchor_ids_are_not_class_names() {
    let html = article(&format!(
        "<p>{PARA}</p><h2 id='how-to-share-social-security-benefits'>How to share \
         Social Security benefits</h2><p>{PARA}</p>\
         <h2 class='sidebar-title'>Popular now</h2><p>{PARA}</p>"
    ));
    let text = extract(&html, None).text;
    assert!(
        text.contains("How to share Social Security benefits"),
        "{text}"
    );
    assert!(!text.contains("Popular now"), "{text}");
}

#[test]
fn link_lists_and_tables_in_the_texts_flow_are_kept_and_trailing_ones_pruned() {
    let links = |what: &str| -> String {
        (1..=6)
            .map(|i| format!("<li><a href='/{what}/{i}'>{what} number {i}</a></li>"))
            .collect()
    };
    let html = article(&format!(
        "<p>First. {PARA} {PARA}</p><ul>{}</ul><p>Second. {PARA} {PARA}</p>\
         <p>Before you start, read these guides:</p>\n  <ul>{}</ul>\
         <p>Third. {PARA} {PARA}</p><ul>{}</ul>",
        links("Step"),
        links("Guide"),
        links("Elsewhere"),
    ));
    let rows: String = (1..=6)
        .map(|i| {
            format!(
                "<tr><td><a href='/w/{i}'>Garmin Forerunner model {i}</a></td>\
                 <td>${i}00</td><td>2{i} hours</td><td>AMOLED</td></tr>"
            )
        })
        .collect();
    let html = html.replace(
        "<p>Third.",
        &format!("<table>{rows}</table><p>Fourth. {PARA} {PARA}</p><p>Third."),
    );
    let e = extract(&html, None);
    for kept in [
        "Garmin Forerunner model 1\n$100",
        "Garmin Forerunner model 6\n$600",
        "Step number 1\nStep number 2",
        "Guide number 6",
    ] {
        assert!(e.text.contains(kept), "{kept:?} missing from {}", e.text);
    }
    assert!(!e.text.contains("Elsewhere"), "{}", e.text);
}
