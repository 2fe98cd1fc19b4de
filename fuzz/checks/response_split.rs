//! The HTTP/1.1 response parser and its body framing: any bytes, cut into pieces at any points,
//! must never panic, and must give what the same bytes give whole — the same responses (status,
//! keep-alive, headers and decoded body when collecting) and the same ending (clean, cut short,
//! or the same protocol violation).
//!
//! Input: byte 0 holds the flags (bit 0: a HEAD request, bit 1: collecting), byte 1 the number
//! of cuts (low 3 bits), then two bytes per cut, then the response bytes.

use tsumo::net::http1::response::{Complete, ParseError, ResponseParser};
use tsumo::stats::http::protocol::Violation;

type Headers = Vec<(String, Vec<u8>)>;

#[derive(Debug, PartialEq)]
enum End {
    /// End of input between responses, or a close-delimited body ended by it.
    Clean,
    /// End of input in the middle of a response.
    CutShort,
    Protocol(Violation),
}

#[derive(Debug, PartialEq)]
struct Outcome {
    responses: Vec<(Complete, Headers, Vec<u8>)>,
    end: End,
}

fn run(input: &[u8], cuts: &[usize], head: bool, collect: bool) -> Outcome {
    let mut parser = if collect {
        ResponseParser::collecting()
    } else {
        ResponseParser::new()
    };
    let mut responses = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut offset = 0;
    for cut in cuts.iter().copied().chain([input.len()]) {
        let cut = cut.clamp(offset, input.len());
        pending.extend_from_slice(&input[offset..cut]);
        offset = cut;
        loop {
            match parser.parse(&pending, head) {
                Ok((used, done)) => {
                    assert!(used <= pending.len(), "used {used} of {}", pending.len());
                    pending.drain(..used);
                    match done {
                        Some(c) => {
                            responses.push((c, parser.headers().to_vec(), parser.body().to_vec()))
                        }
                        None => break,
                    }
                }
                Err(ParseError::Protocol(kind, _)) => {
                    return Outcome {
                        responses,
                        end: End::Protocol(kind),
                    }
                }
                Err(ParseError::UnexpectedEof) => panic!("parse() said end of file"),
            }
        }
    }
    let end = match parser.eof() {
        Ok(Some(c)) => {
            responses.push((c, parser.headers().to_vec(), parser.body().to_vec()));
            End::Clean
        }
        Ok(None) => End::Clean,
        Err(ParseError::UnexpectedEof) => End::CutShort,
        Err(ParseError::Protocol(kind, _)) => End::Protocol(kind),
    };
    Outcome { responses, end }
}

/// The fuzz target's whole check: returns on input it does not apply to, panics on a bug.
pub fn check(data: &[u8]) {
    let [flags, count, rest @ ..] = data else {
        return;
    };
    let count = usize::from(count & 7);
    if rest.len() < 2 * count {
        return;
    }
    let (cut_bytes, input) = rest.split_at(2 * count);
    let mut cuts: Vec<usize> = cut_bytes
        .chunks_exact(2)
        .map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])) % (input.len() + 1))
        .collect();
    cuts.sort_unstable();
    let (head, collect) = (flags & 1 == 1, flags & 2 == 2);
    let whole = run(input, &[], head, collect);
    let pieces = run(input, &cuts, head, collect);
    assert_eq!(whole, pieces, "cuts {cuts:?}");
    // Byte by byte as well: the worst split there is.
    if input.len() <= 512 {
        let every: Vec<usize> = (1..input.len()).collect();
        assert_eq!(whole, run(input, &every, head, collect), "byte by byte");
    }
}
