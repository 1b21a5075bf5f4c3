//! Loading: the options, the format told from the text, and the lines
//! that errors and warnings point at.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::types::{ClientIdentity, Config, ServerConfig, TransportConfig};
use super::{jsonc, vscode};
use crate::error::{ConfigError, Location, Warning};

/// Looks up an environment variable (the process's by default; tests and
/// hosts may pass their own).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How a configuration is loaded.
#[derive(Clone)]
pub struct LoadOptions {
    /// Unknown keys and incomplete entries are errors rather than warnings.
    pub strict: bool,
    /// The identity used where the file does not say (per field).
    pub client_identity: ClientIdentity,
    /// Servers the host always has (as a host seeds its own docs server);
    /// an entry of the same name in the file replaces one, in place.
    pub defaults: Vec<ServerConfig>,
    /// Where `*_env` references and `${env:NAME}` are looked up.
    pub env: EnvLookup,
    /// Supplies `${input:ID}` values of a JSON file's `inputs` (a host asks
    /// on a terminal); `None`: only [`input_env_prefix`](Self::input_env_prefix).
    pub inputs: Option<vscode::InputLookup>,
    /// The environment variables that supply inputs, before
    /// [`inputs`](Self::inputs) is asked: this prefix and the input's id
    /// ([`input_variable`](vscode::input_variable)). `None`: inputs never come from the
    /// environment.
    pub input_env_prefix: Option<String>,
    /// What `${workspaceFolder}` names; `None`: [`Config::load`] takes the
    /// folder holding a `.vscode/` or `.cursor/` file, else the file's
    /// folder (from text, without a path, it is an error to use it).
    pub workspace_folder: Option<PathBuf>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            strict: false,
            client_identity: ClientIdentity::default(),
            defaults: Vec::new(),
            env: Arc::new(|name| std::env::var(name).ok()),
            inputs: None,
            input_env_prefix: None,
            workspace_folder: None,
        }
    }
}

impl fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadOptions")
            .field("strict", &self.strict)
            .field("client_identity", &self.client_identity)
            .field("defaults", &self.defaults)
            .field("inputs", &self.inputs.as_ref().map(|_| "<callback>"))
            .field("input_env_prefix", &self.input_env_prefix)
            .field("workspace_folder", &self.workspace_folder)
            .finish_non_exhaustive()
    }
}

/// A loaded configuration and the problems that did not stop it loading.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The configuration.
    pub config: Config,
    /// Unknown keys, skipped entries, replaced duplicates, ignored values.
    pub warnings: Vec<Warning>,
}

impl Config {
    /// Reads a file. The format is told from the content: text that starts
    /// with `{` is JSON (`mcpServers`, `servers`, or the `mcp_client`
    /// shape), anything else TOML; an empty file is the JSON it is named
    /// after (`.json`) or TOML. Errors and warnings name the file and, where
    /// it can be found, the line (and for syntax errors the column).
    pub fn load(path: &Path, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: PathBuf::from(path), source })?;
        let named_json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let format = Format::detect(&text, named_json);
        // Comments are blanked out in place: lines found in the plain
        // text are the file's.
        let text = match format {
            Format::Json => jsonc::strip(&text).into_owned(),
            Format::Toml => text,
        };
        let with_folder;
        let options = if options.workspace_folder.is_none() {
            let folder = vscode::workspace_of(&std::path::absolute(path).unwrap_or(path.into()));
            with_folder = LoadOptions { workspace_folder: Some(folder), ..options.clone() };
            &with_folder
        } else {
            options
        };
        match format.parse(&text, options) {
            Ok(mut loaded) => {
                // A relative `ca_file` is the configuration's neighbour.
                let folder = path.parent().unwrap_or(Path::new(""));
                for server in &mut loaded.config.servers {
                    if let TransportConfig::Http { network, .. } = &mut server.transport
                        && let Some(ca_file) = &mut network.ca_file
                        && ca_file.is_relative()
                    {
                        *ca_file = folder.join(&*ca_file);
                    }
                }
                for warning in &mut loaded.warnings {
                    warning.path = Some(path.to_owned());
                    warning.line = locate(&text, format, &warning.location);
                }
                Ok(loaded)
            }
            Err(ConfigError::Syntax { format, line, column, message, .. }) => {
                Err(ConfigError::Syntax {
                    format,
                    path: Some(path.to_owned()),
                    line,
                    column,
                    message,
                })
            }
            Err(e) => {
                let line = match &e {
                    ConfigError::Invalid { location, .. }
                    | ConfigError::MissingEnv { location, .. } => locate(&text, format, location),
                    ConfigError::MissingInput(missing) => locate(&text, format, &missing.location),
                    _ => None,
                };
                Err(ConfigError::InFile { path: path.to_owned(), line, source: Box::new(e) })
            }
        }
    }

    /// Parses text in either format, told from the content as
    /// [`load`](Self::load) does (text starting with `{` is JSON).
    pub fn from_str_detected(text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        Format::detect(text, false).parse(text, options)
    }
}

/// A configuration's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Toml,
    Json,
}

impl Format {
    /// JSON when the text starts with `{` (TOML never does), or when it is
    /// empty and named `.json`; TOML otherwise.
    fn detect(text: &str, named_json: bool) -> Format {
        let start = text.trim_start_matches('\u{feff}').trim_start();
        match start.chars().next() {
            Some('{') => Format::Json,
            None if named_json => Format::Json,
            _ => Format::Toml,
        }
    }

    fn parse(self, text: &str, options: &LoadOptions) -> Result<Loaded, ConfigError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        match self {
            Format::Toml => Config::from_toml_str(text, options),
            Format::Json => Config::from_json_str(text, options),
        }
    }
}

/// The line of a location in a configuration's text, found by its shape:
/// the server's entry (the n-th `[[mcp_client.servers]]`, or the JSON key
/// of its name), then the first part of the key within it. `None` when it
/// cannot be found.
fn locate(text: &str, format: Format, location: &Location) -> Option<usize> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.lines().collect();
    let first_key = location.key.as_deref().map(|k| k.split('.').next().unwrap_or(k));
    let (start, end) = match (format, &location.server, location.index) {
        (Format::Toml, _, Some(index)) => {
            let headers: Vec<usize> = (0..lines.len())
                .filter(|&i| {
                    let compact: String = lines[i].chars().filter(|c| !c.is_whitespace()).collect();
                    compact.starts_with("[[mcp_client.servers]]")
                })
                .collect();
            let start = *headers.get(index)?;
            let end = (start + 1..lines.len())
                .find(|&i| lines[i].trim_start().starts_with('['))
                .unwrap_or(lines.len());
            (start, end)
        }
        (Format::Json, Some(name), _) => {
            let quoted = serde_json::to_string(name).ok()?;
            let start = (0..lines.len()).find(|&i| {
                lines[i]
                    .split(&quoted)
                    .nth(1)
                    .is_some_and(|after| after.trim_start().starts_with(':'))
            })?;
            (start, lines.len())
        }
        (_, None, None) => {
            let key = location.key.as_deref()?;
            let last = key.rsplit('.').next().unwrap_or(key);
            let found = (0..lines.len()).find(|&i| key_at(lines[i], last, format))?;
            return Some(found + 1);
        }
        _ => return None,
    };
    if let Some(key) = first_key
        && let Some(i) = (start..end).find(|&i| key_at(lines[i], key, format))
    {
        return Some(i + 1);
    }
    Some(start + 1)
}

/// Whether a line sets `key` (`key = ...`, `key.x = ...` in TOML;
/// `"key": ...` in JSON).
fn key_at(line: &str, key: &str, format: Format) -> bool {
    match format {
        Format::Toml => line.trim_start().strip_prefix(key).is_some_and(|after| {
            let after = after.trim_start();
            after.starts_with('=') || after.starts_with('.')
        }),
        Format::Json => line
            .split(&format!("\"{key}\""))
            .nth(1)
            .is_some_and(|after| after.trim_start().starts_with(':')),
    }
}

/// serde_json's message without the position (given separately) and
/// without quoting the input.
pub(crate) fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// The 1-based line and column (in characters) of a byte offset.
pub(super) fn position_of(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or(before).chars().count() + 1;
    (line, column)
}
