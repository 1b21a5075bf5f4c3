//! The scan against serde_json's decoding of the same text, on tables of
//! results: the usual ones it must read, and near misses (valid or not)
//! it must leave to the decoding or read the same.

use super::{usual_discover_result, usual_initialize_result};
use crate::types::{DiscoverResult, InitializeResult};

/// The testkit's result, as it writes it.
const TESTKIT: &str = r#"{"capabilities":{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}},"tools":{"listChanged":true}},"instructions":"A scriptable test server: its tools exercise MCP clients (echo, slow, hang, fail, crash, ask, ...). Not for production use.","protocolVersion":"2025-11-25","serverInfo":{"name":"mcp-testkit","title":"MCP testkit","version":"0.1.0"}}"#;

/// Results the scan reads: each the same as the decoding's.
const USUAL: &[&str] = &[
    TESTKIT,
    r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"","version":""}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false},"prompts":{"listChanged":false},"resources":{"subscribe":false}},"serverInfo":{"version":"1","name":"n"}}"#,
    r#"{"protocolVersion":"x","capabilities":{"experimental":{},"extensions":{},"logging":{},"completions":{}},"serverInfo":{"name":"n","version":"v","title":"T","description":"d","websiteUrl":"https://example.com/"},"instructions":""}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{}}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{}}}},"serverInfo":{"name":"n","version":"v"}}"#,
    // `_meta`, members this crate does not know, free values.
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"_meta":{}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"other":1}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"logging":{"level":"info"}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{"a":1}}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"mine":{}}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"a":[1,"b",true,false,null,{"c":[]},[]],"d":{"e":{"f":0}}}},"serverInfo":{"name":"n","version":"v"},"_meta":{"k":{"l":"m"},"n":[0,10,18446744073709551615]},"x":null,"y":[],"z":{}}"#,
    // Whitespace everywhere JSON allows it.
    " \n{ \"protocolVersion\" : \"2025-11-25\" ,\t\"capabilities\" : { \"tools\" : { \"listChanged\" : true } , \"logging\" : { } } ,\r\n\"serverInfo\" : { \"name\" : \"n\" , \"version\" : \"v\" } } \n",
    // Text that is not ASCII, and a DEL (allowed in a JSON string).
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"n\u{e9}\u{1f600}\",\"version\":\"\u{7f}\"},\"instructions\":\"\u{4e2d}\u{6587}\"}",
];

/// Valid results the scan leaves to the decoding (or reads the same).
const LEFT: &[&str] = &[
    // A member twice: the decoding takes the last.
    r#"{"protocolVersion":"a","protocolVersion":"b","capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"a","capabilities":{"tools":{"listChanged":true,"listChanged":false}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"a","capabilities":{"tools":{},"tools":{"listChanged":true}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"a","capabilities":{},"serverInfo":{"name":"n","name":"m","version":"v"}}"#,
    // Escapes.
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"a\"b","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"\u0041","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"instructions":"line\nnext"}"#,
    r#"{"protocol\u0056ersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    // Members the scan does not read, kept by the decoding.
    r#"{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true,"x":1}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true,"y":[]}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{},"z":2}}}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"sampling":{}}}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v","icons":[{"src":"https://example.com/i.png"}]}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v","extra":true}}"#,
    // Numbers the scan does not read, escapes in free values, a free
    // member twice, nesting past the scan's depth.
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":1.5}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":-1}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":1e3}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":0E0}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":18446744073709551616}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":"\u00e9"}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":{"a":1,"a":2}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":1,"x":2}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"_meta":{},"_meta":{}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"_meta":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":{"l":{"m":{"n":{"o":{"p":{"q":1}}}}}}}}}}}}}}}}}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}"#,
    // `null`s, which the decoding reads as absent.
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"instructions":null}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"_meta":null}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":null},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":null}},"serverInfo":{"name":"n","version":"v","title":null}}"#,
];

/// Text the decoding refuses: the scan must refuse it too.
const BROKEN: &[&str] = &[
    "",
    " ",
    "null",
    "[]",
    "{}",
    r#"{"capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"version":"v"}}"#,
    r#"{"protocolVersion":1,"capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":[],"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":"yes"}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":tru}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":truex}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"logging":[]},"serverInfo":{"name":"n","version":"v"}}"#,
    // Cut short, trailing text, stray or missing punctuation.
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}} x"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}},"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},}"#,
    r#"{"protocolVersion":"2025-11-25",,"capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25" "capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion""2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{,},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true,}},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25,"capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v}}"#,
    r#"{protocolVersion:"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"}}"#,
    r#"{'protocolVersion':'2025-11-25','capabilities':{},'serverInfo':{'name':'n','version':'v'}}"#,
    // Free values that are not JSON.
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":01}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":1.}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":-}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":nul}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":nullx}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":[1,]}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":[1 2]}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":[}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":1x}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"x":}"#,
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"v"},"_meta":[]}"#,
    // A control character inside a string (a tab, a newline, a NUL).
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"a\tb\",\"version\":\"v\"}}",
    "{\"protocolVersion\":\"2025\n-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"n\",\"version\":\"v\"}}",
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"n\",\"version\":\"v\"},\"instructions\":\"\0\"}",
    // Whitespace JSON does not allow.
    "{\"protocolVersion\":\"2025-11-25\",\u{a0}\"capabilities\":{},\"serverInfo\":{\"name\":\"n\",\"version\":\"v\"}}",
    "{\"protocolVersion\":\"2025-11-25\",\u{b}\"capabilities\":{},\"serverInfo\":{\"name\":\"n\",\"version\":\"v\"}}",
];

/// The testkit's discovery, as it writes it.
const TESTKIT_DISCOVERY: &str = r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-testkit","title":"MCP testkit","version":"0.1.0"}},"cacheScope":"public","capabilities":{"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}},"instructions":"A scriptable test server: its tools exercise MCP clients (echo, slow, hang, fail, crash, ask, ...). Not for production use.","resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}"#;

/// Discoveries the scan reads.
const USUAL_DISCOVERY: &[&str] = &[
    TESTKIT_DISCOVERY,
    r#"{"supportedVersions":[]}"#,
    r#"{"supportedVersions":["2026-07-28","2027-01-01"],"capabilities":{},"ttlMs":60000,"cacheScope":"private"}"#,
    " { \"supportedVersions\" : [ \"2026-07-28\" ] , \"resultType\" : \"complete\" } ",
];

/// Valid discoveries the scan leaves to the decoding.
const LEFT_DISCOVERY: &[&str] = &[
    r#"{"supportedVersions":["2026-07-28"],"supportedVersions":["2026-07-28"]}"#,
    r#"{"supportedVersions":["2026\u002d07-28"]}"#,
    r#"{"supportedVersions":["2026-07-28"],"capabilities":{"sampling":{}}}"#,
    r#"{"supportedVersions":["2026-07-28"],"ttlMs":1.5}"#,
];

/// Text the decoding refuses as a discovery.
const BROKEN_DISCOVERY: &[&str] = &[
    "{}",
    r#"{"supportedVersions":"2026-07-28"}"#,
    r#"{"supportedVersions":[1]}"#,
    r#"{"supportedVersions":null}"#,
    r#"{"supportedVersions":["2026-07-28",]}"#,
    r#"{"supportedVersions":["2026-07-28"]"#,
    r#"{"supportedVersions":["2026-07-28"]}]"#,
    r#"{"supportedVersions":["2026-07-28"],"ttlMs":00}"#,
    r#"{"supportedVersions":["2026-07-28"],"capabilities":null}"#,
];

fn general(text: &str) -> Option<InitializeResult> {
    serde_json::from_str(text).ok()
}

fn general_discovery(text: &str) -> Option<DiscoverResult> {
    serde_json::from_str(text).ok()
}

#[test]
fn discoveries_are_scanned_as_the_decoding_reads_them_or_left_to_it() {
    for text in USUAL_DISCOVERY {
        let scanned = usual_discover_result(text);
        assert!(scanned.is_some(), "not scanned: {text}");
        assert_eq!(scanned, general_discovery(text), "{text}");
    }
    for text in LEFT_DISCOVERY {
        assert!(general_discovery(text).is_some(), "the table's result does not decode: {text}");
        assert_eq!(usual_discover_result(text), None, "{text}");
    }
    for text in BROKEN_DISCOVERY {
        assert_eq!(general_discovery(text), None, "the table's text decodes: {text}");
        assert_eq!(usual_discover_result(text), None, "{text}");
    }
    for text in USUAL_DISCOVERY {
        for (at, _) in text.char_indices() {
            let prefix = &text[..at];
            assert_eq!(usual_discover_result(prefix), general_discovery(prefix), "{prefix:?}");
            let mut cut = text.to_string();
            cut.remove(at);
            if let Some(scanned) = usual_discover_result(&cut) {
                assert_eq!(Some(scanned), general_discovery(&cut), "{cut:?}");
            }
        }
    }
}

#[test]
fn the_usual_results_are_scanned_as_the_decoding_reads_them() {
    for text in USUAL {
        let scanned = usual_initialize_result(text);
        assert!(scanned.is_some(), "not scanned: {text}");
        assert_eq!(scanned, general(text), "{text}");
    }
}

#[test]
fn other_valid_results_are_left_to_the_decoding() {
    for text in LEFT {
        let decoded = general(text);
        assert!(decoded.is_some(), "the table's result does not decode: {text}");
        assert_eq!(usual_initialize_result(text), None, "{text}");
    }
}

#[test]
fn text_the_decoding_refuses_is_refused() {
    for text in BROKEN {
        assert_eq!(general(text), None, "the table's text decodes: {text}");
        assert_eq!(usual_initialize_result(text), None, "{text:?}");
    }
}

#[test]
fn every_cut_of_a_usual_result_is_refused_or_read_the_same() {
    // Each prefix, and each text with one byte removed: never a result the
    // decoding does not give.
    for text in USUAL {
        for (at, _) in text.char_indices() {
            let prefix = &text[..at];
            assert_eq!(usual_initialize_result(prefix), general(prefix), "{prefix:?}");
            let mut cut = text.to_string();
            cut.remove(at);
            if let Some(scanned) = usual_initialize_result(&cut) {
                assert_eq!(Some(scanned), general(&cut), "{cut:?}");
            }
        }
    }
}
