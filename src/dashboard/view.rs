//! What `/` and `/live` show: the current run's live page, or once the command made it, the
//! final page. A render is kept until the live state changes (an interval handed over): many
//! browsers, or a reload, cost one render per interval.

use std::sync::Mutex;

use crate::report;
use crate::report::tools::live::{document_around, fragment, waiting};
use crate::stats::live::{Live, LiveData, State};

/// The last render, by the state's version, and the current run's intervals laid out so far.
#[derive(Debug, Default)]
pub(super) struct Views {
    last: Mutex<Option<(u64, String)>>,
    laid: Mutex<Laid>,
}

/// The shown run's intervals laid out as saved, by the places in the process of the runs it
/// is made of.
#[derive(Debug, Default)]
struct Laid {
    runs: Vec<usize>,
    http: report::http::live::Laid,
    mahjong: report::mahjong::live::Laid,
}

impl Views {
    /// `/`: the final page once there is one, else the live page around the current fragment.
    pub fn page(&self, live: &Live) -> String {
        if let Some(page) = live.lock().final_page.clone() {
            return page;
        }
        let (fragment, _) = self.fragment(live);
        document_around("live", &fragment)
    }

    /// `/live`: the current fragment, and whether the final page is there to load instead.
    pub fn fragment(&self, live: &Live) -> (String, bool) {
        let state = live.lock();
        if state.final_page.is_some() {
            return (String::new(), true);
        }
        let version = state.version;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, text)) = last.as_ref() {
            if *at == version {
                return (text.clone(), false);
            }
        }
        let mut laid = self.laid.lock().unwrap_or_else(|e| e.into_inner());
        let text = render(&state, &mut laid);
        *last = Some((version, text.clone()));
        (text, false)
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
