//! What `/` and `/live` show: the current run's live page, or once the command made it, the
//! final page. A render is kept until the live state changed (an interval handed over), and
//! for at least [`MIN_GAP`]: many browsers polling in a tight loop, or a reload, cost at most
//! two renders a second, whatever `--interval` is. Each render has an id (the state's version
//! it showed); a client that has it already (`/live?since=ID`) is held until there is a newer
//! one (`server`), or gets `204 No Content`: never the same fragment again.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::report;
use crate::report::tools::live::{document_around, fragment, waiting};
use crate::stats::live::{Live, LiveData, State};

/// The least time between two renders: the page polls once a second.
const MIN_GAP: Duration = Duration::from_millis(500);

/// The last render, and the current run's intervals laid out so far.
#[derive(Debug, Default)]
pub(super) struct Views {
    last: Mutex<Option<Render>>,
    laid: Mutex<Laid>,
    metrics: Mutex<Option<(u64, Bytes)>>,
}

/// A fragment rendered: the state's version it showed (its id) and when it was made.
#[derive(Debug, Clone)]
struct Render {
    id: u64,
    made: Instant,
    text: Bytes,
}

/// What `/live` answers.
pub(super) enum Fragment {
    /// The command made its final page: load `/`.
    Final,
    /// The client has this render already (its id).
    Unchanged(u64),
    /// A render the client has not seen, and its id.
    New(u64, Bytes),
}

/// The current run's intervals laid out as saved, by the places in the process of the runs it
/// is made of.
#[derive(Debug, Default)]
struct Laid {
    runs: Vec<usize>,
    http: report::http::live::Laid,
    mahjong: report::mahjong::live::Laid,
    ws: report::ws::live::Laid,
}

impl Views {
    /// `/`: the final page once there is one, else the live page around the current fragment.
    pub fn page(&self, live: &Live) -> Bytes {
        if let Some(page) = live.lock().final_page.clone() {
            return Bytes::from(page);
        }
        let render = self.render(live);
        let text = String::from_utf8_lossy(&render.text);
        Bytes::from(document_around("live", &text, render.id))
    }

    /// `/live`, to a client that has render `since` already (when it says so).
    pub fn fragment(&self, live: &Live, since: Option<u64>) -> Fragment {
        if live.lock().final_page.is_some() {
            return Fragment::Final;
        }
        let render = self.render(live);
        if since == Some(render.id) {
            Fragment::Unchanged(render.id)
        } else {
            Fragment::New(render.id, render.text)
        }
    }

    /// `/metrics`: made again only when the live state changed.
    pub fn metrics(&self, live: &Live) -> Bytes {
        let state = live.lock();
        let mut last = self.metrics.lock().unwrap_or_else(|e| e.into_inner());
        match last.as_ref() {
            Some((version, text)) if *version == state.version => text.clone(),
            _ => {
                let text = Bytes::from(super::metrics::render(&state));
                *last = Some((state.version, text.clone()));
                text
            }
        }
    }

    /// The last render, or a new one when the state changed since and it is old enough.
    fn render(&self, live: &Live) -> Render {
        let state = live.lock();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = last.as_ref() {
            if kept.id == state.version || kept.made.elapsed() < MIN_GAP {
                return kept.clone();
            }
        }
        let mut laid = self.laid.lock().unwrap_or_else(|e| e.into_inner());
        let made = Render {
            id: state.version,
            made: Instant::now(),
            text: Bytes::from(render(&state, &mut laid)),
        };
        *last = Some(made.clone());
        made
    }
}

fn render(state: &State, laid: &mut Laid) -> String {
    let Some((places, run)) = state.shown() else {
        if state.standing.is_empty() {
            return waiting();
        }
        let content = report::result::PageContent {
            kind: "Capacity search (live)".to_string(),
            figures: Vec::new(),
            lines: Vec::new(),
            calm: Vec::new(),
            facts: Vec::new(),
            charts: Vec::new(),
        };
        return fragment(
            &content,
            "its steps so far",
            (&state.standing, state.search_charts.as_deref()),
            "",
        );
    };
    if laid.runs != places {
        *laid = Laid {
            runs: places.clone(),
            ..Laid::default()
        };
    }
    let mut content = match &run.data {
        LiveData::Http(h) => report::http::live::content(&run, h, &mut laid.http),
        LiveData::Mahjong(m) => report::mahjong::live::content(&run, m, &mut laid.mahjong),
        LiveData::Ws(w) => report::ws::live::content(&run, w, &mut laid.ws),
    };
    // A search's step: the page is the search's, its figures the running step's.
    if let Some(search) = &state.capacity {
        content.kind = format!(
            "Capacity search (live): the step at {} {}",
            search.load, search.unit
        );
    }
    let subtitle = match places.as_slice() {
        [0] => run.labels.label.clone(),
        [place] => format!("{} (run {} of this command)", run.labels.label, place + 1),
        sessions => format!(
            "{} ({} sessions playing side by side)",
            run.labels.label,
            sessions.len()
        ),
    };
    fragment(
        &content,
        &run.labels.label,
        (&state.standing, state.search_charts.as_deref()),
        &subtitle,
    )
}
