//! Recovery after a failed attempt.

use mcp_proto::Era;
use mcp_proto::client::ClientError;
use mcp_proto::client::decide::recovery::{changed_tool, decide};
use mcp_proto::client::decide::{Action, Attempt, Failure, GiveUp};
use mcp_proto::types::Tool;
use serde_json::json;

use super::{
    NOTHING, REFUSAL, SESSION_EXPIRED, STREAM_LOST, attempt, closed, header_mismatch, refused, rpc,
};

#[test]
fn what_follows_a_failed_attempt() {
    let modern = Some(Era::Modern);
    let legacy = Some(Era::Legacy);
    let (headers, upv, closed, rpc_error) = (header_mismatch(), refused(&["x"]), closed(), rpc(-1));
    let not_init = ClientError::NotInitialized { method: "m".into() };
    let give_up = Action::GiveUp(GiveUp::AsItCame);
    let lost = Action::GiveUp(GiveUp::ConnectionLost);
    let with = |a: Attempt<'static>, f: fn(&mut Attempt<'static>)| {
        let mut a = a;
        f(&mut a);
        a
    };
    // Leaked so the table's borrows live for 'static.
    let headers: &'static ClientError = Box::leak(Box::new(headers));
    let upv: &'static ClientError = Box::leak(Box::new(upv));
    let closed: &'static ClientError = Box::leak(Box::new(closed));
    let rpc_error: &'static ClientError = Box::leak(Box::new(rpc_error));
    let not_init: &'static ClientError = Box::leak(Box::new(not_init));
    let call = "tools/call";
    let read = "tools/list";
    let mismatch = Failure::transport(Some(headers), REFUSAL);
    let cases: Vec<(Attempt<'static>, Action)> = vec![
        // -32020 on a call with a tool definition: relist, once, stateless only.
        (
            with(attempt(call, modern, mismatch), |a| a.has_tool = true),
            Action::RelistToolsAndResend,
        ),
        (
            with(attempt(call, modern, Failure::core(headers)), |a| a.has_tool = true),
            Action::RelistToolsAndResend,
        ),
        (attempt(call, modern, mismatch), give_up),
        (
            with(attempt(call, modern, mismatch), |a| {
                a.has_tool = true;
                a.already_retried = true
            }),
            give_up,
        ),
        (with(attempt(call, legacy, mismatch), |a| a.has_tool = true), give_up),
        // A broken answer stream: resend reads, give up the others.
        (attempt(read, modern, Failure::transport(None, STREAM_LOST)), Action::ResendNewId),
        (attempt(call, modern, Failure::transport(None, STREAM_LOST)), give_up),
        (
            with(attempt(read, modern, Failure::transport(None, STREAM_LOST)), |a| {
                a.already_retried = true
            }),
            give_up,
        ),
        (attempt(read, legacy, Failure::transport(None, STREAM_LOST)), give_up),
        (attempt(read, None, Failure::transport(None, STREAM_LOST)), give_up),
        // -32022: discover again, once, stateless only, whoever carried it.
        (attempt(call, modern, Failure::core(upv)), Action::Rediscover),
        (attempt(call, modern, Failure::transport(Some(upv), REFUSAL)), Action::Rediscover),
        (with(attempt(call, modern, Failure::core(upv)), |a| a.already_retried = true), give_up),
        (attempt(call, legacy, Failure::core(upv)), give_up),
        // An expired session: a new one, once, handshake era only.
        (attempt(call, legacy, Failure::transport(None, SESSION_EXPIRED)), Action::NewSession),
        (
            with(attempt(call, legacy, Failure::transport(None, SESSION_EXPIRED)), |a| {
                a.already_retried = true
            }),
            give_up,
        ),
        (attempt(call, modern, Failure::transport(None, SESSION_EXPIRED)), give_up),
        (attempt(call, None, Failure::transport(None, SESSION_EXPIRED)), give_up),
        // Any other transport failure.
        (attempt(call, legacy, Failure::transport(None, REFUSAL)), give_up),
        (attempt(call, legacy, Failure::transport(Some(closed), NOTHING)), give_up),
        // The connection lost with the request out.
        (
            with(attempt(read, legacy, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true
            }),
            Action::RenewConnection,
        ),
        (
            with(attempt(read, None, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true
            }),
            Action::RenewConnection,
        ),
        (
            with(attempt(call, legacy, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true
            }),
            lost,
        ),
        (
            with(attempt(read, legacy, Failure::core(closed)), |a| {
                a.lost_connection = true;
                a.transport_resends_after_loss = true;
                a.already_retried = true
            }),
            lost,
        ),
        (with(attempt(read, legacy, Failure::core(closed)), |a| a.lost_connection = true), give_up),
        (
            with(attempt(read, legacy, Failure::core(closed)), |a| {
                a.transport_resends_after_loss = true
            }),
            give_up,
        ),
        // The connection renewed between the check and the send.
        (attempt(call, legacy, Failure::core(not_init)), Action::Reinitialize),
        (attempt(call, None, Failure::core(not_init)), Action::Reinitialize),
        (
            with(attempt(call, legacy, Failure::core(not_init)), |a| a.already_retried = true),
            give_up,
        ),
        (attempt(call, legacy, Failure::transport(Some(not_init), NOTHING)), give_up),
        // The server's answer stands.
        (attempt(call, legacy, Failure::core(rpc_error)), give_up),
        (attempt(call, modern, Failure::core(rpc_error)), give_up),
    ];
    for (a, expected) in cases {
        assert_eq!(decide(&a), expected, "{a:?}");
    }
}

#[test]
fn after_relisting_only_a_changed_tool_is_called_again() {
    let tool = |name: &str, description: &str| {
        let mut t: Tool = serde_json::from_value(json!({"name": name, "inputSchema": {}})).unwrap();
        t.description = Some(description.into());
        t
    };
    let called = tool("a", "old");
    // (fresh list, expected)
    let cases: Vec<(Vec<Tool>, Option<usize>)> = vec![
        (vec![tool("b", "x"), tool("a", "new")], Some(1)),
        (vec![tool("a", "old")], None),
        (vec![tool("b", "old")], None),
        (vec![], None),
    ];
    for (fresh, expected) in cases {
        assert_eq!(changed_tool(&called, &fresh), expected, "{fresh:?}");
    }
}
