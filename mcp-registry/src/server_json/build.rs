//! One `server.json` entry (a package or a remote) as a transport, and
//! the variables its references name.

use mcp_spawn_env::ServerCommand;
use serde_json::{Map, Value};

use super::{ImportedVariable, ServerJsonError, invalid};
use crate::config::{AuthConfig, HttpNetwork, Secret, TransportConfig};

/// The text of the file as a configuration value: `${` is not a reference.
fn literal(text: &str) -> String {
    text.replace("${", "$${")
}

/// A variable name made of a hint: `target_dir` gives `TARGET_DIR`,
/// `X-API-Key` gives `X_API_KEY`.
fn variable_name(hint: &str) -> String {
    let mut name: String = hint
        .trim_start_matches('-')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Builds one entry, collecting the variables its references name.
pub(super) struct Builder {
    /// The entry's key (`packages[0]`), for messages.
    pub(super) at: String,
    /// The variables named so far, in order of first use.
    pub(super) variables: Vec<ImportedVariable>,
}

/// The fields of an input (an argument, a variable, a header, an
/// environment variable) that matter here.
struct InputFields<'a> {
    value: Option<&'a str>,
    default: Option<&'a str>,
    description: Option<&'a str>,
    required: bool,
    secret: bool,
}

impl<'a> InputFields<'a> {
    fn of(map: &'a Map<String, Value>) -> Self {
        let text = |k: &str| map.get(k).and_then(Value::as_str);
        let flag = |k: &str| map.get(k).and_then(Value::as_bool).unwrap_or(false);
        InputFields {
            value: text("value"),
            default: text("default"),
            description: text("description"),
            required: flag("isRequired"),
            secret: flag("isSecret"),
        }
    }
}

impl Builder {
    fn key(&self, key: &str) -> String {
        format!("{}.{key}", self.at)
    }

    fn text<'m>(
        &self,
        map: &'m Map<String, Value>,
        key: &str,
    ) -> Result<Option<&'m str>, ServerJsonError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(self.key(key), "must be a string")),
        }
    }

    /// A `${NAME}` reference (`${NAME:-default}` when there is a default),
    /// remembering the variable.
    fn reference(&mut self, name: String, input: &InputFields<'_>) -> String {
        if !self.variables.iter().any(|v| v.name == name) {
            self.variables.push(ImportedVariable {
                name: name.clone(),
                description: input.description.map(str::to_owned),
                secret: input.secret,
                required: input.required && input.default.is_none(),
                default: input.default.map(str::to_owned),
            });
        }
        match input.default {
            Some(default) if !default.contains('}') => format!("${{{name}:-{}}}", literal(default)),
            _ => format!("${{{name}}}"),
        }
    }

    /// The value of an input: its `value` (with `{variable}`s of
    /// `variables` as references), else a reference the user fills (named
    /// by `hint`) when it is required, a secret or has a default; `None`
    /// for an optional input without any.
    fn value(
        &mut self,
        map: &Map<String, Value>,
        hint: &str,
        key: &str,
    ) -> Result<Option<String>, ServerJsonError> {
        let input = InputFields::of(map);
        if let Some(value) = input.value {
            let variables = match map.get("variables") {
                None => None,
                Some(Value::Object(v)) => Some(v),
                Some(_) => return Err(invalid(format!("{key}.variables"), "must be an object")),
            };
            return Ok(Some(self.substitute(value, variables)));
        }
        if input.required || input.secret || input.default.is_some() {
            return Ok(Some(self.reference(variable_name(hint), &input)));
        }
        Ok(None)
    }

    /// `text` with each `{name}` of `variables` as a reference; the rest
    /// literal.
    fn substitute(&mut self, text: &str, variables: Option<&Map<String, Value>>) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
            let name = &rest[open + 1..close];
            match variables.and_then(|v| v.get(name)) {
                Some(Value::Object(var)) => {
                    out.push_str(&literal(&rest[..open]));
                    let input = InputFields::of(var);
                    let reference = self.reference(variable_name(name), &input);
                    out.push_str(&reference);
                }
                _ => out.push_str(&literal(&rest[..=close])),
            }
            rest = &rest[close + 1..];
        }
        out.push_str(&literal(rest));
        out
    }

    /// `runtimeArguments` or `packageArguments`.
    fn arguments(
        &mut self,
        entry: &Map<String, Value>,
        key: &str,
    ) -> Result<Vec<String>, ServerJsonError> {
        let items = match entry.get(key) {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(invalid(self.key(key), "must be an array")),
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = format!("{}.{key}[{i}]", self.at);
            let Value::Object(arg) = item else { return Err(invalid(at, "must be an object")) };
            let text = |k: &str| arg.get(k).and_then(Value::as_str);
            match text("type") {
                Some("positional") => {
                    let hint = text("valueHint").unwrap_or("value");
                    let value = match self.value(arg, hint, &at)? {
                        Some(value) => value,
                        // A positional argument holds its place: the user
                        // gives it even when the file does not say it is
                        // required.
                        None => {
                            let mut input = InputFields::of(arg);
                            input.required = true;
                            self.reference(variable_name(hint), &input)
                        }
                    };
                    out.push(value);
                }
                Some("named") => {
                    let Some(flag) = text("name").filter(|n| !n.trim().is_empty()) else {
                        return Err(invalid(format!("{at}.name"), "is missing"));
                    };
                    let hint = text("valueHint").unwrap_or(flag);
                    let value = self.value(arg, hint, &at)?;
                    let has_value = arg.contains_key("value") || arg.contains_key("default");
                    match value {
                        Some(value) => {
                            out.push(literal(flag));
                            out.push(value);
                        }
                        // A required flag that takes no value.
                        None if !has_value && InputFields::of(arg).required => {
                            out.push(literal(flag))
                        }
                        None => {}
                    }
                }
                _ => {
                    return Err(invalid(
                        format!("{at}.type"),
                        "must be \"positional\" or \"named\"",
                    ));
                }
            }
        }
        Ok(out)
    }

    pub(super) fn package(
        &mut self,
        entry: &Map<String, Value>,
    ) -> Result<TransportConfig, ServerJsonError> {
        let Some(kind) = self.text(entry, "registryType")? else {
            return Err(invalid(self.key("registryType"), "is missing"));
        };
        let Some(id) = self.text(entry, "identifier")?.filter(|i| !i.trim().is_empty()) else {
            return Err(invalid(self.key("identifier"), "is missing"));
        };
        let id = literal(id.trim());
        let version =
            self.text(entry, "version")?.map(|v| literal(v.trim())).filter(|v| !v.is_empty());
        match entry.get("transport").and_then(|t| t.get("type")).and_then(Value::as_str) {
            None | Some("stdio") => {}
            Some(_) => {
                return Err(invalid(
                    self.key("transport.type"),
                    "the package serves over HTTP once started; only stdio packages are \
                     started by this client (import a remote instead)",
                ));
            }
        }
        let hint = self.text(entry, "runtimeHint")?.map(literal);
        let runtime = self.arguments(entry, "runtimeArguments")?;
        let package = self.arguments(entry, "packageArguments")?;
        let env = self.environment(entry)?;
        let mut args = Vec::new();
        let command = match kind {
            "npm" => {
                let command = hint.unwrap_or_else(|| "npx".into());
                args.extend(runtime);
                if command == "npx" {
                    args.push("-y".into());
                }
                args.push(match &version {
                    Some(v) => format!("{id}@{v}"),
                    None => id,
                });
                args.extend(package);
                command
            }
            "pypi" => {
                args.extend(runtime);
                args.push(match &version {
                    Some(v) => format!("{id}=={v}"),
                    None => id,
                });
                args.extend(package);
                hint.unwrap_or_else(|| "uvx".into())
            }
            "oci" => {
                args.extend(["run", "-i", "--rm"].map(String::from));
                args.extend(runtime);
                // The container sees only the variables passed to it.
                for (name, _) in &env {
                    args.extend(["-e".to_owned(), name.clone()]);
                }
                let tagged = id.rsplit('/').next().is_some_and(|last| last.contains([':', '@']));
                args.push(match &version {
                    Some(v) if !tagged => format!("{id}:{v}"),
                    _ => id,
                });
                args.extend(package);
                hint.unwrap_or_else(|| "docker".into())
            }
            "nuget" => {
                args.extend(runtime);
                args.push(match &version {
                    Some(v) => format!("{id}@{v}"),
                    None => id,
                });
                if !package.is_empty() {
                    args.push("--".into());
                    args.extend(package);
                }
                hint.unwrap_or_else(|| "dnx".into())
            }
            other => {
                return Err(ServerJsonError::UnknownRegistryType {
                    path: None,
                    key: self.key("registryType"),
                    registry_type: other.to_owned(),
                });
            }
        };
        let mut cmd = ServerCommand::new(command);
        cmd.args = args;
        cmd.env.extend(env);
        Ok(TransportConfig::Stdio(cmd))
    }

    /// `environmentVariables`: each given its value, or a reference to the
    /// variable of the same name in the user's environment.
    fn environment(
        &mut self,
        entry: &Map<String, Value>,
    ) -> Result<Vec<(String, String)>, ServerJsonError> {
        let items = match entry.get("environmentVariables") {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(invalid(self.key("environmentVariables"), "must be an array")),
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = format!("{}.environmentVariables[{i}]", self.at);
            let Value::Object(var) = item else { return Err(invalid(at, "must be an object")) };
            let name = var.get("name").and_then(Value::as_str).unwrap_or_default();
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(invalid(format!("{at}.name"), "must be an environment variable name"));
            }
            let input = InputFields::of(var);
            let value = match input.value {
                Some(_) => self.value(var, name, &at)?,
                None if input.required || input.secret || input.default.is_some() => {
                    Some(self.reference(name.to_owned(), &input))
                }
                None => None,
            };
            if let Some(value) = value {
                out.push((name.to_owned(), value));
            }
        }
        Ok(out)
    }

    pub(super) fn remote(
        &mut self,
        entry: &Map<String, Value>,
    ) -> Result<TransportConfig, ServerJsonError> {
        // `transport_type` is the name of earlier drafts.
        let kind = match self.text(entry, "type")? {
            Some(kind) => kind,
            None => self.text(entry, "transport_type")?.unwrap_or_default(),
        };
        if !matches!(kind, "streamable-http" | "sse") {
            return Err(invalid(self.key("type"), "must be \"streamable-http\" or \"sse\""));
        }
        let Some(url) = self.text(entry, "url")?.filter(|u| !u.trim().is_empty()) else {
            return Err(invalid(self.key("url"), "is missing"));
        };
        let variables = match entry.get("variables") {
            None => None,
            Some(Value::Object(v)) => Some(v),
            Some(_) => return Err(invalid(self.key("variables"), "must be an object")),
        };
        let endpoint = self.substitute(url.trim(), variables);
        let mut headers = Vec::new();
        if let Some(items) = entry.get("headers") {
            let Value::Array(items) = items else {
                return Err(invalid(self.key("headers"), "must be an array"));
            };
            for (i, item) in items.iter().enumerate() {
                let at = format!("{}.headers[{i}]", self.at);
                let Value::Object(header) = item else {
                    return Err(invalid(at, "must be an object"));
                };
                let Some(name) = header.get("name").and_then(Value::as_str).filter(|n| {
                    !n.is_empty() && n.bytes().all(|b| b.is_ascii_graphic() && b != b':')
                }) else {
                    return Err(invalid(format!("{at}.name"), "must be a header name"));
                };
                if let Some(value) = self.value(header, name, &at)? {
                    headers.push((name.to_owned(), Secret::new(value)));
                }
            }
        }
        Ok(TransportConfig::Http {
            endpoint,
            headers,
            auth: AuthConfig::None,
            network: HttpNetwork::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_names() {
        for (hint, name) in [
            ("target_dir", "TARGET_DIR"),
            ("X-API-Key", "X_API_KEY"),
            ("--port", "PORT"),
            ("1x", "_1X"),
        ] {
            assert_eq!(variable_name(hint), name);
        }
    }

    #[test]
    fn the_files_text_never_refers_to_the_environment() {
        let mut b = Builder { at: "packages[0]".into(), variables: Vec::new() };
        assert_eq!(b.substitute("a${HOME}{x}", None), "a$${HOME}{x}");
        assert!(b.variables.is_empty());
    }
}
