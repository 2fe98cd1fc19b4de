//! The mahjong mode's game-side pieces: tsumo plays as thousands of bot players against a real
//! `@kobalab/majiang-server` to measure how many concurrent players it (or a proxy in front of
//! it) can carry. These modules are pure logic, testable without a server: the protocol's lobby
//! events and client frames ([`messages`]), the rule object every `START` must carry in full
//! ([`rules`]), the player that answers every game request ([`bot`]: tsumogiri or the real
//! player), and the hand logic the real player decides with ([`hand`]). On them stand the
//! driver: one player's session ([`player`]: login, socket, table, games, logout), the run of all
//! players in lockstep phases, as the engine's mode ([`session`]), the phases themselves
//! ([`phase`]), and the watch on a server gone mid-profile ([`gone`]). What is recorded lives in `stats::mahjong`, the report in `report::mahjong`.

pub mod arrivals;
pub mod bot;
pub mod gone;
pub mod hand;
pub mod messages;
pub mod phase;
pub mod player;
pub mod rules;
pub mod session;

pub use messages::ProtocolError;
