//! A stateless-era (2026-07-28) host's input rounds: that era has no
//! server-to-client requests, so what a server asks during a host's call
//! (elicitation, sampling, roots, an `ask` approval) ends the host's
//! request with an `input_required` result; the upstream call is kept
//! (parked, not cancelled) under the `requestState` it names, and the
//! host's retry with `inputResponses` gives the answer and takes the call
//! up again. A stateless-era server's own rounds of a `tools/call` are not
//! these: they pass through as the server sent them
//! ([`check_passed_round`] refuses one the host did not declare it can
//! answer), and the host's retry goes to the server with its answers and
//! the server's state.
//!
//! Which call asked is not said by the servers' requests: a request is
//! routed to the host call running when it comes (one that comes while
//! none runs, such as a server's `roots/list` right after it starts, waits
//! up to [`CALL_WAIT`] for the host's next call, as does one whose call
//! ended with its answer before taking the question up), and refused when
//! several run at once. Parked calls are bounded in number and in time.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_server_io::RequestKey;
use mcp_server_io::stateless::{self, RequestMeta};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// A host call that may be parked: its result, or its JSON-RPC error.
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Result<Value, ErrorObject>> + Send>>;

/// Where a host call's progress goes: the token and the request of the
/// host request waiting for the call now. A stateless host's retry after
/// an input round is a new request with its own token, which takes the
/// parked call's progress over.
#[derive(Clone, Default)]
pub(crate) struct ProgressTarget(Arc<Mutex<Option<(Value, RequestKey)>>>);

impl ProgressTarget {
    /// A target for `key`'s request with `token` (none: no progress wanted).
    pub(crate) fn new(token: Option<Value>, key: &RequestKey) -> ProgressTarget {
        ProgressTarget(Arc::new(Mutex::new(token.map(|t| (t, key.clone())))))
    }

    /// The token and request progress goes to now, if any.
    pub(crate) fn get(&self) -> Option<(Value, RequestKey)> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// From now on, progress goes where `other` says.
    fn follow(&self, other: &ProgressTarget) {
        let now = other.get();
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = now;
    }
}

/// How long a server's request that comes while no host call runs waits
/// for one to start.
pub(crate) const CALL_WAIT: Duration = Duration::from_secs(10);

/// The most calls parked at once.
const MAX_PARKED: usize = 64;
/// The key of the one input request of a round.
const INPUT_KEY: &str = "input";

/// A server's request to the host, waiting for its answer.
struct Ask {
    method: String,
    params: Value,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
    /// Set when a call takes the question up (parks on it); a question
    /// its call never took (the call ended first) goes to the next call.
    taken: Arc<AtomicBool>,
}

/// The stateless host's calls: those running, and those parked.
#[derive(Default)]
pub(crate) struct Rounds {
    inner: Mutex<Inner>,
    /// Told each time a host call starts running.
    started: tokio::sync::Notify,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("Rounds")
            .field("running", &inner.running.len())
            .field("parked", &inner.parked.len())
            .finish()
    }
}

#[derive(Default)]
struct Inner {
    next: u64,
    /// Calls running now, by number.
    running: HashMap<u64, Call>,
    /// Parked calls, by `requestState`.
    parked: HashMap<String, Parked>,
    /// The last call that asked for log messages, when it ended: what its
    /// server logged just before answering is relayed after it.
    ended: Option<(RequestKey, usize, Instant)>,
}

/// How long after its call ended a log message is still taken for it.
const LOG_GRACE: Duration = Duration::from_secs(1);

/// A host call running now.
struct Call {
    /// Where the asks of its servers go.
    asks: mpsc::Sender<Ask>,
    /// The capabilities its request declared.
    capabilities: Map<String, Value>,
    /// Its request, to relate what is sent for it.
    key: RequestKey,
    /// The least level of the log messages it asked for, if any.
    log_level: Option<usize>,
}

struct Parked {
    call: CallFuture,
    /// Where the parked call's progress goes (the retry takes it over).
    progress: ProgressTarget,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
    until: Instant,
}

/// Takes a running call off the list however its future ends.
struct Running<'a> {
    rounds: &'a Rounds,
    id: u64,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut inner = self.rounds.lock();
        if let Some(call) = inner.running.remove(&self.id)
            && let Some(level) = call.log_level
        {
            inner.ended = Some((call.key, level, Instant::now()));
        }
    }
}

impl Rounds {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs a host call (`start` makes it, unless the request takes up a
    /// parked one by its `requestState`) until it ends, or until a server
    /// asks something: then the call is parked for `keep` and the host
    /// gets `input_required`. `progress` is where this request wants the
    /// call's progress; a parked call taken up sends its progress there
    /// from then on.
    pub(crate) async fn drive(
        &self,
        key: &RequestKey,
        meta: &RequestMeta,
        keep: Duration,
        progress: &ProgressTarget,
        start: impl FnOnce() -> CallFuture,
    ) -> Result<Value, ErrorObject> {
        let resumed = match &meta.request_state {
            Some(state) => Some(self.take(state)?),
            None => None,
        };
        self.run(key, meta, keep, progress, resumed, start).await
    }

    /// [`drive`](Self::drive) for a call that takes no parked one up: the
    /// request's `requestState`, if it has one, is not of these rounds (a
    /// server's, passed on to it in the call).
    pub(crate) async fn drive_new(
        &self,
        key: &RequestKey,
        meta: &RequestMeta,
        keep: Duration,
        progress: &ProgressTarget,
        start: impl FnOnce() -> CallFuture,
    ) -> Result<Value, ErrorObject> {
        self.run(key, meta, keep, progress, None, start).await
    }

    async fn run(
        &self,
        key: &RequestKey,
        meta: &RequestMeta,
        keep: Duration,
        progress: &ProgressTarget,
        resumed: Option<Parked>,
        start: impl FnOnce() -> CallFuture,
    ) -> Result<Value, ErrorObject> {
        // Listed as running before a resumed call gets its answer, so
        // what its server asks next finds it.
        let (tx, mut asks) = mpsc::channel(4);
        let id = {
            let mut inner = self.lock();
            inner.next += 1;
            let id = inner.next;
            let call = Call {
                asks: tx,
                capabilities: meta.capabilities.clone(),
                key: key.clone(),
                log_level: meta.log_level,
            };
            inner.running.insert(id, call);
            id
        };
        self.started.notify_waiters();
        let running = Running { rounds: self, id };
        let (mut call, progress) = match resumed {
            Some(parked) => {
                parked.progress.follow(progress);
                let answer = meta.input_responses.as_ref().and_then(|r| r.get(INPUT_KEY)).cloned();
                let _ = parked.answer.send(answer.ok_or_else(|| {
                    ErrorObject::new(
                        error_code::INVALID_PARAMS,
                        "the host's retry has no inputResponses",
                    )
                }));
                (parked.call, parked.progress)
            }
            None => (start(), progress.clone()),
        };
        // The call first: when its answer and a question of its server
        // come together, the answer goes to the host and the question,
        // never taken, to the host's next call.
        tokio::select! {
            biased;
            result = &mut call => result,
            Some(ask) = asks.recv() => {
                ask.taken.store(true, Ordering::Release);
                drop(running);
                self.park(call, progress, ask, keep)
            }
        }
    }

    /// Parks a call whose server asked `ask`: the `input_required` result.
    fn park(
        &self,
        call: CallFuture,
        progress: ProgressTarget,
        ask: Ask,
        keep: Duration,
    ) -> Result<Value, ErrorObject> {
        let mut inner = self.lock();
        let now = Instant::now();
        inner.parked.retain(|_, p| p.until > now);
        if inner.parked.len() >= MAX_PARKED {
            drop(inner);
            let error = ErrorObject::new(
                error_code::INTERNAL_ERROR,
                format!("mcpc serve holds {MAX_PARKED} calls waiting for their host already"),
            );
            let _ = ask.answer.send(Err(error.clone()));
            return Err(error);
        }
        inner.next += 1;
        let state = format!("mcpc-serve-{}", inner.next);
        let requests = json!({ INPUT_KEY: { "method": ask.method, "params": ask.params } });
        inner.parked.insert(
            state.clone(),
            Parked { call, progress, answer: ask.answer, until: now + keep },
        );
        Ok(stateless::input_required(Some(requests), Some(state)))
    }

    /// The parked call of `state`.
    fn take(&self, state: &str) -> Result<Parked, ErrorObject> {
        let mut inner = self.lock();
        let now = Instant::now();
        inner.parked.retain(|_, p| p.until > now);
        inner.parked.remove(state).ok_or_else(|| unknown_state(state))
    }

    /// Whether `state` names a call parked here (else it is a server's,
    /// passed on to the host as it came, or unknown).
    pub(crate) fn holds(&self, state: &str) -> bool {
        self.lock().parked.contains_key(state)
    }

    /// Drops every parked call (the host is gone): each is cancelled
    /// upstream, and what its server asked gets an error.
    pub(crate) fn clear(&self) {
        let parked = std::mem::take(&mut self.lock().parked);
        drop(parked);
    }

    /// Whether calls are running (parked ones are not).
    pub(crate) fn is_running(&self) -> bool {
        !self.lock().running.is_empty()
    }

    /// The call a log message belongs to, when it asked for log messages:
    /// the one running when only one is; with none running, the last one
    /// that ended, for a moment (its server's last messages come after
    /// its answer). Its request and the least level it wants.
    pub(crate) fn logging_call(&self) -> Option<(RequestKey, usize)> {
        let inner = self.lock();
        let mut running = inner.running.values();
        match (running.next(), running.next()) {
            (Some(call), None) => call.log_level.map(|level| (call.key.clone(), level)),
            (None, _) => inner
                .ended
                .as_ref()
                .filter(|(_, _, at)| at.elapsed() < LOG_GRACE)
                .map(|(key, level, _)| (key.clone(), *level)),
            _ => None,
        }
    }

    /// Asks the host, through the one call of it running now, `method`
    /// when that call's request declared `capability` (`member` in it).
    pub(crate) async fn ask(
        &self,
        capability: &str,
        member: Option<&str>,
        method: &str,
        params: Value,
        wait: Duration,
    ) -> Result<Value, ErrorObject> {
        let until = Instant::now() + wait.min(CALL_WAIT);
        loop {
            let (tx, capabilities) =
                self.target(until).await.map_err(|why| super::host::refusal(method, why))?;
            if let Some(why) = undeclared(&capabilities, capability, member) {
                return Err(super::host::refusal(method, &why));
            }
            let (answer, answered) = oneshot::channel();
            let taken = Arc::new(AtomicBool::new(false));
            let ask = Ask {
                method: method.to_owned(),
                params: params.clone(),
                answer,
                taken: taken.clone(),
            };
            // Not taken up when the call ended first: the host's next
            // call, while the wait lasts.
            let again = || !taken.load(Ordering::Acquire) && Instant::now() < until;
            if tx.send(ask).await.is_err() {
                if again() {
                    continue;
                }
                return Err(super::host::refusal(method, "the host's call ended"));
            }
            match tokio::time::timeout(wait, answered).await {
                Ok(Ok(answer)) => return answer,
                Ok(Err(_)) if again() => continue,
                Ok(Err(_)) => return Err(super::host::refusal(method, "the host's call ended")),
                Err(_) => {
                    return Err(super::host::refusal(method, "the host did not answer in time"));
                }
            }
        }
    }

    /// The one host call running, to ask through: waits until `until` for
    /// one to start when none runs; refused when several run.
    async fn target(
        &self,
        until: Instant,
    ) -> Result<(mpsc::Sender<Ask>, Map<String, Value>), &'static str> {
        loop {
            // Listening before looking, so a call starting in between is
            // not missed.
            let started = self.started.notified();
            let mut started = std::pin::pin!(started);
            started.as_mut().enable();
            {
                let inner = self.lock();
                let mut running = inner.running.values();
                match (running.next(), running.next()) {
                    (Some(call), None) => {
                        return Ok((call.asks.clone(), call.capabilities.clone()));
                    }
                    (None, _) => {}
                    (Some(_), Some(_)) => {
                        return Err(
                            "several calls of the host run at once, and which one asked is unknown",
                        );
                    }
                }
            }
            if tokio::time::timeout_at(until, started).await.is_err() {
                return Err("no call of the host is running to ask it through");
            }
        }
    }
}

/// `-32602` for a `requestState` that names no call waiting here (and
/// that no server could take instead).
pub(crate) fn unknown_state(state: &str) -> ErrorObject {
    ErrorObject::new(
        error_code::INVALID_PARAMS,
        format!("requestState {state:?} names no call waiting for an answer (expired?)"),
    )
}

/// Why a host whose request declared `capabilities` may not be asked what
/// needs `capability` (and its `member`, when one is named); `None` when it
/// may.
fn undeclared(
    capabilities: &Map<String, Value>,
    capability: &str,
    member: Option<&str>,
) -> Option<String> {
    let declared = capabilities.get(capability).filter(|c| c.is_object());
    if declared.is_some() && member.is_none_or(|m| declared.and_then(|d| d.get(m)).is_some()) {
        return None;
    }
    let wanted = member.map_or_else(|| capability.to_owned(), |m| format!("{capability}.{m}"));
    Some(format!("the host's request did not declare the {wanted} capability"))
}

/// The capability (and the member of it) a server's request to the host
/// needs: `roots/list` roots; `sampling/createMessage` sampling (with
/// `tools` when it offers tools); `elicitation/create` elicitation (with
/// `url` in URL mode). `None` for a method the bridge does not know.
fn needed(method: &str, params: Option<&Value>) -> Option<(&'static str, Option<&'static str>)> {
    let has = |member: &str| params.and_then(|p| p.get(member)).is_some_and(|v| !v.is_null());
    match method {
        methods::ROOTS_LIST => Some(("roots", None)),
        methods::SAMPLING_CREATE_MESSAGE => Some(("sampling", has("tools").then_some("tools"))),
        methods::ELICITATION_CREATE => {
            let url = params.and_then(|p| p.get("mode")).and_then(Value::as_str) == Some("url");
            Some(("elicitation", url.then_some("url")))
        }
        _ => None,
    }
}

/// A server's `input_required` result passed on to a stateless-era host
/// as it came (its keys and `requestState` are the server's, the host's
/// retry goes back to the server): refused when one of its input requests
/// needs a capability the host's request did not declare, as a question
/// asked through [`Rounds::ask`] is. Anything else passes.
pub(crate) fn check_passed_round(
    result: &Value,
    capabilities: &Map<String, Value>,
) -> Result<(), ErrorObject> {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return Ok(());
    }
    let requests = result.get("inputRequests").and_then(Value::as_object);
    for request in requests.into_iter().flat_map(Map::values) {
        let Some(method) = request.get("method").and_then(Value::as_str) else { continue };
        let Some((capability, member)) = needed(method, request.get("params")) else { continue };
        if let Some(why) = undeclared(capabilities, capability, member) {
            return Err(super::host::refusal(method, &why));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mcp_server_io::ServeEra;

    use super::*;

    fn meta(extra: Value) -> RequestMeta {
        let mut params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }});
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        stateless::request_meta(Some(&params), ServeEra::Modern).unwrap()
    }

    /// A server's question that reaches a call in the same moment as the
    /// call's own answer: the answer goes to the host, and the question,
    /// never taken up, to the host's next call (not refused).
    #[tokio::test]
    async fn a_question_its_call_never_took_goes_to_the_next_call() {
        let rounds = Arc::new(Rounds::default());
        let wait = Duration::from_secs(5);
        let none = ProgressTarget::default();
        let (done, finish) = oneshot::channel::<()>();
        let first_rounds = rounds.clone();
        let first = tokio::spawn(async move {
            let key = RequestKey { origin: 0, id: 1.into() };
            let call: CallFuture = Box::pin(async move {
                let _ = finish.await;
                Ok(json!("first"))
            });
            first_rounds.drive(&key, &meta(json!({})), wait, &none, || call).await
        });
        while !rounds.is_running() {
            tokio::task::yield_now().await;
        }
        // The question is handed to the first call, and the first call's
        // answer is ready at its next poll: both come together.
        let asking = rounds.clone();
        let asked = tokio::spawn(async move {
            asking.ask("elicitation", None, "elicitation/create", json!({"q": 1}), wait).await
        });
        done.send(()).unwrap();
        assert_eq!(first.await.unwrap().unwrap(), json!("first"));
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        assert!(!asked.is_finished(), "the question was refused: {:?}", asked.await);

        let none = ProgressTarget::default();
        let key = RequestKey { origin: 0, id: 2.into() };
        let pending: CallFuture = Box::pin(std::future::pending());
        let second = rounds.drive(&key, &meta(json!({})), wait, &none, || pending).await.unwrap();
        assert_eq!(second["resultType"], "input_required");
        assert_eq!(second["inputRequests"]["input"]["params"], json!({"q": 1}));
    }

    #[tokio::test]
    async fn a_call_that_asks_is_parked_and_taken_up_with_the_answer() {
        let rounds = Arc::new(Rounds::default());
        let wait = Duration::from_secs(5);
        let asking = rounds.clone();
        let key = RequestKey { origin: 0, id: 1.into() };
        // The call's progress goes where its target says (as calls.rs's
        // progress callback reads it).
        let progress = ProgressTarget::new(Some(json!("first-token")), &key);
        let seen_by_call = progress.clone();
        let call: CallFuture = Box::pin(async move {
            let answer = asking
                .ask("elicitation", None, "elicitation/create", json!({"q": 1}), wait)
                .await?;
            let (token, key) = seen_by_call.get().expect("a progress target");
            Ok(json!({ "got": answer, "progress": [token, key.id] }))
        });
        let first = rounds.drive(&key, &meta(json!({})), wait, &progress, || call).await.unwrap();
        assert_eq!(first["resultType"], "input_required");
        assert_eq!(first["inputRequests"]["input"]["method"], "elicitation/create");
        assert_eq!(first["inputRequests"]["input"]["params"], json!({"q": 1}));
        let state = first["requestState"].as_str().unwrap().to_owned();

        let unused = || -> CallFuture { Box::pin(async { Ok(json!("new")) }) };
        let retry = meta(json!({"requestState": state, "inputResponses": {"input": {"a": 2}}}));
        // The retry is a request of its own, with its own progress token:
        // the parked call's progress goes to it from now on.
        let retry_key = RequestKey { origin: 0, id: 2.into() };
        let retry_progress = ProgressTarget::new(Some(json!("retry-token")), &retry_key);
        let done = rounds.drive(&retry_key, &retry, wait, &retry_progress, unused).await.unwrap();
        assert_eq!(done, json!({"got": {"a": 2}, "progress": ["retry-token", 2]}));
        // Taken up once only.
        let none = ProgressTarget::default();
        let again = rounds.drive(&key, &retry, wait, &none, unused).await.unwrap_err();
        assert!(again.message.contains("names no call waiting"), "{again:?}");

        // Parked calls end with their host; what their server asked fails.
        let asking = rounds.clone();
        let call: CallFuture = Box::pin(async move {
            asking.ask("elicitation", None, "elicitation/create", json!({}), wait).await
        });
        let (seen, answer) = oneshot::channel();
        let watched: CallFuture = Box::pin(async move {
            let result = call.await;
            let _ = seen.send(());
            result
        });
        let parked = rounds.drive(&key, &meta(json!({})), wait, &none, || watched).await.unwrap();
        assert_eq!(parked["resultType"], "input_required");
        rounds.clear();
        assert!(answer.await.is_err(), "a dropped call never finishes");
        assert_eq!(format!("{rounds:?}"), "Rounds { running: 0, parked: 0 }");
    }

    #[tokio::test]
    async fn an_ask_waits_for_the_hosts_next_call() {
        let rounds = Arc::new(Rounds::default());
        let wait = Duration::from_secs(60);
        // The server asks before the host calls anything...
        let asking = rounds.clone();
        let ask = tokio::spawn(async move {
            asking.ask("elicitation", None, "elicitation/create", json!({"q": 1}), wait).await
        });
        tokio::task::yield_now().await;
        // ...and the host's next call carries the question.
        let key = RequestKey { origin: 0, id: 1.into() };
        let never: CallFuture = Box::pin(std::future::pending());
        let none = ProgressTarget::default();
        let round = rounds.drive(&key, &meta(json!({})), wait, &none, || never).await.unwrap();
        assert_eq!(round["inputRequests"]["input"]["method"], "elicitation/create");
        let state = round["requestState"].as_str().unwrap().to_owned();
        let retry = meta(json!({"requestState": state, "inputResponses": {"input": {"a": 2}}}));
        let resuming = rounds.clone();
        let taken_up = tokio::spawn(async move {
            let unused = || -> CallFuture { Box::pin(async { Ok(json!("new")) }) };
            resuming.drive(&key, &retry, wait, &ProgressTarget::default(), unused).await
        });
        let answered = tokio::time::timeout(Duration::from_secs(5), ask).await;
        taken_up.abort();
        assert_eq!(answered.unwrap().unwrap().unwrap(), json!({"a": 2}));
    }

    #[tokio::test]
    async fn asks_need_one_running_call_that_declared_the_capability() {
        let rounds = Rounds::default();
        let wait = Duration::from_secs(1);
        // With no call running, the ask waits (here 20 ms) for one.
        let short = Duration::from_millis(20);
        let none = rounds.ask("elicitation", None, "elicitation/create", json!({}), short).await;
        assert!(none.unwrap_err().message.contains("no call of the host is running"));
        let (tx, _rx) = mpsc::channel(1);
        let call = |id: i64, log_level| Call {
            asks: tx.clone(),
            capabilities: Map::new(),
            key: RequestKey { origin: 0, id: id.into() },
            log_level,
        };
        rounds.lock().running.insert(1, call(1, Some(3)));
        assert_eq!(rounds.logging_call(), Some((RequestKey { origin: 0, id: 1.into() }, 3)));
        let undeclared = rounds.ask("sampling", None, "sampling/createMessage", json!({}), wait);
        let undeclared = undeclared.await.unwrap_err().message;
        assert!(undeclared.contains("did not declare the sampling capability"), "{undeclared}");
        rounds.lock().running.insert(2, call(2, None));
        assert_eq!(rounds.logging_call(), None);
        let two = rounds.ask("sampling", None, "sampling/createMessage", json!({}), wait).await;
        assert!(two.unwrap_err().message.contains("several calls"));
        // Ended, a call that asked for log messages keeps them a moment.
        drop(Running { rounds: &rounds, id: 2 });
        drop(Running { rounds: &rounds, id: 1 });
        assert_eq!(rounds.logging_call(), Some((RequestKey { origin: 0, id: 1.into() }, 3)));
    }

    /// A server's round passed on is refused exactly when one of its
    /// requests needs what the host's request did not declare.
    #[test]
    fn a_passed_round_needs_what_the_host_declared() {
        let round = |method: &str, params: Value| {
            json!({"resultType": "input_required",
                "inputRequests": {"k": {"method": method, "params": params}}})
        };
        let caps = |c: Value| c.as_object().cloned().unwrap_or_default();
        let form = json!({"message": "?", "requestedSchema": {"type": "object"}});
        let url = json!({"mode": "url", "message": "?", "url": "https://x", "elicitationId": "e"});
        let tools = json!({"messages": [], "maxTokens": 9, "tools": []});
        // (result, declared capabilities, refused?)
        let cases = [
            (round("elicitation/create", form.clone()), json!({"elicitation": {}}), false),
            (round("elicitation/create", form.clone()), json!({}), true),
            (round("elicitation/create", form), json!({"elicitation": true}), true),
            (round("elicitation/create", url.clone()), json!({"elicitation": {}}), true),
            (round("elicitation/create", url), json!({"elicitation": {"url": {}}}), false),
            (round("sampling/createMessage", tools.clone()), json!({"sampling": {}}), true),
            (round("sampling/createMessage", tools), json!({"sampling": {"tools": {}}}), false),
            (round("sampling/createMessage", json!({})), json!({"sampling": {}}), false),
            (round("roots/list", json!({})), json!({"sampling": {}}), true),
            (round("roots/list", json!({})), json!({"roots": {}}), false),
            // A method the bridge does not know: the host's to judge.
            (round("x/new", json!({})), json!({}), false),
            // Not a round: nothing to check.
            (
                json!({"content": [], "inputRequests": {"k": {"method": "roots/list"}}}),
                json!({}),
                false,
            ),
            (json!({"resultType": "input_required", "requestState": "s"}), json!({}), false),
        ];
        for (result, declared, refused) in cases {
            let got = check_passed_round(&result, &caps(declared.clone()));
            assert_eq!(got.is_err(), refused, "{result} {declared}");
            if let Err(e) = got {
                assert_eq!(e.code, error_code::METHOD_NOT_FOUND);
                assert!(e.message.contains("did not declare"), "{}", e.message);
            }
        }
    }
}
