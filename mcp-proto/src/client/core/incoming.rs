//! What the server sends: answers matched to their requests, server
//! requests routed to the host (or answered by the core), notifications
//! and progress.

use std::cmp::Reverse;
use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{ClientCore, Event, ListKind, Phase, ServerRequest};
use crate::client::ClientError;
use crate::jsonrpc::{
    ErrorObject, ErrorResponse, IncomingOf, Message, MessageOf, Notification, Request, RequestId,
    Response, ResultBody,
};
use crate::methods;
use crate::types::{
    CancelledNotificationParams, LoggingLevel, LoggingMessageNotificationParams,
    ProgressNotificationParams, ProgressToken, SUBSCRIPTION_ID_META_KEY,
};

impl<W> ClientCore<W> {
    /// Feeds what one incoming JSON text held (a message or a batch).
    ///
    /// Results may come as [`Value`]s or as JSON text (`Box<RawValue>`, from
    /// [`decode_slice_as`](crate::jsonrpc::decode_slice_as)); drivers use
    /// the latter, which spares building a `Value` of each result.
    pub fn handle_incoming<R: ResultBody>(&mut self, incoming: IncomingOf<R>, now: Instant) {
        match incoming {
            IncomingOf::Single(m) => self.handle_message_as(m, now),
            IncomingOf::Batch(items) => {
                for item in items {
                    match item {
                        Ok(m) => self.handle_message_as(m, now),
                        Err(e) => {
                            tracing::warn!(error = %e, "skipping an invalid message in a batch")
                        }
                    }
                }
            }
        }
    }

    /// Feeds one incoming message.
    pub fn handle_message(&mut self, message: Message, now: Instant) {
        self.handle_message_as(message, now);
    }

    fn handle_message_as<R: ResultBody>(&mut self, message: MessageOf<R>, now: Instant) {
        match message {
            MessageOf::Response(r) => self.handle_outcome(r.id, Ok(r.result.into_raw())),
            MessageOf::Error(e) => match e.id {
                Some(id) => self.handle_outcome(id, Err(e.error)),
                None => tracing::warn!(
                    code = e.error.code,
                    message = %e.error.message,
                    "the server sent an error that answers no request"
                ),
            },
            MessageOf::Request(r) => self.handle_server_request(r),
            MessageOf::Notification(n) => self.handle_notification(n, now),
        }
    }

    /// The waiter of request `id` while it waits for a result the driver
    /// may read itself (see [`take_answered`](Self::take_answered)); `None`
    /// when no such request waits, and for the era probe and `initialize`,
    /// whose results the core reads.
    pub fn waiter(&self, id: i64) -> Option<&W> {
        if self.reads_result(id) {
            return None;
        }
        self.pending.get(&id).map(|p| &p.waiter)
    }

    /// Whether request `id` is one whose result the core reads itself (the
    /// era probe, `initialize`).
    fn reads_result(&self, id: i64) -> bool {
        matches!(self.phase, Phase::Probing(n) | Phase::Initializing(n) if n == id)
    }

    /// Finishes request `id`, answered with a result the driver read
    /// itself from the message (the usual answer,
    /// [`jsonrpc::usual_answer`](crate::jsonrpc::usual_answer), its result
    /// decoded straight into the type the caller waits for): the request
    /// is done as [`handle_incoming`](Self::handle_incoming) finishes one
    /// on a result, and its waiter is given back instead of coming in an
    /// [`Event::Reply`]. `None`, with nothing changed, where
    /// [`waiter`](Self::waiter) says `None`.
    pub fn take_answered(&mut self, id: i64) -> Option<W> {
        // The same look-up as `take_answered_if`'s (an entry, removed where
        // found): with `HashMap::remove` beside it, the compiler kept that
        // removal's search out of line (about 100 instructions an answer).
        self.take_answered_if(id, |_| true)
    }

    /// [`take_answered`](Self::take_answered) when `wanted` says so of the
    /// request's waiter (one look-up): `None`, with nothing changed,
    /// otherwise.
    #[inline]
    pub fn take_answered_if(&mut self, id: i64, wanted: impl FnOnce(&W) -> bool) -> Option<W> {
        if self.reads_result(id) {
            return None;
        }
        match self.pending.entry(id) {
            std::collections::hash_map::Entry::Occupied(e) if wanted(&e.get().waiter) => {
                Some(e.remove().waiter)
            }
            _ => None,
        }
    }

    fn handle_outcome(&mut self, id: RequestId, outcome: Result<Box<RawValue>, ErrorObject>) {
        let found = match &id {
            RequestId::Number(n) => self.pending.remove(n).map(|p| (*n, p)),
            RequestId::String(_) => None,
        };
        let Some((n, p)) = found else {
            tracing::debug!(%id, "dropping an answer for an unknown or finished request");
            return;
        };
        let outcome = match outcome {
            Err(error) => Err(ClientError::from_rpc(&p.method, error)),
            Ok(value) => Ok(value),
        };
        if self.phase == Phase::Probing(n) {
            self.phase = Phase::Fresh;
        }
        let outcome = if self.phase == Phase::Initializing(n) {
            self.finish_handshake(outcome)
        } else {
            outcome
        };
        self.events.push_back(Event::Reply { id, waiter: p.waiter, outcome });
    }

    fn handle_server_request(&mut self, r: Request) {
        let caps = &self.config.capabilities;
        let declared = match r.method.as_str() {
            methods::PING => {
                self.transmit
                    .push_back(Message::Response(Response::new(r.id, Value::Object(Map::new()))));
                return;
            }
            methods::ROOTS_LIST => caps.roots.is_some(),
            methods::SAMPLING_CREATE_MESSAGE => caps.sampling.is_some(),
            methods::ELICITATION_CREATE => caps.elicitation.is_some(),
            _ => false,
        };
        if !declared {
            tracing::debug!(method = %r.method, "answering a server request with method-not-found");
            self.transmit.push_back(Message::Error(ErrorResponse::new(
                Some(r.id),
                ErrorObject::method_not_found(&r.method),
            )));
            return;
        }
        self.inbound.insert(r.id.clone(), r.method.as_str().into());
        self.events.push_back(Event::ServerRequest(ServerRequest {
            id: r.id,
            method: r.method,
            params: r.params,
        }));
    }

    /// Answers a server request delivered as [`Event::ServerRequest`]. Ignored
    /// when the server cancelled it meanwhile (no answer may be sent then).
    pub fn respond(&mut self, id: RequestId, outcome: Result<Value, ErrorObject>) {
        if self.inbound.remove(&id).is_none() {
            tracing::debug!(%id, "not answering a server request that was cancelled or is unknown");
            return;
        }
        self.transmit.push_back(match outcome {
            Ok(result) => Message::Response(Response::new(id, result)),
            Err(error) => Message::Error(ErrorResponse::new(Some(id), error)),
        });
    }

    fn handle_notification(&mut self, n: Notification, now: Instant) {
        if let Some(id) = subscription_id(&n) {
            self.events.push_back(Event::Subscription { id, notification: n.clone() });
        }
        match n.method.as_str() {
            methods::NOTIFICATION_PROGRESS => self.handle_progress(n, now),
            methods::NOTIFICATION_TOOLS_LIST_CHANGED => {
                self.tools = None;
                self.tools_generation += 1;
                self.events.push_back(Event::ListChanged(ListKind::Tools));
            }
            methods::NOTIFICATION_PROMPTS_LIST_CHANGED => {
                self.events.push_back(Event::ListChanged(ListKind::Prompts))
            }
            methods::NOTIFICATION_RESOURCES_LIST_CHANGED => {
                self.events.push_back(Event::ListChanged(ListKind::Resources))
            }
            methods::NOTIFICATION_MESSAGE => {
                match n.params.map(serde_json::from_value::<LoggingMessageNotificationParams>) {
                    Some(Ok(p)) => {
                        log_server_message(&p);
                        self.events.push_back(Event::Log(p));
                    }
                    _ => tracing::debug!("ignoring a notifications/message without valid params"),
                }
            }
            methods::NOTIFICATION_CANCELLED => {
                match n.params.map(serde_json::from_value::<CancelledNotificationParams>) {
                    Some(Ok(p)) => {
                        let Some(id) = p.request_id else { return };
                        if self.inbound.remove(&id).is_some() {
                            self.events
                                .push_back(Event::ServerRequestCancelled { id, reason: p.reason });
                        } else if let RequestId::Number(n) = &id
                            && self
                                .pending
                                .get(n)
                                .is_some_and(|p| &*p.method == methods::SUBSCRIPTIONS_LISTEN)
                            && let Some(p) = self.pending.remove(n)
                        {
                            // stdio, 2026-07-28: the server ends one of the
                            // client's subscriptions.
                            self.events.push_back(Event::Reply {
                                id,
                                waiter: p.waiter,
                                outcome: Err(ClientError::Cancelled { method: p.method.into() }),
                            });
                        }
                    }
                    _ => tracing::debug!("ignoring a notifications/cancelled without valid params"),
                }
            }
            _ => self.events.push_back(Event::Notification(n)),
        }
    }

    fn handle_progress(&mut self, n: Notification, now: Instant) {
        let Some(Ok(params)) = n.params.map(serde_json::from_value::<ProgressNotificationParams>)
        else {
            tracing::debug!("ignoring a progress notification without valid params");
            return;
        };
        let id = match &params.progress_token {
            ProgressToken::Number(id) => *id,
            ProgressToken::String(_) => {
                tracing::debug!(token = %params.progress_token, "progress for a token this client did not issue");
                return;
            }
        };
        let Some(p) = self.pending.get_mut(&id) else {
            tracing::debug!(id, "progress for a request that is not pending");
            return;
        };
        if p.reset_on_progress {
            let mut deadline = now + p.timeout;
            if let Some(hard) = p.hard_deadline {
                deadline = deadline.min(hard);
            }
            if deadline > p.deadline {
                p.deadline = deadline;
                self.timers.push(Reverse((deadline, id)));
            }
        }
        let callback = p.on_progress.clone();
        self.events.push_back(Event::Progress { id: RequestId::Number(id), callback, params });
    }
}

/// The `subscriptions/listen` stream a notification belongs to: its
/// `_meta` `io.modelcontextprotocol/subscriptionId`.
fn subscription_id(n: &Notification) -> Option<RequestId> {
    let id = n.params.as_ref()?.get("_meta")?.get(SUBSCRIPTION_ID_META_KEY)?;
    serde_json::from_value(id.clone()).ok()
}

fn log_server_message(p: &LoggingMessageNotificationParams) {
    let logger = p.logger.as_deref().unwrap_or("");
    let data = &p.data;
    match p.level {
        LoggingLevel::Debug => tracing::debug!(target: "mcp::server", logger, %data),
        LoggingLevel::Info | LoggingLevel::Notice => {
            tracing::info!(target: "mcp::server", logger, %data)
        }
        LoggingLevel::Warning => tracing::warn!(target: "mcp::server", logger, %data),
        _ => tracing::error!(target: "mcp::server", logger, level = ?p.level, %data),
    }
}
