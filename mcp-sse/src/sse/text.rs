//! UTF-8 with replacement, and what of a chunk is known to be UTF-8.

use std::borrow::Cow;

/// UTF-8 with replacement; valid input (the common case) takes the fast
/// validation path.
pub(super) fn lossy(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

pub(super) fn into_string(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => lossy(e.as_bytes()),
    }
}

/// What of an input is known to be UTF-8: the lines read in place from a
/// chunk are validated together, on first need, rather than each on its own
/// (much of the cost of validating a short line is the call).
///
/// `input[start..start + text.len()]` is `text`; after it lies an invalid
/// sequence or the incomplete last code point of the input, up to `checked`,
/// from which on nothing was looked at.
#[derive(Debug, Clone, Copy)]
pub(super) struct Utf8Cache<'a> {
    start: usize,
    text: &'a str,
    checked: usize,
}

impl<'a> Utf8Cache<'a> {
    /// Nothing known; validation, when needed, starts at `start`.
    pub(super) fn at(start: usize) -> Self {
        Utf8Cache { start, text: "", checked: start }
    }

    /// Every range validated on its own.
    pub(super) fn none() -> Self {
        Utf8Cache { start: 0, text: "", checked: usize::MAX }
    }

    /// `input[start..end]` (a line or part of one) as text, with U+FFFD
    /// replacements: `input` must be the same every call.
    #[inline]
    pub(super) fn get(&mut self, input: &'a [u8], start: usize, end: usize) -> Cow<'a, str> {
        // A range from `checked` on was not looked at. (A range that starts
        // before it and ends past `text` spans an invalid sequence or the
        // incomplete end: it is replaced on its own below.)
        if start >= self.checked {
            self.validate(input);
        }
        if start >= self.start
            && let Some(text) = self.text.get(start - self.start..end - self.start)
        {
            return Cow::Borrowed(text);
        }
        lossy_cow(&input[start..end])
    }

    /// Validates `input` from where the last look ended.
    #[inline(never)]
    pub(super) fn validate(&mut self, input: &'a [u8]) {
        let from = self.checked;
        let (text, bad) = match std::str::from_utf8(&input[from..]) {
            Ok(text) => (text, 0),
            Err(e) => {
                let valid = &input[from..from + e.valid_up_to()];
                // Valid by the error; a second look, without `unsafe`.
                let text = std::str::from_utf8(valid).unwrap_or_default();
                let bad = e.error_len().unwrap_or(input.len() - from - text.len());
                (text, bad)
            }
        };
        self.start = from;
        self.text = text;
        self.checked = from + text.len() + bad.max(1);
    }
}

/// UTF-8 with replacement, borrowed when valid (`str::from_utf8` first:
/// `String::from_utf8_lossy` validates valid input several times slower).
pub(super) fn lossy_cow(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk is validated from the first range asked for to its end in one
    /// look, up to an invalid sequence; a range over that sequence is
    /// replaced on its own, and the look goes on after it.
    #[test]
    fn utf8_cache_validates_each_byte_once() {
        // An invalid byte at 5, an incomplete code point at 11.
        let input = b"ab\ncd\xFFef\ngh\xE2\x82";
        let mut cache = Utf8Cache::at(0);
        assert_eq!(cache.get(input, 0, 2), Cow::Borrowed("ab"));
        assert_eq!((cache.start, cache.text, cache.checked), (0, "ab\ncd", 6));
        assert_eq!(cache.get(input, 3, 5), Cow::Borrowed("cd"));
        let replaced: Cow<'_, str> = Cow::Owned("cd\u{FFFD}e".to_owned());
        assert_eq!(cache.get(input, 3, 7), replaced);
        assert_eq!(cache.checked, 6);
        assert_eq!(cache.get(input, 6, 8), Cow::Borrowed("ef"));
        assert_eq!((cache.start, cache.text, cache.checked), (6, "ef\ngh", input.len()));
        assert_eq!(cache.get(input, 9, 11), Cow::Borrowed("gh"));
        assert_eq!(cache.get(input, 9, 13), Cow::<str>::Owned("gh\u{FFFD}".to_owned()));
        // Valid to the end: nothing is left to look at.
        let mut cache = Utf8Cache::at(2);
        assert_eq!(cache.get(b"x\nab\n", 2, 4), Cow::Borrowed("ab"));
        assert_eq!((cache.start, cache.text, cache.checked), (2, "ab\n", 6));
    }
}
