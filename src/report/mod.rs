//! Renderers of a finished run: wrk2's text layout (`text`), JSON (`json`).
//!
//! A result ([`RunResult`](crate::stats::RunResult), a mahjong session's) is everything a
//! renderer needs; renderers never look at the engine.

pub mod compare;
pub mod hgrm;
pub mod json;
pub mod mahjong;
pub mod merge;
pub mod plot;
pub mod saved;
pub mod text;
