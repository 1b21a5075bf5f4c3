//! Scans of JSON text that find a value's members, strings and ends
//! without decoding it: the plain paths of the client (a result's
//! `resultType`, a one-text-block tool result) and of the server (the
//! usual `tools/call` parameters) read through these, and fall back to a
//! decoding for anything they do not recognize.
//!
//! The scans assume what they are given is JSON or a prefix of it only
//! where each function says so; text that is not JSON gives some answer,
//! never a panic. One scan checks instead: [`is_one_value`], whether a
//! server's usual request carries one JSON value as its parameters.

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
#[inline]
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
/// [`SHORT`] bytes eight at a time ([`stop_from`]; a searcher's set-up
/// costs more than it saves on the short strings of a call, and the hit
/// is most often near), the rest, if any, by `memchr` (a long string of a
/// result).
#[inline]
pub(crate) fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    let head = &bytes[..bytes.len().min(SHORT)];
    if let Some((at, _)) = stop_from::<false>(head, 0) {
        return Some(at);
    }
    memchr::memchr2(b'"', b'\\', &bytes[head.len()..]).map(|at| SHORT + at)
}

/// The index of the first byte that stops a string's plain run: a quote,
/// a backslash or a control character (below 0x20, which JSON refuses
/// inside a string), all of `bytes` eight at a time ([`stop_from`]).
pub(crate) fn string_stop(bytes: &[u8]) -> Option<usize> {
    stop_from::<true>(bytes, 0).map(|(at, _)| at)
}

/// The first byte at or after `from` in `bytes` that is a quote or a
/// backslash, or a control character with `CONTROL`: its index and the
/// byte. Whole words are read from `from` on, past the string into the
/// text after it (a string of a message most often ends in its first
/// word or two); only the last bytes of the text, fewer than eight, one
/// at a time.
#[inline(always)]
fn stop_from<const CONTROL: bool>(bytes: &[u8], mut from: usize) -> Option<(usize, u8)> {
    while let Some(word) = bytes.get(from..).and_then(<[u8]>::first_chunk::<8>) {
        let v = u64::from_le_bytes(*word);
        let hits = stop_bits::<CONTROL>(v);
        if hits != 0 {
            let shift = hits.trailing_zeros() & !7;
            return Some((from + shift as usize / 8, (v >> shift) as u8));
        }
        from += 8;
    }
    let stops = |b: u8| b == b'"' || b == b'\\' || (CONTROL && b < 0x20);
    let rest = bytes.get(from..)?;
    rest.iter().position(|&b| stops(b)).map(|at| (from + at, rest[at]))
}

/// The high bit of each byte of the word `v` (little-endian) that is a
/// quote or a backslash, or a control character with `CONTROL`: not zero
/// exactly when there is one, in either byte order, and exact for the
/// lowest such byte, which is all a caller reads of the bits (a borrow
/// only runs upwards, into the bytes after it). A byte is below 0x21 once
/// xored with 0x02 exactly when it is a control character or a quote
/// (0x22), so with `CONTROL` two tests find all three kinds.
#[inline(always)]
pub(crate) fn stop_bits<const CONTROL: bool>(v: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // The high bit of each byte of `v` below `n` (at most 0x80).
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v & HIGH;
    let backslash = below(v ^ (ONES * u64::from(b'\\')), 1);
    if CONTROL {
        below(v ^ (ONES * 0x02), 0x21) | backslash
    } else {
        below(v ^ (ONES * u64::from(b'"')), 1) | backslash
    }
}

/// How deep [`is_one_value`] follows objects and arrays before it leaves
/// the text to the parser.
const MAX_CHECKED_DEPTH: u32 = 64;

/// Whether `text` is one JSON value, whitespace around it allowed, as
/// serde_json reads a raw value (`&RawValue`) from it: `true` only when it
/// would. `false` when it would not, and for values nested deeper than
/// [`MAX_CHECKED_DEPTH`], which this does not decide: the caller asks the
/// parser then. Nothing is allocated (the parser's check keeps a stack of
/// the open brackets on the heap past the first).
///
/// The grammar is serde_json's: strings without control characters, the
/// escapes `\" \\ \/ \b \f \n \r \t` and `\u` with four hex digits
/// (surrogates not paired: a raw value keeps them as written), numbers
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` of any size, `true`,
/// `false`, `null`, member names strings. `text` is a `str`, so its UTF-8
/// is already checked.
pub(crate) fn is_one_value(text: &str) -> bool {
    one_value(text.as_bytes(), &mut ()).is_some()
}

/// Where the usual `tools/call` members lie in the text of its parameters
/// (byte ranges): the name's characters (inside its quotes), the
/// arguments' text and, when there is one, the text of `_meta` (a client
/// asking for progress sends `{"progressToken":...}`). Found by
/// `decode_received` in the same pass that checks the text
/// ([`RawRequest::call`](super::RawRequest::call));
/// [`parts`](PlainCall::parts) and [`parts_and_meta`](PlainCall::parts_and_meta)
/// read them from that text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainCall {
    name: (usize, usize),
    arguments: Option<(usize, usize)>,
    meta: Option<(usize, usize)>,
    /// The length of the checked value's text (without whitespace after
    /// it): [`borrowed_parts`](PlainCall::borrowed_parts) takes no other text.
    len: usize,
}

impl PlainCall {
    /// The name and the arguments' text in `params`, the parameters' text
    /// these were found in: what [`plain_call`] gives for it (so `None`
    /// when the parameters have a `_meta`: see
    /// [`parts_and_meta`](PlainCall::parts_and_meta)). Other text gives
    /// some answer or `None`, never a panic.
    pub fn parts<'t>(&self, params: &'t str) -> Option<(&'t str, Option<&'t str>)> {
        if self.meta.is_some() {
            return None;
        }
        Some((params.get(self.name.0..self.name.1)?, span(params, self.arguments)?))
    }

    /// The name, the arguments' text and the text of `_meta` (any JSON
    /// value, `null` included, as written) in `params`, the parameters'
    /// text these were found in. Other text gives some answer or `None`,
    /// never a panic.
    pub fn parts_and_meta<'t>(
        &self,
        params: &'t str,
    ) -> Option<(&'t str, Option<&'t str>, Option<&'t str>)> {
        let name = params.get(self.name.0..self.name.1)?;
        Some((name, span(params, self.arguments)?, span(params, self.meta)?))
    }

    /// Whether the parameters have a `_meta` member.
    pub fn has_meta(&self) -> bool {
        self.meta.is_some()
    }

    /// [`parts`](PlainCall::parts), the arguments borrowed as a raw value
    /// without checking their text again: `params` is the checked text
    /// these places were found in (a raw value is one JSON value, and the
    /// arguments are one of its members' values), so its part is one
    /// value too. `None` for text of another length than the checked
    /// text's, or places that do not fall on its characters: the places
    /// are the decoding's for the text it boxed
    /// ([`RawRequest`](super::RawRequest) holds both), not for another.
    pub fn borrowed_parts<'t>(
        &self,
        params: &'t serde_json::value::RawValue,
    ) -> Option<(&'t str, Option<&'t serde_json::value::RawValue>)> {
        let text = params.get();
        if text.len() != self.len {
            return None;
        }
        // Without a `_meta`, as `parts`.
        let (name, arguments) = self.parts(text)?;
        let arguments = match arguments {
            Some(arguments) => Some(super::text::borrowed_raw(arguments).ok()?),
            None => None,
        };
        Some((name, arguments))
    }
}

/// The text of an optional member's value at `place` in `text`: `None`
/// when the place does not fall on its characters.
#[inline]
fn span(text: &str, place: Option<(usize, usize)>) -> Option<Option<&str>> {
    match place {
        Some((start, end)) => text.get(start..end).map(Some),
        None => Some(None),
    }
}

/// The usual `tools/call` parameters, exactly the members `name` (a string
/// without escapes) and `arguments` (not `null`), or `name` alone, each
/// once, in either order, member names without escapes, whitespace between
/// tokens allowed: the name and the arguments' text, found by a scan of
/// `text` (one JSON value) rather than a decoding of it. `None` for anything
/// else, which a decoding reads: when this gives the two, a decoding gives
/// the same.
pub fn plain_call(text: &str) -> Option<(&str, Option<&str>)> {
    let [name, arguments] = plain_members(text, ["name", "arguments"])?;
    let name = plain_str(name?)?;
    if arguments.is_some_and(|a| a.starts_with('n')) {
        return None;
    }
    Some((name, arguments))
}

/// [`is_one_value`] and, in the same pass, where the members [`plain_call`]
/// reads lie, and `_meta`: `None` when `text` is not one value (or is
/// nested past the checked depth), `Some(None)` when it is but not the
/// usual call (with or without a `_meta`).
pub(crate) fn checked_call(text: &str) -> Option<Option<PlainCall>> {
    let mut members = CallMembers { plain: true, ..CallMembers::default() };
    one_value(text.as_bytes(), &mut members)?;
    Some(members.call(text.as_bytes()))
}

/// What [`one_value`] reports of the members of the outermost object.
trait TopMembers {
    /// A member of the outermost object: its name's text with its quotes
    /// (`key`), its value starting at `value`.
    fn member(&mut self, key: &[u8], value: usize);
    /// The value of the last member given ends at `end`.
    fn end(&mut self, end: usize);
}

/// Nothing reported.
impl TopMembers for () {
    #[inline(always)]
    fn member(&mut self, _: &[u8], _: usize) {}
    #[inline(always)]
    fn end(&mut self, _: usize) {}
}

/// The members [`plain_call`] reads, and `_meta`, as [`one_value`]
/// passes them.
#[derive(Default)]
struct CallMembers {
    /// Only `name`, `arguments` and `_meta` so far, each once.
    plain: bool,
    name: Option<(usize, usize)>,
    arguments: Option<(usize, usize)>,
    meta: Option<(usize, usize)>,
    /// The member whose value is being read.
    reading: Member,
}

/// A member [`CallMembers`] keeps.
#[derive(Default, Clone, Copy)]
enum Member {
    #[default]
    Name,
    Arguments,
    Meta,
}

impl CallMembers {
    fn slot(&mut self, member: Member) -> &mut Option<(usize, usize)> {
        match member {
            Member::Name => &mut self.name,
            Member::Arguments => &mut self.arguments,
            Member::Meta => &mut self.meta,
        }
    }
}

impl TopMembers for CallMembers {
    fn member(&mut self, key: &[u8], value: usize) {
        // A name with an escape is another name here.
        let member = match key {
            b"\"name\"" => Member::Name,
            b"\"arguments\"" => Member::Arguments,
            b"\"_meta\"" => Member::Meta,
            _ => {
                self.plain = false;
                return;
            }
        };
        if self.slot(member).replace((value, value)).is_some() {
            self.plain = false;
        }
        self.reading = member;
    }

    fn end(&mut self, end: usize) {
        if let Some(span) = self.slot(self.reading) {
            span.1 = end;
        }
    }
}

impl CallMembers {
    /// What [`plain_call`] gives, as places in `text`, the text checked.
    fn call(&self, text: &[u8]) -> Option<PlainCall> {
        let (start, end) = self.name.filter(|_| self.plain)?;
        // A string without escapes: its characters between the quotes.
        let name = text.get(start..end)?;
        if name.first() != Some(&b'"') || quote_or_backslash(&name[1..])? != name.len() - 2 {
            return None;
        }
        let arguments = self.arguments;
        if arguments.is_some_and(|(start, _)| text.get(start) == Some(&b'n')) {
            return None;
        }
        let len = text.len()
            - text.iter().rev().take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')).count();
        Some(PlainCall { name: (start + 1, end - 1), arguments, meta: self.meta, len })
    }
}

/// [`is_one_value`], `None` for `false`; the outermost object's members
/// reported to `top`.
fn one_value(b: &[u8], top: &mut impl TopMembers) -> Option<()> {
    // Bit `i` of `objects`: whether the bracket open at depth `i + 1`
    // from the innermost is an object's.
    let mut objects = 0u64;
    let mut depth = 0u32;
    let mut at = skip_space(b, 0);
    loop {
        // A value starts at `at`: `at` moves past it.
        at = match *b.get(at)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_CHECKED_DEPTH {
                    return None;
                }
                let object = open == b'{';
                let first = skip_space(b, at + 1);
                if b.get(first) == Some(if object { &b'}' } else { &b']' }) {
                    first + 1
                } else {
                    objects = (objects << 1) | u64::from(object);
                    depth += 1;
                    at = if object { member_value(b, first, depth == 1, top)? } else { first };
                    continue;
                }
            }
            b'"' => checked_string_end(b, at)?,
            b'-' | b'0'..=b'9' => number_end(b, at)?,
            b't' => literal_end(b, at, b"true")?,
            b'f' => literal_end(b, at, b"false")?,
            b'n' => literal_end(b, at, b"null")?,
            _ => return None,
        };
        // After a value: a comma and the next, or closing brackets.
        loop {
            if depth == 1 {
                // A member's value of the outermost object, or an element
                // of the outermost array (then no member was reported).
                top.end(at);
            }
            at = skip_space(b, at);
            if depth == 0 {
                return (at == b.len()).then_some(());
            }
            let object = objects & 1 == 1;
            match *b.get(at)? {
                b',' => {
                    let next = skip_space(b, at + 1);
                    at = if object { member_value(b, next, depth == 1, top)? } else { next };
                    break;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            at += 1;
            objects >>= 1;
            depth -= 1;
        }
    }
}

/// A member's name (a string) at `at` and its colon: where its value
/// starts; reported to `top` when the member is the outermost object's
/// (`outer`).
fn member_value(b: &[u8], at: usize, outer: bool, top: &mut impl TopMembers) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let key_end = checked_string_end(b, at)?;
    let colon = skip_space(b, key_end);
    if b.get(colon) != Some(&b':') {
        return None;
    }
    let value = skip_space(b, colon + 1);
    if outer {
        top.member(&b[at..key_end], value);
    }
    Some(value)
}

/// Just past the string opening at `at` (a quote), its escapes and
/// characters checked (its UTF-8 is the `str`'s, checked before).
#[inline]
fn checked_string_end(b: &[u8], at: usize) -> Option<usize> {
    let mut from = at + 1;
    loop {
        let (stop, byte) = stop_from::<true>(b, from)?;
        match byte {
            b'"' => return Some(stop + 1),
            b'\\' => from = stop + 1 + escape_len(b.get(stop + 1..)?)?,
            // A control character.
            _ => return None,
        }
    }
}

/// The length of the escape whose backslash is just before `rest`.
fn escape_len(rest: &[u8]) -> Option<usize> {
    match rest.first()? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => rest.get(1..5)?.iter().all(u8::is_ascii_hexdigit).then_some(5),
        _ => None,
    }
}

/// Just past the number starting at `at` (a `-` or a digit), its grammar
/// checked (a leading zero is the whole integer part; a digit after it is
/// refused by what may follow a value).
fn number_end(b: &[u8], at: usize) -> Option<usize> {
    let digits = |from: usize| {
        b.get(from..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count())
    };
    let mut i = at + usize::from(b[at] == b'-');
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i += digits(i),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}

/// Just past the literal `word` at `at`.
fn literal_end(b: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    (b.get(at..at + word.len())? == word).then_some(at + word.len())
}

/// How many bytes [`quote_or_backslash`] reads a word at a time before it
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
pub(crate) mod tests {
    use super::*;
    use serde_json::Value;
    use serde_json::value::RawValue;

    /// JSON texts and near misses: every kind of value, escapes good and
    /// bad, numbers of every shape, whitespace, nesting, cut text.
    pub(crate) fn json_cases() -> Vec<String> {
        let texts = [
            r#"{"name":"echo","arguments":{"message":"the quick brown fox jumps over the lazy dog"}}"#,
            r#"{"name":"add","arguments":{"a":1,"b":-2.5e-3,"c":[true,false,null],"d":{}}}"#,
            r#"{ "a" : [ 1 , { "b" : "c" } ] , "e" : [ ] , "f" : { } }"#,
            "{\n\t\"a\"\r:\n1\n}\n ",
            r#"{"s":"\" \\ \/ \b \f \n \r \t \u00e9 \uABCD \ud800 \uDFFF"}"#,
            r#"{"s":"é😀 \u0000 ~\u007f"}"#,
            r#"{"s":"\x"}"#,
            r#"{"s":"\u12"}"#,
            r#"{"s":"\u12g4"}"#,
            r#"{"s":"\U1234"}"#,
            r#"{"s":"\'"}"#,
            "{\"s\":\"a\tb\"}",
            "{\"s\":\"a\nb\"}",
            "{\"s\":\"a\u{1f}b\"}",
            "{\"s\":\"\u{7f}\"}",
            r#"{"a":0,"b":-0,"c":0.5,"d":-0.0e0,"e":1E+9,"f":1e-9,"g":123456789012345678901234567890,"h":1e400}"#,
            r#"{"a":01}"#,
            r#"{"a":-}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":1e+}"#,
            r#"{"a":+1}"#,
            r#"{"a":0x10}"#,
            r#"{"a":1.5.5}"#,
            r#"{"a":--1}"#,
            r#"{"a":-01}"#,
            r#"{"a":NaN}"#,
            r#"{"a":Infinity}"#,
            r#"{"a":tru}"#,
            r#"{"a":truex}"#,
            r#"{"a":nul}"#,
            r#"{"a":True}"#,
            r#"{"a":1,}"#,
            r#"{"a":1,,"b":2}"#,
            r#"{,"a":1}"#,
            r#"{"a" 1}"#,
            r#"{"a"::1}"#,
            r#"{a:1}"#,
            r#"{1:1}"#,
            r#"{'a':1}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":[,1]}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":[1}"#,
            r#"{"a":{]}"#,
            r#"{"a":1}}"#,
            r#"{"a":1} 2"#,
            r#"{"a":1}x"#,
            r#"{"a":"}"#,
            r#"{"a":"\"}"#,
            r#"{"a":"a\\"}"#,
            "{} ",
            "{}\t\n",
            "{}/",
            "[1,2,[3,[4,[5]]]]",
            "\"text\"",
            "123",
            "-1.5e+3",
            "true",
            "false",
            "null",
            "",
            " ",
            "[",
            "]",
            "{",
            "}",
            "\u{a0}{}",
            "{}\u{a0}",
            "{\"a\":1}\u{0}",
        ];
        let mut cases: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        let long = "the quick brown fox jumps over the lazy dog ".repeat(4);
        for filler in ["", "\\\"", "\\u0041", "é", "\t"] {
            cases.push(format!(r#"{{"m":"{long}{filler}{long}"}}"#));
        }
        cases
    }

    /// Whether serde_json reads `text` as one raw value.
    fn parser_reads(text: &str) -> bool {
        serde_json::from_str::<&RawValue>(text).is_ok()
    }

    #[test]
    fn one_value_is_what_the_parser_reads() {
        let mut checked = 0;
        let mut valid = 0;
        let mut check = |text: &str| {
            let parsed = parser_reads(text);
            assert_eq!(is_one_value(text), parsed, "{text:?}");
            checked += 1;
            valid += usize::from(parsed);
        };
        // Each case, each of its prefixes, and each of its characters
        // replaced by bytes that matter to the grammar.
        let swaps = [
            "", " ", "\"", "\\", "/", "{", "}", "[", "]", ":", ",", "0", "1", "-", "+", ".", "e",
            "E", "u", "a", "n", "t", "\u{0}", "\u{1f}", "\n", "\u{7f}", "é",
        ];
        for case in json_cases() {
            check(&case);
            for (i, c) in case.char_indices() {
                check(&case[..i]);
                for swap in swaps {
                    check(&format!("{}{swap}{}", &case[..i], &case[i + c.len_utf8()..]));
                }
            }
        }
        assert!(checked > 50_000 && valid > 5_000, "{checked} {valid}");
    }

    #[test]
    fn nesting_past_the_checked_depth_is_left_to_the_parser() {
        for n in [1, 2, 30, 63, 64, 65, 66, 127, 128, 129, 300] {
            for (open, close) in [("[", "]"), (r#"{"a":"#, "}"), (r#"[{"a":"#, "}]")] {
                let inner = ["", "1", r#""s""#, "[]", "{}"];
                for value in inner {
                    let text = format!("{}{value}{}", open.repeat(n), close.repeat(n));
                    let depth = n * open.matches(['[', '{']).count()
                        + usize::from(value.starts_with(['[', '{']));
                    if depth <= MAX_CHECKED_DEPTH as usize || !parser_reads(&text) {
                        assert_eq!(is_one_value(&text), parser_reads(&text), "{text}");
                    } else {
                        // Not decided here: the caller asks the parser.
                        assert!(!is_one_value(&text), "{text}");
                    }
                    let unbalanced = format!("{}{value}{}", open.repeat(n), close.repeat(n - 1));
                    assert!(!is_one_value(&unbalanced), "{unbalanced}");
                }
            }
        }
    }

    #[test]
    fn a_string_stops_where_a_byte_search_stops() {
        let slow = |b: &[u8]| b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
        for len in (0..40).chain([63, 64, 65, 71, 72, 73, 100, 200]) {
            for filler in [b'a', 0x20, 0x21, 0x7f, 0x80, 0x9f, 0xa0, 0xff, b'[', b'!'] {
                let mut bytes = vec![filler; len];
                assert_eq!(string_stop(&bytes), slow(&bytes), "{len} {filler:#x}");
                for at in 0..len {
                    for target in [b'"', b'\\', 0x00, 0x01, 0x0a, 0x1f] {
                        bytes[at] = target;
                        assert_eq!(string_stop(&bytes), Some(at), "{len} {at} {target:#x}");
                        if at + 1 < len {
                            bytes[len - 1] = 0x00;
                            assert_eq!(string_stop(&bytes), Some(at), "{len} {at}");
                            bytes[len - 1] = filler;
                        }
                        bytes[at] = filler;
                    }
                }
            }
        }
    }

    /// Bytes on each side of what the word test finds: the three kinds it
    /// stops at, their neighbours (0x20 and 0x23 become 0x22 and 0x21
    /// once xored with 0x02), non-ASCII bytes, and one that is nothing.
    const EDGES: [u8; 16] = [
        b'"', b'\\', 0x00, 0x01, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa0, 0xa2, 0xdc,
        b'a',
    ];

    /// [`stop_from`] against a byte-at-a-time search: one or two chosen
    /// bytes at every pair of places of texts shorter and longer than a
    /// word, searched from every start of the first word and a half, with
    /// and without control characters.
    #[test]
    fn a_stop_is_found_where_a_byte_search_finds_it() {
        fn check(bytes: &[u8], from: usize) {
            let slow = |control: bool| {
                let stops = |b: u8| b == b'"' || b == b'\\' || (control && b < 0x20);
                bytes
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, b)| stops(**b))
                    .map(|(at, b)| (at, *b))
            };
            assert_eq!(stop_from::<true>(bytes, from), slow(true), "{bytes:x?} from {from}");
            assert_eq!(stop_from::<false>(bytes, from), slow(false), "{bytes:x?} from {from}");
        }
        let mut searched = 0;
        for len in 0..=19 {
            let mut bytes = vec![b'a'; len];
            for from in 0..=len.min(9) {
                check(&bytes, from);
                for i in 0..len {
                    for x in EDGES {
                        bytes[i] = x;
                        check(&bytes, from);
                        for j in i + 1..len {
                            for y in EDGES {
                                bytes[j] = y;
                                check(&bytes, from);
                                searched += 1;
                            }
                            bytes[j] = b'a';
                        }
                    }
                    bytes[i] = b'a';
                }
            }
        }
        assert!(searched > 500_000, "{searched}");
        // Past the end: nothing to find, no panic.
        assert_eq!(stop_from::<true>(b"ab", 3), None);
    }

    /// A string as the scan checks it and the parser reads it: a quote, a
    /// backslash (good and bad escapes), a control character, a non-ASCII
    /// character at each place 0..=16 of strings shorter and longer than a
    /// word, as a member name and as a value, with text after the string
    /// shorter and longer than a word, and cut at every byte (text ending
    /// mid-string).
    #[test]
    fn each_place_in_a_string_is_checked_as_the_parser_reads_it() {
        let inserts = [
            "\"", "\\\"", "\\\\", "\\", "\\u0041", "\\u00g1", "\\x", "\\/", "\u{0}", "\u{1f}",
            "\n", " ", "!", "#", "\u{7f}", "é", "😀", "\u{a0}",
        ];
        let (mut checked, mut valid) = (0, 0);
        for len in 0..=17 {
            for at in 0..=len.min(16) {
                for insert in inserts {
                    let string = format!("{}{insert}{}", "a".repeat(at), "b".repeat(len - at));
                    for shape in ["{\"k\":\"@\"}", "{\"@\":1}", "[\"@\",\"the text after it\"]"] {
                        let text = shape.replace('@', &string);
                        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
                            let cut = &text[..end];
                            let parsed = parser_reads(cut);
                            assert_eq!(is_one_value(cut), parsed, "{cut:?}");
                            assert_eq!(checked_call(cut).is_some(), parsed, "{cut:?}");
                            checked += 1;
                            valid += usize::from(parsed);
                        }
                    }
                }
            }
        }
        assert!(checked > 100_000 && valid > 2_000, "{checked} {valid}");
    }

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

    /// `tools/call` parameters of every usual shape and near misses of it:
    /// names and arguments of every kind, members twice, other members,
    /// escapes in member names, nesting, cut text.
    pub(crate) fn call_cases() -> Vec<String> {
        let names = [
            r#""echo""#,
            r#""""#,
            r#""e\"cho""#,
            r#""\u0065cho""#,
            r#""é😀 tool""#,
            "1",
            "null",
            "{}",
            r#"["a"]"#,
        ];
        let arguments = [
            r#"{"message":"hi"}"#,
            r#"{"a":{"b":[1,{"c":"}],"}]},"d":"\"name\":1"}"#,
            "{ }",
            "null",
            "nul",
            "[]",
            "1",
            "-0.5e3",
            "true",
            r#""s""#,
        ];
        let shapes = [
            r#"{"name":@,"arguments":#}"#,
            r#"{"arguments":#,"name":@}"#,
            " {\n \"name\" :\t@ ,\r\n\"arguments\":  #  } ",
            r#"{"name":@}"#,
            r#"{"arguments":#}"#,
            r#"{"name":@,"arguments":#,"name":@}"#,
            r#"{"name":@,"arguments":#,"arguments":#}"#,
            r#"{"name":@,"arguments":#,"_meta":{}}"#,
            r#"{"name":@,"arguments":#,"_meta":{"progressToken":1}}"#,
            r#"{"_meta":{"progressToken":"t-1"},"arguments":#,"name":@}"#,
            r#"{"name":@, "_meta" : null ,"arguments":#}"#,
            r#"{"name":@,"_meta":{},"arguments":#,"_meta":{}}"#,
            r#"{"name":@,"\u005fmeta":{},"arguments":#}"#,
            r#"{"_meta":{"name":@},"name":@,"arguments":#}"#,
            r#"{"n\u0061me":@,"arguments":#}"#,
            r#"{"name":@,"\u0061rguments":#}"#,
            r#"{"Name":@,"arguments":#}"#,
            r#"{"name":@,"argument":#}"#,
            r#"{"name" @,"arguments":#}"#,
            r#"{"name":@,"arguments":#,}"#,
            r#"{"name":@,"arguments":#}}"#,
            r#"{"name":@,"arguments":#"#,
            r#"{"name":@ "arguments":#}"#,
            "[@,#]",
            r#"[{"name":@,"arguments":#}]"#,
        ];
        let mut cases = vec!["{}".to_owned(), "{ }".to_owned()];
        for shape in shapes {
            for name in names {
                for argument in arguments {
                    cases.push(shape.replace('@', name).replace('#', argument));
                }
            }
        }
        cases
    }

    /// What [`checked_call`] must give: [`is_one_value`]'s answer and
    /// [`plain_call`]'s members (of the text from its first brace, as the
    /// server's plain path has it).
    fn check_call(text: &str) -> bool {
        let checked = checked_call(text);
        assert_eq!(checked.is_some(), is_one_value(text), "{text:?}");
        let Some(call) = checked else { return false };
        let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r']);
        let expected = plain_call(trimmed);
        assert_eq!(call.and_then(|c| c.parts(text)), expected, "{text:?}");
        assert_eq!(call.and_then(|c| c.parts_and_meta(text)), scanned_call(trimmed), "{text:?}");
        // A call's places read nothing past the text, in any other text.
        if let Some(call) = call {
            for end in 0..text.len() {
                if let Some(cut) = text.get(..end) {
                    let _ = call.parts_and_meta(cut);
                }
            }
        }
        expected.is_some()
    }

    /// What [`PlainCall::parts_and_meta`] must give: [`plain_call`]'s
    /// members, `_meta` allowed too, as a scan of the text finds them.
    fn scanned_call(text: &str) -> Option<(&str, Option<&str>, Option<&str>)> {
        let [name, arguments, meta] = plain_members(text, ["name", "arguments", "_meta"])?;
        let name = plain_str(name?)?;
        if arguments.is_some_and(|a| a.starts_with('n')) {
            return None;
        }
        Some((name, arguments, meta))
    }

    #[test]
    fn a_checked_call_is_one_value_and_plain_call() {
        let (mut checked, mut found) = (0, 0);
        let swaps = ["", " ", "\"", "\\", "{", "}", "[", "]", ":", ",", "n", "\u{1f}"];
        for case in call_cases().iter().chain(&json_cases()) {
            found += usize::from(check_call(case));
            checked += 1;
            for (i, c) in case.char_indices() {
                check_call(&case[..i]);
                for swap in swaps {
                    found += usize::from(check_call(&format!(
                        "{}{swap}{}",
                        &case[..i],
                        &case[i + c.len_utf8()..]
                    )));
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000 && found > 1_000, "{checked} {found}");
    }

    /// [`PlainCall::borrowed_parts`] against the general path: for every
    /// usual call and near miss the check accepts, the arguments borrowed
    /// without a second check are the text `RawValue::from_string` owns
    /// (and accepts); the places refused on any other text.
    #[test]
    fn borrowed_arguments_are_what_a_check_owns() {
        use serde_json::value::RawValue;
        let (mut owned, mut refused) = (0, 0);
        for case in call_cases() {
            let value = case.trim_matches([' ', '\t', '\n', '\r']);
            let Some(Some(call)) = checked_call(value) else { continue };
            let params = RawValue::from_string(value.to_owned()).expect("checked");
            // Not with a `_meta`, as `plain_call`.
            let Some((name, arguments)) = call.borrowed_parts(&params) else {
                assert!(call.has_meta() && plain_call(value).is_none(), "{case:?}");
                continue;
            };
            let (plain_name, plain_arguments) = plain_call(value).expect("a plain call");
            assert_eq!(name, plain_name, "{case:?}");
            let checked = plain_arguments.map(|a| RawValue::from_string(a.to_owned()).expect(a));
            assert_eq!(arguments.map(RawValue::get), checked.as_ref().map(|a| a.get()), "{case:?}");
            owned += 1;
            // Other text: the call in an array, a character more, another call.
            for other in [format!("[{value}]"), format!("{{}}{}", &value[1..]), "{}".to_owned()] {
                if let Ok(other) = RawValue::from_string(other) {
                    assert!(call.borrowed_parts(&other).is_none(), "{case:?} in {other}");
                    refused += 1;
                }
            }
        }
        assert!(owned > 100 && refused > 100, "{owned} {refused}");
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
