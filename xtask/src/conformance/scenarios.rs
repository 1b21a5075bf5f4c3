//! The client scenarios this project runs ([`SCENARIOS`]), at each revision
//! the suite lists them for ([`REVISIONS`]), with the checks each must
//! pass and the known gaps.

/// The revisions whose required scenarios the suite lists
/// (`conformance list --client --requirements <revision>`); each listed
/// client scenario must be in [`SCENARIOS`] at that revision.
pub(crate) const REVISIONS: &[&str] = &["2025-11-25", "2026-07-28"];

/// One client scenario run at one revision.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scenario {
    pub(crate) name: &'static str,
    /// The revision it runs at (`--spec-version`, and the client's
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`).
    pub(crate) revision: &'static str,
    /// The checks that must come out `SUCCESS`: a check id, or `id#name`
    /// where one id is shared by several checks (the suite reports each
    /// method or parameter of `http-standard-headers` under one id).
    pub(crate) expected: &'static [&'static [&'static str]],
    /// Why the client cannot pass it yet: the feature belongs to another
    /// issue. It is run and reported, does not fail CI, and must keep
    /// failing (a gap that starts passing fails CI, so the list is kept
    /// honest).
    pub(crate) known_gap: Option<&'static str>,
}

/// A scenario the client (or, in `conformance_server`, the server) passes.
pub(crate) const fn pass(
    name: &'static str,
    revision: &'static str,
    expected: &'static [&'static [&'static str]],
) -> Scenario {
    Scenario { name, revision, expected, known_gap: None }
}

// For a scenario whose feature is not built yet (none at the moment).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const fn gap(
    name: &'static str,
    revision: &'static str,
    expected: &'static [&'static [&'static str]],
    reason: &'static str,
) -> Scenario {
    Scenario { name, revision, expected, known_gap: Some(reason) }
}

/// The revisions the scenarios are listed at.
pub(crate) const R25: &str = "2025-11-25";
pub(crate) const R26: &str = "2026-07-28";

// The SUCCESS ids the suite's authorization server and MCP server helpers
// emit for a well-behaved client, in the order of the flow.
const DISCOVERY: &[&str] = &["prm-pathbased-requested", "authorization-server-metadata"];
const DCR: &[&str] = &["client-registration"];
/// 2026-07-28 only: the registration carries `application_type`.
const DCR_TYPE: &[&str] = &["sep-837-application-type-present"];
const AUTHORIZE: &[&str] =
    &["authorization-request", "pkce-code-challenge-sent", "pkce-s256-method-used"];
const TOKEN: &[&str] =
    &["token-request", "pkce-code-verifier-sent", "pkce-verifier-matches-challenge"];
const BEARER: &[&str] = &["valid-bearer-token"];
const RESOURCE: &[&str] = &[
    "resource-parameter-in-authorization",
    "resource-parameter-in-token",
    "resource-parameter-valid-uri",
    "resource-parameter-consistency",
    "resource-parameter-matches-prm",
];
const AUTH_METHOD: &[&str] = &["token-endpoint-auth-method"];
const DPOP: &[&str] = &[
    "sep-1932-client-token-request-proof",
    "sep-1932-client-dpop-auth-scheme",
    "sep-1932-client-fresh-proof",
];
const DPOP_NONCE: &[&str] = &["sep-1932-client-as-nonce", "sep-1932-client-rs-nonce"];
const SCHEMA_2020_12: &[&str] = &[
    "json-schema-2020-12-client-tool-found",
    "json-schema-2020-12-client-echo-completed",
    "json-schema-2020-12-client-$schema-preserved",
    "json-schema-2020-12-client-$defs-preserved",
    "json-schema-2020-12-client-additionalProperties-preserved",
    "wire-schema-valid",
];
/// SEP-2106: SKIPPED instead of FAILURE before 2026-07-28 when a keyword is
/// lost, SUCCESS at any revision when it is kept.
const SCHEMA_SEP_2106: &[&str] = &[
    "sep-2106-client-composition-keywords-preserved",
    "sep-2106-client-conditional-keywords-preserved",
    "sep-2106-client-anchor-keyword-preserved",
];

/// Every client scenario this project runs, at each revision that lists it,
/// with the checks that must come out `SUCCESS`. In `auth/resource-mismatch`,
/// `auth/scope-retry-limit`, `auth/iss-*` rejections and
/// `auth/metadata-issuer-mismatch` the client is meant to fail: the
/// scenario's own check proves the refusal.
pub(crate) const SCENARIOS: &[Scenario] = &[
    // ---- 2025-11-25: required
    pass("initialize", R25, &[&["mcp-client-initialization"]]),
    pass("tools_call", R25, &[&["tool-add-numbers", "wire-schema-valid"]]),
    pass(
        "elicitation-sep1034-client-defaults",
        R25,
        &[&[
            "client-elicitation-sep1034-string-default",
            "client-elicitation-sep1034-integer-default",
            "client-elicitation-sep1034-number-default",
            "client-elicitation-sep1034-enum-default",
            "client-elicitation-sep1034-boolean-default",
        ]],
    ),
    pass(
        "sse-retry",
        R25,
        &[&[
            "client-sse-graceful-reconnect",
            "client-sse-retry-timing",
            "client-sse-last-event-id",
        ]],
    ),
    pass("auth/metadata-default", R25, &[DISCOVERY, DCR, AUTHORIZE, TOKEN, BEARER, RESOURCE]),
    pass("auth/metadata-var1", R25, &[DISCOVERY, DCR, AUTHORIZE, TOKEN, BEARER, RESOURCE]),
    pass("auth/metadata-var2", R25, &[DISCOVERY, DCR, AUTHORIZE, TOKEN, BEARER, RESOURCE]),
    pass("auth/metadata-var3", R25, &[DISCOVERY, DCR, AUTHORIZE, TOKEN, BEARER, RESOURCE]),
    pass("auth/basic-cimd", R25, &[DISCOVERY, AUTHORIZE, &["cimd-client-id-used"], TOKEN, BEARER]),
    pass(
        "auth/scope-from-www-authenticate",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, &["scope-from-www-authenticate"], TOKEN, BEARER],
    ),
    pass(
        "auth/scope-from-scopes-supported",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, &["scope-from-scopes-supported"], TOKEN, BEARER],
    ),
    pass(
        "auth/scope-omitted-when-undefined",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, &["scope-omitted-when-undefined"], TOKEN, BEARER],
    ),
    pass(
        "auth/scope-step-up",
        R25,
        &[
            DISCOVERY,
            DCR,
            AUTHORIZE,
            TOKEN,
            BEARER,
            &["scope-step-up-initial", "scope-step-up-escalation"],
        ],
    ),
    pass(
        "auth/scope-retry-limit",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, TOKEN, &["scope-retry-limit"]],
    ),
    pass(
        "auth/token-endpoint-auth-basic",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, TOKEN, AUTH_METHOD, BEARER, RESOURCE],
    ),
    pass(
        "auth/token-endpoint-auth-post",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, TOKEN, AUTH_METHOD, BEARER, RESOURCE],
    ),
    pass(
        "auth/token-endpoint-auth-none",
        R25,
        &[DISCOVERY, DCR, AUTHORIZE, TOKEN, AUTH_METHOD, BEARER, RESOURCE],
    ),
    pass(
        "auth/pre-registration",
        R25,
        &[DISCOVERY, AUTHORIZE, TOKEN, &["pre-registration-auth"], BEARER],
    ),
    // ---- 2025-11-25: extensions and added after the release (never scored)
    pass(
        "auth/client-credentials-jwt",
        R25,
        &[DISCOVERY, &["token-request", "client-credentials-jwt-verified"], BEARER],
    ),
    pass(
        "auth/client-credentials-basic",
        R25,
        &[DISCOVERY, &["token-request", "client-credentials-basic-auth"], BEARER],
    ),
    pass(
        "auth/enterprise-managed-authorization",
        R25,
        &[
            DISCOVERY,
            &["complete-flow-token-exchange", "token-request", "complete-flow-jwt-bearer"],
            BEARER,
        ],
    ),
    pass("auth/dpop", R25, &[DISCOVERY, DCR, AUTHORIZE, TOKEN, DPOP]),
    pass("auth/dpop-nonce", R25, &[DISCOVERY, DCR, AUTHORIZE, TOKEN, DPOP, DPOP_NONCE]),
    pass(
        "auth/wif-jwt-bearer",
        R25,
        &[DISCOVERY, &["token-request", "wif-assertion-verified"], BEARER],
    ),
    pass("json-schema-2020-12-preservation", R25, &[SCHEMA_2020_12, SCHEMA_SEP_2106]),
    // ---- 2026-07-28: required
    pass("tools_call", R26, &[&["tool-add-numbers", "wire-schema-valid"]]),
    pass(
        "request-metadata",
        R26,
        &[&[
            "sep-2575-http-client-sends-version-header",
            "sep-2575-client-populates-meta",
            "sep-2575-client-sends-client-info",
            "sep-2575-http-version-header-matches-meta",
            "sep-2575-client-declares-roots-capability",
            "sep-2575-client-declares-sampling-capability",
            "sep-2575-client-declares-elicitation-capability",
            "sep-2575-client-retry-supported-version",
        ]],
    ),
    pass(
        "auth/metadata-default",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, BEARER, RESOURCE],
    ),
    pass(
        "auth/metadata-var1",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, BEARER, RESOURCE],
    ),
    pass(
        "auth/metadata-var2",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, BEARER, RESOURCE],
    ),
    pass(
        "auth/metadata-var3",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, BEARER, RESOURCE],
    ),
    pass("auth/basic-cimd", R26, &[DISCOVERY, AUTHORIZE, &["cimd-client-id-used"], TOKEN, BEARER]),
    pass(
        "auth/scope-from-www-authenticate",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["scope-from-www-authenticate"], TOKEN, BEARER],
    ),
    pass(
        "auth/scope-from-scopes-supported",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["scope-from-scopes-supported"], TOKEN, BEARER],
    ),
    pass(
        "auth/scope-omitted-when-undefined",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["scope-omitted-when-undefined"], TOKEN, BEARER],
    ),
    pass(
        "auth/scope-step-up",
        R26,
        &[
            DISCOVERY,
            DCR,
            DCR_TYPE,
            AUTHORIZE,
            TOKEN,
            BEARER,
            &[
                "scope-step-up-initial",
                "scope-step-up-escalation",
                "sep-2350-scope-union-on-reauth",
            ],
        ],
    ),
    pass(
        "auth/scope-retry-limit",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, &["scope-retry-limit"]],
    ),
    pass(
        "auth/token-endpoint-auth-basic",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, AUTH_METHOD, BEARER, RESOURCE],
    ),
    pass(
        "auth/token-endpoint-auth-post",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, AUTH_METHOD, BEARER, RESOURCE],
    ),
    pass(
        "auth/token-endpoint-auth-none",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, AUTH_METHOD, BEARER, RESOURCE],
    ),
    pass(
        "auth/pre-registration",
        R26,
        &[DISCOVERY, AUTHORIZE, TOKEN, &["pre-registration-auth"], BEARER],
    ),
    pass(
        "auth/resource-mismatch",
        R26,
        &[&["prm-pathbased-requested", "resource-mismatch-rejected"]],
    ),
    pass(
        "auth/offline-access-scope",
        R26,
        &[
            DISCOVERY,
            &["sep-2207-client-metadata-grant-types"],
            DCR,
            DCR_TYPE,
            AUTHORIZE,
            &["sep-2207-offline-access-requested"],
            TOKEN,
            BEARER,
        ],
    ),
    pass(
        "auth/offline-access-not-supported",
        R26,
        &[
            DISCOVERY,
            DCR,
            DCR_TYPE,
            AUTHORIZE,
            &["sep-2207-offline-access-not-requested"],
            TOKEN,
            BEARER,
        ],
    ),
    pass(
        "auth/authorization-server-migration",
        R26,
        &[
            DISCOVERY,
            DCR,
            DCR_TYPE,
            AUTHORIZE,
            TOKEN,
            BEARER,
            &[
                "sep-2352-reregister-on-as-change",
                "sep-2352-no-reuse-on-as-change",
                "sep-2352-no-cross-as-credential-reuse",
            ],
        ],
    ),
    pass(
        "auth/iss-supported",
        R26,
        &[
            DISCOVERY,
            DCR,
            DCR_TYPE,
            AUTHORIZE,
            TOKEN,
            BEARER,
            &["sep-2468-client-compare-iss-supported"],
        ],
    ),
    pass(
        "auth/iss-not-advertised",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, BEARER, &["sep-2468-client-proceed-no-iss"]],
    ),
    pass(
        "auth/iss-supported-missing",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["sep-2468-client-reject-missing-iss"]],
    ),
    pass(
        "auth/iss-wrong-issuer",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["sep-2468-client-compare-iss-supported"]],
    ),
    pass(
        "auth/iss-unexpected",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["sep-2468-client-compare-iss-unadvertised"]],
    ),
    pass(
        "auth/iss-normalized",
        R26,
        &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, &["sep-2468-client-no-normalization"]],
    ),
    pass(
        "auth/metadata-issuer-mismatch",
        R26,
        &[DISCOVERY, &["sep-2468-client-validate-metadata-issuer"]],
    ),
    pass(
        "sep-2322-client-request-state",
        R26,
        &[&[
            "sep-2322-client-request-state-echoed",
            "sep-2322-client-jsonrpc-id-different",
            "sep-2322-client-no-state-omitted",
            "sep-2322-client-parallel-isolation",
            "sep-2322-default-result-type-complete",
        ]],
    ),
    pass(
        "http-standard-headers",
        R26,
        &[&[
            "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_tools_list",
            "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_tools_call",
            "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_resources_list",
            "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_resources_read",
            "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_prompts_list",
            "sep-2243-client-includes-standard-headers#ClientMcpMethodHeader_prompts_get",
            "sep-2243-client-includes-standard-headers#ClientMcpNameHeader_tools_call",
            "sep-2243-client-includes-standard-headers#ClientMcpNameHeader_resources_read",
            "sep-2243-client-includes-standard-headers#ClientMcpNameHeader_prompts_get",
        ]],
    ),
    pass(
        "http-custom-headers",
        R26,
        &[&[
            "sep-2243-client-supports-custom-headers",
            "sep-2243-client-mirrors-designated-params",
            "sep-2243-client-encode-values",
            "sep-2243-client-base64-unsafe",
            "sep-2243-client-omit-null",
        ]],
    ),
    pass(
        "http-invalid-tool-headers",
        R26,
        &[&[
            "sep-2243-client-reject-invalid-tool",
            "sep-2243-x-mcp-header-not-empty",
            "sep-2243-x-mcp-header-charset",
            "sep-2243-x-mcp-header-unique",
            "sep-2243-x-mcp-header-primitive-only",
        ]],
    ),
    pass("json-schema-ref-no-deref", R26, &[&["sep-2106-no-network-ref-deref"]]),
    // ---- 2026-07-28: extensions and added after the release (never scored)
    pass(
        "auth/client-credentials-jwt",
        R26,
        &[DISCOVERY, &["token-request", "client-credentials-jwt-verified"], BEARER],
    ),
    pass(
        "auth/client-credentials-basic",
        R26,
        &[DISCOVERY, &["token-request", "client-credentials-basic-auth"], BEARER],
    ),
    pass(
        "auth/enterprise-managed-authorization",
        R26,
        &[
            DISCOVERY,
            &["complete-flow-token-exchange", "token-request", "complete-flow-jwt-bearer"],
            BEARER,
        ],
    ),
    pass("auth/dpop", R26, &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, DPOP]),
    pass("auth/dpop-nonce", R26, &[DISCOVERY, DCR, DCR_TYPE, AUTHORIZE, TOKEN, DPOP, DPOP_NONCE]),
    pass(
        "auth/wif-jwt-bearer",
        R26,
        &[DISCOVERY, &["token-request", "wif-assertion-verified"], BEARER],
    ),
    pass("json-schema-2020-12-preservation", R26, &[SCHEMA_2020_12, SCHEMA_SEP_2106]),
    // ---- 2025-03-26: no longer in a requirement list, still in the suite
    pass(
        "auth/2025-03-26-oauth-metadata-backcompat",
        "2025-03-26",
        &[&["authorization-server-metadata", "client-registration"], AUTHORIZE, TOKEN, BEARER],
    ),
    pass(
        "auth/2025-03-26-oauth-endpoint-fallback",
        "2025-03-26",
        &[&["client-registration", "authorization-request", "token-request", "valid-bearer-token"]],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::suite::list_mismatch;

    #[test]
    fn the_table_is_sound() {
        for revision in REVISIONS {
            assert!(list_mismatch(revision, &[], SCENARIOS).iter().all(|p| !p.contains("twice")));
        }
        for s in SCENARIOS {
            assert!(!s.expected.iter().all(|g| g.is_empty()), "{} expects nothing", s.name);
            if let Some(reason) = s.known_gap {
                assert!(!reason.is_empty(), "{}", s.name);
            }
        }
        // The 2026-07-28 authorization scenarios that register expect the
        // registration's application_type.
        for s in SCENARIOS.iter().filter(|s| s.revision == R26) {
            let ids: Vec<&str> = s.expected.iter().flat_map(|g| g.iter().copied()).collect();
            if ids.contains(&"client-registration") {
                assert!(ids.contains(&"sep-837-application-type-present"), "{}", s.name);
            }
        }
    }
}
