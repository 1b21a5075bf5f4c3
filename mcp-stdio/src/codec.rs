//! Line framing for the stdio transport: one JSON message per line.

use bytes::{Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// One frame read from the server's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its line ending (`\n` or `\r\n`).
    Line(Bytes),
    /// A line longer than the limit was dropped; `len` is how many bytes of it
    /// were discarded (at least the limit).
    TooLong {
        /// The number of bytes dropped.
        len: usize,
        /// The line's first bytes (at most 1 KiB), from which the
        /// id of the answer it held may still be read.
        head: Bytes,
    },
}

/// How much of an over-long line is kept in [`Frame::TooLong`].
pub(crate) const HEAD_BYTES: usize = 1024;

/// A newline codec with a maximum line length that never fails on content.
///
/// Unlike `tokio_util::codec::LinesCodec`, an over-long line is reported as a
/// [`Frame::TooLong`] item (and skipped up to the next newline) instead of a
/// stream error, because a stream that errors once stops. Lines are bytes:
/// the JSON parser checks UTF-8 itself.
#[derive(Debug, Clone)]
pub struct LineCodec {
    max_length: usize,
    /// Bytes already searched for a newline in the buffer.
    scanned: usize,
    /// Set while skipping the rest of an over-long line: bytes dropped so
    /// far, and the line's head.
    discarding: Option<(usize, Bytes)>,
}

impl LineCodec {
    /// A codec that drops lines longer than `max_length` bytes.
    pub fn new(max_length: usize) -> Self {
        LineCodec { max_length, scanned: 0, discarding: None }
    }

    /// The maximum line length.
    pub fn max_length(&self) -> usize {
        self.max_length
    }
}

impl Decoder for LineCodec {
    type Item = Frame;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        if let Some((dropped, head)) = self.discarding.take() {
            match memchr::memchr(b'\n', buf) {
                Some(pos) => {
                    let _ = buf.split_to(pos + 1);
                    self.scanned = 0;
                    return Ok(Some(Frame::TooLong { len: dropped + pos, head }));
                }
                None => {
                    self.discarding = Some((dropped + buf.len(), head));
                    buf.clear();
                    return Ok(None);
                }
            }
        }
        let limit = buf.len().min(self.max_length.saturating_add(1));
        match memchr::memchr(b'\n', &buf[self.scanned..limit]) {
            Some(rel) => {
                let pos = self.scanned + rel;
                self.scanned = 0;
                let mut line = buf.split_to(pos + 1);
                line.truncate(pos);
                if line.last() == Some(&b'\r') {
                    line.truncate(pos - 1);
                }
                Ok(Some(Frame::Line(line.freeze())))
            }
            None if buf.len() > self.max_length => {
                // No newline within the limit: the line is too long. Drop
                // it up to its newline, or all we have and keep dropping.
                self.scanned = 0;
                // The same head however the input was split: the first
                // bytes up to the limit (the buffer holds more than that).
                let keep = HEAD_BYTES.min(self.max_length.saturating_add(1));
                let head = Bytes::copy_from_slice(&buf[..keep]);
                match memchr::memchr(b'\n', &buf[limit..]) {
                    Some(rel) => {
                        let pos = limit + rel;
                        let _ = buf.split_to(pos + 1);
                        Ok(Some(Frame::TooLong { len: pos, head }))
                    }
                    None => {
                        self.discarding = Some((buf.len(), head));
                        buf.clear();
                        Ok(None)
                    }
                }
            }
            None => {
                self.scanned = buf.len();
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, Self::Error> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if let Some((dropped, head)) = self.discarding.take() {
            return Ok(Some(Frame::TooLong { len: dropped, head }));
        }
        self.scanned = 0;
        if buf.is_empty() {
            Ok(None)
        } else {
            // A last line without a newline is still a line.
            Ok(Some(Frame::Line(buf.split().freeze())))
        }
    }
}

impl Encoder<&[u8]> for LineCodec {
    type Error = std::io::Error;

    fn encode(&mut self, item: &[u8], dst: &mut BytesMut) -> Result<(), Self::Error> {
        dst.reserve(item.len() + 1);
        dst.extend_from_slice(item);
        dst.extend_from_slice(b"\n");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message goes out as itself and one line feed (an empty one too).
    #[test]
    fn encoding_appends_a_line_feed() {
        let mut codec = LineCodec::new(16);
        let mut out = BytesMut::new();
        codec.encode(&b"{\"a\":1}"[..], &mut out).unwrap();
        codec.encode(&b""[..], &mut out).unwrap();
        assert_eq!(&out[..], b"{\"a\":1}\n\n");
    }

    #[test]
    fn the_bound_is_what_it_was_made_with() {
        assert_eq!(LineCodec::new(10).max_length(), 10);
        assert_eq!(LineCodec::new(usize::MAX).max_length(), usize::MAX);
    }

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut codec = LineCodec::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(f) = codec.decode(&mut buf).unwrap() {
                out.push(f);
            }
        }
        while let Some(f) = codec.decode_eof(&mut buf).unwrap() {
            out.push(f);
        }
        out
    }

    fn line(s: &str) -> Frame {
        Frame::Line(Bytes::copy_from_slice(s.as_bytes()))
    }

    fn too_long(len: usize, head: &str) -> Frame {
        Frame::TooLong { len, head: Bytes::copy_from_slice(head.as_bytes()) }
    }

    #[test]
    fn cases() {
        type Case<'a> = (usize, Vec<&'a [u8]>, Vec<Frame>);
        let cases: Vec<Case<'_>> = vec![
            (100, vec![b"a\nb\n"], vec![line("a"), line("b")]),
            (100, vec![b"a\r\nb"], vec![line("a"), line("b")]),
            (100, vec![b"ab", b"c\n", b"\n"], vec![line("abc"), line("")]),
            (4, vec![b"abcd\nabcde\nxy\n"], vec![line("abcd"), too_long(5, "abcde"), line("xy")]),
            (4, vec![b"abcdefgh", b"ijk", b"l\nok\n"], vec![too_long(12, "abcde"), line("ok")]),
            (4, vec![b"abcdefgh"], vec![too_long(8, "abcde")]),
            (3, vec![b"abc", b"\n"], vec![line("abc")]),
        ];
        for (max, chunks, expected) in cases {
            assert_eq!(frames(max, &chunks), expected, "chunks {chunks:?}");
        }
    }

    #[test]
    fn every_split_gives_the_same_frames() {
        let input: &[u8] = b"{\"a\":1}\r\nxxxxxxxxxxxxxxxxxxxxxxxx\n\n{}\nlast";
        let whole = frames(10, &[input]);
        for i in 0..=input.len() {
            let (a, b) = input.split_at(i);
            assert_eq!(frames(10, &[a, b]), whole, "split at {i}");
        }
    }
}
