//! Method names of the protocol, one constant each.

/// `initialize` (client → server).
pub const INITIALIZE: &str = "initialize";
/// `ping` (either direction).
pub const PING: &str = "ping";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe`.
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe`.
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel`.
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `roots/list` (server → client).
pub const ROOTS_LIST: &str = "roots/list";
/// `sampling/createMessage` (server → client).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `elicitation/create` (server → client).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `server/discover` (2026-07-28): the server's versions, capabilities and
/// identity; the stdio era probe.
pub const SERVER_DISCOVER: &str = "server/discover";
/// `subscriptions/listen` (2026-07-28): a long-lived stream of the change
/// notifications the client opted in to.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tasks/update` (the 2026-07-28 tasks extension): input for a task.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/get` (experimental, 2025-11-25).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result` (experimental, 2025-11-25).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (experimental, 2025-11-25).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel` (experimental, 2025-11-25).
pub const TASKS_CANCEL: &str = "tasks/cancel";

/// `notifications/initialized` (client → server, after the handshake).
pub const NOTIFICATION_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled` (either direction).
pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress` (either direction).
pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
/// `notifications/message` (server log message).
pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
/// `notifications/tools/list_changed`.
pub const NOTIFICATION_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/resources/list_changed`.
pub const NOTIFICATION_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated`.
pub const NOTIFICATION_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATION_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/roots/list_changed` (client → server).
pub const NOTIFICATION_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/elicitation/complete` (server → client, URL-mode elicitation).
pub const NOTIFICATION_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/subscriptions/acknowledged` (2026-07-28): the server
/// accepted a `subscriptions/listen` request.
pub const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";
/// `notifications/tasks` (the 2026-07-28 tasks extension): a task's whole
/// state, on a `subscriptions/listen` stream.
pub const NOTIFICATION_TASKS: &str = "notifications/tasks";
/// `notifications/tasks/status` (experimental, 2025-11-25).
pub const NOTIFICATION_TASKS_STATUS: &str = "notifications/tasks/status";

/// The name of a request a client sends a server, as the constant of
/// this module that spells it (so a message read from text need not own
/// a copy of it); `None` for any other name.
pub fn client_request(method: &str) -> Option<&'static str> {
    Some(match method {
        TOOLS_CALL => TOOLS_CALL,
        TOOLS_LIST => TOOLS_LIST,
        INITIALIZE => INITIALIZE,
        PING => PING,
        RESOURCES_LIST => RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST => RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ => RESOURCES_READ,
        RESOURCES_SUBSCRIBE => RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE => RESOURCES_UNSUBSCRIBE,
        PROMPTS_LIST => PROMPTS_LIST,
        PROMPTS_GET => PROMPTS_GET,
        COMPLETION_COMPLETE => COMPLETION_COMPLETE,
        LOGGING_SET_LEVEL => LOGGING_SET_LEVEL,
        SERVER_DISCOVER => SERVER_DISCOVER,
        SUBSCRIPTIONS_LISTEN => SUBSCRIPTIONS_LISTEN,
        TASKS_GET => TASKS_GET,
        TASKS_UPDATE => TASKS_UPDATE,
        TASKS_RESULT => TASKS_RESULT,
        TASKS_LIST => TASKS_LIST,
        TASKS_CANCEL => TASKS_CANCEL,
        _ => return None,
    })
}

/// Whether a request may be sent again when it is not known whether the
/// server received it (a connection or session lost while it was out): the
/// reads and `ping`, whose repetition changes nothing. `tools/call` never
/// is, nor anything else that may act.
pub fn is_idempotent(method: &str) -> bool {
    matches!(
        method,
        PING | SERVER_DISCOVER
            | TOOLS_LIST
            | RESOURCES_LIST
            | RESOURCES_TEMPLATES_LIST
            | RESOURCES_READ
            | PROMPTS_LIST
            | PROMPTS_GET
            | COMPLETION_COMPLETE
            | LOGGING_SET_LEVEL
            | TASKS_GET
            | TASKS_LIST
            | TASKS_RESULT
    )
}

/// The member of a request's `params` that its `Mcp-Name` header carries
/// (the stateless era's routing header, 2026-07-28): `name` for
/// `tools/call` and `prompts/get`, `uri` for `resources/read`, `taskId`
/// for the tasks extension's `tasks/get`, `tasks/update` and
/// `tasks/cancel`; `None` for a method without one. The client sends it
/// and a server checks it against the body, from this one table.
pub fn name_header_param(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_CALL | PROMPTS_GET => Some("name"),
        RESOURCES_READ => Some("uri"),
        TASKS_GET | TASKS_UPDATE | TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}

/// Whether the method exists in the stateless era (2026-07-28): `ping`,
/// `initialize`, `logging/setLevel`, `resources/subscribe`,
/// `resources/unsubscribe`, `tasks/list`, `tasks/result` and
/// `notifications/roots/list_changed` do not.
pub fn exists_in_modern_era(method: &str) -> bool {
    !matches!(
        method,
        PING | INITIALIZE
            | LOGGING_SET_LEVEL
            | RESOURCES_SUBSCRIBE
            | RESOURCES_UNSUBSCRIBE
            | TASKS_LIST
            | TASKS_RESULT
            | NOTIFICATION_INITIALIZED
            | NOTIFICATION_ROOTS_LIST_CHANGED
    )
}

/// Whether a stateless-era server may answer the method with an
/// `input_required` result (multi round-trip requests): `tools/call`,
/// `prompts/get` and `resources/read`.
pub fn may_require_input(method: &str) -> bool {
    matches!(method, TOOLS_CALL | PROMPTS_GET | RESOURCES_READ)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request a client sends is its own constant; notifications,
    /// the server's requests and other names are none.
    #[test]
    fn a_client_request_is_the_constant_that_spells_it() {
        let requests = [
            TOOLS_CALL,
            TOOLS_LIST,
            INITIALIZE,
            PING,
            RESOURCES_LIST,
            RESOURCES_TEMPLATES_LIST,
            RESOURCES_READ,
            RESOURCES_SUBSCRIBE,
            RESOURCES_UNSUBSCRIBE,
            PROMPTS_LIST,
            PROMPTS_GET,
            COMPLETION_COMPLETE,
            LOGGING_SET_LEVEL,
            SERVER_DISCOVER,
            SUBSCRIPTIONS_LISTEN,
            TASKS_GET,
            TASKS_UPDATE,
            TASKS_RESULT,
            TASKS_LIST,
            TASKS_CANCEL,
        ];
        for name in requests {
            // Found from text of its own (as read from a message): the
            // same name.
            let read = String::from(name);
            assert_eq!(client_request(&read), Some(name));
        }
        let others = [
            NOTIFICATION_INITIALIZED,
            NOTIFICATION_CANCELLED,
            NOTIFICATION_PROGRESS,
            ROOTS_LIST,
            SAMPLING_CREATE_MESSAGE,
            ELICITATION_CREATE,
            "tools/Call",
            "tools/call ",
            "",
        ];
        for name in others {
            assert_eq!(client_request(name), None, "{name}");
        }
    }
}
