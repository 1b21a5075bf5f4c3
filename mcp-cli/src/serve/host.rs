//! The host's side, as the upstream servers see it: their requests
//! (sampling, elicitation in form and URL mode, roots) and the calls the
//! approval policy marks `ask` go to the host through its session, when
//! the host declared the capability (a stateless-era host: in an
//! `input_required` round of its call, `input.rs`); otherwise they are
//! refused with an error that says why.
//!
//! Several hosts (sessions over HTTP) share the upstream connections, and
//! a server's request does not say which host call it belongs to: it goes
//! to the one host session with a call running (to the one session
//! connected, when none runs), and is refused when calls of several run at
//! once, rather than guessed ([`Hosts`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_host_registry::{ApprovalAnswer, ApprovalRequest, Approver, Remember};
use mcp_proto::client::{BoxFuture, ElicitationHandler, Handlers, RootsHandler, SamplingHandler};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_proto::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, ListRootsResult,
};
use mcp_server_io::{RequestKey, Session};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::handler::Bridge;
use super::input::Rounds;
use crate::approve::shown_arguments;

/// The hosts' sessions connected now, each through its [`HostLink`]: the
/// upstream handlers and the approver (built with the registry, before
/// any session) ask the one a server's request belongs to.
#[derive(Debug, Default)]
pub(crate) struct Hosts {
    links: Mutex<Vec<Arc<HostLink>>>,
}

impl Hosts {
    /// A new host session's link, listed until [`Hosts::remove`].
    pub(crate) fn add(&self) -> Arc<HostLink> {
        let link = Arc::new(HostLink::default());
        self.links.lock().unwrap_or_else(PoisonError::into_inner).push(link.clone());
        link
    }

    /// A host session ended: its link is unlisted and let go of
    /// ([`HostLink::clear`]).
    pub(crate) fn remove(&self, link: &HostLink) {
        self.links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|l| !std::ptr::eq(Arc::as_ptr(l), link));
        link.clear();
    }

    /// Every host session's link.
    pub(crate) fn links(&self) -> Vec<Arc<HostLink>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The host session a server's request (or log message) belongs to:
    /// the one with calls running; with none running, the one connected.
    /// Several with calls running, or several connected and none running:
    /// unknown, and why.
    pub(crate) fn asked(&self) -> Result<Arc<HostLink>, &'static str> {
        let links = self.links();
        let mut busy = links.iter().filter(|l| l.busy());
        match (busy.next(), busy.next()) {
            (Some(one), None) => Ok(one.clone()),
            (Some(_), Some(_)) => Err("calls of several host sessions are running at once, \
                 and which one's call the request belongs to is unknown"),
            (None, _) => match links.as_slice() {
                [only] => Ok(only.clone()),
                [] => Err("no host is connected yet"),
                _ => Err("no host's call is running, and several hosts are connected"),
            },
        }
    }

    /// The host session a log message belongs to: as [`Hosts::asked`];
    /// else the one session whose call ended a moment ago (a server's last
    /// messages may come after its answer), when only one did.
    pub(crate) fn log_target(&self) -> Result<Arc<HostLink>, &'static str> {
        self.asked().or_else(|why| {
            let links = self.links();
            let mut recent = links.iter().filter(|l| l.ended_recently());
            match (recent.next(), recent.next()) {
                (Some(one), None) => Ok(one.clone()),
                _ => Err(why),
            }
        })
    }

    /// Asks the host session the request belongs to ([`Hosts::asked`]).
    async fn ask<P: Serialize, R: DeserializeOwned>(
        &self,
        capability: &str,
        member: Option<&str>,
        method: &str,
        params: &P,
    ) -> Result<R, ErrorObject> {
        let link = self.asked().map_err(|why| refusal(method, why))?;
        link.ask(capability, member, method, params).await
    }
}

/// One host session, once it exists, and its calls running.
#[derive(Debug, Default)]
pub(crate) struct HostLink {
    session: Mutex<Option<Session<Bridge>>>,
    /// Set once a session was connected ([`set`](Self::set),
    /// [`attach`](Self::attach)), and kept when it is let go of
    /// ([`clear`](Self::clear)): each request of the host attaches its
    /// session, and only the first needs the lock.
    attached: AtomicBool,
    /// A stateless-era host's calls, through which it is asked.
    pub(crate) rounds: Rounds,
    /// A handshake-era host's calls running now, and when the last one
    /// ended.
    calls: Mutex<Running>,
}

/// A handshake-era host's calls running now, by a number: a server's
/// request is related to the one running (over HTTP it then goes on that
/// call's stream). A few at a time: a list, no hashing.
#[derive(Debug, Default)]
struct Running {
    /// The number the last call got.
    last: u64,
    calls: Vec<(u64, RequestKey)>,
    /// When the last call ended.
    ended: Option<Instant>,
}

/// How long after a call ended a log message is still taken for its host.
const LOG_GRACE: Duration = Duration::from_secs(1);

/// Takes a host call off [`HostLink`]'s list when it ends (dropped where
/// the call ends: a future's end, or a forwarded call's answer).
pub(crate) struct CallGuard {
    link: Arc<HostLink>,
    n: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.link.end_call(self.n);
    }
}

/// A forwarded call's place on its [`HostLink`]'s list, as a
/// [`CallGuard`] keeps it, through the host's session the call is
/// answered to (whose bridge holds the link): one reference kept for
/// both. Taken off the list by [`end`](Self::end), or when dropped (the
/// call cancelled).
pub(crate) struct ForwardedCall {
    host: Option<Session<Bridge>>,
    n: u64,
}

impl ForwardedCall {
    /// Takes the call off the list and gives the session to answer on.
    pub(crate) fn end(mut self) -> Session<Bridge> {
        let host = self.host.take().expect("a call ends once");
        host.handler().link.end_call(self.n);
        host
    }
}

impl Drop for ForwardedCall {
    fn drop(&mut self) {
        if let Some(host) = &self.host {
            host.handler().link.end_call(self.n);
        }
    }
}

/// What a host's capabilities allow of a request to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// It declared the capability.
    Declared,
    /// It did not.
    Undeclared,
    /// It speaks the stateless era (or has not said yet): each request
    /// declares its own capabilities, and the host is asked through
    /// `input_required` results (`input.rs`).
    Stateless,
}

/// Whether a handshake-era host that declared `capabilities` may be asked
/// for `capability` (`member`, when given, must be declared in it too).
pub(crate) fn reach(capabilities: Option<&Value>, capability: &str, member: Option<&str>) -> Reach {
    let Some(capabilities) = capabilities else { return Reach::Stateless };
    let Some(declared) = capabilities.get(capability).filter(|c| c.is_object()) else {
        return Reach::Undeclared;
    };
    match member {
        Some(member) if declared.get(member).is_none() => Reach::Undeclared,
        _ => Reach::Declared,
    }
}

impl HostLink {
    /// Connects the link to the host's session.
    pub(crate) fn set(&self, session: Session<Bridge>) {
        *self.lock() = Some(session);
        self.attached.store(true, Ordering::Release);
    }

    /// Connects the link to its session, unless it was connected before
    /// (a session let go of is not connected again).
    pub(crate) fn attach(&self, session: &Session<Bridge>) {
        if self.attached.load(Ordering::Acquire) {
            return;
        }
        let mut slot = self.lock();
        if !self.attached.load(Ordering::Relaxed) {
            *slot = Some(session.clone());
            self.attached.store(true, Ordering::Release);
        }
    }

    /// The host's session, once connected.
    pub(crate) fn session(&self) -> Option<Session<Bridge>> {
        self.lock().clone()
    }

    /// Whether calls of this host session are running.
    fn busy(&self) -> bool {
        !self.running_calls().calls.is_empty() || self.rounds.is_running()
    }

    /// Whether a call of this host session ended a moment ago.
    fn ended_recently(&self) -> bool {
        let ended = self.running_calls().ended;
        ended.is_some_and(|at| at.elapsed() < LOG_GRACE)
    }

    /// Lets go of the session (which holds the registry that holds this
    /// link), and of the calls parked for it (which cancels them).
    pub(crate) fn clear(&self) {
        self.lock().take();
        self.rounds.clear();
    }

    /// Lists a handshake-era host's call as running until the guard drops.
    pub(crate) fn running(self: &Arc<Self>, key: RequestKey) -> CallGuard {
        CallGuard { link: self.clone(), n: self.list_call(key) }
    }

    /// Lists a forwarded call of `host` (this link's session) as running
    /// until it ends.
    pub(crate) fn forwarded(&self, host: Session<Bridge>, key: RequestKey) -> ForwardedCall {
        ForwardedCall { n: self.list_call(key), host: Some(host) }
    }

    /// Lists a call as running: the number it is known by.
    fn list_call(&self, key: RequestKey) -> u64 {
        let mut running = self.running_calls();
        running.last += 1;
        let n = running.last;
        running.calls.push((n, key));
        n
    }

    /// Takes call `n` off the list, and notes when the last one ended.
    fn end_call(&self, n: u64) {
        let mut running = self.running_calls();
        if let Some(at) = running.calls.iter().position(|(m, _)| *m == n) {
            running.calls.swap_remove(at);
        }
        running.ended = Some(Instant::now());
    }

    fn running_calls(&self) -> std::sync::MutexGuard<'_, Running> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The host call a server's request (or log message) belongs to: the
    /// one running, when only one is.
    pub(crate) fn related(&self) -> Option<RequestKey> {
        let running = self.running_calls();
        match running.calls.as_slice() {
            [(_, only)] => Some(only.clone()),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Session<Bridge>>> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How far the host can be asked for `capability` (`member` in it).
    pub(crate) fn reach(&self, capability: &str, member: Option<&str>) -> Reach {
        let capabilities = self.lock().as_ref().and_then(Session::client_capabilities);
        reach(capabilities.as_ref(), capability, member)
    }

    /// Sends the host `method` when it declared `capability` (`member` in
    /// it), and gives its answer as `R`.
    async fn ask<P: Serialize, R: DeserializeOwned>(
        &self,
        capability: &str,
        member: Option<&str>,
        method: &str,
        params: &P,
    ) -> Result<R, ErrorObject> {
        let session = self.lock().clone();
        let Some(session) = session else {
            return Err(refusal(method, "no host is connected yet"));
        };
        let wanted = member.map_or_else(|| capability.to_owned(), |m| format!("{capability}.{m}"));
        let params = serde_json::to_value(params).map_err(|e| {
            ErrorObject::new(error_code::INTERNAL_ERROR, format!("cannot encode {method}: {e}"))
        })?;
        let capabilities = session.client_capabilities();
        let answer = match reach(capabilities.as_ref(), capability, member) {
            Reach::Declared => {
                match session.request(method, Some(params), self.related().as_ref()).await {
                    Ok(answer) => answer,
                    Err(timeout) => Err(ErrorObject::new(
                        error_code::INTERNAL_ERROR,
                        format!("the host did not answer {method}: {timeout}"),
                    )),
                }
            }
            Reach::Undeclared => {
                return Err(refusal(
                    method,
                    &format!("the host did not declare the {wanted} capability"),
                ));
            }
            Reach::Stateless => {
                let wait = session.options().request_timeout;
                self.rounds.ask(capability, member, method, params, wait).await
            }
        };
        answer.and_then(|answer| {
            serde_json::from_value(answer).map_err(|e| {
                ErrorObject::new(
                    error_code::INTERNAL_ERROR,
                    format!("the host's answer to {method} is not valid: {e}"),
                )
            })
        })
    }
}

/// The error an upstream server gets when the host cannot be asked.
pub(crate) fn refusal(method: &str, why: &str) -> ErrorObject {
    ErrorObject::new(
        error_code::METHOD_NOT_FOUND,
        format!("mcpc serve cannot pass {method} on to its host: {why}"),
    )
}

/// The handlers the upstream connections get: each asks the host.
pub(crate) fn handlers(hosts: &Arc<Hosts>) -> Handlers {
    Handlers {
        roots: Some(Arc::new(ToHost(hosts.clone()))),
        sampling: Some(Arc::new(ToHost(hosts.clone()))),
        elicitation: Some(Arc::new(ToHost(hosts.clone()))),
    }
}

/// An upstream request handler that asks the host.
struct ToHost(Arc<Hosts>);

impl RootsHandler for ToHost {
    fn list_roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        Box::pin(async move { self.0.ask("roots", None, methods::ROOTS_LIST, &json!({})).await })
    }
}

impl SamplingHandler for ToHost {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(async move {
            // A request with tools needs a host that samples with tools.
            let member = params.tools.as_ref().map(|_| "tools");
            self.0.ask("sampling", member, methods::SAMPLING_CREATE_MESSAGE, &params).await
        })
    }

    fn supports_tools(&self) -> bool {
        true
    }
}

impl ElicitationHandler for ToHost {
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move {
            let member = match &params {
                ElicitRequestParams::Url(_) => Some("url"),
                ElicitRequestParams::Form(_) => None,
            };
            self.0.ask("elicitation", member, methods::ELICITATION_CREATE, &params).await
        })
    }

    fn supports_url_mode(&self) -> bool {
        true
    }
}

/// Asks the host's user about a call the approval policy marks `ask`: an
/// elicitation with no fields; accepted is allowed once, anything else
/// refused. A host that cannot be asked refuses (the bridge says why).
#[derive(Debug)]
pub(crate) struct HostApprover(pub(crate) Arc<Hosts>);

const REFUSED: ApprovalAnswer = ApprovalAnswer { allow: false, remember: Remember::Once };
const ONCE: ApprovalAnswer = ApprovalAnswer { allow: true, remember: Remember::Once };

impl Approver for HostApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            // A stateless-era host is asked if the call's request declared it.
            let link = match self.0.asked() {
                Ok(link) if link.reach("elicitation", None) != Reach::Undeclared => link,
                Ok(_) => return REFUSED,
                Err(why) => {
                    tracing::warn!("a call to approve was refused: {why}");
                    return REFUSED;
                }
            };
            let question = json!({
                "mode": "form",
                "message": format!(
                    "Allow the call of tool {:?} of MCP server {:?} ({}) with the arguments {}?",
                    request.tool,
                    request.server,
                    request.reason,
                    shown_arguments(request)
                ),
                "requestedSchema": {"type": "object", "properties": {}},
            });
            let answer: Result<ElicitResult, _> =
                link.ask("elicitation", None, methods::ELICITATION_CREATE, &question).await;
            match answer {
                Ok(result) if result.action == ElicitAction::Accept => ONCE,
                Ok(_) => REFUSED,
                Err(e) => {
                    tracing::warn!("asking the host to approve a call failed: {}", e.message);
                    REFUSED
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_host_may_be_asked() {
        let caps =
            json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": true}});
        let cases: &[(Option<&Value>, &str, Option<&str>, Reach)] = &[
            (Some(&caps), "elicitation", None, Reach::Declared),
            (Some(&caps), "elicitation", Some("url"), Reach::Undeclared),
            (Some(&caps), "sampling", None, Reach::Declared),
            (Some(&caps), "sampling", Some("tools"), Reach::Undeclared),
            (Some(&caps), "roots", None, Reach::Declared),
            (Some(&json!({})), "roots", None, Reach::Undeclared),
            (Some(&json!({"roots": true})), "roots", None, Reach::Undeclared),
            (None, "elicitation", None, Reach::Stateless),
        ];
        for (caps, capability, member, expected) in cases {
            assert_eq!(reach(*caps, capability, *member), *expected, "{capability} {member:?}");
        }
    }

    #[test]
    fn a_request_is_related_to_the_one_call_running() {
        let link = Arc::new(HostLink::default());
        let key = |id: i64| RequestKey { origin: 0, id: id.into() };
        assert_eq!(link.related(), None);
        let one = link.running(key(1));
        assert_eq!(link.related(), Some(key(1)));
        let two = link.running(key(2));
        assert_eq!(link.related(), None, "two calls: which one asked is unknown");
        drop(one);
        assert_eq!(link.related(), Some(key(2)));
        drop(two);
        assert_eq!(link.related(), None);
        assert!(!link.busy() && link.ended_recently());
        // Ended in any order, each takes only itself off the list (the
        // same id twice included).
        let calls = [key(1), key(2), key(3), key(2)].map(|k| link.running(k));
        assert!(link.busy());
        let [a, b, c, d] = calls;
        drop(b);
        assert_eq!(link.related(), None);
        drop(a);
        drop(d);
        assert_eq!(link.related(), Some(key(3)));
        drop(c);
        assert_eq!(link.related(), None);
        assert!(!link.busy());
    }

    #[test]
    fn a_request_goes_to_the_one_host_session_with_calls_running() {
        let hosts = Hosts::default();
        assert_eq!(hosts.asked().err(), Some("no host is connected yet"));
        let a = hosts.add();
        assert!(Arc::ptr_eq(&hosts.asked().unwrap(), &a), "one host: asked even with no call");
        let b = hosts.add();
        assert!(hosts.asked().is_err(), "two hosts, no call: unknown");
        assert!(hosts.log_target().is_err());
        let key = RequestKey { origin: 0, id: 1.into() };
        let running = b.running(key.clone());
        assert!(Arc::ptr_eq(&hosts.asked().unwrap(), &b));
        drop(running);
        // A log message just after B's call ended is still B's; a request
        // is not.
        assert!(hosts.asked().is_err());
        assert!(Arc::ptr_eq(&hosts.log_target().unwrap(), &b));
        let running = b.running(key.clone());
        let also = a.running(key);
        assert!(hosts.asked().unwrap_err().contains("several host sessions"));
        drop(running);
        assert!(Arc::ptr_eq(&hosts.asked().unwrap(), &a));
        drop(also);
        assert!(hosts.log_target().is_err(), "both ended a moment ago: unknown");
        hosts.remove(&a);
        assert!(Arc::ptr_eq(&hosts.asked().unwrap(), &b), "the one left");
    }
}
