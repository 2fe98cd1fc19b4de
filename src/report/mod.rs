//! What tsumo says about a finished run, one room per kind of result, and the tools that work
//! on any of them.
//!
//! - `http/`: an HTTP run (HTTP/1.1 or HTTP/2): its saved type ([`http::saved::SavedRun`]),
//!   its trait impl, wrk2's text, its page, its merge, its measures for objectives, and its own
//!   outputs (`.hgrm`, `--hlog`).
//! - `mahjong/`: a mahjong session, laid out the same way ([`mahjong::saved::SavedSession`]).
//! - `ws/`: a WebSocket run (`tsumo ws`), laid out the same way ([`ws::saved::SavedWsRun`]).
//! - `capacity/`: a capacity search over either kind of step ([`capacity::saved::SavedSearch`]),
//!   laid out the same way.
//! - `tools/`: what works on any result, through the trait alone: the saved files' reader,
//!   `compare`, `merge` (with `shards`), `plot`, and the HTML page.
//! - The shared base: the trait ([`result`]), what every saved file shares ([`schema`]), what
//!   every kind's run over time shares ([`timeline`]), a histogram as saved with its summary
//!   ([`histogram`]), the charts ([`chart`]), the text lines every kind prints ([`lines`]), the verdicts of objectives ([`objectives`]), and the dispatcher ([`kinds`]),
//!   the one file that names every kind's saved type: it reads a document into its kind.
//!
//! A new kind of result is a folder of its own beside these, and an arm in [`kinds`].
//! An HTTP run's [`RunResult`](crate::stats::http::RunResult) or a mahjong session's
//! [`RunResult`](crate::stats::mahjong::RunResult) is everything a renderer needs;
//! renderers never look at the engine.

pub mod capacity;
pub mod chart;
pub mod histogram;
pub mod http;
pub mod kinds;
pub mod lines;
pub mod mahjong;
pub mod objectives;
pub mod result;
pub mod schema;
pub mod timeline;
pub mod tools;
pub mod ws;
