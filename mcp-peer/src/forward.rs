//! Forwarded calls: a `tools/call` sent for someone else (a bridge passing
//! on its host's call) with no caller waiting on it. The request takes the
//! one start in the core (its id, its deadline, its `_meta`), and its
//! outcome, whichever way it ends (the answer, the deadline, a lost
//! connection, the client closing), is handed to a sink, once, on the task
//! that ended it. Cancelled ([`Client::cancel_forwarded`]), the sink gets
//! [`ClientError::Cancelled`] and the server `notifications/cancelled`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};

use mcp_proto::client::{ClientError, RequestOptions};
use mcp_proto::jsonrpc::RequestId;
use mcp_proto::{ProtocolVersion, methods};
use serde_json::value::RawValue;

use crate::api::{Arguments, CallParams};
use crate::client::Client;
use crate::inner::Waiter;
use crate::sync::{lock, now};
use crate::transport::{OutgoingRequest, Transport};

/// A forwarded request's sink, as the core's entry holds it.
pub(crate) type RawSink = Box<dyn FnOnce(Result<Box<RawValue>, ClientError>) + Send>;

impl<T: Transport> Client<T> {
    /// Whether [`forward_tool_call`](Self::forward_tool_call) takes a call
    /// now: a connection open in the handshake era (whose rules deliver
    /// every result as it came), no middleware, a transport that needs
    /// neither the parameters as a value nor the tool's definition. Else
    /// the call takes [`call_tool_json`](Self::call_tool_json).
    pub fn forwards_plainly(&self) -> bool {
        let inner = &self.inner;
        inner.options.middleware.is_empty()
            && !inner.transport.wants_params()
            && !inner.transport.wants_tool()
            && lock(&inner.core).protocol_version().is_some_and(|v| !ProtocolVersion::is_modern(v))
    }

    /// Sends `tools/call` as [`call_tool_json`](Self::call_tool_json)
    /// would (the same parameters' text, `_meta`, deadline and timeout
    /// rules), with no caller waiting: its outcome goes to `sink`, called
    /// once, on the task that ends the request (the reader, for an answer).
    /// A result is JSON text, an object (else `InvalidResult`, as
    /// `call_tool_json` says). Check [`forwards_plainly`](Self::forwards_plainly) first.
    /// Gives the request's id, for [`cancel_forwarded`](Self::cancel_forwarded).
    pub fn forward_tool_call(
        &self,
        name: &str,
        arguments: Option<&RawValue>,
        options: &RequestOptions,
        sink: impl FnOnce(Result<Box<RawValue>, T::Error>) + Send + 'static,
    ) -> Result<RequestId, T::Error> {
        let inner = &self.inner;
        inner.check_open()?;
        inner.forwards.store(1, std::sync::atomic::Ordering::Relaxed);
        let me = Arc::downgrade(inner);
        let wrapped: RawSink = Box::new(move |outcome| {
            let Some(inner) = me.upgrade() else { return };
            let outcome = outcome.and_then(|raw| match raw.get().trim_start().as_bytes().first() {
                Some(b'{') => Ok(raw),
                _ => Err(ClientError::InvalidResult {
                    method: methods::TOOLS_CALL.into(),
                    reason: "the result is not a JSON object".into(),
                }),
            });
            sink(outcome.map_err(|e| inner.transport.client_error(e)));
        });
        let arguments = match arguments {
            Some(raw) if !raw.get().starts_with('n') => Arguments::Typed(raw),
            _ => Arguments::None,
        };
        let params: CallParams<'_, RawValue> = CallParams { name, arguments, task: None };
        let (id, body, deadline, awaited) = {
            let mut core = lock(&inner.core);
            let started = core.start_request_encoded(
                methods::TOOLS_CALL,
                &params,
                options,
                Waiter::sink(wrapped),
                now(),
            );
            let (id, body) = started.map_err(|e| inner.transport.client_error(e))?;
            let deadline = core.deadline(&id);
            (id, body, deadline, core.pending_requests())
        };
        if let Some(deadline) = deadline {
            inner.arm_deadline(deadline);
        }
        let me = inner.clone();
        let sent = id.clone();
        let headers = options.headers.clone();
        let mut write: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
            let outgoing = OutgoingRequest {
                id: &sent,
                method: methods::TOOLS_CALL,
                body,
                params: None,
                tool: None,
                protocol_version: None,
                headers: &headers,
                awaited,
            };
            if let Err(e) = me.transport.send_request(outgoing).await {
                tracing::debug!(server = %me.options.name, error = %e, "forwarding a call to the server failed");
                me.forget(&sent, "the transport failed to carry the request");
            }
        });
        // The line usually goes at once: written here, with no task.
        let mut cx = Context::from_waker(Waker::noop());
        if write.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(write);
        }
        Ok(id)
    }

    /// Stops a forwarded call: the server gets `notifications/cancelled`,
    /// the sink [`ClientError::Cancelled`] (unless the call already ended).
    pub fn cancel_forwarded(&self, id: &RequestId) {
        self.inner.forget(id, "the host cancelled the request");
    }
}
