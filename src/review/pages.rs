//! The HTML of the review page: the queue of clusters, the pair list, a cluster, a pair with
//! its shared passages, the bulk-rule form, confirmations and the log. Pure functions of what
//! the review module lists: `serve.rs` routes requests to them and guards the server.
//!
//! Every document text and every value from the store is escaped here (pages are hostile
//! input); the only script is [`JS`], served from the server itself.

use crate::review::queue::{Bulk, Cluster, Role};
use crate::review::{self, PairDetail, PairStatus, PairSummary, Passage};
use crate::store::review_log::{EntryKind, LogEntry};
use std::fmt::Write as _;

/// HTML-escapes text for element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub(super) const CSS: &str = r#"
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#24305e;color:#fff;padding:.6em 1em;display:flex;gap:1.5em;align-items:baseline}
header a{color:#fff}
main{padding:1em}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}
tr.pending td:first-child{font-weight:bold}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.doc{background:#fff;border:1px solid #ccc;padding:.8em;overflow-wrap:anywhere}
.doc pre{white-space:pre-wrap;font:inherit;margin:0;max-height:62vh;overflow:auto}
.doc h2{font-size:1.05em;margin:.1em 0 .4em}
.meta{color:#555;font-size:.9em}
mark{background:#ffe48a}
mark a{color:inherit;text-decoration:none}
mark:target{background:#ffb347;outline:2px solid #e08000}
.contained{color:#b00;font-weight:bold}
form.decide{margin:.8em 0;display:flex;gap:.6em;align-items:center;flex-wrap:wrap}
button{font-size:1em;padding:.35em .8em}
kbd{border:1px solid #aaa;border-radius:3px;padding:0 .3em;background:#eee;font-size:.85em}
.decided{background:#e7f5e7;padding:.4em .6em;border:1px solid #9c9}
form.filter{display:flex;gap:.8em;align-items:center;flex-wrap:wrap;margin:.5em 0}
.pager{margin:.4em 0}
.error{background:#fde8e8;border:1px solid #d99;padding:.4em .6em}
#impact{font-size:1.1em}
"#;

pub(super) const JS: &str = r#"
document.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var t = e.target && e.target.tagName;
  if (t === 'INPUT' || t === 'TEXTAREA') return;
  var go = function (id) { var a = document.getElementById(id); if (a) { a.click(); e.preventDefault(); } };
  switch (e.key) {
    case 'j': case 'n': case 'ArrowRight': go('next'); break;
    case 'k': case 'p': case 'ArrowLeft': go('prev'); break;
    case '1': go('d-keep-both'); go('c-keep-all'); break;
    case '2': go('d-drop-contained'); go('c-keep-container'); break;
    case '3': go('d-drop-container'); break;
    case 'y': go('confirm'); break;
    case 'u': go('queue'); break;
  }
});
"#;

/// Decodes an `application/x-www-form-urlencoded` body into pairs.
pub fn parse_form(body: &str) -> Vec<(String, String)> {
    fn decode(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    let hex = |c: u8| (c as char).to_digit(16);
                    match (hex(b[i + 1]), hex(b[i + 2])) {
                        (Some(h), Some(l)) => {
                            out.push((h * 16 + l) as u8);
                            i += 2;
                        }
                        _ => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    body.split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

pub(super) fn page(title: &str, counts: &review::Progress, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <link rel=\"stylesheet\" href=\"/app.css\"><script src=\"/app.js\" defer></script></head>\
         <body><header><strong><a id=\"queue\" href=\"/\">collect review</a></strong>\
         <span id=\"left\">{} pending in {} clusters · {} words at stake</span><span>{} decided</span><span>{} moot</span>\
         <a href=\"/pairs\">pairs</a><a href=\"/rule\">bulk rule</a><a href=\"/log\">log</a></header><main>{}</main></body></html>",
        escape(title),
        counts.pending,
        counts.clusters_pending,
        counts.words_pending,
        counts.decided,
        counts.moot,
        body
    )
}

/// Rows per page of a listing: a queue of 10,000 pairs stays a page a browser draws at once.
const PAGE_ROWS: usize = 50;

/// The queue's filters and page, from a query string.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Filter {
    /// Everything, not only what waits for a decision.
    all: bool,
    /// Only clusters (pairs) with a text from this source.
    source: Option<String>,
    /// Containment bounds (of the cluster's highest, or the pair's).
    min_cont: Option<f64>,
    max_cont: Option<f64>,
    /// 0-based page.
    page: usize,
}

impl Filter {
    pub(super) fn parse(query: &str) -> Filter {
        let mut f = Filter::default();
        for (k, v) in parse_form(query) {
            let v = v.trim();
            match k.as_str() {
                "status" => f.all = v == "all",
                "source" if !v.is_empty() => f.source = Some(v.to_string()),
                "min_cont" => f.min_cont = v.parse().ok(),
                "max_cont" => f.max_cont = v.parse().ok(),
                "page" => f.page = v.parse().unwrap_or(0),
                _ => {}
            }
        }
        f
    }

    fn keeps(&self, pending: bool, cont: f64, sources: &[&str]) -> bool {
        (self.all || pending)
            && self.min_cont.is_none_or(|m| cont >= m)
            && self.max_cont.is_none_or(|m| cont <= m)
            && self.source.as_deref().is_none_or(|s| sources.contains(&s))
    }

    /// The query string of this filter on another page.
    fn query(&self, page: usize) -> String {
        let mut q = format!("?page={page}");
        if self.all {
            q.push_str("&status=all");
        }
        if let Some(s) = &self.source {
            q.push_str(&format!("&source={}", url_encode(s)));
        }
        if let Some(m) = self.min_cont {
            q.push_str(&format!("&min_cont={m}"));
        }
        if let Some(m) = self.max_cont {
            q.push_str(&format!("&max_cont={m}"));
        }
        q
    }

    /// The filter form and the page links around a listing of `total` rows.
    fn controls(&self, path: &str, total: usize) -> String {
        let pages = total.div_ceil(PAGE_ROWS).max(1);
        let link = |p: usize, id: &str, label: &str| {
            if p < pages && (p != self.page) {
                format!(
                    "<a id=\"{id}\" href=\"{path}{}\">{label}</a>",
                    escape(&self.query(p))
                )
            } else {
                format!("<span class=\"meta\">{label}</span>")
            }
        };
        format!(
            "<form class=\"filter\" method=\"get\" action=\"{path}\">\
             <label>source <input name=\"source\" size=\"14\" value=\"{src}\"></label>\
             <label>containment from <input name=\"min_cont\" size=\"4\" value=\"{min}\"></label>\
             <label>to <input name=\"max_cont\" size=\"4\" value=\"{max}\"></label>\
             <label><input type=\"checkbox\" name=\"status\" value=\"all\"{all}> decided and moot too</label>\
             <button>filter</button></form>\
             <p class=\"pager\">{prev} · page {page} of {pages} ({total} rows) · {next}</p>",
            src = escape(self.source.as_deref().unwrap_or("")),
            min = self.min_cont.map(|m| m.to_string()).unwrap_or_default(),
            max = self.max_cont.map(|m| m.to_string()).unwrap_or_default(),
            all = if self.all { " checked" } else { "" },
            prev = link(self.page.wrapping_sub(1), "page-prev", "← previous page"),
            next = link(self.page + 1, "page-next", "next page →"),
            page = self.page.min(pages - 1) + 1,
        )
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub(super) fn status_name(s: PairStatus) -> &'static str {
    match s {
        PairStatus::Pending => "pending",
        PairStatus::Decided => "decided",
        PairStatus::Moot => "moot",
    }
}

fn fmt_score(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "–".into())
}

fn short_title(t: &Option<String>, id: &str) -> String {
    match t {
        Some(t) if !t.trim().is_empty() => {
            let s: String = t.chars().take(80).collect();
            escape(&s)
        }
        _ => escape(id),
    }
}

pub(super) fn queue_page(
    clusters: &[Cluster],
    filter: &Filter,
    counts: &review::Progress,
) -> String {
    let shown: Vec<&Cluster> = clusters
        .iter()
        .filter(|c| {
            let sources: Vec<&str> = c.members.iter().map(|m| m.source.as_str()).collect();
            filter.keeps(c.status == PairStatus::Pending, c.max_cont, &sources)
        })
        .collect();
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>Clusters of contained texts</h1><p>Most words at stake first. Open a cluster to keep its \
         containers and drop the rest, or keep all, in one decision; or decide its pairs one by one. \
         Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>1</kbd> keep all, <kbd>2</kbd> keep container, \
         <kbd>u</kbd> this list.</p>{}",
        filter.controls("/", shown.len())
    );
    b.push_str("<table id=\"clusters\"><thead><tr><th>cluster</th><th>status</th><th>pairs waiting</th><th>texts</th>\
                <th>words at stake</th><th>highest containment</th><th>container</th></tr></thead><tbody>");
    for c in shown.iter().skip(filter.page * PAGE_ROWS).take(PAGE_ROWS) {
        let top = &c.members[0];
        let st = status_name(c.status);
        let _ = write!(
            b,
            "<tr class=\"{st}\"><td><a href=\"/cluster/{id}\">#{id}</a></td><td>{st}</td><td>{w} of {n}</td><td>{t}</td>\
             <td>{stake}</td><td>{mc:.3}</td><td>{title}<div class=\"meta\">{src} · {words} words</div></td></tr>",
            id = c.id,
            w = c.pending.len(),
            n = c.pairs.len(),
            t = c.members.len(),
            stake = c.words_at_stake,
            mc = c.max_cont,
            title = short_title(&top.title, &top.id),
            src = escape(&top.source),
            words = top.words,
        );
    }
    b.push_str("</tbody></table>");
    page("collect review", counts, &b)
}

pub(super) fn pairs_page(
    list: &[PairSummary],
    filter: &Filter,
    counts: &review::Progress,
) -> String {
    let mut shown: Vec<&PairSummary> = list
        .iter()
        .filter(|p| {
            filter.keeps(
                p.status == PairStatus::Pending,
                p.containment(),
                &[p.source_a.as_str(), p.source_b.as_str()],
            )
        })
        .collect();
    shown.sort_by_key(|p| (p.status != PairStatus::Pending, p.id));
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>Contained pairs</h1><p>{} pairs: {} pending, {} decided, {} moot (one text already out of the collection). \
         Open a pair; keys: <kbd>1</kbd> keep both, <kbd>2</kbd> drop contained, <kbd>3</kbd> drop container, \
         <kbd>j</kbd>/<kbd>k</kbd> next/previous, <kbd>u</kbd> the queue.</p>{}",
        counts.pairs,
        counts.pending,
        counts.decided,
        counts.moot,
        filter.controls("/pairs", shown.len())
    );
    b.push_str("<table><thead><tr><th>pair</th><th>status</th><th>a</th><th>b</th><th>resemblance</th><th>cont(a in b)</th><th>cont(b in a)</th><th>shared shingles</th><th>decision</th></tr></thead><tbody>");
    for p in shown.iter().skip(filter.page * PAGE_ROWS).take(PAGE_ROWS) {
        let st = status_name(p.status);
        let _ = write!(
            b,
            "<tr class=\"{st}\"><td><a href=\"/pair/{id}\">#{id}</a></td><td>{st}</td><td>{ta}<div class=\"meta\">{sa}</div></td>\
             <td>{tb}<div class=\"meta\">{sb}</div></td><td>{r:.3}</td><td>{ca}</td><td>{cb}</td><td>{sh}</td><td>{d}</td></tr>",
            id = p.id,
            ta = short_title(&p.title_a, &p.a),
            tb = short_title(&p.title_b, &p.b),
            sa = escape(&p.source_a),
            sb = escape(&p.source_b),
            r = p.resemblance,
            ca = fmt_score(p.cont_a_in_b),
            cb = fmt_score(p.cont_b_in_a),
            sh = p.shared,
            d = escape(p.decision.as_deref().unwrap_or("")),
        );
    }
    b.push_str("</tbody></table>");
    page("collect review: pairs", counts, &b)
}

pub(super) fn cluster_page(
    c: &Cluster,
    pairs: &[&PairSummary],
    prev: Option<i64>,
    next: Option<i64>,
    token: &str,
    counts: &review::Progress,
) -> String {
    let nav = |id: Option<i64>, name: &str, label: &str| match id {
        Some(i) => format!("<a id=\"{name}\" href=\"/cluster/{i}\">{label}</a>"),
        None => format!("<span class=\"meta\">{label}</span>"),
    };
    let mut b = String::new();
    let _ = write!(
        b,
        "<p>{} · <strong>cluster #{}</strong> ({}) · {} · <a href=\"/\">queue</a></p>\
         <p class=\"meta\">{} pairs, {} waiting · {} texts · {} words at stake · highest containment {:.3}</p>",
        nav(prev, "prev", "← previous (k)"),
        c.id,
        status_name(c.status),
        nav(next, "next", "next (j) →"),
        c.pairs.len(),
        c.pending.len(),
        c.members.len(),
        c.words_at_stake,
        c.max_cont
    );
    if !c.pending.is_empty() {
        let _ = write!(
            b,
            "<form class=\"decide\" method=\"post\" action=\"/cluster/{id}/decide\">\
             <input type=\"hidden\" name=\"token\" value=\"{token}\">\
             <button id=\"c-keep-all\" name=\"decision\" value=\"keep-both\"><kbd>1</kbd> keep all</button>\
             <button id=\"c-keep-container\" name=\"decision\" value=\"drop-contained\"><kbd>2</kbd> keep container, drop the rest</button>\
             <label>note <input name=\"note\" size=\"40\"></label>\
             <span class=\"meta\">applies to the {n} waiting pairs; you confirm on the next page</span></form>",
            id = c.id,
            token = escape(token),
            n = c.pending.len(),
        );
    }
    b.push_str("<h2>Texts</h2><table id=\"members\"><thead><tr><th>role</th><th>text</th><th>words</th><th>highest containment</th><th>source</th></tr></thead><tbody>");
    for m in c.members.iter().take(CLUSTER_ROWS) {
        let role = match m.role {
            Role::Container => "container",
            Role::Contained => "contained",
            Role::Both => "contained, contains",
        };
        let _ = write!(
            b,
            "<tr><td>{role}</td><td>{t}<div class=\"meta\">{id}</div></td><td>{w}</td><td>{c}</td><td>{s}</td></tr>",
            t = short_title(&m.title, &m.id),
            id = escape(&m.id),
            w = m.words,
            c = fmt_score(m.cont),
            s = escape(&m.source),
        );
    }
    b.push_str("</tbody></table>");
    more(&mut b, c.members.len(), "texts", c.id);
    b.push_str("<h2>Pairs</h2><table><thead><tr><th>pair</th><th>status</th><th>contained</th><th>container</th><th>containment</th><th>shared shingles</th><th>decision</th></tr></thead><tbody>");
    let mut pairs = pairs.to_vec();
    pairs.sort_by_key(|p| (p.status != PairStatus::Pending, p.id));
    for p in pairs.iter().take(CLUSTER_ROWS) {
        let st = status_name(p.status);
        let _ = write!(
            b,
            "<tr class=\"{st}\"><td><a href=\"/pair/{id}\">#{id}</a></td><td>{st}</td><td>{a}</td><td>{b}</td><td>{c:.3}</td><td>{sh}</td><td>{d}</td></tr>",
            id = p.id,
            a = escape(&p.contained),
            b = escape(p.container()),
            c = p.containment(),
            sh = p.shared,
            d = escape(p.decision.as_deref().unwrap_or("")),
        );
    }
    b.push_str("</tbody></table>");
    more(&mut b, pairs.len(), "pairs", c.id);
    page(&format!("cluster #{}", c.id), counts, &b)
}

/// Rows of each table of a cluster page: a cluster of thousands of year stubs is decided as a
/// whole, and its first rows show what it is.
const CLUSTER_ROWS: usize = 100;

fn more(b: &mut String, total: usize, what: &str, cluster: i64) {
    if total > CLUSTER_ROWS {
        let _ = write!(
            b,
            "<p class=\"meta\">… and {} more {what}: <code>collect review cluster {cluster}</code> lists them all.</p>",
            total - CLUSTER_ROWS
        );
    }
}

/// What a bulk decision would change, with the button that takes it: no bulk decision is
/// taken from a page without the curator seeing its size first.
pub(super) fn confirm_page(
    bulk: &Bulk,
    action: &str,
    fields: &[(&str, &str)],
    token: &str,
    counts: &review::Progress,
) -> String {
    let mut hidden = String::new();
    for (k, v) in fields {
        let _ = write!(
            hidden,
            "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
            escape(k),
            escape(v)
        );
    }
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>Confirm: {decision} on {target}</h1>\
         <p id=\"impact\"><strong>{n}</strong> waiting pairs get <strong>{decision}</strong>; \
         <strong>{d}</strong> texts leave the collection ({w} words). One entry of the log, undone as one.</p>\
         <form class=\"decide\" method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <input type=\"hidden\" name=\"confirm\" value=\"yes\">{hidden}\
         <button id=\"confirm\">confirm</button> <a href=\"/\">cancel</a></form>",
        decision = escape(bulk.decision.as_str()),
        target = escape(&bulk.target),
        n = bulk.pairs.len(),
        d = bulk.drops.len(),
        w = bulk.words_dropped,
        token = escape(token),
    );
    if !bulk.drops.is_empty() {
        b.push_str("<h2>Texts that leave</h2><ul>");
        for d in bulk.drops.iter().take(PAGE_ROWS) {
            let _ = write!(b, "<li>{}</li>", escape(d));
        }
        if bulk.drops.len() > PAGE_ROWS {
            let _ = write!(b, "<li>… and {} more</li>", bulk.drops.len() - PAGE_ROWS);
        }
        b.push_str("</ul>");
    }
    page("confirm", counts, &b)
}

pub(super) fn rule_page(token: &str, error: Option<&str>, counts: &review::Progress) -> String {
    let mut b = String::new();
    b.push_str("<h1>Bulk decision by rule</h1>");
    if let Some(e) = error {
        let _ = write!(b, "<p class=\"error\" id=\"rule-error\">{}</p>", escape(e));
    }
    let _ = write!(
        b,
        "<p>Decide every waiting pair a rule picks. Fields: <code>{fields}</code>; compare with \
         <code>&lt; &lt;= &gt; &gt;= == !=</code>, join with <code>and</code>, <code>or</code>, <code>not</code>, \
         parentheses. Example: <code>cont &gt;= 0.9 and words &lt; 300</code>. You see what it changes before it is taken.</p>\
         <form class=\"decide\" method=\"post\" action=\"/rule\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <label>where <input id=\"where\" name=\"where\" size=\"50\"></label>\
         <select id=\"decision\" name=\"decision\"><option value=\"keep-both\">keep both</option>\
         <option value=\"drop-contained\">drop contained</option><option value=\"drop-container\">drop container</option></select>\
         <label>note <input name=\"note\" size=\"30\"></label><button id=\"preview\">preview</button></form>",
        fields = escape(crate::rule::FIELDS),
        token = escape(token),
    );
    page("bulk rule", counts, &b)
}

pub(super) fn log_page(log: &[LogEntry], token: &str, counts: &review::Progress) -> String {
    let mut b = String::from(
        "<h1>Review log</h1><p>Every decision, newest first; undo takes one back as a whole.</p>\
         <table id=\"log\"><thead><tr><th>entry</th><th>kind</th><th>on</th><th>decision</th><th>pairs</th><th>note</th><th></th></tr></thead><tbody>",
    );
    for e in log.iter().rev() {
        let undo = match (e.undone_by, e.kind) {
            (Some(by), _) => format!("undone by #{by}"),
            (None, EntryKind::Undo) => String::new(),
            (None, _) => format!(
                "<form method=\"post\" action=\"/log/{id}/undo\"><input type=\"hidden\" name=\"token\" value=\"{t}\">\
                 <button class=\"undo\" id=\"undo-{id}\">undo</button></form>",
                id = e.id,
                t = escape(token)
            ),
        };
        let _ = write!(
            b,
            "<tr><td>#{id}</td><td>{k}</td><td>{t}</td><td>{d}</td><td>{n}</td><td>{note}</td><td>{undo}</td></tr>",
            id = e.id,
            k = e.kind.as_str(),
            t = escape(&e.target),
            d = escape(e.decision.as_deref().unwrap_or("")),
            n = e.pairs,
            note = escape(e.note.as_deref().unwrap_or("")),
        );
    }
    b.push_str("</tbody></table>");
    page("review log", counts, &b)
}

fn marked_html(text: &str, passages: &[Passage], me: &str, other: &str) -> String {
    let mut out = String::with_capacity(text.len() * 11 / 10);
    let mut at = 0;
    for (k, p) in passages.iter().enumerate() {
        out.push_str(&escape(&text[at..p.start]));
        let href = p
            .other
            .map(|o| format!(" href=\"#{other}{o}\""))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<mark id=\"{me}{k}\"><a{href}>{}</a></mark>",
            escape(&text[p.start..p.end])
        );
        at = p.end;
    }
    out.push_str(&escape(&text[at..]));
    out
}

fn side_html(d: &PairDetail, is_a: bool) -> String {
    let s = &d.summary;
    let (id, title, url, source, text, passages, me, other, cont) = if is_a {
        (
            &s.a,
            &s.title_a,
            &s.url_a,
            &s.source_a,
            &d.text_a,
            &d.passages_a,
            "a",
            "b",
            s.cont_a_in_b,
        )
    } else {
        (
            &s.b,
            &s.title_b,
            &s.url_b,
            &s.source_b,
            &d.text_b,
            &d.passages_b,
            "b",
            "a",
            s.cont_b_in_a,
        )
    };
    let contained = if &s.contained == id {
        " <span class=\"contained\">contained</span>"
    } else {
        ""
    };
    let link = match url {
        Some(u) if u.starts_with("http://") || u.starts_with("https://") => format!(
            "<a href=\"{}\" rel=\"noopener noreferrer nofollow\" target=\"_blank\">{}</a>",
            escape(u),
            escape(u)
        ),
        Some(u) => escape(u),
        None => "no URL".into(),
    };
    format!(
        "<section class=\"doc\" id=\"doc-{me}\"><h2>{me}: {t}{contained}</h2><div class=\"meta\">id {id} · source {src} · {link} · \
         containment in the other {c} · {n} shared passages</div><hr><pre>{body}</pre></section>",
        t = short_title(title, id),
        id = escape(id),
        src = escape(source),
        c = fmt_score(cont),
        n = passages.len(),
        body = marked_html(text, passages, me, other)
    )
}

pub(super) fn pair_page(
    d: &PairDetail,
    prev: Option<i64>,
    next: Option<i64>,
    token: &str,
    counts: &review::Progress,
) -> String {
    let s = &d.summary;
    let mut b = String::new();
    let nav = |id: Option<i64>, name: &str, label: &str| match id {
        Some(i) => format!("<a id=\"{name}\" href=\"/pair/{i}\">{label}</a>"),
        None => format!("<span class=\"meta\">{label}</span>"),
    };
    let _ = write!(
        b,
        "<p>{} · <strong>pair #{}</strong> ({}) · {} · <a href=\"/\">queue</a></p>",
        nav(prev, "prev", "← previous (k)"),
        s.id,
        status_name(s.status),
        nav(next, "next", "next (j) →"),
    );
    let _ = write!(
        b,
        "<p class=\"meta\">resemblance {:.3} · cont(a in b) {} · cont(b in a) {} · {}</p>",
        s.resemblance,
        fmt_score(s.cont_a_in_b),
        fmt_score(s.cont_b_in_a),
        if s.verified {
            "scores on the full shingle index"
        } else {
            "scores on the signatures"
        }
    );
    if let Some(dec) = &s.decision {
        let _ = write!(
            b,
            "<p class=\"decided\" id=\"decision\">Decided: <strong>{}</strong>{}</p>",
            escape(dec),
            s.note
                .as_deref()
                .map(|n| format!(" — {}", escape(n)))
                .unwrap_or_default()
        );
    }
    let _ = write!(
        b,
        "<form class=\"decide\" method=\"post\" action=\"/pair/{id}/decide\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <button id=\"d-keep-both\" name=\"decision\" value=\"keep-both\"><kbd>1</kbd> keep both</button>\
         <button id=\"d-drop-contained\" name=\"decision\" value=\"drop-contained\"><kbd>2</kbd> drop contained</button>\
         <button id=\"d-drop-container\" name=\"decision\" value=\"drop-container\"><kbd>3</kbd> drop container</button>\
         <label>note <input name=\"note\" size=\"40\" value=\"{note}\"></label></form>",
        id = s.id,
        token = escape(token),
        note = escape(s.note.as_deref().unwrap_or("")),
    );
    let _ = write!(
        b,
        "<div class=\"cols\">{}{}</div>",
        side_html(d, true),
        side_html(d, false)
    );
    page(&format!("pair #{}", s.id), counts, &b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::queue;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn filters_round_trip_through_the_query_and_pick_rows() {
        let f = Filter::parse("source=wiki+ru&min_cont=0.8&status=all&page=2");
        assert_eq!(f.source.as_deref(), Some("wiki ru"));
        assert!(f.all && f.page == 2 && f.min_cont == Some(0.8));
        assert_eq!(Filter::parse(&f.query(2)[1..]), f);
        assert!(f.keeps(false, 0.9, &["wiki ru"]));
        assert!(!f.keeps(true, 0.7, &["wiki ru"]));
        assert!(!f.keeps(true, 0.9, &["web"]));
        assert!(!Filter::default().keeps(false, 1.0, &[]));
    }

    #[test]
    fn a_long_queue_is_paged() {
        let pairs: Vec<PairSummary> = (0..120)
            .map(|i| {
                crate::review::queue::tests::pair(
                    i,
                    &format!("x{i}"),
                    &format!("y{i}"),
                    0.9,
                    10 + i as u64,
                )
            })
            .collect();
        let clusters = queue::clusters(&pairs);
        let counts = review::tally(&pairs, &clusters);
        let first = queue_page(&clusters, &Filter::default(), &counts);
        assert_eq!(first.matches("<tr class=\"pending\">").count(), PAGE_ROWS);
        assert!(first.contains("page 1 of 3 (120 rows)"), "{first}");
        // Most words at stake first: the last pair's cluster heads page 1.
        assert!(first.contains("href=\"/cluster/119\""));
        let last = queue_page(&clusters, &Filter::parse("page=2"), &counts);
        assert_eq!(last.matches("<tr class=\"pending\">").count(), 20);
        assert!(last.contains("href=\"/cluster/0\""));
        assert!(first.contains("120 pending in 120 clusters"));
    }

    #[test]
    fn parses_forms() {
        let f = parse_form("token=ab12&decision=drop-contained&note=a+b%20c%C3%A9%2");
        assert_eq!(f[1], ("decision".into(), "drop-contained".into()));
        assert_eq!(f[2].1, "a b cé%2");
    }

    #[test]
    fn passages_are_escaped_inside_marks() {
        let html = marked_html(
            "x <b>y</b> z",
            &[Passage {
                start: 2,
                end: 10,
                other: Some(0),
            }],
            "a",
            "b",
        );
        assert_eq!(
            html,
            "x <mark id=\"a0\"><a href=\"#b0\">&lt;b&gt;y&lt;/b&gt;</a></mark> z"
        );
    }
}
