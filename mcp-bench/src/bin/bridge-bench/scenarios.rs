//! The scenarios: a host and a server of each kind, and the paths between
//! them (direct first, then the floor and the bridges).

use mcp_bench::proc::HttpServer;

use crate::flags::Config;
use crate::route::{BridgeUrl, Reach, Role, Route, free_port};

/// One comparison: the paths to one server, the first of them direct.
pub(crate) struct Scenario {
    pub(crate) title: &'static str,
    pub(crate) paths: Vec<Route>,
    /// What is left out of this scenario, and why.
    pub(crate) note: String,
    /// The HTTP server behind it, while it runs.
    _server: Option<HttpServer>,
}

/// The scenarios asked for (all three by default), each with its server
/// started (under the affinity of the caller's thread, so a pinned phase
/// pins the server too).
pub(crate) fn scenarios(config: &Config) -> Result<Vec<Scenario>, String> {
    let testkit = &config.testkit;
    let mcpc = &config.mcpc;
    let stdio_line = config.stdio_server_line();
    let mut out = Vec::new();

    // stdio host -> remote Streamable HTTP server.
    if config.wants("stdio-http") {
        let server = HttpServer::start(testkit, &[])?;
        let url = server.url.clone();
        let mut paths = vec![
            Route {
                label: "direct (ours over HTTP)",
                role: Role::Direct,
                reach: Reach::Url(url.clone()),
            },
            Route {
                label: "`mcpc serve --server URL`",
                role: Role::Bridge,
                reach: Reach::Stdio {
                    program: mcpc.clone(),
                    args: vec!["serve".into(), "--server".into(), url.clone()],
                },
            },
        ];
        if let Some((node, script)) = config.mcp_remote() {
            paths.push(Route {
                label: "`mcp-remote URL --transport http-only`",
                role: Role::Bridge,
                reach: Reach::Stdio {
                    program: node,
                    args: vec![
                        script,
                        url.clone(),
                        "--transport".into(),
                        "http-only".into(),
                        "--silent".into(),
                    ],
                },
            });
        }
        if let Some((node, script)) = config.supergateway() {
            paths.push(Route {
                label: "`supergateway --streamableHttp URL`",
                role: Role::Bridge,
                reach: Reach::Stdio {
                    program: node,
                    args: vec![
                        script,
                        "--streamableHttp".into(),
                        url.clone(),
                        "--logLevel".into(),
                        "none".into(),
                    ],
                },
            });
        }
        out.push(Scenario {
            title: "stdio host → Streamable HTTP server (`mcp-testkit http`)",
            paths,
            note: String::new(),
            _server: Some(server),
        });
    }

    // stdio host -> stdio server.
    if config.wants("stdio-stdio") {
        let relay_args = |flag: Option<&str>| -> Result<Reach, String> {
            let me = std::env::current_exe().map_err(|e| format!("this executable: {e}"))?;
            let mut args = vec!["relay".to_owned()];
            args.extend(flag.map(str::to_owned));
            args.extend(["--".to_owned(), testkit.to_string_lossy().into_owned(), "stdio".into()]);
            Ok(Reach::Stdio { program: me, args })
        };
        out.push(Scenario {
            title: "stdio host → stdio server (`mcp-testkit stdio`)",
            paths: vec![
                Route {
                    label: "direct (ours over stdio)",
                    role: Role::Direct,
                    reach: Reach::Stdio { program: testkit.clone(), args: vec!["stdio".into()] },
                },
                Route {
                    label: "byte relay, no JSON: the floor (current-thread Tokio)",
                    role: Role::Floor,
                    reach: relay_args(None)?,
                },
                Route {
                    label: "byte relay, no JSON: the floor (two blocking threads)",
                    role: Role::Floor,
                    reach: relay_args(Some("--threads"))?,
                },
                Route {
                    label: "byte relay, no JSON: the floor (one thread polling both pipes)",
                    role: Role::Floor,
                    reach: relay_args(Some("--poll"))?,
                },
                Route {
                    label: "`mcpc serve --server \"<stdio server>\"`",
                    role: Role::Bridge,
                    reach: Reach::Stdio {
                        program: mcpc.clone(),
                        args: vec!["serve".into(), "--server".into(), stdio_line.clone()],
                    },
                },
            ],
            note: "Neither Node bridge has a stdio → stdio mode (`supergateway --stdio` serves \
                   SSE, WebSocket or Streamable HTTP; `mcp-remote` only reaches URLs): `mcpc serve` alone. \
                   The byte relay (`bridge-bench relay`) is the least any process in the middle can add: \
                   it copies the host's bytes to the server's stdin and the server's stdout back as they come, \
                   one read and one write per chunk, parsing nothing; on a current-thread Tokio runtime \
                   with the pipes nonblocking (as `mcpc serve` reads and writes them), with one blocking \
                   thread per direction, and on one thread that waits for both pipes in `poll` (on one CPU, \
                   a thread preempted after its write can find the answer ready when it runs again, where a \
                   second thread must be woken for it)."
                .into(),
            _server: None,
        });
    }

    // HTTP host -> stdio server.
    if config.wants("http-stdio") {
        let mut paths = vec![Route {
            label: "direct (ours over stdio)",
            role: Role::Direct,
            reach: Reach::Stdio { program: testkit.clone(), args: vec!["stdio".into()] },
        }];
        if config.mcpc_http {
            paths.push(Route {
                label: "`mcpc serve --http 127.0.0.1:0 --server \"<server>\"`",
                role: Role::Bridge,
                reach: Reach::HttpBridge {
                    program: mcpc.clone(),
                    args: vec![
                        "serve".into(),
                        "--http".into(),
                        "127.0.0.1:0".into(),
                        "--server".into(),
                        stdio_line,
                    ],
                    url: BridgeUrl::Stderr,
                },
            });
        }
        if let Some((node, script)) = config.supergateway() {
            let port = free_port()?;
            paths.push(Route {
                label: "`supergateway --stdio \"<server>\" --outputTransport streamableHttp --stateful`",
                role: Role::Bridge,
                reach: Reach::HttpBridge {
                    program: node,
                    args: vec![
                        script,
                        "--stdio".into(),
                        config.stdio_server_line(),
                        "--outputTransport".into(),
                        "streamableHttp".into(),
                        "--stateful".into(),
                        "--port".into(),
                        port.to_string(),
                        "--logLevel".into(),
                        "none".into(),
                    ],
                    url: BridgeUrl::Port(port),
                },
            });
        }
        let note = if config.mcpc_http {
            "supergateway with `--stateful` (one server process per session, as `mcpc serve` keeps one): \
             its default stateless mode starts the server again for every request."
                .to_owned()
        } else {
            "This `mcpc` has no `serve --http` yet: the `mcpc serve --http` row is left out; \
             supergateway's row stays as the Node figure. supergateway with `--stateful` (one server process per session)."
                .to_owned()
        };
        out.push(Scenario {
            title: "HTTP host → stdio server (`mcp-testkit stdio`)",
            paths,
            note,
            _server: None,
        });
    }
    Ok(out)
}
