//! Resumption: the one reconnect loop of Streamable HTTP's event streams
//! (a POST's reply stream, its resumed GETs, the standalone stream), GET
//! with `Last-Event-ID` when there is one, counted by
//! [`mcp_proto::backoff`]'s [`Retries`].

use std::time::Duration;

use hyper::body::Incoming;
use mcp_proto::backoff::Retries;

use crate::error::Error;
use crate::request::{GetError, Snapshot};
use crate::wire;

use super::session::Streamable;

impl Streamable {
    /// A stream's reconnection accounting: at most
    /// [`max_reconnects`](crate::HttpOptions::max_reconnects) reopenings
    /// in a row that bring no message, waiting
    /// [`RECONNECT_BACKOFF`](crate::wire::RECONNECT_BACKOFF) between them.
    pub(crate) fn reconnects(&self) -> Retries {
        Retries::new(wire::RECONNECT_BACKOFF, Some(self.http.options.max_reconnects))
    }

    /// The reconnect loop: GETs the stream again (with `Last-Event-ID` when
    /// given), after the server's `retry` delay (ms; at least 100) or a
    /// jittered backoff, until it opens, a failure that another try cannot
    /// mend, or the failures in a row that `retries` allows (it counts
    /// across calls; the caller tells it when a stream delivered a
    /// message). Gives up when the client is closed.
    pub(crate) async fn reopen(
        &self,
        method: &str,
        last: Option<&str>,
        retry: Option<u64>,
        snap: &Snapshot,
        retries: &mut Retries,
    ) -> Result<Incoming, GetError> {
        let http = &self.http;
        let mut last_error = None;
        loop {
            let Some(delay) = retries.next(retry.map(Duration::from_millis)) else {
                return Err(GetError::Retry(last_error.unwrap_or_else(|| {
                    http.invalid(method, "the stream kept ending without a message")
                })));
            };
            tracing::debug!(endpoint = %http.endpoint.redacted, method, ?delay, attempt = retries.attempts(), "reopening an event stream");
            tokio::time::sleep(delay).await;
            if http.is_closed() {
                return Err(GetError::Fatal(Error::Closed {
                    endpoint: http.endpoint.redacted.clone(),
                }));
            }
            match http.open_get(method, last, snap).await {
                Ok(body) => return Ok(body),
                Err(GetError::Retry(e)) => {
                    tracing::debug!(method, error = %e, "reopening an event stream failed");
                    last_error = Some(e);
                }
                Err(other) => return Err(other),
            }
        }
    }
}
