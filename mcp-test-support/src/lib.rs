//! What the workspace's tests share, written once: a bound on every test
//! body ([`bounded`]), waiting for one notification among others
//! ([`next_matching`]), the text a host shows a model ([`text`]) and a
//! tool's own words ([`text_blocks`]), log lines captured on the test's
//! thread or a runtime's ([`LogCapture`]), and host handlers that
//! record what they were asked ([`Seen`], [`Model`], [`User`],
//! [`MovingRoots`]), and a temporary directory removed when dropped
//! ([`TempDir`]).
//!
//! With the feature `interop`, the interop suites (module `interop`), each
//! written once and run over every transport. With the feature `idp`, a
//! real OpenID provider as a test peer (module `idp`).
//!
//! A dev-dependency only; never published.

use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_peer::Notifications;
use mcp_proto::client::ServerNotification;
use mcp_proto::client::{BoxFuture, ElicitationHandler, RootsHandler, SamplingHandler};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ListRootsResult, Root, StopReason,
};

#[cfg(feature = "idp")]
pub mod idp;
#[cfg(feature = "interop")]
pub mod interop;

/// How long a test body may take before [`bounded`] fails it.
pub const TEST_LIMIT: Duration = Duration::from_secs(60);

/// Runs a test body under `limit`, so no await can hang the suite.
pub async fn bounded_by<F: Future>(limit: Duration, body: F) -> F::Output {
    match tokio::time::timeout(limit, body).await {
        Ok(out) => out,
        Err(_) => panic!("the test did not finish within {limit:?}"),
    }
}

/// Runs a test body under [`TEST_LIMIT`].
pub async fn bounded<F: Future>(body: F) -> F::Output {
    bounded_by(TEST_LIMIT, body).await
}

/// The first notification `pick` accepts within `limit`, and those it
/// skipped on the way; panics after `limit` with what was skipped.
pub async fn next_matching<T>(
    notifications: &mut Notifications,
    what: &str,
    limit: Duration,
    mut pick: impl FnMut(&ServerNotification) -> Option<T>,
) -> (T, Vec<ServerNotification>) {
    let mut skipped = Vec::new();
    let wait = async {
        loop {
            let n = notifications.recv().await.expect("the client is alive");
            match pick(&n) {
                Some(found) => return found,
                None => skipped.push(n),
            }
        }
    };
    match tokio::time::timeout(limit, wait).await {
        Ok(found) => (found, skipped),
        Err(_) => panic!("no {what} within {limit:?}; received {skipped:#?}"),
    }
}

/// The text a host would show a model of a tool's result.
pub fn text(result: &CallToolResult) -> String {
    mcp_proto::render_tool_result(result).text
}

/// The result's text blocks alone, one a line: what a test that checks a
/// tool's own words compares (no other block is rendered, and structured
/// content never stands in for them as it does in [`text`]).
pub fn text_blocks(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every `tracing` event at `level` and above, written as text while the
/// capture lives, on the thread that made it (a current-thread runtime's
/// tasks included) and on the threads of the runtimes it builds
/// ([`multi_thread_runtime`](Self::multi_thread_runtime)).
pub struct LogCapture {
    buffer: Buffer,
    dispatch: tracing::Dispatch,
    _guard: tracing::dispatcher::DefaultGuard,
    // A second live dispatcher: with only one, `tracing` computes the
    // interest of a callsite first hit on another test's thread from that
    // thread's empty default, caches `never`, and this test's events at
    // that callsite are lost.
    _second: tracing::Dispatch,
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Buffer {
    type Writer = Buffer;

    fn make_writer(&'a self) -> Buffer {
        self.clone()
    }
}

impl std::fmt::Debug for LogCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogCapture").finish_non_exhaustive()
    }
}

impl LogCapture {
    /// Starts capturing events at `level` and above.
    pub fn start(level: tracing::Level) -> LogCapture {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_ansi(false)
            .with_writer(buffer.clone())
            .finish();
        let dispatch = tracing::Dispatch::new(subscriber);
        let guard = tracing::dispatcher::set_default(&dispatch);
        let second =
            tracing::Dispatch::new(tracing_subscriber::fmt().with_writer(io::sink).finish());
        tracing::callsite::rebuild_interest_cache();
        LogCapture { buffer, dispatch, _guard: guard, _second: second }
    }

    /// A multi-thread runtime with `workers` worker threads whose every
    /// thread (workers and blocking ones) logs into this capture: for a
    /// test whose tasks run off the test's thread.
    pub fn multi_thread_runtime(&self, workers: usize) -> tokio::runtime::Runtime {
        thread_local! {
            static CAPTURING: std::cell::RefCell<Option<tracing::dispatcher::DefaultGuard>> =
                const { std::cell::RefCell::new(None) };
        }
        let dispatch = self.dispatch.clone();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .on_thread_start(move || {
                let guard = tracing::dispatcher::set_default(&dispatch);
                CAPTURING.with(|c| *c.borrow_mut() = Some(guard));
            })
            .on_thread_stop(|| CAPTURING.with(|c| drop(c.borrow_mut().take())))
            .build()
            .expect("a multi-thread runtime")
    }

    /// Everything captured so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.buffer.0)).into_owned()
    }

    /// The captured lines that contain `part`.
    pub fn lines_with(&self, part: &str) -> Vec<String> {
        self.text().lines().filter(|l| l.contains(part)).map(str::to_owned).collect()
    }
}

/// What the recording handlers were asked, in order.
#[derive(Debug, Default)]
pub struct Seen {
    /// `sampling/createMessage` requests.
    pub sampling: Mutex<Vec<CreateMessageRequestParams>>,
    /// `elicitation/create` requests.
    pub elicitation: Mutex<Vec<ElicitRequestParams>>,
}

impl Seen {
    /// The sampling requests so far.
    pub fn sampling(&self) -> Vec<CreateMessageRequestParams> {
        lock(&self.sampling).clone()
    }

    /// The elicitation requests so far.
    pub fn elicitation(&self) -> Vec<ElicitRequestParams> {
        lock(&self.elicitation).clone()
    }
}

/// A model that answers every sampling request with `reply`, as `model`,
/// ending its turn; it records each request in `seen`.
#[derive(Debug)]
pub struct Model {
    /// Where the requests are recorded.
    pub seen: Arc<Seen>,
    /// The model's name in the answer.
    pub model: String,
    /// The answer's text.
    pub reply: String,
}

impl SamplingHandler for Model {
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        lock(&self.seen.sampling).push(params);
        let result = CreateMessageResult::text(self.model.clone(), self.reply.clone())
            .with_stop_reason(StopReason::EndTurn);
        Box::pin(async move { Ok(result) })
    }
}

/// The person at the host: answers each elicitation with what `answer`
/// gives for it, recording each in `seen`.
pub struct User {
    /// Where the requests are recorded.
    pub seen: Arc<Seen>,
    /// The answer to a request.
    pub answer: Box<dyn Fn(&ElicitRequestParams) -> ElicitResult + Send + Sync>,
    /// Whether the host declares URL-mode elicitation (form mode only
    /// otherwise).
    pub url_mode: bool,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User").field("seen", &self.seen).finish_non_exhaustive()
    }
}

impl ElicitationHandler for User {
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        let result = (self.answer)(&params);
        lock(&self.seen.elicitation).push(params);
        Box::pin(async move { Ok(result) })
    }

    fn supports_url_mode(&self) -> bool {
        self.url_mode
    }
}

/// Roots the test can change while the client runs.
#[derive(Debug, Default)]
pub struct MovingRoots(pub Mutex<Vec<Root>>);

impl MovingRoots {
    /// Replaces the roots.
    pub fn set(&self, roots: Vec<Root>) {
        *lock(&self.0) = roots;
    }
}

impl RootsHandler for MovingRoots {
    fn list_roots(&self) -> BoxFuture<'_, Result<ListRootsResult, ErrorObject>> {
        let roots = lock(&self.0).clone();
        Box::pin(async move { Ok(ListRootsResult::new(roots)) })
    }
}

/// A fresh directory under the system's temporary directory, named after
/// the process and `tag`, removed (with what it holds) when dropped.
#[derive(Debug)]
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    /// Creates it (emptied first if a previous run left it).
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("mcp-test-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating a temporary directory");
        TempDir(dir)
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Listens on the Unix domain socket `socket` and carries each connection
/// to the TCP address `tcp`, byte for byte: a server that listens on TCP
/// (the testkit) reached through a socket. The receiver counts the
/// connections as they come; the relay runs until the runtime ends.
#[cfg(unix)]
pub fn unix_relay(
    socket: &std::path::Path,
    tcp: std::net::SocketAddr,
) -> std::io::Result<tokio::sync::watch::Receiver<usize>> {
    let listener = tokio::net::UnixListener::bind(socket)?;
    let (count, seen) = tokio::sync::watch::channel(0);
    tokio::spawn(async move {
        while let Ok((mut unix, _)) = listener.accept().await {
            count.send_modify(|n| *n += 1);
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(tcp).await {
                    let _ = tokio::io::copy_bidirectional(&mut unix, &mut server).await;
                }
            });
        }
    });
    Ok(seen)
}
