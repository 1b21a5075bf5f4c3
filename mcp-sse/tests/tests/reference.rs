//! A literal, slow reading of "Interpreting an event stream": decode the
//! whole stream as UTF-8 with replacement, drop one leading U+FEFF, split it
//! into lines, interpret each line. The decoder must agree with it on every
//! input (see `sse_props`).

use mcp_sse::sse::{DecodeError, Event, Item};

/// The items of a whole stream, unbounded.
pub(crate) fn interpret(input: &[u8]) -> Vec<Item> {
    let text = String::from_utf8_lossy(input);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);

    // Lines end with CRLF, LF or CR; what follows the last line end is not a
    // line.
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            c => line.push(c),
        }
    }
    let unfinished_line = line;

    let mut items = Vec::new();
    let mut data = String::new();
    let mut event_type = String::new();
    let mut id_buffer = String::new();
    let mut block_has_id = false;
    let mut block_retry = None;
    let mut block_fields = 0usize;
    for line in lines {
        if line.is_empty() {
            let last_event_id = id_buffer.clone();
            let id = (!last_event_id.is_empty()).then(|| last_event_id.as_str().into());
            if data.is_empty() {
                if block_has_id || block_retry.is_some() {
                    items.push(Item::NoData { id, retry: block_retry });
                }
            } else {
                if data.ends_with('\n') {
                    data.pop();
                }
                let event =
                    if event_type.is_empty() { "message".to_owned() } else { event_type.clone() };
                items.push(Item::Event(Event {
                    event: event.into(),
                    data: data.clone(),
                    id,
                    retry: block_retry,
                }));
            }
            data.clear();
            event_type.clear();
            block_has_id = false;
            block_retry = None;
            block_fields = 0;
            continue;
        }
        if let Some(text) = line.strip_prefix(':') {
            items.push(Item::Comment(text.to_owned()));
            continue;
        }
        block_fields += line.len();
        let (name, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line.as_str(), ""),
        };
        match name {
            "event" => event_type = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => {
                id_buffer = value.to_owned();
                block_has_id = true;
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                block_retry = Some(value.parse::<u64>().unwrap_or(u64::MAX));
            }
            _ => {}
        }
    }
    let partial = if unfinished_line.starts_with(':') { 0 } else { unfinished_line.len() };
    if block_fields + partial > 0 {
        items.push(Item::Error(DecodeError::UnfinishedEvent { discarded: block_fields + partial }));
    }
    items
}

/// Byte counts of unfinished events differ where replacement characters
/// stand for invalid bytes: compare without them.
pub(crate) fn normalise(items: Vec<Item>) -> Vec<Item> {
    items
        .into_iter()
        .map(|item| match item {
            Item::Error(DecodeError::UnfinishedEvent { .. }) => {
                Item::Error(DecodeError::UnfinishedEvent { discarded: 0 })
            }
            other => other,
        })
        .collect()
}
