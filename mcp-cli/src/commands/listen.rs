//! `mcpc listen`: every notification the server sends, one per line,
//! until Ctrl-C.

use std::time::Duration;

use mcp_proto::client::ServerNotification;
use serde_json::{Value, json};

use crate::cli::Output;
use crate::ctx::{Ctx, Feed};
use crate::failure::{Failure, Kind};
use crate::output::{emit, emit_json, log_text, note, one_line};

/// How long opening `listen` (subscriptions, the stateless era's stream)
/// may take; once open, a broken stream is reopened by the client itself.
const LISTEN_OPEN_LIMIT: Duration = Duration::from_secs(30);

/// `mcpc listen`: every notification the server sends, one per line, until
/// Ctrl-C, or until no more can arrive (then a connection failure, exit 3).
pub(crate) async fn listen(
    ctx: &Ctx<'_>,
    server: Option<&str>,
    resources: &[String],
) -> Result<u8, Failure> {
    let server = ctx.pick(server)?;
    let uris = resources.to_vec();
    let open = ctx.with_client(&server, |c| Feed::open(c, uris, true));
    let mut feed = tokio::time::timeout(LISTEN_OPEN_LIMIT, open).await.map_err(|_| {
        Failure::new(
            Kind::Timeout,
            format!("MCP server {server:?} did not open the notification stream in time"),
        )
        .with_server(&server)
    })??;
    if let Feed::Listen(s) = &feed
        && !s.refused().is_empty()
    {
        note(&format!("mcpc: {server} does not send: {}", one_line(&s.refused().join(", "))));
    }
    if ctx.output() == Output::Text {
        note(&format!("mcpc: listening to {server} (Ctrl-C ends)"));
    }
    while let Some(n) = feed.recv().await {
        if matches!(n, ServerNotification::SubscriptionsAcknowledged(_)) {
            // The stream's opening, already reported above.
            continue;
        }
        match ctx.output() {
            Output::Json => emit_json(
                &json!({"server": server, "method": n.method(), "params": notification_params(&n)}),
            ),
            Output::Text => emit(&format!("{server}: {}", one_line(&notification_text(&n)))),
        }
    }
    Err(feed.ended(&server))
}

/// A notification's parameters as JSON (`{}` for the list changes).
fn notification_params(n: &ServerNotification) -> Value {
    match n {
        ServerNotification::Progress(p) => json!(p),
        ServerNotification::LogMessage(p) => json!(p),
        ServerNotification::ResourceUpdated(p) => json!(p),
        ServerNotification::ToolListChanged
        | ServerNotification::PromptListChanged
        | ServerNotification::ResourceListChanged => json!({}),
        ServerNotification::Cancelled(p) => json!(p),
        ServerNotification::TaskStatus(p) => json!(p),
        ServerNotification::ElicitationComplete(p) => json!(p),
        ServerNotification::SubscriptionsAcknowledged(p) => json!(p),
        ServerNotification::Other(raw) => raw.params.clone().unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// One line for a person (not yet made safe for a terminal).
fn notification_text(n: &ServerNotification) -> String {
    match n {
        ServerNotification::ToolListChanged => "the tool list changed".into(),
        ServerNotification::PromptListChanged => "the prompt list changed".into(),
        ServerNotification::ResourceListChanged => "the resource list changed".into(),
        ServerNotification::ResourceUpdated(p) => format!("resource updated: {}", p.uri),
        ServerNotification::LogMessage(m) => log_text(m),
        other => format!("{} {}", other.method(), notification_params(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_read_as_lines() {
        let cases = [
            (ServerNotification::ToolListChanged, "the tool list changed"),
            (
                ServerNotification::LogMessage(
                    serde_json::from_value(json!({"level": "info", "logger": "db", "data": "up"}))
                        .unwrap(),
                ),
                "[info] db: up",
            ),
            (
                ServerNotification::ResourceUpdated(
                    serde_json::from_value(json!({"uri": "test://x"})).unwrap(),
                ),
                "resource updated: test://x",
            ),
        ];
        for (n, expected) in cases {
            assert_eq!(notification_text(&n), expected);
        }
    }
}
