//! The tokio codec gives the decoder's items, through `FramedRead` too.

use bytes::BytesMut;
use futures_util::StreamExt;
use mcp_sse::SseCodec;
use mcp_sse::sse::{DecodeError, Item};
use tokio_util::codec::{Decoder as _, FramedRead};

use crate::sse::{ev, ev_id};

/// Feeds `input` to the codec `chunk` bytes at a time, as a `FramedRead`
/// would: `decode` until it has nothing, more bytes, and `decode_eof` at the
/// end.
pub(crate) fn decode_with_codec(max: usize, input: &[u8], chunk: usize) -> Vec<Item> {
    let mut codec = SseCodec::with_max_event_size(max);
    let mut buf = BytesMut::new();
    let mut items = Vec::new();
    for piece in input.chunks(chunk) {
        buf.extend_from_slice(piece);
        while let Some(item) = codec.decode(&mut buf).unwrap() {
            items.push(item);
        }
    }
    while let Some(item) = codec.decode_eof(&mut buf).unwrap() {
        items.push(item);
    }
    items
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
}

#[test]
fn framed_read_yields_items_then_reports_the_unfinished_event() {
    let body: &[u8] = b"id: 1\r\ndata: a\r\n\r\n: ping\n\nevent: x\ndata: b\n\ndata: cut";
    let items: Vec<Item> =
        run(FramedRead::new(body, SseCodec::new()).map(|item| item.unwrap()).collect());
    assert_eq!(
        items,
        [
            ev_id("message", "a", "1"),
            Item::Comment(" ping".into()),
            ev_id("x", "b", "1"),
            Item::Error(DecodeError::UnfinishedEvent { discarded: 9 }),
        ]
    );
}

#[test]
fn framed_read_small_buffer_capacity() {
    let mut body = Vec::new();
    for i in 0..1000 {
        body.extend_from_slice(format!("data: {i}\r\n\r\n").as_bytes());
    }
    let reader: &[u8] = &body;
    let items: Vec<Item> = run(FramedRead::with_capacity(reader, SseCodec::new(), 7)
        .map(|item| item.unwrap())
        .collect());
    let expected: Vec<Item> = (0..1000).map(|i| ev("message", &i.to_string())).collect();
    assert_eq!(items, expected);
}

#[test]
fn decode_eof_reports_once_and_leaves_a_fresh_stream() {
    let mut codec = SseCodec::new();
    let mut buf = BytesMut::from(&b"data: x"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(
        codec.decode_eof(&mut buf).unwrap(),
        Some(Item::Error(DecodeError::UnfinishedEvent { discarded: 7 }))
    );
    assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
    assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
    let mut buf = BytesMut::from(&b"data: y\n\n"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(ev("message", "y")));
    assert_eq!(codec.decoder().last_event_id(), "");
}

/// The decoder a codec wraps is the one it reads with: set through
/// `decoder_mut`, kept by `into_decoder`, and given by `from_decoder`.
#[test]
fn the_wrapped_decoder_is_the_codecs_own() {
    let mut codec = SseCodec::with_max_event_size(64);
    codec.decoder_mut().set_last_event_id("resume-3");
    let mut buf = BytesMut::from(&b"data: z\n\nretry: 250\n"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(ev_id("message", "z", "resume-3")));
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!((codec.decoder().retry(), codec.decoder().max_event_size()), (Some(250), 64));
    let decoder = codec.into_decoder();
    assert_eq!((decoder.last_event_id(), decoder.retry()), ("resume-3", Some(250)));
    assert_eq!(decoder.max_event_size(), 64);
    // The block the `retry` line opened goes on in the new codec.
    let mut codec = SseCodec::from_decoder(decoder);
    let mut buf = BytesMut::from(&b"data: w\n\n"[..]);
    let Some(Item::Event(event)) = codec.decode(&mut buf).unwrap() else { panic!() };
    assert_eq!(
        (event.data.as_str(), event.id.as_deref(), event.retry),
        ("w", Some("resume-3"), Some(250))
    );
}
