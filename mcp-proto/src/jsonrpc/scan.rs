//! Scans of JSON text that find a value's members, strings and ends
//! without decoding it: the plain paths of the client (a result's
//! `resultType`, a one-text-block tool result) and of the server (the
//! usual `tools/call` parameters) read through these, and fall back to a
//! decoding for anything they do not recognize.
//!
//! The scans assume what they are given is JSON or a prefix of it only
//! where each function says so; text that is not JSON gives some answer,
//! never a panic.

/// The members of a JSON object's text, `text` one JSON value (a raw
/// value's text, or a part of one that is a value), when they are only
/// those named, each at most once, their names written without escapes:
/// each one's value as text, in the order of `names`. `None` for any other
/// text (another member, a member twice, an escape in a member name, not
/// an object), which a decoding reads; when this gives the members, a
/// decoding into a struct of those members gives the same (a `null` value
/// is given as its text, `null`, which an `Option` member reads as none).
///
/// Since the text is JSON, a string ends at its first unescaped quote
/// (found eight bytes at a time) and a container where its brackets
/// balance, strings skipped: nothing else needs checking.
pub fn plain_members<'t, const N: usize>(
    text: &'t str,
    names: [&str; N],
) -> Option<[Option<&'t str>; N]> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut values = [None; N];
    let mut at = skip_space(bytes, 1);
    if bytes.get(at) == Some(&b'}') {
        return Some(values);
    }
    loop {
        // A member name without escapes, then its value.
        let (key, end) = plain_string(bytes, at)?;
        at = skip_space(bytes, end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, at + 1);
        at = value_end(bytes, start)?;
        let slot = values.get_mut(names.iter().position(|n| n.as_bytes() == key)?)?;
        if slot.replace(&text[start..at]).is_some() {
            return None;
        }
        at = skip_space(bytes, at);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return Some(values),
            _ => return None,
        }
    }
}

/// A JSON string's text without escapes (`"..."`) as the string it is:
/// `None` for any other value, and for a string with an escape (or a
/// quote inside, which a JSON string's text never has).
pub fn plain_str(value: &str) -> Option<&str> {
    let inner = value.strip_prefix('"')?.strip_suffix('"')?;
    quote_or_backslash(inner.as_bytes()).is_none().then_some(inner)
}

/// The first byte at or after `at` that is not JSON whitespace.
pub(crate) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The bytes of the string starting at `at` (a quote) and the index past
/// its closing quote; `None` if there is no string there or it has an
/// escape.
pub(crate) fn plain_string(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let rest = &bytes[at + 1..];
    let end = quote_or_backslash(rest)?;
    (rest[end] == b'"').then(|| (&rest[..end], at + 1 + end + 1))
}

/// Where the string opening at `at` (a quote) ends: just after its closing
/// quote.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut from = at + 1;
    loop {
        let found = from + quote_or_backslash(bytes.get(from..)?)?;
        match bytes[found] {
            b'"' => return Some(found + 1),
            // An escape: the byte after the backslash is never the end.
            _ => from = found + 2,
        }
    }
}

/// The index of the first quote or backslash in `bytes`: the first
/// [`SHORT`] bytes eight at a time (a searcher's set-up costs more than it
/// saves on the short strings of a call, and the hit is most often near),
/// the rest, if any, by `memchr` (a long string of a result).
pub(crate) fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // The high bit of each zero byte of `v`: exact for the lowest zero
    // byte (a borrow only runs upwards, into the bytes after it).
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let (head, tail) = bytes.split_at(bytes.len().min(SHORT));
    let mut chunks = head.chunks_exact(8);
    for (i, chunk) in chunks.by_ref().enumerate() {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(chunk);
        let v = u64::from_le_bytes(eight);
        let hits = zero(v ^ (ONES * u64::from(b'"'))) | zero(v ^ (ONES * u64::from(b'\\')));
        if hits != 0 {
            return Some(i * 8 + hits.trailing_zeros() as usize / 8);
        }
    }
    let done = head.len() - chunks.remainder().len();
    if let Some(at) = chunks.remainder().iter().position(|&b| b == b'"' || b == b'\\') {
        return Some(done + at);
    }
    memchr::memchr2(b'"', b'\\', tail).map(|at| SHORT + at)
}

/// How many bytes [`quote_or_backslash`] reads eight at a time before it
/// hands the rest to `memchr`.
const SHORT: usize = 64;

/// Where the JSON value starting at `at` ends: a string, an object or an
/// array (skipped to its matching close, strings and all), or a scalar (up
/// to the next `,`, `}`, `]` or whitespace; `None` when empty). Nothing is
/// checked beyond what finds the value's end; `None` when the text ends
/// first.
pub(crate) fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        // A number or a literal: up to what follows a value.
        _ => {
            let rest = &bytes[at..];
            let len = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            (len > 0).then_some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_plain_str_is_the_string_a_decoding_reads() {
        let cases = [
            r#""""#,
            r#""echo""#,
            r#""the quick brown fox jumps""#,
            r#""é😀 x""#,
            r#""0123456\"89""#,
            r#""01234567\\""#,
            r#""\u0041""#,
            "1",
            "null",
            r#"["a"]"#,
            r#"{"a":"b"}"#,
        ];
        for case in cases {
            let decoded = match serde_json::from_str::<Value>(case) {
                Ok(Value::String(s)) if !case.contains('\\') => Some(s),
                _ => None,
            };
            assert_eq!(plain_str(case).map(str::to_owned), decoded, "{case}");
        }
        assert_eq!(plain_str(r#""a"b""#), None);
    }

    #[test]
    fn a_quote_or_a_backslash_is_found_where_a_byte_search_finds_it() {
        let fillers =
            [b'a', 0x00, 0x01, b'!', b'#', b'[', b']', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xff];
        for len in (0..40).chain([63, 64, 65, 71, 72, 73, 100, 200]) {
            for filler in fillers {
                let mut bytes = vec![filler; len];
                let slow = |b: &[u8]| b.iter().position(|&c| c == b'"' || c == b'\\');
                assert_eq!(quote_or_backslash(&bytes), slow(&bytes), "{len} {filler:#x}");
                for at in 0..len {
                    for target in [b'"', b'\\'] {
                        bytes[at] = target;
                        assert_eq!(quote_or_backslash(&bytes), Some(at), "{len} {at} {filler:#x}");
                        // A second one after it does not move the first.
                        if at + 1 < len {
                            bytes[len - 1] = b'"';
                            assert_eq!(quote_or_backslash(&bytes), Some(at), "{len} {at}");
                            bytes[len - 1] = filler;
                        }
                        bytes[at] = filler;
                    }
                }
            }
        }
    }

    /// What a decoding reads of an object of the members `a` and `b`.
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct OnlyAAndB<'a> {
        #[serde(borrow)]
        a: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow)]
        b: Option<&'a serde_json::value::RawValue>,
    }

    #[test]
    fn plain_members_are_what_a_decoding_reads() {
        let values = [
            r#""x""#,
            r#""e\"c\\ho""#,
            r#""}],{[""#,
            r#""é😀""#,
            r#""0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\"""#,
            "1",
            "-1.5e3",
            "true",
            "null",
            "[]",
            r#"[1,"]",{"a":"}"}]"#,
            r#"{"m":"a \"quoted\" }","n":[{"deep":[[]]}]}"#,
            r#"{ "a" : { "b" : [ 1 , 2 ] } }"#,
        ];
        let shapes = [
            r#"{"a":@,"b":#}"#,
            r#"{"b":#,"a":@}"#,
            " {\n \"a\" :\t@ ,\r\n\"b\":  #  } ",
            r#"{"a":@}"#,
            "{}",
            "{ }",
            r#"{"a":@,"b":#,"a":@}"#,
            r#"{"a":@,"b":#,"c":null}"#,
            r#"{"\u0061":@,"b":#}"#,
            r#"{"A":@,"b":#}"#,
            "[@,#]",
        ];
        let mut plain = 0;
        for shape in shapes {
            for a in values {
                for b in values {
                    let case = shape.replace('@', a).replace('#', b);
                    let decoded = serde_json::from_str::<OnlyAAndB<'_>>(&case);
                    let scanned = plain_members(case.trim(), ["a", "b"]);
                    match (scanned, decoded) {
                        (Some([sa, sb]), Ok(d)) => {
                            plain += 1;
                            // A decoding into an `Option` reads `null` as none.
                            fn text(t: Option<&str>) -> Option<&str> {
                                t.filter(|t| *t != "null")
                            }
                            assert_eq!(text(sa), d.a.map(|r| r.get()), "{case}");
                            assert_eq!(text(sb), d.b.map(|r| r.get()), "{case}");
                        }
                        (Some(_), Err(e)) => panic!("{case}: scanned, but {e}"),
                        // Left to a decoding that reads it: only a member
                        // name with an escape, and an array (which a
                        // derived struct takes as its members in order).
                        (None, Ok(_)) => {
                            assert!(case.contains(r#""\u0061""#) || case.starts_with('['), "{case}")
                        }
                        (None, Err(_)) => {}
                    }
                }
            }
        }
        assert!(plain > 400, "{plain}");
    }
}
