//! The one path every request takes: started in the core (the typed fast
//! path writes typed parameters straight into the message), encoded,
//! handed to the transport, waited for under its deadline, cancelled when
//! the caller stops waiting. The probe, `initialize`, calls, listens and
//! task polls all go through [`Inner::send`]; notifications through
//! [`Inner::notify`].
//!
//! It decides nothing of the protocol: the core and
//! [`mcp_proto::client::decide`] do; the modules above act on what the
//! decisions say.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::decide::{Failure, TransportFacts, rules};
use mcp_proto::client::{ClientCore, ClientError, RequestOptions};
use mcp_proto::jsonrpc::{Notification, Request, RequestId};
use mcp_proto::types::Tool;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::inner::{Inner, Outcome, Reply, ToolResultOut, Waiter, drain_events};
use crate::sync::{lock, now};
use crate::transport::{OutgoingRequest, Transport, TransportError};

/// How one attempt at a request failed.
pub(crate) enum Fail<E> {
    /// The transport failed to carry it.
    Transport(E),
    /// The protocol says no (or the connection closed under it).
    Client(ClientError),
}

impl<E: TransportError> Fail<E> {
    /// The failure as the decisions read it.
    pub(crate) fn failure(&self) -> Failure<'_> {
        match self {
            Fail::Client(e) => Failure::core(e),
            Fail::Transport(e) => failure_of(e),
        }
    }

    /// The error the caller gets when the request is given up as it came.
    pub(crate) fn into_error<T: Transport<Error = E>>(self, transport: &T) -> E {
        match self {
            Fail::Client(e) => transport.client_error(e),
            Fail::Transport(e) => e,
        }
    }
}

/// A transport's error as the decisions read it.
pub(crate) fn failure_of<E: TransportError>(e: &E) -> Failure<'_> {
    let facts = TransportFacts {
        refusal: e.is_refusal(),
        stream_lost: e.is_stream_lost(),
        session_expired: e.is_session_expired(),
    };
    Failure::transport(e.protocol_error(), facts)
}

/// A request's parameters: a value, or any serialisable type encoded
/// straight into the message when the transport does not need a value.
pub(crate) enum Params<'a, P: ?Sized> {
    Value(Option<Value>),
    Typed(&'a P),
}

impl<P: Serialize + ?Sized> Params<'_, P> {
    /// The parameters as a value (to add members to).
    pub(crate) fn into_value(self, method: &str) -> Result<Option<Value>, ClientError> {
        match self {
            Params::Value(v) => Ok(v),
            Params::Typed(p) => serde_json::to_value(p).map(Some).map_err(|e| {
                ClientError::InvalidParams { method: method.into(), reason: e.to_string() }
            }),
        }
    }
}

/// What to start in the core.
pub(crate) enum Start<'a, P: ?Sized> {
    /// The era probe, `server/discover` asking for `version`.
    Probe { version: ProtocolVersion, timeout: Duration },
    /// The `initialize` handshake.
    Initialize,
    /// Any other request; `tool_result`: its result is taken as a
    /// decoded `tools/call` result when it comes as the usual answer and
    /// the era's rules deliver it as it came ([`Waiter::tool_result`]).
    Request {
        method: &'a str,
        params: Params<'a, P>,
        options: &'a RequestOptions,
        tool_result: bool,
    },
}

/// What the transport gets beside a request started by value.
struct Wire<'a> {
    /// Whether the transport reads the parameters.
    wants: bool,
    /// The called tool's definition.
    tool: Option<&'a Tool>,
    /// The version the request's `_meta` names (stateless era).
    version: Option<ProtocolVersion>,
    /// Extra HTTP headers.
    headers: &'a [(String, String)],
    /// The probe or `initialize`: waited for under a timer of its own.
    opening: bool,
    /// Requests awaiting answers as this one was made, itself included.
    awaited: usize,
}

/// One attempt's outcome, and the parameters back for another.
pub(crate) type Sent<'a, P, E> = (Result<Reply, Fail<E>>, Params<'a, P>);

impl<T: Transport> Inner<T> {
    /// Sends a notification: queued in the core (after what is queued
    /// already, so messages leave in the order they were made) and
    /// flushed.
    pub(crate) async fn notify(&self, notification: Notification) -> Result<(), T::Error> {
        let queued = lock(&self.core).queue_notification(notification);
        queued.map_err(|e| self.transport.client_error(e))?;
        self.transport.flush().await
    }

    /// The one send path of every request: starts it in the core (the
    /// typed fast path writes typed parameters straight into the message
    /// when the transport needs no value), encodes it, calls
    /// `before_sending` with its id, hands it to the transport and waits
    /// for its answer under its deadline (cancelling it if the caller stops
    /// waiting). Gives the parameters back for another attempt.
    pub(crate) async fn send<'p, P: Serialize + ?Sized>(
        &self,
        start: Start<'p, P>,
        tool: Option<&Tool>,
        before_sending: impl FnOnce(&RequestId),
    ) -> Sent<'p, P, T::Error> {
        let (tx, rx) = oneshot::channel();
        let wants = self.transport.wants_params();
        let (method, options, params, waiter) = match start {
            Start::Probe { version, timeout } => {
                // Its answer's discovery is decoded straight from the
                // message when it is the usual answer (`feed_usual_answer`).
                let _counted = ToolResultOut::new(&self.tool_results, true);
                // Encoded from the era's `_meta` text, which entering the
                // era then keeps (made once).
                let outcome = self
                    .opening(
                        (Waiter::new(tx, false), rx),
                        mcp_proto::methods::SERVER_DISCOVER,
                        Some(version),
                        |core, tx| core.start_probe(version, timeout, tx, now()),
                        |core, tx| core.start_probe_encoded(version, timeout, tx, now()),
                        before_sending,
                    )
                    .await;
                return (outcome, Params::Value(None));
            }
            Start::Initialize => {
                // Its answer's result is decoded straight from the message
                // when it is the usual answer (`feed_usual_answer`).
                let _counted = ToolResultOut::new(&self.tool_results, true);
                let outcome = self
                    .opening(
                        (Waiter::new(tx, false), rx),
                        mcp_proto::methods::INITIALIZE,
                        None,
                        |core, tx| core.initialize(tx, now()),
                        |core, tx| core.initialize_encoded(tx, now()),
                        before_sending,
                    )
                    .await;
                return (outcome, Params::Value(None));
            }
            Start::Request { method, params, options, tool_result } => {
                (method, options, params, Waiter::new(tx, tool_result))
            }
        };
        let mut waiter = waiter;
        if !wants && let Params::Typed(p) = &params {
            let started = {
                let mut core = lock(&self.core);
                let version = wire_version(&core);
                waiter.tool_result &= core.protocol_version().is_some();
                let counted = waiter.tool_result;
                core.start_request_encoded(method, p, options, waiter, now())
                    .map(|s| (s, version, counted, core.pending_requests()))
            };
            let ((id, body), version, counted, awaited) = match started {
                Ok(s) => s,
                Err(e) => return (Err(Fail::Client(e)), params),
            };
            // Counted before the request leaves: its answer is looked for.
            let _counted = ToolResultOut::new(&self.tool_results, counted);
            before_sending(&id);
            let outgoing = OutgoingRequest {
                id: &id,
                method,
                body,
                params: None,
                tool,
                protocol_version: version,
                headers: &options.headers,
                awaited,
            };
            return (self.exchange(&id, rx, outgoing, false).await, params);
        }
        let value = match params {
            Params::Value(v) => v,
            Params::Typed(p) => match serde_json::to_value(p) {
                Ok(v) => Some(v),
                Err(e) => {
                    let e =
                        ClientError::InvalidParams { method: method.into(), reason: e.to_string() };
                    return (Err(Fail::Client(e)), params);
                }
            },
        };
        let started = {
            let mut core = lock(&self.core);
            let version = wire_version(&core);
            waiter.tool_result &= core.protocol_version().is_some();
            let counted = waiter.tool_result;
            core.start_request(method, value, options, waiter, now())
                .map(|r| (r, version, counted, core.pending_requests()))
        };
        let (request, version, counted, awaited) = match started {
            Ok(s) => s,
            Err(e) => return (Err(Fail::Client(e)), Params::Value(None)),
        };
        let _counted = ToolResultOut::new(&self.tool_results, counted);
        let wire =
            Wire { wants, tool, version, headers: &options.headers, opening: false, awaited };
        let (outcome, request) = self.exchange_request(request, rx, wire, before_sending).await;
        (outcome, Params::Value(request.params))
    }

    /// Starts the probe or the handshake on a fresh core (a connection
    /// that was lost starts again from one).
    fn start_opening<R>(
        &self,
        start: impl FnOnce(&mut ClientCore<Waiter>) -> Result<R, ClientError>,
    ) -> Result<R, Fail<T::Error>> {
        let (request, events) = {
            let mut core = lock(&self.core);
            if !core.is_fresh() {
                core.reset();
            }
            let request = start(&mut core);
            (request, drain_events(&mut core))
        };
        self.deliver(events);
        request.map_err(Fail::Client)
    }

    /// Starts the probe or `initialize` on a fresh core, by value when
    /// the transport wants the parameters as a value, else encoded, and
    /// exchanges it under its own timer.
    async fn opening(
        &self,
        (tx, rx): (Waiter, oneshot::Receiver<Outcome>),
        method: &str,
        version: Option<ProtocolVersion>,
        by_value: impl FnOnce(&mut ClientCore<Waiter>, Waiter) -> Result<Request, ClientError>,
        encoded: impl FnOnce(
            &mut ClientCore<Waiter>,
            Waiter,
        ) -> Result<(RequestId, Vec<u8>), ClientError>,
        before_sending: impl FnOnce(&RequestId),
    ) -> Result<Reply, Fail<T::Error>> {
        if self.transport.wants_params() {
            let request = self.start_opening(|core| by_value(core, tx))?;
            // A fresh core: the opening request is the only one.
            let wire =
                Wire { wants: true, tool: None, version, headers: &[], opening: true, awaited: 1 };
            return self.exchange_request(request, rx, wire, before_sending).await.0;
        }
        let (id, body) = self.start_opening(|core| encoded(core, tx))?;
        before_sending(&id);
        let outgoing = OutgoingRequest {
            id: &id,
            method,
            body,
            params: None,
            tool: None,
            protocol_version: version,
            headers: &[],
            awaited: 1,
        };
        self.exchange(&id, rx, outgoing, true).await
    }

    /// Encodes a request started by value and exchanges it; gives the
    /// request back (its parameters serve another attempt).
    async fn exchange_request(
        &self,
        request: Request,
        rx: oneshot::Receiver<Outcome>,
        wire: Wire<'_>,
        before_sending: impl FnOnce(&RequestId),
    ) -> (Result<Reply, Fail<T::Error>>, Request) {
        let Wire { wants, tool, version, headers, opening, awaited } = wire;
        let body = match serde_json::to_vec(&request) {
            Ok(b) => b,
            Err(e) => {
                self.forget(&request.id, "the request could not be encoded");
                let e = ClientError::InvalidParams {
                    method: request.method.clone(),
                    reason: e.to_string(),
                };
                return (Err(Fail::Transport(self.transport.client_error(e))), request);
            }
        };
        before_sending(&request.id);
        let outgoing = OutgoingRequest {
            id: &request.id,
            method: &request.method,
            body,
            params: if wants { request.params.as_ref() } else { None },
            tool,
            protocol_version: version,
            headers,
            awaited,
        };
        let outcome = self.exchange(&request.id, rx, outgoing, opening).await;
        (outcome, request)
    }

    /// Sends a started request and waits for its answer under its
    /// deadline; cancels it when the caller stops waiting. An `opening`
    /// request (the probe, `initialize`) keeps its deadline with a timer of
    /// its own: a client's deadline task is started by its first request
    /// after the opening, so a session left idle after it has none.
    async fn exchange(
        &self,
        id: &RequestId,
        rx: oneshot::Receiver<Outcome>,
        outgoing: OutgoingRequest<'_>,
        opening: bool,
    ) -> Result<Reply, Fail<T::Error>> {
        let mut guard = CancelOnDrop { inner: self, id: Some(id.clone()) };
        let deadline = lock(&self.core).deadline(id);
        // Pinned here, once: the waits below hold it by reference, so the
        // exchange's (large) future is not moved into either.
        let exchange = self.transport.send_request(outgoing);
        tokio::pin!(exchange);
        let outcome = match deadline {
            Some(deadline) if opening => {
                self.wait_opening(id, deadline, self.wait(rx, exchange)).await
            }
            _ => {
                if let Some(deadline) = deadline {
                    self.arm_deadline(deadline);
                }
                self.wait(rx, exchange).await
            }
        };
        guard.id = None;
        if let Err(Fail::Transport(_)) = &outcome {
            if self.rules().is_none_or(|rules| rules.notifies_cancel_after_broken_exchange()) {
                self.forget(id, "the transport failed to carry the request");
            } else {
                self.abandon(id);
            }
        }
        outcome
    }

    /// Waits for a request's outcome while its exchange runs; the client's
    /// deadline task (`timer.rs`) fails it when its deadline passes.
    async fn wait(
        &self,
        mut rx: oneshot::Receiver<Outcome>,
        mut exchange: Pin<&mut impl Future<Output = Result<(), T::Error>>>,
    ) -> Result<Reply, Fail<T::Error>> {
        let closed = || ClientError::Closed { method: String::new() };
        tokio::select! {
            biased;
            outcome = &mut rx => {
                return outcome.unwrap_or_else(|_| Err(closed())).map_err(Fail::Client);
            }
            result = &mut exchange => {
                if let Err(e) = result {
                    return Err(Fail::Transport(e));
                }
            }
        }
        rx.await.unwrap_or_else(|_| Err(closed())).map_err(Fail::Client)
    }
}

/// The version a request names outside its body, by the era's rules.
pub(crate) fn wire_version(core: &ClientCore<Waiter>) -> Option<ProtocolVersion> {
    core.protocol_version().and_then(|v| rules(v.era()).wire_version(v))
}

/// The reason `notifications/cancelled` gives for a request whose caller
/// stopped waiting (a forwarded one's too: its host's cancellation).
pub(crate) const STOPPED_WAITING: &str = "the client stopped waiting";

/// Cancels a request whose caller stopped waiting (its future was dropped).
/// It lives inside [`Inner::exchange`]'s future, which borrows the client
/// as long as it lives: a reference, not a counted one.
struct CancelOnDrop<'a, T: Transport> {
    inner: &'a Inner<T>,
    id: Option<RequestId>,
}

impl<T: Transport> Drop for CancelOnDrop<'_, T> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.inner.forget(&id, STOPPED_WAITING);
        }
    }
}
