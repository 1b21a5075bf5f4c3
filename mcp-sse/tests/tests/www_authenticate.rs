//! `WWW-Authenticate`: header values in, challenges (or errors) out, one
//! table per rule.

use mcp_sse::www_authenticate::{self, BearerChallenge, Challenge, ChallengeError};

/// A challenge or an error written compactly: `Scheme k=v k=v`,
/// `Scheme ~token68`, or `!` followed by the error's `Display`.
fn render(result: &Result<Challenge, ChallengeError>) -> String {
    match result {
        Ok(c) => {
            let mut out = c.scheme.clone();
            if let Some(t) = &c.token68 {
                out.push_str(" ~");
                out.push_str(t);
            }
            for (name, value) in &c.params {
                out.push_str(&format!(" {name}={value:?}"));
            }
            out
        }
        Err(e) => format!("! {e}"),
    }
}

fn check(value: &str, expected: &[&str]) {
    let got: Vec<String> = www_authenticate::parse(value).iter().map(render).collect();
    assert_eq!(got, expected, "parsing {value:?}");
}

#[test]
fn one_challenge() {
    check("Basic", &["Basic"]);
    check("Basic ", &["Basic"]);
    check(r#"Basic realm="simple""#, &[r#"Basic realm="simple""#]);
    check("Bearer realm=example", &[r#"Bearer realm="example""#]);
    check(r#"Bearer realm="a", scope="b c""#, &[r#"Bearer realm="a" scope="b c""#]);
    check(r#"Bearer   realm="a""#, &[r#"Bearer realm="a""#]);
    check("", &[]);
    check("  ,  , ", &[]);
}

#[test]
fn several_challenges() {
    check(r#"Basic realm="a", Bearer realm="b""#, &[r#"Basic realm="a""#, r#"Bearer realm="b""#]);
    check("Basic, Bearer", &["Basic", "Bearer"]);
    check("Basic , Bearer ,", &["Basic", "Bearer"]);
    // RFC 9110's own example.
    check(
        r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        &[r#"Newauth realm="apps" type="1" title="Login to \"apps\"""#, r#"Basic realm="simple""#],
    );
    check(r#"Negotiate abc==, Bearer realm="x""#, &["Negotiate ~abc==", r#"Bearer realm="x""#]);
    check(r#"Bearer realm="x", Negotiate abc=="#, &[r#"Bearer realm="x""#, "Negotiate ~abc=="]);
    // A bare token after a comma can only start a challenge.
    check("Bearer a=b, c", &[r#"Bearer a="b""#, "c"]);
}

#[test]
fn several_values() {
    let got: Vec<String> =
        www_authenticate::parse_all([r#"Basic realm="a""#, "", "Negotiate, Bearer x=y"])
            .iter()
            .map(render)
            .collect();
    assert_eq!(got, [r#"Basic realm="a""#, "Negotiate", r#"Bearer x="y""#]);
}

#[test]
fn case_insensitive_names() {
    let all = www_authenticate::parse(r#"bEaReR REALM="r", Scope="s""#);
    let c = all[0].as_ref().unwrap();
    assert!(c.is_scheme("Bearer"));
    assert_eq!(c.scheme, "bEaReR");
    assert_eq!(c.param("realm"), Some("r"));
    assert_eq!(c.param("SCOPE"), Some("s"));
    assert_eq!(c.param("error"), None);
    let bearer = BearerChallenge::from_challenge(c).unwrap();
    assert_eq!(bearer.realm.as_deref(), Some("r"));
    // Duplicates are found whatever the case.
    check(
        r#"Bearer realm="a", REALM="b""#,
        &["! Bearer challenge: parameter REALM is given more than once"],
    );
}

#[test]
fn quoted_strings() {
    check(r#"X a="""#, &[r#"X a="""#]);
    check(r#"X a="q\"uote\\d""#, &[r#"X a="q\"uote\\d""#]);
    check(r#"X a="\a\b""#, &[r#"X a="ab""#]);
    check(r#"X a="comma, inside", b="x""#, &[r#"X a="comma, inside" b="x""#]);
    check("X a=\"tab\there\"", &["X a=\"tab\\there\""]);
    check("X a=\"caf\u{e9}\"", &["X a=\"caf\u{e9}\""]);
    check(
        r#"X a="unterminated"#,
        &["! X challenge: the quoted value of a starting at byte 4 is not closed"],
    );
    check(
        r#"X a="ends in backslash\"#,
        &["! X challenge: the quoted value of a starting at byte 4 is not closed"],
    );
    check(
        "X a=\"bad\u{1}char\", Basic",
        &["! X challenge: the quoted value of a has a control character at byte 8", "Basic"],
    );
}

#[test]
fn white_space_around_equals_and_commas() {
    check(r#"Bearer scope = "read""#, &[r#"Bearer scope="read""#]);
    check("Bearer scope\t=\tread ,realm=r", &[r#"Bearer scope="read" realm="r""#]);
    check(r#"Bearer a="1" ,  , b="2""#, &[r#"Bearer a="1" b="2""#]);
    check(" \tBasic realm=\"a\" \t", &[r#"Basic realm="a""#]);
}

#[test]
fn token68() {
    check("Negotiate abc==", &["Negotiate ~abc=="]);
    check(
        "Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnagMDAuBgkqhkiC9xIBAgIGCSqGSIb3EgECAgYKKwYBBAGCNwICHgYKKwYBBAGCNwICCqKCBkAEggY8",
        &[
            "Negotiate ~YIIGhgYGKwYBBQUCoIIGejCCBnagMDAuBgkqhkiC9xIBAgIGCSqGSIb3EgECAgYKKwYBBAGCNwICHgYKKwYBBAGCNwICCqKCBkAEggY8",
        ],
    );
    check("X a-b.c_d~e+f/g", &["X ~a-b.c_d~e+f/g"]);
    check("X abc=", &["X ~abc="]);
    check("X abc ,", &["X ~abc"]);
    // `=` followed by more is a parameter.
    check("X abc=def", &[r#"X abc="def""#]);
    check("X abc= def", &[r#"X abc="def""#]);
}

#[test]
fn malformed_challenges_do_not_poison_the_others() {
    check(r#"Bearer realm, Basic realm="a""#, &["Bearer ~realm", r#"Basic realm="a""#]);
    // `realm=` alone is a token68 ...
    check(r#"Bearer realm=, Basic realm="a""#, &["Bearer ~realm=", r#"Basic realm="a""#]);
    // ... but after a parameter it is a parameter with no value.
    check(
        r#"Bearer a=1, realm=, Basic realm="a""#,
        &["! Bearer challenge: parameter realm has no value (byte 18)", r#"Basic realm="a""#],
    );
    check(
        r#"Bearer realm="a" junk, Basic"#,
        &["! Bearer challenge: unexpected 'j' at byte 17 (expected `,` or the end)", "Basic"],
    );
    check(
        r#"Bearer @bad="1", x="2", Basic"#,
        &["! Bearer challenge: expected a parameter name or a token68 at byte 7", "Basic"],
    );
    check(
        r#""quoted", Basic realm="a""#,
        &["! challenge at byte 0 does not start with an auth-scheme", r#"Basic realm="a""#],
    );
    check(r#"=x, Basic"#, &["! challenge at byte 0 does not start with an auth-scheme", "Basic"]);
    // The recovery skips the broken challenge's parameters, quoted commas included.
    check(
        r#"Bearer a="1" b, c="x, Basic y", d=4, Digest realm="r""#,
        &[
            "! Bearer challenge: unexpected 'b' at byte 13 (expected `,` or the end)",
            r#"Digest realm="r""#,
        ],
    );
    check(
        "Bearer\trealm=\"a\", Basic",
        &["! Bearer challenge: unexpected 'r' at byte 7 (expected `,` or the end)", "Basic"],
    );
    check(
        "Bearer realm \"a\", Basic",
        &["! Bearer challenge: parameter realm has no `=` (byte 13)", "Basic"],
    );
}

#[test]
fn duplicate_parameters() {
    check(
        r#"Bearer realm="a", realm="b", Basic realm="c""#,
        &["! Bearer challenge: parameter realm is given more than once", r#"Basic realm="c""#],
    );
    // The same name in two challenges is fine.
    check(r#"Basic realm="a", Bearer realm="b""#, &[r#"Basic realm="a""#, r#"Bearer realm="b""#]);
}

fn bearer(value: &str) -> BearerChallenge {
    www_authenticate::find_bearer([value]).expect("a Bearer challenge")
}

#[test]
fn bearer_scope_is_read_exactly() {
    // A `scope=` inside a quoted description is not the scope.
    let b = bearer(r#"Bearer error_description="bad scope=admin given", scope="read""#);
    assert_eq!(b.scope.unwrap(), ["read"]);
    assert_eq!(b.error_description.as_deref(), Some("bad scope=admin given"));
    // `xscope` is not `scope`.
    let b = bearer(r#"Bearer xscope="nope", scope="read""#);
    assert_eq!(b.scope.unwrap(), ["read"]);
    assert_eq!(bearer(r#"Bearer xscope="nope""#).scope, None);
    // White space around `=`.
    assert_eq!(bearer(r#"Bearer scope = "read""#).scope.unwrap(), ["read"]);
    // Split on spaces, empty tokens dropped.
    assert_eq!(bearer(r#"Bearer scope="  a b   c ""#).scope.unwrap(), ["a", "b", "c"]);
    assert_eq!(bearer(r#"Bearer scope="""#).scope.unwrap(), Vec::<String>::new());
}

#[test]
fn bearer_is_found_among_other_challenges() {
    let b = bearer(
        r#"Basic realm="a", Bearer resource_metadata="https://x/.well-known/oauth-protected-resource""#,
    );
    assert_eq!(
        b.resource_metadata.as_deref(),
        Some("https://x/.well-known/oauth-protected-resource")
    );
    assert_eq!(b.realm, None);
    // In a later header value, after a malformed challenge.
    let b = www_authenticate::find_bearer([
        "Basic realm=",
        r#"Negotiate, Bearer error="invalid_token""#,
    ])
    .unwrap();
    assert!(b.is_invalid_token());
    assert!(!b.is_insufficient_scope());
    // A broken Bearer challenge is not used; a later good one is.
    let b = www_authenticate::find_bearer([r#"Bearer realm="a", realm="b", Bearer realm="c""#])
        .unwrap();
    assert_eq!(b.realm.as_deref(), Some("c"));
    assert_eq!(www_authenticate::find_bearer([r#"Basic realm="a""#]), None);
}

#[test]
fn bearer_fields() {
    let b = bearer(
        r#"Bearer realm="mcp", error="insufficient_scope", error_description="need \"files:write\"", error_uri="https://e/x", scope="files:read files:write", resource_metadata="https://r/.well-known/oauth-protected-resource/mcp""#,
    );
    assert_eq!(b.realm.as_deref(), Some("mcp"));
    assert_eq!(b.scope.as_deref(), Some(&["files:read".to_owned(), "files:write".to_owned()][..]));
    assert_eq!(b.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(b.error_description.as_deref(), Some(r#"need "files:write""#));
    assert_eq!(b.error_uri.as_deref(), Some("https://e/x"));
    assert_eq!(
        b.resource_metadata.as_deref(),
        Some("https://r/.well-known/oauth-protected-resource/mcp")
    );
    assert!(b.is_insufficient_scope());
    // A token68 Bearer challenge carries none of them.
    assert_eq!(bearer("Bearer abc=="), BearerChallenge::default());
    assert_eq!(bearer("Bearer"), BearerChallenge::default());
}

#[test]
fn challenge_display_round_trips() {
    for value in [r#"Bearer realm="a\"b", scope="x y""#, "Negotiate abc==", "Basic"] {
        let c = www_authenticate::parse(value).remove(0).unwrap();
        let again = www_authenticate::parse(&c.to_string()).remove(0).unwrap();
        assert_eq!(c, again);
    }
}

#[test]
fn quoted_pairs_escape_only_what_may_be_escaped() {
    // An escaped space, tab, visible character or non-ASCII character is
    // that character.
    check("X a=\"\\ \\\t\\\u{e9}\\z\"", &["X a=\" \\t\u{e9}z\""]);
    // An escaped control character is an error, and the next challenge
    // survives it.
    check(
        "X a=\"bad\\\u{1}\", Basic",
        &["! X challenge: the quoted value of a has a control character at byte 9", "Basic"],
    );
    check(
        "X a=\"nul\\\u{0}\"",
        &["! X challenge: the quoted value of a has a control character at byte 9"],
    );
}

#[test]
fn recovery_skips_an_escaped_quote_in_a_broken_challenge() {
    // The broken challenge's quoted value holds `\"` and a comma: recovery
    // must not take the escaped quote for the end of the value.
    check(
        r#"Bearer a="x" junk, b="q\", Basic y", Digest realm="r""#,
        &[
            "! Bearer challenge: unexpected 'j' at byte 13 (expected `,` or the end)",
            r#"Digest realm="r""#,
        ],
    );
}

#[test]
fn bearer_error_kinds_are_told_apart() {
    let expired = bearer(r#"Bearer error="invalid_token""#);
    assert!(expired.is_invalid_token() && !expired.is_insufficient_scope());
    let scope = bearer(r#"Bearer error="insufficient_scope", scope="a b""#);
    assert!(scope.is_insufficient_scope() && !scope.is_invalid_token());
    let other = bearer(r#"Bearer error="invalid_request""#);
    assert!(!other.is_invalid_token() && !other.is_insufficient_scope());
    assert!(!bearer("Bearer").is_invalid_token());
}

#[test]
fn the_text_form_escapes_quotes_and_backslashes() {
    let parsed = www_authenticate::parse(r#"Bearer realm="a\"b\\c", scope="x""#);
    let c = parsed[0].as_ref().unwrap();
    assert_eq!(c.to_string(), r#"Bearer realm="a\"b\\c", scope="x""#);
    // And it parses back to the same challenge.
    assert_eq!(www_authenticate::parse(&c.to_string())[0].as_ref().unwrap(), c);
    let t = www_authenticate::parse("Negotiate abc==").remove(0).unwrap();
    assert_eq!(t.to_string(), "Negotiate abc==");
}

/// The median time of parsing `value`, over a few runs.
fn parse_time(value: &str) -> std::time::Duration {
    let mut times: Vec<_> = (0..5)
        .map(|_| {
            let started = std::time::Instant::now();
            let parsed = www_authenticate::parse(value);
            assert_eq!(parsed.len(), 1);
            started.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

#[test]
fn many_parameters_cost_linear_time() {
    // A 401 whose one challenge has tens of thousands of parameters (a
    // hostile server's header; hyper lets 400 KB through): ten times the
    // parameters must cost about ten times the time, not a hundred.
    let header = |n: usize| {
        let params: Vec<String> = (0..n).map(|i| format!("p{i}=\"v{i}\"")).collect();
        format!("Bearer {}", params.join(", "))
    };
    let (small, large) = (header(4_000), header(40_000));
    assert!(large.len() > 400_000);
    let ratio = parse_time(&large).as_secs_f64() / parse_time(&small).as_secs_f64().max(1e-9);
    assert!(ratio < 40.0, "10x the parameters took {ratio:.1}x the time");
}
