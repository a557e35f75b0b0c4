//! Checking an output's residual while it is written: straight from the typed value to JSON
//! text, with no `Value` in between ([`write_checked`]). For ten search hits this costs about
//! 0.63× the instructions of `to_value` + `to_string` unchecked (the `registry_call` bench's
//! `bytes` row); building a `Value` and walking it cost 1.04×.
//!
//! [`write_checked`] serializes a value with `serde_json`'s writer through a serializer that
//! checks each node against the [`FastCheck`] compiled for its place in the residual, as the
//! node goes by. It answers `Some(text)` only when every rule held at every node, which is
//! exactly when [`FastCheck::check`] of the value's `serde_json::to_value` answers
//! `Some(true)`, and the text is then `serde_json::to_string` of that `Value` (one exception:
//! a hand-written `Serialize` that writes a struct member's name twice gets both in the text,
//! as `serde_json::to_string` of the value writes them, where a `Value` keeps the last; each
//! was checked). In every other case (a rule broken, a number too large to compare exactly, a
//! value `to_value` would refuse) it answers `None`, and the caller takes the `Value` path,
//! which gives the verdict and the error as it always did. The property test over the serde
//! attribute matrix (`tests/tests/residual.rs`) compares this text with the `Value` path's on
//! every generated case.
//!
//! Parts that cannot be checked while streaming are built as a `Value`, checked and written:
//! a node whose rules hold an `anyOf` (each branch must see the whole node), a map (its keys
//! are converted as `to_value` converts them, and a repeated key keeps one entry), bytes, and
//! an enum variant with data.

use serde::ser::{self, Serialize, Serializer};
use serde_json::Value;

use super::{FastCheck, Rule};
use crate::types::{ARRAY, OBJECT, STRING};

use serde_json::value::Serializer as ValueSerializer;
type ValueSeq = <ValueSerializer as Serializer>::SerializeSeq;
type ValueMap = <ValueSerializer as Serializer>::SerializeMap;
type ValueTupleVariant = <ValueSerializer as Serializer>::SerializeTupleVariant;
type ValueStructVariant = <ValueSerializer as Serializer>::SerializeStructVariant;

/// The most `required` names of one schema tracked while streaming (one bit each); a struct
/// whose schema requires more is built as a `Value`.
const TRACKED: usize = 64;

/// `value` as JSON text when it passes `check`, `None` when it does not or when that cannot be
/// decided while writing (see the module documentation).
pub(crate) fn write_checked<T: Serialize + ?Sized>(
    check: &FastCheck,
    value: &T,
    mut out: Vec<u8>,
) -> Option<String> {
    let mut writer = serde_json::Serializer::new(&mut out);
    value
        .serialize(Checking {
            inner: &mut writer,
            check,
        })
        .ok()?;
    String::from_utf8(out).ok()
}

fn refused<E: ser::Error>() -> E {
    E::custom("the residual check did not pass")
}

/// Fails unless `passed` is `Some(true)`.
fn require<E: ser::Error>(passed: Option<bool>) -> Result<(), E> {
    if passed == Some(true) {
        Ok(())
    } else {
        Err(refused())
    }
}

impl FastCheck {
    /// [`FastCheck::check`] of `Value::String(s)`, without building it.
    fn check_str(&self, s: &str) -> Option<bool> {
        for rule in &self.0 {
            let ok = match rule {
                Rule::Types(bits) => bits & STRING != 0,
                Rule::AnyOf(branches) => {
                    let mut any = false;
                    for branch in branches {
                        if branch.check_str(s)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
                Rule::Length(count, lower) => super::length_holds(s, *count, *lower),
                Rule::Properties(_)
                | Rule::Additional(..)
                | Rule::Required(_)
                | Rule::Items(_)
                | Rule::Range { .. }
                | Rule::Count(..) => true,
            };
            if !ok {
                return Some(false);
            }
        }
        Some(true)
    }

    /// What an array here is checked against, gathered in one pass over the rules: `None` when
    /// an `anyOf` needs the whole array (it is then built as a `Value`).
    fn array(&self) -> Option<Array<'_>> {
        let mut array = Array {
            allowed: true,
            items: None,
        };
        for rule in &self.0 {
            match rule {
                Rule::AnyOf(_) => return None,
                Rule::Types(bits) => array.allowed &= bits & ARRAY != 0,
                Rule::Items(check) => array.items = Some(check),
                Rule::Properties(_)
                | Rule::Additional(..)
                | Rule::Required(_)
                | Rule::Range { .. }
                | Rule::Length(..)
                | Rule::Count(..) => {}
            }
        }
        Some(array)
    }

    /// Whether an array of `len` items passes the item-count bounds here.
    fn count_holds(&self, len: u64) -> bool {
        self.0.iter().all(|rule| match rule {
            Rule::Count(count, true) => len >= *count,
            Rule::Count(count, false) => len <= *count,
            _ => true,
        })
    }

    /// What a struct here is checked against, gathered in one pass over the rules: `None` when
    /// an `anyOf` needs the whole object (it is then built as a `Value`) or when more names are
    /// required than are tracked.
    fn members(&self) -> Option<Members<'_>> {
        let mut members = Members {
            allowed: true,
            props: &[],
            additional: None,
            required: &[],
        };
        for rule in &self.0 {
            match rule {
                Rule::AnyOf(_) => return None,
                Rule::Types(bits) => members.allowed &= bits & OBJECT != 0,
                Rule::Properties(props) => members.props = props,
                Rule::Additional(_, check) => members.additional = Some(check),
                Rule::Required(names) if names.len() > TRACKED => return None,
                Rule::Required(names) => members.required = names,
                Rule::Items(_) | Rule::Range { .. } | Rule::Length(..) | Rule::Count(..) => {}
            }
        }
        Some(members)
    }
}

/// An array's rules (see [`FastCheck::array`]); its item counts are checked at its end.
#[derive(Clone, Copy)]
pub(crate) struct Array<'c> {
    /// Whether `type` allows an array.
    allowed: bool,
    /// The schema every item must pass.
    items: Option<&'c FastCheck>,
}

/// A struct's rules (see [`FastCheck::members`]).
#[derive(Clone, Copy)]
pub(crate) struct Members<'c> {
    /// Whether `type` allows an object.
    allowed: bool,
    props: &'c [(String, FastCheck)],
    /// `additionalProperties`.
    additional: Option<&'c FastCheck>,
    required: &'c [String],
}

impl<'c> Members<'c> {
    /// The schema a member named `name` must pass, if any: its `properties` entry, or
    /// `additionalProperties` for a name `properties` does not list.
    fn member(&self, name: &str) -> Option<&'c FastCheck> {
        if let Some((_, check)) = self.props.iter().find(|(n, _)| n == name) {
            return Some(check);
        }
        // Not a name `properties` lists (`props` has every one of them, rules or none).
        self.additional
    }

    /// The bit of `name` among the required names (none when it is not one).
    fn required_bit(&self, name: &str) -> u64 {
        self.required
            .iter()
            .position(|n| n == name)
            .map_or(0, |i| 1 << i)
    }

    /// Whether `seen` has the bit of every required name.
    fn all_required(&self, seen: u64) -> bool {
        let n = self.required.len();
        let all = if n == TRACKED { u64::MAX } else { (1 << n) - 1 };
        seen & all == all
    }
}

/// A value to write through [`Checking`] with `check`.
struct Checked<'c, T: ?Sized> {
    value: &'c T,
    check: &'c FastCheck,
}

impl<T: Serialize + ?Sized> Serialize for Checked<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Checking {
            inner: serializer,
            check: self.check,
        })
    }
}

/// A member or item: through [`Checking`] when its place has rules, as it is otherwise.
fn child<'c, T: Serialize + ?Sized>(
    value: &'c T,
    check: Option<&'c FastCheck>,
) -> Either<Checked<'c, T>, &'c T> {
    match check {
        Some(check) if !check.0.is_empty() => Either::Checked(Checked { value, check }),
        _ => Either::Plain(value),
    }
}

enum Either<A, B> {
    Checked(A),
    Plain(B),
}

impl<A: Serialize, B: Serialize> Serialize for Either<A, B> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Either::Checked(a) => a.serialize(serializer),
            Either::Plain(b) => b.serialize(serializer),
        }
    }
}

/// The serializer: `inner` writes, `check` is the residual at this place.
struct Checking<'c, S> {
    inner: S,
    check: &'c FastCheck,
}

impl<'c, S: Serializer> Checking<'c, S> {
    /// A scalar whose `Value` costs nothing to build: checked as that `Value`.
    fn scalar(self, value: Value) -> Result<S::Ok, S::Error> {
        require(self.check.check(&value))?;
        value.serialize(self.inner)
    }

    /// A node built as a `Value` (see the module documentation), checked whole and written.
    fn built(self, value: Result<Value, serde_json::Error>) -> Result<S::Ok, S::Error> {
        let value = building(value)?;
        require(self.check.check(&value))?;
        value.serialize(self.inner)
    }
}

/// serde_json's own newtypes (`RawValue`, arbitrary-precision numbers) are written verbatim by
/// the writer and parsed by `to_value`: they take the `Value` path.
fn private_name<E: ser::Error>(name: &str) -> Result<(), E> {
    if name.starts_with("$serde_json::private") {
        Err(refused())
    } else {
        Ok(())
    }
}

impl<'c, S: Serializer> Serializer for Checking<'c, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Seq<'c, S, S::SerializeSeq>;
    type SerializeTuple = Seq<'c, S, S::SerializeTuple>;
    type SerializeTupleStruct = Seq<'c, S, S::SerializeTupleStruct>;
    type SerializeTupleVariant = Built<'c, S, ValueTupleVariant>;
    type SerializeMap = Built<'c, S, ValueMap>;
    type SerializeStruct = Struct<'c, S>;
    type SerializeStructVariant = Built<'c, S, ValueStructVariant>;

    fn serialize_bool(self, v: bool) -> Result<S::Ok, S::Error> {
        self.scalar(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_i128(self, v: i128) -> Result<S::Ok, S::Error> {
        // As `to_value` does: within 64 bits or refused.
        match (u64::try_from(v), i64::try_from(v)) {
            (Ok(u), _) => self.scalar(Value::from(u)),
            (_, Ok(i)) => self.scalar(Value::from(i)),
            _ => Err(refused()),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<S::Ok, S::Error> {
        self.scalar(Value::from(v))
    }
    fn serialize_u128(self, v: u128) -> Result<S::Ok, S::Error> {
        match u64::try_from(v) {
            Ok(u) => self.scalar(Value::from(u)),
            Err(_) => Err(refused()),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        // `to_value` widens an `f32` (`192.3` reads `192.3000030517578`), and the text is
        // written from what was checked.
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        // A NaN or an infinity is `null` in a `Value`, and in the text.
        self.scalar(Value::from(v))
    }
    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        require(self.check.check_str(v))?;
        self.inner.serialize_str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<S::Ok, S::Error> {
        self.built(ValueSerializer.serialize_bytes(v))
    }
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.scalar(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.scalar(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<S::Ok, S::Error> {
        self.scalar(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        private_name(name)?;
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        let built = ValueSerializer.serialize_newtype_variant(name, index, variant, value);
        self.built(built)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        match self.check.array() {
            Some(array) => Seq::stream(self.check, array, self.inner.serialize_seq(len)?),
            None => Seq::built(self, len),
        }
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        match self.check.array() {
            Some(array) => Seq::stream(self.check, array, self.inner.serialize_tuple(len)?),
            None => Seq::built(self, Some(len)),
        }
    }
    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        match self.check.array() {
            Some(array) => Seq::stream(
                self.check,
                array,
                self.inner.serialize_tuple_struct(name, len)?,
            ),
            None => Seq::built(self, Some(len)),
        }
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        let state = building(ValueSerializer.serialize_tuple_variant(name, index, variant, len))?;
        Ok(Built { node: self, state })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        let state = building(ValueSerializer.serialize_map(len))?;
        Ok(Built { node: self, state })
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        private_name(name)?;
        let Some(members) = self.check.members() else {
            let state = building(ValueSerializer.serialize_map(Some(len)))?;
            return Ok(Struct::Built(Built { node: self, state }));
        };
        if !members.allowed {
            return Err(refused());
        }
        Ok(Struct::Stream {
            members,
            state: self.inner.serialize_struct(name, len)?,
            seen: 0,
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        let state = building(ValueSerializer.serialize_struct_variant(name, index, variant, len))?;
        Ok(Built { node: self, state })
    }
}

/// A node being built as a `Value` (`state`), checked and written by `node` at its end.
pub(crate) struct Built<'c, S, V> {
    node: Checking<'c, S>,
    state: V,
}

/// A step of building a `Value`; serde_json refusing it sends the output down the `Value`
/// path, which reports it.
fn building<T, E: ser::Error>(result: Result<T, serde_json::Error>) -> Result<T, E> {
    result.map_err(|_| refused())
}

impl<S: Serializer> ser::SerializeMap for Built<'_, S, ValueMap> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        building(self.state.serialize_key(key))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        building(self.state.serialize_value(value))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        let Built { node, state } = self;
        node.built(ser::SerializeMap::end(state))
    }
}

impl<S: Serializer> ser::SerializeTupleVariant for Built<'_, S, ValueTupleVariant> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        building(self.state.serialize_field(value))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        let Built { node, state } = self;
        node.built(ser::SerializeTupleVariant::end(state))
    }
}

impl<S: Serializer> ser::SerializeStructVariant for Built<'_, S, ValueStructVariant> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        building(self.state.serialize_field(key, value))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        let Built { node, state } = self;
        node.built(ser::SerializeStructVariant::end(state))
    }
}

/// An array: streamed (each item through the `items` schema, the count checked at the end),
/// or built when an `anyOf` needs the whole of it.
pub(crate) enum Seq<'c, S, C> {
    Stream {
        check: &'c FastCheck,
        items: Option<&'c FastCheck>,
        state: C,
        len: u64,
    },
    Built(Built<'c, S, ValueSeq>),
}

impl<'c, S: Serializer, C> Seq<'c, S, C> {
    fn stream(check: &'c FastCheck, array: Array<'c>, state: C) -> Result<Self, S::Error> {
        if !array.allowed {
            return Err(refused());
        }
        Ok(Seq::Stream {
            check,
            items: array.items,
            state,
            len: 0,
        })
    }

    fn built(node: Checking<'c, S>, len: Option<usize>) -> Result<Self, S::Error> {
        let state = building(ValueSerializer.serialize_seq(len))?;
        Ok(Seq::Built(Built { node, state }))
    }

    fn end_with(self, end: impl FnOnce(C) -> Result<S::Ok, S::Error>) -> Result<S::Ok, S::Error> {
        match self {
            Seq::Stream {
                check, state, len, ..
            } => {
                if !check.count_holds(len) {
                    return Err(refused());
                }
                end(state)
            }
            Seq::Built(Built { node, state }) => node.built(ser::SerializeSeq::end(state)),
        }
    }
}

/// The three array compounds: one item through its `items` schema, or into the `Value`.
macro_rules! seq_impl {
    ($trait:ident, $inner:ident, $method:ident) => {
        impl<S: Serializer> ser::$trait for Seq<'_, S, S::$inner> {
            type Ok = S::Ok;
            type Error = S::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
                match self {
                    Seq::Stream {
                        items, state, len, ..
                    } => {
                        *len += 1;
                        state.$method(&child(value, *items))
                    }
                    Seq::Built(built) => building(ser::SerializeSeq::serialize_element(
                        &mut built.state,
                        value,
                    )),
                }
            }
            fn end(self) -> Result<S::Ok, S::Error> {
                self.end_with(ser::$trait::end)
            }
        }
    };
}

seq_impl!(SerializeSeq, SerializeSeq, serialize_element);
seq_impl!(SerializeTuple, SerializeTuple, serialize_element);
seq_impl!(SerializeTupleStruct, SerializeTupleStruct, serialize_field);

/// A struct: streamed (each member through its schema, the required names checked at the
/// end), or built when an `anyOf` needs the whole of it.
pub(crate) enum Struct<'c, S: Serializer> {
    Stream {
        members: Members<'c>,
        state: S::SerializeStruct,
        /// One bit per required name written.
        seen: u64,
    },
    Built(Built<'c, S, ValueMap>),
}

impl<S: Serializer> ser::SerializeStruct for Struct<'_, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        match self {
            Struct::Stream {
                members,
                state,
                seen,
            } => {
                *seen |= members.required_bit(key);
                state.serialize_field(key, &child(value, members.member(key)))
            }
            Struct::Built(built) => building(ser::SerializeMap::serialize_entry(
                &mut built.state,
                key,
                value,
            )),
        }
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        match self {
            Struct::Stream {
                members,
                state,
                seen,
            } => {
                if !members.all_required(seen) {
                    return Err(refused());
                }
                state.end()
            }
            Struct::Built(Built { node, state }) => node.built(ser::SerializeMap::end(state)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::write_checked;
    use crate::residual::FastCheck;
    use serde::Serialize;
    use serde::ser::{SerializeStruct, Serializer};
    use serde_json::{Value, json};
    use std::collections::BTreeMap;

    /// `write_checked` answers what the `Value` path answers: the text of `to_value` when its
    /// check passes, and `None` when it does not. `streamed`: the value is one this path must
    /// answer itself (not leave to the `Value` path).
    fn agrees<T: Serialize>(schema: Value, value: &T, passes: bool) {
        let fast = FastCheck::compile(&schema).unwrap_or_else(|| panic!("compiles: {schema}"));
        let built = serde_json::to_value(value).unwrap();
        assert_eq!(fast.check(&built), Some(passes), "{built} against {schema}");
        let expected = passes.then(|| serde_json::to_string(&built).unwrap());
        assert_eq!(
            write_checked(&fast, value, Vec::new()),
            expected,
            "{built} against {schema}"
        );
    }

    #[derive(Serialize)]
    struct Hit {
        id: String,
        score: f64,
    }

    #[derive(Serialize)]
    struct Page {
        hits: Vec<Hit>,
        #[serde(skip_serializing_if = "Option::is_none")]
        next: Option<String>,
    }

    fn page_schema() -> Value {
        json!({
            "type": "object",
            "required": ["hits"],
            "properties": {
                "hits": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {"properties": {"score": {"minimum": 0.0, "maximum": 1.0}}}
                },
                "next": {"type": "string", "minLength": 2}
            }
        })
    }

    fn page(scores: &[f64], next: Option<&str>) -> Page {
        Page {
            hits: scores
                .iter()
                .enumerate()
                .map(|(i, &score)| Hit {
                    id: format!("d{i}"),
                    score,
                })
                .collect(),
            next: next.map(str::to_owned),
        }
    }

    #[test]
    fn nested_members_and_items_are_checked_where_they_are() {
        agrees(page_schema(), &page(&[0.0, 0.5, 1.0], Some("p2")), true);
        agrees(page_schema(), &page(&[], None), true);
        agrees(page_schema(), &page(&[0.5, 1.5], None), false);
        agrees(page_schema(), &page(&[-0.1], None), false);
        // maxItems, checked at the end of the array.
        agrees(page_schema(), &page(&[0.1, 0.2, 0.3, 0.4], None), false);
        // A member's own rules: `next` is two characters at least (characters, not bytes).
        agrees(page_schema(), &page(&[], Some("p")), false);
        agrees(page_schema(), &page(&[], Some("é")), false);
        agrees(page_schema(), &page(&[], Some("éé")), true);
    }

    #[test]
    fn a_required_member_left_out_by_serde_fails() {
        let schema = json!({"required": ["hits", "next"]});
        agrees(schema.clone(), &page(&[], None), false);
        agrees(schema, &page(&[], Some("p2")), true);
    }

    #[test]
    fn types_are_checked_for_scalars_arrays_and_objects() {
        agrees(json!({"type": "string"}), &"text", true);
        agrees(json!({"type": "string"}), &'c', true);
        agrees(json!({"type": "string"}), &3, false);
        agrees(json!({"type": "integer"}), &3.0, true);
        agrees(json!({"type": "integer"}), &3.5, false);
        agrees(json!({"type": "number"}), &u64::MAX, true);
        agrees(json!({"type": "boolean"}), &true, true);
        agrees(json!({"type": "null"}), &(), true);
        agrees(json!({"type": "null"}), &None::<u8>, true);
        agrees(json!({"type": "null"}), &Some(1), false);
        agrees(json!({"type": "array"}), &[1, 2], true);
        agrees(json!({"type": "object"}), &[1, 2], false);
        agrees(json!({"type": "array"}), &page(&[], None), false);
        agrees(json!({"type": "object"}), &page(&[], None), true);
        agrees(json!({"type": "array"}), &(1, "a"), true);
        agrees(json!({"type": "object"}), &(1, "a"), false);
    }

    #[test]
    fn floats_are_checked_and_written_as_a_value_holds_them() {
        // An `f32` widens to the `f64` a `Value` holds, in the check and in the text.
        agrees(json!({"maximum": 192.3}), &192.3_f32, false);
        agrees(json!({"maximum": 192.31}), &192.3_f32, true);
        let fast = FastCheck::compile(&json!({"maximum": 200})).unwrap();
        assert_eq!(
            write_checked(&fast, &192.3_f32, Vec::new()).as_deref(),
            Some("192.3000030517578")
        );
        // A NaN or an infinity is `null`.
        agrees(json!({"type": "number"}), &f64::NAN, false);
        agrees(json!({"type": ["number", "null"]}), &f64::INFINITY, true);
        assert_eq!(
            write_checked(
                &FastCheck::compile(&json!({})).unwrap(),
                &f64::NAN,
                Vec::new()
            )
            .as_deref(),
            Some("null")
        );
    }

    #[test]
    fn wide_integers_are_numbers_within_64_bits_and_left_to_the_value_path_beyond() {
        agrees(json!({"minimum": -5}), &(-3_i128), true);
        agrees(json!({"maximum": 5}), &7_u128, false);
        agrees(json!({"type": "integer"}), &(u128::from(u64::MAX)), true);
        let fast = FastCheck::compile(&json!({"type": "integer"})).unwrap();
        assert_eq!(
            write_checked(&fast, &(u128::from(u64::MAX) + 1), Vec::new()),
            None
        );
        assert_eq!(
            write_checked(&fast, &(i128::from(i64::MIN) - 1), Vec::new()),
            None
        );
        // Beyond 2^53 a bound is not compared here: the `Value` path decides.
        let bounded = FastCheck::compile(&json!({"maximum": 10})).unwrap();
        assert_eq!(write_checked(&bounded, &(1_u64 << 60), Vec::new()), None);
    }

    #[test]
    fn any_of_is_checked_on_the_whole_node() {
        let schema = json!({"anyOf": [
            {"type": "object", "required": ["next"]},
            {"properties": {"hits": {"maxItems": 1}}}
        ]});
        agrees(schema.clone(), &page(&[0.1, 0.2], Some("p2")), true);
        agrees(schema.clone(), &page(&[0.1], None), true);
        agrees(schema, &page(&[0.1, 0.2], None), false);
        let strings = json!({"anyOf": [{"maxLength": 1}, {"minLength": 4}]});
        agrees(strings.clone(), &"a", true);
        agrees(strings.clone(), &"abcd", true);
        agrees(strings, &"abc", false);
        // A branch of another type refuses a string (an untagged enum of a bounded string
        // and a number).
        let typed = json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]});
        agrees(typed.clone(), &"abc", true);
        agrees(typed.clone(), &7, true);
        agrees(typed, &"abcdef", false);
        let counted = json!({"minItems": 2, "maxItems": 3});
        agrees(counted.clone(), &[1], false);
        agrees(counted.clone(), &[1, 2], true);
        agrees(counted.clone(), &[1, 2, 3], true);
        agrees(counted, &[1, 2, 3, 4], false);
        let arrays = json!({"anyOf": [{"maxItems": 1}, {"items": {"minimum": 3}}]});
        agrees(arrays.clone(), &[1], true);
        agrees(arrays.clone(), &[3, 4], true);
        agrees(arrays, &[1, 4], false);
    }

    #[test]
    fn maps_are_checked_as_values_are() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"maximum": 1}},
            "additionalProperties": {"minimum": 10},
            "required": ["a"]
        });
        let map = |pairs: &[(&str, u32)]| -> BTreeMap<String, u32> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
        };
        agrees(schema.clone(), &map(&[("a", 1), ("b", 10)]), true);
        agrees(schema.clone(), &map(&[("a", 2)]), false);
        agrees(schema.clone(), &map(&[("a", 1), ("b", 9)]), false);
        agrees(schema, &map(&[("b", 10)]), false);
        // Integer keys are names, as in a `Value`.
        let keyed: BTreeMap<u8, u8> = [(1, 5)].into();
        agrees(json!({"properties": {"1": {"maximum": 4}}}), &keyed, false);
        agrees(json!({"properties": {"1": {"maximum": 5}}}), &keyed, true);
    }

    #[test]
    fn struct_members_not_listed_meet_additional_properties() {
        #[derive(Serialize)]
        struct Two {
            a: u32,
            b: u32,
        }
        let schema =
            json!({"properties": {"a": {"maximum": 5}}, "additionalProperties": {"maximum": 1}});
        agrees(schema.clone(), &Two { a: 5, b: 1 }, true);
        agrees(schema.clone(), &Two { a: 6, b: 1 }, false);
        agrees(schema, &Two { a: 5, b: 2 }, false);
    }

    /// A member `properties` names with no rules of its own (`{}`, `true`) passes as it is:
    /// `additionalProperties` is only for the names `properties` does not list.
    #[test]
    fn a_listed_member_without_rules_is_not_held_to_additional_properties() {
        #[derive(Serialize)]
        struct One {
            a: u32,
        }
        for listed in [json!({}), json!(true)] {
            let schema =
                json!({"properties": {"a": listed}, "additionalProperties": {"maximum": 1}});
            agrees(schema, &One { a: 7 }, true);
        }
    }

    /// An `i128` or `u128` is written as `to_value` writes it: within 64 bits (signed or
    /// unsigned) it is a number, past them it is refused (and left to the `Value` path).
    #[test]
    fn wide_integers_within_64_bits_are_numbers() {
        let any = json!({"type": "integer"});
        agrees(any.clone(), &(u64::MAX as i128), true);
        agrees(any.clone(), &(i64::MAX as i128 + 1), true);
        agrees(any.clone(), &(i64::MIN as i128), true);
        agrees(any.clone(), &(u64::MAX as u128), true);
        agrees(json!({"minimum": 0}), &-1_i128, false);
        let fast = FastCheck::compile(&any).unwrap();
        assert_eq!(
            write_checked(&fast, &(u64::MAX as i128), Vec::new()).as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(
            write_checked(&fast, &(u64::MAX as i128 + 1), Vec::new()),
            None
        );
        assert_eq!(
            write_checked(&fast, &(i64::MIN as i128 - 1), Vec::new()),
            None
        );
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(u32),
        Tuple(u32, u32),
        Struct { side: u32 },
    }

    #[test]
    fn enum_variants_are_checked() {
        agrees(
            json!({"type": "string", "maxLength": 4}),
            &Shape::Unit,
            true,
        );
        agrees(
            json!({"type": "string", "maxLength": 3}),
            &Shape::Unit,
            false,
        );
        let bounded = |name: &str| {
            json!({"type": "object", "required": [name],
                   "properties": {name: {"maximum": 3, "items": {"maximum": 3},
                                         "properties": {"side": {"maximum": 3}}}}})
        };
        agrees(bounded("Newtype"), &Shape::Newtype(3), true);
        agrees(bounded("Newtype"), &Shape::Newtype(4), false);
        agrees(bounded("Tuple"), &Shape::Tuple(1, 3), true);
        agrees(bounded("Tuple"), &Shape::Tuple(1, 4), false);
        agrees(bounded("Struct"), &Shape::Struct { side: 3 }, true);
        agrees(bounded("Struct"), &Shape::Struct { side: 4 }, false);
    }

    #[test]
    fn tuple_structs_newtypes_and_bytes() {
        #[derive(Serialize)]
        struct Pair(u8, u8);
        #[derive(Serialize)]
        struct Meters(u32);
        struct Bytes(&'static [u8]);
        impl Serialize for Bytes {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        let small = json!({"items": {"maximum": 5}, "maxItems": 2});
        agrees(small.clone(), &Pair(1, 5), true);
        agrees(small.clone(), &Pair(1, 6), false);
        agrees(small.clone(), &Bytes(&[1, 2]), true);
        agrees(small.clone(), &Bytes(&[1, 2, 3]), false);
        agrees(small, &Bytes(&[9]), false);
        agrees(json!({"maximum": 10}), &Meters(10), true);
        agrees(json!({"maximum": 10}), &Meters(11), false);
    }

    /// A hand-written `Serialize` that writes one name twice: two entries in the text, as the
    /// type writes them (and as `serde_json::to_string` writes them), the last in a `Value`.
    /// Each is checked, so the verdict is the `Value`'s whenever this path gives one.
    #[test]
    fn a_name_written_twice_is_checked_each_time() {
        struct Twice(u32, u32);
        impl Serialize for Twice {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut st = s.serialize_struct("Twice", 2)?;
                st.serialize_field("a", &self.0)?;
                st.serialize_field("a", &self.1)?;
                st.end()
            }
        }
        let fast = FastCheck::compile(&json!({"properties": {"a": {"maximum": 1}}})).unwrap();
        assert_eq!(
            write_checked(&fast, &Twice(0, 1), Vec::new()).as_deref(),
            Some(r#"{"a":0,"a":1}"#)
        );
        for refused in [Twice(0, 2), Twice(2, 0)] {
            assert_eq!(write_checked(&fast, &refused, Vec::new()), None);
        }
    }

    /// A struct written member by member through `serialize_struct`.
    struct Wide(BTreeMap<String, u32>);
    impl Serialize for Wide {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct("Wide", self.0.len())?;
            for (k, v) in &self.0 {
                st.serialize_field(Box::leak(k.clone().into_boxed_str()), v)?;
            }
            st.end()
        }
    }

    fn wide(n: u32) -> Wide {
        Wide((0..n).map(|i| (format!("f{i:02}"), i)).collect())
    }

    fn names(n: u32) -> Vec<String> {
        (0..n).map(|i| format!("f{i:02}")).collect()
    }

    #[test]
    fn required_names_are_tracked_up_to_64_and_beyond_that_built() {
        for n in [1, 40, 63, 64, 65, 70] {
            agrees(json!({"required": names(n)}), &wide(n), true);
            // One required name more than is written.
            agrees(json!({"required": names(n + 1)}), &wide(n), false);
            // All written but one required in the middle.
            let mut fewer = wide(n);
            fewer.0.remove(&format!("f{:02}", n / 2));
            agrees(json!({"required": names(n)}), &fewer, false);
        }
        agrees(
            json!({"required": ["f39"], "additionalProperties": {"maximum": 39}}),
            &wide(40),
            true,
        );
        agrees(
            json!({"additionalProperties": {"maximum": 38}}),
            &wide(40),
            false,
        );
    }

    #[test]
    fn serde_json_private_newtypes_are_left_to_the_value_path() {
        struct Private;
        impl Serialize for Private {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_newtype_struct("$serde_json::private::RawValue", "1")
            }
        }
        let fast = FastCheck::compile(&json!({})).unwrap();
        assert_eq!(write_checked(&fast, &Private, Vec::new()), None);
    }

    #[test]
    fn an_error_from_serialize_is_left_to_the_value_path() {
        struct Fails;
        impl Serialize for Fails {
            fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let fast = FastCheck::compile(&json!({})).unwrap();
        assert_eq!(write_checked(&fast, &Fails, Vec::new()), None);
    }
}
