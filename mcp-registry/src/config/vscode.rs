//! The variables hosts put in their JSON (VS Code's `servers` file,
//! Cursor's `mcpServers`): `${input:ID}` from the file's `inputs`,
//! `${workspaceFolder}`, `${workspaceFolderBasename}` and `${userHome}`.
//!
//! An input is asked for once per load, when a value first refers to it:
//! from the environment variable [`LoadOptions::input_env_prefix`] names,
//! else from the host's [`LoadOptions::inputs`]; with neither it is a
//! [`ConfigError::MissingInput`]. A `password` input's value is a secret:
//! it is kept as one and a warning says so when it lands in a value that
//! is shown (anything but `env` and `headers`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::validate::invalid;
use super::{LoadOptions, Secret};
use crate::error::{ConfigError, Location, MissingInput};

/// What kind of input a `${input:ID}` refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// `promptString`: free text (hidden when `password`).
    PromptString,
    /// `pickString`: one of `options`.
    PickString,
}

/// One input a configuration declares (`inputs[]`), as the host is asked
/// for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputRequest {
    /// Its `id`.
    pub id: String,
    /// `promptString` or `pickString`.
    pub kind: InputKind,
    /// What to ask (`description`; the file's text: untrusted).
    pub description: Option<String>,
    /// The value offered (`default`).
    pub default: Option<String>,
    /// Whether the answer is a secret, not echoed (`password`).
    pub password: bool,
    /// The choices of a `pickString` (`options`).
    pub options: Vec<String>,
}

/// Supplies the value of an input (a terminal prompt, a secret store);
/// `None` when it cannot.
pub type InputLookup = Arc<dyn Fn(&InputRequest) -> Option<String> + Send + Sync>;

/// The environment variable that supplies input `id`: `prefix` and the id
/// upper-cased, each character other than an ASCII letter or digit as `_`
/// (`MCPC_INPUT_` and `api-key` give `MCPC_INPUT_API_KEY`).
pub fn input_variable(prefix: &str, id: &str) -> String {
    let mut name = prefix.to_owned();
    name.extend(
        id.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }),
    );
    name
}

/// The folder `${workspaceFolder}` names for a configuration file: the
/// folder holding `.vscode/` (or `.cursor/`) for a file in one, else the
/// file's own folder.
pub(crate) fn workspace_of(path: &Path) -> PathBuf {
    let folder = path.parent().unwrap_or(Path::new(""));
    let named = folder.file_name().and_then(|n| n.to_str());
    match named {
        Some(".vscode" | ".cursor") => folder.parent().unwrap_or(Path::new("")).to_owned(),
        _ => folder.to_owned(),
    }
}

/// The host variables of one load: the declared inputs and the values
/// given so far.
pub(crate) struct HostVars {
    inputs: Vec<InputRequest>,
    values: BTreeMap<String, Secret>,
}

/// The most inputs a file may declare.
const MAX_INPUTS: usize = 256;

impl HostVars {
    /// Reads `inputs` (an array of `{type, id, description, default,
    /// password, options}`).
    pub(crate) fn new(inputs: Option<&Value>) -> Result<Self, ConfigError> {
        let mut out = Vec::new();
        let items = match inputs {
            None => &[][..],
            Some(Value::Array(items)) if items.len() <= MAX_INPUTS => items.as_slice(),
            Some(Value::Array(_)) => {
                return Err(invalid(
                    Location::top("inputs"),
                    &format!("at most {MAX_INPUTS} inputs"),
                ));
            }
            Some(_) => return Err(invalid(Location::top("inputs"), "must be an array")),
        };
        for (i, item) in items.iter().enumerate() {
            let at = |key: &str| Location::top(format!("inputs[{i}].{key}"));
            let Value::Object(map) = item else {
                return Err(invalid(Location::top(format!("inputs[{i}]")), "must be an object"));
            };
            let text = |key: &str| match map.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(invalid(at(key), "must be a string")),
            };
            let kind = match text("type")?.as_deref() {
                Some("promptString") => InputKind::PromptString,
                Some("pickString") => InputKind::PickString,
                _ => {
                    return Err(invalid(at("type"), "must be \"promptString\" or \"pickString\""));
                }
            };
            let Some(id) = text("id")?.filter(|id| !id.trim().is_empty()) else {
                return Err(invalid(at("id"), "is missing"));
            };
            let password = match map.get("password") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(invalid(at("password"), "must be true or false")),
            };
            let options = match map.get("options") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|o| match o {
                        Value::String(s) => Ok(s.clone()),
                        // VS Code also takes `{label, value}`.
                        Value::Object(m) => m
                            .get("value")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .ok_or_else(|| invalid(at("options"), "an option needs a `value`")),
                        _ => Err(invalid(at("options"), "must be a list of strings")),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(invalid(at("options"), "must be a list of strings")),
            };
            if kind == InputKind::PickString && options.is_empty() {
                return Err(invalid(at("options"), "a pickString needs options"));
            }
            out.push(InputRequest {
                id,
                kind,
                description: text("description")?,
                default: text("default")?,
                password,
                options,
            });
        }
        Ok(HostVars { inputs: out, values: BTreeMap::new() })
    }

    /// The value of `${inner}` when `inner` is a host variable (`None`:
    /// not one, left to the environment's expansion), and whether it is a
    /// secret.
    pub(crate) fn resolve(
        &mut self,
        inner: &str,
        location: &Location,
        options: &LoadOptions,
    ) -> Option<Result<(String, bool), ConfigError>> {
        if let Some(id) = inner.strip_prefix("input:") {
            return Some(self.input(id.trim(), location, options));
        }
        let folder = || {
            options.workspace_folder.clone().ok_or_else(|| {
                invalid(
                    location.clone(),
                    &format!(
                        "`${{{inner}}}`: no workspace folder is known (load the file by its path)"
                    ),
                )
            })
        };
        let value = match inner {
            "workspaceFolder" => folder().map(|f| f.to_string_lossy().into_owned()),
            "workspaceFolderBasename" => folder().map(|f| {
                f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            }),
            "userHome" => ["HOME", "USERPROFILE"]
                .iter()
                .find_map(|v| (options.env)(v).filter(|h| !h.is_empty()))
                .ok_or_else(|| {
                    invalid(location.clone(), "`${userHome}`: neither HOME nor USERPROFILE is set")
                }),
            "pathSeparator" | "/" => Ok(std::path::MAIN_SEPARATOR.to_string()),
            _ => return None,
        };
        Some(value.map(|v| (v, false)))
    }

    fn input(
        &mut self,
        id: &str,
        location: &Location,
        options: &LoadOptions,
    ) -> Result<(String, bool), ConfigError> {
        let Some(request) = self.inputs.iter().find(|i| i.id == id) else {
            return Err(invalid(
                location.clone(),
                &format!("`${{input:{id}}}` names no input declared in `inputs`"),
            ));
        };
        if let Some(value) = self.values.get(id) {
            return Ok((value.expose().to_owned(), request.password));
        }
        let variable = options.input_env_prefix.as_deref().map(|p| input_variable(p, id));
        let value = variable
            .as_deref()
            .and_then(|v| (options.env)(v))
            .or_else(|| options.inputs.as_ref().and_then(|ask| ask(request)));
        let Some(value) = value else {
            return Err(ConfigError::MissingInput(Box::new(MissingInput {
                location: location.clone(),
                input: id.to_owned(),
                variable,
            })));
        };
        if let InputKind::PickString = request.kind
            && !request.options.contains(&value)
        {
            return Err(invalid(
                location.clone(),
                &format!("the value given for input `{id}` is not one of its options"),
            ));
        }
        let password = request.password;
        self.values.insert(id.to_owned(), Secret::new(value.clone()));
        Ok((value, password))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_variables() {
        assert_eq!(input_variable("MCPC_INPUT_", "api-key"), "MCPC_INPUT_API_KEY");
        assert_eq!(input_variable("P_", "gh.token 2"), "P_GH_TOKEN_2");
    }

    #[test]
    fn workspace_folders() {
        let cases = [
            ("/p/.vscode/mcp.json", "/p"),
            ("/p/.cursor/mcp.json", "/p"),
            ("/p/q/.mcp.json", "/p/q"),
            ("mcp.json", ""),
        ];
        for (file, folder) in cases {
            assert_eq!(workspace_of(Path::new(file)), Path::new(folder), "{file}");
        }
    }
}
