//! The standalone GET stream: the server's channel for messages that
//! belong to no request, opened once after the handshake, read and
//! reopened by a task of its own, its fate published as
//! [`EventStreamState`].

use std::sync::{Arc, Weak};

use hyper::body::Incoming;
use mcp_proto::ProtocolVersion;
use mcp_proto::backoff::Retries;
use mcp_sse::Decoder;

use crate::error::Error;
use crate::request::{GetError, Pumped, lock, pump};

use super::session::{EventStreamState, Streamable};

impl Streamable {
    /// Opens the standalone GET stream unless it is open (or the server
    /// has none, or the era has none).
    pub(crate) async fn open_event_stream(self: &Arc<Self>) -> Result<bool, Error> {
        let _opening = self.opening.lock().await;
        if self.http.is_closed() {
            return Err(self.closed());
        }
        if self.http.link().protocol_version().is_some_and(ProtocolVersion::is_modern) {
            // The stateless era has no standalone stream
            // (`subscriptions/listen` replaces it).
            return Ok(false);
        }
        if lock(&self.listener).as_ref().is_some_and(|t| !t.is_finished()) {
            return Ok(true);
        }
        if lock(&self.state).no_event_stream {
            return Ok(false);
        }
        let snap = self.snapshot();
        match self.http.open_get("GET", None, &snap).await {
            Ok(body) => {
                // Boxed before it is spawned (as a connection's task is):
                // otherwise the reader (≈ 0.5 KB) is moved through each
                // layer of `spawn` into the task's cell, in the handshake.
                let reader = Box::pin(listen(Arc::downgrade(self), body, snap.epoch));
                let mut listener = lock(&self.listener);
                // Closed while the GET was out: `close` took the listener
                // slot already (it marks the transport closed first).
                if self.http.is_closed() {
                    return Err(self.closed());
                }
                let task = tokio::spawn(reader);
                if let Some(old) = listener.replace(task.abort_handle()) {
                    old.abort();
                }
                drop(listener);
                self.set_event_stream(EventStreamState::Open);
                Ok(true)
            }
            Err(GetError::NotAllowed) => {
                let mut state = lock(&self.state);
                if state.epoch == snap.epoch {
                    state.no_event_stream = true;
                    self.set_event_stream(EventStreamState::NotOffered);
                }
                Ok(false)
            }
            Err(GetError::Fatal(e) | GetError::Retry(e)) => Err(e),
        }
    }

    /// Opens the standalone GET stream in a task of its own (after the
    /// handshake), which [`stop`](Streamable::stop) gives up when the
    /// client is closed first; what became of it is published as
    /// [`EventStreamState`] and logged. The handle says when the opening
    /// is over.
    pub(crate) fn open_in_background(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let shared = self.clone();
        // Boxed before it is spawned, as the reader is.
        let task = tokio::spawn(Box::pin(async move {
            let endpoint = &shared.http.endpoint.redacted;
            match shared.open_event_stream().await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::debug!(endpoint = %endpoint, "the server offers no standalone event stream (405)")
                }
                Err(Error::Closed { .. }) => {}
                Err(e) => {
                    tracing::debug!(endpoint = %endpoint, error = %e, "the standalone event stream could not be opened");
                    shared.opening_failed(format!("it could not be opened: {e}"));
                }
            }
            // Done: the slot no longer keeps this task's cell (unless a
            // later opening took the slot meanwhile).
            let mut opener = lock(&shared.opener);
            if opener.as_ref().is_some_and(|task| task.id() == tokio::task::id()) {
                *opener = None;
            }
        }));
        if let Some(old) = lock(&self.opener).replace(task.abort_handle()) {
            old.abort();
        }
        task
    }

    /// The error of a stream asked for after the client was closed.
    fn closed(&self) -> Error {
        Error::Closed { endpoint: self.http.endpoint.redacted.clone() }
    }

    /// A decoder for a new standalone stream.
    fn decoder(&self) -> Decoder {
        Decoder::with_max_event_size(self.http.options.max_event_size)
    }
}

/// Reads the standalone GET stream, and reopens it when it ends; says in
/// [`EventStreamState`] when it gives up.
///
/// The task lives as long as the session, mostly idle: what it keeps
/// while it pumps is kept small (the reconnection accounting is made, and
/// boxed, when the stream first ends).
async fn listen(weak: Weak<Streamable>, body: Incoming, mut epoch: u64) {
    let (http, mut decoder) = match weak.upgrade() {
        Some(shared) => (Arc::downgrade(&shared.http), shared.decoder()),
        None => return,
    };
    let mut retries: Option<Box<Retries>> = None;
    let mut body = body;
    loop {
        // Only a message counts: a server that sends a fresh event id (or
        // a priming event) on every connection and nothing else must not
        // keep the reconnect loop going for ever (the failures in a row are
        // capped by `max_reconnects`, with a growing delay).
        let messages = match pump(&http, &mut decoder, &mut body, |_| false).await {
            Pumped::Ended { messages, .. } => messages,
            Pumped::Done | Pumped::Gone => return,
        };
        if messages && let Some(retries) = &mut retries {
            retries.succeeded();
        }
        let Some(shared) = weak.upgrade() else { return };
        let retries = retries.get_or_insert_with(|| Box::new(shared.reconnects()));
        let snap = shared.snapshot();
        if snap.epoch != epoch {
            // A new session: the old stream's event ids mean nothing.
            decoder = shared.decoder();
            epoch = snap.epoch;
        }
        let last = decoder.last_event_id().to_owned();
        let last = (!last.is_empty()).then_some(last.as_str());
        let retry = decoder.retry();
        // Boxed: the reopening (a whole request, OAuth rounds and redirects
        // included) is a large future; a reader spends its life pumping, so
        // it holds the space only while it reopens.
        let reopen = Box::pin(shared.reopen("GET", last, retry, &snap, retries));
        let reason = match reopen.await {
            Ok(next) => {
                body = next;
                continue;
            }
            Err(GetError::NotAllowed) => {
                shared.set_event_stream(EventStreamState::NotOffered);
                return;
            }
            Err(GetError::Retry(e)) => {
                tracing::debug!(endpoint = %shared.http.endpoint.redacted, error = %e, attempts = retries.attempts(), "the standalone event stream ended and could not be reopened");
                format!(
                    "it ended {} times in a row without a message and was given up \
                     (HttpOptions::max_reconnects); last: {e}",
                    retries.failures()
                )
            }
            Err(GetError::Fatal(e)) => {
                tracing::warn!(endpoint = %shared.http.endpoint.redacted, error = %e, "the standalone event stream stopped");
                e.to_string()
            }
        };
        shared.set_event_stream(EventStreamState::Ended { reason });
        return;
    }
}
