//! Glob patterns over server and tool names: `*` is any run of
//! characters (none included), `?` one character, anything else itself,
//! case-sensitively. `github__*`, `*__delete_*`, `files__read_?ile`.

use std::fmt;

/// The longest pattern accepted (characters).
pub const MAX_PATTERN_LEN: usize = 256;

/// A glob pattern (see the module's documentation). Matching takes time
/// linear in the pattern's and the name's lengths multiplied, never
/// exponential, whatever the stars.
#[derive(Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    chars: Vec<char>,
}

impl Pattern {
    /// A pattern; `None` when it is blank or longer than
    /// [`MAX_PATTERN_LEN`] characters. Surrounding white space is dropped.
    pub fn new(text: &str) -> Option<Pattern> {
        let text = text.trim();
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() || chars.len() > MAX_PATTERN_LEN {
            return None;
        }
        Some(Pattern { text: text.to_owned(), chars })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let p = &self.chars;
        let s: Vec<char> = name.chars().collect();
        // The classic two-pointer walk: on a mismatch, go back to just
        // after the last star and let it swallow one more character.
        let (mut pi, mut si) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            match p.get(pi) {
                Some('*') => {
                    star = Some((pi, si));
                    pi += 1;
                }
                Some(&c) if c == '?' || c == s[si] => {
                    pi += 1;
                    si += 1;
                }
                _ => match star {
                    Some((sp, ss)) => {
                        pi = sp + 1;
                        si = ss + 1;
                        star = Some((sp, ss + 1));
                    }
                    None => return false,
                },
            }
        }
        p[pi..].iter().all(|&c| c == '*')
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.text)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
