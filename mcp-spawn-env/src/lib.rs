//! # mcp-spawn-env
//!
//! The environment a spawned MCP server gets. A host started from a desktop
//! (an IDE, a desktop agent) does not inherit the PATH the user's shell
//! builds, so `npx`, `uvx` or `docker` are "not found" although they work in
//! a terminal. This crate rebuilds that PATH and turns a command into the
//! file to execute, or into a message that tells the user what to install.
//!
//! ## What it does
//!
//! - **PATH reconstruction** ([`spawn_path`]): the PATH the user's login
//!   shell builds (`$SHELL -ilc`, probed once per process with a 3 s
//!   timeout: [`login_shell_path`]), then this process's PATH, then the
//!   version-manager and tool directories that exist ([`fallback_dirs`]:
//!   `~/.local/bin`, Volta, Bun, Cargo, the newest nvm Node.js, fnm, asdf and
//!   mise shims, Homebrew, `/usr/local`; uv's directories on Windows),
//!   de-duplicated keeping the first. A PATH the user configured for the
//!   server wins. The merge is remembered with its inputs, and the tool
//!   directories are looked for at most once per [`FALLBACK_RECHECK`], so
//!   a burst of starts pays for them once; [`spawn_path_detail`] also says
//!   when this process's PATH is equivalent, so a spawner can leave the
//!   child's PATH inherited.
//! - **A probe cache between runs** ([`ProbeCache`], opt-in,
//!   [`spawn_path_cached`]): the login shell's PATH kept in a file for a
//!   day, keyed by the shell, `HOME`, the inherited PATH and the
//!   modification times and sizes of the shell's startup files
//!   ([`CacheKey`]); written atomically (mode 0600, at most
//!   [`CACHE_FILE_MAX`]), a stale or corrupt file ignored. For hosts that
//!   start often, such as command-line tools.
//! - **Command resolution** ([`resolve_command`]): a path-like command is
//!   taken relative to the server's working directory, any other is searched
//!   on that PATH (with `PATHEXT` on Windows); a missing one is a
//!   [`ResolveError::NotFound`] whose message names what to install
//!   (Node.js for `npx`, uv for `uvx`, Python, Docker) and the host.
//! - **What to spawn** ([`ServerCommand`]): the program, arguments,
//!   variables and working directory of a server, as plain data; a
//!   configuration reader (`mcp-registry`) builds it without depending on
//!   the transport that spawns it (`mcp-stdio`, which re-exports it).
//!
//! ## What it does not do
//!
//! It spawns nothing but the one login-shell probe, and it never changes the
//! process's own environment: it computes values that the caller passes to
//! the child it spawns. It does not spawn the server (that is `mcp-stdio`).
//!
//! ## Design
//!
//! Everything that can be decided without the file system is a pure
//! function over explicit inputs, tested with data: PATH splitting, joining
//! and merging ([`merge_path_sources`]), marker extraction from the shell's
//! output ([`parse_probe_output`]), the nvm version order, the fallback
//! directories ([`fallback_dirs`], given an environment lookup and a
//! [`FileSystem`]), command resolution ([`resolve_command_with`]) and the
//! guidance texts ([`missing_command_guidance`]). Each takes a [`Platform`],
//! so the Windows rules are tested on Unix too. [`login_shell_path`],
//! [`spawn_path`] and [`resolve_command`] are the thin real-I/O layer.
//!
//! ```text
//!  $SHELL -ilc ──► login PATH ─┐
//!  process PATH ───────────────┼─► merge, dedupe ─► spawn_path ─► child PATH
//!  existing tool dirs ─────────┘                        │
//!  server command ─────────────────────────────► resolve_command ─► program
//! ```
//!
//! ## Getting started
//!
//! ```
//! use std::process::Command;
//!
//! // The PATH the user configured for this server, if any (its `env` table).
//! let configured: Option<&str> = None;
//! let path = mcp_spawn_env::spawn_path(configured);
//!
//! let cwd = std::env::current_dir().unwrap();
//! match mcp_spawn_env::resolve_command("sh", &cwd, &path, "Acme IDE") {
//!     Ok(program) => {
//!         let mut command = Command::new(program);
//!         command.env("PATH", &path).current_dir(&cwd);
//!         // ... spawn it with piped stdio.
//!     }
//!     // Show this to the user: it says what is missing and what to install.
//!     Err(error) => panic!("{error}"),
//! }
//! ```

mod cache;
mod command;
mod fallback;
mod guidance;
mod platform;
mod probe;
mod resolve;
mod search_path;

pub use cache::{CACHE_FILE_MAX, CacheKey, DEFAULT_CACHE_MAX_AGE, ProbeCache};
pub use command::ServerCommand;
pub use fallback::{FileSystem, RealFileSystem, fallback_dirs, home_dir};
pub use guidance::{Runtime, missing_command_guidance, missing_file_guidance};
pub use platform::Platform;
pub use probe::{
    DEFAULT_PROBE_TIMEOUT, FALLBACK_SHELL, PROBE_ENV_VAR, ProbeError, extract_marked, login_shell,
    login_shell_path, login_shell_path_cached, login_shell_path_known, parse_probe_output,
    probe_command, probe_login_shell,
};
pub use resolve::{
    DEFAULT_PATHEXT, ResolveError, SearchRules, is_path_like, parse_pathext, resolve_command,
    resolve_command_with,
};
pub use search_path::{
    FALLBACK_RECHECK, SpawnPath, default_spawn_path, default_spawn_path_cached, join_path_list,
    merge_path_lists, merge_path_sources, spawn_path, spawn_path_cached, spawn_path_detail,
    split_path_list,
};

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
