//! The host's side of the protocol: the close grace of stdio servers,
//! and the answers to the server's requests: roots, elicitation (a form on the terminal), sampling
//! (declined: mcpc has no model).

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::client::{
    BoxFuture, ElicitationHandler, Handlers, RootsHandler, SamplingHandler, StaticRoots,
};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestFormParams,
    ElicitRequestParams, ElicitRequestURLParams, ElicitResult, Root,
};

use crate::form;
use crate::output::{note, offer_url};

/// How long a stdio server may take to exit after its input is closed
/// (and again after SIGTERM) when mcpc ends: short, so a server that
/// ignores the end of its input does not hold up every run.
pub(crate) const CLOSE_GRACE: Duration = Duration::from_millis(250);

/// What the host answers with.
#[derive(Debug, Clone)]
pub(crate) struct HostSettings {
    /// The roots (absolute paths).
    pub(crate) roots: Vec<PathBuf>,
    /// `--accept-defaults`.
    pub(crate) accept_defaults: bool,
    /// `--open`.
    pub(crate) open_urls: bool,
}

/// The handlers: roots, elicitation, sampling. Each is declared as a
/// client capability.
pub(crate) fn handlers(settings: &HostSettings) -> Handlers {
    let roots: Vec<Root> = settings
        .roots
        .iter()
        .map(|p| {
            let root = Root::new(file_uri(p));
            match p.file_name() {
                Some(name) => root.with_name(name.to_string_lossy()),
                None => root,
            }
        })
        .collect();
    Handlers {
        roots: Some(Arc::new(StaticRoots(roots)) as Arc<dyn RootsHandler>),
        sampling: Some(Arc::new(DeclineSampling)),
        elicitation: Some(Arc::new(Elicitor {
            settings: settings.clone(),
            one_at_a_time: tokio::sync::Mutex::new(()),
        })),
    }
}

/// `file://` and the path, percent-encoded where a URI needs it.
pub(crate) fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = text.replace('\\', "/");
    let mut out = String::from("file://");
    if !text.starts_with('/') {
        out.push('/');
    }
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Declines `sampling/createMessage`: mcpc has no model to ask.
struct DeclineSampling;

impl SamplingHandler for DeclineSampling {
    fn create_message(
        &self,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async {
            note(
                "mcpc: the server asked for a model's completion (sampling); mcpc has no model, so it declined",
            );
            Err(ErrorObject::new(
                error_code::USER_REJECTED,
                "sampling declined: mcpc is a command line with no language model to sample from",
            ))
        })
    }
}

/// Answers `elicitation/create`: a form on the terminal, or the defaults
/// with `--accept-defaults`, else declined.
struct Elicitor {
    settings: HostSettings,
    /// One question on the terminal at a time.
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl ElicitationHandler for Elicitor {
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move {
            let _turn = self.one_at_a_time.lock().await;
            let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            match params {
                ElicitRequestParams::Form(form) => self.form(form, on_terminal).await,
                ElicitRequestParams::Url(url) => self.url(url, on_terminal).await,
            }
        })
    }

    fn supports_url_mode(&self) -> bool {
        true
    }
}

impl Elicitor {
    async fn form(
        &self,
        params: ElicitRequestFormParams,
        on_terminal: bool,
    ) -> Result<ElicitResult, ErrorObject> {
        let fields = match form::fields(&params.requested_schema) {
            Ok(fields) => fields,
            Err(reason) => {
                note(&format!(
                    "mcpc: the server asked: {}\nmcpc: declined: {reason}",
                    params.message
                ));
                return Ok(ElicitResult::new(ElicitAction::Decline));
            }
        };
        if !on_terminal {
            if self.settings.accept_defaults {
                if let Some(answers) = form::defaults(&fields) {
                    note(&format!(
                        "mcpc: the server asked: {}\nmcpc: accepted with the defaults (--accept-defaults)",
                        params.message
                    ));
                    return Ok(accepted(answers));
                }
                note(&format!(
                    "mcpc: the server asked: {}\nmcpc: declined: a required field has no default and there is no terminal to ask on",
                    params.message
                ));
            } else {
                note(&format!(
                    "mcpc: the server asked: {}\nmcpc: declined: there is no terminal to ask on (--accept-defaults accepts the defaults)",
                    params.message
                ));
            }
            return Ok(ElicitResult::new(ElicitAction::Decline));
        }
        let _hidden = crate::progress::hide();
        note(&format!(
            "mcpc: the server asks: {}\n(Enter takes the default; Ctrl-D declines)",
            params.message
        ));
        let mut answers = serde_json::Map::new();
        for field in &fields {
            loop {
                let Some(line) = ask_line(field.prompt()).await else {
                    note("\nmcpc: declined");
                    return Ok(ElicitResult::new(ElicitAction::Decline));
                };
                match field.parse(&line) {
                    Ok(Some(value)) => {
                        answers.insert(field.name.clone(), value);
                        break;
                    }
                    Ok(None) => break,
                    Err(why) => note(&format!("  {why}")),
                }
            }
        }
        Ok(accepted(answers))
    }

    async fn url(
        &self,
        params: ElicitRequestURLParams,
        on_terminal: bool,
    ) -> Result<ElicitResult, ErrorObject> {
        note(&format!("mcpc: the server asks you to visit a URL: {}", params.message));
        if !offer_url(&params.url, false) {
            return Ok(ElicitResult::new(ElicitAction::Decline));
        }
        if !on_terminal && !self.settings.accept_defaults {
            note("mcpc: declined: there is no terminal to ask on (--accept-defaults accepts)");
            return Ok(ElicitResult::new(ElicitAction::Decline));
        }
        if on_terminal {
            let _hidden = crate::progress::hide();
            let question = if self.settings.open_urls {
                "Open it and go on? [Y/n]: "
            } else {
                "Go on (open it yourself)? [Y/n]: "
            };
            let answer = ask_line(question.into()).await;
            match answer.as_deref().map(str::trim) {
                None => return Ok(ElicitResult::new(ElicitAction::Cancel)),
                Some(a) if a.eq_ignore_ascii_case("n") || a.eq_ignore_ascii_case("no") => {
                    return Ok(ElicitResult::new(ElicitAction::Decline));
                }
                Some(_) => {}
            }
        }
        if self.settings.open_urls {
            crate::output::open_checked(&params.url);
        }
        Ok(ElicitResult::new(ElicitAction::Accept))
    }
}

fn accepted(answers: serde_json::Map<String, serde_json::Value>) -> ElicitResult {
    let mut result = ElicitResult::new(ElicitAction::Accept);
    result.content = Some(form::content(answers));
    result
}

/// Shows `prompt` on stderr and reads one line from the terminal; `None`
/// at the end of input. (The progress bar is hidden by the caller: the
/// wait may be long.)
pub(crate) async fn ask_line(prompt: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        crate::output::prompt(&prompt);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elicitor(accept_defaults: bool) -> Elicitor {
        let settings = HostSettings { roots: Vec::new(), accept_defaults, open_urls: false };
        Elicitor { settings, one_at_a_time: tokio::sync::Mutex::new(()) }
    }

    #[tokio::test]
    async fn without_a_terminal_defaults_or_decline() {
        let url: ElicitRequestURLParams = serde_json::from_value(serde_json::json!({
            "mode": "url", "message": "Sign in", "elicitationId": "e1",
            "url": "https://example.com/consent",
        }))
        .unwrap();
        let action = |r: ElicitResult| r.action;
        assert_eq!(
            action(elicitor(false).url(url.clone(), false).await.unwrap()),
            ElicitAction::Decline
        );
        assert_eq!(action(elicitor(true).url(url, false).await.unwrap()), ElicitAction::Accept);

        let form = |schema: serde_json::Value| -> ElicitRequestFormParams {
            serde_json::from_value(serde_json::json!({"message": "Q", "requestedSchema": schema}))
                .unwrap()
        };
        let with_defaults = form(serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "count": {"type": "integer", "default": 3},
            "note": {"type": "string"},
        }, "required": ["name"]}));
        let r = elicitor(true).form(with_defaults.clone(), false).await.unwrap();
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(
            serde_json::to_value(r.content).unwrap(),
            serde_json::json!({"name": "Ada", "count": 3})
        );
        let r = elicitor(false).form(with_defaults, false).await.unwrap();
        assert_eq!((r.action, r.content), (ElicitAction::Decline, None));
        let no_default = form(
            serde_json::json!({"properties": {"name": {"type": "string"}}, "required": ["name"]}),
        );
        let r = elicitor(true).form(no_default, false).await.unwrap();
        assert_eq!(r.action, ElicitAction::Decline);
        // A field no form can ask for: declined.
        let odd = form(serde_json::json!({"properties": {"x": {"type": "object"}}}));
        assert_eq!(elicitor(true).form(odd, false).await.unwrap().action, ElicitAction::Decline);
    }

    #[test]
    fn file_uris() {
        let cases = [
            ("/home/ada/project", "file:///home/ada/project"),
            ("/tmp/with space/é", "file:///tmp/with%20space/%C3%A9"),
            ("/a#b?c", "file:///a%23b%3Fc"),
        ];
        for (path, uri) in cases {
            assert_eq!(file_uri(Path::new(path)), uri);
        }
    }
}
