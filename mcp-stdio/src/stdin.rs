//! The server's stdin as the connection writes it.
//!
//! Each write is first a plain `write` on a duplicate of the pipe's
//! descriptor: the same open pipe, nonblocking as the runtime set it up,
//! so the call cannot block. Only when the pipe is full (`WouldBlock`)
//! does the write go through the runtime's `ChildStdin`, which finds the
//! pipe full itself and waits for it to take more. A line written at once
//! (the usual case) so skips the runtime's readiness bookkeeping, about
//! 180 instructions of a forwarded call. The duplicate is closed with the
//! pipe: the server sees the end of its input when the connection drops
//! this.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use tokio::process::ChildStdin;

/// The server's stdin: the runtime's pipe and, where it could be made, a
/// duplicate of its descriptor written first.
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

impl AsyncWrite for StdinPipe {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        #[cfg(unix)]
        if let Some(direct) = &self.direct {
            use std::io::Write as _;
            match (&*direct).write(bytes) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                written => return Poll::Ready(written),
            }
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

#[cfg(all(test, unix))]
mod tests {
    use std::process::Stdio;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// More than a pipe holds, written to a child that echoes it back:
    /// the plain writes meet a full pipe, the runtime waits for it, and
    /// every byte arrives once, in order; closing the pipe (both of its
    /// descriptors) ends the child's input.
    #[tokio::test]
    async fn a_full_pipe_is_waited_for_and_closing_ends_the_input() {
        let mut child = tokio::process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = StdinPipe::new(child.stdin.take().unwrap());
        assert!(stdin.direct.is_some());
        let mut stdout = child.stdout.take().unwrap();
        let sent: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let reading = tokio::spawn(async move {
            let mut got = Vec::new();
            stdout.read_to_end(&mut got).await.unwrap();
            got
        });
        stdin.write_all(&sent).await.unwrap();
        drop(stdin);
        // Ends only once the child saw the end of its input.
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), reading)
            .await
            .expect("the child's input ended")
            .unwrap();
        assert!(got == sent);
        assert!(child.wait().await.unwrap().success());
    }
}
