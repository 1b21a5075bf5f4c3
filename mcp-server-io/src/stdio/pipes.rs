//! This process's stdin and stdout for the stdio driver. When they are
//! pipes or Unix sockets (as every host that spawns a server makes them),
//! they are read and written by the runtime itself, nonblocking, so a request
//! and its answer cost no hop through another thread; anything else (a
//! file, a terminal) goes through Tokio's `stdin`/`stdout`, which do each
//! read and write on a blocking thread. stdout stays with Tokio's too when
//! stderr is the same pipe (`2>&1`): made nonblocking, a full pipe would
//! fail a log line.

use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// What the host's side is read from.
pub type HostInput = Box<dyn AsyncRead + Unpin + Send>;
/// What the host's side is written to.
pub type HostOutput = Box<dyn AsyncWrite + Unpin + Send>;

/// This process's stdin, read by the runtime when it can be.
pub fn stdin() -> HostInput {
    match Kind::of(&io::stdin()) {
        Some(Kind::Pipe(fd)) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(rx) => return Box::new(rx),
            Err(e) => tracing::debug!("stdin read through a thread: {e}"),
        },
        Some(Kind::Socket(s)) => match tokio_socket(s) {
            Ok(s) => return Box::new(s),
            Err(e) => tracing::debug!("stdin read through a thread: {e}"),
        },
        None => {}
    }
    Box::new(tokio::io::stdin())
}

/// This process's stdin for a thread that blocks in `read`
/// ([`serve_direct_threaded`](super::serve_direct_threaded)): a
/// duplicate of its descriptor read as a file, with neither the lock nor
/// the buffer of [`io::Stdin`] (two atomic operations and a copy per
/// read saved: the driver buffers lines itself). `io::stdin()` when the
/// descriptor cannot be duplicated.
pub fn stdin_blocking() -> Box<dyn io::Read + Send> {
    match io::stdin().as_fd().try_clone_to_owned() {
        // Close-on-exec, as a duplicate is made: no child inherits it.
        Ok(fd) => Box::new(File::from(fd)),
        Err(e) => {
            tracing::debug!("stdin read through its standard handle: {e}");
            Box::new(io::stdin())
        }
    }
}

/// This process's stdout, written by the runtime when it can be.
pub fn stdout() -> HostOutput {
    if !shares_stderr() {
        match Kind::of(&io::stdout()) {
            Some(Kind::Pipe(fd)) => match PipeOut::new(fd) {
                Ok(out) => return Box::new(out),
                Err(e) => tracing::debug!("stdout written through a thread: {e}"),
            },
            Some(Kind::Socket(s)) => match tokio_socket(s) {
                Ok(s) => return Box::new(s),
                Err(e) => tracing::debug!("stdout written through a thread: {e}"),
            },
            None => {}
        }
    }
    Box::new(tokio::io::stdout())
}

/// A pipe or a Unix socket, as a descriptor of its own (a duplicate:
/// the standard one stays open).
enum Kind {
    Pipe(OwnedFd),
    Socket(UnixStream),
}

impl Kind {
    fn of(std: &impl AsFd) -> Option<Kind> {
        let fd = std.as_fd().try_clone_to_owned().ok()?;
        let file = File::from(fd);
        let kind = file.metadata().ok()?.file_type();
        if kind.is_fifo() {
            return Some(Kind::Pipe(OwnedFd::from(file)));
        }
        if kind.is_socket() {
            let socket = UnixStream::from(OwnedFd::from(file));
            // Only a Unix socket (not a TCP one handed over as stdin).
            return socket.local_addr().is_ok().then_some(Kind::Socket(socket));
        }
        None
    }
}

/// A pipe the runtime writes, each write tried first as a plain `write`
/// on a duplicate of its descriptor (nonblocking, as the runtime made
/// it: the call cannot block). Only a full pipe (`WouldBlock`) goes
/// through the runtime, which finds it full itself and waits for it to
/// take more. A line written at once (the usual case) so skips the
/// runtime's readiness bookkeeping, about 130 instructions of a
/// forwarded call's reply.
struct PipeOut {
    direct: File,
    pipe: pipe::Sender,
}

impl PipeOut {
    fn new(fd: OwnedFd) -> io::Result<Self> {
        // Close-on-exec, as the original: no child inherits it.
        let direct = File::from(fd.try_clone()?);
        Ok(PipeOut { direct, pipe: pipe::Sender::from_owned_fd(fd)? })
    }
}

impl AsyncWrite for PipeOut {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match (&self.direct).write(bytes) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            written => return Poll::Ready(written),
        }
        Pin::new(&mut self.pipe).poll_write(cx, bytes)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_shutdown(cx)
    }
}

fn tokio_socket(socket: UnixStream) -> io::Result<tokio::net::UnixStream> {
    socket.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(socket)
}

/// Whether stdout and stderr are the same file (then stdout is left
/// blocking).
fn shares_stderr() -> bool {
    let id = |fd: &dyn AsFd| {
        let file = File::from(fd.as_fd().try_clone_to_owned().ok()?);
        file.metadata().ok().map(|m| (m.dev(), m.ino()))
    };
    match (id(&io::stdout()), id(&io::stderr())) {
        (Some(out), Some(err)) => out == err,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_and_unix_sockets_are_taken_files_are_not() {
        let (reader, writer) = io::pipe().unwrap();
        assert!(matches!(Kind::of(&reader), Some(Kind::Pipe(_))));
        assert!(matches!(Kind::of(&writer), Some(Kind::Pipe(_))));
        let (a, _b) = UnixStream::pair().unwrap();
        assert!(matches!(Kind::of(&a), Some(Kind::Socket(_))));
        let file = File::open(std::env::current_exe().unwrap()).unwrap();
        assert!(Kind::of(&file).is_none());
    }

    #[tokio::test]
    async fn a_line_crosses_a_pipe_taken_by_the_runtime() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (reader, writer) = io::pipe().unwrap();
        let Some(Kind::Pipe(rx)) = Kind::of(&reader) else { panic!("a pipe") };
        let Some(Kind::Pipe(tx)) = Kind::of(&writer) else { panic!("a pipe") };
        drop((reader, writer));
        let mut rx = pipe::Receiver::from_owned_fd(rx).unwrap();
        let mut tx = pipe::Sender::from_owned_fd(tx).unwrap();
        tx.write_all(b"{}\n").await.unwrap();
        drop(tx);
        let mut got = String::new();
        rx.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "{}\n");
    }

    /// More than a pipe holds, written while the other end reads slowly:
    /// the plain writes meet a full pipe, the runtime waits for it, and
    /// every byte arrives once, in order.
    #[tokio::test]
    async fn a_full_pipe_is_waited_for_and_nothing_is_lost() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (reader, writer) = io::pipe().unwrap();
        let Some(Kind::Pipe(rx)) = Kind::of(&reader) else { panic!("a pipe") };
        let Some(Kind::Pipe(tx)) = Kind::of(&writer) else { panic!("a pipe") };
        drop((reader, writer));
        let mut rx = pipe::Receiver::from_owned_fd(rx).unwrap();
        let mut out = PipeOut::new(tx).unwrap();
        let sent: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let reading = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                tokio::time::sleep(std::time::Duration::from_micros(50)).await;
                match rx.read(&mut chunk).await.unwrap() {
                    0 => return got,
                    n => got.extend_from_slice(&chunk[..n]),
                }
            }
        });
        out.write_all(&sent).await.unwrap();
        drop(out);
        assert!(reading.await.unwrap() == sent);
    }
}
