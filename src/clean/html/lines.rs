//! Filters over the finished text's lines and paragraphs: page furniture
//! that survives container choice because it sits inside the content.

/// A line that is only a counter ("44 reactions", "7 min read", "1.2k views", "5 комментариев"):
/// engagement and reading-time widgets, not text.
pub(super) fn is_counter_line(line: &str) -> bool {
    const UNITS: &[&str] = &[
        "comment",
        "comments",
        "reaction",
        "reactions",
        "like",
        "likes",
        "min read",
        "minute read",
        "minutes read",
        "view",
        "views",
        "reply",
        "replies",
        "share",
        "shares",
        "vote",
        "votes",
        "answer",
        "answers",
    ];
    // Russian units in their forms after a number (1 комментарий, 2 комментария, 5
    // комментариев), compared lower-cased.
    const UNITS_RU: &[&str] = &[
        "комментарий",
        "комментария",
        "комментариев",
        "просмотр",
        "просмотра",
        "просмотров",
        "ответ",
        "ответа",
        "ответов",
        "лайк",
        "лайка",
        "лайков",
        "мин чтения",
        "мин. чтения",
        "минута чтения",
        "минуты чтения",
        "минут чтения",
    ];
    const MAX_UNIT_CHARS: usize = 14;
    let line = line.trim();
    let num_end = line
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(line.len());
    if num_end == 0 || !line.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let rest = line[num_end..].trim_start();
    let rest = rest
        .strip_prefix(['k', 'K', 'm', 'M'])
        .filter(|r| r.starts_with(char::is_whitespace))
        .unwrap_or(rest);
    if rest.len() == line[num_end..].len() {
        // No space between the number and the unit: "7min" is not a counter line here.
        return false;
    }
    let unit = rest.trim();
    unit.chars().count() <= MAX_UNIT_CHARS && is_listed(unit, UNITS, UNITS_RU)
}

/// Whether `word` is one of `english` (compared without ASCII case) or, beyond ASCII, one of
/// `russian` (in lower case, compared lower-cased: Cyrillic has no ASCII case).
fn is_listed(word: &str, english: &[&str], russian: &[&str]) -> bool {
    if word.is_ascii() {
        english.iter().any(|w| w.eq_ignore_ascii_case(word))
    } else {
        russian.contains(&word.to_lowercase().as_str())
    }
}

/// A line that is only a control's label ("Read more", "Sponsored",
/// "Permalink"): buttons and links of the page's furniture, not text.
pub(super) fn is_control_line(line: &str) -> bool {
    const LABELS: &[&str] = &[
        "read more",
        "continue reading",
        "read full article",
        "sponsored",
        "advertisement",
        "permalink",
        "loading",
        "embed",
        "reply with quote",
        "buy now",
        "book now",
        "shop now",
        "add to cart",
        "get a quote",
        "apply now",
        "subscribe",
        "see all",
        "share this post",
        "like this",
        "like loading",
        // News pages print these between an article's paragraphs, around the ad slots and
        // players inside it.
        "skip advertisement",
        "article continues below",
        "story continues below",
        "story continues below advertisement",
        "article continues below advertisement",
        "continue reading below",
        "continue reading the main story",
        "share full article",
        "listen to this article",
        // A sign-up form's answer, in the page before anyone signs up.
        "thanks for signing up",
        "thank you for signing up",
        "thanks for subscribing",
        "thank you for subscribing",
    ];
    // The same controls on Russian pages, compared lower-cased (Cyrillic has no ASCII case).
    const LABELS_RU: &[&str] = &[
        "читать далее",
        "читать полностью",
        "читать еще",
        "читать ещё",
        "подробнее",
        "реклама",
        "поделиться",
        "подписаться",
        "загрузка",
        "купить",
        "в корзину",
        "показать еще",
        "показать ещё",
        "смотреть все",
        "ответить",
        "ответить с цитированием",
        "продолжение ниже",
    ];
    let label = line.trim().trim_end_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '.' | '!' | '…' | '»' | '›' | '>' | ':' | '\u{2190}'..='\u{21ff}'
            )
    });
    // WordPress prints this under every comment form its spam filter guards.
    const SPAM_NOTE: &str = "this site uses akismet to reduce spam";
    // Longer than any label (a Russian letter takes two bytes): not lower-cased to be sure.
    const MAX_LABEL_BYTES: usize = 50;
    label.len() <= MAX_LABEL_BYTES && is_listed(label, LABELS, LABELS_RU)
        || label.len() <= 100
            && label
                .get(..SPAM_NOTE.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(SPAM_NOTE))
}

/// The text an embedded post shows until its script runs ("View this post on Instagram",
/// "View post on imgur.com", "A post shared by Ann (@ann)", "Watch on YouTube"): the embed
/// code's fallback, not the article's text.
fn is_embed_fallback_line(line: &str) -> bool {
    const VIEW: &[&str] = &[
        "view post on ",
        "view this post on ",
        "view on ",
        "watch on ",
    ];
    const MAX_CHARS: usize = 120;
    let line = line.trim();
    if line.len() > MAX_CHARS {
        return false;
    }
    let lower = line.to_lowercase();
    let viewed = VIEW.iter().any(|v| {
        lower
            .strip_prefix(v)
            .is_some_and(|site| !site.is_empty() && !site.contains(char::is_whitespace))
    });
    let shared =
        lower.starts_with("a post shared by ") && lower.contains("(@") && lower.ends_with(')');
    viewed || shared
}

/// A forum poster's statistics ("Posts: 7", "Joined: Sep 2019"), printed
/// beside every post.
fn is_member_stat_line(line: &str) -> bool {
    const KEYS: &[&str] = &[
        "posts",
        "messages",
        "joined",
        "reputation",
        "reaction score",
        "likes received",
        "member since",
        "threads",
    ];
    let Some((key, value)) = line.trim().split_once(':') else {
        return false;
    };
    let value = value.trim();
    !value.is_empty()
        && value.len() <= 20
        && value.split_whitespace().count() <= 3
        && value.chars().any(|c| c.is_ascii_digit())
        && KEYS.iter().any(|k| k.eq_ignore_ascii_case(key.trim()))
}

/// Template placeholder text ("Lorem ipsum ..."), left in unused page
/// templates: never anybody's text.
fn is_placeholder_line(line: &str) -> bool {
    let start = line.trim_start();
    start.len() >= 11 && start.as_bytes()[..11].eq_ignore_ascii_case(b"lorem ipsum")
}

/// A picture's credit on a line of its own ("Credit: Apple", "Image: SiliconANGLE/ChatGPT",
/// "Getty Images / Holger Leue", "(Photo by Jim Watson/AFP)", "AP Photo/Evan Vucci"): the
/// caption outside a `<figcaption>`, not text.
pub(super) fn is_credit_line(line: &str) -> bool {
    const LABELS: &[&str] = &[
        "credit",
        "credits",
        "photo",
        "photos",
        "photo credit",
        "photo credits",
        "image",
        "image credit",
        "image source",
        "images",
        "photograph",
        "picture",
        "illustration",
        "фото",
        "фотография",
        "источник фото",
        "иллюстрация",
        "изображение",
    ];
    const BY_LABELS: &[&str] = &[
        "photo by",
        "photos by",
        "photograph by",
        "image by",
        "illustration by",
        "image courtesy of",
        "photo courtesy of",
    ];
    const AGENCIES: &[&str] = &["getty images", "shutterstock", "istock", "ap photo/"];
    const MAX_WORDS: usize = 8;
    // Code keeps its indentation, and its keys take lower-case values ("image: nginx:1.14").
    if line.starts_with(char::is_whitespace) || line.split_whitespace().nth(MAX_WORDS).is_some() {
        return false;
    }
    // News pages put the credit in parentheses after the picture: "(Photo by Jim Watson/AFP)".
    let line = line.trim();
    let line = line
        .strip_prefix('(')
        .and_then(|l| l.strip_suffix(')'))
        .unwrap_or(line);
    let labelled = line.split_once(':').is_some_and(|(label, credit)| {
        credit.trim_start().starts_with(char::is_uppercase)
            && LABELS.contains(&label.trim().to_lowercase().as_str())
    });
    let lower = line.to_lowercase();
    // "Photo by Jane Doe", "Image courtesy of NASA": a label and then a name.
    // The name's case is read from the line itself, found by the label's bytes (ASCII, but
    // folded from a line where a letter may lower to another length: then no cut is found).
    let by = BY_LABELS.iter().any(|l| {
        lower.starts_with(l)
            && line
                .get(l.len()..)
                .and_then(|rest| rest.strip_prefix(' '))
                .is_some_and(|name| name.starts_with(char::is_uppercase))
    });
    labelled || by || AGENCIES.iter().any(|a| lower.starts_with(a))
}

/// A byline or a date line ("Written by Madeline Puckette", "Published June 23, 2025",
/// "By", "Reviewed by: Brian Stormont", "By Ann Lee, Bo Kim on March 12, 2026 | Comments"),
/// which the references leave out at the head of an article; further down, "By" lines are
/// forum posters and brands.
pub(super) fn is_byline(line: &str) -> bool {
    const VERBS: &[&str] = &[
        "written",
        "posted",
        "published",
        "updated",
        "last updated",
        "last modified",
        "last reviewed",
        "first published",
        "originally published",
        "reviewed",
        "edited",
        "fact checked",
        "fact-checked",
        "автор",
        "опубликовано",
        "обновлено",
        "дата публикации",
    ];
    /// The longest byline; one with a date or a number in it (of comments, of a time) and no
    /// words but [`JOINS`] between its names may be longer, up to `MAX_DATED_CHARS`.
    const MAX_CHARS: usize = 60;
    const MAX_DATED_CHARS: usize = 100;
    const MAX_NAME_WORDS: usize = 4;
    /// The only words of a long byline not a name, a date or a number.
    const JOINS: &[&str] = &[
        "on", "by", "at", "and", "am", "pm", "comments", "min", "read",
    ];
    let line = line.trim();
    let chars = line.chars().count();
    if chars > MAX_CHARS {
        // Names, dates and counters, not a sentence ("Published in 1998, the novel …").
        let dated = line.contains(|c: char| c.is_ascii_digit());
        let listed = line
            .split_whitespace()
            .filter(|w| w.starts_with(char::is_lowercase))
            .all(|w| JOINS.contains(&w.trim_end_matches([',', '.', ':'])));
        if !(dated && listed && chars <= MAX_DATED_CHARS) {
            return false;
        }
    }
    let lower = line.to_lowercase();
    let verb = VERBS.iter().any(|v| {
        lower
            .strip_prefix(v)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':', ',']))
    });
    let by_names = match lower.strip_prefix("by") {
        Some("") => true,
        Some(rest) if rest.starts_with(' ') => {
            let names = names_of(line.get(2..).unwrap_or(""));
            let mut any = false;
            names
                .split([',', '&'])
                .flat_map(|part| part.split(" and "))
                .all(|name| {
                    let words: Vec<&str> = name.split_whitespace().collect();
                    any |= !words.is_empty();
                    words.len() <= MAX_NAME_WORDS
                        && words.iter().all(|w| w.starts_with(char::is_uppercase))
                })
                && any
        }
        _ => false,
    };
    verb || by_names
}

/// The names a byline gives after its label, which end where the date or the counters after
/// them begin ("Ann Lee, Bo Kim on March 12, 2026 | Comments").
fn names_of(rest: &str) -> &str {
    [" on ", "|", " - ", " – ", " — ", "•", "·"]
        .iter()
        .filter_map(|cut| rest.find(cut))
        .min()
        .map_or(rest, |end| &rest[..end])
}

/// A line or paragraph this long is the article's text: its head (title, byline, date) ends
/// at the first one.
const BODY_CHARS: usize = 150;

/// Where the article's text begins among `paras`: the first long paragraph ([`BODY_CHARS`]).
fn body_start(paras: &[&str]) -> Option<usize> {
    paras.iter().position(|p| p.chars().count() >= BODY_CHARS)
}

/// Drops the bylines and date lines above the first long paragraph.
pub(super) fn drop_head_bylines(text: String) -> String {
    let in_head = |l: &str| l.chars().count() < BODY_CHARS;
    if !text.lines().take_while(|l| in_head(l)).any(is_byline) {
        return text;
    }
    let mut head = true;
    drop_lines(&text, |l| {
        head &= in_head(l);
        head && is_byline(l)
    })
}

/// The name a tail byline gives ("Written by Cassidy Horton", "By infuy", "Author: Ann Lee"),
/// up to the date or counters after it: one to four words, no digits.
fn byline_name(line: &str) -> Option<&str> {
    const LABELS: &[&str] = &["written by ", "posted by ", "by ", "author: ", "автор: "];
    const MAX_NAME_WORDS: usize = 4;
    let line = line.trim();
    let rest = LABELS.iter().find_map(|label| {
        let head = line.get(..label.len())?;
        (head.to_lowercase() == *label).then(|| &line[label.len()..])
    })?;
    let name = names_of(rest).trim();
    let words = name.split_whitespace().count();
    ((1..=MAX_NAME_WORDS).contains(&words) && !name.contains(|c: char| c.is_ascii_digit()))
        .then_some(name)
}

/// Words that say what a writer is, in a biography ("James Beard Award-winning author …") or
/// in a role under a name ("Former Staff Writer", "Product Analytics Expert").
const WRITERS: &[&str] = &[
    "author",
    "writer",
    "editor",
    "journalist",
    "reporter",
    "columnist",
    "contributor",
    "blogger",
    "founder",
    "co-founder",
    "co-founded",
    "автор",
    "журналист",
    "редактор",
];

/// Words of a role under a name beyond [`WRITERS`]' ("Head of Product", "Senior Analyst").
const ROLES: &[&str] = &[
    "expert",
    "analyst",
    "manager",
    "head",
    "director",
    "specialist",
    "engineer",
    "designer",
    "staff",
    "tester",
    "lead",
    "officer",
    "consultant",
    "strategist",
    "researcher",
    "scientist",
];

/// Whether `para` is a short biography of `name`: it names them among its first words
/// ("Cassidy Horton is a finance writer …", "Infuy is an international …") or, under a
/// byline of capitalised names, says what a writer is ("James Beard Award-winning author …").
fn is_biography_of(para: &str, name: &str, capitalised: bool) -> bool {
    const MIN_CHARS: usize = 40;
    const MAX_CHARS: usize = 1000;
    const FIRST_WORDS: usize = 12;
    let chars = para.chars().count();
    if para.contains('\n') || !(MIN_CHARS..=MAX_CHARS).contains(&chars) {
        return false;
    }
    let first: Vec<String> = para
        .split_whitespace()
        .take(FIRST_WORDS)
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
                .to_lowercase()
        })
        .collect();
    let named = name
        .split_whitespace()
        .filter(|w| w.chars().count() >= 3)
        .any(|w| first.contains(&w.to_lowercase()));
    named
        || capitalised
            && first
                .iter()
                .any(|w| WRITERS.iter().any(|k| w.trim_end_matches('s') == *k))
}

/// A box's heading over the people who wrote or tested the article ("About the author",
/// "Meet the testers").
fn is_author_label(line: &str) -> bool {
    const LABELS: &[&str] = &[
        "author",
        "authors",
        "about the author",
        "about the authors",
        "meet the author",
        "meet the authors",
        "meet the testers",
        "meet the experts",
        "meet the team",
        "об авторе",
        "об авторах",
    ];
    let label = line.trim().trim_end_matches(':').to_lowercase();
    LABELS.contains(&label.as_str())
}

/// Where the people of an author's box that begins at paragraph `from` end: each a name on a
/// paragraph of its own ("Adrien Ramirez") and at least one of their role ("Former Staff
/// Writer"), their handle ("@itsaramkat") or a biography naming them, in that order.
/// Returns `from` when no such person follows.
fn people_after(paras: &[&str], from: usize) -> usize {
    const MAX_NAME_CHARS: usize = 40;
    const MAX_ROLE_CHARS: usize = 80;
    const MAX_ROLE_WORDS: usize = 10;
    let is_name = |p: &str| {
        let words: Vec<&str> = p.split_whitespace().collect();
        (2..=4).contains(&words.len())
            && p.chars().count() <= MAX_NAME_CHARS
            && words.iter().all(|w| w.starts_with(char::is_uppercase))
            && !p.contains(|c: char| c.is_ascii_digit() || matches!(c, '.' | ':' | '!' | '?'))
    };
    // A role may look like a name ("Former Staff Writer"): then its words tell it.
    let is_role = |p: &str| {
        let says_role = || {
            p.split(|c: char| !c.is_alphanumeric() && c != '-')
                .any(|w| {
                    let w = w.to_lowercase();
                    let w = w.trim_end_matches('s');
                    WRITERS.contains(&w) || ROLES.contains(&w)
                })
        };
        p.starts_with(char::is_uppercase)
            && p.chars().count() <= MAX_ROLE_CHARS
            && p.split_whitespace().count() <= MAX_ROLE_WORDS
            && !p.ends_with(['.', '!', '?', ':'])
            && (!is_name(p) || says_role())
    };
    let is_handle = |p: &str| p.starts_with('@') && !p.contains(char::is_whitespace);
    let at = |j: usize| paras.get(j).map(|p| p.trim()).filter(|p| !p.contains('\n'));
    let mut end = from;
    while let Some(name) = at(end).filter(|p| is_name(p)) {
        let mut j = end + 1;
        if at(j).is_some_and(is_role) {
            j += 1;
        }
        if at(j).is_some_and(is_handle) {
            j += 1;
        }
        if at(j).is_some_and(|p| is_biography_of(p, name, true)) {
            j += 1;
        }
        if j == end + 1 {
            break;
        }
        end = j;
    }
    end
}

/// Drops an author's box below the article's head: a byline on a paragraph of its own and the
/// short biography after it ([`is_biography_of`]), or a label ("About the author") over the
/// people of the box ([`people_after`]). A byline followed by anything else stays (a forum's
/// poster over their post, a brand over its product), and so does a label over anything else.
pub(super) fn drop_author_boxes(text: String) -> String {
    let paras: Vec<&str> = text.split("\n\n").collect();
    let Some(body) = body_start(&paras) else {
        return text;
    };
    let mut drop = vec![false; paras.len()];
    for i in body + 1..paras.len().saturating_sub(1) {
        let line = paras[i].trim();
        if line.contains('\n') {
            continue;
        }
        if is_author_label(line) {
            let end = people_after(&paras, i + 1);
            if end > i + 1 {
                drop[i..end].iter_mut().for_each(|d| *d = true);
            }
            continue;
        }
        let Some(name) = byline_name(line) else {
            continue;
        };
        if is_biography_of(paras[i + 1].trim(), name, is_byline(line)) {
            drop[i] = true;
            drop[i + 1] = true;
        }
    }
    if !drop.contains(&true) {
        return text;
    }
    keep_paragraphs(&paras, &drop)
}

/// A heading over the works an article cites ("References", "Sources", "Citations",
/// "Footnotes", "Список литературы"), with a short note after it at most ("Footnotes (↩
/// returns to text)"). "Notes" is not one: articles head their own remarks with it.
fn is_sources_label(line: &str) -> bool {
    const LABELS: &[&str] = &[
        "references",
        "reference list",
        "sources",
        "sources cited",
        "citations",
        "footnotes",
        "endnotes",
        "bibliography",
        "works cited",
        "источники",
        "литература",
        "список литературы",
        "примечания",
    ];
    const MAX_NOTE_CHARS: usize = 25;
    // Longer than any label with its note: not lower-cased to be sure.
    const MAX_BYTES: usize = 80;
    if line.len() > MAX_BYTES {
        return false;
    }
    let label = line.trim().trim_end_matches(':').to_lowercase();
    LABELS.iter().any(|l| {
        label.strip_prefix(l).is_some_and(|rest| {
            rest.is_empty() || rest.starts_with(" (") && rest.chars().count() <= MAX_NOTE_CHARS
        })
    })
}

/// A numbered entry of a list of notes: "1. …", "2) …", "[3] …", or a note's back-link ("↑ …",
/// "^ …").
fn is_numbered_entry(line: &str) -> bool {
    const MAX_DIGITS: usize = 3;
    let line = line.trim_start();
    if line.starts_with(['↑', '^']) {
        return true;
    }
    let inner = line.strip_prefix('[').unwrap_or(line);
    let digits = inner.chars().take_while(char::is_ascii_digit).count();
    let after = &inner[digits..];
    (1..=MAX_DIGITS).contains(&digits)
        && if inner.len() < line.len() {
            after.starts_with(']')
        } else {
            after.starts_with(". ") || after.starts_with(") ")
        }
}

/// A line that cites a work: it is numbered ([`is_numbered_entry`]), or it has a link, a DOI
/// or a bibliography's words ("Retrieved from", "Accessed", "et al.", "Vol."), or a year in a
/// line cut into short fields as a reference is ("Psychiatric News. Special Report. December
/// 2024."), not into sentences ("… who has run the shop since 2010, told us how he brews.").
fn is_citation(line: &str) -> bool {
    const MARKS: &[&str] = &["doi", "retrieved", "accessed", "journal", "vol", "pp", "al"];
    const MAX_FIELD_WORDS: usize = 8;
    let lower = line.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).collect();
    let is_year =
        |w: &&str| w.len() == 4 && w.parse::<u16>().is_ok_and(|y| (1800..2100).contains(&y));
    let in_fields = || {
        let fields = line.split(". ").filter(|f| !f.trim().is_empty()).count();
        line.split_whitespace().count() <= MAX_FIELD_WORDS * fields
    };
    is_numbered_entry(line)
        || lower.contains("http://")
        || lower.contains("https://")
        || lower.contains("www.")
        || words
            .iter()
            .any(|w| MARKS.contains(w) && (*w != "al" || lower.contains("et al")))
        || words.iter().any(is_year) && in_fields()
}

/// A paragraph of a list of the works cited: every line cites one ([`is_citation`]), or the
/// list is numbered — its first line and at least half of its lines are entries, each perhaps
/// followed by a line describing the work.
fn is_source_list(para: &str) -> bool {
    let lines: Vec<&str> = para.lines().filter(|l| !l.trim().is_empty()).collect();
    let numbered = lines.iter().filter(|l| is_numbered_entry(l)).count();
    !lines.is_empty()
        && (lines.iter().all(|l| is_citation(l))
            || is_numbered_entry(lines[0]) && 2 * numbered >= lines.len())
}

/// Drops the list of works an article cites: a heading naming it ([`is_sources_label`]) below
/// the article's head, and the paragraphs after it that list sources ([`is_source_list`]). A
/// heading over anything else stays ("Sources" over a paragraph about the people asked).
pub(super) fn drop_source_lists(text: String) -> String {
    let paras: Vec<&str> = text.split("\n\n").collect();
    let Some(body) = body_start(&paras) else {
        return text;
    };
    let mut drop = vec![false; paras.len()];
    for i in body + 1..paras.len() {
        if drop[i] || !is_sources_label(paras[i]) {
            continue;
        }
        let end = (i + 1..paras.len())
            .find(|&j| !is_source_list(paras[j]))
            .unwrap_or(paras.len());
        if end > i + 1 {
            drop[i..end].iter_mut().for_each(|d| *d = true);
        }
    }
    if !drop.contains(&true) {
        return text;
    }
    keep_paragraphs(&paras, &drop)
}

/// The paragraphs `paras` that `drop` does not mark, as one text.
fn keep_paragraphs(paras: &[&str], drop: &[bool]) -> String {
    let kept: Vec<&str> = paras
        .iter()
        .zip(drop)
        .filter(|(_, d)| !**d)
        .map(|(p, _)| *p)
        .collect();
    kept.join("\n\n")
}

pub(super) fn is_furniture_line(line: &str) -> bool {
    is_counter_line(line)
        || is_control_line(line)
        || is_member_stat_line(line)
        || is_placeholder_line(line)
        || is_credit_line(line)
        || is_embed_fallback_line(line)
}

/// Drops the lines that are page furniture (counters, control labels, member
/// statistics, placeholders, picture credits, embeds' fallbacks), and paragraphs left empty
/// by that.
pub(super) fn drop_furniture_lines(text: String) -> String {
    if !text.lines().any(is_furniture_line) {
        return text;
    }
    drop_lines(&text, is_furniture_line)
}

/// Drops the lines `drop` picks, asked in the text's order, and the paragraphs left empty.
fn drop_lines(text: &str, mut drop: impl FnMut(&str) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for para in text.split("\n\n") {
        let mut kept = String::new();
        for line in para.split('\n').filter(|l| !drop(l)) {
            if !kept.is_empty() {
                kept.push('\n');
            }
            kept.push_str(line);
        }
        if !kept.trim().is_empty() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&kept);
        }
    }
    out
}

/// Consecutive paragraphs repeated verbatim (carousels and tabs rendered
/// twice, mobile and desktop copies of a block): a run of `RUN` paragraphs
/// seen before, with at least `RUN_MIN_WORDS` words, is dropped. Single
/// repeated lines are kept, as listings repeat them legitimately.
pub(super) fn drop_repeated_runs(text: String) -> String {
    const RUN: usize = 3;
    const RUN_MIN_WORDS: usize = 10;
    let paras: Vec<&str> = text.split("\n\n").collect();
    if paras.len() < 2 * RUN {
        return text;
    }
    let keys: Vec<&str> = paras.iter().map(|p| p.trim()).collect();
    let mut drop = vec![false; paras.len()];
    let mut first: std::collections::HashMap<&[&str], usize> = std::collections::HashMap::new();
    for i in 0..=keys.len() - RUN {
        let run = &keys[i..i + RUN];
        match first.get(run) {
            Some(&j)
                if j + RUN <= i
                    && run
                        .iter()
                        .map(|p| p.split_whitespace().count())
                        .sum::<usize>()
                        >= RUN_MIN_WORDS =>
            {
                drop[i..i + RUN].iter_mut().for_each(|d| *d = true);
            }
            Some(_) => {}
            None => {
                first.insert(run, i);
            }
        }
    }
    if !drop.contains(&true) {
        return text;
    }
    keep_paragraphs(&paras, &drop)
}
