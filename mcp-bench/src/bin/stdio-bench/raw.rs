//! The raw limit: the same request bytes a client sends, written to the
//! server's stdin, and the reply line read, with blocking std I/O.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use mcp_bench::era::Era;
use mcp_bench::wire;

use crate::server::ServerSpec;

/// The request line a client sends for one echo call (id 1), and what the
/// raw ping-pong replays: in the stateless era with the `_meta` every
/// request carries.
pub(crate) fn request_line(era: Era) -> String {
    format!("{}\n", wire::call_request(1, &era.raw_meta()))
}

/// A child process spoken to with blocking line I/O.
pub(crate) struct Pipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Pipe {
    pub(crate) fn spawn(mut command: Command) -> Result<Pipe, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("spawn: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Pipe { child, stdin, stdout, line: String::with_capacity(1024) })
    }

    pub(crate) fn send(&mut self, line: &str) -> Result<(), String> {
        self.stdin.write_all(line.as_bytes()).map_err(|e| format!("write: {e}"))
    }

    /// Reads one line; an end of file is an error (the peer died).
    pub(crate) fn receive(&mut self) -> Result<&str, String> {
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) => Err("the child closed its stdout".into()),
            Ok(_) => Ok(&self.line),
            Err(e) => Err(format!("read: {e}")),
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw pipe to the server, past its handshake (in the stateless era,
/// past one `server/discover`, as the clients do).
pub(crate) fn raw_pipe(server: &ServerSpec) -> Result<Pipe, String> {
    let mut pipe = Pipe::spawn(server.command())?;
    match server.era {
        Era::Legacy => {
            pipe.send(&format!("{}\n", wire::initialize_request()))?;
            pipe.receive()?;
            pipe.send(&format!("{}\n", wire::INITIALIZED))?;
        }
        Era::Modern => {
            pipe.send(&format!("{}\n", wire::discover_request()))?;
            pipe.receive()?;
        }
    }
    Ok(pipe)
}
