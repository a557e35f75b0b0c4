//! Structural type checks: a returned value against its declared type, and a declared type
//! against a typed unit's JSON Schema.

use serde_json::Value;

use crate::model::{TypeRef, Workflow};

/// How many levels deep a declared type is compared with a JSON Schema.
pub(crate) const MAX_DEPTH: usize = 32;

/// How many schema nodes one comparison of a declared type with a JSON Schema visits at most.
pub(crate) const MAX_STEPS: usize = 10_000;

/// The JSON type of a value, as reported in `OutputTypeMismatchError.actual_type`.
///
/// ```
/// use agentio_workflow::json_type;
/// use serde_json::json;
/// assert_eq!(json_type(&json!(3)), "integer");
/// assert_eq!(json_type(&json!(3.5)), "number");
/// assert_eq!(json_type(&json!(null)), "null");
/// assert_eq!(json_type(&json!({ "a": 1 })), "object");
/// ```
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where and how a value differs from its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// A JSON pointer inside the value (`""` for the value itself).
    pub path: String,
    /// The type expected there.
    pub expected: String,
    /// The JSON type found there.
    pub actual: String,
}

impl Workflow {
    /// Checks `value` against `ty`: structural, never coercing. An integer passes `number`;
    /// `true` does not; a named type's value is an object whose declared fields are all present
    /// with their types (recursively; extra fields are allowed); `array<T>` checks every element.
    ///
    /// ```
    /// use agentio_workflow::{TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w");
    /// assert!(workflow.check_value(&json!(3), &TypeRef::Number).is_ok());
    /// assert!(workflow.check_value(&json!(true), &TypeRef::Number).is_err());
    /// // No coercion: a numeric string is a string.
    /// let wrong = workflow.check_value(&json!("3"), &TypeRef::Integer).unwrap_err();
    /// assert_eq!((wrong.expected.as_str(), wrong.actual.as_str()), ("integer", "string"));
    /// ```
    pub fn check_value(&self, value: &Value, ty: &TypeRef) -> Result<(), Mismatch> {
        self.check_at(value, ty, &mut String::new())
    }

    fn check_at(&self, value: &Value, ty: &TypeRef, at: &mut String) -> Result<(), Mismatch> {
        let mismatch = |at: &String| Mismatch {
            path: at.clone(),
            expected: ty.to_string(),
            actual: json_type(value).to_owned(),
        };
        if let TypeRef::Named(name) = ty
            && let Some(values) = self.type_def(name).and_then(|d| d.values.as_ref())
        {
            return if values.contains(value) {
                Ok(())
            } else {
                Err(Mismatch {
                    path: at.clone(),
                    expected: format!(
                        "one of {}",
                        serde_json::to_string(values).unwrap_or_default()
                    ),
                    actual: json_type(value).to_owned(),
                })
            };
        }
        let ok = match (ty, value) {
            (TypeRef::Any, _) => true,
            (TypeRef::String, Value::String(_))
            | (TypeRef::Number, Value::Number(_))
            | (TypeRef::Boolean, Value::Bool(_))
            | (TypeRef::Object, Value::Object(_))
            | (TypeRef::Array(None), Value::Array(_)) => true,
            (TypeRef::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (TypeRef::Array(Some(inner)), Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let mark = at.len();
                    at.push_str(&format!("/{i}"));
                    self.check_at(item, inner, at)?;
                    at.truncate(mark);
                }
                true
            }
            (TypeRef::Named(name), Value::Object(fields)) => {
                let Some(def) = self.type_def(name) else {
                    return Err(mismatch(at));
                };
                for (field, field_ty) in &def.fields {
                    let mark = at.len();
                    at.push('/');
                    at.push_str(&field.replace('~', "~0").replace('/', "~1"));
                    match fields.get(field) {
                        Some(v) => self.check_at(v, field_ty, at)?,
                        None => {
                            return Err(Mismatch {
                                path: at.clone(),
                                expected: field_ty.to_string(),
                                actual: "missing".into(),
                            });
                        }
                    }
                    at.truncate(mark);
                }
                true
            }
            _ => false,
        };
        if ok { Ok(()) } else { Err(mismatch(at)) }
    }

    /// Whether a value of type `ty` always fits the JSON Schema `schema` (whose `$ref`s point
    /// into `root`'s `$defs`): `None` when it does, the reason when it may not.
    ///
    /// The comparison looks 32 levels deep and visits at most 10,000 schema nodes (a union
    /// whose branches refer back to it would otherwise double the work at each level); past
    /// either it gives no verdict, and the value itself is still checked when it arrives. Value
    /// constraints (ranges, lengths, patterns) are likewise left to the arriving value.
    ///
    /// ```
    /// use agentio_workflow::{TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w");
    /// assert_eq!(workflow.fits_schema(&TypeRef::Integer, &json!({ "type": "integer" }), &json!({})), None);
    /// // A number may be a fraction, which an integer field refuses.
    /// assert!(workflow.fits_schema(&TypeRef::Number, &json!({ "type": "integer" }), &json!({})).is_some());
    /// // Types are compared, not value bounds: a declared type carries none, so a bounded
    /// // field is wired, and each value is checked against the bound when it arrives.
    /// let small = json!({ "type": "integer", "maximum": 10 });
    /// assert_eq!(workflow.fits_schema(&TypeRef::Integer, &small, &json!({})), None);
    /// ```
    pub fn fits_schema(&self, ty: &TypeRef, schema: &Value, root: &Value) -> Option<String> {
        self.fits(ty, schema, root, 0, &mut 0)
    }

    fn fits(
        &self,
        ty: &TypeRef,
        schema: &Value,
        root: &Value,
        depth: usize,
        steps: &mut usize,
    ) -> Option<String> {
        *steps += 1;
        if depth > MAX_DEPTH || *steps > MAX_STEPS {
            return None;
        }
        let schema = resolve(schema, root);
        let Some(object) = schema.as_object() else {
            // `true` accepts anything; `false` nothing.
            return (schema == &Value::Bool(false)).then(|| "the schema accepts no value".into());
        };
        for union in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = object.get(union) {
                let reasons: Vec<String> = branches
                    .iter()
                    .filter_map(|b| self.fits(ty, b, root, depth + 1, steps))
                    .collect();
                return (reasons.len() == branches.len()).then(|| reasons.join("; "));
            }
        }
        let types: Vec<&str> = match object.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let allows = |t: &str| types.is_empty() || types.contains(&t);
        let needs = |t: &str| {
            format!(
                "it needs `{}` where the workflow provides `{t}`",
                types.join(" or ")
            )
        };
        match ty {
            TypeRef::Any => (!types.is_empty()
                || object.contains_key("enum")
                || object.contains_key("const"))
            .then(|| "it accepts only some values, and the workflow provides `any`".to_owned()),
            TypeRef::Named(name)
                if let Some(values) = self.type_def(name).and_then(|d| d.values.as_ref()) =>
            {
                values.iter().find_map(|value| {
                    let listed = object
                        .get("enum")
                        .and_then(Value::as_array)
                        .map(|allowed| allowed.contains(value))
                        .or_else(|| object.get("const").map(|c| c == value));
                    let fits = listed.unwrap_or_else(|| {
                        let t = json_type(value);
                        allows(t) || (t == "integer" && allows("number"))
                    });
                    (!fits).then(|| format!("it does not accept `{value}`, a value of `{name}`"))
                })
            }
            TypeRef::String => (!allows("string")).then(|| needs("string")),
            TypeRef::Boolean => (!allows("boolean")).then(|| needs("boolean")),
            TypeRef::Integer => {
                (!(allows("integer") || allows("number"))).then(|| needs("integer"))
            }
            TypeRef::Number => {
                if allows("number") {
                    None
                } else if allows("integer") {
                    Some("it needs an integer, and a `number` may have a fraction; declare the output as `integer`".into())
                } else {
                    Some(needs("number"))
                }
            }
            TypeRef::Object => (!allows("object")).then(|| needs("object")),
            TypeRef::Array(inner) => {
                if !allows("array") {
                    return Some(needs("array"));
                }
                match (inner, object.get("items")) {
                    (Some(inner), Some(items)) => self
                        .fits(inner, items, root, depth + 1, steps)
                        .map(|r| format!("its elements: {r}")),
                    _ => None,
                }
            }
            TypeRef::Named(name) => {
                if !allows("object") {
                    return Some(needs(name));
                }
                let def = self.type_def(name)?;
                let properties = object.get("properties").and_then(Value::as_object);
                for required in object
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !def.fields.iter().any(|(f, _)| f == required) {
                        return Some(format!(
                            "it requires field `{required}`, which type `{name}` does not have"
                        ));
                    }
                }
                for (field, field_ty) in &def.fields {
                    if let Some(property) = properties.and_then(|p| p.get(field))
                        && let Some(reason) = self.fits(field_ty, property, root, depth + 1, steps)
                    {
                        return Some(format!("field `{field}`: {reason}"));
                    }
                }
                None
            }
        }
    }
}

impl Workflow {
    /// Whether every value the JSON Schema `schema` describes (a producer's output) is a `ty`:
    /// `None` when so, the reason when not (a nullable field, an integer declared where the
    /// producer may emit fractions, a missing field of a named type).
    ///
    /// Bounded as [`Self::fits_schema`] is.
    ///
    /// ```
    /// use agentio_workflow::{TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w");
    /// assert_eq!(workflow.schema_satisfies(&json!({ "type": "integer" }), &json!({}), &TypeRef::Number), None);
    /// // The producer may emit `null`, which is not a string.
    /// let nullable = json!({ "type": ["string", "null"] });
    /// assert!(workflow.schema_satisfies(&nullable, &json!({}), &TypeRef::String).is_some());
    /// ```
    pub fn schema_satisfies(&self, schema: &Value, root: &Value, ty: &TypeRef) -> Option<String> {
        self.satisfies(schema, root, ty, 0, &mut 0)
    }

    fn satisfies(
        &self,
        schema: &Value,
        root: &Value,
        ty: &TypeRef,
        depth: usize,
        steps: &mut usize,
    ) -> Option<String> {
        *steps += 1;
        if depth > MAX_DEPTH || *steps > MAX_STEPS {
            return None;
        }
        if *ty == TypeRef::Any {
            return None;
        }
        let schema = resolve(schema, root);
        let Some(object) = schema.as_object() else {
            return (schema == &Value::Bool(true))
                .then(|| format!("it may produce any value, not only `{ty}`"));
        };
        if let TypeRef::Named(name) = ty
            && let Some(values) = self.type_def(name).and_then(|d| d.values.as_ref())
        {
            // Every value the producer may emit must be one of the enum's.
            let produced: Option<Vec<&Value>> = object
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| e.iter().collect())
                .or_else(|| object.get("const").map(|c| vec![c]));
            return match produced {
                Some(produced) => produced
                    .iter()
                    .find(|v| !values.contains(v))
                    .map(|v| format!("it may produce `{v}`, which is not a value of `{name}`")),
                None => Some(format!(
                    "it may produce values outside `{name}` (its schema lists no `enum`)"
                )),
            };
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = object.get(union) {
                return branches
                    .iter()
                    .find_map(|b| self.satisfies(b, root, ty, depth + 1, steps));
            }
        }
        let produced: Vec<&str> = match object.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            None if object.contains_key("enum") || object.contains_key("const") => return None,
            None => {
                return Some(format!(
                    "its type is not fixed, so it may produce something other than `{ty}`"
                ));
            }
            _ => Vec::new(),
        };
        let allowed: &[&str] = match ty {
            TypeRef::String => &["string"],
            TypeRef::Number => &["number", "integer"],
            TypeRef::Integer => &["integer"],
            TypeRef::Boolean => &["boolean"],
            TypeRef::Object | TypeRef::Named(_) => &["object"],
            TypeRef::Array(_) => &["array"],
            TypeRef::Any => &[],
        };
        if let Some(extra) = produced.iter().find(|t| !allowed.contains(t)) {
            return Some(format!("it may produce `{extra}` where `{ty}` is declared"));
        }
        match ty {
            TypeRef::Array(Some(inner)) => object
                .get("items")
                .and_then(|items| self.satisfies(items, root, inner, depth + 1, steps))
                .map(|r| format!("its elements: {r}")),
            TypeRef::Named(name) => {
                let def = self.type_def(name)?;
                let properties = object.get("properties").and_then(Value::as_object);
                let required: Vec<&str> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                def.fields.iter().find_map(|(field, field_ty)| {
                    match properties.and_then(|p| p.get(field)) {
                        None => Some(format!(
                            "it has no field `{field}`, which type `{name}` requires"
                        )),
                        Some(_) if !required.contains(&field.as_str()) => Some(format!(
                            "its field `{field}` may be left out, and type `{name}` requires it"
                        )),
                        Some(property) => self
                            .satisfies(property, root, field_ty, depth + 1, steps)
                            .map(|r| format!("field `{field}`: {r}")),
                    }
                })
            }
            _ => None,
        }
    }
}

/// Follows a local `$ref` (`#/$defs/Name`).
pub(crate) fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..16 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => match agentio_core::pointer::resolve_local(root, reference) {
                Some(target) => current = target,
                None => return current,
            },
            None => return current,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn workflow() -> Workflow {
        Workflow::new("t").with_type(
            "Finding",
            vec![("source", TypeRef::String), ("confidence", TypeRef::Number)],
        )
    }

    #[test]
    fn checks_are_structural_and_never_coerce() {
        let w = workflow();
        assert!(w.check_value(&json!(3), &TypeRef::Number).is_ok());
        assert!(w.check_value(&json!(3.5), &TypeRef::Number).is_ok());
        assert_eq!(
            w.check_value(&json!(true), &TypeRef::Number)
                .unwrap_err()
                .actual,
            "boolean"
        );
        assert_eq!(
            w.check_value(&json!("3"), &TypeRef::Number)
                .unwrap_err()
                .actual,
            "string"
        );
        assert_eq!(
            w.check_value(&json!(3.5), &TypeRef::Integer)
                .unwrap_err()
                .actual,
            "number"
        );
        assert!(w.check_value(&json!(null), &TypeRef::String).is_err());
    }

    #[test]
    fn named_types_and_array_elements_are_checked_recursively() {
        let w = workflow();
        let findings = TypeRef::parse("array<Finding>").unwrap();
        assert!(
            w.check_value(
                &json!([{ "source": "a", "confidence": 1, "extra": true }]),
                &findings
            )
            .is_ok()
        );
        let err = w.check_value(&json!([{ "source": "a", "confidence": 1 }, { "source": "b", "confidence": "high" }]), &findings).unwrap_err();
        assert_eq!(
            err,
            Mismatch {
                path: "/1/confidence".into(),
                expected: "number".into(),
                actual: "string".into()
            }
        );
        let err = w
            .check_value(&json!({ "source": "a" }), &TypeRef::Named("Finding".into()))
            .unwrap_err();
        assert_eq!(
            (err.path.as_str(), err.actual.as_str()),
            ("/confidence", "missing")
        );
    }

    #[test]
    fn declared_types_are_matched_against_json_schemas() {
        let w = workflow();
        let root = json!({});
        assert!(
            w.fits_schema(&TypeRef::Integer, &json!({ "type": "integer" }), &root)
                .is_none()
        );
        assert!(
            w.fits_schema(&TypeRef::Number, &json!({ "type": "integer" }), &root)
                .unwrap()
                .contains("declare the output as `integer`")
        );
        assert!(
            w.fits_schema(
                &TypeRef::String,
                &json!({ "type": ["string", "null"] }),
                &root
            )
            .is_none()
        );
        assert!(
            w.fits_schema(&TypeRef::String, &json!({ "type": "number" }), &root)
                .is_some()
        );
        let schema = json!({ "$ref": "#/$defs/F" });
        let root = json!({ "$defs": { "F": { "type": "object", "properties": { "source": { "type": "string" } }, "required": ["source", "weight"] } } });
        let reason = w
            .fits_schema(&TypeRef::Named("Finding".into()), &schema, &root)
            .unwrap();
        assert!(reason.contains("`weight`"), "{reason}");
    }

    fn with_level() -> Workflow {
        workflow().with_enum_type("Level", vec![json!("low"), json!("high")])
    }

    #[test]
    fn a_union_fits_when_any_branch_does() {
        let w = workflow();
        let root = json!({});
        for union in ["anyOf", "oneOf"] {
            let either = json!({ union: [{ "type": "number" }, { "type": "string" }] });
            assert_eq!(w.fits_schema(&TypeRef::String, &either, &root), None);
            let neither = json!({ union: [{ "type": "number" }, { "type": "boolean" }] });
            let reason = w
                .fits_schema(&TypeRef::String, &neither, &root)
                .expect("no branch takes a string");
            assert_eq!(
                reason,
                "it needs `number` where the workflow provides `string`; it needs `boolean` where the workflow provides `string`"
            );
        }
        // `true` takes anything; `false` nothing.
        assert_eq!(w.fits_schema(&TypeRef::String, &json!(true), &root), None);
        assert_eq!(
            w.fits_schema(&TypeRef::String, &json!(false), &root)
                .as_deref(),
            Some("the schema accepts no value")
        );
    }

    #[test]
    fn any_fits_only_a_schema_that_takes_anything() {
        let w = workflow();
        let root = json!({});
        assert_eq!(w.fits_schema(&TypeRef::Any, &json!({}), &root), None);
        assert_eq!(
            w.fits_schema(&TypeRef::Any, &json!({ "description": "x" }), &root),
            None
        );
        for narrow in [
            json!({ "type": "string" }),
            json!({ "enum": [1, 2] }),
            json!({ "const": 1 }),
        ] {
            assert_eq!(
                w.fits_schema(&TypeRef::Any, &narrow, &root).as_deref(),
                Some("it accepts only some values, and the workflow provides `any`"),
                "{narrow}"
            );
        }
    }

    #[test]
    fn an_enum_type_fits_a_schema_that_takes_each_of_its_values() {
        let w = with_level();
        let root = json!({});
        let level = TypeRef::Named("Level".into());
        for fits in [
            json!({ "enum": ["low", "high", "other"] }),
            json!({ "type": "string" }),
            json!({}),
        ] {
            assert_eq!(w.fits_schema(&level, &fits, &root), None, "{fits}");
        }
        assert_eq!(
            w.fits_schema(&level, &json!({ "enum": ["low"] }), &root)
                .as_deref(),
            Some("it does not accept `\"high\"`, a value of `Level`")
        );
        assert!(
            w.fits_schema(&level, &json!({ "const": "low" }), &root)
                .is_some()
        );
        assert!(
            w.fits_schema(&level, &json!({ "type": "number" }), &root)
                .is_some()
        );
        // An integer value fits a `number` schema.
        let w = workflow().with_enum_type("Size", vec![json!(1), json!(2)]);
        let size = TypeRef::Named("Size".into());
        assert_eq!(
            w.fits_schema(&size, &json!({ "type": "number" }), &root),
            None
        );
    }

    #[test]
    fn a_producer_satisfies_a_type_when_everything_it_emits_is_one() {
        let w = with_level();
        let root = json!({});
        let finding = TypeRef::Named("Finding".into());
        let exact = json!({
            "type": "object",
            "properties": { "source": { "type": "string" }, "confidence": { "type": "integer" } },
            "required": ["source", "confidence"]
        });
        assert_eq!(w.schema_satisfies(&exact, &root, &finding), None);
        let optional = json!({
            "type": "object",
            "properties": { "source": { "type": "string" }, "confidence": { "type": "number" } },
            "required": ["source"]
        });
        assert_eq!(
            w.schema_satisfies(&optional, &root, &finding).as_deref(),
            Some("its field `confidence` may be left out, and type `Finding` requires it")
        );
        // An enum or a constant without a `type`: its values decide (checked at run time).
        let level = TypeRef::String;
        assert_eq!(
            w.schema_satisfies(&json!({ "enum": ["a"] }), &root, &level),
            None
        );
        assert_eq!(
            w.schema_satisfies(&json!({ "const": "a" }), &root, &level),
            None
        );
        assert_eq!(
            w.schema_satisfies(&json!({}), &root, &level).as_deref(),
            Some("its type is not fixed, so it may produce something other than `string`")
        );
        // A union satisfies when every branch does.
        let both = json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] });
        assert_eq!(
            w.schema_satisfies(&both, &root, &level).as_deref(),
            Some("it may produce `null` where `string` is declared")
        );
        let strings =
            json!({ "oneOf": [{ "type": "string" }, { "type": "string", "maxLength": 2 }] });
        assert_eq!(w.schema_satisfies(&strings, &root, &level), None);
        // A named enum: every value produced must be one of its values.
        let named = TypeRef::Named("Level".into());
        assert_eq!(
            w.schema_satisfies(&json!({ "enum": ["low", "high"] }), &root, &named),
            None
        );
        assert_eq!(
            w.schema_satisfies(&json!({ "enum": ["low", "mid"] }), &root, &named)
                .as_deref(),
            Some("it may produce `\"mid\"`, which is not a value of `Level`")
        );
        assert!(
            w.schema_satisfies(&json!({ "type": "string" }), &root, &named)
                .is_some()
        );
    }

    #[test]
    fn json_types_tell_integers_from_other_numbers() {
        assert_eq!(json_type(&json!(1)), "integer");
        assert_eq!(json_type(&json!(-1)), "integer");
        assert_eq!(json_type(&json!(u64::MAX)), "integer");
        assert_eq!(json_type(&json!(1.5)), "number");
        assert_eq!(json_type(&json!(null)), "null");
        assert_eq!(json_type(&json!([])), "array");
    }

    #[test]
    fn each_scalar_type_fits_only_schemas_that_allow_it() {
        let w = workflow();
        let root = json!({});
        for (ty, name) in [
            (TypeRef::String, "string"),
            (TypeRef::Boolean, "boolean"),
            (TypeRef::Object, "object"),
        ] {
            assert_eq!(w.fits_schema(&ty, &json!({ "type": name }), &root), None);
            assert_eq!(
                w.fits_schema(&ty, &json!({ "type": "integer" }), &root)
                    .as_deref(),
                Some(format!("it needs `integer` where the workflow provides `{name}`").as_str())
            );
        }
        // A list of types: one of them must be the type.
        assert_eq!(
            w.fits_schema(
                &TypeRef::String,
                &json!({ "type": ["integer", "null"] }),
                &root
            )
            .as_deref(),
            Some("it needs `integer or null` where the workflow provides `string`")
        );
        assert_eq!(
            w.fits_schema(&TypeRef::Integer, &json!({ "type": "string" }), &root)
                .as_deref(),
            Some("it needs `string` where the workflow provides `integer`")
        );
        assert_eq!(
            w.fits_schema(&TypeRef::Integer, &json!({ "type": "number" }), &root),
            None
        );
    }

    #[test]
    fn an_enum_type_fits_a_constant_only_when_it_has_that_one_value() {
        let w = workflow().with_enum_type("Only", vec![json!("low")]);
        let root = json!({});
        let only = TypeRef::Named("Only".into());
        assert_eq!(
            w.fits_schema(&only, &json!({ "const": "low" }), &root),
            None
        );
        assert_eq!(
            w.fits_schema(&only, &json!({ "const": "high" }), &root)
                .as_deref(),
            Some("it does not accept `\"low\"`, a value of `Only`")
        );
    }

    #[test]
    fn a_named_type_is_matched_field_by_field() {
        let w = workflow();
        let root = json!({});
        let finding = TypeRef::Named("Finding".into());
        let fits = json!({ "type": "object", "properties": {
            "source": { "type": "string" }, "confidence": { "type": "number" } } });
        assert_eq!(w.fits_schema(&finding, &fits, &root), None);
        let wrong = json!({ "type": "object", "properties": {
            "source": { "type": "string" }, "confidence": { "type": "boolean" } } });
        assert_eq!(
            w.fits_schema(&finding, &wrong, &root).as_deref(),
            Some("field `confidence`: it needs `boolean` where the workflow provides `number`")
        );
    }

    #[test]
    fn nested_unions_count_toward_the_depth_bound() {
        let w = workflow();
        let root = json!({});
        let nested = |levels: usize| {
            (0..levels).fold(
                json!({ "type": "number" }),
                |inner, _| json!({ "anyOf": [inner] }),
            )
        };
        assert!(
            w.fits_schema(&TypeRef::String, &nested(32), &root)
                .is_some()
        );
        assert_eq!(w.fits_schema(&TypeRef::String, &nested(33), &root), None);
        assert!(
            w.schema_satisfies(&nested(32), &root, &TypeRef::String)
                .is_some()
        );
        assert_eq!(
            w.schema_satisfies(&nested(33), &root, &TypeRef::String),
            None
        );
    }

    /// Named types nested through their fields count toward the depth bound too.
    #[test]
    fn nested_named_types_count_toward_the_depth_bound() {
        // `T0 { next: T1 }`, ..., `T{n-1} { v: string }`, against a schema of the same shape
        // whose `v` is a number: found within 32 levels, no verdict past them.
        let chain = |n: usize| {
            let mut w = Workflow::new("t");
            for i in 0..n - 1 {
                w = w.with_type(
                    format!("T{i}"),
                    vec![("next", TypeRef::Named(format!("T{}", i + 1)))],
                );
            }
            w = w.with_type(format!("T{}", n - 1), vec![("v", TypeRef::String)]);
            let schema = (0..n - 1).fold(
                json!({ "type": "object", "properties": { "v": { "type": "number" } }, "required": ["v"] }),
                |inner, _| json!({ "type": "object", "properties": { "next": inner }, "required": ["next"] }),
            );
            (w, schema)
        };
        let root = json!({});
        let top = TypeRef::Named("T0".into());
        let (w, schema) = chain(10);
        assert!(w.fits_schema(&top, &schema, &root).is_some());
        assert!(w.schema_satisfies(&schema, &root, &top).is_some());
        let (w, schema) = chain(40);
        assert_eq!(w.fits_schema(&top, &schema, &root), None);
        assert_eq!(w.schema_satisfies(&schema, &root, &top), None);
    }

    #[test]
    fn a_producer_schema_of_true_may_produce_anything() {
        let w = workflow();
        let root = json!({});
        assert_eq!(
            w.schema_satisfies(&json!(true), &root, &TypeRef::String)
                .as_deref(),
            Some("it may produce any value, not only `string`")
        );
        // `false` produces nothing, so nothing it produces is wrong.
        assert_eq!(
            w.schema_satisfies(&json!(false), &root, &TypeRef::String),
            None
        );
        assert_eq!(w.schema_satisfies(&json!(true), &root, &TypeRef::Any), None);
    }

    /// Exactly 10,000 schema nodes are compared; one more and there is no verdict.
    #[test]
    fn a_comparison_visits_at_most_10000_schema_nodes() {
        let w = workflow();
        let root = json!({});
        // The union itself and its branches, each a node.
        let union = |branches: usize, last: Value| {
            let mut all = vec![json!({ "type": "number" }); branches - 1];
            all.push(last);
            json!({ "anyOf": all })
        };
        let number = json!({ "type": "number" });
        assert!(
            w.fits_schema(
                &TypeRef::String,
                &union(MAX_STEPS - 1, number.clone()),
                &root
            )
            .is_some()
        );
        assert_eq!(
            w.fits_schema(&TypeRef::String, &union(MAX_STEPS, number), &root),
            None
        );
        // A producer: every branch but the last is a string; the last may be `null`.
        let strings = |branches: usize| {
            let mut all = vec![json!({ "type": "string" }); branches - 1];
            all.push(json!({ "type": "null" }));
            json!({ "anyOf": all })
        };
        assert!(
            w.schema_satisfies(&strings(MAX_STEPS - 1), &root, &TypeRef::String)
                .is_some()
        );
        assert_eq!(
            w.schema_satisfies(&strings(MAX_STEPS), &root, &TypeRef::String),
            None
        );
    }

    #[test]
    fn a_union_that_refers_to_itself_stops_at_the_step_bound() {
        // Each branch is the union again, forever: 2^32 paths to the depth bound, so the step
        // bound is what ends it (this test would not finish without it).
        let w = workflow();
        let root = json!({ "$defs": { "U": { "anyOf": [{ "$ref": "#/$defs/U" }, { "$ref": "#/$defs/U" }] } } });
        assert_eq!(
            w.fits_schema(&TypeRef::String, &json!({ "$ref": "#/$defs/U" }), &root),
            None
        );
        assert_eq!(
            w.schema_satisfies(&json!({ "$ref": "#/$defs/U" }), &root, &TypeRef::String),
            None
        );
    }

    #[test]
    fn recursive_schemas_stop_at_the_depth_bound() {
        // A schema whose items refer to itself, forever: both checks look 32 levels deep and
        // give no verdict past that (the value itself is still checked when it arrives).
        let w = workflow();
        let root =
            json!({ "$defs": { "L": { "type": "array", "items": { "$ref": "#/$defs/L" } } } });
        let schema = json!({ "$ref": "#/$defs/L" });
        let strings_in = |levels: usize| {
            (0..levels).fold(TypeRef::String, |inner, _| {
                TypeRef::Array(Some(Box::new(inner)))
            })
        };
        // The string at level 32 is still compared (and is not what the schema has there).
        assert!(w.fits_schema(&strings_in(32), &schema, &root).is_some());
        assert!(
            w.schema_satisfies(&schema, &root, &strings_in(32))
                .is_some()
        );
        assert_eq!(w.fits_schema(&strings_in(33), &schema, &root), None);
        assert_eq!(w.schema_satisfies(&schema, &root, &strings_in(33)), None);
    }
}
