//! `relay [--threads|--poll] -- PROGRAM ARGS...`: the least a process in
//! the middle can do. It starts `PROGRAM ARGS` and copies its own stdin to
//! the program's stdin and the program's stdout to its own stdout, bytes
//! as they come (one read and one write per chunk), parsing nothing. By
//! default on a current-thread Tokio runtime with every pipe nonblocking
//! (its own stdin and stdout taken as `mcpc serve` takes them,
//! `mcp_server_io::stdio`); `--threads`: one blocking thread per direction;
//! `--poll`: one thread that waits for either pipe in `poll`, then reads
//! the one that is ready (the server's answers first). Ends when the
//! program's stdout closes (after the host closed stdin, or the program
//! died).

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest chunk copied in one go.
const CHUNK: usize = 64 * 1024;
/// How long the program may take to end once its stdout closed.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// How the relay waits for its pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A current-thread Tokio runtime, every pipe nonblocking.
    Tokio,
    /// One blocking thread per direction.
    Threads,
    /// One thread, both pipes waited for in `poll`.
    Poll,
}

pub(crate) fn run(mode: Mode, program: &str, args: &[String]) -> Result<(), String> {
    match mode {
        Mode::Tokio => nonblocking(program, args),
        Mode::Threads => blocking(program, args),
        Mode::Poll => polled(program, args),
    }
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

/// The program started with piped stdin and stdout, those pipes, and
/// unbuffered descriptors of the relay's own stdin and stdout (no
/// `LineWriter`, no lock).
struct Blocking {
    child: std::process::Child,
    to_child: std::process::ChildStdin,
    from_child: std::process::ChildStdout,
    host_in: std::fs::File,
    host_out: std::fs::File,
}

fn start_blocking(program: &str, args: &[String]) -> Result<Blocking, String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("relay: cannot start {program}: {e}"))?;
    let to_child = child.stdin.take().ok_or("relay: no stdin pipe")?;
    let from_child = child.stdout.take().ok_or("relay: no stdout pipe")?;
    let own = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned().map(std::fs::File::from).map_err(|e| format!("relay: {e}"))
    };
    let host_in = own(std::io::stdin().as_fd())?;
    let host_out = own(std::io::stdout().as_fd())?;
    Ok(Blocking { child, to_child, from_child, host_in, host_out })
}

fn blocking(program: &str, args: &[String]) -> Result<(), String> {
    let Blocking { child, to_child, from_child, host_in, host_out } =
        start_blocking(program, args)?;
    // The host's side on a thread of its own; when the host closes,
    // the program's stdin closes with it. Not joined: it may be blocked
    // reading a host that outlives the program.
    std::thread::spawn(move || copy_blocking(host_in, to_child));
    let _ = copy_blocking(from_child, host_out);
    wait_for(child)
}

/// One thread: `poll` on both pipes, then one read of each that is ready
/// and one write of what it gave.
fn polled(program: &str, args: &[String]) -> Result<(), String> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

    let Blocking { child, to_child, mut from_child, mut host_in, mut host_out } =
        start_blocking(program, args)?;
    let mut to_child = Some(to_child);
    let mut buf = vec![0u8; CHUNK];
    loop {
        // Once the host's side is done, only the program's answers.
        let (host_ready, child_ready) = {
            let mut fds = [
                PollFd::new(from_child.as_fd(), PollFlags::POLLIN),
                PollFd::new(host_in.as_fd(), PollFlags::POLLIN),
            ];
            let waited = if to_child.is_some() { &mut fds[..] } else { &mut fds[..1] };
            match poll(waited, PollTimeout::NONE) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(format!("relay: poll: {e}")),
            }
            let ready = |fd: &PollFd<'_>| fd.any().unwrap_or(true);
            (to_child.is_some() && ready(&fds[1]), ready(&fds[0]))
        };
        // As the blocking relay: the program's side ends the relay (its
        // stdout closed or failed, or the host's stdout failed); the
        // host's side only closes the program's stdin.
        if child_ready {
            match from_child.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if host_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        if host_ready && let Some(to) = to_child.as_mut() {
            let forwarded = match host_in.read(&mut buf) {
                Ok(0) | Err(_) => false,
                Ok(n) => to.write_all(&buf[..n]).is_ok(),
            };
            if !forwarded {
                to_child = None;
            }
        }
    }
    wait_for(child)
}

/// Gives the program `EXIT_WAIT` to end once its stdout closed, then
/// kills it.
fn wait_for(mut child: std::process::Child) -> Result<(), String> {
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
