//! Call approval on the terminal: a call the policy marks `ask` is shown
//! (server, tool, the arguments, the tool's annotations as hints) and
//! answered once, always or never; without a terminal it is refused
//! unless `--yes` (never for a tier the administrator's policy pins).

use std::io::IsTerminal as _;

use mcp_host_registry::{ApprovalAnswer, ApprovalRequest, Approver, Remember};
use mcp_proto::client::BoxFuture;

use crate::host::ask_line;
use crate::output::{note, one_line};

/// The longest arguments shown (characters); the rest is cut with `...`.
const SHOWN_ARGUMENTS: usize = 400;

/// Asks on the terminal, one question at a time.
#[derive(Debug)]
pub(crate) struct TerminalApprover {
    /// `--yes`.
    pub(crate) yes: bool,
    /// One question at a time.
    pub(crate) one_at_a_time: tokio::sync::Mutex<()>,
}

impl TerminalApprover {
    pub(crate) fn new(yes: bool) -> Self {
        TerminalApprover { yes, one_at_a_time: tokio::sync::Mutex::new(()) }
    }
}

const REFUSED: ApprovalAnswer = ApprovalAnswer { allow: false, remember: Remember::Once };
const ONCE: ApprovalAnswer = ApprovalAnswer { allow: true, remember: Remember::Once };

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let _turn = self.one_at_a_time.lock().await;
            let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            if !on_terminal {
                // `--yes` stands for the user, not for the administrator.
                if self.yes && request.may_remember {
                    return ONCE;
                }
                note(&format!(
                    "mcpc: the call of {} asks for approval and there is no terminal to ask on{}",
                    one_line(&request.tool),
                    if request.may_remember {
                        " (--yes allows it)"
                    } else {
                        " (the managed policy asks every time; --yes does not apply)"
                    }
                ));
                return REFUSED;
            }
            crate::progress::clear();
            for line in describe(request) {
                note(&line);
            }
            let choices = if request.may_remember {
                "Allow it? [o]nce, [a]lways, [N]o, ne[v]er: "
            } else {
                "Allow it? [o]nce, [N]o (your administrator asks every time): "
            };
            let answer = ask_line(choices.to_owned()).await.unwrap_or_default();
            answer_of(&answer, request.may_remember)
        })
    }
}

/// What a typed answer means.
fn answer_of(text: &str, may_remember: bool) -> ApprovalAnswer {
    match (text.trim().to_ascii_lowercase().as_str(), may_remember) {
        ("o" | "once" | "y" | "yes", _) => ONCE,
        ("a" | "always", true) => ApprovalAnswer { allow: true, remember: Remember::Always },
        ("v" | "never", true) => ApprovalAnswer { allow: false, remember: Remember::Always },
        _ => REFUSED,
    }
}

/// The call's arguments as JSON text, cut after [`SHOWN_ARGUMENTS`]
/// characters (`...` then), as a question about the call shows them.
pub(crate) fn shown_arguments(request: &ApprovalRequest) -> String {
    let arguments = request
        .arguments
        .as_ref()
        .map_or_else(|| "{}".to_owned(), |a| serde_json::Value::Object(a.clone()).to_string());
    let mut shown: String = arguments.chars().take(SHOWN_ARGUMENTS).collect();
    if shown.len() < arguments.len() {
        shown.push_str("...");
    }
    shown
}

/// The question's lines (made terminal-safe where they are written).
fn describe(request: &ApprovalRequest) -> Vec<String> {
    let mut lines = vec![format!(
        "mcpc: call tool {} of server {} ({})?",
        one_line(&request.tool),
        one_line(&request.server),
        request.reason
    )];
    lines.push(format!("  arguments: {}", one_line(&shown_arguments(request))));
    if let Some(a) = &request.annotations {
        let mut hints = Vec::new();
        for (name, value) in [
            ("read-only", a.read_only_hint),
            ("destructive", a.destructive_hint),
            ("idempotent", a.idempotent_hint),
            ("open-world", a.open_world_hint),
        ] {
            if let Some(value) = value {
                hints.push(format!("{name}: {value}"));
            }
        }
        if !hints.is_empty() {
            let trust = if request.annotations_trusted {
                "trusted by your configuration"
            } else {
                "the server's claim, not checked"
            };
            lines.push(format!("  hints ({trust}): {}", hints.join(", ")));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let cases: &[(&str, bool, bool, Remember)] = &[
            ("o", true, true, Remember::Once),
            ("yes", true, true, Remember::Once),
            ("a", true, true, Remember::Always),
            ("v", true, false, Remember::Always),
            ("", true, false, Remember::Once),
            ("n", true, false, Remember::Once),
            ("what", true, false, Remember::Once),
            // Under a pinned tier nothing is kept.
            ("a", false, false, Remember::Once),
            ("v", false, false, Remember::Once),
            ("o", false, true, Remember::Once),
        ];
        for (text, may, allow, remember) in cases {
            let a = answer_of(text, *may);
            assert_eq!((a.allow, a.remember), (*allow, *remember), "{text:?} {may}");
        }
    }
}
