//! libFuzzer's inputs through the check in `fuzz/checks/socketio_frame.rs`, which says what must hold.
//! The check is a file of its own so that `tests/fuzz_seeds.rs` runs it too, on every committed
//! seed, in the normal test suite.

#![no_main]

#[path = "../checks/socketio_frame.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
