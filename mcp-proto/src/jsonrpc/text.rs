//! Compact JSON text written the way `serde_json::to_writer` writes it,
//! with a fast path for strings that need no escaping.
//!
//! serde_json looks at a string byte by byte through a table; most strings
//! a client or server writes (member names, method and tool names, plain
//! text) hold no quote, backslash or control character, and are checked
//! here eight bytes at a time and copied whole. Everything else takes
//! serde_json's own path: a string that needs escaping is written by it,
//! and a value using anything this writer does not handle itself (map
//! keys other than strings, bytes, serde_json's private number type, a
//! failing `Serialize`) is written again by `serde_json::to_writer`, so
//! the text and the errors are always serde_json's.

use std::fmt;

use serde::ser::{self, Serialize};
use serde_json::value::RawValue;

/// Appends the compact JSON text of `value` to `out`: byte for byte what
/// `serde_json::to_writer(out, value)` appends, and its error when it
/// fails (then `out` is as it was).
pub fn write_json<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    let start = out.len();
    if value.serialize(&mut Text { out }).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    let written = serde_json::to_writer(&mut *out, value);
    if written.is_err() {
        out.truncate(start);
    }
    written
}

/// The compact JSON text of `value` as a raw value: what
/// `serde_json::value::to_raw_value` gives, written by [`write_json`] and
/// not parsed again (the text is serde_json's own).
pub fn raw_json<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    let mut text = Vec::with_capacity(128);
    write_json(&mut text, value)?;
    // serde_json wrote valid UTF-8.
    let text = String::from_utf8(text).map_err(ser::Error::custom)?;
    boxed_raw(text)
}

/// A tool result of one text block, `{"content":[{"type":"text","text":T}]}`,
/// as JSON text: what `raw_json` gives for it (the same text serde_json
/// writes), written straight into a buffer of its exact size when `text`
/// needs no escaping.
pub fn text_result_json(text: &str) -> Box<RawValue> {
    const HEAD: &[u8] = br#"{"content":[{"type":"text","text":"#;
    const TAIL: &[u8] = b"}]}";
    let mut out = Vec::with_capacity(HEAD.len() + text.len() + 2 + TAIL.len());
    out.extend_from_slice(HEAD);
    write_json_str(&mut out, text);
    out.extend_from_slice(TAIL);
    // Valid UTF-8 (a `str` and ASCII around it) and one JSON value, so
    // neither step fails; the fallback keeps that a value, not a panic.
    String::from_utf8(out)
        .map_err(ser::Error::custom)
        .and_then(boxed_raw)
        .unwrap_or_else(|_: serde_json::Error| RawValue::NULL.to_owned())
}

/// `text` as a borrowed raw value where it is one JSON value: what
/// `serde_json::from_str::<&RawValue>(text).ok()` gives, checked by the
/// scan (the one under the usual requests' parameters) rather than the
/// parser where the scan decides (text with no whitespace around it, not
/// nested deeper than the scan follows); the parser decides the rest.
pub fn one_raw_value(text: &str) -> Option<&RawValue> {
    let bytes = text.as_bytes();
    let trimmed = bytes
        .first()
        .zip(bytes.last())
        .is_some_and(|(first, last)| !first.is_ascii_whitespace() && !last.is_ascii_whitespace());
    if !trimmed || !super::scan::is_one_value(text) {
        return serde_json::from_str(text).ok();
    }
    borrowed_raw(text).ok()
}

/// JSON text known to be one valid value (checked), borrowed as a raw
/// value without parsing it: [`boxed_raw`], borrowed (serde_json takes a
/// raw value's text as it is from a map of its one private member).
pub(super) fn borrowed_raw(text: &str) -> Result<&RawValue, serde_json::Error> {
    use serde::Deserialize;
    use serde::de::value::{BorrowedStrDeserializer, MapDeserializer};
    let member = BorrowedStrDeserializer::<serde_json::Error>::new(text);
    let map = MapDeserializer::<_, serde_json::Error>::new(std::iter::once((RAW_VALUE, member)));
    <&RawValue>::deserialize(map)
}

/// JSON text known to be one valid value (serde_json's own, or checked),
/// boxed as a raw value
/// without parsing or copying it: serde_json takes a raw value's text as
/// it is from a map of its one private member, the text given as an
/// owned string.
pub(super) fn boxed_raw(text: String) -> Result<Box<RawValue>, serde_json::Error> {
    use serde::Deserialize;
    use serde::de::value::MapDeserializer;
    let member = MapDeserializer::<_, serde_json::Error>::new(std::iter::once((RAW_VALUE, text)));
    Box::<RawValue>::deserialize(member)
}

/// Appends `s` as a JSON string, quoted and escaped exactly as serde_json
/// escapes it.
pub fn write_json_str(out: &mut Vec<u8>, s: &str) {
    write_str_inline(out, s);
}

/// Appends a name known when the program is compiled (a struct's field)
/// as a JSON string: [`write_json_str`]'s body, inlined where the
/// serializer writes the name, so that with the name a constant the
/// escape check is decided by the compiler and the bytes are stored
/// without a call.
#[inline(always)]
fn write_name(out: &mut Vec<u8>, name: &'static str) {
    write_str_inline(out, name);
}

/// [`write_json_str`]'s body.
#[inline(always)]
fn write_str_inline(out: &mut Vec<u8>, s: &str) {
    if needs_escape(s.as_bytes()) {
        // Writing a string to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    } else {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Whether serde_json escapes any byte of `bytes`: a control character
/// (below 0x20), a quote or a backslash. Bytes of other characters,
/// non-ASCII ones included, are written as they are.
///
/// Eight bytes at a time; the last eight overlap the ones before when the
/// length is not a multiple of eight, and four to seven bytes are read as
/// their first four and last four: every byte is looked at, some twice.
#[inline(always)]
fn needs_escape(bytes: &[u8]) -> bool {
    // Whether a byte of `v` is one of them: the scan's test, exact as a
    // yes or no whatever the bytes' order.
    let hits = |v: u64| super::scan::stop_bits::<true>(v) != 0;
    let word = |at: usize| {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(&bytes[at..at + 8]);
        u64::from_ne_bytes(eight)
    };
    let half = |at: usize| {
        let mut four = [0u8; 4];
        four.copy_from_slice(&bytes[at..at + 4]);
        u64::from(u32::from_ne_bytes(four))
    };
    let n = bytes.len();
    match n {
        0..4 => bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\'),
        4..8 => hits(half(0) | (half(n - 4) << 32)),
        _ => (0..n / 8).any(|i| hits(word(i * 8))) || (!n.is_multiple_of(8) && hits(word(n - 8))),
    }
}

/// The names serde_json gives the private structs it serializes with
/// special meaning (its raw value, its arbitrary-precision number).
const PRIVATE: &str = "$serde_json::private::";

/// serde_json's name for a raw value's struct and its one field.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// This writer does not handle what it was given: serde_json writes the
/// whole value instead.
#[derive(Debug)]
struct Fallback;

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("written by serde_json instead")
    }
}

impl std::error::Error for Fallback {}

impl ser::Error for Fallback {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Fallback
    }
}

/// The writer: compact, as serde_json's default formatter.
struct Text<'o> {
    out: &'o mut Vec<u8>,
}

impl Text<'_> {
    /// A scalar as serde_json writes it (numbers: the same digits).
    fn scalar<T: Serialize>(&mut self, v: T) -> Result<(), Fallback> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|_| Fallback)
    }

    fn open(&mut self, bracket: u8, close: u8, variant: Option<&str>) -> Compound<'_> {
        if let Some(variant) = variant {
            self.out.push(b'{');
            write_json_str(self.out, variant);
            self.out.push(b':');
        }
        self.out.push(bracket);
        Compound { out: self.out, first: true, close, variant: variant.is_some(), raw: false }
    }
}

/// A sequence, map or struct being written: its separators and its end.
struct Compound<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
    close: u8,
    /// Inside a variant's `{"variant":...}`, closed with it.
    variant: bool,
    /// serde_json's raw value: its one field is JSON text, written as is.
    raw: bool,
}

impl Compound<'_> {
    fn comma(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fallback> {
        self.comma();
        value.serialize(&mut Text { out: self.out })
    }

    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Fallback> {
        self.comma();
        key.serialize(StrOnly { out: self.out, quoted: true })?;
        self.out.push(b':');
        Ok(())
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fallback> {
        value.serialize(&mut Text { out: self.out })
    }

    #[inline(always)]
    fn field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Fallback> {
        if self.raw {
            return value.serialize(StrOnly { out: self.out, quoted: false });
        }
        self.comma();
        write_name(self.out, key);
        self.out.push(b':');
        value.serialize(&mut Text { out: self.out })
    }

    fn finish(self) -> Result<(), Fallback> {
        if !self.raw {
            self.out.push(self.close);
        }
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl<'b> ser::Serializer for &'b mut Text<'_> {
    type Ok = ();
    type Error = Fallback;
    type SerializeSeq = Compound<'b>;
    type SerializeTuple = Compound<'b>;
    type SerializeTupleStruct = Compound<'b>;
    type SerializeTupleVariant = Compound<'b>;
    type SerializeMap = Compound<'b>;
    type SerializeStruct = Compound<'b>;
    type SerializeStructVariant = Compound<'b>;

    fn serialize_bool(self, v: bool) -> Result<(), Fallback> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Fallback> {
        self.scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Fallback> {
        write_json_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Fallback> {
        write_json_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Fallback> {
        Err(Fallback)
    }
    fn serialize_none(self) -> Result<(), Fallback> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Fallback> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Fallback> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Fallback> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Fallback> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Fallback> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Fallback> {
        self.out.push(b'{');
        write_json_str(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'b>, Fallback> {
        Ok(self.open(b'[', b']', None))
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'b>, Fallback> {
        Ok(self.open(b'[', b']', None))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'b>, Fallback> {
        Ok(self.open(b'[', b']', None))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'b>, Fallback> {
        Ok(self.open(b'[', b']', Some(variant)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'b>, Fallback> {
        Ok(self.open(b'{', b'}', None))
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Compound<'b>, Fallback> {
        if name == RAW_VALUE {
            let out = &mut *self.out;
            return Ok(Compound { out, first: true, close: b'}', variant: false, raw: true });
        }
        if name.starts_with(PRIVATE) {
            return Err(Fallback);
        }
        Ok(self.open(b'{', b'}', None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'b>, Fallback> {
        Ok(self.open(b'{', b'}', Some(variant)))
    }
}

/// The compound traits whose members are elements (`[a,b]`).
macro_rules! elements {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Fallback;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fallback> {
                self.element(value)
            }
            fn end(self) -> Result<(), Fallback> {
                self.finish()
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Fallback;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Fallback> {
        self.key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Fallback> {
        self.value(value)
    }
    fn end(self) -> Result<(), Fallback> {
        self.finish()
    }
}

/// The compound traits whose members are named fields (`{"k":v}`).
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Compound<'_> {
            type Ok = ();
            type Error = Fallback;
            #[inline(always)]
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Fallback> {
                self.field(key, value)
            }
            fn end(self) -> Result<(), Fallback> {
                self.finish()
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

/// Takes a string alone: a map's key (`quoted`: every other kind of key
/// is left to serde_json, which quotes numbers and refuses the rest), or
/// a raw value's JSON text (not quoted: written as it is).
struct StrOnly<'o> {
    out: &'o mut Vec<u8>,
    quoted: bool,
}

/// The methods of a serializer that takes none of these values.
macro_rules! refuse {
    ($($name:ident($($ty:ty),*);)*) => {
        $(fn $name(self, $(_: $ty),*) -> Result<(), Fallback> {
            Err(Fallback)
        })*
    };
}

impl ser::Serializer for StrOnly<'_> {
    type Ok = ();
    type Error = Fallback;
    type SerializeSeq = ser::Impossible<(), Fallback>;
    type SerializeTuple = ser::Impossible<(), Fallback>;
    type SerializeTupleStruct = ser::Impossible<(), Fallback>;
    type SerializeTupleVariant = ser::Impossible<(), Fallback>;
    type SerializeMap = ser::Impossible<(), Fallback>;
    type SerializeStruct = ser::Impossible<(), Fallback>;
    type SerializeStructVariant = ser::Impossible<(), Fallback>;

    fn serialize_str(self, v: &str) -> Result<(), Fallback> {
        if self.quoted {
            write_json_str(self.out, v);
        } else {
            self.out.extend_from_slice(v.as_bytes());
        }
        Ok(())
    }

    refuse! {
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
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Fallback> {
        Err(Fallback)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Fallback> {
        Err(Fallback)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Fallback> {
        Err(Fallback)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Fallback> {
        Err(Fallback)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Fallback> {
        Err(Fallback)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Fallback> {
        Err(Fallback)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Fallback> {
        Err(Fallback)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Fallback> {
        Err(Fallback)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Fallback> {
        Err(Fallback)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Fallback> {
        Err(Fallback)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::{needs_escape, one_raw_value, raw_json, write_json, write_json_str, write_name};
    use crate::jsonrpc::{Message, Request, RequestId, Response};
    use crate::types::CallToolRequestParams;

    /// `one_raw_value` is serde_json's borrowed raw value, on a table of
    /// values, whitespace around them, texts that are not one value and
    /// nesting deeper than the scan follows.
    #[test]
    fn one_raw_value_is_serde_jsons() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let unbalanced = format!("{}{}", "[".repeat(200), "]".repeat(199));
        let texts = [
            r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
            r#"{"a":"\u00e9\n\"","b":[1,-2.5e3,true,null,{}]}"#,
            "{}",
            "[]",
            "[1,2]",
            "\"x\"",
            "0",
            "null",
            " {}",
            "{} ",
            "\n[1]\t",
            "",
            " ",
            "{",
            "{}}",
            "{} {}",
            "{\"a\":}",
            "[1,]",
            "01",
            "\"\u{1}\"",
            "nul",
            &deep,
            &unbalanced,
        ];
        for text in texts {
            let parsed = serde_json::from_str::<&RawValue>(text).ok().map(RawValue::get);
            assert_eq!(one_raw_value(text).map(RawValue::get), parsed, "{text:?}");
        }
    }

    /// serde_json's own rule, byte by byte.
    fn escaped_by_serde_json(bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
    }

    #[test]
    fn the_eight_byte_check_agrees_with_the_byte_rule_for_every_byte_at_every_place() {
        // Fillers around the byte tested, including ones whose borrows or
        // high bits could carry into a neighbour: just above the control
        // range, a quote or a backslash with the high bit set, DEL, 0xFF.
        let fillers = [b'a', 0x20, 0x21, 0xA2, 0xDC, 0x7F, 0xFF, 0x80, 0x5D, 0x23];
        for filler in fillers {
            for len in 0..=24 {
                let mut bytes = vec![filler; len];
                assert_eq!(needs_escape(&bytes), escaped_by_serde_json(&bytes));
                for at in 0..len {
                    for b in 0..=255u8 {
                        bytes[at] = b;
                        assert_eq!(
                            needs_escape(&bytes),
                            escaped_by_serde_json(&bytes),
                            "byte {b:#04x} at {at} of {len}, filler {filler:#04x}"
                        );
                    }
                    bytes[at] = filler;
                }
            }
        }
    }

    fn same_as_serde_json<T: Serialize + ?Sized>(value: &T) {
        let raw = raw_json(value).map(|r| r.get().to_owned()).map_err(|e| e.to_string());
        let expected = serde_json::value::to_raw_value(value);
        assert_eq!(raw, expected.map(|r| r.get().to_owned()).map_err(|e| e.to_string()));
        if let Ok(raw) = &raw {
            // The text is one JSON value, as a raw value must be.
            assert_eq!(RawValue::from_string(raw.clone()).unwrap().get(), raw);
        }
        let mut ours = b"prefix ".to_vec();
        let written = write_json(&mut ours, value);
        let mut theirs = b"prefix ".to_vec();
        let expected = serde_json::to_writer(&mut theirs, value);
        match (written, expected) {
            (Ok(()), Ok(())) => {
                assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs))
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string());
                assert_eq!(ours, b"prefix ");
            }
            (a, b) => panic!("ours {a:?}, serde_json {b:?}"),
        }
    }

    #[test]
    fn names_known_when_compiled_are_written_as_serde_json_writes_them() {
        // Each length the check reads differently (0-3, 4-7, 8 and more),
        // and near misses: a quote, a backslash or a control character at
        // either end, the bytes next to them, DEL, non-ASCII.
        const NAMES: &[&str] = &[
            "",
            "a",
            "id",
            "_meta",
            "name",
            "arguments",
            "tools/call",
            "structuredContent",
            "\"",
            "a\"",
            "\"name",
            "name\\",
            "\\",
            "a\u{1f}",
            "\u{1f}abcdefgh",
            "abcdefgh\u{0}",
            "abcdefghijklmnop\"",
            " ",
            "!",
            "#",
            "[",
            "]",
            "\u{7f}",
            "é",
            "naïve",
            "\u{2028}",
        ];
        for &name in NAMES {
            let mut ours = b"[".to_vec();
            write_name(&mut ours, name);
            let mut general = b"[".to_vec();
            write_json_str(&mut general, name);
            assert_eq!(ours, general, "{name:?}");
            assert_eq!(ours[1..], serde_json::to_vec(name).unwrap()[..], "{name:?}");
        }
    }

    #[test]
    fn field_names_that_need_escaping_are_written_as_serde_json_writes_them() {
        #[derive(Serialize)]
        struct Odd {
            plain: u8,
            #[serde(rename = "a\"b")]
            quoted: u8,
            #[serde(rename = "back\\slash")]
            backslash: u8,
            #[serde(rename = "tab\there")]
            tab: u8,
            #[serde(rename = "\u{1f}")]
            control: u8,
            #[serde(rename = "naïve")]
            accented: u8,
        }
        let odd = Odd { plain: 1, quoted: 2, backslash: 3, tab: 4, control: 5, accented: 6 };
        same_as_serde_json(&odd);
        same_as_serde_json(&[&odd, &odd]);
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let specials = [
            "",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{0}",
            "\u{1}",
            "\u{8}",
            "\u{c}",
            "\u{1f}",
            "\u{7f}",
            "\u{80}",
            "é",
            "\u{2028}",
            "\u{2029}",
            "\u{feff}",
            "😀",
            "\u{10ffff}",
            "/",
            "'",
            " ",
            "~",
        ];
        let bases = ["", "a", "abcdefg", "abcdefgh", "the quick brown fox jumps", "ünïcödé…"];
        for base in bases {
            for special in specials {
                for at in 0..=base.chars().count() {
                    let cut = base.char_indices().nth(at).map_or(base.len(), |(i, _)| i);
                    let s = format!("{}{special}{}", &base[..cut], &base[cut..]);
                    let mut ours = Vec::new();
                    write_json_str(&mut ours, &s);
                    assert_eq!(ours, serde_json::to_vec(&s).unwrap(), "{s:?}");
                    same_as_serde_json(&s);
                    same_as_serde_json(&json!({ s.clone(): s }));
                }
            }
        }
        for c in ['a', '"', '\\', '\n', '\u{0}', '\u{2028}', '😀', 'é'] {
            same_as_serde_json(&c);
        }
    }

    #[derive(Serialize)]
    enum Kinds {
        Unit,
        Newtype(String),
        Tuple(i32, &'static str),
        Struct { a: Option<u8>, b: Vec<f64> },
    }

    #[derive(Serialize)]
    struct UnitStruct;

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    struct Newtype(&'static str);

    #[derive(Serialize)]
    struct TupleStruct(u8, char);

    #[derive(Serialize)]
    struct Flattened {
        name: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        #[serde(flatten)]
        rest: BTreeMap<String, serde_json::Value>,
    }

    #[derive(Serialize)]
    struct WithRaw<'a> {
        result: &'a RawValue,
        after: u8,
    }

    /// Bytes, which serde_json writes as an array of numbers.
    struct Bytes(&'static [u8]);

    impl Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    /// A value whose serialisation fails half way.
    struct Failing;

    impl Serialize for Failing {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeSeq;
            let mut seq = s.serialize_seq(None)?;
            seq.serialize_element("written before the failure")?;
            Err(serde::ser::Error::custom("this value cannot be written"))
        }
    }

    #[test]
    fn values_of_every_shape_are_written_as_serde_json_writes_them() {
        same_as_serde_json(&json!(null));
        same_as_serde_json(&json!([
            true,
            false,
            0,
            -1,
            1.5,
            -0.0,
            1e300,
            2.5e-8,
            u64::MAX,
            i64::MIN
        ]));
        same_as_serde_json(
            &json!({"a": {"b": [[], {}, [{}], {"c": null}]}, "": "", "d\"e": "f\\g"}),
        );
        same_as_serde_json(&(f64::NAN, f64::INFINITY, f32::NEG_INFINITY, 0.1f32, 7u8, -7i16));
        same_as_serde_json(&(i128::MIN, u128::MAX, u32::MAX, i8::MIN, u16::MAX));
        same_as_serde_json(&(
            Some(3),
            None::<u8>,
            (),
            UnitStruct,
            Newtype("n\u{1}"),
            TupleStruct(1, '"'),
        ));
        same_as_serde_json(&[
            Kinds::Unit,
            Kinds::Newtype("x\ty".into()),
            Kinds::Tuple(-3, "t"),
            Kinds::Struct { a: Some(1), b: vec![0.5, f64::NAN] },
            Kinds::Struct { a: None, b: vec![] },
        ]);
        let rest = BTreeMap::from([("z".to_owned(), json!(1)), ("q\n".to_owned(), json!([]))]);
        same_as_serde_json(&Flattened { name: "echo", skipped: None, rest });
        same_as_serde_json(&Flattened { name: "e", skipped: Some(2), rest: BTreeMap::new() });
        // Map keys other than strings: serde_json quotes numbers, refuses
        // the rest.
        same_as_serde_json(&BTreeMap::from([(1, "one"), (-2, "minus two")]));
        same_as_serde_json(&BTreeMap::from([(true, 1)]));
        same_as_serde_json(&BTreeMap::from([('c', 1)]));
        same_as_serde_json(&BTreeMap::from([((1, 2), 3)]));
        same_as_serde_json(&BTreeMap::from([(Newtype("k"), 3)]));
        same_as_serde_json(&Bytes(b"\x00\xffab"));
        same_as_serde_json(&Failing);
        same_as_serde_json(&vec![json!(1), json!("a")]);
        same_as_serde_json(&[Some(Failing)]);
    }

    #[test]
    fn a_text_result_is_written_as_serde_json_writes_its_value() {
        let texts = [
            "",
            "the quick brown fox jumps over the lazy dog",
            "a \"quote\" and a \\ backslash",
            "line\nbreak\r\ttab\u{0}\u{1f}\u{7f}",
            "\u{2028}\u{2029} é 😀",
            "}]}",
        ];
        #[derive(Serialize)]
        struct Block<'t> {
            r#type: &'static str,
            text: &'t str,
        }
        #[derive(Serialize)]
        struct TextResult<'t> {
            content: [Block<'t>; 1],
        }
        for text in texts {
            let result = TextResult { content: [Block { r#type: "text", text }] };
            let written = super::text_result_json(text);
            assert_eq!(written.get(), serde_json::to_string(&result).unwrap(), "{text:?}");
            assert_eq!(written.get(), raw_json(&result).unwrap().get(), "{text:?}");
            let parsed: serde_json::Value = serde_json::from_str(written.get()).unwrap();
            let value = json!({ "content": [{ "type": "text", "text": text }] });
            assert_eq!(parsed, value, "{text:?}");
        }
    }

    #[test]
    fn raw_json_text_is_written_as_it_is() {
        for text in ["{}", "[1, 2]", "{\n  \"a\": \"\\n\"\n}", "\"s\"", "null", " 7 "] {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            same_as_serde_json(&raw);
            same_as_serde_json(&WithRaw { result: &raw, after: 1 });
            same_as_serde_json(&[&raw, &raw]);
            same_as_serde_json(&json!({ "raw": serde_json::to_value(&raw).unwrap() }));
        }
    }

    #[test]
    fn messages_are_written_as_serde_json_writes_them() {
        let mut params = CallToolRequestParams::new(
            "echo",
            Some(json!({"message": "the quick brown fox", "n": 1}).as_object().unwrap().clone()),
        );
        same_as_serde_json(&params);
        params.extra.insert("x\u{2028}".into(), json!("\u{7}"));
        same_as_serde_json(&params);
        let request = Request::new(7, "tools/call", Some(serde_json::to_value(&params).unwrap()));
        same_as_serde_json(&request);
        same_as_serde_json(&Message::from(request));
        let response = Response::new(RequestId::from("id\"1"), json!({"content": []}));
        same_as_serde_json(&Message::from(response));
    }
}
