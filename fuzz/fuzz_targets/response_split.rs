//! libFuzzer's inputs through the check in `fuzz/checks/response_split.rs`, which says what must hold.
//! The check is a file of its own so that `tests/fuzz_seeds.rs` runs it too, on every committed
//! seed, in the normal test suite.

#![no_main]

#[path = "../checks/response_split.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
