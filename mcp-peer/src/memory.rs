//! A transport in memory: the client's messages go to a [`MemoryServer`]
//! handle, and what that handle sends comes back to the client. For tests,
//! and for hosts that run a server in the same process.

use std::fmt;
use std::sync::{Arc, Mutex};

use mcp_proto::client::ClientError;
use mcp_proto::jsonrpc::Message;
use tokio::sync::mpsc;

use crate::sync::lock;
use crate::transport::{Link, OutgoingRequest, Transport, TransportError};

/// A client-side transport whose peer is a [`MemoryServer`] in the same
/// process. Made with [`pair`].
pub struct MemoryTransport {
    to_server: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    link: Arc<Mutex<Link>>,
}

impl fmt::Debug for MemoryTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTransport").finish_non_exhaustive()
    }
}

/// The server's end of an in-memory transport: read what the client sent
/// ([`recv`](Self::recv)), answer with [`send`](Self::send).
pub struct MemoryServer {
    from_client: mpsc::UnboundedReceiver<Vec<u8>>,
    link: Arc<Mutex<Link>>,
}

impl fmt::Debug for MemoryServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryServer").finish_non_exhaustive()
    }
}

/// A connected transport and server end.
pub fn pair() -> (MemoryTransport, MemoryServer) {
    let (tx, rx) = mpsc::unbounded_channel();
    let link = Arc::new(Mutex::new(Link::detached()));
    (
        MemoryTransport { to_server: Mutex::new(Some(tx)), link: link.clone() },
        MemoryServer { from_client: rx, link },
    )
}

/// A handle that sends to the client of a [`MemoryServer`] (cheap to
/// clone; for a server whose reading and writing run apart).
#[derive(Clone)]
pub struct MemorySender {
    link: Arc<Mutex<Link>>,
}

impl fmt::Debug for MemorySender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySender").finish_non_exhaustive()
    }
}

impl MemorySender {
    /// See [`MemoryServer::send`].
    pub fn send(&self, json: &[u8]) -> bool {
        let link = lock(&self.link).clone();
        match link.feed_slice(json) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "skipping a message that is not JSON-RPC");
                false
            }
        }
    }

    /// See [`MemoryServer::drop_connection`].
    pub fn drop_connection(&self) {
        let link = lock(&self.link).clone();
        link.connection_lost();
    }
}

impl MemoryServer {
    /// A handle that sends to the client, apart from this one.
    pub fn sender(&self) -> MemorySender {
        MemorySender { link: self.link.clone() }
    }

    /// The next message the client sent, as JSON text; `None` once the
    /// client closed or is gone.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        self.from_client.recv().await
    }

    /// Sends one message (JSON text) to the client. Returns whether it was
    /// JSON-RPC (anything else is logged and dropped, as a transport would).
    pub fn send(&self, json: &[u8]) -> bool {
        self.sender().send(json)
    }

    /// Makes the client see the connection drop (as a crashed process or an
    /// ended session would): requests waiting fail, the next one starts a
    /// new handshake.
    pub fn drop_connection(&self) {
        self.sender().drop_connection()
    }
}

/// Why the in-memory transport failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum MemoryError {
    /// The server end is gone, or the client was closed.
    Closed,
    /// A protocol failure.
    Protocol(ClientError),
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryError::Closed => f.write_str("the in-memory server is gone"),
            MemoryError::Protocol(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MemoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MemoryError::Protocol(e) => Some(e),
            MemoryError::Closed => None,
        }
    }
}

impl TransportError for MemoryError {}

impl MemoryTransport {
    fn send_bytes(&self, bytes: Vec<u8>) -> Result<(), MemoryError> {
        let guard = lock(&self.to_server);
        let tx = guard.as_ref().ok_or(MemoryError::Closed)?;
        tx.send(bytes).map_err(|_| MemoryError::Closed)
    }
}

impl Transport for MemoryTransport {
    type Error = MemoryError;

    fn attach(&self, link: Link) {
        *lock(&self.link) = link;
    }

    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), MemoryError> {
        // Whatever the core queued goes first, as on a pipe.
        self.flush().await?;
        self.send_bytes(request.body)
    }

    async fn flush(&self) -> Result<(), MemoryError> {
        let link = lock(&self.link).clone();
        while let Some(message) = link.poll_transmit() {
            self.send_bytes(Message::to_vec(&message))?;
        }
        Ok(())
    }

    async fn close(&self) -> Result<(), MemoryError> {
        lock(&self.to_server).take();
        Ok(())
    }

    fn client_error(&self, error: ClientError) -> MemoryError {
        MemoryError::Protocol(error)
    }
}
