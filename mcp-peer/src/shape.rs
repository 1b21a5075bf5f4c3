//! What JSON a value serialises to at its top level, found without
//! serialising it: `tools/call` arguments must be an object or nothing.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

/// The top-level JSON type of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `null` (`None`, `()`, a unit struct).
    Null,
    /// An object (a struct, a map, a struct variant's body aside).
    Object,
    /// Anything else (a string, a number, an array, ...).
    Other,
}

/// The shape of `value`: only its top-level serialize call is looked at;
/// members are not visited. A `serde_json::value::RawValue` has the shape
/// its text starts with (the text handed over, not copied).
pub(crate) fn shape_of<T: Serialize + ?Sized>(value: &T) -> Shape {
    match value.serialize(Probe { raw_text: false }) {
        Ok(shape) => shape,
        Err(Found(shape)) => shape,
    }
}

/// The shape of a JSON text, from its first byte past whitespace.
fn shape_of_text(text: &str) -> Shape {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => Shape::Object,
        Some(b'n') => Shape::Null,
        _ => Shape::Other,
    }
}

/// `raw_text`: the string it is given is a raw value's JSON text.
#[derive(Clone, Copy)]
struct Probe {
    raw_text: bool,
}

/// A raw value's one member, its text.
struct RawText(Shape);

impl ser::SerializeStruct for RawText {
    type Ok = Shape;
    type Error = Found;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        self.0 = match value.serialize(Probe { raw_text: true }) {
            Ok(shape) | Err(Found(shape)) => shape,
        };
        Ok(())
    }

    fn end(self) -> Result<Shape, Found> {
        Ok(self.0)
    }
}

/// Carries the shape out of the probe (never a real failure).
#[derive(Debug)]
struct Found(Shape);

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Found(Shape::Other)
    }
}

macro_rules! other {
    ($($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<Shape, Found> { Ok(Shape::Other) })*
    };
}

impl ser::Serializer for Probe {
    type Ok = Shape;
    type Error = Found;
    type SerializeSeq = Impossible<Shape, Found>;
    type SerializeTuple = Impossible<Shape, Found>;
    type SerializeTupleStruct = Impossible<Shape, Found>;
    type SerializeTupleVariant = Impossible<Shape, Found>;
    type SerializeMap = Impossible<Shape, Found>;
    type SerializeStruct = RawText;
    type SerializeStructVariant = Impossible<Shape, Found>;

    other! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_bytes(&[u8]);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_str(self, text: &str) -> Result<Shape, Found> {
        Ok(if self.raw_text { shape_of_text(text) } else { Shape::Other })
    }
    fn serialize_none(self) -> Result<Shape, Found> {
        Ok(Shape::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Shape, Found> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Shape, Found> {
        Ok(Shape::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Shape, Found> {
        Ok(Shape::Null)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Shape, Found> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Shape, Found> {
        // `{"Variant": ...}`: an object.
        Ok(Shape::Object)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Found> {
        Err(Found(Shape::Other))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Found> {
        Err(Found(Shape::Other))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Found> {
        Err(Found(Shape::Other))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Found> {
        // `{"Variant": [...]}`: an object.
        Err(Found(Shape::Object))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Found> {
        Err(Found(Shape::Object))
    }
    fn serialize_struct(
        self,
        name: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Found> {
        // serde_json's `RawValue` serialises as a struct of this name, its
        // text the one member; the text decides.
        if name == RAW_VALUE_TOKEN {
            return Ok(RawText(Shape::Other));
        }
        Err(Found(Shape::Object))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Found> {
        Err(Found(Shape::Object))
    }
}

/// The struct name serde_json gives a `RawValue` when it serialises one.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::{Shape, shape_of};

    #[derive(serde::Serialize)]
    struct Args {
        a: i32,
    }

    #[derive(serde::Serialize)]
    struct Unit;

    #[derive(serde::Serialize)]
    struct Wrapper(Args);

    #[test]
    fn shapes() {
        assert_eq!(shape_of(&()), Shape::Null);
        assert_eq!(shape_of(&None::<Args>), Shape::Null);
        assert_eq!(shape_of(&Unit), Shape::Null);
        assert_eq!(shape_of(&json!(null)), Shape::Null);
        assert_eq!(shape_of(&Args { a: 1 }), Shape::Object);
        assert_eq!(shape_of(&Some(Args { a: 1 })), Shape::Object);
        assert_eq!(shape_of(&Wrapper(Args { a: 1 })), Shape::Object);
        assert_eq!(shape_of(&&Args { a: 1 }), Shape::Object);
        assert_eq!(shape_of(&json!({"a": 1})), Shape::Object);
        assert_eq!(shape_of(&json!({})), Shape::Object);
        assert_eq!(shape_of(&BTreeMap::<String, i32>::new()), Shape::Object);
        assert_eq!(shape_of(&json!([1])), Shape::Other);
        assert_eq!(shape_of(&json!("s")), Shape::Other);
        assert_eq!(shape_of(&3), Shape::Other);
        assert_eq!(shape_of(&vec![1, 2]), Shape::Other);
        assert_eq!(shape_of(&(1, 2)), Shape::Other);
    }

    /// A raw value's shape, read from its text as it is handed over, is
    /// the shape of its text copied out (the general way), on every kind
    /// of JSON value, with and without whitespace, boxed, borrowed and in
    /// an `Option`.
    #[test]
    fn a_raw_value_has_the_shape_of_its_copied_text() {
        let general = |raw: &serde_json::value::RawValue| {
            let copied = serde_json::value::to_raw_value(raw).unwrap();
            match copied.get().trim_start().as_bytes().first() {
                Some(b'n') => Shape::Null,
                Some(b'{') => Shape::Object,
                _ => Shape::Other,
            }
        };
        let texts = [
            "{}",
            r#"{"a":1}"#,
            " \n\t{ \"a\" : [1] }",
            "null",
            " null",
            "[]",
            "[{}]",
            r#""{""#,
            r#""null""#,
            "0",
            "-1.5e3",
            "true",
            "false",
            "\r\n[null]",
        ];
        let mut kinds = std::collections::HashSet::new();
        for text in texts {
            let raw = serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
            let shape = general(&raw);
            kinds.insert(format!("{shape:?}"));
            assert_eq!(shape_of(&raw), shape, "{text:?}");
            assert_eq!(shape_of(&*raw), shape, "{text:?}");
            assert_eq!(shape_of(&Some(&raw)), shape, "{text:?}");
            assert_eq!(shape_of(&Some(raw.clone())), shape, "{text:?}");
        }
        // Every shape among the texts.
        assert_eq!(kinds.len(), 3);
        assert_eq!(shape_of(&None::<Box<serde_json::value::RawValue>>), Shape::Null);
        // A plain string is not a raw value's text.
        assert_eq!(shape_of("{"), Shape::Other);
        assert_eq!(shape_of("null"), Shape::Other);
    }
}
