//! One request's whole life: answered from the result cache when it may
//! be, sent through the driver's one send path, and after each attempt
//! the decisions of [`mcp_proto::client::decide`] performed: what the
//! result asks for (deliver and perhaps cache, another input round, a task
//! handle for the caller to follow) and what a failure leads to (send
//! again, list the tools again, open the connection again, give up).

use std::sync::Arc;

use mcp_proto::client::decide::input::{retry_params, sends_caller_round};
use mcp_proto::client::decide::recovery::{self, changed_tool};
use mcp_proto::client::decide::result::{ResultContext, may_cache};
use mcp_proto::client::decide::{Action, Attempt, GiveUp, InputRounds, ResultStep};
use mcp_proto::client::{BoxFuture, ClientError, RequestOptions, ops};
use mcp_proto::types::{CallToolResult, Tool};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::cache::{CacheKey, key_params};
use crate::client::Client;
use crate::inner::{Reply, ToolMisses};
use crate::middleware::{self, After, Verdict};
use crate::send::{Params, Start};
use crate::sync::{lock, now};
use crate::transport::Transport;

/// What a request came back with.
pub(crate) enum Answer {
    /// Its result.
    Result(Box<RawValue>),
    /// A task handle (tasks extension, `tools/call` only), to follow or to
    /// give to the caller.
    Task(Box<RawValue>),
    /// A `tools/call` result, decoded as it was read (asked for with
    /// `tool_result`; never when a middleware or the cache is to see the
    /// text).
    Tool(CallToolResult),
}

impl Answer {
    /// The JSON text, whichever it is.
    pub(crate) fn into_raw(self) -> Box<RawValue> {
        match self {
            Answer::Result(raw) | Answer::Task(raw) => raw,
            Answer::Tool(result) => Reply::Tool(result).into_raw(),
        }
    }

    /// The JSON text, for the middlewares (which never get a decoded
    /// result: with middlewares, none is asked for).
    fn raw(&self) -> Option<&RawValue> {
        match self {
            Answer::Result(raw) | Answer::Task(raw) => Some(raw),
            Answer::Tool(_) => None,
        }
    }
}

impl<T: Transport> Client<T> {
    /// Sends a request (opening the conversation first) and waits for its
    /// answer, as JSON text, acting on what the decisions say after each
    /// attempt. A task handle is followed to its end with `follow`, else
    /// comes back as [`Answer::Task`]. The middlewares, when there are
    /// any, see the answer before and after (a task handle as it came).
    /// With `tool_result` (a `tools/call` whose caller wants a
    /// [`CallToolResult`]), its result may come decoded, as
    /// [`Answer::Tool`], when nothing else reads its text.
    ///
    /// The options are the caller's, borrowed: the middlewares (and the
    /// trace context) change them in place; the call's future holds a
    /// reference rather than a copy at each layer.
    pub(crate) async fn request_inner<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Params<'_, P>,
        tool: Option<(Arc<[Tool]>, usize)>,
        options: &mut RequestOptions,
        tool_result: bool,
        follow: bool,
    ) -> Result<Answer, T::Error> {
        let chain = &self.inner.options.middleware;
        let started = (!chain.is_empty()).then(tokio::time::Instant::now);
        let verdict = match chain.is_empty() {
            true => Verdict::Send,
            false => middleware::before(chain, method, options),
        };
        let outcome = match verdict {
            Verdict::Send => {
                #[cfg(feature = "otel")]
                crate::otel::add_trace_context(options);
                // One await of the attempts. A debug build's poll frames are
                // large (tens of KiB each), and a request's chain of them
                // must fit a 2 MiB thread (Tokio's workers, test threads):
                // there the attempts run boxed; a release build keeps them
                // inline.
                #[cfg(debug_assertions)]
                let attempts = Box::pin(self.request_attempts(
                    method,
                    params,
                    tool,
                    options,
                    tool_result && chain.is_empty(),
                ));
                #[cfg(not(debug_assertions))]
                let attempts = self.request_attempts(
                    method,
                    params,
                    tool,
                    options,
                    tool_result && chain.is_empty(),
                );
                attempts.await
            }
            Verdict::Answer(raw) => Ok(Answer::Result(raw)),
            Verdict::Refuse(e) => Err(self.error(e)),
        };
        if !chain.is_empty() {
            let (result, error) = match &outcome {
                Ok(answer) => (answer.raw(), None),
                Err(e) => (None, Some(e as &(dyn std::error::Error + 'static))),
            };
            let elapsed = started.map(|s| s.elapsed()).unwrap_or_default();
            middleware::after(chain, &After { method, result, error, elapsed });
        }
        match outcome {
            Ok(Answer::Task(raw)) if follow => {
                self.follow_task(method, raw, None).await.map(Answer::Result)
            }
            outcome => outcome,
        }
    }

    /// [`request_inner`](Self::request_inner) without the middlewares.
    async fn request_attempts<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Params<'_, P>,
        tool: Option<(Arc<[Tool]>, usize)>,
        options: &RequestOptions,
        tool_result: bool,
    ) -> Result<Answer, T::Error> {
        let inner = &self.inner;
        let mut tool = tool;
        let mut params = params;
        let mut retried = false;
        let mut rounds = InputRounds::new(inner.options.input_limits());
        crate::open::ensure(inner).await?;
        // A caller's own round (a bridge passing its host's on): its
        // answers and state go in the parameters, in the era that has them.
        if let (Some(round), Some(era)) = (&options.caller_round, inner.era())
            && sends_caller_round(era, round)
        {
            let (answers, state) = (round.input_responses.clone(), round.request_state.clone());
            let sent = params
                .into_value(method)
                .and_then(|p| retry_params(method, p, answers, state))
                .map_err(|e| self.error(e))?;
            params = Params::Value(Some(sent));
        }
        let mut cache_key = self.cache_key(method, &params, options);
        if let (Some(key), Some(cache)) = (&cache_key, &inner.options.cache)
            && !options.no_cache
            && let Some(hit) = cache.get(key, now())
        {
            tracing::trace!(server = %self.name(), method, "answered from the cache");
            return Ok(Answer::Result(hit));
        }
        // Opened just above for the first attempt; each later one opens
        // again when the connection was lost or renewed.
        let mut opened = true;
        loop {
            if !std::mem::take(&mut opened) {
                crate::open::ensure(inner).await?;
            }
            let epoch = inner.epoch();
            let called = tool.as_ref().map(|(list, i)| &list[*i]);
            // Decoded as it is read only when nothing else reads the text:
            // not the cache; the era's rules are asked about it before it
            // is decoded (`feed_usual_answer`), as below.
            let tool_result = tool_result && cache_key.is_none();
            let start = Start::Request { method, params, options, tool_result };
            let (outcome, back) = inner.send(start, called, |_| {}).await;
            params = back;
            let fail = match outcome {
                Ok(Reply::Tool(result)) => return Ok(Answer::Tool(result)),
                Ok(reply) => {
                    let raw = reply.into_raw();
                    let Some(rules) = inner.rules() else { return Ok(Answer::Result(raw)) };
                    let context = ResultContext {
                        tasks_declared: inner.tasks_declared,
                        cacheable: cache_key.is_some(),
                        rounds_to_caller: options.caller_round.is_some(),
                    };
                    match rules.on_result(method, raw.get(), context) {
                        ResultStep::Deliver { cache } => {
                            if let (Some((hint, ttl)), Some(key), Some(store)) =
                                (cache, cache_key.take(), &inner.options.cache)
                            {
                                store.put(key, &raw, hint, ttl, now());
                            }
                            return Ok(Answer::Result(raw));
                        }
                        ResultStep::InputRequired => {
                            // A retry's answer depends on its input: never cached.
                            cache_key = None;
                            let next =
                                crate::input::fulfil(inner, method, &mut rounds, raw.get(), params)
                                    .await;
                            params = Params::Value(Some(next.map_err(|e| self.error(e))?));
                            continue;
                        }
                        ResultStep::Task => return Ok(Answer::Task(raw)),
                        ResultStep::Invalid(e) => return Err(self.error(e)),
                        other => {
                            let reason = format!("an answer this client cannot act on: {other:?}");
                            let e = ClientError::InvalidResult { method: method.into(), reason };
                            return Err(self.error(e));
                        }
                    }
                }
                Err(fail) => fail,
            };
            let attempt = Attempt {
                method,
                era: inner.era(),
                failure: fail.failure(),
                already_retried: retried,
                has_tool: tool.is_some(),
                lost_connection: inner.lost_since(epoch),
                transport_resends_after_loss: inner.transport.resends_after_loss(),
            };
            let action = recovery::decide(&attempt);
            retried = true;
            match action {
                Action::RelistToolsAndResend => {
                    // The tool's definition may have changed (its
                    // `x-mcp-header` annotations): list again, and send
                    // again when it did.
                    let Some((list, i)) = &tool else { return Err(self.inner.give_up(fail)) };
                    let called = &list[*i];
                    let fresh = self.relist_tools().await;
                    match fresh.ok().and_then(|l| changed_tool(called, &l).map(|j| (l, j))) {
                        Some(changed) => {
                            tracing::info!(server = %self.name(), tool = %called.name, "the server refused the call's headers and the tool changed; sending again");
                            tool = Some(changed);
                        }
                        None => return Err(self.inner.give_up(fail)),
                    }
                }
                Action::ResendNewId => {
                    tracing::info!(server = %self.name(), method, "the answer's stream broke; sending the request again with a new id");
                }
                Action::Rediscover => {
                    tracing::info!(server = %self.name(), method, "the server refused the protocol version; discovering again");
                    crate::open::renew(inner, epoch).await?;
                }
                Action::NewSession => {
                    tracing::info!(server = %self.name(), method, "the server ended the session; starting a new one");
                    crate::open::renew(inner, epoch).await?;
                }
                Action::RenewConnection => {
                    tracing::info!(server = %self.name(), method, "the connection was lost with the request out; sending it again in a new one");
                    crate::open::renew(inner, epoch).await?;
                }
                // The connection was renewed between the check and the
                // send: open it and go on in the new one.
                Action::Reinitialize => {}
                Action::GiveUp(GiveUp::ConnectionLost) => {
                    return Err(self.error(ClientError::ConnectionLost { method: method.into() }));
                }
                _ => return Err(self.inner.give_up(fail)),
            }
        }
    }

    /// The result-cache key of a request, when its answer may come from
    /// (and go to) the cache: a cache, an era that caches, and a request
    /// that may be cached ([`may_cache`]).
    fn cache_key<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &Params<'_, P>,
        options: &RequestOptions,
    ) -> Option<CacheKey> {
        self.inner.options.cache.as_ref()?;
        if !may_cache(method, options) || !self.inner.rules()?.caches_results() {
            return None;
        }
        let params = match params {
            Params::Value(v) => key_params(v.as_ref()),
            Params::Typed(p) => key_params(serde_json::to_value(p).ok().as_ref()),
        };
        Some(CacheKey { server: self.inner.cache_server(), method: method.to_owned(), params })
    }

    /// The tool list from the server, boxed: a request may need it while
    /// it is itself one of the requests listing makes.
    fn relist_tools(&self) -> BoxFuture<'_, Result<Arc<[Tool]>, T::Error>> {
        *lock(&self.inner.tool_misses) = ToolMisses::default();
        Box::pin(
            async move { ops::list_tools_fresh(&Plain(self), RequestOptions::default()).await },
        )
    }

    /// The assembled tool list, when the era keeps one.
    pub(crate) fn kept_tools(&self) -> Option<Arc<[Tool]>> {
        let keeps = self.inner.rules().is_none_or(|rules| rules.keeps_tool_list());
        if keeps { lock(&self.inner.core).cached_tools() } else { None }
    }
}

/// The client as [`ops`] sees it for the listings the request path makes
/// itself (their answers are never task handles).
#[derive(Clone, Copy)]
pub(crate) struct Plain<'a, T: Transport>(pub(crate) &'a Client<T>);

impl<T: Transport> ops::Requester for Plain<'_, T> {
    type Error = T::Error;

    fn client_error(&self, error: ClientError) -> T::Error {
        self.0.error(error)
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        let mut options = options;
        let params = Params::Value(params);
        let answer = self.0.request_inner::<()>(method, params, None, &mut options, false, false);
        answer.await.map(Answer::into_raw)
    }

    async fn request_with_params<P: Serialize + Sync>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, T::Error> {
        let mut options = options;
        let answer =
            self.0.request_inner(method, Params::Typed(params), None, &mut options, false, false);
        answer.await.map(Answer::into_raw)
    }

    /// In the stateless era the assembled list is not kept: its pages are,
    /// in the result cache, for as long as their `ttlMs` says.
    fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        self.0.kept_tools()
    }

    fn tools_generation(&self) -> u64 {
        lock(&self.0.inner.core).tools_generation()
    }

    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        lock(&self.0.inner.core).store_tools(generation, tools)
    }
}
