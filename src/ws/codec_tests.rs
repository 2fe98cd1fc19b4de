use super::*;

/// A server frame (unmasked), with the shortest length encoding; the socket's tests send it too.
pub(crate) fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![first];
    match payload.len() {
        len @ 0..=125 => out.push(len as u8),
        len @ 126..=0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        len => {
            out.push(127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
    out
}

const FIN: u8 = 0x80;
const TEXT: u8 = 0x1;
const CONT: u8 = 0x0;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;
const CLOSE: u8 = 0x8;

/// Everything `bytes` decodes to, fed `chunk` bytes at a time: (opcode, payload) each.
fn decode_all(bytes: &[u8], chunk: usize, max: usize) -> Result<Vec<(OpCode, Vec<u8>)>, WsError> {
    let mut inbound = Inbound::new(max);
    let mut out = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        inbound.extend(piece);
        while let Some(Decoded { opcode, payload }) = inbound.decode()? {
            out.push((opcode, inbound.payload(payload).to_vec()));
        }
    }
    Ok(out)
}

fn protocol_error(bytes: &[u8]) -> &'static str {
    match decode_all(bytes, bytes.len(), 1 << 20) {
        Err(WsError::Protocol(why)) => why,
        other => panic!("expected a protocol violation, got {other:?}"),
    }
}

#[test]
fn client_frames_are_masked_with_the_right_length_encoding() {
    let mask = [0x37, 0xFA, 0x21, 0x3D];
    for (len, header) in [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10)] {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut out = Vec::new();
        encode(&mut out, OpCode::Text, &payload, mask);
        assert_eq!(out.len(), header + 4 + len, "length {len}");
        assert_eq!(out[0], 0x81);
        assert_eq!(out[1] & 0x80, 0x80, "mask bit, length {len}");
        let declared = match out[1] & 0x7F {
            126 => u16::from_be_bytes([out[2], out[3]]) as usize,
            127 => u64::from_be_bytes(out[2..10].try_into().unwrap()) as usize,
            short => short as usize,
        };
        assert_eq!(declared, len);
        assert_eq!(out[header..header + 4], mask);
        let mut body = out[header + 4..].to_vec();
        apply_mask(&mut body, mask);
        assert_eq!(body, payload, "length {len}");
    }
    // RFC 6455 §5.7's masked "Hello".
    let mut hello = Vec::new();
    encode(&mut hello, OpCode::Text, b"Hello", mask);
    assert_eq!(
        hello,
        [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    );
}

#[test]
fn every_length_encoding_decodes_whole_or_byte_by_byte() {
    for len in [0usize, 1, 125, 126, 65535, 65536] {
        let payload: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        let bytes = frame(FIN | TEXT, &payload);
        for chunk in [bytes.len(), 1, 7] {
            let decoded = decode_all(&bytes, chunk, 1 << 20).unwrap();
            assert_eq!(
                decoded,
                vec![(OpCode::Text, payload.clone())],
                "{len} by {chunk}"
            );
        }
    }
}

#[test]
fn several_messages_in_one_read_come_out_in_order() {
    let mut bytes = frame(FIN | TEXT, b"2");
    bytes.extend(frame(FIN | TEXT, br#"42["GAME",{}]"#));
    bytes.extend(frame(FIN | 0x2, &[0, 1, 2]));
    let decoded = decode_all(&bytes, bytes.len(), 1024).unwrap();
    assert_eq!(
        decoded,
        vec![
            (OpCode::Text, b"2".to_vec()),
            (OpCode::Text, br#"42["GAME",{}]"#.to_vec()),
            (OpCode::Binary, vec![0, 1, 2]),
        ]
    );
}

#[test]
fn fragmented_message_with_control_frames_between_fragments() {
    let mut bytes = frame(TEXT, b"Hel");
    bytes.extend(frame(FIN | PING, b"are you there"));
    bytes.extend(frame(CONT, b""));
    bytes.extend(frame(CONT, b"lo, "));
    bytes.extend(frame(FIN | PONG, b""));
    bytes.extend(frame(FIN | CONT, b"world"));
    bytes.extend(frame(FIN | TEXT, b"next"));
    for chunk in [bytes.len(), 1, 3, 5] {
        let decoded = decode_all(&bytes, chunk, 1024).unwrap();
        assert_eq!(
            decoded,
            vec![
                (OpCode::Ping, b"are you there".to_vec()),
                (OpCode::Pong, vec![]),
                (OpCode::Text, b"Hello, world".to_vec()),
                (OpCode::Text, b"next".to_vec()),
            ],
            "by {chunk}"
        );
    }
}

#[test]
fn long_message_grows_the_buffer_and_it_shrinks_back() {
    let record = vec![b'x'; 16 * 1024];
    let mut inbound = Inbound::new(1 << 20);
    inbound.extend(&frame(FIN | TEXT, &record));
    let decoded = inbound.decode().unwrap().unwrap();
    assert_eq!(inbound.payload(decoded.payload), &record[..]);
    inbound.extend(&frame(FIN | TEXT, b"small"));
    let decoded = inbound.decode().unwrap().unwrap();
    assert_eq!(inbound.payload(decoded.payload), b"small");
    assert!(inbound.decode().unwrap().is_none());
    let capacity = inbound.read_buffer().capacity();
    assert!(capacity <= 2 * READ_BUFFER, "still {capacity} bytes");
}

#[test]
fn oversize_messages_are_refused_before_they_are_read() {
    let too_long = frame(FIN | TEXT, &[b'a'; 101]);
    // The header alone is enough to refuse.
    match decode_all(&too_long[..4], 4, 100) {
        Err(WsError::TooLong {
            size: 101,
            max: 100,
        }) => {}
        other => panic!("{other:?}"),
    }
    let mut fragments = frame(TEXT, &[b'a'; 60]);
    fragments.extend(frame(FIN | CONT, &[b'a'; 41]));
    assert!(matches!(
        decode_all(&fragments, 1, 100),
        Err(WsError::TooLong { size: 101, .. })
    ));
    let huge = [
        FIN | TEXT,
        127,
        0x7F,
        0xFF,
        0xFF,
        0xFF,
        0xFF,
        0xFF,
        0xFF,
        0xFF,
    ];
    assert!(matches!(
        decode_all(&huge, 10, 100),
        Err(WsError::TooLong { .. })
    ));
}

#[test]
fn protocol_violations_are_refused() {
    assert!(protocol_error(&frame(FIN | 0x40 | TEXT, b"x")).contains("reserved bits"));
    assert!(protocol_error(&frame(FIN | 0x10 | TEXT, b"x")).contains("reserved bits"));
    assert!(protocol_error(&frame(FIN | 0x3, b"x")).contains("opcode"));
    assert!(protocol_error(&frame(FIN | 0xB, b"x")).contains("opcode"));
    assert!(protocol_error(&[FIN | TEXT, 0x81, 1, 2, 3, 4, b'x']).contains("masked"));
    assert!(protocol_error(&frame(PING, b"x")).contains("control frame"));
    assert!(protocol_error(&frame(FIN | PING, &[0; 126])).contains("control frame"));
    assert!(protocol_error(&frame(FIN | CONT, b"x")).contains("continuation"));
    let mut interleaved = frame(TEXT, b"a");
    interleaved.extend(frame(FIN | TEXT, b"b"));
    assert!(protocol_error(&interleaved).contains("before the fragmented one ended"));
    let top_bit = [FIN | TEXT, 127, 0x80, 0, 0, 0, 0, 0, 0, 1];
    assert!(protocol_error(&top_bit).contains("top bit"));
}

#[test]
fn close_payloads() {
    assert_eq!(close_payload(b"").unwrap(), (None, String::new()));
    assert_eq!(
        close_payload(b"\x03\xe8bye").unwrap(),
        (Some(1000), "bye".to_string())
    );
    assert!(matches!(close_payload(b"\x03"), Err(WsError::Protocol(_))));
    assert!(matches!(
        close_payload(b"\x03\xe8\xff"),
        Err(WsError::Protocol(_))
    ));
    let decoded = decode_all(&frame(FIN | CLOSE, b"\x03\xe9"), 2, 10).unwrap();
    assert_eq!(decoded, vec![(OpCode::Close, b"\x03\xe9".to_vec())]);
}

#[test]
fn handshake_leftovers_are_kept_as_frames() {
    let mut inbound = Inbound::new(1024);
    let mut bytes = b"HTTP/1.1 101 OK\r\n\r\n".to_vec();
    let head = bytes.len();
    bytes.extend(frame(FIN | TEXT, b"0{}"));
    inbound.extend(&bytes);
    assert_eq!(inbound.buffered(), &bytes[..]);
    inbound.discard(head);
    let decoded = inbound.decode().unwrap().unwrap();
    assert_eq!(inbound.payload(decoded.payload), b"0{}");
}

#[test]
fn a_long_handshake_head_is_read_in_few_reads() {
    // Before any frame, the length wanted is unknown: the buffer doubles, not one byte a read.
    let mut inbound = Inbound::new(1024);
    let (mut reads, mut filled) = (0, 0);
    while filled < 16 * 1024 {
        let buf = inbound.read_buffer();
        let spare = buf.capacity() - buf.len();
        buf.extend(std::iter::repeat_n(b'h', spare));
        filled += spare;
        reads += 1;
    }
    assert!(reads <= 8, "{reads} reads for {filled} bytes");
    assert_eq!(inbound.buffered().len(), filled);
}
