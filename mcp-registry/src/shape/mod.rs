//! Tool input schemas shaped for a model provider, and the model's
//! arguments mapped back.
//!
//! Providers accept different subsets of JSON Schema. [`shape_schema`]
//! turns a tool's `inputSchema` into what a [`SchemaTarget`] accepts and
//! returns, with it, the [`ArgumentMap`] that turns arguments valid under
//! the shaped schema into arguments valid under the original.
//!
//! | target | what the schema becomes | arguments back |
//! |---|---|---|
//! | [`Strict`](SchemaTarget::Strict) | strict function calling: local `$ref`s inlined and `$defs` dropped; every object `additionalProperties: false` with every property in `required`; an optional property also accepts `null` (`"null"` added to its `type`, or `anyOf` with `{"type": "null"}`) | a `null` given for a property that was optional is removed |
//! | [`Plain`](SchemaTarget::Plain) | no `$ref`/`$defs` (inlined), no `format`, no `null` among the choices of `type`, `enum`, `anyOf`, `oneOf` (a lone choice left is merged into its schema) | unchanged |
//! | [`Unchanged`](SchemaTarget::Unchanged) | as the server sent it | unchanged |
//!
//! Both shaping targets also drop `$schema`, `$id` and `$anchor`.
//!
//! # Bounds
//!
//! Inlining copies a definition at each use, so a small schema can stand
//! for an enormous one, and a definition that refers to itself for an
//! infinite one. Shaping stops with a typed [`ShapeError`] at a cycle
//! ([`ShapeError::Cycle`]), at a nesting deeper than
//! [`ShapeLimits::max_depth`] (at most [`ShapeLimits::HARD_MAX_DEPTH`],
//! whatever is asked, so the stack is never at risk) and past
//! [`ShapeLimits::max_nodes`] nodes produced, counted as they are made.
//! Only local references (`#`, `#/$defs/...`, any JSON pointer into the
//! schema) resolve; any other is [`ShapeError::UnresolvedRef`]: nothing is
//! ever fetched.
//!
//! # What the mapping cannot know
//!
//! Under `anyOf`/`oneOf`/`allOf` the optional properties of every branch
//! are merged: a `null` for a property that one branch makes optional and
//! another requires as nullable is removed. A free-form object (no
//! `properties`) is closed by strict shaping and so only accepts `{}`.
//!
//! ```
//! use mcp_host_registry::shape::{SchemaTarget, ShapeLimits, shape_schema};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "path": { "type": "string" },
//!         "steps": { "$ref": "#/$defs/count" }
//!     },
//!     "required": ["path"],
//!     "$defs": { "count": { "type": "integer", "minimum": 0 } }
//! });
//! let shaped = shape_schema(&schema, SchemaTarget::Strict, &ShapeLimits::default()).unwrap();
//! assert_eq!(shaped.schema, json!({
//!     "type": "object",
//!     "properties": {
//!         "path": { "type": "string" },
//!         "steps": { "type": ["integer", "null"], "minimum": 0 }
//!     },
//!     "required": ["path", "steps"],
//!     "additionalProperties": false
//! }));
//! // The model fills every property; the stand-in goes away.
//! let back = shaped.arguments.to_original(json!({"path": "/tmp", "steps": null}));
//! assert_eq!(back, json!({"path": "/tmp"}));
//! ```

mod inline;
mod provider;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use mcp_proto::types::Tool;
use serde_json::Value;

/// What a schema is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaTarget {
    /// Strict function calling (`strict`).
    Strict,
    /// A provider without `$ref`/`$defs`, `null` choices or `format`
    /// (`plain`).
    Plain,
    /// The schema as the server sent it (`unchanged`).
    Unchanged,
}

impl SchemaTarget {
    /// Every target, in the order of their names.
    pub const ALL: [SchemaTarget; 3] =
        [SchemaTarget::Strict, SchemaTarget::Plain, SchemaTarget::Unchanged];

    /// The target's name: `strict`, `plain` or `unchanged`.
    pub fn name(self) -> &'static str {
        match self {
            SchemaTarget::Strict => "strict",
            SchemaTarget::Plain => "plain",
            SchemaTarget::Unchanged => "unchanged",
        }
    }
}

impl fmt::Display for SchemaTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SchemaTarget {
    type Err = ShapeError;

    fn from_str(text: &str) -> Result<Self, ShapeError> {
        SchemaTarget::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(text.trim()))
            .ok_or(ShapeError::UnknownTarget)
    }
}

/// How far shaping may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShapeLimits {
    /// The deepest nesting of subschemas (64 by default; at most
    /// [`HARD_MAX_DEPTH`](Self::HARD_MAX_DEPTH)).
    pub max_depth: usize,
    /// The most nodes (subschemas and the JSON values in their keywords)
    /// the shaped schema may have (20,000 by default).
    pub max_nodes: usize,
}

impl ShapeLimits {
    /// The deepest nesting ever walked, whatever `max_depth` says.
    pub const HARD_MAX_DEPTH: usize = 128;

    /// Limits of `max_depth` and `max_nodes`.
    pub fn new(max_depth: usize, max_nodes: usize) -> Self {
        ShapeLimits { max_depth, max_nodes }
    }

    fn effective_depth(&self) -> usize {
        self.max_depth.min(Self::HARD_MAX_DEPTH)
    }
}

impl Default for ShapeLimits {
    fn default() -> Self {
        ShapeLimits { max_depth: 64, max_nodes: 20_000 }
    }
}

/// Why a schema could not be shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShapeError {
    /// A reference leads back to itself.
    Cycle {
        /// The reference (at most 100 characters of it).
        reference: String,
    },
    /// A reference that is not a JSON pointer into the schema, or points
    /// at nothing.
    UnresolvedRef {
        /// The reference (at most 100 characters of it).
        reference: String,
    },
    /// Subschemas nest deeper than the limit.
    TooDeep {
        /// The limit.
        max_depth: usize,
    },
    /// The shaped schema would have more nodes than the limit.
    TooLarge {
        /// The limit.
        max_nodes: usize,
    },
    /// A target name that is none of `strict`, `plain`, `unchanged`.
    UnknownTarget,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Cycle { reference } => {
                write!(f, "the schema's reference {reference:?} leads back to itself")
            }
            ShapeError::UnresolvedRef { reference } => write!(
                f,
                "the schema's reference {reference:?} does not point into the schema (only local references are followed)"
            ),
            ShapeError::TooDeep { max_depth } => {
                write!(f, "the schema nests deeper than {max_depth} levels")
            }
            ShapeError::TooLarge { max_nodes } => {
                write!(f, "the shaped schema would have more than {max_nodes} nodes")
            }
            ShapeError::UnknownTarget => {
                f.write_str("the schema target must be \"strict\", \"plain\" or \"unchanged\"")
            }
        }
    }
}

impl std::error::Error for ShapeError {}

/// A schema shaped for a target, and the way back for arguments.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ShapedSchema {
    /// The schema to give the provider.
    pub schema: Value,
    /// Maps arguments valid under `schema` to arguments for the tool.
    pub arguments: ArgumentMap,
}

/// What to undo in a model's arguments: per object, the properties whose
/// `null` stands for "not given", and the same for nested objects and
/// array items. Empty for targets that change no argument.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgumentMap {
    optional: BTreeSet<String>,
    properties: BTreeMap<String, ArgumentMap>,
    items: Option<Box<ArgumentMap>>,
}

impl ArgumentMap {
    /// Whether the map changes nothing.
    pub fn is_empty(&self) -> bool {
        self.optional.is_empty() && self.properties.is_empty() && self.items.is_none()
    }

    /// The arguments for the tool: every `null` given for a property that
    /// was optional removed, in nested objects and array items too.
    /// Anything the map does not describe is left as it is.
    pub fn to_original(&self, mut arguments: Value) -> Value {
        self.apply(&mut arguments);
        arguments
    }

    fn apply(&self, value: &mut Value) {
        match value {
            Value::Object(members) => {
                members.retain(|k, v| !(v.is_null() && self.optional.contains(k)));
                for (name, map) in &self.properties {
                    if let Some(member) = members.get_mut(name) {
                        map.apply(member);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(map) = &self.items {
                    items.iter_mut().for_each(|item| map.apply(item));
                }
            }
            _ => {}
        }
    }

    fn merge(&mut self, other: ArgumentMap) {
        self.optional.extend(other.optional);
        for (name, map) in other.properties {
            self.properties.entry(name).or_default().merge(map);
        }
        if let Some(items) = other.items {
            match &mut self.items {
                Some(mine) => mine.merge(*items),
                None => self.items = Some(items),
            }
        }
    }
}

/// Shapes `schema` (a tool's `inputSchema` as JSON) for `target`, within
/// `limits` (see the [module docs](self)).
pub fn shape_schema(
    schema: &Value,
    target: SchemaTarget,
    limits: &ShapeLimits,
) -> Result<ShapedSchema, ShapeError> {
    match target {
        SchemaTarget::Unchanged => {
            Ok(ShapedSchema { schema: schema.clone(), arguments: ArgumentMap::default() })
        }
        SchemaTarget::Strict => {
            let mut shaped = inline::inline(schema, limits)?;
            let arguments = provider::strict(&mut shaped);
            Ok(ShapedSchema { schema: shaped, arguments })
        }
        SchemaTarget::Plain => {
            let mut shaped = inline::inline(schema, limits)?;
            provider::plain(&mut shaped);
            Ok(ShapedSchema { schema: shaped, arguments: ArgumentMap::default() })
        }
    }
}

/// Shapes a tool's `inputSchema` ([`shape_schema`]).
pub fn shape_tool(
    tool: &Tool,
    target: SchemaTarget,
    limits: &ShapeLimits,
) -> Result<ShapedSchema, ShapeError> {
    // Encoding a `ToolSchema` cannot fail: every key is a string.
    let schema = serde_json::to_value(&tool.input_schema).unwrap_or(Value::Null);
    shape_schema(&schema, target, limits)
}
