//! The mahjong mode's game-side pieces: tsumo plays as thousands of bot players against a real
//! `@kobalab/majiang-server` to measure how many concurrent players it (or a proxy in front of
//! it) can carry. These modules are pure logic, testable without a server: the protocol's lobby
//! events and client frames ([`messages`]), the rule object every `START` must carry in full
//! ([`rules`]), and the player that answers every game request ([`bot`]). The driver that logs
//! in, connects and paces players builds on them.

pub mod bot;
pub mod messages;
pub mod rules;

pub use messages::ProtocolError;
