//! The live page of `--dashboard`: the page of [`page`](super::page), laid out the same way
//! (the answer so far first, then the charts), around a fragment the page fetches again from
//! `/live` once a second (`?since=` the render it has) and swaps in when it is a new one. It fetches nothing else, and nothing from outside the
//! machine: relative URLs only. When the command made its final page, `/live` says so
//! (`x-tsumo-final`) and the page loads `/`, which is then that page.

use std::fmt::Write as _;

use super::page::{answer, chart_html, charts_section, document, escape, header, lines_html};
use crate::report::result::PageContent;

/// The part of the live page that changes: the answer so far, the standing of the command
/// (a search's steps), and the charts.
pub fn fragment(
    content: &PageContent,
    label: &str,
    (standing, search_charts): (&[String], Option<&str>),
    subtitle: &str,
) -> String {
    let mut out = header(&content.kind, label);
    // A search's steps so far first: they are its answer so far; the figures are the step's.
    if !standing.is_empty() {
        out.push_str("<section id=\"standing\"><h2>The search so far</h2><ul class=\"lines\">\n");
        for line in standing {
            let _ = writeln!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul></section>\n");
    }
    if let Some(charts) = search_charts {
        out.push_str("<div id=\"search-so-far\">\n");
        out.push_str(charts);
        out.push_str("</div>\n");
    }
    out.push_str(&answer(&content.figures, &lines_html(content)));
    let charts: Vec<String> = content
        .charts
        .iter()
        .map(|c| chart_html(c, subtitle.to_string()))
        .collect();
    out.push_str(&charts_section(&charts));
    out
}

/// A result's charts alone (a capacity search's so far, above its running step).
pub fn charts(content: &PageContent, subtitle: &str) -> String {
    let charts: Vec<String> = content
        .charts
        .iter()
        .map(|c| chart_html(c, subtitle.to_string()))
        .collect();
    charts_section(&charts)
}

/// The fragment while nothing has run yet.
pub fn waiting() -> String {
    header("Waiting", "for the run to start")
}

/// The live page: `fragment` (render `render`) inside, and the script that fetches it again
/// each second.
pub fn document_around(title: &str, fragment: &str, render: u64) -> String {
    let body = format!(
        "<div id=\"live\" data-polls=\"0\" data-render=\"{render}\">\n{fragment}</div>\n\
         <script>{SCRIPT}</script>\n"
    );
    document(title, &body)
}

/// Fetches `/live` each second, saying which render it shows (`since`), and swaps in a new one
/// (a `204` is nothing new); loads `/` once the final page is there.
const SCRIPT: &str = "\
(function(){\
var live=document.getElementById('live');\
var seen=live.getAttribute('data-render');\
function poll(){\
fetch(seen?'live?since='+seen:'live',{cache:'no-store'}).then(function(r){\
if(r.headers.get('x-tsumo-final')==='1'){location.reload();return null;}\
if(r.status===204)return undefined;\
seen=r.headers.get('x-tsumo-render');\
return r.text();}).then(function(html){\
if(html===null)return;\
if(html!==undefined)live.innerHTML=html;\
live.setAttribute('data-polls',String(Number(live.getAttribute('data-polls'))+1));\
setTimeout(poll,1000);\
}).catch(function(){setTimeout(poll,2000);});}\
setTimeout(poll,1000);\
})();";
