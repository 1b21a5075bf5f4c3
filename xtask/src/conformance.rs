//! `cargo xtask conformance`: the official MCP conformance suite against our
//! client, at both protocol revisions it defines requirements for.
//!
//! Installs the pinned `@modelcontextprotocol/conformance` and the Node.js 22
//! it needs (both from npm, `xtask/conformance/`) into `.tools/conformance/`,
//! checks [`SCENARIOS`] against the suite's own lists
//! (`conformance list --client --requirements <revision>` for each of
//! [`REVISIONS`]: scored, extension and added-after-release scenarios alike),
//! builds the conformance client binary (package `mcp-conformance`, built on
//! the public API only), runs every scenario at its revision with
//! `exec <binary>` as the client command, one at a time, and reads each
//! `checks.json`: a scenario passes only when every expected check is there
//! as `SUCCESS` and no check is `FAILURE` or `WARNING`. The runner itself
//! fails a scenario only on a `FAILURE`, so a client that crashes early or a
//! scenario whose checks are all `SKIPPED` would pass it while testing
//! nothing: the expected ids are what make the run mean something.
//!
//! A known gap (a feature another issue owns) is run and reported as
//! `KNOWN GAP (not passing)` without failing the step; one that starts
//! passing fails it, so that the list stays honest. Each run's output is in
//! `target/conformance/<revision>/<scenario>/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::steps::{Step, root, run};

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
const fn gap(
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

fn install_dir() -> PathBuf {
    root().join(".tools").join("conformance")
}

pub(crate) fn bin_dir() -> PathBuf {
    install_dir().join("node_modules").join(".bin")
}

/// Installs the suite and Node.js 22 unless the installed lock matches.
/// The lock a conformance run holds from its install to its end (the
/// process's end): two runs in one checkout would otherwise `npm ci` into
/// the same folder and overwrite each other's results.
static RUN_LOCK: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();

/// Takes the checkout's conformance lock (`.tools/conformance.lock`),
/// waiting for a run that holds it; released when this process ends.
fn lock_run() -> Result<(), String> {
    if RUN_LOCK.get().is_some() {
        return Ok(());
    }
    let path = root().join(".tools").join("conformance.lock");
    std::fs::create_dir_all(path.parent().unwrap_or(&path))
        .map_err(|e| format!("creating {}: {e}", path.display()))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
    if let Err(std::fs::TryLockError::WouldBlock) = file.try_lock() {
        println!("another conformance run holds {}; waiting for it", path.display());
    }
    file.lock().map_err(|e| format!("locking {}: {e}", path.display()))?;
    let _ = RUN_LOCK.set(file);
    Ok(())
}

pub(crate) fn install() -> Result<(), String> {
    lock_run()?;
    let src = root().join("xtask").join("conformance");
    let dst = install_dir();
    std::fs::create_dir_all(&dst).map_err(|e| format!("creating {}: {e}", dst.display()))?;
    let pinned = std::fs::read(src.join("package-lock.json"))
        .map_err(|e| format!("reading the pinned lock: {e}"))?;
    let installed = std::fs::read(dst.join("package-lock.json")).ok();
    if installed.as_deref() == Some(pinned.as_slice()) && bin_dir().join("conformance").exists() {
        println!("conformance suite already installed in {}", dst.display());
    } else {
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(src.join(file), dst.join(file))
                .map_err(|e| format!("copying {file}: {e}"))?;
        }
        let mut npm = Command::new("npm");
        npm.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(&dst);
        run(npm)?;
    }
    let mut node = Command::new(bin_dir().join("node"));
    node.arg("--version");
    let out = node.output().map_err(|e| format!("running the installed node: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !version.starts_with("v22.") {
        return Err(format!("the installed node is {version:?}, expected v22.x"));
    }
    Ok(())
}

/// Builds the conformance client and returns its path.
fn build_client() -> Result<PathBuf, String> {
    let bin = crate::steps::build_bin("mcp-conformance", "mcp-conformance-client")?;
    if bin.to_string_lossy().contains(char::is_whitespace) {
        // The runner splits the command on spaces.
        return Err(format!(
            "the client path {} has white space, which the runner cannot take",
            bin.display()
        ));
    }
    Ok(bin)
}

/// `PATH` with the installed Node.js first.
pub(crate) fn suite_path() -> Result<std::ffi::OsString, String> {
    std::env::join_paths(
        std::iter::once(bin_dir())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .map_err(|e| format!("building PATH: {e}"))
}

/// Checks a scenario `table` against what the suite lists for one `side`
/// (`client` or `server`) in every revision (`parse` reads the listing);
/// the error names every scenario missing from either.
pub(crate) fn check_table(
    side: &str,
    parse: fn(&str) -> Vec<String>,
    table: &[Scenario],
    what: &str,
) -> Result<(), String> {
    let mut problems = Vec::new();
    for revision in REVISIONS {
        problems.extend(list_mismatch(revision, &listed(side, revision, parse)?, table));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("the {what} table is out of date:\n  {}", problems.join("\n  ")))
    }
}

/// The scenarios of one `side` (`client` or `server`) the suite lists for
/// `revision`, as `parse` reads its listing; none is an error.
fn listed(
    side: &str,
    revision: &str,
    parse: fn(&str) -> Vec<String>,
) -> Result<Vec<String>, String> {
    let mut cmd = Command::new(bin_dir().join("conformance"));
    cmd.args(["list", &format!("--{side}"), "--requirements", revision]).env("PATH", suite_path()?);
    let out = cmd.output().map_err(|e| format!("running conformance list: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "conformance list --{side} --requirements {revision} exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let names = parse(&String::from_utf8_lossy(&out.stdout));
    if names.is_empty() {
        return Err(format!("conformance list --requirements {revision} lists no {side} scenario"));
    }
    Ok(names)
}

/// The client scenarios of a `conformance list --client --requirements`
/// listing: the scored ones (under `Client scenarios`) and the ones run but
/// never scored (extension, added-after-release, ...) tagged `[client]`.
pub(crate) fn parse_requirements(text: &str) -> Vec<String> {
    #[derive(PartialEq)]
    enum Section {
        Other,
        Client,
        Unscored,
    }
    let mut section = Section::Other;
    let mut names = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("Client scenarios") {
            section = Section::Client;
        } else if trimmed.starts_with("Server scenarios") {
            section = Section::Other;
        } else if trimmed.starts_with("Run and reported") {
            section = Section::Unscored;
        } else if let Some(item) = trimmed.strip_prefix("- ") {
            let name = match section {
                Section::Client => Some(item.split_whitespace().next().unwrap_or(item)),
                Section::Unscored => item.strip_suffix("[client]").map(str::trim),
                Section::Other => None,
            };
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                names.push(name.to_owned());
            }
        } else if !trimmed.is_empty() && !line.starts_with(' ') {
            // A new top-level heading ends the previous section.
            section = Section::Other;
        }
    }
    names
}

/// How [`SCENARIOS`] differs from what the suite lists for `revision`:
/// scenarios it lists that the table lacks, and table entries it no longer
/// lists. Empty when they agree.
pub(crate) fn list_mismatch(revision: &str, listed: &[String], table: &[Scenario]) -> Vec<String> {
    let mut problems = Vec::new();
    for name in listed {
        if !table.iter().any(|s| s.revision == revision && s.name == name) {
            problems.push(format!(
                "the suite lists scenario {name} for {revision}, which the xtask does not run"
            ));
        }
    }
    for s in table.iter().filter(|s| s.revision == revision) {
        if !listed.iter().any(|n| n == s.name) {
            problems.push(format!(
                "the xtask runs {} at {revision}, which the suite no longer lists",
                s.name
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for s in table.iter().filter(|s| s.revision == revision) {
        if !seen.insert(s.name) {
            problems.push(format!("{} is in the table twice at {revision}", s.name));
        }
    }
    problems
}

/// Runs one scenario at its revision and returns its `checks.json`.
fn run_scenario(client: &Path, s: &Scenario) -> Result<String, String> {
    let out =
        root().join("target").join("conformance").join(s.revision).join(s.name.replace('/', "_"));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let log = std::fs::File::create(out.join("runner.log"))
        .map_err(|e| format!("creating the runner log: {e}"))?;
    let log_err = log.try_clone().map_err(|e| format!("the runner log: {e}"))?;
    let mut cmd = Command::new(bin_dir().join("conformance"));
    cmd.args(["client", "--command"])
        .arg(format!("exec {}", client.display()))
        .args(["--scenario", s.name, "--spec-version", s.revision, "--force"])
        .args(["--timeout", "30000", "-o"])
        .arg(&out)
        .env("PATH", suite_path()?)
        .stdout(log)
        .stderr(log_err)
        .current_dir(&out);
    // The runner's own verdict is in runner.log; ours comes from checks.json.
    let status = cmd.status().map_err(|e| format!("starting the conformance runner: {e}"))?;
    let checks_file = find_file(&out, "checks.json").ok_or_else(|| {
        format!(
            "the runner wrote no checks.json (runner exit {status}; see {})",
            out.join("runner.log").display()
        )
    })?;
    std::fs::read_to_string(&checks_file)
        .map_err(|e| format!("reading {}: {e}", checks_file.display()))
}

/// Judges one scenario's `checks.json`: every expected check `SUCCESS`, no
/// check `FAILURE` or `WARNING`.
pub(crate) fn verdict(
    scenario: &str,
    checks_json: &str,
    expected: &[&[&str]],
) -> Result<usize, String> {
    let checks = parse_checks(checks_json)
        .ok_or_else(|| format!("{scenario}: checks.json is not a list of checks"))?;
    let mut problems = Vec::new();
    for c in &checks {
        if c.status == "FAILURE" || c.status == "WARNING" {
            let what = if c.message.is_empty() { c.name.clone() } else { c.message.clone() };
            problems.push(format!("{} is {} ({what})", c.id, c.status));
        }
    }
    for want in expected.iter().flat_map(|group| group.iter()) {
        let (id, name) = match want.split_once('#') {
            Some((id, name)) => (id, Some(name)),
            None => (*want, None),
        };
        let ok = checks
            .iter()
            .any(|c| c.id == id && c.status == "SUCCESS" && name.is_none_or(|n| c.name == n));
        if !ok {
            problems.push(format!("{want} is missing or not SUCCESS"));
        }
    }
    if problems.is_empty() { Ok(checks.len()) } else { Err(problems.join("; ")) }
}

/// What became of one scenario.
#[derive(Debug, PartialEq)]
pub(crate) enum Judgement {
    Passed,
    Failed(String),
    /// A known gap that still fails, as expected: the reason, and how.
    KnownGap(&'static str, String),
    /// A known gap that passes now: the list must lose it.
    GapPasses,
}

/// The judgements of a run counted, for its end: one summary line, and
/// an error naming what fails the step.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    passed: usize,
    gaps: usize,
    failures: Vec<String>,
}

impl Tally {
    /// Counts the judgement of the scenario `label`.
    pub(crate) fn count(&mut self, label: String, judgement: &Judgement) {
        match judgement {
            Judgement::Passed => self.passed += 1,
            Judgement::KnownGap(..) => self.gaps += 1,
            Judgement::Failed(_) | Judgement::GapPasses => {}
        }
        if judgement.fails_ci() {
            self.failures.push(label);
        }
    }

    /// The summary line (`<what>: N passed, N known gaps, N failing, of
    /// <of> in <secs>s`).
    fn summary(&self, what: &str, of: &str, took: Duration) -> String {
        format!(
            "{what}: {} passed, {} known gaps, {} failing, of {of} in {:.1}s",
            self.passed,
            self.gaps,
            self.failures.len(),
            took.as_secs_f64()
        )
    }

    /// Prints the summary line of the run started at `start`; an error
    /// names every failing scenario.
    pub(crate) fn finish(self, what: &str, of: &str, start: Instant) -> Result<(), String> {
        println!("{}", self.summary(what, of, start.elapsed()));
        if self.failures.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} failing (see above): {}",
                self.failures.len(),
                self.failures.join(", ")
            ))
        }
    }
}

impl Judgement {
    /// Whether this judgement fails the step.
    pub(crate) fn fails_ci(&self) -> bool {
        matches!(self, Judgement::Failed(_) | Judgement::GapPasses)
    }
}

/// Judges a scenario from its run (`checks.json`, or why there is none).
pub(crate) fn judge(s: &Scenario, run: Result<String, String>) -> Judgement {
    let result = run.and_then(|text| verdict(s.name, &text, s.expected));
    match (result, s.known_gap) {
        (Ok(_), None) => Judgement::Passed,
        (Err(why), None) => Judgement::Failed(why),
        (Ok(_), Some(_)) => Judgement::GapPasses,
        (Err(why), Some(reason)) => Judgement::KnownGap(reason, why),
    }
}

pub(crate) struct Check {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) status: String,
    pub(crate) message: String,
}

/// The checks of a `checks.json` array.
pub(crate) fn parse_checks(text: &str) -> Option<Vec<Check>> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let text_of = |c: &serde_json::Value, key: &str| {
        c.get(key).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned()
    };
    value
        .as_array()?
        .iter()
        .map(|c| {
            Some(Check {
                id: c.get("id")?.as_str()?.to_owned(),
                status: c.get("status")?.as_str()?.to_owned(),
                name: text_of(c, "name"),
                message: text_of(c, "errorMessage").chars().take(300).collect(),
            })
        })
        .collect()
}

pub(crate) fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// Runs every scenario in [`SCENARIOS`], one at a time, after checking the
/// table against the suite's requirement lists.
fn run_all() -> Result<(), String> {
    check_table("client", parse_requirements, SCENARIOS, "scenario")?;
    let client = build_client()?;
    let start = Instant::now();
    let mut tally = Tally::default();
    for s in SCENARIOS {
        let t = Instant::now();
        let judgement = judge(s, run_scenario(&client, s));
        let took = t.elapsed().as_secs_f64();
        let label = format!("{} @ {}", s.name, s.revision);
        let line = match &judgement {
            Judgement::Passed => format!("conformance PASS {label} ({took:.1}s)"),
            Judgement::Failed(why) => format!("conformance FAIL {label} ({took:.1}s): {why}"),
            Judgement::KnownGap(reason, why) => {
                format!("KNOWN GAP (not passing): {label}: {reason} [{why}]")
            }
            Judgement::GapPasses => format!(
                "conformance FAIL {label} ({took:.1}s): listed as a known gap but passes now; \
                 take it off the list"
            ),
        };
        println!("{line}");
        tally.count(label, &judgement);
    }
    tally.finish("conformance", &format!("{} runs", SCENARIOS.len()), start)
}

/// The conformance steps: install, then every client scenario, then every
/// server scenario against the testkit, and through the bridge.
pub(crate) fn steps() -> Vec<Step> {
    vec![
        Step::new("conformance: install suite and Node.js 22", install),
        Step::new("conformance: client scenarios", run_all),
        crate::conformance_server::step(),
        crate::conformance_server::bridge_step(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_sums_up_and_names_what_fails() {
        let mut tally = Tally::default();
        tally.count("a".into(), &Judgement::Passed);
        tally.count("b".into(), &Judgement::KnownGap("why", "how".into()));
        tally.count("c".into(), &Judgement::Failed("no".into()));
        tally.count("d".into(), &Judgement::GapPasses);
        assert_eq!(
            tally.summary("conformance", "4 runs", Duration::from_millis(1250)),
            "conformance: 1 passed, 1 known gaps, 2 failing, of 4 runs in 1.2s"
        );
        let err = tally.finish("x", "4", Instant::now()).unwrap_err();
        assert_eq!(err, "2 failing (see above): c, d");
        let mut clean = Tally::default();
        clean.count("a".into(), &Judgement::Passed);
        assert!(clean.finish("x", "1", Instant::now()).is_ok());
    }

    #[test]
    fn verdicts() {
        let ok = r#"[{"id":"a","status":"SUCCESS","specReferences":[{"id":"x"}]},{"id":"b","status":"INFO"}]"#;
        assert_eq!(verdict("s", ok, &[&["a"]]), Ok(2));
        assert!(verdict("s", ok, &[&["a"], &["c"]]).unwrap_err().contains("c is missing"));
        let warn = r#"[{"id":"a","status":"SUCCESS"},{"id":"t","status":"WARNING"}]"#;
        assert!(verdict("s", warn, &[&["a"]]).unwrap_err().contains("t is WARNING"));
        let fail = r#"[{"id":"a","status":"FAILURE","errorMessage":"no call"}]"#;
        assert!(verdict("s", fail, &[&["a"]]).unwrap_err().contains("a is FAILURE (no call)"));
        assert!(verdict("s", "{}", &[]).is_err());
        // Only SKIPPED: the runner would pass it; the expected ids do not.
        let skipped = r#"[{"id":"a","status":"SKIPPED"}]"#;
        assert!(verdict("s", skipped, &[&["a"]]).is_err());
    }

    #[test]
    fn named_checks() {
        let checks = r#"[
            {"id":"h","name":"M_tools_list","status":"SUCCESS"},
            {"id":"h","name":"M_prompts_get","status":"SKIPPED"}
        ]"#;
        assert!(verdict("s", checks, &[&["h#M_tools_list"]]).is_ok());
        assert!(verdict("s", checks, &[&["h"]]).is_ok());
        let err = verdict("s", checks, &[&["h#M_tools_list", "h#M_prompts_get"]]).unwrap_err();
        assert!(err.contains("h#M_prompts_get is missing"), "{err}");
    }

    const PASSING: &str = r#"[{"id":"a","status":"SUCCESS"}]"#;
    const FAILING: &str = r#"[{"id":"a","status":"FAILURE"}]"#;

    #[test]
    fn judgements() {
        let must = pass("x", R26, &[&["a"]]);
        assert_eq!(judge(&must, Ok(PASSING.into())), Judgement::Passed);
        assert!(matches!(judge(&must, Ok(FAILING.into())), Judgement::Failed(_)));
        assert!(matches!(judge(&must, Err("no checks.json".into())), Judgement::Failed(_)));
        let known = gap("y", R26, &[&["a"]], "not built yet");
        let j = judge(&known, Ok(FAILING.into()));
        assert!(matches!(j, Judgement::KnownGap("not built yet", _)), "{j:?}");
        assert!(!j.fails_ci());
        assert!(!judge(&known, Err("crashed".into())).fails_ci());
        // A gap that passes fails CI until it leaves the list.
        assert_eq!(judge(&known, Ok(PASSING.into())), Judgement::GapPasses);
        assert!(Judgement::GapPasses.fails_ci());
        assert!(Judgement::Failed(String::new()).fails_ci());
        assert!(!Judgement::Passed.fails_ci());
    }

    const LISTING: &str = "\
Required for 2026-07-28 (69 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless
  - tools-list

Client scenarios (test against a client):
  - tools_call
  - auth/metadata-default

Run and reported, but never scored:
  extension (3):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  added-after-release (1):
    - json-schema-2020-12-preservation [client]
  pending (1):
    - json-schema-2020-12 [server]
";

    #[test]
    fn requirement_listing() {
        assert_eq!(
            parse_requirements(LISTING),
            [
                "tools_call",
                "auth/metadata-default",
                "auth/dpop",
                "json-schema-2020-12-preservation"
            ]
        );
        assert!(parse_requirements("nothing here\n").is_empty());
    }

    #[test]
    fn table_against_listing() {
        let listed = parse_requirements(LISTING);
        let table = [
            pass("tools_call", R26, &[]),
            pass("auth/metadata-default", R26, &[]),
            gap("auth/dpop", R26, &[], "later"),
            pass("json-schema-2020-12-preservation", R26, &[]),
            pass("tools_call", R25, &[]),
        ];
        assert!(list_mismatch(R26, &listed, &table).is_empty());
        // A scenario the suite adds, one it drops, one listed twice.
        let p = list_mismatch(R26, &listed, &table[1..]);
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("tools_call"), "{p:?}");
        let stale = [&table[..], &[pass("gone", R26, &[])]].concat();
        assert!(list_mismatch(R26, &listed, &stale)[0].contains("no longer lists"));
        let twice = [&table[..], &[pass("tools_call", R26, &[])]].concat();
        assert!(list_mismatch(R26, &listed, &twice)[0].contains("twice"));
    }

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
