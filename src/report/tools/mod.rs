//! The tools on saved results of any kind, which ask a result only through
//! [`SavedResult`](crate::report::result::SavedResult): the reader of saved files ([`saved`]),
//! `tsumo compare` ([`compare`]), `tsumo merge` ([`merge`], with the shards of one run in
//! [`shards`] and their request logs in [`merge_requests`]), `tsumo plot` ([`plot`]), and the
//! HTML page of a result, a comparison, a search or merged shards ([`page`]), and the live page
//! of `--dashboard` around it ([`live`]); for CI systems, the JUnit XML of judged results
//! ([`junit`]) and their Markdown summary ([`markdown`]).

pub mod compare;
pub mod junit;
pub mod live;
pub mod markdown;
pub mod merge;
pub mod merge_requests;
pub mod page;
pub mod plot;
pub mod saved;
pub mod shards;

#[cfg(test)]
mod split_tests;
