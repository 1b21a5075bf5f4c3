//! The command line, declared with clap: every command has its own
//! `--help`, and `mcpc completions SHELL` prints a completion script.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The hidden subcommand that runs the embedded demo server on stdio.
pub(crate) const DEMO_SERVER: &str = "__demo-server";

const AFTER_HELP: &str = "\
Servers come from --server, else --config (or $MCPC_CONFIG), else the project's
configuration (mcp.toml, .mcp.json, .cursor/mcp.json or .vscode/mcp.json in the working
directory or above it, up to the repository's root), else mcpc/mcp.toml in the user's
config directory; with none of these, mcpc talks to a demo server it embeds:
  mcpc tools
  mcpc call demo echo message=hi
  mcpc resources read test://static/text/1

--server SPEC: a URL (http:// or https://) is used as it is; anything else is a
command, split into words by the POSIX shell's rules (shell-words): quotes and
backslashes group words, nothing is expanded (no variables, no globs):
  mcpc --server 'node -e \"console.log(1)\"' tools
  mcpc --server \"uvx my-server --root '/path with spaces'\" tools

A project's configuration starts nothing until approved: mcpc shows what it runs and
asks on a terminal; otherwise it refuses (exit 2) until `mcpc trust` approves it, or
--trust runs it once. A change to what it runs asks again.

A VS Code input (${input:ID}) is read from MCPC_INPUT_<ID> (upper-cased, other
characters as _), else asked on a terminal. `mcpc add --from server.json` prints
the configuration entry of a server the MCP Registry describes.

Exit codes: 0 success; 1 the tool reported an error (isError); 2 usage or configuration
error (a bad option, an unknown server, tool or prompt, a URL with user:password@ in
it); 3 connection, protocol or authorization failure, or a timeout; 130, 143, 129
interrupted by SIGINT (Ctrl-C), SIGTERM, SIGHUP (the servers are closed first).

With --output json, results are JSON on stdout, and so are errors:
  {\"error\": {\"kind\": \"...\", \"message\": \"...\", \"server\": \"...\" or null, \"exit_code\": N}}";

/// mcpc: talk to Model Context Protocol servers from the command line.
#[derive(Debug, Parser)]
#[command(name = "mcpc", version, about, after_help = AFTER_HELP, propagate_version = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The options every command takes (before or after its name).
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// The configuration file (`mcp_client` TOML, or `mcpServers` JSON).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        env = "MCPC_CONFIG",
        help = "The configuration file: [mcp_client] TOML, or the mcpServers/servers JSON of Claude Desktop, Cursor or VS Code \
                [default: the project's (approved), then mcpc/mcp.toml in the user's config directory]"
    )]
    pub(crate) config: Option<PathBuf>,
    /// One server instead of a configuration, called `server`: a URL, or a
    /// command (shell-quoted words, see below)
    #[arg(long = "server", id = "server_spec", global = true, value_name = "SPEC")]
    pub(crate) server: Option<String>,
    /// A header for a --server URL, 'Name: value' (repeatable; the last of a name wins)
    #[arg(short = 'H', long = "header", global = true, value_name = "'NAME: VALUE'")]
    pub(crate) headers: Vec<String>,
    /// An environment variable for command servers (repeatable)
    #[arg(short = 'e', long = "env", global = true, value_name = "KEY=VALUE")]
    pub(crate) env: Vec<String>,
    /// The working directory of command servers
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// How results (and errors) are printed
    #[arg(long, global = true, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
    /// How long a request may wait for its answer, in seconds [default: the
    /// server's timeout_secs, else 30]; for `login`, how long to wait for the
    /// browser [default: 300]
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_secs)]
    pub(crate) timeout: Option<f64>,
    /// Each progress notification restarts the request's timeout, up to this
    /// many seconds in all
    #[arg(long, global = true, value_name = "SECS", default_value = "3600", value_parser = parse_secs)]
    pub(crate) max_time: f64,
    /// How long spawning or connecting and the handshake may take, in seconds
    #[arg(long, global = true, value_name = "SECS", default_value = "30", value_parser = parse_secs)]
    pub(crate) connect_timeout: f64,
    /// Show the server's log messages at this level and above (on stderr)
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    pub(crate) log_level: Option<LogLevel>,
    /// A root the servers may work in (repeatable) [default: the current directory]
    #[arg(long = "root", global = true, value_name = "PATH")]
    pub(crate) roots: Vec<PathBuf>,
    /// Accept a server's questions (elicitation) with their defaults when
    /// there is no terminal to ask on (otherwise they are declined)
    #[arg(long, global = true)]
    pub(crate) accept_defaults: bool,
    /// Open the URL of a URL-mode elicitation in the browser (it is always printed)
    #[arg(long, global = true)]
    pub(crate) open: bool,
    /// The progress bar on stderr (auto: when stderr is a terminal)
    #[arg(long, global = true, value_enum, default_value_t = ProgressMode::Auto)]
    pub(crate) progress: ProgressMode,
    /// The protocol revision to speak to every server: auto (probe with
    /// server/discover, then fall back to the initialize handshake) or a
    /// revision such as 2025-11-25 or 2026-07-28 [default: each server's
    /// `protocol`, else auto]
    #[arg(long, global = true, value_name = "REVISION", value_parser = parse_protocol)]
    pub(crate) protocol: Option<ProtocolPin>,
    /// Declare MCP Apps (io.modelcontextprotocol/ui) to the servers, so
    /// those that offer interactive views list their app tools and views
    /// (mcpc shows a view's metadata; it renders none)
    #[arg(long, global = true)]
    pub(crate) apps: bool,
    /// Unknown configuration keys and incomplete entries are errors
    #[arg(long, global = true)]
    pub(crate) strict: bool,
    /// Run a project's configuration (found in or above the working
    /// directory) for this run without its approval being recorded (for
    /// scripts; `mcpc trust` approves it for good)
    #[arg(long, global = true)]
    pub(crate) trust: bool,
    /// Allow tool calls the approval policy asks about when there is no
    /// terminal to ask on (never those the managed policy pins to `ask`)
    #[arg(long, global = true)]
    pub(crate) yes: bool,
    /// Cut a tool's result to this many characters of text, as a host does
    /// for a model; the whole result is kept in a file under the user's
    /// cache directory, which the cut result names [default: the server's
    /// max_result_chars; without either, results are shown whole]
    #[arg(long, global = true, value_name = "CHARS", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_result: Option<u64>,
    /// More diagnostics on stderr (repeatable: -v info, -vv debug, -vvv
    /// trace); RUST_LOG takes a full filter
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

/// `--protocol`: `None` for auto, else the revision.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProtocolPin(pub(crate) Option<mcp_proto::ProtocolVersion>);

fn parse_protocol(text: &str) -> Result<ProtocolPin, String> {
    mcp_host_registry::parse_protocol(text).map(ProtocolPin)
}

/// A number of seconds: positive and at most a day.
fn parse_secs(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!("expected a number of seconds from 0 to 86400, got {text:?}")),
    }
}

/// What `mcpc serve` lists to the host as tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ToolsMode {
    /// Every tool of every served server
    All,
    /// Two tools: `search_tools` and `call_tool`
    Search,
    /// `search` when the servers offer more than 40 tools at the start,
    /// else `all`
    Auto,
}

/// What `tools --schema-for` shapes schemas for
/// ([`mcp_host_registry::shape::SchemaTarget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaFor {
    /// Strict function calling: every property required, no additional
    /// properties, optional ones nullable.
    Strict,
    /// No $ref/$defs, no null among choices, no formats.
    Plain,
    /// As the server sent it.
    Unchanged,
}

impl SchemaFor {
    /// The registry's target.
    pub(crate) fn target(self) -> mcp_host_registry::shape::SchemaTarget {
        use mcp_host_registry::shape::SchemaTarget;
        match self {
            SchemaFor::Strict => SchemaTarget::Strict,
            SchemaFor::Plain => SchemaTarget::Plain,
            SchemaFor::Unchanged => SchemaTarget::Unchanged,
        }
    }
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    /// For people.
    Text,
    /// One JSON document on stdout (errors too).
    Json,
}

/// When the progress bar is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The server log levels (RFC 5424 severities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// What to do.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the configured servers
    Servers {
        /// Connect to each and show the protocol version and era it speaks
        /// (modern: 2026-07-28, stateless; legacy: the initialize handshake)
        #[arg(long)]
        connect: bool,
    },
    /// The server's identity, capabilities, instructions, protocol version and era
    Info {
        /// The server (may be left out when there is only one)
        server: Option<String>,
    },
    /// List tools (of every server when none is named), each with its pin:
    /// new (pinned now), changed since pinned (and withheld under the
    /// `block` pin policy), or nothing when it matches its pin
    #[command(after_help = "Pins are kept beside the configuration file \
(<config>.pins.json); with --server or the demo server, only for this run. \
`mcpc pins approve SERVER [TOOL]` accepts changed definitions.")]
    Tools {
        /// The server
        server: Option<String>,
        /// Rank every allowed tool by relevance to this text (BM25 over
        /// names, titles and descriptions) instead of listing them
        #[arg(long, value_name = "QUERY")]
        search: Option<String>,
        /// How many tools --search shows
        #[arg(short = 'k', long, value_name = "N", default_value_t = 10, requires = "search")]
        limit: usize,
        /// Print each tool's input schema shaped for a model provider
        /// (strict: strict function calling; plain: no $ref, null choices
        /// or formats; unchanged) instead of listing the tools
        #[arg(long, value_enum, value_name = "TARGET", conflicts_with = "search")]
        schema_for: Option<SchemaFor>,
    },
    /// Tool pins: accept tool definitions that changed since they were pinned
    #[command(subcommand)]
    Pins(PinsCommand),
    /// Call a tool: `call [SERVER] TOOL [key=value ...]`
    #[command(
        after_help = "A key=value value follows the tool's input schema: a string property takes \
the text as it is; numbers, booleans, arrays and objects are parsed as JSON. --json gives \
the arguments as one JSON object (key=value pairs override it)."
    )]
    Call(CallArgs),
    /// A round trip to a server, timed apart from the connection
    Ping {
        /// The server
        server: Option<String>,
    },
    /// Resources: list, templates, read, subscribe
    #[command(subcommand)]
    Resources(ResourcesCommand),
    /// Prompts: list, get
    #[command(subcommand)]
    Prompts(PromptsCommand),
    /// Completions a server suggests for an argument of a prompt or a resource template
    #[command(after_help = "Examples:\n  mcpc complete --prompt greet name=al\n  \
mcpc complete --resource 'test://static/text/{id}' id=")]
    Complete(CompleteArgs),
    /// Tasks: get, update, cancel (the tasks extension, 2026-07-28); list,
    /// get, cancel, result (experimental, 2025-11-25)
    #[command(subcommand)]
    Tasks(TasksCommand),
    /// Print the server's notifications (list changes, resource updates, log
    /// messages, ...) until Ctrl-C; exits 3 when no more can arrive (the
    /// stream carrying them ended for good)
    Listen {
        /// The server
        server: Option<String>,
        /// Also subscribe to these resources' updates (repeatable)
        #[arg(long = "resource", value_name = "URI")]
        resources: Vec<String>,
    },
    /// Serve the servers to a host that speaks MCP on this process's
    /// stdin and stdout (either protocol era): one server with its names
    /// unchanged, or every configured server as one (tool and prompt names
    /// made collision-free). Logs go to stderr
    #[command(after_help = "\
A desktop host's mcpServers entry:
  {\"command\": \"mcpc\", \"args\": [\"serve\", \"--server\", \"https://example.com/mcp\"]}

One server (--server, a configuration with one server, or --only NAME) keeps its names;
several are served as one, each tool and prompt named SERVER__NAME (shortened with a hash
when needed). The servers' tool policy, pins and approval apply: a call the policy marks
`ask` is asked of the host's user (elicitation) when the host offers it, else refused.

--tools search gives the host two tools instead of every tool: search_tools (a query in
words: the best matching tools, with their names, descriptions and input schemas) and
call_tool (a name search_tools gave, and its arguments); --tools auto does so when the
servers offer more than 40 tools when the bridge starts. --schema-for strict|plain shapes
the input schemas the host gets for a model provider, and maps each call's arguments back.

A server that needs an OAuth login (it answered 401) is logged in on the spot: the
authorization URL is opened in the browser and printed on stderr, then the bridge
connects again (one login per server per 10 minutes, waiting up to 300 s).

Over HTTP (--http ADDR): Streamable HTTP on /mcp, both protocol eras; loopback by default.
Off loopback a bearer token is required (--token-file, or $MCPC_SERVE_TOKEN; else one
is made up and printed once). Each host session is served on its own; what a server
asks goes to the host session whose call is running, and is refused when several are.
  mcpc serve --http 127.0.0.1:8080 --server 'my-server --stdio'")]
    Serve {
        /// Serve only these configured servers (repeatable)
        #[arg(long = "only", value_name = "NAME")]
        only: Vec<String>,
        /// Which tools the host sees: every tool, a search tool and a call
        /// tool, or search above 40 tools
        #[arg(long = "tools", value_enum, default_value_t = ToolsMode::All)]
        tools: ToolsMode,
        /// Give the host each tool's input schema shaped for a model
        /// provider (the arguments of its calls mapped back)
        #[arg(long = "schema-for", value_name = "TARGET", value_enum, default_value_t = SchemaFor::Unchanged)]
        schema_for: SchemaFor,
        /// Serve hosts over Streamable HTTP on ADDR instead of stdio
        /// (`PORT`, `HOST:PORT`; without a host, 127.0.0.1; port 0: any free
        /// one); the URL is printed to stderr
        #[arg(long = "http", value_name = "ADDR")]
        http: Option<String>,
        /// The bearer token hosts must send (`Authorization: Bearer`), read
        /// from this file [default: $MCPC_SERVE_TOKEN; required off
        /// loopback, where one is made up and printed when neither is given]
        #[arg(long = "token-file", value_name = "PATH", requires = "http")]
        token_file: Option<std::path::PathBuf>,
        /// An `Origin` allowed besides the loopback ones
        /// (`scheme://host[:port]`, repeatable)
        #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
        allow_origins: Vec<String>,
        /// The most host sessions at once over HTTP [default: 4096]
        #[arg(long = "max-sessions", value_name = "N", requires = "http",
              value_parser = clap::value_parser!(u32).range(1..))]
        max_sessions: Option<u32>,
        /// End a host session unused for this many seconds over HTTP (its
        /// upstream calls cancelled) [default: 1800]
        #[arg(long = "idle-timeout", value_name = "SECS", requires = "http",
              value_parser = clap::value_parser!(u32).range(1..))]
        idle_timeout: Option<u32>,
        /// The most requests a host session runs at once; one more is
        /// answered at once with a busy error (-32010) the host may retry
        /// [default: 256; over HTTP the stateless-era hosts share one
        /// session, whose default is 1024; this sets both]
        #[arg(long = "max-in-flight", value_name = "N",
              value_parser = clap::value_parser!(u32).range(1..))]
        max_in_flight: Option<u32>,
        /// The most events waiting unsent on one SSE stream to a host over
        /// HTTP; at the cap a host that does not read has its stream ended
        /// (it resumes with Last-Event-ID) or, in the stateless era, cut
        /// and its call cancelled [default: 256]
        #[arg(long = "max-unsent-events", value_name = "N", requires = "http",
              value_parser = clap::value_parser!(u32).range(1..))]
        max_unsent_events: Option<u32>,
    },
    /// OAuth login in the browser; the tokens are kept for later runs
    Login {
        /// The server (configured with auth = { kind = "oauth" })
        server: String,
        /// Fetch the authorization URL and read its redirect instead of
        /// asking a person (tests and CI)
        #[arg(long, hide = true)]
        headless: bool,
        /// Log in as this account (a label such as `work`), whose tokens
        /// are kept apart from the others'; default: the server's
        /// configured `account`, else the default account
        #[arg(long, value_name = "LABEL")]
        account: Option<String>,
    },
    /// Revoke the server's OAuth tokens where its authorization server
    /// offers it, and delete them
    Logout {
        /// The server
        server: Option<String>,
        /// Only this account's tokens (default: the configured `account`,
        /// else the default account)
        #[arg(long, value_name = "LABEL")]
        account: Option<String>,
    },
    /// The accounts that hold OAuth tokens, per server (no token is shown);
    /// `accounts migrate --to keychain|file` moves the stored tokens
    #[command(args_conflicts_with_subcommands = true)]
    Accounts {
        /// Only this server
        server: Option<String>,
        #[command(subcommand)]
        action: Option<AccountsCommand>,
    },
    /// Approve the project configuration (in or above the working
    /// directory, or FILE) as it is now, showing what it runs; its servers
    /// may then start. A change to what it runs needs a new approval
    Trust {
        /// The configuration file [default: the project's]
        file: Option<PathBuf>,
        /// Forget its approval instead
        #[arg(long)]
        revoke: bool,
    },
    /// Print the configuration entry of a server an MCP Registry
    /// `server.json` describes (its first package, else its first remote),
    /// as a TOML entry of the mcp_client table; the values to supply
    /// become ${NAME} references, listed in comments. Nothing is written:
    /// append it to your configuration yourself
    Add {
        /// The server.json file
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        /// Import its N-th package (1-based)
        #[arg(long, value_name = "N", conflicts_with = "remote", value_parser = clap::value_parser!(u64).range(1..))]
        package: Option<u64>,
        /// Import its N-th remote (1-based)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        remote: Option<u64>,
        /// The server's name [default: the last part of the file's name]
        #[arg(long)]
        name: Option<String>,
    },
    /// Print a shell completion script: `mcpc completions bash > /etc/bash_completion.d/mcpc`
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The embedded demo server, on this process's stdio
    #[command(name = DEMO_SERVER, hide = true)]
    DemoServer,
}

/// `call`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The server (optional), the tool and its `key=value` arguments.
    #[arg(
        required = true,
        num_args = 1..,
        value_name = "ARGS",
        help = "[SERVER] TOOL [key=value ...]"
    )]
    pub(crate) words: Vec<String>,
    /// The arguments as a JSON object
    #[arg(long, value_name = "'{...}'")]
    pub(crate) json: Option<String>,
    /// Run the call as a task: its id and each status go to stderr, then
    /// its result is waited for (up to --max-time), its input requests
    /// answered as a call's are. 2025-11-25: asked of the server;
    /// 2026-07-28 (the tasks extension): the server decides, and may
    /// answer at once
    #[arg(long)]
    pub(crate) task: bool,
    /// With --task: print the task (its id for `mcpc tasks`) and do not wait
    #[arg(long, requires = "task")]
    pub(crate) detach: bool,
}

/// `resources` subcommands.
/// `mcpc pins ...`
#[derive(Debug, Subcommand)]
pub(crate) enum PinsCommand {
    /// Take the server's current definitions as the pins: of one tool, or
    /// of every tool when none is named
    Approve {
        /// The server
        server: String,
        /// The tool (every tool of the server when left out)
        tool: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ResourcesCommand {
    /// List the resources
    List {
        /// The server
        server: Option<String>,
    },
    /// List the resource templates
    Templates {
        /// The server
        server: Option<String>,
    },
    /// Read a resource: `read [SERVER] URI`
    Read {
        /// The server (optional) and the resource's URI.
        #[arg(num_args = 1..=2, required = true, value_name = "ARGS", help = "[SERVER] URI")]
        words: Vec<String>,
    },
    /// Subscribe to a resource and print each update (reading it again)
    /// until Ctrl-C: `subscribe [SERVER] URI`
    Subscribe {
        /// The server (optional) and the resource's URI.
        #[arg(num_args = 1..=2, required = true, value_name = "ARGS", help = "[SERVER] URI")]
        words: Vec<String>,
    },
}

/// `prompts` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum PromptsCommand {
    /// List the prompts
    List {
        /// The server
        server: Option<String>,
    },
    /// Get a prompt with its arguments: `get [SERVER] PROMPT [key=value ...]`
    Get {
        /// The server (optional), the prompt and its `key=value` arguments.
        #[arg(num_args = 1.., required = true, value_name = "ARGS", help = "[SERVER] PROMPT [key=value ...]")]
        words: Vec<String>,
    },
}

/// `complete`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct CompleteArgs {
    /// The prompt whose argument is completed
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "resource",
        required_unless_present = "resource"
    )]
    pub(crate) prompt: Option<String>,
    /// The resource template whose argument is completed
    #[arg(long, value_name = "URI_TEMPLATE")]
    pub(crate) resource: Option<String>,
    /// The server (optional), the argument and its value so far, other
    /// arguments as context.
    #[arg(
        num_args = 1..,
        required = true,
        value_name = "ARGS",
        help = "[SERVER] ARGUMENT=VALUE-SO-FAR [context key=value ...]"
    )]
    pub(crate) words: Vec<String>,
}

/// `accounts` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum AccountsCommand {
    /// Move every stored OAuth token (all servers and accounts) from the
    /// token files into the OS keychain, or back. An entry leaves the
    /// source only once the target holds it; running it again finishes an
    /// interrupted move. Set `token_store` in the configuration to use the
    /// target afterwards
    Migrate {
        /// Where to
        #[arg(long, value_enum, value_name = "STORE")]
        to: MigrateTo,
    },
}

/// The target of `accounts migrate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MigrateTo {
    /// The OS keychain
    Keychain,
    /// The token files
    File,
}

/// `tasks` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum TasksCommand {
    /// List the server's tasks (2025-11-25 only: the tasks extension has
    /// no list)
    List {
        /// The server
        server: Option<String>,
    },
    /// A task's state, and its result once done (its input requests while
    /// it waits for input): `get [SERVER] TASK_ID`
    Get {
        /// The server (optional) and the task's id.
        #[arg(num_args = 1..=2, required = true, value_name = "ARGS", help = "[SERVER] TASK_ID")]
        words: Vec<String>,
    },
    /// Cancel a task: `cancel [SERVER] TASK_ID`
    Cancel {
        /// The server (optional) and the task's id.
        #[arg(num_args = 1..=2, required = true, value_name = "ARGS", help = "[SERVER] TASK_ID")]
        words: Vec<String>,
    },
    /// Answer a waiting task's input requests (the tasks extension,
    /// 2026-07-28): `update [SERVER] TASK_ID --json '{"KEY": RESPONSE}'`,
    /// each key one of those `tasks get` shows
    #[command(after_help = "Example:\n  mcpc tasks update task-3 --json \
'{\"confirm\": {\"action\": \"accept\", \"content\": {\"confirm\": true}}}'")]
    Update {
        /// The server (optional) and the task's id.
        #[arg(num_args = 1..=2, required = true, value_name = "ARGS", help = "[SERVER] TASK_ID")]
        words: Vec<String>,
        /// The responses, by the keys of the task's input requests (a JSON
        /// object)
        #[arg(long, required = true, value_name = "'{...}'")]
        json: String,
    },
    /// Wait for a task's result (up to --max-time) and print it (2025-11-25
    /// only: `get` shows the result of the extension's tasks):
    /// `result [SERVER] TASK_ID`
    Result {
        /// The server (optional) and the task's id.
        #[arg(num_args = 1..=2, required = true, value_name = "ARGS", help = "[SERVER] TASK_ID")]
        words: Vec<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn options_go_anywhere() {
        let cli = Cli::try_parse_from([
            "mcpc", "tools", "demo", "--output", "json", "-vv", "--root", "/a", "--root", "/b",
        ])
        .unwrap();
        assert_eq!(cli.global.output, Output::Json);
        assert_eq!(cli.global.verbose, 2);
        assert_eq!(cli.global.roots.len(), 2);
        assert!(matches!(cli.command, Command::Tools { server: Some(ref s), .. } if s == "demo"));
        // `--server` (global) and a command's SERVER are two things.
        let cli = Cli::try_parse_from(["mcpc", "--server", "srv stdio", "ping", "other"]).unwrap();
        assert_eq!(cli.global.server.as_deref(), Some("srv stdio"));
        assert!(matches!(cli.command, Command::Ping { server: Some(ref s) } if s == "other"));
        let cli = Cli::try_parse_from(["mcpc", "ping", "--server", "srv stdio"]).unwrap();
        assert_eq!(cli.global.server.as_deref(), Some("srv stdio"));
        assert!(matches!(cli.command, Command::Ping { server: None }));
        let cli =
            Cli::try_parse_from(["mcpc", "call", "demo", "add", "a=1", "--json", "{}"]).unwrap();
        match cli.command {
            Command::Call(c) => {
                assert_eq!(c.words, ["demo", "add", "a=1"]);
                assert_eq!(c.json.as_deref(), Some("{}"));
            }
            other => panic!("{other:?}"),
        }
        for bad in [
            &["mcpc"][..],
            &["mcpc", "frobnicate"],
            &["mcpc", "tools", "a", "b"],
            &["mcpc", "--output", "yaml", "tools"],
            &["mcpc", "--timeout", "0", "tools"],
            &["mcpc", "--timeout", "soon", "tools"],
            &["mcpc", "tools", "--headless"],
            &["mcpc", "complete", "x=1"],
            &["mcpc", "resources", "read"],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
