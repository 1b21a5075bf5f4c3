//! Call approval: patterns, the policy's evaluation (with the managed
//! policy, which the user's rules cannot widen), and the registry asking
//! the host's approver, remembering answers and refusing before any I/O.

use std::sync::Arc;
use std::time::Duration;

use mcp_host_registry::{
    ApprovalAnswer, ApprovalRequest, ApprovalStore, Approver, CallPolicy, Config, Error,
    FileApprovalStore, ManagedPolicy, MemoryApprovalStore, Pattern, Reason, Registry,
    RegistryOptions, Remember, ServerCommand, ServerConfig, Tier, TierRules, ToolPolicy,
    TrustError, TrustOptions,
};
use mcp_proto::client::BoxFuture;
use mcp_proto::types::ToolAnnotations;
use serde_json::{Value, json};

use crate::scripted::Scripted;

#[test]
fn patterns() {
    // (pattern, name, matches)
    let cases: &[(&str, &str, bool)] = &[
        ("github__*", "github__create_issue", true),
        ("github__*", "gitlab__create_issue", false),
        ("*__delete_*", "files__delete_file", true),
        ("*__delete_*", "files__undelete", false),
        ("*", "", true),
        ("*", "anything", true),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXcYYb", false),
        ("exact", "exact", true),
        ("exact", "Exact", false),
        ("**x", "x", true),
        ("x*", "x", true),
        ("é*", "été", true),
    ];
    for (pattern, name, expected) in cases {
        let p = Pattern::new(pattern).unwrap();
        assert_eq!(p.matches(name), *expected, "{pattern} ~ {name}");
    }
    assert!(Pattern::new("  ").is_none());
    assert!(Pattern::new(&"a".repeat(257)).is_none());
    // Many stars against a long name that never matches: fast.
    let p = Pattern::new(&"*a".repeat(100)).unwrap();
    let started = std::time::Instant::now();
    assert!(!p.matches(&"a".repeat(99)));
    assert!(started.elapsed() < Duration::from_secs(1));
}

fn policy(default: Tier, rules: &[(&str, Tier)], trusted: &[&str]) -> CallPolicy {
    let mut p = CallPolicy { default, ..CallPolicy::default() };
    for (pattern, tier) in rules {
        assert!(p.rules.add(pattern, *tier));
    }
    p.trust_annotations = trusted.iter().map(|t| Pattern::new(t).unwrap()).collect();
    p
}

fn managed(text: &str) -> ManagedPolicy {
    ManagedPolicy::from_toml_str(text).unwrap()
}

fn annotations(read_only: Option<bool>, destructive: Option<bool>) -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: read_only,
        destructive_hint: destructive,
        ..Default::default()
    }
}

/// (policy, server, tool, annotations, managed tiers, expected tier)
type Case<'a> =
    (CallPolicy, ServerConfig, &'a str, Option<&'a ToolAnnotations>, &'a TierRules, Tier);

#[test]
fn policy_evaluation() {
    let server = |name: &str| ServerConfig::stdio(name, ServerCommand::new("x"));
    let listed = server("files").with_policy(ToolPolicy::new(["read"], ["write"]));
    let ro = annotations(Some(true), None);
    let destructive = annotations(Some(false), Some(true));
    let none = TierRules::default();
    let admin = managed("[tools]\nask = [\"github__*\"]\ndeny = [\"*__drop_*\"]\n");
    let pinned = admin.tiers().clone();
    let cases: Vec<Case<'_>> = vec![
        // The default, as before: everything allowed.
        (CallPolicy::default(), server("s"), "t", None, &none, Tier::Allow),
        // The server's exact lists are part of the one evaluation.
        (CallPolicy::default(), listed.clone(), "write", None, &none, Tier::Deny),
        (CallPolicy::default(), listed.clone(), "other", None, &none, Tier::Deny),
        (
            policy(Tier::Allow, &[("*", Tier::Allow)], &[]),
            listed.clone(),
            "write",
            None,
            &none,
            Tier::Deny,
        ),
        // Rules: the strictest match wins, whatever the order.
        (
            policy(Tier::Allow, &[("github__*", Tier::Ask)], &[]),
            server("github"),
            "x",
            None,
            &none,
            Tier::Ask,
        ),
        (
            policy(Tier::Ask, &[("github__get_*", Tier::Allow)], &[]),
            server("github"),
            "get_me",
            None,
            &none,
            Tier::Allow,
        ),
        (
            policy(Tier::Allow, &[("*__delete_*", Tier::Deny), ("files__*", Tier::Allow)], &[]),
            server("files"),
            "delete_all",
            None,
            &none,
            Tier::Deny,
        ),
        (
            policy(Tier::Allow, &[("files__*", Tier::Allow), ("*", Tier::Ask)], &[]),
            server("files"),
            "x",
            None,
            &none,
            Tier::Ask,
        ),
        (policy(Tier::Deny, &[], &[]), server("s"), "t", None, &none, Tier::Deny),
        // Annotations: used only for servers the configuration trusts.
        (policy(Tier::Ask, &[], &["files"]), server("files"), "t", Some(&ro), &none, Tier::Allow),
        (policy(Tier::Ask, &[], &[]), server("files"), "t", Some(&ro), &none, Tier::Ask),
        (
            policy(Tier::Allow, &[], &["f*"]),
            server("files"),
            "t",
            Some(&destructive),
            &none,
            Tier::Ask,
        ),
        (
            policy(Tier::Allow, &[], &[]),
            server("files"),
            "t",
            Some(&destructive),
            &none,
            Tier::Allow,
        ),
        // A rule beats an annotation.
        (
            policy(Tier::Ask, &[("files__t", Tier::Deny)], &["files"]),
            server("files"),
            "t",
            Some(&ro),
            &none,
            Tier::Deny,
        ),
        // Managed tiers cannot be widened: not by a rule, a default, nor an annotation.
        (
            policy(Tier::Allow, &[("github__*", Tier::Allow)], &[]),
            server("github"),
            "x",
            None,
            &pinned,
            Tier::Ask,
        ),
        (
            policy(Tier::Allow, &[], &["github"]),
            server("github"),
            "x",
            Some(&ro),
            &pinned,
            Tier::Ask,
        ),
        (
            policy(Tier::Allow, &[("*", Tier::Allow)], &[]),
            server("db"),
            "drop_table",
            None,
            &pinned,
            Tier::Deny,
        ),
        // ...but the user may narrow them.
        (
            policy(Tier::Allow, &[("github__*", Tier::Deny)], &[]),
            server("github"),
            "x",
            None,
            &pinned,
            Tier::Deny,
        ),
    ];
    for (i, (p, s, tool, a, m, expected)) in cases.iter().enumerate() {
        let d = p.decide(s, tool, *a, m);
        assert_eq!(d.tier, *expected, "case {i}: {}/{tool}: {d:?}", s.name);
        // What can be decided before I/O never disagrees with the whole.
        if let Some(early) = p.before_io(s, tool, m) {
            assert!(early.tier <= d.tier, "case {i}: {early:?} vs {d:?}");
        }
    }
    let d = policy(Tier::Allow, &[("github__*", Tier::Allow)], &[]).decide(
        &server("github"),
        "x",
        None,
        &pinned,
    );
    assert_eq!(d.reason, Reason::Managed("github__*".into()));
}

#[test]
fn managed_policy_blocks_servers_by_name_command_and_url() {
    let m = managed(
        "[servers]\nallow_commands = [\"npx\", \"/opt/mcp/*\"]\ndeny_names = [\"scratch-*\"]\nallow_urls = [\"https://*.corp.example/*\"]\n",
    );
    let stdio = |name: &str, cmd: &str| ServerConfig::stdio(name, ServerCommand::new(cmd));
    let servers = vec![
        stdio("ok", "npx"),
        stdio("ok-path", "/usr/bin/npx"),
        stdio("opt", "/opt/mcp/server"),
        stdio("shell", "sh"),
        stdio("scratch-1", "npx"),
        ServerConfig::http("corp", "https://mcp.corp.example/mcp"),
        ServerConfig::http("evil", "https://corp.example.evil.test/mcp"),
    ];
    let (kept, blocked) = m.admit(servers);
    let kept: Vec<&str> = kept.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(kept, ["ok", "ok-path", "opt", "corp"]);
    let blocked: Vec<(&str, &str)> =
        blocked.iter().map(|b| (b.server.as_str(), b.reason.as_str())).collect();
    assert_eq!(
        blocked,
        [
            ("shell", "its command is not in the managed policy's allow_commands"),
            ("scratch-1", "its name matches the managed policy's deny_names scratch-*"),
            ("evil", "its url is not in the managed policy's allow_urls"),
        ]
    );
    let deny = managed("[servers]\ndeny_commands = [\"curl\"]\n");
    assert!(deny.refuses(&stdio("c", "/usr/bin/curl")).is_some());
    assert!(deny.refuses(&stdio("c", "node")).is_none());
    assert!(ManagedPolicy::default().refuses(&stdio("c", "anything")).is_none());
    // Bad files: typed errors naming the problem, never quoting the text.
    for (text, says) in [
        ("[servers]\nallow_name = [\"x\"]\n", "unknown key `servers.allow_name`"),
        ("[tools]\nallow = [\"x\"]\n", "unknown key `tools.allow`"),
        ("[tools]\ndeny = \"x\"\n", "must be an array"),
        ("[tools]\nask = [\"  \"]\n", "is not a pattern"),
        ("secret-looking garbage [[", "not TOML"),
    ] {
        let e = ManagedPolicy::from_toml_str(text).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
        assert!(!e.contains("secret-looking"), "{e}");
    }
}

#[test]
fn managed_policy_files() {
    let dir = std::env::temp_dir().join(format!("mcp-registry-managed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("managed.toml");
    assert_eq!(ManagedPolicy::load(&path).unwrap(), ManagedPolicy::default());
    std::fs::write(&path, "[tools]\ndeny = [\"*\"]\n").unwrap();
    assert_eq!(ManagedPolicy::load(&path).unwrap().source(), Some(path.as_path()));
    std::fs::write(&path, "[tools\n").unwrap();
    let e = ManagedPolicy::load(&path).unwrap_err();
    assert!(matches!(e, TrustError::Corrupt { .. }), "{e:?}");
    assert!(e.to_string().contains("managed.toml"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An approver that gives one answer (or none: it never returns) and
/// keeps what it was asked.
#[derive(Debug)]
struct Asker {
    answer: Option<ApprovalAnswer>,
    asked: std::sync::Mutex<Vec<ApprovalRequest>>,
}

impl Asker {
    fn new(answer: Option<(bool, Remember)>) -> Arc<Asker> {
        Arc::new(Asker {
            answer: answer.map(|(allow, remember)| ApprovalAnswer { allow, remember }),
            asked: std::sync::Mutex::new(Vec::new()),
        })
    }

    fn count(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

impl Approver for Asker {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        self.asked.lock().unwrap().push(request.clone());
        Box::pin(async move {
            match self.answer {
                Some(answer) => answer,
                None => std::future::pending().await,
            }
        })
    }
}

fn tools() -> Vec<Value> {
    let tool = |name: &str, annotations: Value| json!({"name": name, "inputSchema": {"type": "object"}, "annotations": annotations});
    vec![
        tool("read", json!({"readOnlyHint": true})),
        tool("delete_all", json!({"destructiveHint": true})),
        tool("other", json!({})),
    ]
}

fn registry(
    script: &Scripted,
    policy: CallPolicy,
    approver: Option<Arc<Asker>>,
    store: Arc<dyn ApprovalStore>,
    managed: ManagedPolicy,
) -> Registry {
    let server = ServerConfig::stdio("s", ServerCommand::new("unused"))
        .with_timeout(Duration::from_millis(300));
    let blocked = ServerConfig::stdio("blocked", ServerCommand::new("forbidden"));
    let mut options = RegistryOptions::with_connector(script.clone());
    let mut trust = TrustOptions::default();
    trust.call_policy = policy;
    trust.approver = approver.map(|a| a as Arc<dyn Approver>);
    trust.approval_store = store;
    trust.managed = Arc::new(managed);
    options.trust = trust;
    Registry::new(Config { servers: vec![server, blocked], ..Default::default() }, options)
}

fn denied_because(r: Result<impl std::fmt::Debug, Error>) -> Reason {
    match r {
        Err(Error::CallDenied { reason, .. }) => reason,
        other => panic!("not refused by the call policy: {other:?}"),
    }
}

#[tokio::test]
async fn ask_goes_to_the_approver_and_answers_are_remembered_as_told() {
    let script = Scripted::new(tools());
    let ask_all = policy(Tier::Ask, &[], &["s"]);
    let memory: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::new());

    // Once: asked every time; the request carries the annotations.
    let once = Asker::new(Some((true, Remember::Once)));
    let r = registry(
        &script,
        ask_all.clone(),
        Some(once.clone()),
        memory.clone(),
        ManagedPolicy::default(),
    );
    r.call_tool("s", "delete_all", None).await.unwrap();
    r.call_tool("s", "delete_all", None).await.unwrap();
    assert_eq!(once.count(), 2);
    let asked = once.asked.lock().unwrap()[0].clone();
    assert_eq!((asked.server.as_str(), asked.tool.as_str()), ("s", "delete_all"));
    assert_eq!(asked.annotations.unwrap().destructive_hint, Some(true));
    assert!(asked.annotations_trusted && asked.may_remember);
    // A trusted read-only tool is not asked about.
    r.call_tool("s", "read", None).await.unwrap();
    assert_eq!(once.count(), 2);

    // Session: asked once.
    let session = Asker::new(Some((true, Remember::Session)));
    let r = registry(
        &script,
        ask_all.clone(),
        Some(session.clone()),
        memory.clone(),
        ManagedPolicy::default(),
    );
    r.call_tool("s", "other", None).await.unwrap();
    r.call_tool("s", "other", None).await.unwrap();
    assert_eq!(session.count(), 1);

    // Always: kept in the store, so a new registry does not ask.
    let dir = std::env::temp_dir().join(format!("mcp-registry-answers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file: Arc<dyn ApprovalStore> = Arc::new(FileApprovalStore::new(dir.join("answers.json")));
    let always = Asker::new(Some((false, Remember::Always)));
    let r = registry(
        &script,
        ask_all.clone(),
        Some(always.clone()),
        file.clone(),
        ManagedPolicy::default(),
    );
    assert_eq!(denied_because(r.call_tool("s", "other", None).await), Reason::Approver);
    let later = Asker::new(Some((true, Remember::Once)));
    let r = registry(
        &script,
        ask_all.clone(),
        Some(later.clone()),
        file.clone(),
        ManagedPolicy::default(),
    );
    assert_eq!(denied_because(r.call_tool("s", "other", None).await), Reason::Remembered);
    assert_eq!(later.count(), 0);
    assert_eq!(file.get("s", "other").unwrap(), Some(false));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn refusals_without_an_answer_in_time_without_an_approver_and_before_io() {
    let script = Scripted::new(tools());
    let memory = || Arc::new(MemoryApprovalStore::new()) as Arc<dyn ApprovalStore>;
    // An approver that never answers: refused within the server's timeout.
    let silent = Asker::new(None);
    let r = registry(
        &script,
        policy(Tier::Ask, &[], &[]),
        Some(silent.clone()),
        memory(),
        ManagedPolicy::default(),
    );
    let started = std::time::Instant::now();
    assert_eq!(denied_because(r.call_tool("s", "other", None).await), Reason::ApproverTimedOut);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(silent.count(), 1);

    // No approver: `ask` is a refusal.
    let r =
        registry(&script, policy(Tier::Ask, &[], &[]), None, memory(), ManagedPolicy::default());
    assert_eq!(denied_because(r.call_tool("s", "other", None).await), Reason::NoApprover);

    // A denying rule: refused before the server is even connected, and
    // the tool is not listed.
    let rules = policy(Tier::Allow, &[("*__delete_*", Tier::Deny)], &[]);
    let r = registry(&script, rules, None, memory(), ManagedPolicy::default());
    let reason = denied_because(r.call_tool("s", "delete_all", None).await);
    assert_eq!(reason, Reason::Rule("*__delete_*".into()));
    assert!(!r.status("s").await.unwrap().connected);
    let listed: Vec<String> =
        r.list_tools("s").await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(listed, ["read", "other"]);
}

#[tokio::test]
async fn the_managed_policy_blocks_servers_and_pins_tiers_no_answer_widens() {
    let script = Scripted::new(tools());
    let admin = managed("[servers]\ndeny_commands = [\"forbidden\"]\n[tools]\nask = [\"s__*\"]\n");
    let always = Asker::new(Some((true, Remember::Always)));
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::new());
    // The user's file allows everything and trusts the annotations.
    let wide = policy(Tier::Allow, &[("*", Tier::Allow)], &["*"]);
    let r = registry(&script, wide, Some(always.clone()), store.clone(), admin);
    let names: Vec<&str> = r.list().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["s"]);
    let blocked = r.blocked();
    assert_eq!(blocked.len(), 1);
    assert_eq!(blocked[0].server, "blocked");
    assert!(blocked[0].reason.contains("deny_commands forbidden"), "{blocked:?}");
    assert!(matches!(r.call_tool("blocked", "x", None).await, Err(Error::UnknownServer { .. })));
    // Asked every time, even about a read-only tool, and never kept.
    r.call_tool("s", "read", None).await.unwrap();
    r.call_tool("s", "read", None).await.unwrap();
    assert_eq!(always.count(), 2);
    assert!(!always.asked.lock().unwrap()[0].may_remember);
    assert_eq!(store.get("s", "read").unwrap(), None);
}

#[test]
fn the_approval_table_is_read_beside_the_servers() {
    let dir = std::env::temp_dir().join(format!("mcp-registry-settings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mcp.toml");
    std::fs::write(
        &path,
        "[mcp_client]\n[mcp_client.approval]\ndefault = \"ask\"\nallow = [\"files__read_*\"]\n\
         deny = [\"*__delete_*\"]\ntrust_annotations = [\"files\"]\n\
         [[mcp_client.servers]]\nname = \"files\"\ncommand = \"x\"\n",
    )
    .unwrap();
    let loaded = Config::load(&path, &mcp_host_registry::LoadOptions::default()).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let settings = mcp_host_registry::TrustSettings::load(&path, None).unwrap();
    let p = settings.call_policy;
    assert_eq!(p.default, Tier::Ask);
    assert!(p.trusts_annotations_of("files") && !p.trusts_annotations_of("other"));
    let server = ServerConfig::stdio("files", ServerCommand::new("x"));
    let none = TierRules::default();
    assert_eq!(p.decide(&server, "read_file", None, &none).tier, Tier::Allow);
    assert_eq!(p.decide(&server, "delete_file", None, &none).tier, Tier::Deny);
    assert_eq!(p.decide(&server, "write_file", None, &none).tier, Tier::Ask);
    // None of it: the default policy.
    std::fs::write(&path, "{\"mcpServers\": {}}").unwrap();
    let settings = mcp_host_registry::TrustSettings::load(&path, None).unwrap();
    assert_eq!(settings.call_policy, CallPolicy::default());
    for bad in [
        "[mcp_client.approval]\ndefault = \"maybe\"\n",
        "[mcp_client.approval]\nallow = \"x\"\n",
        "[mcp_client.approval]\nwhatever = 1\n",
        "[mcp_client.approval]\ntrust_annotations = [\"\"]\n",
    ] {
        std::fs::write(&path, bad).unwrap();
        let e = mcp_host_registry::TrustSettings::load(&path, None).unwrap_err();
        assert!(matches!(e, TrustError::Corrupt { .. }), "{bad}: {e:?}");
        assert!(e.to_string().contains("[mcp_client.approval]"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `Registry::plain_route` finds a route only for a call every check
/// allows now, with no I/O: connected, listed, tier `allow`; forwarded, its
/// outcome is what `call_tool_text` gives for the same call. A route kept
/// holds no longer than what allowed it.
#[tokio::test]
async fn a_plain_call_is_one_every_check_allows_now_and_ends_as_the_general_one() {
    let script = Scripted::new(tools());
    // `other` allowed by the default; `delete_all` asked about (trusted
    // annotations); `read` denied by a rule.
    let rules = policy(Tier::Allow, &[("s__read", Tier::Deny)], &["s"]);
    let r =
        registry(&script, rules, None, Arc::new(MemoryApprovalStore::new()), Default::default());
    // Not connected yet: the general path connects.
    assert!(r.plain_route("s", "other").is_none());
    let options = mcp_proto::client::RequestOptions::default;
    let general = r.call_tool_text("s", "other", None, options()).await.unwrap();
    let route = r.plain_route("s", " other ").expect("connected, listed, allowed");
    assert!(format!("{route:?}").contains("\"other\""), "{route:?}");
    let plain = route.call().expect("nothing changed");
    assert!(format!("{plain:?}").contains("\"other\""), "{plain:?}");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let _cancel = plain
        .forward(None, options(), move |outcome| {
            let _ = tx.send(outcome.map(ToOwned::to_owned));
        })
        .unwrap();
    let forwarded = rx.await.unwrap().unwrap();
    assert_eq!(forwarded.get(), general.get());
    // Called again on the route kept.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let _cancel = route
        .call()
        .expect("nothing changed")
        .forward(None, options(), move |outcome| {
            let _ = tx.send(outcome.map(ToOwned::to_owned));
        })
        .unwrap();
    assert_eq!(rx.await.unwrap().unwrap().get(), general.get());
    for refused in ["read", "delete_all", "nosuch"] {
        assert!(r.plain_route("s", refused).is_none(), "{refused}");
    }
    assert!(r.plain_route("nosuch", "other").is_none());
    assert!(r.plain_route("blocked", "other").is_none());

    // What was found allowed holds no longer than what allowed it: the
    // server's tool policy reloaded, the tool list changed, the
    // connection gone are each seen by the next call, on a route kept
    // from before as on a new one.
    let kept = r.plain_route("s", "other").expect("allowed");
    assert!(kept.call().is_some());
    let server = |policy: ToolPolicy| {
        ServerConfig::stdio("s", ServerCommand::new("unused"))
            .with_timeout(Duration::from_millis(300))
            .with_policy(policy)
    };
    let blocked = ServerConfig::stdio("blocked", ServerCommand::new("forbidden"));
    let config =
        |s: ServerConfig| Config { servers: vec![s, blocked.clone()], ..Default::default() };
    r.reload(config(server(ToolPolicy::new(["read"], Vec::<&str>::new())))).await;
    assert!(kept.call().is_none(), "the policy changed");
    assert!(r.plain_route("s", "other").is_none());
    r.reload(config(server(ToolPolicy::allow_all()))).await;
    assert!(kept.call().is_none(), "found under another policy");
    let kept = r.plain_route("s", "other").expect("allowed again");
    assert!(kept.call().is_some());
    let mut listed = tools();
    listed[2]["annotations"] = json!({"destructiveHint": true});
    script.set_tools(listed);
    script.announce_list_changed();
    for _ in 0..100 {
        let tools = r.list_tools("s").await.unwrap();
        if tools.iter().any(|t| {
            t.annotations.as_ref().is_some_and(|a| a.destructive_hint == Some(true))
                && t.name == "other"
        }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(kept.call().is_none(), "the list changed");
    assert!(r.plain_route("s", "other").is_none(), "asked about now");
    script.set_tools(tools());
    script.announce_list_changed();
    for _ in 0..100 {
        if r.plain_route("s", "other").is_some() {
            break;
        }
        let _ = r.list_tools("s").await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let kept = r.plain_route("s", "other").expect("allowed again");
    assert!(kept.call().is_some());
    r.close_all().await;
    assert!(kept.call().is_none(), "the connection is gone");
    assert!(r.plain_route("s", "other").is_none());
}
