//! # mcp-testkit
//!
//! A scriptable Model Context Protocol server for testing MCP *clients*: the
//! toolkit's integration tests, its benchmarks and the CLI's demo talk to it.
//! Its tools misbehave on request (hang, crash, flood stdout with garbage,
//! ask the client questions mid-call), so a client's handling of each fault
//! can be tested against a real process.
//!
//! ## What it is not
//!
//! Not a production server, and not a framework for writing one: the tools
//! are fixed, authentication is a fixed-token check, and the `crash` tool ends the
//! process on request. It speaks revisions 2024-11-05 to 2025-11-25 (it
//! answers with the client's revision when it knows it, else 2025-11-25)
//! and, with [`Config::era`] `Modern` or `Both` (`--era`), the stateless
//! revision 2026-07-28 (see below).
//!
//! ## Design
//!
//! ```text
//!  stdin ─lines─▶ run_stdio ──handle_json()──▶ Server ──▶ Outgoing queue ─▶ stdout
//!                (driver: moves bytes)        (core: decides, spawns     (one writer:
//!                                              waiting tools as tasks)    no interleaving)
//!
//!  POST /mcp ─▶ serve_http: mcp_server_io's HTTP service ──▶ one Session per HTTP
//!               (+ the testkit's hooks: faults, auth)          session, same handler
//! ```
//!
//! [`Server`] is the transport-independent core, an `mcp_server_io`
//! session whose handler is the testkit's: a driver feeds it each message
//! ([`Server::handle`], [`Server::handle_json`]) and delivers each
//! [`Outgoing`] item from the queue [`Server::new`] returns. Every outgoing
//! message names the client request it belongs to; a driver that serves
//! several clients from one core ([`Server::handle_from`]) tells their
//! requests apart by origin, as they may use the same ids. [`run_stdio`] is
//! the stdio driver (`mcp-testkit stdio`); `serve_http` is the HTTP driver
//! (`mcp-testkit http`, feature `http`): `mcp_server_io`'s Streamable HTTP
//! service with a session of the same handler per HTTP session, which
//! tests in other crates can also run in-process.
//!
//! The protocol rules and the transport machinery come from the server
//! half of the transports, `mcp-server-io`: the era rules (`initialize`
//! checks and negotiation, the stateless `_meta`, `resultType`, the
//! `subscriptions/listen` filter), the [`Outgoing`] queue, stdio framing,
//! and on HTTP the whole Streamable HTTP service (`mcp_server_io::http`:
//! routing, sessions, SSE streams and resumption, the stateless era's
//! POSTs, the legacy HTTP+SSE pair, the request guards) that a product
//! server uses too. What is the testkit's own: its tools, resources and
//! prompts, its configuration, every fault switch (the service's test
//! hooks), its authorization checks, and what `HttpServerHandle` records.
//!
//! ## Optional features
//!
//! - **`http`** (default): the Streamable HTTP driver (`serve_http`,
//!   `HttpServerHandle`, `RequestRecord`, the binary's `http` subcommand)
//!   and `oauth::FakeAuthServer`, with hyper's server, hyper-util, http,
//!   http-body-util and bytes. Without it the crate is the core and the
//!   stdio driver, which is all an embedded stdio demo needs
//!   (`mcp-testkit = { default-features = false }`, as `mcpc` does);
//!   [`HttpConfig`] and `parse_args` still read the `http` options, and the
//!   binary refuses the subcommand.
//!
//! ## Tools
//!
//! | tool | arguments | does |
//! |---|---|---|
//! | `echo` | `message: string` | text = message; nothing else (the benchmark's hot path) (task) |
//! | `add` | `a: number, b: number` | text of the sum, `structuredContent {sum}`, with an `outputSchema` (task) |
//! | `slow` | `ms: integer, steps?: integer` | sleeps `ms`, sending `steps` progress notifications when the request has a progress token; text `done` (task) |
//! | `hang` | | never answers (until cancelled) (task) |
//! | `fail` | `message?: string` | a result with `isError: true` (task) |
//! | `crash` | `code?: integer, stderr?: string` | writes `stderr` (default `testkit: crashing on purpose`) to stderr and exits with `code` (default 3), unanswered |
//! | `big` | `bytes: integer` | one text block of exactly `bytes` ASCII bytes |
//! | `noisy` | `lines?: integer, long_line_bytes?: integer` | garbage lines on stdout (non-JSON, non-JSON-RPC JSON, a reply to an unknown id, an over-long line), `lines` lines on stderr, then a normal answer |
//! | `ask` | `what: "ping" \| "roots" \| "elicit" \| "sample"` | sends the client that request mid-call, returns its answer as JSON text `{"result":…}` or `{"error":…}` |
//! | `change` | `list?: "tools" \| "resources" \| "prompts"` | `tools` (the default): switches the tool `extra` in or out of the list, sends `notifications/tools/list_changed`; `resources`, `prompts`: sends `notifications/resources/list_changed`, `notifications/prompts/list_changed` (the lists stay as they are); each related to the call |
//! | `cancelled_log` | | JSON text: the request ids of every `notifications/cancelled` received |
//! | `spawn_child` | `inherit_stdio?: boolean` | starts `sleep 300` in the server's process group, returns its pid |
//! | `env` | `name: string` | JSON text: the variable's value in the server, or `null` |
//! | `log` | `level: string, message: string` | sends `notifications/message` (if `logging/setLevel` allows), then answers |
//! | `annotated` | `region?: string, priority?: integer, dry_run?: boolean, note?: string` | JSON text of its arguments; the first three carry `x-mcp-header` (`Region`, `Priority`, `Dry-Run`), so an HTTP client also sends them as `Mcp-Param-*` headers, which the request log shows |
//! | `touch` | `uri: string` | sends `notifications/resources/updated {uri}` (related to no request) if the client subscribed to `uri`; text `touched`, else `not subscribed` |
//! | `extra` | | listed only after `change`; text `extra` |
//!
//! Invalid arguments give a tool error (`isError: true`); an unknown tool,
//! `-32602`. The tools marked (task) declare `execution.taskSupport:
//! "optional"` (see Tasks below). Besides `tools/*` the server answers
//! `initialize`, `ping`, `logging/setLevel` and the methods below; any other
//! method gets `-32601`, and anything but `initialize` and `ping` before
//! `initialize` gets `-32600`. A
//! `notifications/cancelled` aborts the call it names (no reply is sent) and
//! is recorded for `cancelled_log`. Server-to-client requests have the ids
//! `"srv-1"`, `"srv-2"`, ...; `ask` sends its request even when the client
//! did not declare the capability, so a test can check that the client
//! answers `-32601`.
//!
//! ## Resources, prompts, completion
//!
//! Declared as `resources: {subscribe: true, listChanged: true}`,
//! `prompts: {listChanged: true}` and `completions: {}`.
//!
//! | method | answers |
//! |---|---|
//! | `resources/list` | `test://static/text/1` .. `test://static/text/5` (`text/plain`), then `test://static/blob/1` (`application/octet-stream`, the bytes 0 to 15), with `name`, `title`, `description`, `size`; paginated as `tools/list` |
//! | `resources/templates/list` | one template, `test://static/text/{id}` |
//! | `resources/read` | `{contents: [{uri, mimeType, text}]}` or `{..., blob}` (base64); a URI that is not listed gets `-32002` `Resource not found` with `data {uri}` (in the stateless era `-32602`, as SEP-2164 asks) |
//! | `resources/subscribe` | `{}`, remembering the URI for `touch`; a URI that is not listed gets `-32002` |
//! | `resources/unsubscribe` | `{}` (also when not subscribed) |
//! | `prompts/list` | `simple` (no arguments) and `greet` (required argument `name`); paginated |
//! | `prompts/get` | `simple`: one user text message; `greet`: one user message `Hello, {name}!`; a missing required argument, a non-string argument or an unknown prompt gets `-32602` |
//! | `completion/complete` | for `ref/prompt` `greet`, argument `name`: those of `alice`, `bob`, `carol` starting with the value; for `ref/resource` `test://static/text/{id}`, argument `id`: those of `1` .. `5`; anything else no values; always with `total` and `hasMore: false` |
//!
//! A request without the parameters the method needs (`uri`, `name`, `ref`,
//! `argument`, `taskId`) gets `-32602`.
//!
//! ## Tasks (experimental, 2025-11-25)
//!
//! When the negotiated revision is 2025-11-25 or later (or unknown), the
//! server declares `tasks: {list: {}, cancel: {}, requests: {tools: {call:
//! {}}}}`. Under older revisions there are no `tasks/*` methods (`-32601`)
//! and a `task` parameter is ignored.
//!
//! - A `tools/call` with `task: {ttl?}` is answered at once with
//!   `{task: {taskId, status: "working", createdAt, lastUpdatedAt, ttl,
//!   pollInterval}}` (ids `task-1`, `task-2`, ...; RFC 3339 times; `ttl` as
//!   asked, at most one hour, ten minutes when not given; `pollInterval`
//!   100 ms) and the tool runs in the background. A tool without
//!   `execution.taskSupport` gets `-32601`, an unknown tool or a malformed
//!   `task` `-32602`.
//! - The task ends `completed`, or `failed` when the result has `isError:
//!   true`; each change of status is sent as `notifications/tasks/status`
//!   (the full task, related to no request). Progress notifications of a
//!   task's call carry the request's token and
//!   `_meta["io.modelcontextprotocol/related-task"]`, and are related to no
//!   request.
//! - `tasks/get` answers the task; `tasks/list` every kept task, oldest
//!   first, paginated as `tools/list`; `tasks/result` waits for the end and
//!   answers the tool's `CallToolResult` with
//!   `_meta["io.modelcontextprotocol/related-task"]: {taskId}` (a waiting
//!   `tasks/result` can be cancelled with `notifications/cancelled`);
//!   `tasks/cancel` aborts a working task, answering it with status
//!   `cancelled` and a `statusMessage`. A `tasks/result` of a cancelled task
//!   gets `-32603` with `data {taskId}`.
//! - An unknown task id gets `-32602`, as does cancelling a task that has
//!   ended. At most 256 tasks are kept: a new one replaces the oldest ended
//!   one (with 256 working, the call gets `-32603`), and an ended task is
//!   forgotten once its `ttl` has passed. A session's end aborts its tasks.
//!
//! ## The stateless era (2026-07-28)
//!
//! `--era legacy|modern|both` (`Config::era`, a `ServeEra`) chooses the
//! protocol eras served. `legacy`, the default, is the behaviour above,
//! unchanged. `modern` serves only the stateless revision 2026-07-28; `both` is
//! a dual-era server: an `initialize` opens a legacy session (on the stdio
//! process, or an HTTP session), and a request carrying the stateless `_meta`
//! (or `server/discover`, `subscriptions/listen`) is served statelessly.
//!
//! - `server/discover` answers `supportedVersions` (`["2026-07-28"]`, in
//!   `both` also the four legacy revisions), `capabilities` (no `tasks`;
//!   `extensions {"io.modelcontextprotocol/tasks": {}}`), `instructions` and
//!   `ttlMs`/`cacheScope: "public"`.
//! - Every request needs `_meta` `io.modelcontextprotocol/protocolVersion` and
//!   `io.modelcontextprotocol/clientCapabilities` (else `-32602`); a version
//!   other than 2026-07-28 gets `-32022` with `data {supported, requested}`.
//!   `initialize` in `modern` gets `-32022` naming the versions spoken; `ping`,
//!   `logging/setLevel`, `resources/subscribe|unsubscribe`, `tasks/list`,
//!   `tasks/result` and unknown methods get `-32601`.
//! - Every result has `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`;
//!   lists carry `ttlMs` (`--ttl-ms`, default 0) and `cacheScope: "public"`,
//!   `resources/read` `cacheScope: "private"`.
//! - `log` sends `notifications/message` only when the request's `_meta` has
//!   `io.modelcontextprotocol/logLevel` at or below the message's level.
//! - The server never sends requests: tools needing input answer
//!   `input_required`, and the retry carries `inputResponses` and the echoed
//!   `requestState`. A needed capability missing from `clientCapabilities`
//!   gets `-32021` with `data.requiredCapabilities`; a `requestState` the
//!   server did not issue, `-32602`.
//!
//! | tool (stateless requests) | first answer | after the retry |
//! |---|---|---|
//! | `ask` `what: roots\|elicit\|sample` | `inputRequests {"ask": roots/list \| elicitation/create (form) \| sampling/createMessage}`, `requestState "ask:<what>"` | JSON text `{"result": <inputResponses.ask>}` |
//! | `ask_twice` | `{"name": elicitation/create}`, `requestState "ask_twice:1"` | then `{"greeting": sampling/createMessage "Say hello to <name>"}`, `requestState "ask_twice:2:<name>"`; then text `<name>: <greeting>`, `structuredContent {name, greeting}` (needs `elicitation` and `sampling`) |
//! | `retry_once` | only `requestState "retry_once:<n>"` | text `retried with retry_once:<n>` |
//! | `received_log` | JSON text: what each stateless request carried (`id`, `method`, `protocolVersion`, `clientCapabilities`, `clientInfo`, `logLevel`, `name`, `requestState`, `inputResponses`), the last 256 | |
//! | `close_subscriptions` | ends every open listen with its result (`resultType: "complete"`, `_meta` `subscriptionId`); text: how many | |
//! | `resources/read` of `test://ask/elicit`, `prompts/get` of `ask` (neither listed) | `{"ask": elicitation/create}`, `requestState "ask:read"` or `"ask:prompt"` | a resource (`application/json`) or one user message, JSON text `{"result": <inputResponses.ask>}` |
//!
//! These four tools are listed only to stateless-era requests; the legacy
//! `tools/list` is unchanged. `Server::received_log` and
//! `HttpServerHandle::received_log` give the same record in-process.
//!
//! **Tasks** (the tasks extension, SEP-2663), for a request whose
//! `clientCapabilities.extensions` has `io.modelcontextprotocol/tasks`: a
//! call of a tool marked (task) that has to be waited for (`slow`, `hang`)
//! is answered at once with the task, flat (`resultType: "task"`, `taskId`,
//! `status`, `createdAt`, `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`); one
//! that is done at once (`echo`) gets its result. Without the extension
//! every call is plain, and a tool that requires a task gets `-32021` with
//! `data.requiredCapabilities.extensions`; so do `tasks/get`,
//! `tasks/update` and `tasks/cancel`. `tasks/get` answers the task with,
//! by status, `inputRequests`, `result` (a tool error too: `completed`) or
//! `error` (a protocol error: `failed`); `tasks/update {taskId,
//! inputResponses}` answers the requests it waits for (other keys ignored)
//! and `tasks/cancel` stops a running task; both answer `{resultType:
//! "complete"}` only, also for a task that has ended. The store is the one
//! above (ids, 256 tasks, `ttlMs` ten minutes). With
//! `--conformance-fixtures` the suite's task tools are listed too
//! (`greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete`, `multi_input`, `test_tool_with_task`).
//!
//! **`subscriptions/listen`** with `params.notifications` (`toolsListChanged`,
//! `promptsListChanged`, `resourcesListChanged`, `resourceSubscriptions`) is
//! answered first by `notifications/subscriptions/acknowledged` with the
//! granted filter (only what is on; URIs of no resource left out) and
//! `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request's
//! id, then carries only what it asked for, each with that `subscriptionId`:
//! `change` (tools, prompts, resources) and `touch` (`resources/updated`) feed
//! every open listen (in `both`, a legacy session's calls too; a stateless
//! call gets no request-scoped list-change notification). On stdio the listen
//! gets no reply while open, several are told apart by id, and
//! `notifications/cancelled` for its id ends it. Over HTTP its POST is answered
//! by an SSE stream that stays open; closing it ends the subscription.
//!
//! **HTTP** (`modern`, or sessionless requests in `both`): no `Mcp-Session-Id`
//! is minted or read; GET and DELETE get 405. A POST needs `MCP-Protocol-Version`
//! equal to the `_meta` version, `Mcp-Method` equal to the method, `Mcp-Name`
//! equal to `params.name`/`params.uri` for `tools/call`, `prompts/get`,
//! `resources/read` (the `=?base64?...?=` form is decoded), and the
//! `Mcp-Param-*` headers of `annotated`'s arguments: else 400 with `-32020`.
//! Missing `_meta` keys, `-32022` and `-32021` are 400, `-32601` is 404, with
//! the JSON-RPC error (and the request's id) as body. A request is answered as
//! one JSON body, or as an SSE stream (`X-Accel-Buffering: no`, no event ids)
//! when a notification (progress, log) comes before its reply, or always with
//! `--reply sse`; closing that stream cancels the request. A batch gets 400.
//! The HTTP server has one core for all stateless requests: concurrent
//! requests must use distinct ids.
//!
//! **Probing a legacy server**: with `legacy`, `server/discover` (or any
//! request) before `initialize` gets `-32600` on stdio and, over HTTP without a
//! session, a `400` with a text body: no stateless error, so a dual-era client
//! falls back. `--silent-discover` (`Config::silent_discover`) makes it never
//! answer `server/discover` instead (over HTTP the POST gets no response), for
//! probe-timeout tests.
//!
//! ## Options (`mcp-testkit stdio [options]`, or the fields of [`Config`])
//!
//! | option | effect |
//! |---|---|
//! | `--page-size N` | `tools/list` pages of N tools, `nextCursor` `"page:2"`, ...; a cursor the server did not issue gets `-32602` (default: one page); the same for `resources/list`, `resources/templates/list`, `prompts/list` and `tasks/list` |
//! | `--send-list-changed-before-init` | sends `notifications/tools/list_changed` before the `initialize` reply |
//! | `--stderr-banner TEXT` | writes TEXT to stderr at start |
//! | `--exit-after N` | exits (code 0) after answering N requests |
//! | `--start-delay-ms N` | waits N ms after starting before it serves (reads stdin, or listens), as a server started by `npx`, `uvx` or `docker run` does |
//! | `--version-override V` | answers `initialize` with `protocolVersion` V |
//! | `--max-line-bytes N` | longest input line; longer ones are discarded and answered `-32700` (default 16 MiB) |
//! | `--ask-timeout-ms N` | how long `ask` waits for the client (default 10 000) |
//! | `--max-in-flight N` | most requests a session runs at once; more get `-32010` at once (default 256; over HTTP the stateless era's shared session: 1024) |
//! | `--era legacy\|modern\|both` | the eras served (default `legacy`); see above |
//! | `--silent-discover` | legacy era: never answer `server/discover` |
//! | `--ttl-ms N` | `ttlMs` of cacheable stateless-era results (default 0) |
//! | `--instructions TEXT`, `--no-instructions` | the `instructions` of `initialize` and `server/discover`, or none |
//! | `--tool-description NAME=TEXT` (`tool_descriptions`) | replaces that tool's `description` (repeatable): a definition that changes between runs, for tool-pinning tests |
//! | `--conformance-fixtures` (`conformance_fixtures`) | also list and serve the official conformance suite's fixtures, which its server scenarios use: the tools `test_simple_text`, `test_image_content`, `test_audio_content`, `test_embedded_resource`, `test_multiple_content_types`, `test_tool_with_logging`, `test_error_handling`, `test_tool_with_progress`, `test_sampling`, `test_elicitation`; its resources `test://static-text`, `test://static-binary`, `test://watched-resource` and template `test://template/{id}/data`; its prompts `test_simple_prompt`, `test_prompt_with_arguments`, `test_prompt_with_embedded_resource`, `test_prompt_with_image`; and, for stateless-era requests, `test_input_required_result_elicitation`, `_sampling` and `_list_roots` (one `input_required` round each; an answer that is not an object gets `-32602`) |
//!
//! ## HTTP driver (`mcp-testkit http [options]`, or `serve_http` with an [`HttpConfig`]; feature `http`)
//!
//! Binds `127.0.0.1:PORT` (`--port`, default 0: any free port); the binary
//! prints `listening on http://127.0.0.1:PORT/mcp` as its first stdout line.
//! HTTP/1.1; in-process, [`HttpConfig::tls`] (a [`TlsConfig`]: a
//! certificate chain and key in DER, say from a CA the test made) serves
//! HTTPS instead (rustls, `ring`; the URL is `https://127.0.0.1:PORT/mcp`),
//! and with [`TlsConfig::with_http2`] offers `h2` by ALPN and serves
//! HTTP/2 to a client that picks it. A client that refuses the certificate
//! is dropped after the handshake, before any request is recorded; every
//! [`RequestRecord`] says which HTTP version it came over. Streamable HTTP
//! (2025-11-25) at `/mcp` (and `/mcp/`):
//!
//! - **POST** a JSON-RPC message with `Accept` listing `application/json` and
//!   `text/event-stream` (else 406) and `Content-Type: application/json`
//!   (else 415). A notification or response gets 202 and no body; a request
//!   gets one `application/json` reply (`--reply json`, the default) or a
//!   `text/event-stream` (`--reply sse`): an optional priming event, the
//!   request's progress notifications and server-to-client requests, then
//!   the reply, then the end of the stream. Text that is not JSON gets 400
//!   with a `-32700` body, a non-message 400 with `-32600`. A batch of
//!   notifications and responses gets 202; a batch holding requests, 400.
//!   Bodies over `--max-line-bytes` get 413.
//! - **Sessions**: the initialize reply carries `Mcp-Session-Id` (32 hex
//!   digits); later requests without it get 400, with an unknown one 404.
//!   Each session is its own [`Server`] core; `--no-sessions` shares one core
//!   between everyone (a second `initialize` then gets `-32600`). An
//!   `MCP-Protocol-Version` header naming no supported revision gets 400
//!   (not checked on initialize). An `Origin` header that is not loopback
//!   gets 403.
//! - **Routing**: a message related to a request answered over SSE goes on
//!   that request's stream; everything else — messages related to no
//!   request (e.g. `change`'s `notifications/tools/list_changed` is related
//!   to its call, so in SSE mode it precedes the `change` reply, in JSON mode
//!   it goes here; `touch`'s `notifications/resources/updated` and
//!   `notifications/tasks/status` always go here) and those of requests answered with a JSON body (which
//!   cannot carry them, e.g. `ask`'s request) — goes on the session's
//!   standalone **GET** stream, which keeps them until a GET connects. A
//!   second GET replaces the first.
//! - **Resumption**: every event has an id `<stream>-<n>` (`s7-0`, `s7-1`,
//!   ...); a GET with `Last-Event-ID` replays that stream's events after `n`
//!   and continues it (a reply not sent yet arrives there; a stream whose
//!   reply was sent ends after the replay). Each stream keeps its last 1024
//!   events, each session its last 256 reply streams. An unknown or
//!   malformed `Last-Event-ID` gets 400.
//! - **DELETE** with the session id: 200, the session ends (running calls are
//!   aborted, its streams end).
//! - `crash` and `--exit-after` end the process in the binary; in-process
//!   ([`HttpConfig::exit_process`] `false`) they end only that session,
//!   dropping its connections. The `noisy` tool's raw lines are dropped.
//! - `HttpServerHandle::shutdown` (or dropping the handle) closes every
//!   connection and stream: no response body outlives the server.
//!
//! | option ([`HttpConfig`] field) | effect |
//! |---|---|
//! | `--port N` (`port`) | port on 127.0.0.1; 0 picks one |
//! | `--threads N` (`threads`) | the binary serves on N worker threads (default 1: a current-thread runtime) |
//! | `--reply json\|sse\|auto` (`reply`) | reply to a request as one JSON body or as an SSE stream; `auto`: SSE only when something comes before the reply |
//! | `--priming` (`priming`) | SSE replies start with a priming event: `id` and an empty `data:` |
//! | `--retry-ms N` (`retry_ms`) | a `retry: N` field in the priming event |
//! | `--close-after-priming` (`close_after_priming`) | end each SSE reply right after the priming event; the client resumes with GET + `Last-Event-ID` (SSE polling, the conformance `sse-retry` scenario) |
//! | `--max-unsent-events N` (`max_unsent_events`) | most events waiting unsent on one SSE connection (default 256); at the cap a resumable stream's connection ends and the client resumes with `Last-Event-ID`, a stateless-era stream is cut and its request cancelled |
//! | `--close-after-events N` (`close_after_events`) | cut each SSE reply connection (resumed ones too) after N events, the priming event included, without ending the chunked body |
//! | `--id-only-events` (`id_only_events`) | every request but `initialize`, and every GET (standalone or resuming, whatever its `Last-Event-ID`), gets an SSE stream of one event carrying only a fresh id and `retry: 0`, then its end; the request never reaches the core, so no reply ever comes (a reconnect storm for a client that counts such events as progress) |
//! | `--expire-session-after N` (`expire_session_after`) | the session's POST number N+1 gets 404 and the session is gone |
//! | `--no-sessions` (`sessions: false`) | no `Mcp-Session-Id`; one shared core |
//! | `--no-get` (`get_stream: false`) | 405 on a GET without `Last-Event-ID` (resumption still works) |
//! | `--no-delete` (`delete: false`) | 405 on DELETE |
//! | `--require-auth TOKEN` (`require_auth`) | 401 unless `Authorization: Bearer TOKEN`, with `WWW-Authenticate: Bearer resource_metadata="<base>/.well-known/oauth-protected-resource", scope="mcp"`; that URL serves a protected-resource metadata document |
//! | (in-process only) `jwt_auth` ([`JwtAuth`]) | 401 unless a JWT access token of that authorization server (RS256 or ES256 against its key set; `iss`, `aud`, `exp`; for a DPoP-bound token the `DPoP` scheme and a proof of its key); the protected resource metadata names the server |
//! | `--challenge VALUE` (`challenge`) | the exact `WWW-Authenticate` value of that 401 |
//! | `--forbid-scope` (`forbid_scope`) | a valid token gets 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp admin"` |
//! | `--allow-host NAME` (`allowed_hosts`) | accept `Host: NAME[:port]` besides the loopback names; any other `Host`, or an `Origin` that is not a loopback one, gets 403 (the DNS rebinding guard of `mcp-server-io`) |
//! | `--slow-headers-ms N` (`slow_headers`) | sleep N ms before sending each response's headers |
//! | `--oversized-body BYTES` (`oversized_body`) | every reply to a request is padded to BYTES bytes of JSON (`result._meta.padding`, or `error.data.padding`) |
//! | `--redirect` (`redirect: SameOrigin`) | POST `/mcp` gets 307 to `/mcp/` (same endpoint) |
//! | `--redirect-cross-origin URL` (`redirect: CrossOrigin`) | POST `/mcp` gets 307 to URL |
//! | `--status CODE` (`status`) | every POST gets CODE and a short text body |
//! | `--legacy` (`legacy`) | the 2024-11-05 HTTP+SSE transport: POST `/mcp` gets 405; GET `/mcp` or `/sse` opens a session whose stream starts with `event: endpoint`, `data: /message?sessionId=<id>`; POSTs there get 202 and every message comes as an `event: message` on that stream; the session ends with the stream |
//! | `--legacy-endpoint URL` (`legacy_endpoint`) | send URL as the `endpoint` data instead (e.g. a cross-origin one) |
//!
//! At most 4096 HTTP sessions live at once (an `initialize` beyond gets 503);
//! a session unused for 30 minutes is forgotten (then 404).
//!
//! The options of `stdio` apply to `http` too (`--max-line-bytes` caps POST
//! bodies). The handle counts requests per method
//! (`HttpServerHandle::request_count`, `HttpServerHandle::deletes`),
//! keeps the last request's headers
//! (`HttpServerHandle::last_request_headers`), the recent requests
//! (`HttpServerHandle::requests`) and the JSON-RPC methods POSTed
//! (`HttpServerHandle::rpc_methods`).
//!
//! ## Example
//!
//! ```
//! use mcp_testkit::{Config, Outgoing, Server};
//! use mcp_proto::jsonrpc::Message;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (server, mut queue) = Server::new(Config::default());
//! server.handle_json(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! let Some(Outgoing::Message { message: Message::Response(reply), related, .. }) = queue.recv().await
//! else {
//!     panic!("expected a reply")
//! };
//! assert_eq!(reply.result, serde_json::json!({}));
//! assert_eq!(related, Some(1.into()));
//! # }
//! ```

pub mod config;
mod features;
mod fixtures;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod jwt;
mod listing;
mod locate;
mod modern;
#[cfg(feature = "http")]
pub mod oauth;
mod server;
mod stateless_tasks;
mod stdio;
mod task_calls;
mod task_fixtures;
mod tasks;
mod tools;

pub use config::{
    ArgError, Command, Config, HttpConfig, JwtAuth, Redirect, ReplyMode, ServeEra, TlsConfig,
    USAGE, parse_args,
};
#[cfg(feature = "http")]
pub use http::{HttpServerHandle, RequestRecord, serve_http};
pub use locate::binary_path;
pub use mcp_server_io::{Outgoing, OutgoingQueue};
pub use server::Server;
pub use stdio::run_stdio;

/// The README's examples, compiled as doc tests (they serve HTTP).
#[cfg(all(doctest, feature = "http"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
