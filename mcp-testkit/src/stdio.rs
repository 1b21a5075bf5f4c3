//! The stdio driver: the server half's newline-delimited framing
//! (`mcp_server_io::stdio`) on the process's stdin and stdout, feeding one
//! [`Server`] core.

use std::io;

use mcp_server_io::stdio::{self, Ended, Input};

use crate::config::Config;
use crate::server::{Server, stderr_line};

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
    let ended =
        stdio::serve(stdio::stdin(), stdio::stdout(), max_line_bytes, queue, |input| match input {
            Input::Line(line) => server.handle_json(line),
            Input::Oversized { max_line_bytes } => server.reject_oversized(max_line_bytes),
            _ => {}
        })
        .await?;
    match ended {
        Ended::Exit(code) => std::process::exit(code),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_core_answers_each_line_and_the_driver_drains_at_eof() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n\n".to_vec();
        let (server, queue) = Server::new(Config::default());
        let mut output = Vec::new();
        let ended = stdio::serve(&input[..], &mut output, 1024, queue, |input| {
            if let Input::Line(line) = input {
                server.handle_json(line);
            }
        })
        .await
        .unwrap();
        assert_eq!(ended, Ended::InputClosed);
        let text = String::from_utf8(output).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(lines[1].starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
    }
}
