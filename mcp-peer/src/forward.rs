//! Forwarded calls: a `tools/call` sent for someone else (a bridge passing
//! on its host's call) with no caller waiting on it. The request takes the
//! one start in the core (its id, its deadline, its `_meta`), and its
//! outcome, whichever way it ends (the answer, the deadline, a lost
//! connection, the client closing, the write failing), is handed to a sink,
//! once, on the task that ended it, as the error or result
//! [`Client::call_tool_json`] would give. Cancelled
//! ([`Client::cancel_forwarded`]), the server gets
//! `notifications/cancelled` as when a caller stops waiting, and the sink
//! is dropped uncalled.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Waker};

use mcp_proto::client::decide::recovery::{self, Attempt};
use mcp_proto::client::decide::{Action, GiveUp};
use mcp_proto::client::{ClientError, RequestOptions};
use mcp_proto::jsonrpc::RequestId;
use mcp_proto::types::Tool;
use mcp_proto::{ProtocolVersion, methods};
use serde_json::value::RawValue;

use crate::api::{Arguments, CallParams};
use crate::client::Client;
use crate::inner::{Inner, To, Waiter};
use crate::send::{Fail, STOPPED_WAITING, failure_of, wire_version};
use crate::shape::{Shape, shape_of};
use crate::sync::{lock, now};
use crate::transport::{OutgoingRequest, Transport};

impl<T: Transport> Client<T> {
    /// Whether [`forward_tool_call`](Self::forward_tool_call) takes a call
    /// now: a connection open in the handshake era (whose rules deliver
    /// every result as it came), no middleware, a transport that needs
    /// neither the parameters as a value nor the tool's definition and
    /// sends nothing again after a lost connection (so a failed call is
    /// given up as it came, as the general path gives it up). Else the
    /// call takes [`call_tool_json`](Self::call_tool_json).
    pub fn forwards_plainly(&self) -> bool {
        self.carries_plainly()
            && lock(&self.inner.core)
                .protocol_version()
                .is_some_and(|v| !ProtocolVersion::is_modern(v))
    }

    /// The tool list the client keeps, when
    /// [`forwards_plainly`](Self::forwards_plainly) holds: both read
    /// under one look at the connection's state (the list is kept in the
    /// handshake era once listed; `None` before, or after a list change
    /// the server announced, until it is listed again).
    pub fn forwarding_tools(&self) -> Option<Arc<[Tool]>> {
        if !self.carries_plainly() {
            return None;
        }
        let core = lock(&self.inner.core);
        core.protocol_version().filter(|v| !v.is_modern())?;
        core.cached_tools()
    }

    /// Whether [`forwards_plainly`](Self::forwards_plainly) holds and the
    /// tool list the client keeps is still `tools` (one
    /// [`forwarding_tools`](Self::forwarding_tools) gave): the same list,
    /// not one listed again since.
    pub fn forwards_with(&self, tools: &Arc<[Tool]>) -> bool {
        if !self.carries_plainly() {
            return false;
        }
        let core = lock(&self.inner.core);
        core.protocol_version().is_some_and(|v| !v.is_modern()) && core.keeps_tools(tools)
    }

    /// What [`forwards_plainly`](Self::forwards_plainly) asks of the
    /// client besides its era: no middleware, and a transport that needs
    /// neither the parameters as a value nor the tool's definition and
    /// sends nothing again after a lost connection.
    fn carries_plainly(&self) -> bool {
        let inner = &self.inner;
        inner.options.middleware.is_empty()
            && !inner.transport.wants_params()
            && !inner.transport.wants_tool()
            && !inner.transport.resends_after_loss()
    }

    /// Sends `tools/call` as [`call_tool_json`](Self::call_tool_json)
    /// would (the same request text, `_meta` and progress token, the same
    /// deadline rules), with no caller waiting: its outcome goes to `sink`,
    /// called once, on the task that ends the request (the reader, for an
    /// answer; the deadline's task; the one that closes the client or
    /// finds the connection lost; the write's), with what `call_tool_json`
    /// would give: the result's text (an object, borrowed from the answer
    /// as it was read), or the same error. Check
    /// [`forwards_plainly`](Self::forwards_plainly) first.
    ///
    /// Gives the request's id, for
    /// [`cancel_forwarded`](Self::cancel_forwarded); an error when the
    /// call could not start (the client closed, arguments that are not an
    /// object, a connection not open), `sink` then dropped uncalled.
    pub fn forward_tool_call<S>(
        &self,
        name: &str,
        arguments: Option<&RawValue>,
        options: &RequestOptions,
        sink: S,
    ) -> Result<RequestId, T::Error>
    where
        S: FnOnce(Result<&RawValue, T::Error>) + Send + 'static,
    {
        let inner = &self.inner;
        let epoch = inner.check_open()?;
        let arguments = match shape_of(&arguments) {
            Shape::Null => Arguments::None,
            Shape::Object => Arguments::Typed(&arguments),
            Shape::Other => return Err(self.not_an_object()),
        };
        let params = CallParams { name, arguments, task: None };
        // Counted before the request leaves: its answer is looked for.
        inner.forwards.fetch_add(1, Ordering::Relaxed);
        let started = {
            let mut core = lock(&inner.core);
            let version = wire_version(&core);
            let waiter = Waiter::sink(Box::new(move |outcome: Result<&RawValue, &mut dyn Any>| {
                match outcome {
                    Ok(raw) => sink(Ok(raw)),
                    // Always there: `Inner::forwarded_end` puts it.
                    Err(error) => {
                        if let Some(e) =
                            error.downcast_mut::<Option<T::Error>>().and_then(Option::take)
                        {
                            sink(Err(e));
                        }
                    }
                }
            }));
            core.start_request_encoded(methods::TOOLS_CALL, &params, options, waiter, now()).map(
                |(id, body)| {
                    let deadline = core.deadline(&id);
                    (id, body, deadline, version, core.pending_requests())
                },
            )
        };
        let (id, body, deadline, version, awaited) = match started {
            Ok(started) => started,
            Err(e) => {
                inner.forwards.fetch_sub(1, Ordering::Relaxed);
                return Err(inner.transport.client_error(e));
            }
        };
        if let Some(deadline) = deadline {
            inner.arm_deadline(deadline);
        }
        // The line usually goes at once: written here, with no future.
        let now = call_request(&id, body, &options.headers, version, awaited);
        let Err(body) = inner.transport.send_request_now(now) else { return Ok(id) };
        let me = inner.clone();
        let sent = id.clone();
        let headers = options.headers.clone();
        let mut write: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
            let outgoing = call_request(&sent, body, &headers, version, awaited);
            if let Err(e) = me.transport.send_request(outgoing).await {
                me.forward_failed(&sent, epoch, e);
            }
        });
        // Else, often, still at once: written here, with no task.
        let mut cx = Context::from_waker(Waker::noop());
        if write.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(write);
        }
        Ok(id)
    }

    /// Stops a forwarded call (its host cancelled it): the server gets
    /// `notifications/cancelled`, as when a caller of
    /// [`call_tool_json`](Self::call_tool_json) stops waiting, and the
    /// sink is dropped uncalled (whoever cancels knows; a sink called from
    /// here would run inside the canceller's own locks). Nothing when the
    /// call already ended.
    pub fn cancel_forwarded(&self, id: &RequestId) {
        let inner = &self.inner;
        let (waiter, flush) = {
            let mut core = lock(&inner.core);
            let waiter = core.take_ended(id, Some(STOPPED_WAITING));
            (waiter, core.has_transmit())
        };
        if waiter.is_some_and(|w| w.is_sink()) {
            inner.forwards.fetch_sub(1, Ordering::Relaxed);
        }
        if flush {
            inner.spawn_flush();
        }
    }
}

/// A forwarded `tools/call` as its transport takes it.
fn call_request<'a>(
    id: &'a RequestId,
    body: Vec<u8>,
    headers: &'a [(String, String)],
    protocol_version: Option<ProtocolVersion>,
    awaited: usize,
) -> OutgoingRequest<'a> {
    OutgoingRequest {
        id,
        method: methods::TOOLS_CALL,
        body,
        params: None,
        tool: None,
        protocol_version,
        headers,
        awaited,
    }
}

impl<T: Transport> Inner<T> {
    /// A forwarded request whose transport failed to carry it (sent in
    /// connection `epoch`): ended in the core as the general path ends it
    /// (the server told when the era's rules say so), its sink given the
    /// error the general path gives up with. Nothing when it ended
    /// meanwhile (its sink was called then).
    fn forward_failed(&self, id: &RequestId, epoch: u64, error: T::Error) {
        tracing::debug!(server = %self.options.name, error = %error, "forwarding a call to the server failed");
        let notify = self.rules().is_none_or(|rules| rules.notifies_cancel_after_broken_exchange());
        let reason = notify.then_some("the transport failed to carry the request");
        let (waiter, flush) = {
            let mut core = lock(&self.core);
            let waiter = core.take_ended(id, reason);
            (waiter, core.has_transmit())
        };
        if flush {
            self.spawn_flush();
        }
        let Some(Waiter { to: To::Sink(sink), .. }) = waiter else { return };
        let attempt = Attempt {
            method: methods::TOOLS_CALL,
            era: self.era(),
            failure: failure_of(&error),
            already_retried: false,
            has_tool: false,
            lost_connection: self.lost_since(epoch),
            transport_resends_after_loss: self.transport.resends_after_loss(),
        };
        // The general path would send again only over a transport that
        // resends after a loss or on an expired session (neither of which
        // `forwards_plainly` takes); anything else is given up as it came.
        let error = match recovery::decide(&attempt) {
            Action::GiveUp(GiveUp::ConnectionLost) => self
                .transport
                .client_error(ClientError::ConnectionLost { method: methods::TOOLS_CALL.into() }),
            _ => self.give_up(Fail::Transport(error)),
        };
        self.forwarded_end(sink, Err(error));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use mcp_proto::client::RequestOptions;
    use serde_json::{Value, json};
    use tokio::sync::mpsc;

    use crate::memory::{self, MemoryServer};
    use crate::{Client, ClientOptions, EraChoice};

    /// The next message the client sent.
    async fn next(end: &mut MemoryServer) -> Value {
        serde_json::from_slice(&end.recv().await.unwrap()).unwrap()
    }

    /// However a forwarded call ends (its answer, an error answer, its
    /// cancellation, its deadline), its entry is no longer counted once
    /// its sink was called (or, cancelled, dropped).
    #[tokio::test(start_paused = true)]
    async fn every_end_uncounts_its_entry() {
        let (transport, mut end) = memory::pair();
        let mut options = ClientOptions::new("t");
        options.era = EraChoice::Legacy;
        let client = Client::new(transport, options);
        let opening = tokio::spawn({
            let client = client.clone();
            async move { client.initialize().await.map(|_| ()) }
        });
        let initialize = next(&mut end).await;
        let result = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"}});
        end.send(
            json!({"jsonrpc": "2.0", "id": initialize["id"], "result": result})
                .to_string()
                .as_bytes(),
        );
        opening.await.unwrap().unwrap();
        let _initialized = next(&mut end).await;

        let (tx, mut heard) = mpsc::unbounded_channel();
        let count = || client.inner.forwards.load(Ordering::Relaxed);
        let o = RequestOptions::with_timeout(Duration::from_secs(5));
        let start = |o: &RequestOptions| {
            let tx = tx.clone();
            client
                .forward_tool_call("t", None, o, move |outcome| {
                    let _ = tx.send(outcome.map(|r| r.get().to_owned()).map_err(|e| e.to_string()));
                })
                .unwrap()
        };
        let answers = [
            json!({"result": {"content": []}}),
            json!({"error": {"code": -32602, "message": "no such tool"}}),
        ];
        for answer in answers {
            start(&o);
            assert_eq!(count(), 1);
            let call = next(&mut end).await;
            let mut reply = answer.clone();
            reply["jsonrpc"] = json!("2.0");
            reply["id"] = call["id"].clone();
            end.send(reply.to_string().as_bytes());
            heard.recv().await.unwrap().ok();
            assert_eq!(count(), 0, "{answer}");
        }
        let id = start(&o);
        client.cancel_forwarded(&id);
        assert_eq!(count(), 0);
        // Its sink was dropped, not called.
        assert!(heard.try_recv().is_err());
        start(&o);
        assert!(heard.recv().await.unwrap().is_err_and(|e| e.contains("timed out")));
        assert_eq!(count(), 0);
    }
}
