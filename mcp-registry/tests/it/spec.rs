//! `--server SPEC` parsing, as a table.

use mcp_host_registry::{SpecError, TransportConfig, parse_server_spec};

/// What a spec became: `http URL [headers]` or `stdio COMMAND ARGS...`.
fn describe(spec: &str, headers: &[&str]) -> Result<String, SpecError> {
    let server = parse_server_spec("server", spec, headers)?;
    assert_eq!(server.name, "server");
    Ok(match &server.transport {
        TransportConfig::Http { endpoint, headers, .. } => {
            let mut out = format!("http {endpoint}");
            for (name, value) in headers {
                out.push_str(&format!(" [{name}={}]", value.expose()));
            }
            out
        }
        TransportConfig::Stdio(c) => {
            let mut words = vec![c.command.clone()];
            words.extend(c.args.iter().cloned());
            format!("stdio {}", words.join("|"))
        }
        other => panic!("unexpected transport {other:?}"),
    })
}

#[test]
fn spec_table() {
    let ok: &[(&str, &[&str], &str)] = &[
        ("http://127.0.0.1:9/mcp", &[], "http http://127.0.0.1:9/mcp"),
        ("HTTP://127.0.0.1:9/mcp", &[], "http HTTP://127.0.0.1:9/mcp"),
        ("HtTpS://example.com/a/b?key=1&x=y", &[], "http HtTpS://example.com/a/b?key=1&x=y"),
        ("  https://example.com/mcp \n", &[], "http https://example.com/mcp"),
        ("httpx://example.com", &[], "stdio httpx://example.com"),
        ("http:/x", &[], "stdio http:/x"),
        ("http//x", &[], "stdio http//x"),
        ("ftp://example.com", &[], "stdio ftp://example.com"),
        ("npx -y  @scope/server\t--flag", &[], "stdio npx|-y|@scope/server|--flag"),
        ("  node server.js  ", &[], "stdio node|server.js"),
        ("http://h/mcp", &["X-Key: k1"], "http http://h/mcp [X-Key=k1]"),
        (
            "http://h/mcp",
            &["  X-Key  :   spaced value  "],
            "http http://h/mcp [X-Key=spaced value]",
        ),
        ("http://h/mcp", &["A: x:y:z"], "http http://h/mcp [A=x:y:z]"),
        ("http://h/mcp", &["X-Key: 1", "x-key: 2", "B: 3"], "http http://h/mcp [X-Key=2] [B=3]"),
        ("http://h/mcp", &["Empty:"], "http http://h/mcp [Empty=]"),
    ];
    for (spec, headers, expected) in ok {
        assert_eq!(describe(spec, headers).as_deref(), Ok(*expected), "{spec:?} {headers:?}");
    }
    let refused: &[(&str, &[&str], SpecError)] = &[
        ("", &[], SpecError::Empty),
        ("   \t ", &[], SpecError::Empty),
        ("npx server", &["X-Key: 1"], SpecError::HeadersWithCommand),
        ("httpx://h", &["X-Key: 1"], SpecError::HeadersWithCommand),
        ("http://h/mcp", &["no colon"], SpecError::BadHeader { name: None }),
        ("http://h/mcp", &["  : v"], SpecError::BadHeader { name: Some(String::new()) }),
    ];
    for (spec, headers, expected) in refused {
        assert_eq!(describe(spec, headers).as_ref(), Err(expected), "{spec:?} {headers:?}");
    }
}

#[test]
fn messages_show_both_forms_and_no_header_value() {
    let empty = SpecError::Empty.to_string();
    assert!(empty.contains("https://") && empty.contains("npx"), "{empty}");
    let err = parse_server_spec("s", "http://h/mcp", &["secret-value-no-colon"]).unwrap_err();
    assert!(!err.to_string().contains("secret-value"), "{err}");
    let server = parse_server_spec("s", "http://h/mcp", &["X-Key: hunter22"]).unwrap();
    assert!(!format!("{server:?}").contains("hunter22"));
}

#[test]
fn a_non_ascii_spec_is_a_command_not_a_panic() {
    // The scheme's length falls inside a multi-byte character.
    for spec in ["http:/é", "ééééé", "https:/日本", "\u{10348}\u{10348}"] {
        let server = parse_server_spec("s", spec, &[] as &[&str]).unwrap();
        assert!(matches!(server.transport, TransportConfig::Stdio(_)), "{spec}");
    }
    let server = parse_server_spec("s", "HTTPS://ex.example/é", &[] as &[&str]).unwrap();
    assert!(matches!(server.transport, TransportConfig::Http { .. }));
}
