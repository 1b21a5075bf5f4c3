//! The plain path of `decode_received` and `decode_slice` against their
//! general path, on nesting around the depth the plain path refuses.

use super::{Incoming, ReceivedIncoming, decode_received, decode_slice};

/// The same message with its first two members swapped, which only the
/// general path reads (the parameters at the same place, so errors name
/// the same column).
fn reordered(params: &str) -> String {
    format!(r#"{{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{params}}}"#)
}

fn plain(params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#)
}

/// As a server reads it, and as a client does (the parameters as a
/// value, which has a depth limit).
fn outcome(text: &str) -> (Result<ReceivedIncoming, String>, Result<Incoming, String>) {
    let received = decode_received(text.as_bytes()).map_err(|e| e.to_string());
    (received, decode_slice(text.as_bytes()).map_err(|e| e.to_string()))
}

#[test]
fn nesting_and_brackets_are_decoded_as_the_general_path_decodes_them() {
    let mut cases = Vec::new();
    for n in
        [0, 1, 30, 62, 63, 64, 65, 66, 100, 125, 126, 127, 128, 129, 200, 255, 256, 257, 300, 1000]
    {
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        cases.push(format!(r#"{{"a":{deep}}}"#));
        // Unbalanced: not JSON, refused the same way.
        cases.push(format!(r#"{{"a":{}}}"#, "[".repeat(n)));
        // Many openings, shallow.
        cases.push(format!(r#"{{"a":[{}]}}"#, vec!["[]"; n].join(",")));
        cases.push(format!(r#"{{"a":[{}]}}"#, vec!["{}"; n].join(",")));
        cases.push(format!(r#"{{"a":"{}"}}"#, "[{".repeat(n)));
        // Short text packed with openings.
        cases.push(format!(r#"{{"a":{}1{}}}"#, "[".repeat(n), "]".repeat(n)));
    }
    for params in &cases {
        assert_eq!(outcome(&plain(params)), outcome(&reordered(params)), "{params}");
    }
}

#[test]
fn parameters_checked_by_the_scan_are_decoded_as_the_general_path_decodes_them() {
    let mut plain_requests = 0;
    for case in super::scan::tests::json_cases() {
        for (i, _) in case.char_indices().chain([(case.len(), ' ')]) {
            let params = &case[..i];
            let text = plain(params);
            plain_requests += usize::from(super::plain_raw_request(&text).is_some());
            assert_eq!(outcome(&text), outcome(&reordered(params)), "{params}");
        }
    }
    assert!(plain_requests > 25, "{plain_requests}");
}

#[test]
fn a_calls_members_are_found_where_a_scan_of_its_parameters_finds_them() {
    use super::{Received, plain_call};
    let mut found = 0;
    let cases =
        super::scan::tests::call_cases().into_iter().chain(super::scan::tests::json_cases());
    for params in cases {
        for method in ["tools/call", "tools/list", "prompts/get"] {
            for space in ["", " \n\t"] {
                let text = format!(
                    r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}{space}}}"#
                );
                let plain = super::plain_raw_request(&text);
                let Ok(ReceivedIncoming::Single(Received::Request(request))) =
                    decode_received(text.as_bytes())
                else {
                    continue;
                };
                let Some(call) = request.call else { continue };
                // Only a `tools/call` on the plain path, its parameters'
                // members as a scan of their text finds them.
                assert!(method == "tools/call" && plain.is_some(), "{text}");
                let held = request.params.as_ref().map(|p| p.get()).unwrap_or_default();
                assert_eq!(call.parts(held), plain_call(held), "{text}");
                assert_eq!(plain_call(held).is_some(), !call.has_meta(), "{text}");
                found += 1;
            }
        }
        // Every usual call on the plain path has its members found.
        let text = plain(&params);
        if let Some(request) = super::plain_raw_request(&text) {
            let held = request.params.as_ref().map(|p| p.get()).unwrap_or_default();
            let without_meta = request.call.is_some_and(|c| !c.has_meta());
            assert_eq!(without_meta, plain_call(held).is_some(), "{text}");
        }
    }
    assert!(found > 100, "{found}");
}
