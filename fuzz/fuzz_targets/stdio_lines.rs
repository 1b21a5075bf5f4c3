//! The stdio line framing (`mcp_client_stdio::LineCodec`, a tokio-util codec):
//! a server's stdout, fed whole or in chunks of any size, gives the frames
//! of a simple model: each line up to the limit (without its `\n`, and
//! without a `\r` before it) as `Line`, each longer one as `TooLong` with
//! its length and its first bytes, and a last line without a newline as it
//! is. Lines the client encodes decode back to themselves.
//!
//! The first byte chooses the line limit; the rest is the stream.
#![no_main]

mod common;

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use mcp_client_stdio::{Frame, LineCodec};
use tokio_util::codec::{Decoder, Encoder};

/// How much of an over-long line a `TooLong` frame keeps.
const HEAD_BYTES: usize = 1024;

fn decode<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Frame> {
    let mut codec = LineCodec::new(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(frame) = codec.decode(&mut buf).expect("the codec never fails") {
            frames.push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("the codec never fails") {
        frames.push(frame);
    }
    frames
}

/// The frames the stream should give.
fn model(max: usize, stream: &[u8]) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut pieces: Vec<&[u8]> = stream.split(|b| *b == b'\n').collect();
    // The text after the last newline: a line only if not empty.
    let last = pieces.pop().unwrap_or_default();
    let too_long = |line: &[u8]| Frame::TooLong {
        len: line.len(),
        head: Bytes::copy_from_slice(&line[..HEAD_BYTES.min(max + 1)]),
    };
    for line in pieces {
        if line.len() > max {
            frames.push(too_long(line));
        } else {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            frames.push(Frame::Line(Bytes::copy_from_slice(line)));
        }
    }
    if !last.is_empty() {
        if last.len() > max {
            frames.push(too_long(last));
        } else {
            frames.push(Frame::Line(Bytes::copy_from_slice(last)));
        }
    }
    frames
}

fuzz_target!(|input: &[u8]| {
    let Some((&seed, stream)) = input.split_first() else { return };
    let max = match seed % 8 {
        0 => usize::MAX,
        1 => 0,
        _ => usize::from(seed / 8) * 3,
    };
    let whole = decode(max, [stream]);
    assert_eq!(whole, model(max, stream), "the model, limit {max}");
    for size in [1, 2, 7] {
        assert_eq!(decode(max, stream.chunks(size)), whole, "chunks of {size}, limit {max}");
    }
    assert_eq!(decode(max, common::uneven_chunks(stream)), whole, "uneven chunks, limit {max}");

    // Encoding: every line the client writes (a JSON text has no newline)
    // comes back whole.
    let lines: Vec<&[u8]> = stream.split(|b| *b == b'\n' || *b == b'\r').collect();
    let mut codec = LineCodec::new(usize::MAX);
    let mut out = BytesMut::new();
    for line in &lines {
        codec.encode(line, &mut out).expect("encoding never fails");
    }
    let frames = decode(usize::MAX, [&out[..]]);
    let expected: Vec<Frame> =
        lines.iter().map(|l| Frame::Line(Bytes::copy_from_slice(l))).collect();
    assert_eq!(frames, expected);
});
