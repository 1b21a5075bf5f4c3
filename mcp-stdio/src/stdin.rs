//! The server's stdin as the connection writes it.
//!
//! A line that goes at once ([`batch::send_now`](crate::batch::send_now))
//! is written with one plain `write` on a duplicate of the pipe's
//! descriptor: the same open pipe, nonblocking as the runtime set it up,
//! so the call cannot block and a full pipe answers `WouldBlock` (the line
//! then takes the runtime's path, which finds the pipe full itself and
//! waits for it). That skips the runtime's readiness bookkeeping, a
//! fifth of the cost of a forwarded call's write. Everything else goes
//! through the runtime's `ChildStdin`. The duplicate is closed with it:
//! the server sees the end of its input when the connection drops this.

use std::io::{self, Write as _};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::process::ChildStdin;

/// The server's stdin: the runtime's pipe and, where it could be made, a
/// duplicate of its descriptor for writes that go at once.
#[derive(Debug)]
pub(crate) struct StdinPipe {
    pipe: ChildStdin,
    #[cfg(unix)]
    direct: Option<std::fs::File>,
}

impl StdinPipe {
    pub(crate) fn new(pipe: ChildStdin) -> Self {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd as _;
            // Close-on-exec, as the original: no later child inherits it.
            let direct = pipe.as_fd().try_clone_to_owned().ok().map(std::fs::File::from);
            StdinPipe { pipe, direct }
        }
        #[cfg(not(unix))]
        StdinPipe { pipe }
    }
}

/// A write that never waits: `Pending` when the pipe takes nothing now.
pub(crate) trait WriteNow {
    fn write_now(&mut self, bytes: &[u8]) -> Poll<io::Result<usize>>;
}

impl WriteNow for StdinPipe {
    fn write_now(&mut self, bytes: &[u8]) -> Poll<io::Result<usize>> {
        #[cfg(unix)]
        if let Some(direct) = &self.direct {
            return match (&*direct).write(bytes) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
                written => Poll::Ready(written),
            };
        }
        poll_now(&mut self.pipe, bytes)
    }
}

/// A write through the runtime that does not wait (a waker that does
/// nothing): `Pending` when the pipe takes nothing now.
pub(crate) fn poll_now<W: AsyncWrite + Unpin>(
    pipe: &mut W,
    bytes: &[u8],
) -> Poll<io::Result<usize>> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(pipe).poll_write(&mut cx, bytes)
}

impl AsyncWrite for StdinPipe {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.pipe).poll_write(cx, bytes)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.pipe).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.pipe.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_shutdown(cx)
    }
}
