//! The fixed-reply answerer (`stdio-bench raw-answer`), which shows what
//! the clients alone cost.

use std::io::{BufRead, BufReader, Write};

use mcp_bench::wire::{self, Template, id_span};

/// `raw-answer CALL_REPLY INIT_REPLY [DISCOVER_REPLY [LIST_REPLY]]`: answers
/// each request line with a fixed reply, its `"id"` value replaced by the
/// request's (byte search, no JSON parsing): INIT_REPLY for `initialize`,
/// DISCOVER_REPLY (when given and not `-`) for `server/discover`,
/// LIST_REPLY (when given; `sdk-bench`'s Python SDK client lists the tools
/// before its first call) for `tools/list`, CALL_REPLY for anything else;
/// lines without an id (notifications) get no answer. Runs until stdin
/// closes.
pub(crate) fn raw_answer(args: &[String]) -> Result<(), String> {
    let template = |reply: &str| Template::new(reply, b"\n");
    let call = template(args.first().map(String::as_str).unwrap_or("{}"));
    let init = template(args.get(1).map(String::as_str).unwrap_or("{}"));
    let discover = args.get(2).filter(|d| *d != "-").map(|d| template(d));
    let list = args.get(3).map(|l| template(l));
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
        if let Some((a, b)) = id_span(&line) {
            // One search for the method, whichever the era.
            let method = wire::after_method(&line);
            let template = match (&discover, &list) {
                (Some(d), _) if method.starts_with(b"server/discover\"") => d,
                (_, Some(l)) if method.starts_with(b"tools/list\"") => l,
                _ if method.starts_with(b"initialize\"") => &init,
                _ => &call,
            };
            output.write_all(&template.head).map_err(|e| e.to_string())?;
            output.write_all(&line[a..b]).map_err(|e| e.to_string())?;
            output.write_all(&template.tail).map_err(|e| e.to_string())?;
        }
        // Flush once every complete line already read has been answered.
        if input.buffer().is_empty() {
            output.flush().map_err(|e| e.to_string())?;
        }
    }
}
