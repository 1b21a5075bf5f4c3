//! `outputSchema` validation (the `schema` feature).
//!
//! A tool that declares an `outputSchema` must return `structuredContent`
//! that conforms to it. [`validate_structured_content`] checks that with the
//! `jsonschema` crate, built without its HTTP and file resolvers and told to
//! stay offline: a `$ref` is resolved only inside the schema itself (`#/$defs/...`,
//! an `$id` it declares, the drafts' meta-schemas, which the crate ships);
//! any other `$ref` makes the schema invalid. Nothing is ever fetched.
//!
//! The dialect is the schema's `$schema` when it names one, JSON Schema
//! 2020-12 otherwise (as MCP specifies).

use std::fmt;

use serde_json::Value;

use crate::types::{CallToolResult, Tool};

/// Checks a tool call's `structuredContent` against the tool's
/// `outputSchema`:
///
/// - a tool without an `outputSchema` accepts any result;
/// - a result with `isError: true` is not checked (errors need not match);
/// - otherwise `structuredContent` must be present and conform.
///
/// The schema is read in the dialect its `$schema` names, JSON Schema
/// 2020-12 when it names none. Nothing is ever fetched: the `jsonschema`
/// crate is built without its HTTP and file resolvers and told to stay
/// offline, so a `$ref` resolves only inside the schema itself
/// (`#/$defs/...`, an `$id` it declares) or to a draft's meta-schema, which
/// the crate ships; any other `$ref` is [`SchemaError::InvalidSchema`].
///
/// The schema is compiled on every call; to check many results of one tool,
/// compile it once with [`OutputSchemaValidator::new`].
///
/// ```
/// use mcp_proto::types::{CallToolResult, SchemaError, Tool, validate_structured_content};
/// use serde_json::json;
///
/// let tool: Tool = serde_json::from_value(json!({
///     "name": "weather",
///     "inputSchema": {"type": "object"},
///     "outputSchema": {
///         "type": "object",
///         "properties": {"celsius": {"type": "number"}},
///         "required": ["celsius"]
///     }
/// }))
/// .unwrap();
/// let ok = CallToolResult { structured_content: Some(json!({"celsius": 21.5})), ..Default::default() };
/// assert_eq!(validate_structured_content(&tool, &ok), Ok(()));
///
/// let bad = CallToolResult { structured_content: Some(json!({"celsius": "warm"})), ..Default::default() };
/// match validate_structured_content(&tool, &bad) {
///     Err(SchemaError::Mismatch { instance_path, .. }) => assert_eq!(instance_path, "/celsius"),
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn validate_structured_content(
    tool: &Tool,
    result: &CallToolResult,
) -> Result<(), SchemaError> {
    if tool.output_schema.is_none() || result.is_error == Some(true) {
        return Ok(());
    }
    if result.structured_content.is_none() {
        return Err(SchemaError::MissingStructuredContent);
    }
    OutputSchemaValidator::new(tool)?.validate(result)
}

/// A tool's `outputSchema`, compiled once to check many results.
#[derive(Debug)]
pub struct OutputSchemaValidator {
    /// `None` when the tool has no `outputSchema`.
    validator: Option<jsonschema::Validator>,
}

impl OutputSchemaValidator {
    /// Compiles `tool`'s `outputSchema`, offline (see
    /// [`validate_structured_content`]). A tool without one gives a
    /// validator that accepts every result.
    pub fn new(tool: &Tool) -> Result<Self, SchemaError> {
        let Some(schema) = &tool.output_schema else {
            return Ok(OutputSchemaValidator { validator: None });
        };
        let schema = serde_json::to_value(schema)
            .map_err(|e| SchemaError::InvalidSchema { reason: e.to_string() })?;
        Ok(OutputSchemaValidator { validator: Some(compile(&schema)?) })
    }

    /// Checks `result` by the rules of [`validate_structured_content`].
    pub fn validate(&self, result: &CallToolResult) -> Result<(), SchemaError> {
        let Some(validator) = &self.validator else { return Ok(()) };
        if result.is_error == Some(true) {
            return Ok(());
        }
        let instance =
            result.structured_content.as_ref().ok_or(SchemaError::MissingStructuredContent)?;
        match validator.iter_errors(instance).next() {
            None => Ok(()),
            Some(error) => Err(SchemaError::Mismatch {
                instance_path: error.instance_path().as_str().to_owned(),
                message: error.to_string(),
            }),
        }
    }
}

/// Compiles `schema` without any way to reach the network or the file
/// system, in JSON Schema 2020-12 unless it names its `$schema`.
fn compile(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    let mut options = jsonschema::options().offline();
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    options.build(schema).map_err(|e| SchemaError::InvalidSchema { reason: e.to_string() })
}

/// Why a tool result does not pass its tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// The tool has an `outputSchema`, the result is not an error, and it
    /// has no `structuredContent`.
    MissingStructuredContent,
    /// `structuredContent` does not conform to the schema (the first
    /// failure found).
    Mismatch {
        /// Where in `structuredContent`, as a JSON pointer (`""` for the
        /// whole value, `/items/0/name` for a member).
        instance_path: String,
        /// What is wrong there.
        message: String,
    },
    /// The `outputSchema` itself is not a usable JSON Schema, or refers
    /// (`$ref`) to a document that is not part of it.
    InvalidSchema {
        /// Why it could not be compiled.
        reason: String,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::MissingStructuredContent => f.write_str(
                "the tool declares an outputSchema but its result has no structuredContent",
            ),
            SchemaError::Mismatch { instance_path, message } if instance_path.is_empty() => {
                write!(f, "structuredContent does not match the tool's outputSchema: {message}")
            }
            SchemaError::Mismatch { instance_path, message } => write!(
                f,
                "structuredContent does not match the tool's outputSchema at {instance_path}: \
                 {message}"
            ),
            SchemaError::InvalidSchema { reason } => {
                write!(f, "the tool's outputSchema is invalid: {reason}")
            }
        }
    }
}

impl std::error::Error for SchemaError {}
