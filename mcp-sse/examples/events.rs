//! Decodes an event stream and prints each item: from stdin when something
//! is piped in, else from a built-in stream (a block with an id and a
//! retry but no data, a comment, a two-line event). The decoder is fed in small chunks, as a socket would
//! deliver them; the items are the same for any split.
//!
//! `cargo run -p mcp-sse --example events`, or
//! `printf 'id: 1\ndata: {"jsonrpc":"2.0"}\n\n' | cargo run -p mcp-sse --example events -- -`
#![allow(clippy::print_stdout)]

use std::io::Read as _;

use mcp_sse::{Decoder, Item};

const SAMPLE: &[u8] = b"id: s1-0\nretry: 1500\n\n\
    : keep-alive\n\n\
    event: message\nid: s1-1\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"ping\",\"id\":1}\n\n";

fn main() -> std::io::Result<()> {
    let input = if std::env::args().nth(1).as_deref() == Some("-") {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes)?;
        bytes
    } else {
        SAMPLE.to_vec()
    };
    let mut decoder = Decoder::new();
    for chunk in input.chunks(7) {
        for item in decoder.decode(chunk) {
            show(item);
        }
    }
    // The end of the stream: an event cut short is reported, not dispatched.
    for item in decoder.finish_items() {
        show(item);
    }
    Ok(())
}

fn show(item: Item) {
    match item {
        Item::Event(e) => {
            println!("event {:?} id={:?} retry={:?}", e.event, e.id, e.retry);
            println!("  data: {}", e.data.replace('\n', "\n  data: "));
        }
        Item::NoData { id, retry } => println!("no data id={id:?} retry={retry:?}"),
        Item::Comment(text) => println!("comment {text:?}"),
        Item::Error(e) => println!("dropped: {e}"),
        // `Item` is non-exhaustive: a later version may report more.
        other => println!("{other:?}"),
    }
}
