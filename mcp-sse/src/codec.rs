//! [`SseCodec`]: the event-stream [`Decoder`] as a
//! [`tokio_util::codec::Decoder`] (feature `codec`, on by default).

use std::io;

use bytes::BytesMut;

use crate::sse::{Decoder, Item};

/// A `tokio_util::codec::Decoder` yielding the [`Item`]s of an event stream.
///
/// Oversized events and an unfinished event at the end of the stream come
/// out as [`Item::Error`] items, not as stream errors, so the stream goes
/// on; the only errors are the I/O errors of the underlying reader.
///
/// ```
/// use futures_util::StreamExt;
/// use mcp_sse::{Item, SseCodec};
/// use tokio_util::codec::FramedRead;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let body: &[u8] = b"event: ping\ndata: 1\n\ndata: cut";
/// let items: Vec<Item> = FramedRead::new(body, SseCodec::new())
///     .map(|item| item.unwrap())
///     .collect()
///     .await;
/// assert!(matches!(&items[0], Item::Event(e) if e.event == "ping" && e.data == "1"));
/// // The unfinished event is dropped, and reported.
/// assert!(matches!(items[1], Item::Error(mcp_sse::sse::DecodeError::UnfinishedEvent { .. })));
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct SseCodec {
    decoder: Decoder,
}

impl SseCodec {
    /// A codec with the default maximum event size.
    pub fn new() -> Self {
        SseCodec::from_decoder(Decoder::new())
    }

    /// A codec with the given maximum event size.
    pub fn with_max_event_size(max_event_size: usize) -> Self {
        SseCodec::from_decoder(Decoder::with_max_event_size(max_event_size))
    }

    /// A codec around a decoder (for instance one whose last event ID was
    /// set from an earlier connection).
    pub fn from_decoder(decoder: Decoder) -> Self {
        SseCodec { decoder }
    }

    /// The decoder, for [`Decoder::last_event_id`] and [`Decoder::retry`].
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    /// The decoder, mutably.
    pub fn decoder_mut(&mut self) -> &mut Decoder {
        &mut self.decoder
    }

    /// The decoder, giving up the codec.
    pub fn into_decoder(self) -> Decoder {
        self.decoder
    }
}

impl tokio_util::codec::Decoder for SseCodec {
    type Item = Item;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Item>, io::Error> {
        if !src.is_empty() {
            self.decoder.feed(src);
            src.clear();
        }
        Ok(self.decoder.next_item())
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Item>, io::Error> {
        if let Some(item) = self.decode(src)? {
            return Ok(Some(item));
        }
        // Reports an unfinished event once; the decoder is then ready for a
        // new stream, and finishing that empty stream reports nothing.
        self.decoder.finish();
        Ok(self.decoder.next_item())
    }
}
