//! Renderers of a finished run: wrk2's text layout (`text`), JSON (`json`), the mahjong
//! session's text and JSON (`mahjong`), `.hgrm` (`hgrm`), the objectives (`--slo`) judged on
//! a saved result (`objectives`); and the tools on saved runs: the reader (`saved`),
//! `compare`, `merge` (with `shards`), `plot`, `page` (the HTML page of a result, a comparison,
//! a search or merged shards); `chart` draws the SVG charts from plain data.
//!
//! Saved runs are typed for both modes: [`json::SavedRun`] (HTTP) and
//! [`session::SavedSession`] (mahjong), each with the format version `"schema"`
//! ([`schema::SCHEMA_VERSION`]); what both share (the version, [`schema::SavedPart`], the
//! histogram codec, the JSON writer) is in [`schema`], which imports neither. Every saved type
//! implements one trait, [`result::SavedResult`] (its text report, verdict, compare rows,
//! plotted histograms, merge line, and how results merge), beside its type: `http` for
//! [`json::SavedRun`], `mahjong` for [`session::SavedSession`]. The tools ask a result only
//! through the trait; [`saved::RunData`] is matched in `saved` alone (loading a document, and
//! `as_dyn`). A [`RunResult`](crate::stats::RunResult) or a
//! [`MahjongResult`](crate::stats::mahjong::MahjongResult) is everything a renderer needs;
//! renderers never look at the engine.

pub mod capacity;
pub mod chart;
pub mod compare;
pub mod hgrm;
pub mod hlog;
pub mod http;
pub mod json;
pub mod mahjong;
pub mod merge;
pub mod objectives;
pub mod page;
pub mod plot;
pub mod result;
pub mod saved;
pub mod schema;
pub mod session;
pub mod shards;
pub mod text;
pub mod timeline;
