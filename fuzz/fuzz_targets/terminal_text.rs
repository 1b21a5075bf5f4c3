//! Server text shown on a terminal (`mcp_proto::display::terminal_safe`):
//! never panics; whatever comes in, nothing a terminal acts on comes out
//! (no character `needs_escape` holds, and no line feed on one line);
//! line feeds are kept where lines are; clean text comes back as it was;
//! every character that is shown as itself keeps its order.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use mcp_proto::display::{Lines, needs_escape, terminal_safe};

fn check_text(text: &str) {
    let kept = terminal_safe(text, Lines::Keep);
    let one = terminal_safe(text, Lines::Escape);
    assert!(!kept.chars().any(needs_escape));
    assert!(!one.chars().any(|c| needs_escape(c) || c == '\n'));
    assert_eq!(kept.matches('\n').count(), text.matches('\n').count());
    let clean = !text.chars().any(needs_escape);
    assert_eq!(matches!(kept, Cow::Borrowed(_)), clean);
    if clean {
        assert_eq!(kept, text);
    }
    // The characters shown as themselves, in order, are a subsequence of
    // the output.
    let mut out = one.chars();
    for c in text.chars().filter(|c| !needs_escape(*c) && *c != '\n') {
        assert!(out.any(|o| o == c), "{c:?} lost");
    }
}

fuzz_target!(|bytes: &[u8]| check_text(&String::from_utf8_lossy(bytes)));
