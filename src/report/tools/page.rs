//! The page of a result (`--html FILE`, `tsumo report FILE.json… -o OUT.html`): one
//! self-contained HTML file — inline CSS, the charts as inline SVG from [`chart`], no script,
//! no font, nothing fetched — that shows the answer first (the figures and lines of
//! [`SavedResult::page`], then the command, target, plan, version, run id and shards), then
//! the charts. A comparison overlays its runs beside the compare table; a merged run's charts
//! add one line per shard.
//!
//! Every result is asked through [`SavedResult`]; the figures carry `data-figure` and
//! `data-value` (the JSON's number) and each chart sits in a `figure.chart` with its
//! `data-chart` id, so a browser test can check both.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::report::chart::{self, Series, Titles};
use crate::report::result::{Figure, PageChart, PageContent, SavedResult};
use crate::report::tools::compare::{self, LoadedRun};
use crate::report::tools::merge;
use crate::report::tools::shards;

/// Options of `tsumo report FILE… -o OUT.html`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    pub files: Vec<PathBuf>,
    /// `-o`: `-` is stdout (with `--markdown` only, its default).
    pub output: PathBuf,
    /// `--markdown`: the Markdown summary (`markdown::run`) instead of the page.
    pub markdown: bool,
}

/// `tsumo report`: one run's page, a comparison's, a capacity search's, or (the shards of one
/// run) the merged run's with per-shard lines.
pub fn run(options: &ReportOptions) -> Result<(), Error> {
    let runs = compare::load_all(&options.files)?;
    let html = render_files(&runs)?;
    write(&html, &options.output, "-o")
}

/// The page of the runs of a command line: see [`run`].
pub fn render_files(runs: &[LoadedRun]) -> Result<String, Error> {
    // A run beside itself is no comparison (and no merge).
    crate::report::tools::saved::refuse_duplicates(runs, "report")?;
    match runs {
        [] => Err(Error::Usage("nothing to report: no runs given".to_string())),
        [one] => Ok(render_one(one)),
        _ if are_shards_of_one_run(runs) => {
            let merged = merge::merge(runs, None, false)?;
            Ok(render_merged(&merged.run, runs))
        }
        _ => render_comparison(runs),
    }
}

/// Writes the page; `flag` names the option in the error.
pub fn write(html: &str, path: &Path, flag: &str) -> Result<(), Error> {
    crate::sys::output::write_whole(path, html.as_bytes()).map_err(|e| Error::Write {
        path: format!("{flag} {}", path.display()),
        reason: e.to_string(),
    })
}

/// Every run a shard of one run id, each shard once.
fn are_shards_of_one_run(runs: &[LoadedRun]) -> bool {
    if shards::common_run_id(runs).is_none() {
        return false;
    }
    let mut seen = Vec::new();
    for run in runs {
        match run.result().part().shard {
            Some(s) if s.count > 1 && !seen.contains(&s.index) => seen.push(s.index),
            _ => return false,
        }
    }
    true
}

/// One result's page.
pub fn render_one(run: &LoadedRun) -> String {
    let result = run.result();
    let content = result.page();
    let mut body = header(&content.kind, &run.label);
    body.push_str(&answer(&content.figures, &lines_html(&content)));
    body.push_str(&facts(&content.facts, result));
    let charts: Vec<String> = content
        .charts
        .iter()
        .map(|c| chart_html(c, result.load()))
        .collect();
    body.push_str(&charts_section(&charts));
    document(&format!("{} — {}", content.kind, run.label), &body)
}

/// A merged run's page: the merged result's, each over-time chart with one more line per
/// shard (its key series), and the shards' lines.
pub fn render_merged(merged: &LoadedRun, parts: &[LoadedRun]) -> String {
    let result = merged.result();
    let content = result.page();
    let mut order: Vec<&LoadedRun> = parts.iter().collect();
    order.sort_by_key(|r| r.result().part().shard.map_or(0, |s| s.index));
    let part_pages: Vec<(String, PageContent)> = order
        .iter()
        .map(|r| (shard_name(r), r.result().page()))
        .collect();
    // "(merged)" once: not again after a label that says it already ("merged (2 runs)").
    let kind = match merged.label.to_lowercase().contains("merged") {
        true => content.kind.clone(),
        false => format!("{} (merged)", content.kind),
    };
    let mut body = header(&kind, &merged.label);
    body.push_str(&answer(&content.figures, &lines_html(&content)));
    body.push_str(&facts(&content.facts, result));
    body.push_str("<section id=\"shards\"><h2>Shards</h2><ul class=\"shard-lines\">\n");
    for line in shards::lines(parts) {
        let _ = writeln!(body, "<li><code>{}</code></li>", escape(line.trim()));
    }
    body.push_str("</ul></section>\n");
    let mut charts = Vec::new();
    for chart in &content.charts {
        let with_shards = match chart {
            PageChart::OverTime {
                id,
                title,
                series,
                per_shard: Some(key),
                ..
            } => {
                let mut all = series.clone();
                for (k, (name, page)) in part_pages.iter().enumerate() {
                    if let Some(s) = page_series(page, id).and_then(|s| s.get(*key)) {
                        let mut line = s.clone();
                        line.name = format!("{name} {}", s.name);
                        all.push(line.coloured(series.len() + k, 0));
                    }
                }
                chart.drawing(format!("{title}, and per shard"), all)
            }
            other => other.clone(),
        };
        charts.push(chart_html(&with_shards, result.load()));
    }
    body.push_str(&charts_section(&charts));
    document(&format!("{kind} — {}", merged.label), &body)
}

/// A comparison's page: each run's figures, one row each; the compare table; the charts with
/// every run overlaid (the key series of each over-time chart, one colour per label).
pub fn render_comparison(runs: &[LoadedRun]) -> Result<String, Error> {
    compare::check_same_mode(runs, "report")?;
    let table = compare::render(runs)?;
    let names = run_names(runs);
    let pages: Vec<PageContent> = runs.iter().map(|r| r.result().page()).collect();
    let mut labels: Vec<&str> = Vec::new();
    for run in runs {
        if !labels.contains(&run.label.as_str()) {
            labels.push(&run.label);
        }
    }
    let kind = pages.first().map_or(String::new(), |p| p.kind.clone());
    let mut body = header(&format!("{kind} comparison"), &labels.join(" vs "));
    if let Some(sentence) = compare::verdict_of(runs) {
        let _ = writeln!(
            body,
            "<p class=\"verdict\" id=\"verdict\">{}</p>",
            escape(&sentence)
        );
    }
    body.push_str(&comparison_answer(runs, &names, &pages));
    body.push_str("<section id=\"compare\"><h2>Compare table</h2>\n<pre class=\"table\">");
    body.push_str(&escape(&table));
    body.push_str("</pre></section>\n");
    let Some(first) = pages.first() else {
        return Ok(document("comparison", &body));
    };
    let charts = overlaid_charts(runs, &names, (first, &pages), &labels);
    body.push_str(&charts_section(&charts));
    Ok(document(&format!("{kind} comparison"), &body))
}

/// The first run's charts with every run's overlaid (the key series of each over-time chart,
/// one colour per label and a shade per round); capacity curves side by side on one scale.
fn overlaid_charts(
    runs: &[LoadedRun],
    names: &[String],
    (first, pages): (&PageContent, &[PageContent]),
    labels: &[&str],
) -> Vec<String> {
    let colour_of = |run: &LoadedRun| labels.iter().position(|l| *l == run.label).unwrap_or(0);
    let shade_of = |i: usize| {
        runs[..i]
            .iter()
            .filter(|r| r.label == runs[i].label)
            .count()
    };
    let subtitle = runs[0].result().load();
    let mut charts = Vec::new();
    for chart in &first.charts {
        let id = chart.id();
        let overlay = |keep: &dyn Fn(&PageChart) -> Vec<Series>| -> Vec<Series> {
            let mut all = Vec::new();
            for (i, page) in pages.iter().enumerate() {
                let Some(own) = page.charts.iter().find(|c| c.id() == id) else {
                    continue;
                };
                for (k, s) in keep(own).into_iter().enumerate() {
                    let mut line = s.clone();
                    line.name = format!("{} {}", names[i], s.name);
                    all.push(line.coloured(colour_of(&runs[i]) + k * labels.len(), shade_of(i)));
                }
            }
            all
        };
        match chart {
            PageChart::Percentile { title, y_what, .. } => {
                let curves = overlay(&|c| match c {
                    PageChart::Percentile { curves, .. } => curves.clone(),
                    _ => Vec::new(),
                });
                charts.push(chart_html(
                    &PageChart::Percentile {
                        id,
                        title: title.clone(),
                        y_what: y_what.clone(),
                        curves,
                    },
                    subtitle.clone(),
                ));
            }
            PageChart::OverTime { title, .. } => {
                let series = overlay(&|c| match c {
                    PageChart::OverTime {
                        series,
                        per_shard: Some(key),
                        ..
                    } => series.get(*key).cloned().into_iter().collect(),
                    PageChart::OverTime { series, .. } => series.clone(),
                    _ => Vec::new(),
                });
                charts.push(chart_html(
                    &chart.drawing(title.clone(), series),
                    subtitle.clone(),
                ));
            }
            // One curve a chart: each run's own, side by side on one scale.
            PageChart::Capacity { .. } => {
                let of_id = || {
                    pages
                        .iter()
                        .flat_map(|p| p.charts.iter().filter(|c| c.id() == id))
                };
                let beside: Vec<(f64, f64)> = of_id().flat_map(PageChart::plotted_points).collect();
                for (i, page) in pages.iter().enumerate() {
                    for own in page.charts.iter().filter(|c| c.id() == id) {
                        charts.push(chart_beside(own, names[i].clone(), &beside));
                    }
                }
            }
        }
    }
    charts
}

/// Each run's name on a comparison's page: its label, with its round when a label has several.
fn run_names(runs: &[LoadedRun]) -> Vec<String> {
    runs.iter()
        .enumerate()
        .map(|(i, run)| {
            let same = runs.iter().filter(|r| r.label == run.label).count();
            if same > 1 {
                let round = runs[..i].iter().filter(|r| r.label == run.label).count() + 1;
                format!("{} #{round}", run.label)
            } else {
                run.label.clone()
            }
        })
        .collect()
}

/// `shard 2/3`.
fn shard_name(run: &LoadedRun) -> String {
    match run.result().part().shard {
        Some(s) => format!("shard {}/{}", s.index, s.count),
        None => run.source.clone(),
    }
}

/// The series of a page's over-time chart `id`.
fn page_series<'a>(page: &'a PageContent, id: &str) -> Option<&'a Vec<Series>> {
    page.charts.iter().find_map(|c| match c {
        PageChart::OverTime {
            id: own, series, ..
        } if *own == id => Some(series),
        _ => None,
    })
}

pub(super) fn header(kind: &str, label: &str) -> String {
    format!(
        "<header><h1>{} <span class=\"label\">{}</span></h1></header>\n",
        escape(kind),
        escape(label)
    )
}

/// The figures in a row, then the lines (a rate not reached, a failure or a broken objective
/// stands out).
pub(super) fn answer(figures: &[Figure], lines: &str) -> String {
    let mut out = String::from("<section id=\"answer\">\n<div class=\"figures\">\n");
    for f in figures {
        out.push_str(&figure_html(f, None));
    }
    out.push_str("</div>\n");
    out.push_str(lines);
    out.push_str("</section>\n");
    out
}

fn figure_html(f: &Figure, run: Option<usize>) -> String {
    let value = f
        .value
        .map_or(String::new(), |v| format!(" data-value=\"{v}\""));
    let run = run.map_or(String::new(), |i| format!(" data-run=\"{i}\""));
    format!(
        "<div class=\"figure\" data-figure=\"{}\"{run}{value}><div class=\"name\">{}</div>\
         <div class=\"value\">{}</div></div>\n",
        f.id,
        escape(&f.name),
        escape(&f.shown)
    )
}

/// A page's lines; a line that says a rate not reached, a failure, a broken objective or a
/// cut is a warning, unless the page calls it calm.
pub(super) fn lines_html(page: &PageContent) -> String {
    if page.lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("<ul class=\"lines\">\n");
    for line in &page.lines {
        let warn = ["not reached", "Failed", "BROKE", "Cut short", "Broke first"]
            .iter()
            .any(|w| line.contains(w))
            && !page.calm.contains(line);
        let class = if warn { " class=\"warn\"" } else { "" };
        let _ = writeln!(out, "<li{class}>{}</li>", escape(line));
    }
    out.push_str("</ul>\n");
    out
}

/// A comparison's answer: one row of figures per run, the run's lines under it.
fn comparison_answer(runs: &[LoadedRun], names: &[String], pages: &[PageContent]) -> String {
    let mut out = String::from("<section id=\"answer\">\n<table class=\"runs\">\n");
    if let Some(first) = pages.first() {
        out.push_str("<tr><th>run</th>");
        for f in &first.figures {
            let _ = write!(out, "<th>{}</th>", escape(&f.name));
        }
        out.push_str("</tr>\n");
    }
    let shown = compare::figures_in_one_unit(pages);
    for (i, (page, name)) in pages.iter().zip(names).enumerate() {
        let left_out = runs[i].left_out.as_ref().map_or(String::new(), |r| {
            format!(" <em>(left out: {})</em>", escape(r))
        });
        let _ = write!(out, "<tr><th>{}{left_out}</th>", escape(name));
        for (j, f) in page.figures.iter().enumerate() {
            let value = f
                .value
                .map_or(String::new(), |v| format!(" data-value=\"{v}\""));
            let _ = write!(
                out,
                "<td data-run=\"{i}\" data-figure=\"{}\"{value}>{}</td>",
                f.id,
                escape(&shown[i][j])
            );
        }
        out.push_str("</tr>\n");
        if !page.lines.is_empty() {
            let _ = writeln!(
                out,
                "<tr class=\"run-lines\"><td></td><td colspan=\"{}\">{}</td></tr>",
                page.figures.len(),
                lines_html(page)
            );
        }
    }
    out.push_str("</table>\n</section>\n");
    out
}

/// The command (as typed, when saved), target, plan, version (the result's), then the run id,
/// shard and sources.
fn facts(own: &[(String, String)], result: &dyn SavedResult) -> String {
    let part = result.part();
    let mut rows: Vec<(String, String)> = own.to_vec();
    // The command line as typed, when the file saved it: a line rebuilt from the plan would
    // leave out what the plan does not keep (-s, -H, the search's options).
    if let Some(line) = part.command_line() {
        rows.retain(|(what, _)| what != "Command");
        rows.insert(0, ("Command".to_string(), line));
    }
    if let Some(id) = &part.run_id {
        rows.push(("Run id".to_string(), id.clone()));
    }
    match (&part.shard, part.merged_from.is_empty()) {
        (_, false) => rows.push((
            "Shards".to_string(),
            format!(
                "merged from {}: {}",
                part.merged_from.len(),
                part.merged_from.join(", ")
            ),
        )),
        (Some(s), true) => rows.push(("Shard".to_string(), format!("{}/{}", s.index, s.count))),
        (None, true) => {}
    }
    let mut out = String::from("<section id=\"facts\"><table class=\"facts\">\n");
    for (what, value) in rows {
        let value = if what == "Command" {
            format!("<code>{}</code>", escape(&value))
        } else {
            escape(&value)
        };
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td data-fact=\"{}\">{value}</td></tr>",
            escape(&what),
            escape(&what.to_lowercase().replace(' ', "-"))
        );
    }
    out.push_str("</table></section>\n");
    out
}

/// A chart in its container; a chart that cannot be drawn says why in its place.
pub(super) fn chart_html(chart: &PageChart, subtitle: String) -> String {
    chart_beside(chart, subtitle, &[])
}

/// [`chart_html`] of a chart drawn beside others: a capacity chart's axes hold `beside` too,
/// so side-by-side searches share one scale.
fn chart_beside(chart: &PageChart, subtitle: String, beside: &[(f64, f64)]) -> String {
    let titles = |title: &str| Titles {
        title: title.to_string(),
        subtitle: subtitle.clone(),
    };
    let drawn = match chart {
        PageChart::Percentile {
            title,
            y_what,
            curves,
            ..
        } => chart::latency_by_percentile(&titles(title), y_what, curves),
        PageChart::OverTime {
            title,
            y_label,
            series,
            bounds,
            ..
        } => chart::over_time_in_stages(&titles(title), y_label, series, bounds),
        PageChart::Capacity {
            title,
            axes,
            measured,
            objectives,
            answer,
            ..
        } => chart::capacity_beside(
            &titles(title),
            (&axes.0, &axes.1),
            measured,
            objectives,
            answer.as_ref(),
            beside,
        ),
    };
    let inner = match drawn {
        Ok(svg) => strip_xml_declaration(&svg).to_string(),
        Err(e) => format!("<p class=\"warn\">{}</p>", escape(&e.to_string())),
    };
    format!(
        "<figure class=\"chart\" data-chart=\"{id}\" id=\"chart-{id}\">\n{inner}\n</figure>\n",
        id = chart.id()
    )
}

/// An SVG document inline in HTML starts at its `<svg>` element.
fn strip_xml_declaration(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

pub(super) fn charts_section(charts: &[String]) -> String {
    if charts.is_empty() {
        return String::new();
    }
    let mut out = String::from("<section id=\"charts\"><h2>Charts</h2>\n<div class=\"grid\">\n");
    for chart in charts {
        out.push_str(chart);
    }
    out.push_str("</div></section>\n");
    out
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;padding:16px 24px;\
color:#222;background:#fff}\
header h1{font-size:22px;margin:0 0 12px}\
h1 .label{font-weight:normal;color:#555}\
h2{font-size:17px;margin:18px 0 8px}\
.figures{display:flex;flex-wrap:wrap;gap:10px}\
.figure{border:1px solid #ccc;border-radius:6px;padding:8px 14px;min-width:120px}\
.figure .name{font-size:13px;color:#555}\
.figure .value{font-size:24px;font-weight:600}\
p.verdict{font-size:17px;font-weight:600;margin:0 0 12px}\
ul.lines{margin:10px 0;padding-left:20px;font-size:15px}\
ul.lines li.warn,p.warn{color:#b00020;font-weight:600}\
table.facts{border-collapse:collapse;margin-top:8px;font-size:14px}\
table.facts th{text-align:left;padding:2px 12px 2px 0;color:#555;font-weight:normal;\
vertical-align:top}\
table.facts td{padding:2px 0}\
table.runs{border-collapse:collapse;font-size:14px}\
table.runs th,table.runs td{border-bottom:1px solid #ddd;padding:4px 10px;text-align:right}\
table.runs th:first-child{text-align:left}\
table.runs ul.lines{margin:0;font-size:13px;text-align:left}\
pre.table{font-size:12px;background:#f6f6f6;padding:8px;overflow-x:auto}\
code{font-size:13px;background:#f3f3f3;padding:1px 4px}\
ul.shard-lines{font-size:13px}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:12px}\
figure.chart{margin:0;border:1px solid #eee}\
figure.chart svg{width:100%;height:auto;display:block}";

pub(super) fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"tsumo {}\">\n<title>tsumo: {}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(title)
    )
}

/// Text as HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tools::saved::RunData;

    fn fixture(name: &str) -> LoadedRun {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        compare::load(&path).unwrap()
    }

    #[test]
    fn a_run_page_is_one_file_with_its_figures_and_charts() {
        let run = fixture("http-direct-v1.json");
        let html = render_one(&run);
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        for fetched in ["<script", "<link", "src=", "@import", "url("] {
            assert!(!html.contains(fetched), "{fetched} in the page");
        }
        for id in ["target", "achieved", "p50", "p99", "max", "errors"] {
            assert!(html.contains(&format!("data-figure=\"{id}\"")), "{id}");
        }
        assert!(html.contains("data-chart=\"latency-by-percentile\""));
        assert!(html.find("id=\"answer\"") < html.find("id=\"charts\""));
    }

    #[test]
    fn two_runs_make_a_comparison_with_the_table() {
        let runs = [
            fixture("http-direct-v1.json"),
            fixture("http-proxied-v1.json"),
        ];
        let html = render_files(&runs).unwrap();
        assert!(html.contains("Compare table"), "{html}");
        assert!(html.contains("data-run=\"1\" data-figure=\"p99\""));
        // Two runs, corrected and uncorrected each.
        let chart = &html[html.find("data-chart=\"latency-by-percentile\"").unwrap()..];
        let chart = &chart[..chart.find("</figure>").unwrap()];
        assert_eq!(chart.matches("<polyline").count(), 4, "{chart}");
    }

    fn searched(limited_by: &str) -> LoadedRun {
        let trials = [
            (200, 2_000, "held"),
            (600, 90_000, "broke"),
            (400, 3_000, "held"),
        ];
        let search = crate::report::capacity::tests::search(&trials, Some(400), limited_by);
        LoadedRun::new(RunData::Capacity(Box::new(search)), limited_by)
    }

    /// Two searches side by side (the demo's direct and nginx): their charts share one scale,
    /// and no ratio is taken against a floor ("at least 800", where --to ended the search).
    #[test]
    fn two_searches_side_by_side_share_one_scale_and_no_ratio_of_a_floor() {
        let trials = [
            (200, 1_000, "held"),
            (400, 1_500, "held"),
            (800, 2_500, "held"),
        ];
        let mut floor = crate::report::capacity::tests::search(&trials, Some(800), "to");
        floor.capacity.range = Some([800, 800]);
        floor.capacity.broke.clear();
        floor.label = "direct".to_string();
        let floor = LoadedRun::new(RunData::Capacity(Box::new(floor)), "direct.json");
        let mut found = searched("server");
        if let RunData::Capacity(search) = &mut found.data {
            search.capacity.range = Some([400, 600]);
            search.label = "nginx".to_string();
        }
        let html = render_files(&[floor, found]).unwrap();
        // The figures on each chart's axes: the same, chart for chart.
        let charts: Vec<Vec<&str>> = html
            .split("<figure class=\"chart\"")
            .skip(1)
            .map(|chart| {
                chart
                    .split("</text>")
                    .filter_map(|t| t.rsplit('>').next().map(str::trim))
                    .filter(|t| t.trim_end_matches(['m', 'u', 's']).parse::<f64>().is_ok())
                    .collect()
            })
            .collect();
        assert_eq!(charts.len(), 2, "{html}");
        assert!(!charts[0].is_empty(), "{html}");
        assert_eq!(charts[0], charts[1]);
        // Searches are judged by their ranges, not told that one run measures no noise.
        assert!(html.contains("Capacity ranges: "), "{html}");
        assert!(!html.contains("No verdict"), "{html}");
        // No ratio of a floor: the range of a search --to ended is its floor.
        for name in ["Range low", "Range high", "Capacity, at least"] {
            let row = html
                .lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap_or_else(|| panic!("no {name} row: {html}"));
            assert!(!row.contains('×'), "{row}");
        }
    }

    #[test]
    fn broke_first_is_a_warning_only_on_a_search_without_its_answer() {
        let found = render_one(&searched("server"));
        assert!(found.contains("<li>Broke first: p99&lt;50ms"), "{found}");
        let stopped = render_one(&searched("stopped"));
        assert!(
            stopped.contains("<li class=\"warn\">Broke first: p99&lt;50ms"),
            "{stopped}"
        );
    }

    #[test]
    fn a_comparison_opens_with_its_verdict_and_a_column_has_one_unit() {
        let runs = [
            fixture("http-direct-v1.json"),
            fixture("http-proxied-v1.json"),
        ];
        let html = render_files(&runs).unwrap();
        // One run a label: no difference is called a verdict, and the page says why.
        let verdict =
            html.find("<p class=\"verdict\" id=\"verdict\">No verdict: one run of a label ");
        assert!(verdict.is_some(), "{html}");
        assert!(verdict < html.find("id=\"answer\""));
        // Each run's p50 in the unit of the column's smallest.
        let shown = compare::figures_in_one_unit(&runs.map(|r| r.result().page()));
        let p50 = shown[0].iter().position(|s| s.ends_with('s')).unwrap();
        let units: Vec<&str> = shown
            .iter()
            .map(|row| row[p50].trim_start_matches(|c: char| c.is_ascii_digit() || c == '.'))
            .collect();
        assert_eq!(units[0], units[1], "{shown:?}");
    }

    /// Twenty runs compared: twenty colours on every chart, each legend inside its document.
    #[test]
    fn twenty_runs_compared_keep_their_colours_and_legends_apart() {
        let runs: Vec<LoadedRun> = (0..20)
            .map(|i| {
                let mut run = fixture("http-direct-v1.json");
                if let RunData::Http(saved) = &mut run.data {
                    saved.label = format!("run {i}");
                }
                LoadedRun::new(run.data, &format!("run{i}.json"))
            })
            .collect();
        let html = render_files(&runs).unwrap();
        for chart in html.split("<figure class=\"chart\"").skip(1) {
            let svg = &chart[chart.find("<svg").unwrap()..chart.find("</svg>").unwrap() + 6];
            let doc = roxmltree::Document::parse(svg).unwrap();
            let height: f64 = doc
                .root_element()
                .attribute("height")
                .unwrap()
                .parse()
                .unwrap();
            let mut strokes: Vec<&str> = doc
                .descendants()
                .filter(|n| n.has_tag_name("polyline"))
                .filter_map(|n| n.attribute("stroke"))
                .collect();
            let lines = strokes.len();
            strokes.sort();
            strokes.dedup();
            assert_eq!(strokes.len(), lines, "a colour shared:\n{svg}");
            for text in doc.descendants().filter(|n| n.has_tag_name("text")) {
                let y: f64 = text.attribute("y").unwrap_or("0").parse().unwrap_or(0.0);
                assert!(y < height, "{:?} at {y} of {height}", text.text());
            }
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
