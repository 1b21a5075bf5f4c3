//! The opening's answers read once: the usual answer to `server/discover`
//! or `initialize` is decoded straight from the message
//! (`Link::feed_usual_answer`); any other shape goes through the general
//! decoding. Both give a client the same opening, for every answer of a
//! table (odd but valid JSON, answers that are no discovery, versions in
//! common or not).

use std::time::Duration;

use mcp_peer::memory;
use mcp_peer::{Client, EraChoice};
use serde_json::Value;

use crate::common::options;

/// Opens a client of `era` against a server that answers its opening
/// request with `result` in the usual envelope (`usual`: as most servers
/// write it, which the client reads once) or with a space after the
/// opening brace (which only the general decoding takes); a discovery
/// that leads to `initialize` is followed by `initialized` from the same
/// table. What the client made of it: the kept result, or the error.
async fn open(era: EraChoice, discover: &str, initialize: &str, usual: bool) -> String {
    let (transport, mut end) = memory::pair();
    let mut o = options();
    o.era = era;
    o.probe_timeout = Duration::from_secs(1);
    let client = Client::new(transport, o);
    let sender = end.sender();
    let (discover, initialize) = (discover.to_owned(), initialize.to_owned());
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let result = match msg["method"].as_str() {
                Some("server/discover") => &discover,
                Some("initialize") => &initialize,
                _ => "{}",
            };
            let line = if usual {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
            } else {
                format!(r#"{{ "jsonrpc":"2.0","id":{id},"result":{result}}}"#)
            };
            let _ = sender.send(line.as_bytes());
        }
    });
    let opened = tokio::time::timeout(Duration::from_secs(30), client.initialize()).await;
    let what = match opened.expect("the opening ends") {
        Ok(result) => format!("{:?} {:?}", client.protocol_version(), result),
        Err(e) => format!("error: {e}"),
    };
    let _ = client.close().await;
    what
}

const INITIALIZE: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}"#;

#[tokio::test(start_paused = true)]
async fn the_opening_read_once_is_the_general_paths_opening() {
    let discoveries = [
        r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"ttlMs":0,"cacheScope":"public"}"#,
        r#" { "\u005fmeta" : { "io.modelcontextprotocol/serverInfo" : { "version" : "2" , "name" : "\u0073" } } , "supportedVersions" : [ "2026-07-28" ] , "instructions" : "\"hi\"\n\u00e9" , "x" : [ 1 , 2.5e3 , null ] } "#,
        r#"{"supportedVersions":["1999-01-01"],"supportedVersions":["2026-07-28"],"capabilities":{"x-cap":{}}}"#,
        // Only handshake-era versions, none in common, no discovery.
        r#"{"supportedVersions":["2025-11-25"]}"#,
        r#"{"supportedVersions":["1999-01-01"]}"#,
        r#"{"capabilities":{}}"#,
        "null",
    ];
    let initializes = [
        INITIALIZE,
        r#" { "serverInfo" : { "version" : "1" , "name" : "\u0073" } , "capabilities" : { } , "protocolVersion" : "2025-06-18" , "_meta" : { "k" : [ true ] } , "x" : 1 } "#,
        r#"{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
        r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#,
    ];
    let mut cases = Vec::new();
    for era in [EraChoice::Auto, EraChoice::Modern] {
        for discover in discoveries {
            cases.push((era, discover, INITIALIZE));
        }
    }
    for initialize in initializes {
        cases.push((EraChoice::Legacy, "null", initialize));
        // A handshake-era server found by the probe.
        cases.push((EraChoice::Auto, r#"{"supportedVersions":["2025-11-25"]}"#, initialize));
    }
    let mut opened = 0;
    for (era, discover, initialize) in cases {
        let once = open(era, discover, initialize, true).await;
        let general = open(era, discover, initialize, false).await;
        assert_eq!(once, general, "{era:?} {discover} {initialize}");
        opened += usize::from(!once.starts_with("error"));
    }
    // Both kinds of outcome are in the table.
    assert!((6..22).contains(&opened), "{opened} of 22 opened");
}
