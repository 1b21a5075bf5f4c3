//! Code generators and serde helpers shared by the type modules.
//!
//! Two kinds of open unions recur in the schema: string enums whose set of
//! values a newer revision may grow (`LoggingLevel`, `TaskStatus`, ...), and
//! object unions tagged by a `type` member (content blocks). Both decode
//! values this crate does not know into a catch-all variant instead of
//! failing, and encode them back unchanged.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// Serialises a struct with a leading `"type": tag` member.
#[derive(Serialize)]
pub(crate) struct Tagged<'a, T> {
    #[serde(rename = "type")]
    pub(crate) tag: &'a str,
    #[serde(flatten)]
    pub(crate) inner: &'a T,
}

/// Splits a tagged object into its `type` value and the object itself.
pub(crate) fn tagged_object(
    value: Value,
    what: &str,
) -> Result<(String, Map<String, Value>), String> {
    let map = match value {
        Value::Object(map) => map,
        other => {
            return Err(format!(
                "{what} must be an object, found {}",
                crate::jsonrpc::kind_of(&other)
            ));
        }
    };
    match map.get("type") {
        Some(Value::String(tag)) => Ok((tag.clone(), map)),
        Some(other) => Err(format!(
            "the \"type\" of {what} must be a string, found {}",
            crate::jsonrpc::kind_of(other)
        )),
        None => Err(format!("{what} has no \"type\" member")),
    }
}

/// Decodes `map` (without its tag) as `T`.
pub(crate) fn decode_untagged<T: serde::de::DeserializeOwned>(
    mut map: Map<String, Value>,
    tag: &str,
) -> Result<T, String> {
    map.remove(tag);
    serde_json::from_value(Value::Object(map)).map_err(|e| e.to_string())
}

/// Serialises an `f64` as JavaScript does: integral values without a
/// fraction (`50`, not `50.0`), so that numbers round-trip unchanged.
pub(crate) fn serialize_f64<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    // 2^53: beyond it not every integer is representable, keep the float.
    const MAX_SAFE: f64 = 9_007_199_254_740_992.0;
    let v = *value;
    if v.fract() == 0.0 && v.abs() < MAX_SAFE {
        if v < 0.0 {
            serializer.serialize_i64(v as i64)
        } else {
            serializer.serialize_u64(v as u64)
        }
    } else {
        serializer.serialize_f64(v)
    }
}

/// [`serialize_f64`] for an optional field (used with `skip_serializing_if`).
pub(crate) fn serialize_opt_f64<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serialize_f64(v, serializer),
        None => serializer.serialize_none(),
    }
}

/// A string enum with a catch-all `Other(String)` variant.
macro_rules! open_string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        ///
        /// A value this crate does not know decodes to `Other` and encodes back
        /// unchanged; build values with `From<&str>` so that known strings get
        /// their own variant.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate does not know (a newer revision's or an
            /// extension's), kept exactly as sent.
            Other(String),
        }

        impl $name {
            /// The value as it appears on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Other(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $( $wire => $name::$variant, )+
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.as_str() {
                    $( $wire => $name::$variant, )+
                    _ => $name::Other(s),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Ok($name::from(<String as ::serde::Deserialize>::deserialize(deserializer)?))
            }
        }
    };
}

/// An object union tagged by `type`, with a catch-all `Unknown(Value)`.
macro_rules! open_tagged_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident($ty:ty) => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        ///
        /// Encoded as the variant's object with a `"type"` member. A block
        /// whose `type` this crate does not know decodes to `Unknown` (never an
        /// error) and encodes back unchanged; a known `type` whose members are
        /// malformed is an error.
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vmeta])* $variant($ty), )+
            /// A block of a `type` this crate does not know (a newer
            /// revision's or an extension's), kept exactly as sent, `type`
            /// included.
            Unknown(::serde_json::Value),
        }

        impl $name {
            /// The block's `type` as on the wire (`""` for an `Unknown` value
            /// built by hand without one).
            pub fn type_name(&self) -> &str {
                match self {
                    $( $name::$variant(_) => $wire, )+
                    $name::Unknown(v) => {
                        v.get("type").and_then(::serde_json::Value::as_str).unwrap_or("")
                    }
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(inner: $ty) -> Self {
                    $name::$variant(inner)
                }
            }
        )+

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(
                        $name::$variant(inner) => ::serde::Serialize::serialize(
                            &$crate::types::macros::Tagged { tag: $wire, inner },
                            serializer,
                        ),
                    )+
                    $name::Unknown(v) => ::serde::Serialize::serialize(v, serializer),
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use ::serde::de::Error as _;
                let value = <::serde_json::Value as ::serde::Deserialize>::deserialize(deserializer)?;
                let (tag, map) = $crate::types::macros::tagged_object(value, stringify!($name))
                    .map_err(D::Error::custom)?;
                match tag.as_str() {
                    $(
                        $wire => $crate::types::macros::decode_untagged(map, "type")
                            .map($name::$variant)
                            .map_err(|e| D::Error::custom(format!("{} block: {e}", $wire))),
                    )+
                    _ => Ok($name::Unknown(::serde_json::Value::Object(map))),
                }
            }
        }
    };
}
