//! Protocol rules over method names.

use mcp_proto::methods::is_idempotent;

#[test]
fn only_reads_and_ping_are_idempotent() {
    let cases = [
        ("ping", true),
        ("tools/list", true),
        ("resources/list", true),
        ("resources/templates/list", true),
        ("resources/read", true),
        ("prompts/list", true),
        ("prompts/get", true),
        ("completion/complete", true),
        ("logging/setLevel", true),
        ("tasks/get", true),
        ("tasks/list", true),
        ("tasks/result", true),
        ("tools/call", false),
        ("initialize", false),
        ("resources/subscribe", false),
        ("resources/unsubscribe", false),
        ("tasks/cancel", false),
        ("x/custom", false),
        ("", false),
        ("PING", false),
    ];
    for (method, expected) in cases {
        assert_eq!(is_idempotent(method), expected, "{method}");
    }
}
