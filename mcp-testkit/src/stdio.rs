//! The stdio driver: newline-delimited JSON on the process's stdin and
//! stdout. It only moves messages; the [`Server`] decides everything.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

use crate::config::Config;
use crate::server::{Outgoing, OutgoingQueue, Server, stderr_line};

/// Serves one MCP session on the process's stdin and stdout until stdin
/// closes.
///
/// Each input line is one JSON-RPC message; lines longer than
/// [`Config::max_line_bytes`] are discarded and answered with a parse error.
/// Output is one compact JSON message per line, written by a single writer,
/// so lines never interleave. When stdin closes, what is already queued is
/// written and the function returns; calls still running are abandoned.
///
/// The `crash` tool and `--exit-after` end the process from here (after
/// flushing stdout), as they would end a real server: this function does not
/// return then.
pub async fn run_stdio(config: Config) -> io::Result<()> {
    if let Some(banner) = &config.stderr_banner {
        stderr_line(banner);
    }
    if !config.start_delay.is_zero() {
        tokio::time::sleep(config.start_delay).await;
    }
    let max_line_bytes = config.max_line_bytes;
    let (server, queue) = Server::new(config);
    serve(tokio::io::stdin(), tokio::io::stdout(), max_line_bytes, server, queue).await
}

/// The stdio loop over any reader and writer: reading and writing run side
/// by side, so a client that is slow to read never stops the server reading.
async fn serve<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    server: Server,
    queue: OutgoingQueue,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut writer = Writer { out: tokio::io::BufWriter::new(output), queue, scratch: Vec::new() };
    let (eof_tx, eof_rx) = oneshot::channel::<()>();
    let reading = async {
        let mut lines = LineReader::new(BufReader::new(input), max_line_bytes);
        loop {
            match lines.next().await? {
                Line::Complete => {
                    let line = lines.line();
                    if !line.iter().all(u8::is_ascii_whitespace) {
                        server.handle_json(line);
                    }
                }
                Line::TooLong => server.reject_oversized(max_line_bytes),
                Line::Eof => break,
            }
        }
        let _ = eof_tx.send(());
        // Stay pending: the writer finishes the session.
        std::future::pending::<io::Result<()>>().await
    };
    tokio::select! {
        read = reading => read,
        written = writer.run(eof_rx) => written,
    }
}

#[derive(Debug)]
struct Writer<W> {
    out: tokio::io::BufWriter<W>,
    queue: OutgoingQueue,
    scratch: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Writes queued items until `eof` fires, then writes what is left in
    /// the queue and returns.
    async fn run(&mut self, mut eof: oneshot::Receiver<()>) -> io::Result<()> {
        loop {
            tokio::select! {
                biased;
                item = self.queue.recv() => match item {
                    Some(item) => self.write(item).await?,
                    None => break,
                },
                _ = &mut eof => break,
            }
            // Write whatever else is ready before paying for a flush.
            while let Ok(item) = self.queue.try_recv() {
                self.write(item).await?;
            }
            self.out.flush().await?;
        }
        while let Ok(item) = self.queue.try_recv() {
            self.write(item).await?;
        }
        self.out.flush().await
    }

    async fn write(&mut self, item: Outgoing) -> io::Result<()> {
        match item {
            Outgoing::Message { message, .. } => {
                self.scratch.clear();
                serde_json::to_writer(&mut self.scratch, &message).map_err(io::Error::other)?;
                self.scratch.push(b'\n');
                self.out.write_all(&self.scratch).await
            }
            Outgoing::RawLine(line) => {
                self.out.write_all(&line).await?;
                self.out.write_all(b"\n").await
            }
            Outgoing::Exit(code) => {
                self.out.flush().await?;
                std::process::exit(code)
            }
        }
    }
}

/// What [`LineReader::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// A line, available from [`LineReader::line`] until the next call.
    Complete,
    /// A line over the limit, discarded.
    TooLong,
    /// The input ended.
    Eof,
}

/// Splits input at `\n` (dropping a `\r` before it), with a cap on line
/// length: an over-long line is skipped up to its newline and reported, and
/// reading goes on.
#[derive(Debug)]
struct LineReader<R> {
    input: R,
    line: Vec<u8>,
    max: usize,
    too_long: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    fn new(input: R, max: usize) -> Self {
        LineReader { input, line: Vec::new(), max, too_long: false }
    }

    fn line(&self) -> &[u8] {
        self.line.strip_suffix(b"\r").unwrap_or(&self.line)
    }

    async fn next(&mut self) -> io::Result<Line> {
        self.line.clear();
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                // A last line without a newline still counts.
                return Ok(if self.too_long {
                    self.too_long = false;
                    Line::TooLong
                } else if self.line.is_empty() {
                    Line::Eof
                } else {
                    Line::Complete
                });
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            if !self.too_long {
                if self.line.len() + chunk.len() > self.max {
                    self.too_long = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = chunk.len() + usize::from(newline.is_some());
            self.input.consume(used);
            if newline.is_some() {
                if self.too_long {
                    self.too_long = false;
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Complete);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn split(input: &[u8], max: usize, buffer: usize) -> Vec<Result<String, Line>> {
        let mut reader = LineReader::new(BufReader::with_capacity(buffer, input), max);
        let mut out = Vec::new();
        loop {
            match reader.next().await.unwrap() {
                Line::Complete => out.push(Ok(String::from_utf8_lossy(reader.line()).into_owned())),
                Line::Eof => return out,
                other => out.push(Err(other)),
            }
        }
    }

    #[tokio::test]
    async fn lines_split_with_a_cap_whatever_the_buffer_size() {
        type Case<'a> = (&'a [u8], usize, &'a [Result<&'a str, Line>]);
        let cases: &[Case<'_>] = &[
            (b"a\nbb\r\n\nccc", 10, &[Ok("a"), Ok("bb"), Ok(""), Ok("ccc")]),
            (b"short\ntoo long line\nok\n", 5, &[Ok("short"), Err(Line::TooLong), Ok("ok")]),
            (b"12345\n123456", 5, &[Ok("12345"), Err(Line::TooLong)]),
            (b"", 5, &[]),
        ];
        for (input, max, expected) in cases {
            let expected: Vec<Result<String, Line>> =
                expected.iter().map(|r| r.map(str::to_owned)).collect();
            for buffer in [1, 2, 3, 7, 64] {
                assert_eq!(split(input, *max, buffer).await, expected, "{input:?} buffer {buffer}");
            }
        }
    }

    #[tokio::test]
    async fn serve_answers_each_line_and_drains_at_eof() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n\n".to_vec();
        let (server, queue) = Server::new(Config::default());
        let mut output = Vec::new();
        serve(&input[..], &mut output, 1024, server, queue).await.unwrap();
        let text = String::from_utf8(output).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(lines[1].starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
    }
}
