//! One running server process: its pipes, its stderr, its process group.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt as _;
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::task::AbortHandle;
use tokio_util::codec::FramedRead;

use crate::batch::{BATCH_CAP, Batch};
use crate::codec::{Frame, LineCodec};
use crate::options::{
    CLEAN_ENV_ALLOWLIST, CLEAN_ENV_ALLOWLIST_WINDOWS, EnvMode, ServerCommand, Settings, StderrMode,
};
use crate::stdin::StdinPipe;

/// The longest stderr line forwarded to `tracing` in one piece.
const STDERR_LINE_MAX: usize = 8 * 1024;

/// The last bytes of a server's stderr.
#[derive(Debug)]
pub(crate) struct StderrTail {
    cap: usize,
    buf: Mutex<VecDeque<u8>>,
}

impl StderrTail {
    pub(crate) fn new(cap: usize) -> Self {
        StderrTail { cap, buf: Mutex::new(VecDeque::new()) }
    }

    fn push_line(&self, line: &[u8]) {
        let mut buf = lock(&self.buf);
        buf.extend(line);
        buf.push_back(b'\n');
        let excess = buf.len().saturating_sub(self.cap);
        buf.drain(..excess);
    }

    pub(crate) fn text(&self) -> String {
        let buf = lock(&self.buf);
        let (a, b) = buf.as_slices();
        let mut bytes = Vec::with_capacity(buf.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Locks a std mutex, recovering from poisoning (a panicking callback must
/// not wedge the client).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How the process ended, once it has: set by the waiter task (which owns
/// the `Child`), awaited by the reader and by `shutdown`; and the waiter's
/// order to kill. Two `Notify`s: a watch channel (eight wait lists) and an
/// mpsc channel (a block of slots) per client are more than a handful of
/// waiters need.
#[derive(Debug, Default)]
pub(crate) struct Exit {
    state: Mutex<Ended>,
    /// Set with `state`'s end, before the waiters are woken: what
    /// [`Exit::watch`] reads on each poll.
    has_ended: AtomicBool,
    ended: tokio::sync::Notify,
    kill: tokio::sync::Notify,
}

#[derive(Debug, Default, Clone, Copy)]
enum Ended {
    #[default]
    Running,
    /// The process ended (its status, when it could be read), or the
    /// waiter stopped.
    Ended(Option<ExitStatus>),
}

impl Exit {
    /// Records the end (the first one counts) and wakes every waiter.
    fn end(&self, status: Option<ExitStatus>) {
        {
            let mut state = lock(&self.state);
            if let Ended::Ended(_) = *state {
                return;
            }
            *state = Ended::Ended(status);
            self.has_ended.store(true, Ordering::Release);
        }
        self.ended.notify_waiters();
    }

    /// Waits until the process ended (or its waiter stopped); its status.
    pub(crate) async fn wait(&self) -> Option<ExitStatus> {
        loop {
            let ended = self.ended.notified();
            tokio::pin!(ended);
            // Registered before the state is read: an end in between wakes it.
            ended.as_mut().enable();
            if let Ended::Ended(status) = *lock(&self.state) {
                return status;
            }
            ended.await;
        }
    }

    /// [`wait`](Self::wait) for a loop that polls it whenever it has
    /// nothing else to do (the reader, each time stdout has no line
    /// ready): once polled, it is registered to wake that task, and
    /// later polls with a waker for the same task read one flag instead
    /// of polling the wait again (a lock on the `Notify`'s waiters each
    /// time). A poll with another waker polls the wait, as any future.
    pub(crate) async fn watch(&self) {
        let wait = self.wait();
        tokio::pin!(wait);
        let mut registered: Option<std::task::Waker> = None;
        std::future::poll_fn(|cx| {
            if self.has_ended.load(Ordering::Acquire) {
                return std::task::Poll::Ready(());
            }
            if registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                // The end sets the flag before it wakes the registered
                // waker: read as unset here, it wakes this task later.
                return std::task::Poll::Pending;
            }
            let polled = wait.as_mut().poll(cx).map(drop);
            registered = polled.is_pending().then(|| cx.waker().clone());
            polled
        })
        .await;
    }
}

/// Marks the end when the waiter task stops, however it stops (aborted
/// too), so no one waits for a status that will never come.
struct EndOnDrop(std::sync::Arc<Exit>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.0.end(None);
    }
}

/// One spawned server process.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) generation: u64,
    pub(crate) stdin: tokio::sync::Mutex<Option<StdinPipe>>,
    /// The exit status, once the process ended (the waiter task owns the
    /// `Child` and reaps it).
    pub(crate) exit: std::sync::Arc<Exit>,
    waiter_task: Mutex<Option<AbortHandle>>,
    pub(crate) pid: Option<u32>,
    pub(crate) stderr: std::sync::Arc<StderrTail>,
    pub(crate) stderr_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub(crate) reader_task: Mutex<Option<AbortHandle>>,
    /// Closed when the connection is retired: a reader thread
    /// ([`StdioOptions::reader_thread`](crate::StdioOptions::reader_thread))
    /// delivers nothing more then.
    pub(crate) gate: std::sync::Arc<Gate>,
    /// Set once the process group was swept, so `Drop` need not kill.
    finished: AtomicBool,
    /// Requests of one scheduler turn gathered for one write to stdin.
    pub(crate) batch: Batch,
}

/// What `spawn` hands back besides the connection.
pub(crate) struct Spawned {
    pub(crate) conn: Conn,
    pub(crate) stdout: Stdout,
}

/// The server's stdout, as the reader gets it.
pub(crate) enum Stdout {
    /// Read by a Tokio task.
    Task(ChildStdout),
    /// A blocking pipe, read on a thread of its own.
    Thread(std::io::PipeReader),
}

/// Whether a reader thread may still hand lines to the client: closed when
/// its connection is retired. A delivery happens under `delivering`, so
/// whoever closes the gate with [`close_and_wait`](Gate::close_and_wait)
/// knows that no line is delivered after it returns.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    closed: AtomicBool,
    delivering: Mutex<()>,
}

impl Gate {
    /// Runs `deliver` unless the gate is closed; whether it ran.
    pub(crate) fn pass(&self, deliver: impl FnOnce()) -> bool {
        let _delivering = lock(&self.delivering);
        if self.closed.load(Ordering::Acquire) {
            return false;
        }
        deliver();
        true
    }

    /// Closes the gate (a delivery under way finishes).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Closes the gate and waits for a delivery under way to finish.
    pub(crate) fn close_and_wait(&self) {
        self.close();
        drop(lock(&self.delivering));
    }
}

/// Starts the server process in its own process group.
pub(crate) fn spawn(
    generation: u64,
    program: &PathBuf,
    command: &ServerCommand,
    path: &ChildPath,
    options: &Settings,
) -> std::io::Result<Spawned> {
    let mut cmd = Command::new(program);
    cmd.args(&command.args);
    if options.env == EnvMode::Clean {
        cmd.env_clear();
        let allow = if cfg!(windows) { CLEAN_ENV_ALLOWLIST_WINDOWS } else { CLEAN_ENV_ALLOWLIST };
        for key in allow {
            if let Some(v) = std::env::var_os(key) {
                cmd.env(key, v);
            }
        }
    }
    if !path.inherited_by_child(options.env) {
        cmd.env("PATH", &path.path);
    }
    for (k, v) in &command.env {
        cmd.env(k, v);
    }
    if let Some(cwd) = &command.cwd {
        cmd.current_dir(cwd);
    }
    // A blocking pipe for a reader thread: the child's end goes with
    // `cmd`, dropped when this returns, so the reader sees the end of the
    // pipe once the child (and whatever inherited it) closed it.
    let (stdout_thread, child_stdout) = if options.reader_thread {
        let (reader, writer) = std::io::pipe()?;
        (Some(reader), Stdio::from(writer))
    } else {
        (None, Stdio::piped())
    };
    cmd.stdin(Stdio::piped()).stdout(child_stdout);
    cmd.stderr(match options.stderr {
        StderrMode::Capture => Stdio::piped(),
        StderrMode::Inherit => Stdio::inherit(),
        StderrMode::Discard => Stdio::null(),
    });
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn()?;
    // Our copy of the child's ends of its pipes.
    drop(cmd);
    let stdin = child.stdin.take().map(StdinPipe::new);
    let stdout = match stdout_thread {
        Some(pipe) => Stdout::Thread(pipe),
        None => Stdout::Task(
            child
                .stdout
                .take()
                .ok_or_else(|| std::io::Error::other("the child has no stdout pipe"))?,
        ),
    };
    let stderr_pipe = child.stderr.take();
    let tail = std::sync::Arc::new(StderrTail::new(options.stderr_tail));
    let stderr_task = stderr_pipe
        .map(|pipe| tokio::spawn(drain_stderr(pipe, tail.clone(), options.name.clone())));
    let pid = child.id();
    tracing::debug!(server = %options.name, pid, "spawned MCP server");
    let exit = std::sync::Arc::new(Exit::default());
    let waiter = tokio::spawn(wait_for_exit(child, exit.clone()));
    Ok(Spawned {
        conn: Conn {
            generation,
            stdin: tokio::sync::Mutex::new(stdin),
            exit,
            waiter_task: Mutex::new(Some(waiter.abort_handle())),
            pid,
            stderr: tail,
            stderr_task: Mutex::new(stderr_task),
            reader_task: Mutex::new(None),
            gate: std::sync::Arc::default(),
            finished: AtomicBool::new(false),
            batch: Batch::new(BATCH_CAP),
        },
        stdout,
    })
}

/// The PATH a server gets.
#[derive(Debug)]
pub(crate) struct ChildPath {
    /// The value to give it.
    pub(crate) path: OsString,
    /// This process's PATH when it searches what `path` searches
    /// (`mcp_spawn_env::SpawnPath::equivalent_process_path`).
    pub(crate) inherited: Option<OsString>,
}

impl ChildPath {
    /// Whether the child gets an equivalent PATH without one being set: it
    /// inherits this process's environment, whose PATH is still the
    /// equivalent one. Setting any variable makes the standard library copy
    /// the whole environment for the child (about 70k instructions per
    /// spawn with 35 variables); an equivalent PATH does not need that.
    fn inherited_by_child(&self, env: EnvMode) -> bool {
        env == EnvMode::Inherit
            && self.inherited.is_some()
            && std::env::var_os("PATH") == self.inherited
    }
}

/// Owns the child: reaps it when it ends (publishing its status), and kills
/// it when asked (where there are no process groups, the only kill).
/// Aborting the task drops the child, which kills it (`kill_on_drop`).
async fn wait_for_exit(mut child: Child, exit: std::sync::Arc<Exit>) {
    let _end = EndOnDrop(exit.clone());
    loop {
        tokio::select! {
            status = child.wait() => {
                exit.end(status.ok());
                return;
            }
            () = exit.kill.notified() => {
                let _ = child.start_kill();
            }
        }
    }
}

async fn drain_stderr(pipe: ChildStderr, tail: std::sync::Arc<StderrTail>, server: String) {
    // Most servers write little or nothing to stderr: start small (the
    // buffer grows to a line's length when one comes), so an idle client
    // does not keep 8 KiB for it.
    let mut lines = FramedRead::with_capacity(pipe, LineCodec::new(STDERR_LINE_MAX), 256);
    while let Some(frame) = lines.next().await {
        match frame {
            Ok(Frame::Line(line)) => {
                tracing::info!(target: "mcp::stderr", server = %server, "{}", String::from_utf8_lossy(&line));
                tail.push_line(&line);
            }
            Ok(Frame::TooLong { len, .. }) => {
                let note = format!("[a stderr line of {len} bytes was cut]");
                tracing::info!(target: "mcp::stderr", server = %server, "{note}");
                tail.push_line(note.as_bytes());
            }
            Err(_) => break,
        }
    }
}

impl Conn {
    /// Waits (bounded) for the process to end, after stdout closed.
    pub(crate) async fn exit_status(&self, wait: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(wait, self.exit.wait()).await.ok().flatten()
    }

    /// Waits (bounded) for the stderr reader to reach the end, so the tail
    /// holds the server's last words.
    pub(crate) async fn stderr_drained(&self, wait: Duration) {
        let task = lock(&self.stderr_task).take();
        if let Some(task) = task {
            let abort = task.abort_handle();
            if tokio::time::timeout(wait, task).await.is_err() {
                abort.abort();
            }
        }
    }

    /// Stops the process: close stdin, wait; SIGTERM the group, wait; SIGKILL
    /// the group. Then sweeps the group so no grandchild is left behind.
    pub(crate) async fn shutdown(&self, grace: Duration) -> Option<ExitStatus> {
        if let Ok(mut stdin) = tokio::time::timeout(grace, self.stdin.lock()).await
            && let Some(mut pipe) = stdin.take()
        {
            let _ = tokio::time::timeout(grace, pipe.shutdown()).await;
        }
        let mut status = self.exit_status(grace).await;
        if status.is_none() {
            self.signal_group(Signal::Term);
            status = self.exit_status(grace).await;
        }
        if status.is_none() {
            self.signal_group(Signal::Kill);
            // Where there are no process groups, this is the only kill.
            self.exit.kill.notify_one();
            status = self.exit_status(grace).await;
        }
        self.finish();
        status
    }

    /// Kills the process (and its group) and leaves the reader running, so
    /// it sees the end of stdout and reports the death as for a crash.
    pub(crate) fn kill(&self) {
        self.signal_group(Signal::Kill);
        self.exit.kill.notify_one();
    }

    /// Kills the process group (the sweep after the server itself ended).
    pub(crate) fn kill_group(&self) {
        self.signal_group(Signal::Kill);
    }

    /// Kills what is left of the process group and stops the tasks.
    pub(crate) fn finish(&self) {
        if !self.finished.swap(true, Ordering::SeqCst) {
            self.signal_group(Signal::Kill);
        }
        self.gate.close();
        if let Some(t) = lock(&self.reader_task).take() {
            t.abort();
        }
        if let Some(t) = lock(&self.stderr_task).take() {
            t.abort();
        }
        if let Some(t) = lock(&self.waiter_task).take() {
            t.abort();
        }
    }

    fn signal_group(&self, signal: Signal) {
        let Some(pid) = self.pid else { return };
        signal_group(pid, signal);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.finish();
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(pid: u32, signal: Signal) {
    use nix::sys::signal::{Signal as S, killpg};
    use nix::unistd::Pid;
    let Ok(pid) = i32::try_from(pid) else { return };
    let sig = match signal {
        Signal::Term => S::SIGTERM,
        Signal::Kill => S::SIGKILL,
    };
    // ESRCH (nothing left in the group) is the normal case after a clean exit.
    let _ = killpg(Pid::from_raw(pid), sig);
}

#[cfg(not(unix))]
fn signal_group(_pid: u32, _signal: Signal) {
    // Without process groups, `kill_on_drop` on the child is what remains.
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Context, Poll, Wake, Waker};

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    /// The watch against the wait it stands for, on every order of polls
    /// (with the task's waker, the same again, or another) and the end.
    #[test]
    fn the_watch_ends_and_wakes_as_the_wait_does() {
        // Each case: the wakers polled with before the end (0 = the first,
        // 1 = a second one), then the end.
        let cases: &[&[usize]] = &[&[], &[0], &[0, 0], &[0, 0, 0], &[0, 1], &[0, 1, 1], &[1, 0]];
        for polls in cases {
            let exit = Exit::default();
            let (counts, wakers): (Vec<_>, Vec<_>) = (0..2).map(|_| waker()).unzip();
            let watch = exit.watch();
            let wait = exit.wait();
            let mut watch = std::pin::pin!(watch);
            let mut wait = std::pin::pin!(wait);
            for &w in *polls {
                let mut cx = Context::from_waker(&wakers[w]);
                assert!(watch.as_mut().poll(&mut cx).is_pending(), "{polls:?}");
                assert!(wait.as_mut().poll(&mut cx).is_pending(), "{polls:?}");
            }
            let before: Vec<usize> = counts.iter().map(|c| c.0.load(Ordering::SeqCst)).collect();
            exit.end(None);
            let woken: Vec<usize> =
                counts.iter().zip(&before).map(|(c, b)| c.0.load(Ordering::SeqCst) - b).collect();
            if let Some(&last) = polls.last() {
                // The waker last polled with is woken by both (once each).
                assert_eq!(woken[last], 2, "{polls:?}: {woken:?}");
            }
            let mut cx = Context::from_waker(&wakers[0]);
            assert_eq!(watch.as_mut().poll(&mut cx), Poll::Ready(()), "{polls:?}");
            assert_eq!(wait.as_mut().poll(&mut cx), Poll::Ready(None), "{polls:?}");
        }
    }

    /// Once it has ended, a new watch is ready at once.
    #[test]
    fn a_watch_made_after_the_end_is_ready() {
        let exit = Exit::default();
        exit.end(None);
        let (_, waker) = waker();
        let watch = exit.watch();
        let mut watch = std::pin::pin!(watch);
        assert!(watch.as_mut().poll(&mut Context::from_waker(&waker)).is_ready());
    }
}
