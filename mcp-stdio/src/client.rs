//! The stdio transport (a child's pipes), and the client over it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use mcp_peer::{Client, Link, OutgoingRequest, Transport};
use mcp_proto::client::ClientError;
use tokio::process::ChildStdout;
use tokio_util::codec::FramedRead;

use crate::batch;
use crate::codec::LineCodec;
use crate::conn::{self, ChildPath, Conn, Stdout, lock};
use crate::error::{Error, ExitInfo};
use crate::lines::{Next, Reader};
use crate::options::{ServerCommand, Settings, StdioOptions};
use crate::spin::Spin;

/// How long to wait for the exit status once stdout closed.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
/// How long stdout may stay open after the server exited (a grandchild
/// holding it) before the process group is swept.
const EOF_AFTER_EXIT: Duration = Duration::from_millis(300);
/// How long to wait for the last stderr bytes once stdout closed.
const STDERR_DRAIN_WAIT: Duration = Duration::from_millis(200);

/// A client of one MCP server spawned as a child process, speaking
/// newline-delimited JSON-RPC on its stdin and stdout: the one
/// [`mcp_peer::Client`] over a [`StdioTransport`], made by [`spawn`].
///
/// Every typed operation (`call_tool`, `read_resource`, `notifications`,
/// ...) is [`mcp_peer::Client`]'s; what only a process has (its
/// [`pid`](StdioTransport::pid), its [`stderr_tail`](StdioTransport::stderr_tail))
/// is the transport's, reached with [`transport`](Client::transport).
///
/// Cheap to clone (all clones share the connection). Many requests may be in
/// flight at once; writes never interleave. Dropping the last clone kills the
/// server's whole process group; [`close`](Client::close) shuts it down
/// gracefully.
pub type StdioClient = Client<StdioTransport>;

/// Resolves the command (with the PATH a spawned server should get) and
/// starts the server, giving the client over it. The handshake happens on
/// the first request, or explicitly with [`initialize`](Client::initialize).
///
/// Must be called within a Tokio runtime.
pub async fn spawn(command: ServerCommand, options: StdioOptions) -> Result<StdioClient, Error> {
    let session = options.client_options();
    let transport = StdioTransport::spawn(command, options).await?;
    Ok(Client::new(transport, session))
}

/// The stdio transport: one child process at a time, restarted after a
/// crash when the [`RestartPolicy`](crate::RestartPolicy) allows.
///
/// Its reader (a task, or a thread of its own with
/// [`StdioOptions::reader_thread`]) decodes stdout lines (capped; over-long
/// lines and lines that are not JSON-RPC are logged and skipped) and hands
/// them to the client; requests and queued messages are written under one
/// stdin lock, so lines never interleave and leave in the order they were
/// made.
pub struct StdioTransport {
    inner: Arc<Shared>,
}

struct Shared {
    options: Settings,
    command: ServerCommand,
    program: PathBuf,
    path: ChildPath,
    slot: Mutex<Slot>,
    link: OnceLock<Link>,
    /// Lines of the server's stdout dropped (over-long, not JSON-RPC).
    dropped_lines: AtomicU64,
}

#[derive(Debug, Default)]
struct Slot {
    conn: Option<Arc<Conn>>,
    generation: u64,
    closed: bool,
    last_exit: Option<ExitInfo>,
    restarts: VecDeque<Instant>,
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slot = lock(&self.inner.slot);
        f.debug_struct("StdioTransport")
            .field("server", &self.inner.options.name)
            .field("program", &self.inner.program)
            .field("pid", &slot.conn.as_ref().and_then(|c| c.pid))
            .field("closed", &slot.closed)
            .finish_non_exhaustive()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        if let Some(conn) = lock(&self.inner.slot).conn.take() {
            conn.finish();
        }
    }
}

impl StdioTransport {
    /// Resolves the command and starts the server process (see
    /// [`spawn`](crate::spawn)); give it to [`Client::new`] with
    /// [`StdioOptions::client_options`].
    pub async fn spawn(
        command: ServerCommand,
        options: StdioOptions,
    ) -> Result<StdioTransport, Error> {
        let name = options.name.clone();
        let configured_path = command.env.get("PATH").cloned();
        let discover = options.discover_path;
        let may_probe =
            discover && configured_path.is_none() && !mcp_spawn_env::login_shell_path_known();
        let cwd = match &command.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir()
                .map_err(|source| Error::Spawn { server: name.clone(), source })?,
        };
        let host_name = options.host_name.clone();
        let program_name = command.command.clone();
        let cache = options.path_cache.clone();
        let resolve = move || {
            // The PATH for the child, and the process PATH that serves as
            // well when the child inherits it (then none is set).
            let (path, inherited) = match (configured_path, discover) {
                (Some(p), _) => (OsString::from(p), None),
                (None, true) => {
                    let path = mcp_spawn_env::spawn_path_detail(None, cache.as_ref());
                    (path.value, path.equivalent_process_path)
                }
                (None, false) => {
                    let path = std::env::var_os("PATH").unwrap_or_default();
                    (path.clone(), Some(path))
                }
            };
            let program = mcp_spawn_env::resolve_command(&program_name, &cwd, &path, &host_name);
            (ChildPath { path, inherited }, program)
        };
        // PATH discovery runs the user's login shell (or reads its cached
        // result) once per process: that first time it is kept off the
        // async threads. Otherwise resolution is a few `stat`s, done here
        // rather than paying a hop to the blocking pool and back.
        let resolved = if may_probe {
            tokio::task::spawn_blocking(resolve).await.map_err(|e| Error::Spawn {
                server: name.clone(),
                source: std::io::Error::other(e.to_string()),
            })?
        } else {
            resolve()
        };
        let (path, program) = resolved;
        let program =
            program.map_err(|source| Error::CommandNotFound { server: name.clone(), source })?;
        let inner = Arc::new(Shared {
            options: Settings::from(options),
            command,
            program,
            path,
            slot: Mutex::new(Slot::default()),
            link: OnceLock::new(),
            dropped_lines: AtomicU64::new(0),
        });
        start_connection(&inner)?;
        Ok(StdioTransport { inner })
    }

    /// The server's name (from the options).
    pub fn name(&self) -> &str {
        &self.inner.options.name
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.inner.slot).conn.as_ref().and_then(|c| c.pid)
    }

    /// How many lines of the server's stdout were dropped (over the line
    /// limit, or not JSON-RPC), each logged with its reason; an answer
    /// among them whose id could be read failed its request with
    /// `Error::Protocol` (`ClientError::AnswerUnreadable`) at once.
    pub fn dropped_lines(&self) -> u64 {
        self.inner.dropped_lines.load(Ordering::Relaxed)
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

    fn link(&self) -> Link {
        self.inner.link.get().cloned().unwrap_or_else(Link::detached)
    }

    /// Writes `line` (gathered with the turn's other requests when
    /// `others`), or with `None` what the core queued; a failed write is
    /// reported as the server's death when it died.
    async fn send(
        &self,
        conn: &Arc<Conn>,
        line: Option<Vec<u8>>,
        others: bool,
        method: &str,
    ) -> Result<(), Error> {
        match flush(&self.link(), conn, line, others).await {
            Ok(()) => Ok(()),
            Err(source) => {
                tracing::debug!(server = %self.name(), error = %source, "writing to the server failed");
                // The reader sees the end of stdout and fails every waiter
                // with the exit status; report the same here.
                let status = conn.exit_status(EXIT_STATUS_WAIT).await;
                match status {
                    Some(status) => Err(Error::ServerExited {
                        server: self.name().into(),
                        method: method.into(),
                        exit: ExitInfo { status: Some(status), stderr_tail: conn.stderr.text() },
                    }),
                    None => Err(Error::Io { server: self.name().into(), source }),
                }
            }
        }
    }

    /// The running connection; starts a new one after a crash when the
    /// restart policy allows it.
    fn connection(&self, method: &str) -> Result<Arc<Conn>, Error> {
        {
            let slot = lock(&self.inner.slot);
            if slot.closed {
                return Err(Error::Closed { server: self.name().into() });
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
        start_connection(&self.inner)?;
        let mut slot = lock(&self.inner.slot);
        slot.restarts.push_back(Instant::now());
        while slot.restarts.len() > 64 {
            slot.restarts.pop_front();
        }
        slot.conn.clone().ok_or_else(|| Error::Closed { server: self.name().into() })
    }
}

impl Transport for StdioTransport {
    type Error = Error;

    fn attach(&self, link: Link) {
        if self.inner.link.set(link).is_err() {
            tracing::warn!(server = %self.name(), "the transport was attached twice; keeping the first client");
        }
    }

    async fn send_request(&self, request: OutgoingRequest<'_>) -> Result<(), Error> {
        let conn = self.connection(request.method)?;
        let mut line = request.body;
        line.push(b'\n');
        self.send(&conn, Some(line), request.awaited > 1, request.method).await
    }

    /// A lone request written at once when nothing waits before it and
    /// the pipe takes the line whole (see [`send_request`](Self::send_request)
    /// for the rest: a connection to make again, a batch, a failed write).
    fn send_request_now(&self, request: OutgoingRequest<'_>) -> Result<(), Vec<u8>> {
        let mut line = request.body;
        let conn = lock(&self.inner.slot).conn.clone();
        let (Some(conn), Some(link)) = (conn, self.inner.link.get()) else { return Err(line) };
        line.push(b'\n');
        let abandon = || abandoned(&conn);
        batch::send_now(&conn.batch, link, &conn.stdin, line, request.awaited > 1, &abandon)
            .map_err(|mut line| {
                line.pop();
                line
            })
    }

    /// Bounded by the request timeout: no request's deadline covers these
    /// writes (notifications, answers to the server's requests), and a
    /// server that stopped reading must not hold them forever (a write
    /// abandoned mid-line ends the connection).
    async fn flush(&self) -> Result<(), Error> {
        let conn = lock(&self.inner.slot).conn.clone();
        let Some(conn) = conn else { return Ok(()) };
        let after = self.inner.options.request_timeout;
        match tokio::time::timeout(after, self.send(&conn, None, false, "flush")).await {
            Ok(result) => result,
            Err(_) => {
                Err(Error::Timeout { server: self.name().into(), method: "flush".into(), after })
            }
        }
    }

    /// Close stdin, wait, SIGTERM the process group, wait, SIGKILL it.
    async fn close(&self) -> Result<(), Error> {
        let conn = {
            let mut slot = lock(&self.inner.slot);
            slot.closed = true;
            slot.conn.take()
        };
        if let Some(conn) = conn {
            let status = conn.shutdown(self.inner.options.shutdown_grace).await;
            tracing::debug!(server = %self.name(), ?status, "MCP server shut down");
        }
        Ok(())
    }

    fn client_error(&self, e: ClientError) -> Error {
        let server = self.name().to_owned();
        match e {
            ClientError::Rpc { method, error } => Error::Rpc { server, method, error },
            ClientError::Timeout { method, after } => Error::Timeout { server, method, after },
            ClientError::Closed { method } | ClientError::ConnectionLost { method } => {
                let slot = lock(&self.inner.slot);
                if slot.closed {
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

fn start_connection(inner: &Arc<Shared>) -> Result<(), Error> {
    let generation = {
        let mut slot = lock(&inner.slot);
        slot.generation += 1;
        slot.generation
    };
    let spawn_error = |source| Error::Spawn { server: inner.options.name.clone(), source };
    let spawned =
        conn::spawn(generation, &inner.program, &inner.command, &inner.path, &inner.options)
            .map_err(spawn_error)?;
    let conn = Arc::new(spawned.conn);
    let max_line = inner.options.max_line_length;
    let (inner_weak, conn_weak) = (Arc::downgrade(inner), Arc::downgrade(&conn));
    let reader = match spawned.stdout {
        Stdout::Task(stdout) => tokio::spawn(read_loop(inner_weak, conn_weak, stdout, max_line)),
        Stdout::Thread(pipe) => {
            let (ended, thread_end) = tokio::sync::oneshot::channel();
            let runtime = tokio::runtime::Handle::current();
            let gate = conn.gate.clone();
            let thread_inner = inner_weak.clone();
            // On failure, dropping `conn` kills the process group.
            std::thread::Builder::new()
                .name("mcp-stdio-reader".into())
                .spawn(move || {
                    let end = read_on_thread(&runtime, &thread_inner, &gate, pipe, max_line);
                    let _ = ended.send(end);
                })
                .map_err(spawn_error)?;
            tokio::spawn(watch_reader_thread(inner_weak, conn_weak, thread_end))
        }
    };
    *lock(&conn.reader_task) = Some(reader.abort_handle());
    lock(&inner.slot).conn = Some(conn);
    Ok(())
}

/// Writes `line` (gathered with the other requests of the turn when
/// `others`: another request awaits its answer), or with `None` what the
/// core queued, under the stdin lock: messages leave in the order the
/// core made them.
async fn flush(
    link: &Link,
    conn: &Conn,
    line: Option<Vec<u8>>,
    others: bool,
) -> std::io::Result<()> {
    let abandon = || abandoned(conn);
    match line {
        Some(line) => batch::send(&conn.batch, link, &conn.stdin, line, others, &abandon).await,
        None => batch::flush(&conn.batch, link, &conn.stdin, &abandon).await,
    }
}

/// A write to the server abandoned mid-line: the connection ends.
fn abandoned(conn: &Conn) {
    tracing::warn!(
        pid = conn.pid,
        "a write to the server was abandoned mid-line (the server stopped reading its stdin); ending the connection"
    );
    conn.kill();
}

/// Reads the server's stdout until it closes, handing every message to the
/// client; then records how the server ended and fails what still waits.
async fn read_loop(inner: Weak<Shared>, conn: Weak<Conn>, stdout: ChildStdout, max_line: usize) {
    // Starts at 8 KiB (dozens of short answers a read) and grows with the
    // lines and bursts it meets: a large first buffer is pages an idle
    // client keeps.
    let mut frames = FramedRead::with_capacity(stdout, LineCodec::new(max_line), 8 * 1024);
    let garbage = mcp_peer::DropReport::default();
    let (server, exit, mut spin) = match (inner.upgrade(), conn.upgrade()) {
        (Some(i), Some(c)) => {
            (i.options.name.clone(), c.exit.clone(), Spin::new(i.options.reply_spin))
        }
        _ => return,
    };
    let count = || note_dropped(&inner);
    let reader = Reader { server: &server, max_line, garbage: &garbage, note_dropped: &count };
    // One wait on the exit for the whole loop: made anew for each line, it
    // would register with the exit's waiters and leave them again per
    // message.
    let given_up = stdout_given_up(exit, &conn, &server);
    tokio::pin!(given_up);
    loop {
        // Lines first: the exit matters only once stdout has nothing more
        // to give (what the server wrote last is read before it), and a
        // ready line then costs no look at the exit.
        let frame = tokio::select! {
            biased;
            frame = spin.next(&mut frames, || awaited(&inner)) => frame,
            () = &mut given_up => break,
        };
        let frame = match frame {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                tracing::debug!(server = %server, error = %e, "reading the server's stdout failed");
                break;
            }
            None => break,
        };
        let Some(shared) = inner.upgrade() else { return };
        if let Next::Stop = reader.deliver(frame, shared.link.get()) {
            return;
        }
    }
    let (Some(inner), Some(conn)) = (inner.upgrade(), conn.upgrade()) else { return };
    on_stdout_closed(&inner, &conn).await;
}

/// Ends when the reader stops waiting for the end of stdout. The end of
/// stdout is how a server's death is usually seen; but a grandchild that
/// inherited stdout keeps it open after the server exited. So the exit is
/// watched too: once the server ended, stdout has `EOF_AFTER_EXIT` to
/// close (what the server wrote last is still read); then the process
/// group is swept (which ends such a grandchild), and after one more wait
/// the reader stops anyway.
async fn stdout_given_up(exit: Arc<conn::Exit>, conn: &Weak<Conn>, server: &str) {
    exit.watch().await;
    tokio::time::sleep(EOF_AFTER_EXIT).await;
    tracing::debug!(server = %server, "the server exited and its stdout is still open: sweeping its process group");
    if let Some(conn) = conn.upgrade() {
        conn.kill_group();
    }
    tokio::time::sleep(EOF_AFTER_EXIT).await;
    tracing::warn!(server = %server, "the server exited but its stdout stays open (a process outside its group holds it)");
}

/// How a reader thread ended.
enum ThreadEnd {
    /// Stdout closed, or reading it failed.
    Closed,
    /// The client is gone, or the connection was retired: nothing to do.
    Stopped,
}

/// The reader thread ([`StdioOptions::reader_thread`]): reads the server's
/// stdout, blocking, and hands every message to the client from this
/// thread, inside `runtime` (what the client does on a message may spawn a
/// task or wake one), while `gate` is open.
fn read_on_thread(
    runtime: &tokio::runtime::Handle,
    inner: &Weak<Shared>,
    gate: &conn::Gate,
    mut pipe: std::io::PipeReader,
    max_line: usize,
) -> ThreadEnd {
    use std::io::Read as _;
    use tokio_util::codec::Decoder as _;

    let _runtime = runtime.enter();
    let Some(server) = inner.upgrade().map(|i| i.options.name.clone()) else {
        return ThreadEnd::Stopped;
    };
    let garbage = mcp_peer::DropReport::default();
    let count = || note_dropped(inner);
    let reader = Reader { server: &server, max_line, garbage: &garbage, note_dropped: &count };
    let mut codec = LineCodec::new(max_line);
    let mut buf = bytes::BytesMut::new();
    // What one `read` takes: dozens of short answers.
    let mut chunk = vec![0u8; 8 * 1024];
    let mut eof = false;
    loop {
        // As `FramedRead` decodes: every line the buffer holds, then a
        // read; at the end of the pipe, what is left.
        let decoded = if eof { codec.decode_eof(&mut buf) } else { codec.decode(&mut buf) };
        let frame = match decoded {
            Ok(Some(frame)) => frame,
            Ok(None) if eof => return ThreadEnd::Closed,
            Ok(None) => {
                match pipe.read(&mut chunk) {
                    Ok(0) => eof = true,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        tracing::debug!(server = %server, error = %e, "reading the server's stdout failed");
                        return ThreadEnd::Closed;
                    }
                }
                continue;
            }
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "reading the server's stdout failed");
                return ThreadEnd::Closed;
            }
        };
        let Some(shared) = inner.upgrade() else { return ThreadEnd::Stopped };
        let mut next = Next::Continue;
        if !gate.pass(|| next = reader.deliver(frame, shared.link.get())) {
            return ThreadEnd::Stopped;
        }
        if let Next::Stop = next {
            return ThreadEnd::Stopped;
        }
    }
}

/// What the runtime's reader does besides reading, for a reader thread:
/// waits for the thread's end, or gives up on a stdout held open past the
/// server's exit (the thread is then told to deliver nothing more); then
/// records how the server ended and fails what still waits.
async fn watch_reader_thread(
    inner: Weak<Shared>,
    conn: Weak<Conn>,
    thread_end: tokio::sync::oneshot::Receiver<ThreadEnd>,
) {
    let (server, exit) = match (inner.upgrade(), conn.upgrade()) {
        (Some(i), Some(c)) => (i.options.name.clone(), c.exit.clone()),
        _ => return,
    };
    let given_up = stdout_given_up(exit, &conn, &server);
    tokio::select! {
        biased;
        end = thread_end => match end {
            Ok(ThreadEnd::Closed) => {}
            // A thread that panicked says nothing: its stdout is as good
            // as closed.
            Err(_) => tracing::warn!(server = %server, "the reader thread stopped"),
            Ok(ThreadEnd::Stopped) => return,
        },
        () = given_up => {
            if let Some(conn) = conn.upgrade() {
                conn.gate.close_and_wait();
            }
        }
    }
    let (Some(inner), Some(conn)) = (inner.upgrade(), conn.upgrade()) else { return };
    on_stdout_closed(&inner, &conn).await;
}

/// Whether the client waits for an answer from the server.
fn awaited(inner: &Weak<Shared>) -> bool {
    inner.upgrade().is_some_and(|s| s.link.get().is_some_and(Link::awaits_answers))
}

/// Counts a line dropped from the server's stdout; returns the count.
fn note_dropped(inner: &Weak<Shared>) -> u64 {
    inner.upgrade().map_or(0, |s| s.dropped_lines.fetch_add(1, Ordering::Relaxed) + 1)
}

async fn on_stdout_closed(inner: &Arc<Shared>, conn: &Arc<Conn>) {
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
    if let Some(link) = inner.link.get() {
        link.connection_lost();
    }
    conn.finish();
}
