//! The audit log: a line per call (allowed, failed, refused), arguments
//! digested and redacted, no configured secret, rotation by size.

use std::sync::Arc;

use mcp_host_registry::{
    AuditConfig, AuditLog, CallPolicy, Config, Registry, RegistryOptions, ServerCommand,
    ServerConfig, Tier, TrustError, TrustOptions,
};
use serde_json::{Value, json};

use crate::scripted::Scripted;

const SECRET: &str = "s3cret-value-1234";

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-registry-audit-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn registry(audit: AuditConfig) -> Registry {
    let script = Scripted::new(vec![json!({"name": "echo", "inputSchema": {"type": "object"}})]);
    let server = ServerConfig::stdio("s", ServerCommand::new("unused").env("API_KEY", SECRET));
    let mut trust = TrustOptions::default();
    let mut policy = CallPolicy::default();
    policy.rules.add("s__forbidden", Tier::Deny);
    trust.call_policy = policy;
    trust.audit = Some(Arc::new(AuditLog::open(audit).unwrap()));
    let mut options = RegistryOptions::with_connector(script);
    options.trust = trust;
    Registry::new(Config { servers: vec![server], ..Default::default() }, options)
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn every_call_is_a_line_without_secrets() {
    let dir = scratch("lines");
    let path = dir.join("audit.jsonl");
    let r = registry(AuditConfig::new(&path));
    let args = json!({
        "token": "tok-999",
        "note": format!("uses {SECRET} here"),
        "nested": [{"Password": "pw-888"}, "x".repeat(1000)],
        "n": 3,
    });
    r.call_tool("s", "echo", args.as_object().cloned()).await.unwrap();
    r.call_tool("s", "forbidden", None).await.unwrap_err();
    r.call_tool("s", "missing", None).await.unwrap_err();
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in [SECRET, "tok-999", "pw-888"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let got = lines(&path);
    assert_eq!(got.len(), 3, "{text}");
    let ok = &got[0];
    assert_eq!((ok["server"].as_str(), ok["tool"].as_str()), (Some("s"), Some("echo")));
    assert_eq!(ok["outcome"], "ok");
    assert_eq!(ok["decision"]["tier"], "allow");
    assert_eq!(ok["arguments"]["token"], "<redacted>");
    assert_eq!(ok["arguments"]["note"], "uses <redacted> here");
    assert_eq!(ok["arguments"]["nested"][0]["Password"], "<redacted>");
    assert!(ok["arguments"]["nested"][1].as_str().unwrap().ends_with("(1000 characters)"));
    assert_eq!(ok["arguments"]["n"], 3);
    assert_eq!(ok["arguments_sha256"].as_str().unwrap().len(), 64);
    assert!(ok["time_ms"].as_u64().unwrap() > 1_600_000_000_000);
    assert!(ok["duration_ms"].is_u64());
    let denied = &got[1];
    assert_eq!(denied["outcome"], "denied");
    assert_eq!(denied["decision"]["tier"], "deny");
    assert!(denied["decision"]["reason"].as_str().unwrap().contains("s__forbidden"));
    assert_eq!(got[2]["outcome"], "error");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_call_passed_on_as_json_is_checked_and_logged_like_any_other() {
    let dir = scratch("json");
    let path = dir.join("audit.jsonl");
    let r = registry(AuditConfig::new(&path));
    let args = json!({"token": "tok-777"});
    let options = mcp_proto::client::RequestOptions::default();
    let result =
        r.call_tool_json("s", "echo", args.as_object().cloned(), options.clone()).await.unwrap();
    // The result as the server sent it.
    let result: serde_json::Value = serde_json::from_str(result.get()).unwrap();
    assert_eq!(result, json!({"content": [{"type": "text", "text": "called echo"}]}));
    r.call_tool_json("s", "forbidden", None, options.clone()).await.unwrap_err();
    r.call_tool_json("s", "missing", None, options).await.unwrap_err();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("tok-777"), "{text}");
    let got = lines(&path);
    let outcomes: Vec<&str> = got.iter().map(|l| l["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "denied", "error"], "{text}");
    assert_eq!(got[0]["arguments"]["token"], "<redacted>");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_log_is_rotated_by_size_and_keeps_a_bounded_number_of_files() {
    let dir = scratch("rotate");
    let path = dir.join("audit.jsonl");
    let mut config = AuditConfig::new(&path);
    config.max_bytes = 1024;
    config.keep = 2;
    let r = registry(config);
    for i in 0..40 {
        let args = json!({"i": i, "pad": "p".repeat(100)});
        r.call_tool("s", "echo", args.as_object().cloned()).await.unwrap();
    }
    let numbered = |n: u32| dir.join(format!("audit.jsonl.{n}"));
    assert!(numbered(1).is_file() && numbered(2).is_file());
    assert!(!numbered(3).exists());
    for file in [path.clone(), numbered(1), numbered(2)] {
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size <= 1024, "{} is {size} bytes", file.display());
        assert!(!lines(&file).is_empty());
    }
    // The newest line is in the live file.
    assert_eq!(lines(&path).last().unwrap()["arguments"]["i"], 39);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_log_that_cannot_be_opened_is_an_error_naming_it() {
    let dir = scratch("bad");
    std::fs::create_dir_all(dir.join("a-folder.jsonl")).unwrap();
    let e = AuditLog::open(AuditConfig::new(dir.join("a-folder.jsonl"))).unwrap_err();
    assert!(matches!(e, TrustError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("a-folder.jsonl"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
