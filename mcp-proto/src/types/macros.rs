//! Code generators and serde helpers shared by the type modules.
//!
//! Two kinds of open unions recur in the schema: string enums whose set of
//! values a newer revision may grow (`LoggingLevel`, `TaskStatus`, ...), and
//! object unions tagged by a `type` member (content blocks). Both decode
//! values this crate does not know into a catch-all variant instead of
//! failing, and encode them back unchanged.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
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

/// A member name, borrowed from the input when it can be.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    pub(crate) fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_owned(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(s))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(s.to_owned()))
            }

            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(s))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The value of a tagged object's `type` member: a string (borrowed from
/// the input when it can be), or the kind of JSON it was instead.
pub(crate) enum Tag<'de> {
    String(Key<'de>),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Tag<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagVisitor;
        impl<'de> Visitor<'de> for TagVisitor {
            type Value = Tag<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Tag<'de>, E> {
                Ok(Tag::String(Key::Borrowed(s)))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Tag<'de>, E> {
                Ok(Tag::String(Key::Owned(s.to_owned())))
            }

            fn visit_string<E: de::Error>(self, s: String) -> Result<Tag<'de>, E> {
                Ok(Tag::String(Key::Owned(s)))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Tag<'de>, E> {
                Ok(Tag::Other("a boolean"))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other("a number"))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other("a number"))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Tag<'de>, E> {
                Ok(Tag::Other("a number"))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Tag<'de>, E> {
                Ok(Tag::Other("null"))
            }

            fn visit_none<E: de::Error>(self) -> Result<Tag<'de>, E> {
                Ok(Tag::Other("null"))
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Tag<'de>, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Tag::Other("an array"))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tag<'de>, A::Error> {
                while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(Tag::Other("an object"))
            }
        }
        deserializer.deserialize_any(TagVisitor)
    }
}

/// Decoding an object's members from a map access that may already have
/// been read in part: a tagged union reads up to `type`, then hands the
/// members it read before it (`before`, usually none) and the rest of the
/// object to its variant.
pub(crate) trait VisitRest: Sized {
    /// Takes the members in `before`, then reads the remaining ones.
    fn visit_rest<'de, A: MapAccess<'de>>(
        map: A,
        before: Vec<(Key<'de>, Value)>,
    ) -> Result<Self, A::Error>;
}

/// The object visitor of a [`VisitRest`] type.
pub(crate) struct RestVisitor<T>(pub(crate) PhantomData<T>);

impl<'de, T: VisitRest> Visitor<'de> for RestVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::visit_rest(map, Vec::new())
    }
}

/// The remaining members of an object, as a JSON object.
pub(crate) fn rest_to_map<'de, A: MapAccess<'de>>(
    mut map: A,
    mut obj: Map<String, Value>,
) -> Result<Map<String, Value>, A::Error> {
    while let Some(key) = map.next_key::<Key<'de>>()? {
        let value: Value = map.next_value()?;
        obj.insert(key.into_string(), value);
    }
    Ok(obj)
}

/// `VisitRest` for a type that keeps its derived `Deserialize`: the rest of
/// the object is collected and decoded from it.
macro_rules! visit_rest_via_value {
    ($($ty:ty),+ $(,)?) => {$(
        impl $crate::types::macros::VisitRest for $ty {
            fn visit_rest<'de, A: ::serde::de::MapAccess<'de>>(
                map: A,
                before: Vec<($crate::types::macros::Key<'de>, ::serde_json::Value)>,
            ) -> Result<Self, A::Error> {
                use ::serde::de::Error as _;
                let before = before.into_iter().map(|(key, value)| (key.into_string(), value));
                let obj = $crate::types::macros::rest_to_map(map, before.collect())?;
                ::serde_json::from_value(::serde_json::Value::Object(obj)).map_err(A::Error::custom)
            }
        }
    )+};
}

/// `Deserialize` (and [`VisitRest`]) for a struct whose members this crate
/// does not know are kept in its `extra` object, decoding each known member
/// straight into its field (serde's `flatten` would buffer the whole object
/// first). Each field is listed with its wire name; `required` ones must be
/// present, the others default when absent. A member given twice counts as
/// its last value.
macro_rules! lossless_deserialize {
    ($name:ident { $( $field:ident : $wire:literal $($required:ident)? ),+ $(,)? }) => {
        impl $crate::types::macros::VisitRest for $name {
            fn visit_rest<'de, A: ::serde::de::MapAccess<'de>>(
                mut map: A,
                before: Vec<($crate::types::macros::Key<'de>, ::serde_json::Value)>,
            ) -> Result<Self, A::Error> {
                use ::serde::de::Error as _;
                $( let mut $field = None; )+
                let mut extra = ::serde_json::Map::new();
                for (key, value) in before {
                    match key.as_str() {
                        $( $wire => $field = Some(::serde_json::from_value(value).map_err(A::Error::custom)?), )+
                        _ => {
                            extra.insert(key.into_string(), value);
                        }
                    }
                }
                while let Some(key) = map.next_key::<$crate::types::macros::Key<'de>>()? {
                    match key.as_str() {
                        $( $wire => $field = Some(map.next_value()?), )+
                        _ => {
                            let value: ::serde_json::Value = map.next_value()?;
                            extra.insert(key.into_string(), value);
                        }
                    }
                }
                Ok($name {
                    $( $field: lossless_deserialize!(@take A, $field, $wire $(, $required)?), )+
                    extra,
                })
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_map($crate::types::macros::RestVisitor(::std::marker::PhantomData))
            }
        }
    };
    (@take $A:ident, $field:ident, $wire:literal) => {
        $field.unwrap_or_default()
    };
    (@take $A:ident, $field:ident, $wire:literal, required) => {
        match $field {
            Some(value) => value,
            None => return Err(<$A::Error as ::serde::de::Error>::missing_field($wire)),
        }
    };
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
                struct TaggedVisitor;
                impl<'de> ::serde::de::Visitor<'de> for TaggedVisitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "a {}, which must be an object with a \"type\" member", stringify!($name))
                    }

                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        use ::serde::de::Error as _;
                        use $crate::types::macros::{Key, Tag, VisitRest};
                        // The members before `type` (none when it comes first,
                        // as most SDKs write it) are kept; the rest decode
                        // straight into the variant.
                        let mut before = Vec::new();
                        let tag = loop {
                            let Some(key) = map.next_key::<Key<'de>>()? else {
                                return Err(A::Error::custom(format!(
                                    "{} has no \"type\" member",
                                    stringify!($name)
                                )));
                            };
                            if key.as_str() != "type" {
                                let value: ::serde_json::Value = map.next_value()?;
                                before.push((key, value));
                                continue;
                            }
                            // Borrowed from the input when it can be.
                            match map.next_value::<Tag<'de>>()? {
                                Tag::String(tag) => break tag,
                                Tag::Other(kind) => {
                                    return Err(A::Error::custom(format!(
                                        "the \"type\" of {} must be a string, found {}",
                                        stringify!($name),
                                        kind
                                    )));
                                }
                            }
                        };
                        match tag.as_str() {
                            $(
                                $wire => <$ty as VisitRest>::visit_rest(map, before)
                                    .map($name::$variant)
                                    .map_err(|e| A::Error::custom(format!("{} block: {e}", $wire))),
                            )+
                            _ => {
                                let mut obj: ::serde_json::Map<String, ::serde_json::Value> =
                                    before.into_iter().map(|(k, v)| (k.into_string(), v)).collect();
                                obj.insert("type".into(), ::serde_json::Value::String(tag.into_string()));
                                $crate::types::macros::rest_to_map(map, obj)
                                    .map(|obj| $name::Unknown(::serde_json::Value::Object(obj)))
                            }
                        }
                    }
                }
                deserializer.deserialize_map(TaggedVisitor)
            }
        }
    };
}
