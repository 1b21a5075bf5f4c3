//! Line splitting and the field grammar: where a line ends, which of the
//! common lines it is, its name and value.

use memchr::{memchr2, memchr3};
use nom::IResult;
use nom::Parser;
use nom::bytes::complete::{tag, take_till};
use nom::combinator::{opt, rest};
use nom::sequence::preceded;

/// How much of `chunk` completes a line the decoder holds the start of: up
/// to and including its first line end (with the LF of a CRLF).
pub(super) fn line_rest(chunk: &[u8]) -> usize {
    match memchr2(b'\n', b'\r', chunk) {
        Some(i) if chunk[i] == b'\r' && chunk.get(i + 1) == Some(&b'\n') => i + 2,
        Some(i) => i + 1,
        None => chunk.len(),
    }
}

/// A line [`Decoder::fast_lines`] reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Head {
    Empty,
    Data,
    Id,
    Event,
}

/// What line `rest` starts with, for [`Decoder::fast_lines`], and where the
/// value starts (after the name, the colon and one optional space); `None`
/// for any other line, or when the chunk ends before the value's first
/// byte.
#[inline(always)]
pub(super) fn line_head(rest: &[u8]) -> Option<(Head, usize)> {
    if let Some(head) = rest.first_chunk::<8>() {
        // The name, its colon and the byte after: all in the first eight.
        let word = u64::from_le_bytes(*head);
        let space = |at: u32| usize::from((word >> (8 * at)) as u8 == b' ');
        const DATA: u64 = u64::from_le_bytes(*b"data:\0\0\0");
        const ID: u64 = u64::from_le_bytes(*b"id:\0\0\0\0\0");
        const EVENT: u64 = u64::from_le_bytes(*b"event:\0\0");
        return match head[0] {
            b'\n' | b'\r' => Some((Head::Empty, 0)),
            b'd' if word & 0xFF_FFFF_FFFF == DATA => Some((Head::Data, 5 + space(5))),
            b'i' if word & 0xFF_FFFF == ID => Some((Head::Id, 3 + space(3))),
            b'e' if word & 0xFFFF_FFFF_FFFF == EVENT => Some((Head::Event, 6 + space(6))),
            _ => None,
        };
    }
    let (head, mut value) = match rest {
        [b'\n' | b'\r', ..] => return Some((Head::Empty, 0)),
        [b'd', b'a', b't', b'a', b':', ..] => (Head::Data, 5),
        [b'i', b'd', b':', ..] => (Head::Id, 3),
        [b'e', b'v', b'e', b'n', b't', b':', ..] => (Head::Event, 6),
        _ => return None,
    };
    match rest.get(value) {
        Some(b' ') => value += 1,
        Some(_) => {}
        // The line may go on in the next chunk.
        None => return None,
    }
    Some((head, value))
}

/// The first CR or LF (with `NUL`, the first CR, LF or NUL) in a haystack
/// where it is expected within a few bytes: eight bytes at a time for the
/// first 16, then memchr.
#[inline(always)]
pub(super) fn find_short_line_end<const NUL: bool>(hay: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut at = 0;
    while at < 16 {
        let Some(word) = hay.get(at..at + 8) else { break };
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        // The high bit of each byte that is LF (`lf` is zero there), CR or
        // NUL; bits above the first such byte may be wrong, the lowest is
        // right.
        let lf = word ^ (ONES * u64::from(b'\n'));
        let cr = word ^ (ONES * u64::from(b'\r'));
        let mut hits = lf.wrapping_sub(ONES) & !lf | cr.wrapping_sub(ONES) & !cr;
        if NUL {
            hits |= word.wrapping_sub(ONES) & !word;
        }
        let hits = hits & HIGH;
        if hits != 0 {
            return Some(at + (hits.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = &hay[at..];
    let found = if NUL { memchr3(b'\n', b'\r', 0, tail) } else { find_line_end(tail) };
    found.map(|i| at + i)
}

/// The first CR or LF: memchr's vector search. (A byte-by-byte look at the
/// first 16 bytes before it, for every line, measured slower: about 80
/// more instructions per line under callgrind. [`Decoder::fast_lines`]
/// uses it for `data` values, and [`find_short_line_end`] for the short
/// ones.)
#[inline(always)]
pub(super) fn find_line_end(hay: &[u8]) -> Option<usize> {
    memchr2(b'\n', b'\r', hay)
}

/// A field line: the name up to the first colon, and the value after it
/// with one leading space removed (empty when there is no colon).
pub(super) fn field(line: &[u8]) -> IResult<&[u8], (&[u8], &[u8]), ()> {
    (take_till(|b| b == b':'), opt(preceded(tag(&b":"[..]), preceded(opt(tag(&b" "[..])), rest))))
        .map(|(name, value): (&[u8], Option<&[u8]>)| (name, value.unwrap_or_default()))
        .parse(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What completes a held line: up to its first line end, with the LF
    /// of a CRLF.
    #[test]
    fn line_rest_takes_one_line_end() {
        for (chunk, rest) in [
            (&b"ab\ncd"[..], 3),
            (b"ab\r\ncd", 4),
            (b"ab\rcd", 3),
            (b"ab\r", 3),
            (b"ab\n\ncd", 3),
            (b"ab\r\r\n", 3),
            (b"abc", 3),
            (b"", 0),
        ] {
            assert_eq!(line_rest(chunk), rest, "{chunk:?}");
        }
    }

    /// The lines the fast path reads, with where their value starts, and
    /// some it leaves to the general reader; eight bytes and more (one
    /// word) and fewer.
    #[test]
    fn line_head_recognises_the_common_lines() {
        let head = |line: &[u8]| line_head(line).map(|(head, at)| (format!("{head:?}"), at));
        let some = |head: &str, at: usize| Some((head.to_owned(), at));
        for (line, want) in [
            (&b"data: {\"a\":1}\n"[..], some("Data", 6)),
            (b"data:{\"a\":1}\n", some("Data", 5)),
            (b"id: 12345\n", some("Id", 4)),
            (b"id:12345\n", some("Id", 3)),
            (b"event: message\n", some("Event", 7)),
            (b"event:message\n", some("Event", 6)),
            (b"\ndata: x\n", some("Empty", 0)),
            (b"\r\ndata: x\n", some("Empty", 0)),
            (b"data x\n\n\n", None),
            (b"datum: 12\n", None),
            (b"retry: 1000\n", None),
            (b": comment\n", None),
            // Short: the line may go on in the next chunk.
            (b"data:x\n", some("Data", 5)),
            (b"data: \n", some("Data", 6)),
            (b"data:", None),
            (b"id: 1\n", some("Id", 4)),
            (b"id:\n", some("Id", 3)),
            (b"event:x", some("Event", 6)),
            (b"\n", some("Empty", 0)),
            (b"\r", some("Empty", 0)),
            (b"dat", None),
            (b"retry:", None),
        ] {
            assert_eq!(head(line), want, "{:?}", String::from_utf8_lossy(line));
        }
    }

    /// The first CR or LF (and NUL when asked) within the first word, the
    /// second, and past them.
    #[test]
    fn find_short_line_end_finds_the_first_end() {
        for (hay, lf_cr, with_nul) in [
            (&b"\nabc"[..], Some(0), Some(0)),
            (b"ab\rc\n", Some(2), Some(2)),
            (b"abcdefg\n", Some(7), Some(7)),
            (b"abcdefghij\r\n", Some(10), Some(10)),
            (b"abc\0def\n", Some(7), Some(3)),
            (b"abcdefghijk\0mn\r", Some(14), Some(11)),
            (b"abcdefghijklmnopqrs\n", Some(19), Some(19)),
            (b"abcdefghijklmnopq\0s\n", Some(19), Some(17)),
            (b"abcdefghijklmnopqrstuvwxyz", None, None),
            (b"", None, None),
        ] {
            assert_eq!(find_short_line_end::<false>(hay), lf_cr, "{hay:?}");
            assert_eq!(find_short_line_end::<true>(hay), with_nul, "{hay:?}");
        }
    }
}
