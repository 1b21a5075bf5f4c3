//! Scope selection (the spec's "Scope Selection Strategy" and step-up).

/// The scopes of a first authorization: the challenge's `scope` when given
/// (what the server asks for wins), else the scopes the host configured
/// (`configured`, when not empty), else every scope of the protected
/// resource metadata's `scopes_supported`, else none (the `scope` parameter
/// is omitted). `offline_access` is added when the authorization server
/// lists it and the caller wants refresh tokens.
pub fn initial_scopes(
    challenge_scope: Option<&[String]>,
    configured: &[String],
    prm_scopes_supported: Option<&[String]>,
    offline_access: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let configured = Some(configured).filter(|s| !s.is_empty());
    let base = challenge_scope
        .filter(|s| !s.is_empty())
        .or(configured)
        .or(prm_scopes_supported)
        .unwrap_or(&[]);
    for s in base {
        push_unique(&mut out, s);
    }
    if offline_access && !out.is_empty() {
        push_unique(&mut out, "offline_access");
    }
    out
}

/// The scopes of a step-up after a 403 `insufficient_scope`: the union of
/// those held and those challenged (held first, order kept, no duplicates).
pub fn step_up_scopes(held: &[String], challenged: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(held.len() + challenged.len());
    for s in held.iter().chain(challenged) {
        push_unique(&mut out, s);
    }
    out
}

/// Whether `held` already contains every scope of `wanted`.
pub fn covers(held: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| held.contains(w))
}

/// Splits a space-separated `scope` value (empty items dropped).
pub fn split(scope: &str) -> Vec<String> {
    scope.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Joins scopes into a `scope` value; `None` when there are none.
pub fn join(scopes: &[String]) -> Option<String> {
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

fn push_unique(out: &mut Vec<String>, s: &str) {
    if !s.is_empty() && !out.iter().any(|x| x == s) {
        out.push(s.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn initial_selection() {
        type Case<'a> = (Option<&'a [&'a str]>, Option<&'a [&'a str]>, bool, &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            // scope-from-www-authenticate
            (Some(&["mcp:basic"]), Some(&["mcp:basic", "mcp:read"]), false, &["mcp:basic"]),
            // scope-from-scopes-supported
            (
                None,
                Some(&["mcp:basic", "mcp:read", "mcp:write"]),
                false,
                &["mcp:basic", "mcp:read", "mcp:write"],
            ),
            // scope-omitted-when-undefined
            (None, None, false, &[]),
            (None, None, true, &[]),
            // an empty challenge scope falls back to scopes_supported
            (Some(&[]), Some(&["a"]), false, &["a"]),
            // offline-access-scope
            (None, Some(&["mcp:basic"]), true, &["mcp:basic", "offline_access"]),
            (Some(&["offline_access", "a"]), None, true, &["offline_access", "a"]),
            (Some(&["a", "a"]), None, false, &["a"]),
        ];
        for (challenge, prm, offline, expected) in cases {
            let c = challenge.map(v);
            let p = prm.map(v);
            assert_eq!(
                initial_scopes(c.as_deref(), &[], p.as_deref(), *offline),
                v(expected),
                "{challenge:?} {prm:?}"
            );
        }
    }

    #[test]
    fn configured_scopes_come_after_the_challenge_and_before_the_metadata() {
        let configured = v(&["files:read", "files:read"]);
        let prm = v(&["mcp:basic", "mcp:write"]);
        // The server's challenge names what it needs: that wins.
        assert_eq!(
            initial_scopes(Some(&v(&["mcp:basic"])), &configured, Some(&prm), false),
            v(&["mcp:basic"])
        );
        // Otherwise the host's choice replaces "everything supported".
        assert_eq!(initial_scopes(None, &configured, Some(&prm), false), v(&["files:read"]));
        assert_eq!(initial_scopes(Some(&[]), &configured, None, false), v(&["files:read"]));
        assert_eq!(
            initial_scopes(None, &configured, Some(&prm), true),
            v(&["files:read", "offline_access"])
        );
        // None configured: the spec's strategy, unchanged.
        assert_eq!(initial_scopes(None, &[], Some(&prm), false), prm);
    }

    #[test]
    fn step_up_union() {
        let cases: &[(&[&str], &[&str], &[&str])] = &[
            (&["mcp:basic"], &["mcp:basic", "mcp:write"], &["mcp:basic", "mcp:write"]),
            (&["a", "b"], &["c"], &["a", "b", "c"]),
            (&[], &["c"], &["c"]),
            (&["a"], &["a"], &["a"]),
        ];
        for (held, challenged, expected) in cases {
            assert_eq!(step_up_scopes(&v(held), &v(challenged)), v(expected));
        }
        assert!(covers(&v(&["a", "b"]), &v(&["b"])));
        assert!(!covers(&v(&["a"]), &v(&["a", "b"])));
        assert_eq!(split(" a  b "), v(&["a", "b"]));
        assert_eq!(join(&v(&["a", "b"])).as_deref(), Some("a b"));
        assert_eq!(join(&[]), None);
    }
}
