//! The command line, parsed by hand: options may come anywhere before `--`.

use std::path::PathBuf;
use std::time::Duration;

/// How long `mcpc login` waits for the user by default.
pub(crate) const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest `--timeout` accepted (one hour).
const MAX_LOGIN_TIMEOUT: u64 = 3600;

/// The help text.
pub(crate) const USAGE: &str = "\
mcpc: talk to Model Context Protocol servers

Usage:
  mcpc [options] servers [--connect]          list the configured servers; with --connect,
                                              connect to each and show the protocol version
                                              and era it speaks (modern: 2026-07-28, stateless;
                                              legacy: the initialize handshake)
  mcpc [options] tools [SERVER]               list tools (of every server when none is named),
                                              with each server's protocol version and era
  mcpc [options] call [SERVER] TOOL [key=value ...] [--json '{...}']
                                              call a tool
  mcpc [options] ping [SERVER]                round trip to a server
  mcpc [options] login SERVER [--timeout SECS]
                                              OAuth login in the browser; the tokens are kept
                                              for later runs (default timeout 300 s)
  mcpc [options] logout [SERVER]              revoke the server's OAuth tokens where its
                                              authorization server offers it, and delete them

SERVER may be left out when there is only one server (as with --server).

Options:
  --config PATH           the configuration: [mcp_client] TOML, or mcpServers JSON (.json)
                          (default: ./mcp.toml, then the user's config dir: mcpc/mcp.toml)
  --server SPEC           one server instead of a configuration, called `server`:
                            a URL:     --server https://example.com/mcp
                            a command: --server 'npx -y @modelcontextprotocol/server-everything'
  -H, --header 'N: v'     a header for a --server URL (repeatable; the last of a name wins)
  --output text|json      how results are printed (default text)
  --json '{...}'          call arguments as a JSON object (key=value pairs override it)
  --progress auto|always|never
                          progress bar on stderr (auto: when stderr is a terminal)
  --strict                unknown configuration keys and incomplete entries are errors
  -h, --help              this text
  -V, --version           the version

With no configuration and no --server, mcpc talks to a demo server it embeds:
  mcpc tools
  mcpc call demo echo message=hi

Exit codes: 0 success, 1 the tool reported an error, 2 usage or configuration error,
3 connection, protocol or authorization failure, 130 interrupted (Ctrl-C).
";

/// The hidden subcommand that runs the embedded demo server on stdio.
pub(crate) const DEMO_SERVER: &str = "__demo-server";

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    Text,
    Json,
}

/// When the progress bar is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    Auto,
    Always,
    Never,
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Servers,
    Tools(Option<String>),
    /// `[SERVER] TOOL [key=value ...]`, resolved once the servers are known.
    Call(Vec<String>),
    Ping(Option<String>),
    Login(String),
    Logout(Option<String>),
    Help,
    Version,
    DemoServer,
}

/// The parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cli {
    pub(crate) config: Option<PathBuf>,
    pub(crate) server: Option<String>,
    pub(crate) headers: Vec<String>,
    pub(crate) output: Output,
    pub(crate) progress: ProgressMode,
    pub(crate) strict: bool,
    pub(crate) json: Option<String>,
    /// `--connect` of `servers`: connect to each server and show its
    /// protocol version and era.
    pub(crate) connect: bool,
    /// `--timeout SECS` of `login`.
    pub(crate) login_timeout: Duration,
    /// The hidden `--headless` of `login` (tests and CI): the authorization
    /// URL is fetched and its redirect read instead of asking a person, for
    /// authorization servers that approve at once.
    pub(crate) headless: bool,
    pub(crate) command: Command,
}

/// Parses the arguments (without the program name). The error is a usage
/// message.
pub(crate) fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Cli, String> {
    let mut cli = Cli {
        config: None,
        server: None,
        headers: Vec::new(),
        output: Output::Text,
        progress: ProgressMode::Auto,
        strict: false,
        json: None,
        connect: false,
        login_timeout: DEFAULT_LOGIN_TIMEOUT,
        headless: false,
        command: Command::Help,
    };
    let mut login_option = None;
    let mut positional = Vec::new();
    let mut args = args.into_iter();
    let mut help = false;
    let mut version = false;
    while let Some(arg) = args.next() {
        if arg == "--" {
            positional.extend(args.by_ref());
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            positional.push(arg);
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args.next().ok_or_else(|| format!("{name} needs {what}")),
            }
        };
        match name.as_str() {
            "-h" | "--help" => help = true,
            "-V" | "--version" => version = true,
            "--strict" => cli.strict = true,
            "--config" => cli.config = Some(PathBuf::from(value("a path")?)),
            "--server" => cli.server = Some(value("a URL or a command")?),
            "-H" | "--header" => cli.headers.push(value("'Name: value'")?),
            "--json" => cli.json = Some(value("a JSON object")?),
            "--connect" => cli.connect = true,
            "--timeout" => {
                let v = value("a number of seconds")?;
                cli.login_timeout = match v.parse::<u64>() {
                    Ok(n) if (1..=MAX_LOGIN_TIMEOUT).contains(&n) => Duration::from_secs(n),
                    _ => {
                        return Err(format!(
                            "--timeout must be a number of seconds from 1 to {MAX_LOGIN_TIMEOUT}, not {v:?}"
                        ));
                    }
                };
                login_option = Some("--timeout");
            }
            "--headless" => {
                cli.headless = true;
                login_option = Some("--headless");
            }
            "--output" => {
                cli.output = match value("text or json")?.as_str() {
                    "text" => Output::Text,
                    "json" => Output::Json,
                    other => return Err(format!("--output must be text or json, not {other:?}")),
                }
            }
            "--progress" => {
                cli.progress = match value("auto, always or never")?.as_str() {
                    "auto" => ProgressMode::Auto,
                    "always" => ProgressMode::Always,
                    "never" => ProgressMode::Never,
                    other => {
                        return Err(format!(
                            "--progress must be auto, always or never, not {other:?}"
                        ));
                    }
                }
            }
            _ => return Err(format!("unknown option {name}")),
        }
    }
    if help {
        cli.command = Command::Help;
        return Ok(cli);
    }
    if version {
        cli.command = Command::Version;
        return Ok(cli);
    }
    let mut rest = positional.into_iter();
    let Some(command) = rest.next() else {
        return Err("no command given".into());
    };
    let rest: Vec<String> = rest.collect();
    let at_most_one = |what: &str, rest: &[String]| -> Result<Option<String>, String> {
        match rest {
            [] => Ok(None),
            [one] => Ok(Some(one.clone())),
            _ => Err(format!("{what} takes at most one SERVER")),
        }
    };
    cli.command = match command.as_str() {
        "servers" if rest.is_empty() => Command::Servers,
        "servers" => return Err("servers takes no arguments".into()),
        "tools" => Command::Tools(at_most_one("tools", &rest)?),
        "ping" => Command::Ping(at_most_one("ping", &rest)?),
        "login" => match rest.as_slice() {
            [one] => Command::Login(one.clone()),
            _ => return Err("login takes one SERVER".into()),
        },
        "logout" => Command::Logout(at_most_one("logout", &rest)?),
        "call" if rest.is_empty() => return Err("call needs a TOOL".into()),
        "call" => Command::Call(rest),
        "help" => Command::Help,
        DEMO_SERVER => Command::DemoServer,
        other => return Err(format!("unknown command {other:?}")),
    };
    if cli.json.is_some() && !matches!(cli.command, Command::Call(_)) {
        return Err("--json is for call only".into());
    }
    if cli.connect && cli.command != Command::Servers {
        return Err("--connect is for servers only".into());
    }
    if let Some(option) = login_option.filter(|_| !matches!(cli.command, Command::Login(_))) {
        return Err(format!("{option} is for login only"));
    }
    Ok(cli)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(line: &str) -> Result<Cli, String> {
        parse(line.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn commands_and_options() {
        let cases: &[(&str, Command)] = &[
            ("servers", Command::Servers),
            ("tools", Command::Tools(None)),
            ("tools demo", Command::Tools(Some("demo".into()))),
            ("--output json tools demo", Command::Tools(Some("demo".into()))),
            ("ping", Command::Ping(None)),
            ("login remote", Command::Login("remote".into())),
            ("logout", Command::Logout(None)),
            ("logout remote", Command::Logout(Some("remote".into()))),
            (
                "call demo echo message=hi",
                Command::Call(vec!["demo".into(), "echo".into(), "message=hi".into()]),
            ),
            ("call echo -- -x", Command::Call(vec!["echo".into(), "-x".into()])),
            ("--help tools", Command::Help),
            ("-V", Command::Version),
            ("__demo-server", Command::DemoServer),
        ];
        for (line, expected) in cases {
            assert_eq!(&parse_str(line).unwrap().command, expected, "{line}");
        }
        let cli =
            parse_str("--config a.toml --output=json tools --progress never --strict").unwrap();
        assert_eq!(cli.config, Some(PathBuf::from("a.toml")));
        assert_eq!(cli.output, Output::Json);
        assert_eq!(cli.progress, ProgressMode::Never);
        assert!(cli.strict);
        assert!(!cli.connect);
        assert_eq!(cli.login_timeout, DEFAULT_LOGIN_TIMEOUT);
        assert!(!cli.headless);
        let cli = parse_str("servers --connect").unwrap();
        assert_eq!(cli.command, Command::Servers);
        assert!(cli.connect);
        let cli = parse_str("login remote --timeout 20 --headless").unwrap();
        assert_eq!(cli.login_timeout, Duration::from_secs(20));
        assert!(cli.headless);
        let cli = parse(
            ["--server", "http://h/mcp", "-H", "A: 1", "--header=B: 2", "tools"].map(String::from),
        )
        .unwrap();
        assert_eq!(cli.server.as_deref(), Some("http://h/mcp"));
        assert_eq!(cli.headers, ["A: 1", "B: 2"]);
    }

    #[test]
    fn usage_errors() {
        for line in [
            "",
            "frobnicate",
            "servers extra",
            "tools a b",
            "ping a b",
            "login",
            "call",
            "--output yaml tools",
            "--progress sometimes tools",
            "--bogus tools",
            "--config",
            "tools --json {}",
            "tools --connect",
            "tools --timeout 5",
            "ping --headless",
            "login remote --timeout 0",
            "login remote --timeout soon",
            "login remote --timeout 3601",
        ] {
            assert!(parse_str(line).is_err(), "{line:?} should be refused");
        }
    }
}
