//! Tool policy cases.

use mcp_host_registry::ToolPolicy;

#[test]
fn lists_are_normalised() {
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (&["  a ", "b", "", "   ", "a", "c", "b"], &["a", "b", "c"]),
        (&["B", "b"], &["B", "b"]),
    ];
    for (raw, expected) in cases {
        let policy = ToolPolicy::new(raw.iter(), raw.iter());
        assert_eq!(policy.allowed(), *expected, "{raw:?}");
        assert_eq!(policy.denied(), *expected, "{raw:?}");
    }
}

#[test]
fn allow_and_deny() {
    // (allowed, denied, tool, expected)
    let cases: &[(&[&str], &[&str], &str, bool)] = &[
        (&[], &[], "echo", true),
        (&[], &[], "", false),
        (&[], &[], "   ", false),
        (&[], &[], " echo ", true),
        (&[], &["echo"], "echo", false),
        (&[], &[" echo "], "echo", false),
        (&[], &["echo"], " echo", false),
        (&["echo"], &[], "echo", true),
        (&["echo"], &[], "add", false),
        (&["echo"], &["echo"], "echo", false),
        (&["echo", "add"], &["add"], "add", false),
        (&["echo", "add"], &["add"], "echo", true),
        (&["Echo"], &[], "echo", false),
        (&[], &["Echo"], "echo", true),
        (&["", "  "], &[], "anything", true),
        (&["ech"], &[], "echo", false),
    ];
    for (allowed, denied, tool, expected) in cases {
        let policy = ToolPolicy::new(allowed.iter(), denied.iter());
        assert_eq!(
            policy.is_allowed(tool),
            *expected,
            "allowed {allowed:?} denied {denied:?} tool {tool:?}"
        );
    }
    assert!(ToolPolicy::allow_all().is_allowed("x"));
}
