//! `relay [--threads] -- PROGRAM ARGS...`: the least a process in the
//! middle can do. It starts `PROGRAM ARGS` and copies its own stdin to the
//! program's stdin and the program's stdout to its own stdout, bytes as
//! they come (one read and one write per chunk), parsing nothing. By
//! default on a current-thread Tokio runtime with every pipe nonblocking
//! (its own stdin and stdout taken as `mcpc serve` takes them,
//! `mcp_server_io::stdio`); `--threads`: one blocking thread per direction.
//! Ends when the program's stdout closes (after the host closed stdin, or
//! the program died).

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest chunk copied in one go.
const CHUNK: usize = 64 * 1024;
/// How long the program may take to end once its stdout closed.
const EXIT_WAIT: Duration = Duration::from_secs(5);

pub(crate) fn run(threads: bool, program: &str, args: &[String]) -> Result<(), String> {
    if threads { blocking(program, args) } else { nonblocking(program, args) }
}

fn nonblocking(program: &str, args: &[String]) -> Result<(), String> {
    mcp_bench::runtime().block_on(async {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("relay: cannot start {program}: {e}"))?;
        let to_child = child.stdin.take().ok_or("relay: no stdin pipe")?;
        let from_child = child.stdout.take().ok_or("relay: no stdout pipe")?;
        let up = copy(mcp_server_io::stdio::stdin(), to_child);
        let down = copy(from_child, mcp_server_io::stdio::stdout());
        // One task polls both directions: no hop between tasks.
        let (_, _) = tokio::join!(up, down);
        let _ = tokio::time::timeout(EXIT_WAIT, child.wait()).await;
        Ok(())
    })
}

/// Copies until the end of `from` (then `to` is dropped, closing it).
async fn copy<R, W>(mut from: R, mut to: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n]).await?;
    }
}

fn blocking(program: &str, args: &[String]) -> Result<(), String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("relay: cannot start {program}: {e}"))?;
    let to_child = child.stdin.take().ok_or("relay: no stdin pipe")?;
    let from_child = child.stdout.take().ok_or("relay: no stdout pipe")?;
    // Unbuffered descriptors of their own (no `LineWriter`, no lock).
    let own = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned().map(std::fs::File::from).map_err(|e| format!("relay: {e}"))
    };
    let host_in = own(std::io::stdin().as_fd())?;
    let host_out = own(std::io::stdout().as_fd())?;
    // The host's side on a thread of its own; when the host closes,
    // the program's stdin closes with it. Not joined: it may be blocked
    // reading a host that outlives the program.
    std::thread::spawn(move || copy_blocking(host_in, to_child));
    let _ = copy_blocking(from_child, host_out);
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    while std::time::Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}

fn copy_blocking(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n])?;
    }
}
