//! Newline-delimited JSON-RPC over any reader and writer: a pipe the host
//! already holds, a socket, an SSH channel. The same framing and bounds
//! as the stdio transport (one message per line, a capped line length,
//! garbage lines skipped and counted, one write per message under one
//! lock), without a process to mind.

use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_peer::{Client, ClientOptions, DropReport, Link, OutgoingRequest, Transport};
use mcp_proto::client::ClientError;
use mcp_proto::types::Implementation;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::task::AbortHandle;
use tokio_util::codec::FramedRead;

use crate::codec::LineCodec;
use crate::conn::lock;
use crate::error::Error;
use crate::lines::{Next, Reader, write_queued};
use crate::options::DEFAULT_MAX_LINE_LENGTH;

/// How long closing waits for the writer to flush and shut down.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// A client of one MCP server over a byte stream: the one
/// [`mcp_peer::Client`] over a [`StreamTransport`], made by
/// [`connect_stream`].
pub type StreamClient = Client<StreamTransport>;

/// How the client talks over one stream.
#[derive(Clone)]
pub struct StreamOptions {
    /// What every transport's client shares (the server's name,
    /// `clientInfo`, the request timeout, handlers, capabilities, ...),
    /// reached through `Deref`.
    pub client: ClientOptions,
    /// The longest line accepted from the server (16 MiB); a longer one is
    /// skipped, counted, and fails the call whose answer it held.
    pub max_line_length: usize,
}

impl StreamOptions {
    /// Defaults for a server called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let mut client = ClientOptions::new(name);
        client.client_info = Implementation::new("mcp-stdio", env!("CARGO_PKG_VERSION"));
        StreamOptions { client, max_line_length: DEFAULT_MAX_LINE_LENGTH }
    }

    /// The session's share of these options, for [`mcp_peer::Client::new`].
    pub fn client_options(&self) -> ClientOptions {
        self.client.clone()
    }
}

impl std::ops::Deref for StreamOptions {
    type Target = ClientOptions;

    fn deref(&self) -> &ClientOptions {
        &self.client
    }
}

impl std::ops::DerefMut for StreamOptions {
    fn deref_mut(&mut self) -> &mut ClientOptions {
        &mut self.client
    }
}

impl fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamOptions")
            .field("client", &self.client)
            .field("max_line_length", &self.max_line_length)
            .finish()
    }
}

/// The client over `reader` (what the server writes) and `writer` (what
/// it reads). The handshake happens on the first request, or explicitly
/// with [`initialize`](Client::initialize).
///
/// Must be called within a Tokio runtime (the reader runs as a task).
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_client_stdio::Error> {
/// use mcp_client_stdio::{StreamOptions, connect_stream};
///
/// let socket = tokio::net::UnixStream::connect("/run/tools/mcp.sock").await
///     .map_err(|source| mcp_client_stdio::Error::Io { server: "tools".into(), source })?;
/// let (read, write) = socket.into_split();
/// let client = connect_stream(read, write, StreamOptions::new("tools"));
/// for tool in client.list_tools().await?.iter() {
///     println!("{}", tool.name);
/// }
/// client.close().await?;
/// # Ok(()) }
/// ```
pub fn connect_stream<R, W>(reader: R, writer: W, options: StreamOptions) -> StreamClient
where
    R: AsyncRead + Send + 'static,
    W: AsyncWrite + Send + 'static,
{
    let session = options.client_options();
    Client::new(StreamTransport::new(reader, writer, &options), session)
}

type BoxReader = Pin<Box<dyn AsyncRead + Send>>;
type BoxWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// The transport over a reader and a writer. Its reader task starts when
/// the transport is attached to its client and ends at the end of the
/// stream, at [`close`](Transport::close) or when the transport is
/// dropped; the end of the stream fails every waiting request with
/// [`Error::StreamEnded`]. Nothing is reconnected: a host that can open the
/// stream again makes a new client.
pub struct StreamTransport {
    inner: Arc<Shared>,
}

struct Shared {
    name: String,
    max_line: usize,
    request_timeout: Duration,
    writer: tokio::sync::Mutex<Option<BoxWriter>>,
    reader: Mutex<Option<BoxReader>>,
    reader_task: Mutex<Option<AbortHandle>>,
    link: OnceLock<Link>,
    dropped_lines: AtomicU64,
    closed: AtomicBool,
    /// A write was abandoned mid-line: nothing more may be written.
    broken: AtomicBool,
}

impl fmt::Debug for StreamTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamTransport")
            .field("server", &self.inner.name)
            .field("closed", &self.inner.closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Drop for StreamTransport {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.inner.reader_task).take() {
            task.abort();
        }
    }
}

impl StreamTransport {
    /// The transport over `reader` and `writer`; give it to
    /// [`Client::new`] with `options.client_options()` (or use
    /// [`connect_stream`]).
    pub fn new<R, W>(reader: R, writer: W, options: &StreamOptions) -> StreamTransport
    where
        R: AsyncRead + Send + 'static,
        W: AsyncWrite + Send + 'static,
    {
        StreamTransport {
            inner: Arc::new(Shared {
                name: options.name.clone(),
                max_line: options.max_line_length,
                request_timeout: options.request_timeout,
                writer: tokio::sync::Mutex::new(Some(Box::pin(writer))),
                reader: Mutex::new(Some(Box::pin(reader))),
                reader_task: Mutex::new(None),
                link: OnceLock::new(),
                dropped_lines: AtomicU64::new(0),
                closed: AtomicBool::new(false),
                broken: AtomicBool::new(false),
            }),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// How many lines from the server were dropped: over-long, or not a
    /// JSON-RPC message.
    pub fn dropped_lines(&self) -> u64 {
        self.inner.dropped_lines.load(Ordering::Relaxed)
    }

    fn ended(&self, method: &str) -> Error {
        if self.inner.closed.load(Ordering::Relaxed) {
            Error::Closed { server: self.inner.name.clone() }
        } else {
            Error::StreamEnded { server: self.inner.name.clone(), method: method.into() }
        }
    }

    /// Writes what the core queued, then `line`, under the writer's lock. A
    /// write abandoned mid-line (its caller stopped waiting) leaves half a
    /// message in the stream: the writer is dropped then, and the
    /// connection counts as lost.
    async fn write(&self, line: Option<&[u8]>, method: &str) -> Result<(), Error> {
        let Some(link) = self.inner.link.get() else { return Err(self.ended(method)) };
        let mut writer = self.inner.writer.lock().await;
        if self.inner.broken.load(Ordering::Relaxed) {
            *writer = None;
        }
        let Some(stream) = writer.as_mut() else { return Err(self.ended(method)) };
        let mut unfinished = Unfinished { shared: Some(&self.inner) };
        let written = async {
            write_queued(link, stream, line).await?;
            stream.flush().await
        }
        .await;
        unfinished.shared = None;
        written.map_err(|source| {
            tracing::debug!(server = %self.inner.name, error = %source, "writing to the stream failed");
            *writer = None;
            Error::Io { server: self.inner.name.clone(), source }
        })
    }
}

/// Breaks the connection when dropped armed: a write stopped mid-line.
struct Unfinished<'a> {
    shared: Option<&'a Arc<Shared>>,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let Some(shared) = self.shared.take() else { return };
        tracing::warn!(server = %shared.name, "a write to the server was abandoned mid-line; ending the connection");
        // The abandoned write still holds the writer's lock: the next
        // write drops the writer.
        shared.broken.store(true, Ordering::Relaxed);
        if let Some(task) = lock(&shared.reader_task).take() {
            task.abort();
        }
        if let Some(link) = shared.link.get() {
            link.connection_lost();
        }
    }
}

impl Transport for StreamTransport {
    type Error = Error;

    fn attach(&self, link: Link) {
        if self.inner.link.set(link).is_err() {
            tracing::warn!(server = %self.inner.name, "the transport was attached twice; keeping the first client");
            return;
        }
        let Some(reader) = lock(&self.inner.reader).take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(server = %self.inner.name, "a stream transport was made outside a Tokio runtime: nothing will be read");
            return;
        };
        let task = runtime.spawn(read_loop(Arc::downgrade(&self.inner), reader));
        *lock(&self.inner.reader_task) = Some(task.abort_handle());
    }

    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), Error> {
        let mut line = request.body;
        line.push(b'\n');
        self.write(Some(&line), request.method).await
    }

    /// Bounded by the request timeout, as the stdio transport's.
    async fn flush(&self) -> Result<(), Error> {
        let after = self.inner.request_timeout;
        match tokio::time::timeout(after, self.write(None, "flush")).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout {
                server: self.inner.name.clone(),
                method: "flush".into(),
                after,
            }),
        }
    }

    /// Shuts the writing half down (the peer sees the end of its input),
    /// within 2 s, and stops reading.
    async fn close(&self) -> Result<(), Error> {
        self.inner.closed.store(true, Ordering::Relaxed);
        let writer = tokio::time::timeout(CLOSE_WAIT, self.inner.writer.lock()).await;
        if let Ok(mut writer) = writer
            && let Some(mut stream) = writer.take()
        {
            let _ = tokio::time::timeout(CLOSE_WAIT, stream.shutdown()).await;
        }
        if let Some(task) = lock(&self.inner.reader_task).take() {
            task.abort();
        }
        Ok(())
    }

    fn client_error(&self, e: ClientError) -> Error {
        let server = self.inner.name.clone();
        match e {
            ClientError::Rpc { method, error } => Error::Rpc { server, method, error },
            ClientError::Timeout { method, after } => Error::Timeout { server, method, after },
            ClientError::Closed { method } | ClientError::ConnectionLost { method } => {
                self.ended(&method)
            }
            other => Error::Protocol { server, source: other },
        }
    }
}

/// Reads lines until the stream ends, handing every message to the client;
/// then fails what still waits.
async fn read_loop(shared: Weak<Shared>, reader: BoxReader) {
    let (server, max_line) = match shared.upgrade() {
        Some(s) => (s.name.clone(), s.max_line),
        None => return,
    };
    let mut frames = FramedRead::with_capacity(reader, LineCodec::new(max_line), 64 * 1024);
    let garbage = DropReport::default();
    let count =
        || shared.upgrade().map_or(0, |s| s.dropped_lines.fetch_add(1, Ordering::Relaxed) + 1);
    let lines = Reader { server: &server, max_line, garbage: &garbage, note_dropped: &count };
    loop {
        let frame = match frames.next().await {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                tracing::debug!(server = %server, error = %e, "reading the stream failed");
                break;
            }
            None => break,
        };
        let Some(shared) = shared.upgrade() else { return };
        if let Next::Stop = lines.deliver(frame, shared.link.get()) {
            return;
        }
    }
    let Some(shared) = shared.upgrade() else { return };
    if !shared.closed.load(Ordering::Relaxed) {
        tracing::warn!(server = %server, "the stream to the server ended");
    }
    if let Some(link) = shared.link.get() {
        link.connection_lost();
    }
}
