//! The stdio client: a small driver around the shared client core.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mcp_proto::client::{
    ClientCore, ClientError, CoreConfig, DriverWork, Event, RequestOptions, ops,
};
use mcp_proto::jsonrpc::{self, Message, Notification, RequestId};
use mcp_proto::types::{CallToolResult, InitializeResult, JsonObject, Tool};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::process::ChildStdout;
use tokio::sync::oneshot;
use tokio_util::codec::FramedRead;

use crate::codec::{Frame, LineCodec};
use crate::conn::{self, Conn, lock};
use crate::error::{Error, ExitInfo};
use crate::options::{ServerCommand, StdioOptions};

type Waiter = oneshot::Sender<Result<Box<RawValue>, ClientError>>;

/// How long to wait for the exit status once stdout closed.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
/// How long to wait for the last stderr bytes once stdout closed.
const STDERR_DRAIN_WAIT: Duration = Duration::from_millis(200);

/// A client of one MCP server spawned as a child process, speaking
/// newline-delimited JSON-RPC on its stdin and stdout.
///
/// Cheap to clone (all clones share the connection). Many requests may be in
/// flight at once; writes never interleave. Dropping the last clone kills the
/// server's whole process group; [`close`](Self::close) shuts it down
/// gracefully.
#[derive(Clone, Debug)]
pub struct StdioClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: StdioOptions,
    command: ServerCommand,
    program: PathBuf,
    path: OsString,
    core: Mutex<ClientCore<Waiter>>,
    slot: Mutex<Slot>,
    init_lock: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct Slot {
    conn: Option<Arc<Conn>>,
    generation: u64,
    closed: bool,
    last_exit: Option<ExitInfo>,
    fatal: Option<ClientError>,
    restarts: VecDeque<Instant>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(conn) = lock(&self.slot).conn.take() {
            conn.finish();
        }
    }
}

impl StdioClient {
    /// Resolves the command (with the PATH a spawned server should get) and
    /// starts the server. The handshake happens on the first request, or
    /// explicitly with [`initialize`](Self::initialize).
    ///
    /// Must be called within a Tokio runtime.
    pub async fn spawn(
        command: ServerCommand,
        options: StdioOptions,
    ) -> Result<StdioClient, Error> {
        let name = options.name.clone();
        let configured_path = command.env.get("PATH").cloned();
        let discover = options.discover_path;
        let cwd = match &command.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir()
                .map_err(|source| Error::Spawn { server: name.clone(), source })?,
        };
        let host_name = options.host_name.clone();
        let program_name = command.command.clone();
        // PATH discovery may run the user's login shell once (cached): keep
        // it off the async threads.
        let resolved = tokio::task::spawn_blocking(move || {
            let path = match (configured_path, discover) {
                (Some(p), _) => OsString::from(p),
                (None, true) => mcp_spawn_env::spawn_path(None),
                (None, false) => std::env::var_os("PATH").unwrap_or_default(),
            };
            let program = mcp_spawn_env::resolve_command(&program_name, &cwd, &path, &host_name);
            (path, program)
        })
        .await
        .map_err(|e| Error::Spawn {
            server: name.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
        let (path, program) = resolved;
        let program =
            program.map_err(|source| Error::CommandNotFound { server: name.clone(), source })?;

        let mut config = CoreConfig::new(options.client_info.clone());
        config.capabilities = options.handlers.capabilities();
        config.protocol_version = options.protocol_version;
        config.supported_versions = options.supported_versions.clone();
        config.request_timeout = options.request_timeout;
        let inner = Arc::new(Inner {
            options,
            command,
            program,
            path,
            core: Mutex::new(ClientCore::new(config)),
            slot: Mutex::new(Slot::default()),
            init_lock: tokio::sync::Mutex::new(()),
        });
        let client = StdioClient { inner };
        client.start_connection()?;
        Ok(client)
    }

    /// The server's name (from the options).
    pub fn name(&self) -> &str {
        &self.inner.options.name
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.inner.slot).conn.as_ref().and_then(|c| c.pid)
    }

    /// The last bytes the server wrote to stderr (when captured).
    pub fn stderr_tail(&self) -> String {
        let slot = lock(&self.inner.slot);
        match (&slot.conn, &slot.last_exit) {
            (Some(conn), _) => conn.stderr.text(),
            (None, Some(exit)) => exit.stderr_tail.clone(),
            (None, None) => String::new(),
        }
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<mcp_proto::ProtocolVersion> {
        lock(&self.inner.core).protocol_version()
    }

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        lock(&self.inner.core).initialize_result().cloned()
    }

    /// Runs the handshake if it has not run yet (concurrent callers share
    /// one), and returns the server's answer.
    pub async fn initialize(&self) -> Result<Arc<InitializeResult>, Error> {
        if let Some(r) = self.initialize_result() {
            return Ok(r);
        }
        let _guard = self.inner.init_lock.lock().await;
        if let Some(r) = self.initialize_result() {
            return Ok(r);
        }
        if let Some(fatal) = lock(&self.inner.slot).fatal.clone() {
            return Err(self.protocol_error(fatal));
        }
        let conn = self.connection(mcp_proto::methods::INITIALIZE)?;
        let (tx, rx) = oneshot::channel();
        let request = {
            let mut core = lock(&self.inner.core);
            if !core.is_fresh() {
                // A connection restarted after a crash starts from a fresh core.
                core.reset();
            }
            core.initialize(tx, Instant::now()).map_err(|e| self.protocol_error(e))?
        };
        let id = request.id.clone();
        let line = encode_line(&Message::Request(request));
        self.send(&conn, Some(&line), mcp_proto::methods::INITIALIZE).await?;
        match self.wait(id, mcp_proto::methods::INITIALIZE, rx).await {
            Ok(_) => {
                // Sends notifications/initialized before any other request.
                self.send(&conn, None, mcp_proto::methods::INITIALIZE).await?;
                self.initialize_result().ok_or_else(|| Error::Closed { server: self.name().into() })
            }
            Err(e) => {
                let fatal = matches!(
                    e,
                    ClientError::UnsupportedVersion(_)
                        | ClientError::InvalidResult { .. }
                        | ClientError::Rpc { .. }
                );
                if fatal {
                    lock(&self.inner.slot).fatal = Some(e.clone());
                }
                Err(self.map_error(e))
            }
        }
    }

    /// Sends a request and waits for its result (initializing first if
    /// needed). Cancelling the returned future sends `notifications/cancelled`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Value, Error> {
        let raw = self.request_text(method, params, options).await?;
        ops::parse_result(method, &raw).map_err(|e| self.map_error(e))
    }

    /// [`request`](Self::request), with the result left as JSON text.
    async fn request_text(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.initialize().await?;
        self.raw_request(method, params, options).await
    }

    /// Sends a notification (initializing first if needed).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), Error> {
        self.initialize().await?;
        let conn = self.connection(method)?;
        let line = encode_line(&Message::Notification(Notification::new(method, params)));
        self.send(&conn, Some(&line), method).await
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), Error> {
        ops::ping(self, RequestOptions::default()).await
    }

    /// Every tool the server offers (all pages), cached until the server
    /// says the list changed.
    pub async fn list_tools(&self) -> Result<Arc<[Tool]>, Error> {
        ops::list_tools(self, RequestOptions::default()).await
    }

    /// Calls a tool. `options` may carry a timeout and a progress callback.
    /// A tool that fails reports `is_error` in the result; that is not an
    /// `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        ops::call_tool(self, name, arguments, options).await
    }

    /// Shuts the server down: close its stdin, wait, SIGTERM its process
    /// group, wait, SIGKILL it. Waiting requests fail with [`Error::Closed`].
    /// Idempotent.
    pub async fn close(&self) -> Result<(), Error> {
        let conn = {
            let mut slot = lock(&self.inner.slot);
            slot.closed = true;
            slot.conn.take()
        };
        let events = {
            let mut core = lock(&self.inner.core);
            core.close();
            drain_events(&mut core)
        };
        deliver(&self.inner, None, events);
        if let Some(conn) = conn {
            let status = conn.shutdown(self.inner.options.shutdown_grace).await;
            tracing::debug!(server = %self.name(), ?status, "MCP server shut down");
        }
        Ok(())
    }

    async fn raw_request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.exchange(method, |core, waiter| {
            let request = core.start_request(method, params, &options, waiter, Instant::now())?;
            Ok((request.id.clone(), encode_line(&Message::Request(request))))
        })
        .await
    }

    /// Sends one request (its line made by `start`, which registers it with
    /// the core) and waits for its answer.
    async fn exchange(
        &self,
        method: &str,
        start: impl FnOnce(&mut ClientCore<Waiter>, Waiter) -> Result<(RequestId, Vec<u8>), ClientError>,
    ) -> Result<Box<RawValue>, Error> {
        let conn = self.connection(method)?;
        let (tx, rx) = oneshot::channel();
        let started = start(&mut lock(&self.inner.core), tx);
        let (id, line) = started.map_err(|e| self.map_error(e))?;
        let mut guard = CancelOnDrop { inner: Arc::downgrade(&self.inner), id: Some(id.clone()) };
        self.send(&conn, Some(&line), method).await?;
        let outcome = self.wait(id, method, rx).await;
        guard.id = None;
        outcome.map_err(|e| self.map_error(e))
    }

    /// Waits for a request's outcome, expiring deadlines as they pass.
    async fn wait(
        &self,
        id: RequestId,
        method: &str,
        mut rx: oneshot::Receiver<Result<Box<RawValue>, ClientError>>,
    ) -> Result<Box<RawValue>, ClientError> {
        // A waiter dropped without an answer means the connection went away.
        let closed = || Err(ClientError::Closed { method: method.to_owned() });
        loop {
            let deadline = lock(&self.inner.core).deadline(&id);
            let Some(deadline) = deadline else { break };
            tokio::select! {
                outcome = &mut rx => return outcome.unwrap_or_else(|_| closed()),
                () = tokio::time::sleep_until(deadline.into()) => {
                    let events = {
                        let mut core = lock(&self.inner.core);
                        core.handle_timeout(Instant::now());
                        drain_events(&mut core)
                    };
                    let conn = lock(&self.inner.slot).conn.clone();
                    deliver(&self.inner, conn.as_ref(), events);
                    if let Some(conn) = conn {
                        // Sends the notifications/cancelled the timeout queued.
                        let _ = flush(&self.inner, &conn, None).await;
                    }
                }
            }
        }
        rx.await.unwrap_or_else(|_| closed())
    }

    /// Writes what the core queued, then `line`, to the server.
    async fn send(&self, conn: &Arc<Conn>, line: Option<&[u8]>, method: &str) -> Result<(), Error> {
        match flush(&self.inner, conn, line).await {
            Ok(()) => Ok(()),
            Err(source) => {
                tracing::debug!(server = %self.name(), error = %source, "writing to the server failed");
                // The reader sees the end of stdout and fails every waiter
                // with the exit status; report the same here.
                let exit = self.exit_info_after_death(conn).await;
                match exit {
                    Some(exit) => Err(Error::ServerExited {
                        server: self.name().into(),
                        method: method.into(),
                        exit,
                    }),
                    None => Err(Error::Io { server: self.name().into(), source }),
                }
            }
        }
    }

    async fn exit_info_after_death(&self, conn: &Arc<Conn>) -> Option<ExitInfo> {
        let status = conn.exit_status(EXIT_STATUS_WAIT).await;
        status.map(|status| ExitInfo { status: Some(status), stderr_tail: conn.stderr.text() })
    }

    /// The running connection; starts a new one after a crash when the
    /// restart policy allows it.
    fn connection(&self, method: &str) -> Result<Arc<Conn>, Error> {
        {
            let slot = lock(&self.inner.slot);
            if slot.closed {
                return Err(match &slot.fatal {
                    Some(fatal) => self.protocol_error(fatal.clone()),
                    None => Error::Closed { server: self.name().into() },
                });
            }
            if let Some(conn) = &slot.conn {
                return Ok(conn.clone());
            }
            let exit = slot
                .last_exit
                .clone()
                .unwrap_or(ExitInfo { status: None, stderr_tail: String::new() });
            match self.inner.options.restart {
                None => {
                    return Err(Error::ServerExited {
                        server: self.name().into(),
                        method: method.into(),
                        exit,
                    });
                }
                Some(policy) => {
                    let now = Instant::now();
                    let recent = slot
                        .restarts
                        .iter()
                        .filter(|t| now.duration_since(**t) < policy.window)
                        .count();
                    if recent >= policy.max_restarts as usize {
                        return Err(Error::RestartLimit {
                            server: self.name().into(),
                            restarts: recent as u32,
                            exit,
                        });
                    }
                }
            }
        }
        tracing::info!(server = %self.name(), "restarting MCP server");
        self.start_connection()?;
        let mut slot = lock(&self.inner.slot);
        slot.restarts.push_back(Instant::now());
        while slot.restarts.len() > 64 {
            slot.restarts.pop_front();
        }
        slot.conn.clone().ok_or_else(|| Error::Closed { server: self.name().into() })
    }

    fn start_connection(&self) -> Result<(), Error> {
        let inner = &self.inner;
        let generation = {
            let mut slot = lock(&inner.slot);
            slot.generation += 1;
            slot.generation
        };
        let spawned =
            conn::spawn(generation, &inner.program, &inner.command, &inner.path, &inner.options)
                .map_err(|source| Error::Spawn { server: self.name().into(), source })?;
        let conn = Arc::new(spawned.conn);
        let reader = tokio::spawn(read_loop(
            Arc::downgrade(inner),
            Arc::downgrade(&conn),
            spawned.stdout,
            inner.options.max_line_length,
        ));
        *lock(&conn.reader_task) = Some(reader.abort_handle());
        lock(&inner.slot).conn = Some(conn);
        Ok(())
    }

    fn protocol_error(&self, source: ClientError) -> Error {
        Error::Protocol { server: self.name().into(), source }
    }

    fn map_error(&self, e: ClientError) -> Error {
        let server = self.name().to_owned();
        match e {
            ClientError::Rpc { method, error } => Error::Rpc { server, method, error },
            ClientError::Timeout { method, after } => Error::Timeout { server, method, after },
            ClientError::Closed { method } => {
                let slot = lock(&self.inner.slot);
                if slot.closed && slot.fatal.is_none() {
                    Error::Closed { server }
                } else {
                    let exit = slot
                        .last_exit
                        .clone()
                        .unwrap_or(ExitInfo { status: None, stderr_tail: String::new() });
                    Error::ServerExited { server, method, exit }
                }
            }
            other => Error::Protocol { server, source: other },
        }
    }
}

impl ops::Requester for StdioClient {
    type Error = Error;

    fn client_error(&self, error: ClientError) -> Error {
        self.map_error(error)
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.request_text(method, params, options).await
    }

    /// Encodes the parameters straight into the request line.
    async fn request_with_params<P: Serialize + Sync>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.initialize().await?;
        self.exchange(method, |core, waiter| {
            let (id, mut line) =
                core.start_request_encoded(method, params, &options, waiter, Instant::now())?;
            line.push(b'\n');
            Ok((id, line))
        })
        .await
    }

    fn cached_tools(&self) -> Option<Arc<[Tool]>> {
        lock(&self.inner.core).cached_tools()
    }

    fn tools_generation(&self) -> u64 {
        lock(&self.inner.core).tools_generation()
    }

    fn store_tools(&self, generation: u64, tools: Vec<Tool>) -> Arc<[Tool]> {
        lock(&self.inner.core).store_tools(generation, tools)
    }
}

/// Cancels a request whose caller stopped waiting (its future was dropped).
struct CancelOnDrop {
    inner: Weak<Inner>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Some(inner)) = (self.id.take(), self.inner.upgrade()) else { return };
        let mut core = lock(&inner.core);
        if core.deadline(&id).is_none() {
            return;
        }
        core.cancel(&id, "the client stopped waiting");
        let events = drain_events(&mut core);
        drop(core);
        let conn = lock(&inner.slot).conn.clone();
        deliver(&inner, conn.as_ref(), events);
        if let (Some(conn), Ok(handle)) = (conn, tokio::runtime::Handle::try_current()) {
            handle.spawn(async move {
                let _ = flush(&inner, &conn, None).await;
            });
        }
    }
}

fn encode_line(message: &Message) -> Vec<u8> {
    let mut line = message.to_vec();
    line.push(b'\n');
    line
}

/// Writes the core's queued messages and then `line`, under the stdin lock,
/// so messages leave in the order the core produced them.
async fn flush(inner: &Inner, conn: &Conn, line: Option<&[u8]>) -> std::io::Result<()> {
    let mut stdin = conn.stdin.lock().await;
    let pipe = stdin
        .as_mut()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin is closed"))?;
    let queued = {
        let mut core = lock(&inner.core);
        let mut buf = Vec::new();
        while let Some(m) = core.poll_transmit() {
            buf.extend_from_slice(&encode_line(&m));
        }
        buf
    };
    use tokio::io::AsyncWriteExt;
    match (queued.is_empty(), line) {
        (true, None) => Ok(()),
        (true, Some(line)) => pipe.write_all(line).await,
        (false, None) => pipe.write_all(&queued).await,
        (false, Some(line)) => {
            let mut all = queued;
            all.extend_from_slice(line);
            pipe.write_all(&all).await
        }
    }
}

fn drain_events(core: &mut ClientCore<Waiter>) -> Vec<Event<Waiter>> {
    std::iter::from_fn(|| core.poll_event()).collect()
}

/// Acts on the core's events outside its lock.
fn deliver(inner: &Arc<Inner>, conn: Option<&Arc<Conn>>, events: Vec<Event<Waiter>>) {
    for event in events {
        let work = event.deliver(inner.options.on_event.as_ref(), |waiter, outcome| {
            let _ = waiter.send(outcome);
        });
        match work {
            Some(DriverWork::AnswerServerRequest(request)) => {
                let Some(conn) = conn else { continue };
                let weak = Arc::downgrade(inner);
                let conn2 = conn.clone();
                let handlers = inner.options.handlers.clone();
                let id = request.id.clone();
                // Held while spawning, so the task cannot remove its entry
                // before it is inserted (which would leave a stale entry).
                let mut tasks = lock(&conn.server_tasks);
                let task = tokio::spawn(async move {
                    let outcome = handlers.handle(&request.method, request.params).await;
                    let Some(inner) = weak.upgrade() else { return };
                    lock(&conn2.server_tasks).remove(&request.id);
                    lock(&inner.core).respond(request.id, outcome);
                    let _ = flush(&inner, &conn2, None).await;
                });
                tasks.insert(id, task.abort_handle());
            }
            Some(DriverWork::StopServerRequest(id)) => {
                if let Some(conn) = conn
                    && let Some(task) = lock(&conn.server_tasks).remove(&id)
                {
                    task.abort();
                }
            }
            _ => {}
        }
    }
}

/// Reads the server's stdout until it closes, feeding every message to the
/// core; then records how the server ended and fails what still waits.
async fn read_loop(inner: Weak<Inner>, conn: Weak<Conn>, stdout: ChildStdout, max_line: usize) {
    let mut frames = FramedRead::with_capacity(stdout, LineCodec::new(max_line), 64 * 1024);
    let server = match inner.upgrade() {
        Some(i) => i.options.name.clone(),
        None => return,
    };
    while let Some(frame) = frames.next().await {
        let line = match frame {
            Ok(Frame::Line(line)) => line,
            Ok(Frame::TooLong { len }) => {
                tracing::error!(server = %server, len, max = max_line, "dropped an over-long line from the server");
                continue;
            }
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "reading the server's stdout failed");
                break;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let incoming = match jsonrpc::decode_slice_as::<Box<RawValue>>(&line) {
            Ok(incoming) => incoming,
            Err(e) => {
                tracing::warn!(server = %server, error = %e, "skipping a line that is not a JSON-RPC message");
                continue;
            }
        };
        let (Some(inner), Some(conn)) = (inner.upgrade(), conn.upgrade()) else { return };
        let (events, flush_needed) = {
            let mut core = lock(&inner.core);
            core.handle_incoming(incoming, Instant::now());
            (drain_events(&mut core), core.has_transmit())
        };
        deliver(&inner, Some(&conn), events);
        if flush_needed {
            // Never write from the reader itself: a full stdin pipe must not
            // stop it from reading.
            tokio::spawn(async move {
                let _ = flush(&inner, &conn, None).await;
            });
        }
    }
    let (Some(inner), Some(conn)) = (inner.upgrade(), conn.upgrade()) else { return };
    on_stdout_closed(&inner, &conn).await;
}

async fn on_stdout_closed(inner: &Arc<Inner>, conn: &Arc<Conn>) {
    let status = conn.exit_status(EXIT_STATUS_WAIT).await;
    conn.stderr_drained(STDERR_DRAIN_WAIT).await;
    let exit = ExitInfo { status, stderr_tail: conn.stderr.text() };
    let current = {
        let mut slot = lock(&inner.slot);
        let current = slot.conn.as_ref().is_some_and(|c| c.generation == conn.generation);
        if current {
            slot.conn = None;
            slot.last_exit = Some(exit.clone());
        }
        current && !slot.closed
    };
    if !current {
        return;
    }
    tracing::warn!(server = %inner.options.name, "{exit}");
    let events = {
        let mut core = lock(&inner.core);
        core.reset();
        drain_events(&mut core)
    };
    deliver(inner, None, events);
    conn.finish();
}
