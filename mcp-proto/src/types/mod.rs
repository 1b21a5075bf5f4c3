//! MCP wire types of revision 2025-11-25.
//!
//! One Rust type per type of the revision's `schema.ts`, with the same name
//! (`Tool`, `CallToolResult`, `InitializeRequestParams`, ...), grouped in
//! submodules by feature and all re-exported here. Every struct encodes to
//! and decodes from the exact JSON of the specification:
//!
//! - members are camelCase, optional members are `Option`s that are left
//!   out when `None`, `_meta` is `meta: Option<Meta>`;
//! - members this crate does not know are kept in each struct's `extra` map
//!   and written back, so decoding then encoding gives back what was sent
//!   (object keys aside, which come out sorted);
//! - open unions never fail on what a newer peer sends: a content block of an
//!   unknown `type` decodes to `ContentBlock::Unknown`, an unknown string
//!   value of an enum (`LoggingLevel`, `TaskStatus`, ...) to its `Other`
//!   variant, an unknown elicitation field schema to
//!   `PrimitiveSchemaDefinition::Unknown`;
//! - JSON Schemas (`inputSchema`, `outputSchema`, `requestedSchema`) keep
//!   every keyword: the known top-level ones as fields, the rest in `extra`;
//! - numbers the schema types as `number` are `f64`, written without a
//!   fraction when integral (as JavaScript does), so `50` stays `50`.
//!
//! Tagged unions (`ContentBlock`, `SamplingMessageContentBlock`,
//! `PrimitiveSchemaDefinition`, `EnumSchema`) write their `type` member
//! themselves: the structs inside them (`TextContent`, `StringSchema`, ...)
//! have no `type` field and encode without it on their own.
//!
//! Beside the wire types: [`CallToolResult::structured_as`] decodes a tool
//! result into a Rust type, constructors build what a host's handlers
//! return ([`Root::new`], [`CreateMessageResult::text`],
//! [`ElicitResult::accept`], ...), and, with the `schema` feature,
//! `validate_structured_content` checks a result against its tool's
//! `outputSchema`, offline.

#[macro_use]
mod macros;

mod common;
mod completion;
mod content;
mod elicitation;
mod lifecycle;
mod logging;
mod modern;
mod notifications;
mod pagination;
mod prompts;
mod resources;
mod roots;
mod sampling;
#[cfg(feature = "schema")]
mod schema_check;
mod tasks;
mod tools;

pub use common::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use lifecycle::*;
pub use logging::*;
pub use modern::*;
pub use notifications::*;
pub use pagination::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
#[cfg(feature = "schema")]
pub use schema_check::*;
pub use tasks::*;
pub use tools::*;
