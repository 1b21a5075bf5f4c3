//! Consent before a project's configuration runs anything: where the
//! configuration comes from, whether it is approved (the registry's
//! `Review`), asking on a terminal, refusing otherwise, and `mcpc trust`.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use mcp_host_registry::{
    Config, ConfigOrigin, Consent, ConsentStore, FileConsentStore, LoadOptions, Loaded,
    MemoryConsentStore, Review, TransportConfig, TrustError, find_project_config,
};
use serde_json::json;

use crate::cli::{Global, Output};
use crate::failure::{Failure, Kind, display_url};
use crate::output::{emit, emit_json, note, prompt};

/// The configuration to use and where it came from: `--config PATH` /
/// `$MCPC_CONFIG` (must exist), else a project configuration in or above
/// the working directory, else the user's `mcpc/mcp.toml`; `None` means
/// the demo.
pub(crate) fn locate(explicit: Option<&Path>) -> Result<Option<(PathBuf, ConfigOrigin)>, Failure> {
    if let Some(path) = explicit {
        if !path.is_file() {
            return Err(Failure::new(
                Kind::Config,
                format!("the configuration {} does not exist", path.display()),
            ));
        }
        return Ok(Some((path.to_owned(), ConfigOrigin::Explicit)));
    }
    if let Some(found) = project_config() {
        return Ok(Some((found, ConfigOrigin::Project)));
    }
    let user = user_config_dir().map(|d| d.join("mcpc").join("mcp.toml")).filter(|p| p.is_file());
    Ok(user.map(|p| (p, ConfigOrigin::User)))
}

/// The project configuration that applies in the working directory.
fn project_config() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    let found = find_project_config(&cwd, home.as_deref())?;
    // Named as the user would: relative when it is in the working directory.
    Some(found.strip_prefix(&cwd).map(Path::to_path_buf).unwrap_or(found))
}

/// `$XDG_CONFIG_HOME`, else `~/.config` (on Windows `%APPDATA%`).
fn user_config_dir() -> Option<PathBuf> {
    let non_empty =
        |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        return non_empty("APPDATA");
    }
    non_empty("XDG_CONFIG_HOME").or_else(|| non_empty("HOME").map(|h| h.join(".config")))
}

/// Where approvals are kept: `trusted-configs.json` in the user's state
/// directory (for this run only when there is no home directory).
fn store() -> Box<dyn ConsentStore> {
    match FileConsentStore::default_path("mcpc") {
        Some(path) => Box::new(FileConsentStore::new(path)),
        None => Box::new(MemoryConsentStore::new()),
    }
}

/// A trust error as a failure (configuration errors keep naming their file).
fn failure(path: &Path, e: TrustError) -> Failure {
    match e {
        TrustError::Config(e) => {
            let message =
                if e.path().is_some() { e.to_string() } else { format!("{}: {e}", path.display()) };
            Failure::new(Kind::Config, message)
        }
        TrustError::ConsentRequired { .. } => Failure::new(
            Kind::Untrusted,
            format!(
                "{e}; review it, then approve it with `mcpc trust` in this directory \
                 (or run it once with --trust)"
            ),
        ),
        e => Failure::new(Kind::Config, e),
    }
}

/// The configuration at `path`, when it may run: trusted by its origin,
/// approved before, `--trust`, or approved now on the terminal. Nothing of
/// it runs otherwise.
pub(crate) fn load(
    g: &Global,
    path: &Path,
    origin: ConfigOrigin,
    options: &LoadOptions,
) -> Result<Loaded, Failure> {
    let store = store();
    let review = Review::load(path, origin, options, &*store).map_err(|e| failure(path, e))?;
    if *review.consent() == Consent::Approved {
        return review.into_loaded().map_err(|e| failure(path, e));
    }
    if g.trust {
        return Ok(review.trust_once());
    }
    if g.output == Output::Text && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    {
        show(&review);
        match ask("Start its servers? [y]es and remember, [o]nce, [N]o: ").as_deref() {
            Some("y" | "yes") => return review.approve(&*store).map_err(|e| failure(path, e)),
            Some("o" | "once") => return Ok(review.trust_once()),
            _ => {}
        }
    }
    review.into_loaded().map_err(|e| failure(path, e))
}

/// What a project configuration runs, on stderr (made terminal-safe there).
fn show(review: &Review) {
    let why = match review.consent() {
        Consent::Changed => "changed what it runs since it was approved",
        _ => "comes with this project and has not been approved",
    };
    note(&format!("mcpc: the configuration {} {why}:", review.file().display()));
    for line in describe(review.config()) {
        note(&format!("  {line}"));
    }
}

/// One line per server: what it runs or where it connects.
fn describe(config: &Config) -> Vec<String> {
    let mut lines = Vec::new();
    for server in &config.servers {
        let name = &server.name;
        match &server.transport {
            TransportConfig::Stdio(c) => {
                let mut words = vec![c.command.clone()];
                words.extend(c.args.iter().cloned());
                let mut line = format!("{name}: runs {}", shell_words::join(words));
                if let Some(dir) = &c.cwd {
                    line.push_str(&format!(" in {}", dir.display()));
                }
                if !c.env.is_empty() {
                    let keys: Vec<&str> = c.env.keys().map(String::as_str).collect();
                    line.push_str(&format!(" with {}", keys.join(", ")));
                }
                lines.push(line);
            }
            TransportConfig::Http { endpoint, .. } => {
                lines.push(format!("{name}: connects to {}", display_url(endpoint)));
            }
            _ => lines.push(format!("{name}: a transport mcpc does not know")),
        }
    }
    lines
}

/// One answer from the terminal, lower-cased; `None` at the end of input.
fn ask(question: &str) -> Option<String> {
    prompt(question);
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_ascii_lowercase()),
    }
}

/// `mcpc trust [FILE] [--revoke]`: approves the project configuration
/// (given, or found from the working directory) as it is now, showing what
/// it runs, or forgets its approval.
pub(crate) fn trust_command(g: &Global, file: Option<&Path>, revoke: bool) -> Result<u8, Failure> {
    let path = match file {
        Some(file) if file.is_file() => file.to_owned(),
        Some(file) => {
            return Err(Failure::new(
                Kind::Config,
                format!("the configuration {} does not exist", file.display()),
            ));
        }
        None => project_config().ok_or_else(|| {
            Failure::new(
                Kind::NotFound,
                "there is no project configuration in or above this directory",
            )
        })?,
    };
    let store = store();
    let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
    if revoke {
        let had = store.revoke(&absolute).map_err(|e| failure(&path, e))?;
        match g.output {
            Output::Json => emit_json(&json!({"file": absolute, "revoked": had})),
            Output::Text if had => emit(&format!("revoked the approval of {}", absolute.display())),
            Output::Text => emit(&format!("{} was not approved", absolute.display())),
        }
        return Ok(0);
    }
    // Approved with its inputs as references: nothing is asked for here.
    let options =
        crate::inputs::unexpanded(&LoadOptions { strict: g.strict, ..Default::default() });
    let review = Review::load(&path, ConfigOrigin::Project, &options, &*store)
        .map_err(|e| failure(&path, e))?;
    let (file, digest, lines) =
        (review.file().to_owned(), review.digest().to_owned(), describe(review.config()));
    review.approve(&*store).map_err(|e| failure(&path, e))?;
    match g.output {
        Output::Json => emit_json(&json!({
            "file": file,
            "digest": digest,
            "servers": lines,
            "approved": true,
        })),
        Output::Text => {
            emit(&format!("approved {} (sha256 {digest}):", file.display()));
            for line in lines {
                emit(&format!("  {line}"));
            }
        }
    }
    Ok(0)
}
