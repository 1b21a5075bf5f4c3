//! Tasks passed through (the tasks extension of 2026-07-28,
//! `io.modelcontextprotocol/tasks`): a host that declares the extension
//! gets the task an upstream server made of its call, and its `tasks/get`,
//! `tasks/update` and `tasks/cancel` go to that server. With one server a
//! task keeps its id; with several, the host's id is the server's flat-name
//! prefix and the upstream id (`server__id`), mapped back on the way in.

use mcp_host_registry::DEFAULT_SEPARATOR;
use mcp_proto::types::{RESULT_TYPE_TASK, TASKS_EXTENSION};
use serde_json::{Value, json};

/// The host's id of a task `server` made.
pub(crate) fn host_id(servers: &[String], server: &str, upstream: &str) -> String {
    match servers {
        [_] => upstream.to_owned(),
        _ => format!("{server}{DEFAULT_SEPARATOR}{upstream}"),
    }
}

/// The server and its id of a task the host names: for several servers,
/// the served server whose prefix the id starts with (the longest, when
/// one server's name and the separator begin another's).
pub(crate) fn route(servers: &[String], host_id: &str) -> Option<(String, String)> {
    if let [only] = servers {
        return Some((only.clone(), host_id.to_owned()));
    }
    servers
        .iter()
        .filter_map(|server| {
            let rest = host_id.strip_prefix(server.as_str())?.strip_prefix(DEFAULT_SEPARATOR)?;
            (!rest.is_empty()).then(|| (server.clone(), rest.to_owned()))
        })
        .max_by_key(|(server, _)| server.len())
}

/// A task as the host sees it: `task` (an upstream task, as JSON) with
/// the host's id; `created` marks the answer to the call that made it
/// (`resultType: "task"`).
pub(crate) fn to_host(mut task: Value, host_id: String, created: bool) -> Value {
    task["taskId"] = json!(host_id);
    if created {
        task["resultType"] = json!(RESULT_TYPE_TASK);
    }
    task
}

/// Whether any of the upstream capabilities declares the extension.
pub(crate) fn offered(upstream: &[Value]) -> bool {
    upstream.iter().any(|c| c.pointer("/extensions").and_then(|e| e.get(TASKS_EXTENSION)).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_prefixed_for_several_servers_and_mapped_back() {
        let one = vec!["files".to_owned()];
        assert_eq!(host_id(&one, "files", "t-1"), "t-1");
        assert_eq!(route(&one, "t-1"), Some(("files".into(), "t-1".into())));

        let many: Vec<String> = ["a", "b", "a__b"].iter().map(|s| (*s).to_owned()).collect();
        let cases = [("a", "t-1"), ("b", "t__2"), ("a__b", "x")];
        for (server, id) in cases {
            let host = host_id(&many, server, id);
            assert_eq!(route(&many, &host), Some((server.into(), id.into())), "{host}");
        }
        assert_eq!(host_id(&many, "b", "t__2"), "b__t__2");
        for unknown in ["c__1", "a__", "a", "", "a_1"] {
            assert_eq!(route(&many, unknown), None, "{unknown}");
        }

        let task = json!({"taskId": "t-1", "status": "working"});
        assert_eq!(
            to_host(task.clone(), "a__t-1".into(), true),
            json!({"taskId": "a__t-1", "status": "working", "resultType": "task"})
        );
        assert_eq!(to_host(task, "t".into(), false)["resultType"], Value::Null);
        assert!(offered(&[json!({}), json!({"extensions": {TASKS_EXTENSION: {}}})]));
        assert!(!offered(&[json!({"tasks": {}}), json!({"extensions": {}})]));
    }
}
