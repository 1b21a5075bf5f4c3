//! Elicitation (`elicitation/create`, server → client): form mode with a
//! restricted JSON Schema, and URL mode (2025-11-25).

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::types::macros::{Tagged, decode_untagged, serialize_opt_f64, tagged_object};
use crate::types::{JsonObject, Meta, TaskMetadata};

/// The parameters of `elicitation/create`: form mode or URL mode.
///
/// Tagged by `mode`, which may be absent for form mode: absent or `"form"`
/// decodes to [`ElicitRequestParams::Form`] (which remembers whether `mode`
/// was sent, so it re-encodes as it came), `"url"` to
/// [`ElicitRequestParams::Url`]; any other mode is an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode: ask the user for data described by a schema.
    Form(ElicitRequestFormParams),
    /// URL mode: send the user to a URL (out of band).
    Url(ElicitRequestURLParams),
}

impl ElicitRequestParams {
    /// The message to present to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form(f) => &f.message,
            ElicitRequestParams::Url(u) => &u.message,
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let mode = match value.get("mode") {
            None | Some(Value::Null) => "form",
            Some(Value::String(m)) => m.as_str(),
            Some(other) => {
                return Err(de::Error::custom(format!(
                    "elicitation \"mode\" must be a string, found {}",
                    crate::jsonrpc::kind_of(other)
                )));
            }
        };
        match mode {
            "form" => serde_json::from_value(value)
                .map(ElicitRequestParams::Form)
                .map_err(de::Error::custom),
            "url" => serde_json::from_value(value)
                .map(ElicitRequestParams::Url)
                .map_err(de::Error::custom),
            other => Err(de::Error::custom(format!("unknown elicitation mode {other:?}"))),
        }
    }
}

/// The `mode` value of form-mode elicitation: `"form"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ElicitFormMode {
    /// `"form"`.
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// The `mode` value of URL-mode elicitation: `"url"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ElicitUrlMode {
    /// `"url"`.
    #[default]
    #[serde(rename = "url")]
    Url,
}

/// Form-mode elicitation: ask the user for non-sensitive data.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `Some` if the server sent `"mode": "form"`, `None` if it left `mode`
    /// out (which means the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ElicitFormMode>,
    /// What is being asked, for the user.
    pub message: String,
    /// The schema of the data asked for.
    pub requested_schema: RequestedSchema,
    /// Present to ask for task-augmented execution (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// URL-mode elicitation: send the user to a URL.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestURLParams {
    /// Always `"url"`.
    pub mode: ElicitUrlMode,
    /// Why the interaction is needed, for the user.
    pub message: String,
    /// The elicitation's id, unique per server; opaque to the client.
    pub elicitation_id: String,
    /// The URL the user should navigate to.
    pub url: String,
    /// Present to ask for task-augmented execution (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The same type under the Rust naming convention.
pub type ElicitRequestUrlParams = ElicitRequestURLParams;

/// The `data` of a `-32042` (URL elicitation required) error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct URLElicitationRequiredErrorData {
    /// The URL elicitations to complete before retrying.
    pub elicitations: Vec<ElicitRequestURLParams>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

fn object_type() -> String {
    "object".to_owned()
}

/// The `requestedSchema` of form-mode elicitation: an object schema whose
/// properties are flat primitives.
///
/// Properties are kept in a map sorted by name (the order a server wrote them
/// in is not kept); keywords this crate does not know are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestedSchema {
    /// The `$schema` dialect URI.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The root type: `"object"` (the default when absent).
    #[serde(rename = "type", default = "object_type")]
    pub schema_type: String,
    /// The fields, by name.
    #[serde(default)]
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of the required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Every other keyword, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Default for RequestedSchema {
    /// An object schema without properties.
    fn default() -> Self {
        RequestedSchema {
            schema: None,
            schema_type: object_type(),
            properties: BTreeMap::new(),
            required: None,
            extra: JsonObject::new(),
        }
    }
}

impl RequestedSchema {
    /// The `default` value of every field that declares one, by field name:
    /// what a host pre-fills in the form it shows, and what it sends for
    /// fields the user left alone.
    pub fn defaults(&self) -> JsonObject {
        self.properties
            .iter()
            .filter_map(|(name, field)| {
                let value = serde_json::to_value(field).ok()?;
                let default = value.get("default")?.clone();
                (!default.is_null()).then(|| (name.clone(), default))
            })
            .collect()
    }
}

/// The schema of one elicitation field: a primitive without nesting.
///
/// Decoded by `type` and shape: `"string"` with `enum` or `oneOf` is an
/// [`EnumSchema`], other `"string"` a [`StringSchema`]; `"number"` and
/// `"integer"` a [`NumberSchema`]; `"boolean"` a [`BooleanSchema`];
/// `"array"` with enum items an [`EnumSchema`]. Anything else decodes to
/// `Unknown` (kept as sent), so a newer server's field type does not make
/// the whole request undecodable.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveSchemaDefinition {
    /// A string field.
    String(StringSchema),
    /// A number or integer field.
    Number(NumberSchema),
    /// A boolean field.
    Boolean(BooleanSchema),
    /// A single- or multi-select enumeration.
    Enum(EnumSchema),
    /// A field schema this crate does not know, kept as sent.
    Unknown(Value),
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            PrimitiveSchemaDefinition::String(s) => {
                Tagged { tag: "string", inner: s }.serialize(serializer)
            }
            PrimitiveSchemaDefinition::Number(n) => n.serialize(serializer),
            PrimitiveSchemaDefinition::Boolean(b) => {
                Tagged { tag: "boolean", inner: b }.serialize(serializer)
            }
            PrimitiveSchemaDefinition::Enum(e) => e.serialize(serializer),
            PrimitiveSchemaDefinition::Unknown(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Value::Object(map) = &value else {
            return Ok(PrimitiveSchemaDefinition::Unknown(value));
        };
        let tag = map.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
        let has_options = match tag.as_str() {
            "string" => map.contains_key("enum") || map.contains_key("oneOf"),
            "array" => is_enum_items(map.get("items")),
            _ => false,
        };
        let result = match tag.as_str() {
            "string" | "array" if has_options => {
                decode_enum_schema(value).map(PrimitiveSchemaDefinition::Enum)
            }
            "string" => decode_tagged(value).map(PrimitiveSchemaDefinition::String),
            "boolean" => decode_tagged(value).map(PrimitiveSchemaDefinition::Boolean),
            "number" | "integer" => serde_json::from_value(value)
                .map(PrimitiveSchemaDefinition::Number)
                .map_err(|e| e.to_string()),
            _ => Ok(PrimitiveSchemaDefinition::Unknown(value)),
        };
        result.map_err(de::Error::custom)
    }
}

fn is_enum_items(items: Option<&Value>) -> bool {
    items.is_some_and(|i| i.get("enum").is_some() || i.get("anyOf").is_some())
}

fn decode_tagged<T: de::DeserializeOwned>(value: Value) -> Result<T, String> {
    let (_, map) = tagged_object(value, "a schema")?;
    decode_untagged(map, "type")
}

fn decode_enum_schema(value: Value) -> Result<EnumSchema, String> {
    let (tag, map) = tagged_object(value, "an enum schema")?;
    match tag.as_str() {
        "string" if map.contains_key("oneOf") => {
            decode_untagged(map, "type").map(EnumSchema::TitledSingleSelect)
        }
        "string" if map.contains_key("enumNames") => {
            decode_untagged(map, "type").map(EnumSchema::LegacyTitled)
        }
        "string" if map.contains_key("enum") => {
            decode_untagged(map, "type").map(EnumSchema::UntitledSingleSelect)
        }
        "array" if map.get("items").is_some_and(|i| i.get("anyOf").is_some()) => {
            decode_untagged(map, "type").map(EnumSchema::TitledMultiSelect)
        }
        "array" if map.get("items").is_some_and(|i| i.get("enum").is_some()) => {
            decode_untagged(map, "type").map(EnumSchema::UntitledMultiSelect)
        }
        _ => Err(format!("not an enum schema: type {tag:?} without enum options")),
    }
}

/// A string field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// The maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// The format (`email`, `uri`, `date`, `date-time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_string_enum! {
    /// The `format` of a string field.
    pub enum StringFormat {
        /// `email`.
        Email => "email",
        /// `uri`.
        Uri => "uri",
        /// `date`.
        Date => "date",
        /// `date-time`.
        DateTime => "date-time",
    }
}

/// The `type` of a number field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `"number"`.
    #[default]
    Number,
    /// `"integer"`.
    Integer,
}

/// A number or integer field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub number_type: NumberType,
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The minimum value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub minimum: Option<f64>,
    /// The maximum value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub maximum: Option<f64>,
    /// The default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_f64"
    )]
    pub default: Option<f64>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A boolean field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An enumeration field: single select (`type: "string"`) or multi select
/// (`type: "array"`), with or without display titles.
#[derive(Debug, Clone, PartialEq)]
pub enum EnumSchema {
    /// `enum` values without titles.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// `oneOf` options with titles.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// An array of `items.enum` values without titles.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// An array of `items.anyOf` options with titles.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// `enum` with the legacy, non-standard `enumNames` (use
    /// `TitledSingleSelect` instead).
    LegacyTitled(LegacyTitledEnumSchema),
}

impl Serialize for EnumSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            EnumSchema::UntitledSingleSelect(s) => {
                Tagged { tag: "string", inner: s }.serialize(serializer)
            }
            EnumSchema::TitledSingleSelect(s) => {
                Tagged { tag: "string", inner: s }.serialize(serializer)
            }
            EnumSchema::UntitledMultiSelect(s) => {
                Tagged { tag: "array", inner: s }.serialize(serializer)
            }
            EnumSchema::TitledMultiSelect(s) => {
                Tagged { tag: "array", inner: s }.serialize(serializer)
            }
            EnumSchema::LegacyTitled(s) => Tagged { tag: "string", inner: s }.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for EnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        decode_enum_schema(Value::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

/// Single selection from `enum` values without display titles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An option with a display title (`{"const": ..., "title": ...}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label to display.
    pub title: String,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Single selection from `oneOf` options with display titles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options.
    pub one_of: Vec<TitledEnumOption>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `items` of an untitled multi-select enumeration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntitledMultiSelectItems {
    /// The items' type: `"string"`.
    #[serde(rename = "type", default = "string_type")]
    pub item_type: String,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

fn string_type() -> String {
    "string".to_owned()
}

impl Default for UntitledMultiSelectItems {
    /// String items without values.
    fn default() -> Self {
        UntitledMultiSelectItems {
            item_type: string_type(),
            values: Vec::new(),
            extra: JsonObject::new(),
        }
    }
}

/// Multiple selection from `items.enum` values without display titles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The minimum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The maximum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The item schema with the values.
    pub items: UntitledMultiSelectItems,
    /// The default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `items` of a titled multi-select enumeration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectItems {
    /// The options.
    pub any_of: Vec<TitledEnumOption>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Multiple selection from `items.anyOf` options with display titles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The minimum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The maximum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The item schema with the options.
    pub items: TitledMultiSelectItems,
    /// The default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Single selection from `enum` values with the legacy `enumNames` labels.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// The field's label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The field's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display names for the values, in the same order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// The default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Keywords this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

open_string_enum! {
    /// What the user did with an elicitation.
    pub enum ElicitAction {
        /// The user submitted the form or confirmed.
        Accept => "accept",
        /// The user explicitly declined.
        Decline => "decline",
        /// The user dismissed it without choosing.
        Cancel => "cancel",
    }
}

/// A submitted form value: a string, a number, a boolean or an array of
/// strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A string (also a single-select choice).
    String(String),
    /// A number or integer, kept exactly as written.
    Number(Number),
    /// A boolean.
    Boolean(bool),
    /// Strings of a multi-select choice.
    StringArray(Vec<String>),
}

impl From<&str> for ElicitValue {
    fn from(s: &str) -> Self {
        ElicitValue::String(s.to_owned())
    }
}

impl From<String> for ElicitValue {
    fn from(s: String) -> Self {
        ElicitValue::String(s)
    }
}

impl From<bool> for ElicitValue {
    fn from(b: bool) -> Self {
        ElicitValue::Boolean(b)
    }
}

impl From<i64> for ElicitValue {
    fn from(n: i64) -> Self {
        ElicitValue::Number(n.into())
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        ElicitValue::StringArray(v)
    }
}

/// The client's result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted data: only for `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// A result with `action` and no content.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult { action, content: None, meta: None, extra: JsonObject::new() }
    }
}

impl ElicitResult {
    /// The user submitted the form with `content`, the values by field name.
    ///
    /// A URL-mode elicitation is accepted without content:
    /// `ElicitResult::new(ElicitAction::Accept)`.
    ///
    /// ```
    /// use mcp_proto::types::{ElicitResult, ElicitValue};
    ///
    /// let result = ElicitResult::accept([
    ///     ("name", ElicitValue::from("Ada")),
    ///     ("age", ElicitValue::from(36)),
    ///     ("subscribe", ElicitValue::from(true)),
    /// ]);
    /// assert_eq!(
    ///     serde_json::to_value(&result).unwrap(),
    ///     serde_json::json!({
    ///         "action": "accept",
    ///         "content": {"age": 36, "name": "Ada", "subscribe": true}
    ///     })
    /// );
    /// assert_eq!(
    ///     serde_json::to_value(ElicitResult::decline()).unwrap(),
    ///     serde_json::json!({"action": "decline"})
    /// );
    /// ```
    pub fn accept<K, V>(content: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<ElicitValue>,
    {
        ElicitResult {
            content: Some(content.into_iter().map(|(k, v)| (k.into(), v.into())).collect()),
            ..ElicitResult::new(ElicitAction::Accept)
        }
    }

    /// The user explicitly declined.
    pub fn decline() -> Self {
        ElicitResult::new(ElicitAction::Decline)
    }

    /// The user dismissed the request without choosing.
    pub fn cancel() -> Self {
        ElicitResult::new(ElicitAction::Cancel)
    }
}
