//! JSON with comments and trailing commas (the "JSONC" VS Code and Cursor
//! write), turned into plain JSON before it is parsed.
//!
//! Outside strings, `// ...` to the end of the line and `/* ... */` become
//! spaces, and a comma followed (past white space and comments) by `}` or
//! `]` becomes a space. Every byte keeps its place and every line break
//! stays, so the parser's line and column point into the original text.
//! An unterminated `/*` is left as it is, for the parser to report where it
//! starts.

use std::borrow::Cow;

/// The text with comments and trailing commas blanked out; borrowed when
/// there were none.
pub(crate) fn strip(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !bytes.iter().any(|b| matches!(b, b'/' | b',')) {
        return Cow::Borrowed(text);
    }
    let mut out = bytes.to_vec();
    let mut changed = false;
    // The position of a comma not yet followed by anything but white space
    // and comments.
    let mut comma: Option<usize> = None;
    // The last byte outside white space and comments: a comma after `:`,
    // `,`, `[` or `{` follows no value, so it is an error, not trailing.
    let mut last = b' ';
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                comma = None;
                last = b'"';
                i = string_end(bytes, i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end =
                    bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |n| i + n);
                blank(&mut out[i..end]);
                changed = true;
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(n) = bytes[i + 2..].windows(2).position(|w| w == b"*/") else {
                    // Unterminated: the parser reports it here.
                    break;
                };
                let end = i + 2 + n + 2;
                blank(&mut out[i..end]);
                changed = true;
                i = end;
            }
            b',' => {
                comma = (!matches!(last, b':' | b',' | b'[' | b'{')).then_some(i);
                last = b',';
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                    changed = true;
                }
                last = bytes[i];
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            other => {
                comma = None;
                last = other;
                i += 1;
            }
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    // Only whole comments (every byte of them) and ASCII commas were
    // replaced by ASCII spaces, so the text is still UTF-8.
    match String::from_utf8(out) {
        Ok(text) => Cow::Owned(text),
        Err(_) => Cow::Borrowed(text),
    }
}

/// The index just past the string starting at `start` (a `"`), or the
/// end of the text when it is unterminated.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Spaces in place of a comment, keeping its line breaks.
fn blank(bytes: &mut [u8]) {
    for b in bytes {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn comments_and_trailing_commas() {
        let cases: &[(&str, &str)] = &[
            ("{\"a\": 1}", "{\"a\": 1}"),
            ("{\"a\": 1, // one\n}", "{\"a\": 1        \n}"),
            ("[1, /* two */ 2,]", "[1,           2 ]"),
            ("{\"a\": [1,\n  2,\n],\n}", "{\"a\": [1,\n  2 \n] \n}"),
            ("{\"u\": \"http://x/*y*/\", }", "{\"u\": \"http://x/*y*/\"  }"),
            ("{\"q\": \"a\\\"//b\",}", "{\"q\": \"a\\\"//b\" }"),
            ("/* é\n */{}", "     \n   {}"),
            ("{\"a\": 1 /* open", "{\"a\": 1 /* open"),
            ("[1,,]", "[1,,]"),
            ("{\"a\": ,}", "{\"a\": ,}"),
        ];
        for (input, expected) in cases {
            assert_eq!(strip(input), *expected, "{input:?}");
            assert_eq!(strip(input).len(), input.len(), "{input:?}");
        }
    }

    #[test]
    fn positions_of_errors_stay_right() {
        let text = "{\n  // a comment\n  \"a\": 1,\n  \"b\": ,\n}";
        let e = serde_json::from_str::<serde_json::Value>(&strip(text)).unwrap_err();
        assert_eq!((e.line(), e.column()), (4, 8));
    }
}
