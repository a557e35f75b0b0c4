//! Schemas generated once per type, compiled once, and checked at every boundary.

use std::any::{TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

use jsonschema::error::ValidationErrorKind;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::bounds::IsJsonSchema;
use crate::error::{SchemaError, SchemaErrorCode};
use crate::strict::{self, StrictModeError};
use crate::violation::Violation;

/// Which side of a boundary a schema describes.
///
/// Inputs are described by schemars' *deserialize* contract (what the type accepts: fields
/// with `#[serde(default)]` are optional), outputs by its *serialize* contract (what the type
/// produces: a field is always present unless `skip_serializing_if` may drop it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// What flows into a core or tool.
    Input,
    /// What a core or tool returns.
    Output,
}

impl Direction {
    fn error_code(self) -> SchemaErrorCode {
        match self {
            Direction::Input => SchemaErrorCode::InputInvalid,
            Direction::Output => SchemaErrorCode::OutputInvalid,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Direction::Input => "input",
            Direction::Output => "output",
        }
    }
}

/// How many violations one error lists; a value broken in more places says how many were left
/// out, so a hostile input cannot make the error itself huge.
pub const MAX_VIOLATIONS: usize = 32;
const MAX_MESSAGE_CHARS: usize = 240;
/// Past the listed violations, how many more are counted before validation stops: the error
/// then says "at least N more". A hostile value with millions of bad items costs no more.
const MAX_OMITTED_COUNTED: usize = 10_000;
/// The longest property name an error message quotes.
const MAX_NAME_CHARS: usize = 64;

/// One profile's form of a schema, built on first use.
type ProfileSlot =
    OnceLock<Result<(Value, Vec<crate::profiles::Relaxation>), Vec<crate::profiles::Refusal>>>;

/// The JSON Schema (Draft 2020-12) of one Rust type at one boundary, with its compiled
/// validator and, for strict outputs, the provider structured-output format.
///
/// A `BoundarySchema` is built once per type and direction and then shared: the derives keep
/// it in a `static` (generic types: in a process-wide map keyed by `TypeId`), so every access
/// after the first is a pointer read that allocates nothing.
///
/// ```
/// use agentio_core::{AgentInput, BoundarySchema, Direction};
/// use serde_json::json;
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
/// struct Ping { count: u8 }
///
/// let schema: &'static BoundarySchema = Ping::input_boundary();
/// assert!(std::ptr::eq(schema, Ping::input_boundary()));
/// assert!(schema.validate(&json!({ "count": 3 })).is_ok());
/// let err = schema.validate(&json!({ "count": 300 })).unwrap_err();
/// assert_eq!(err.violations()[0].pointer, "/count");
/// ```
pub struct BoundarySchema {
    direction: Direction,
    type_name: &'static str,
    schema: Value,
    validator: Result<jsonschema::Validator, String>,
    strict: Option<Result<Value, StrictModeError>>,
    /// Each profile's form, built on first use and kept ([`crate::profiles`]).
    profiles: Box<[ProfileSlot; 7]>,
    /// What serde does not enforce, for types whose shape is known ([`crate::residual`]).
    residual: Option<Residual>,
    /// Outputs of a known shape: the schema with every derived struct closed.
    closed: Option<Value>,
    /// The type's cross-field rules ([`crate::rules`]), run on a value the schema accepts.
    rules: Option<fn(&Value) -> Vec<Violation>>,
    /// The longest JSON text written for this boundary so far
    /// ([`Self::__encode_typed_json`]): the next text's buffer starts that large, so writing
    /// it does not grow the buffer again and again.
    text_len: std::sync::atomic::AtomicUsize,
}

/// The residual check of a boundary whose type's shape is known.
///
/// One per boundary, built once and kept for the process: the variants' sizes differ, and
/// boxing the large one would only add a pointer to follow on every check.
#[allow(clippy::large_enum_variant)]
enum Residual {
    /// serde enforces the whole schema.
    Nothing,
    /// This much is left to check.
    Check {
        schema: Value,
        validator: jsonschema::Validator,
        /// The residual has no `$ref`, so validating it descends no deeper than the schema
        /// itself, whatever the value's depth: an encoded output needs no depth check.
        bounded: bool,
        /// The residual compiled for the common keywords, when it uses no other.
        fast: Option<crate::residual::FastCheck>,
    },
}

impl BoundarySchema {
    /// Generates and compiles the schema of `T` for `direction`.
    ///
    /// `strict_name` is `Some(name)` for types marked `#[agent(strict)]`: the strict
    /// structured-output format is then derived too, under that name. Never panics: a schema
    /// that cannot compile is kept as an error and reported as `internal` by [`Self::validate`].
    ///
    /// ```
    /// use agentio_core::{BoundarySchema, Direction};
    /// use serde_json::json;
    ///
    /// #[derive(schemars::JsonSchema)]
    /// struct Reply { answer: String }
    ///
    /// let boundary = BoundarySchema::build::<Reply>(Direction::Output, None);
    /// assert_eq!(boundary.direction(), Direction::Output);
    /// assert!(boundary.validate(&json!({ "answer": "42" })).is_ok());
    /// let err = boundary.validate(&json!({})).unwrap_err();
    /// assert_eq!(err.code().as_str(), "output_invalid");
    /// // Not marked strict: no structured-output format.
    /// assert!(boundary.strict_format().is_none());
    /// ```
    pub fn build<T: JsonSchema + ?Sized>(direction: Direction, strict_name: Option<&str>) -> Self {
        Self::__build_erased(
            type_name::<T>(),
            <T as IsJsonSchema>::__root_schema,
            direction,
            strict_name,
            None,
        )
    }

    /// A boundary built past the one step that needs its type: the root schema, generated by
    /// `root` with the settings it is given; with what serde enforces of the type (`shape`,
    /// which the derives pass), the boundary keeps a residual check
    /// ([`Self::residual_schema`]). Every boundary type instantiates its generic callers in
    /// its own crate, so the rest (schema generation, residual, compilation of the
    /// validators) is compiled here once instead of there once per type.
    #[doc(hidden)]
    pub fn __build_erased(
        type_name: &'static str,
        root: fn(SchemaSettings) -> Value,
        direction: Direction,
        strict_name: Option<&str>,
        shape: Option<crate::residual::Shape>,
    ) -> Self {
        let settings = || match direction {
            Direction::Input => SchemaSettings::draft2020_12().for_deserialize(),
            Direction::Output => SchemaSettings::draft2020_12().for_serialize(),
        };
        let schema = root(settings());
        let closed = match (&shape, direction) {
            (Some(shape), Direction::Output) => {
                crate::residual::closed_schema(&schema, shape, &mut settings().into_generator())
            }
            _ => None,
        };
        let residual = shape.and_then(|shape| {
            let schema = crate::residual::residual_schema(
                &schema,
                &shape,
                direction == Direction::Input,
                &mut settings().into_generator(),
            )?;
            if schema == Value::Bool(true) {
                return Some(Residual::Nothing);
            }
            // A residual that does not compile (it always should) only loses the fast path.
            let validator = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&schema)
                .ok()?;
            let bounded = !schema.to_string().contains("\"$ref\"");
            let fast = crate::residual::FastCheck::compile(&schema);
            Some(Residual::Check {
                schema,
                validator,
                bounded,
                fast,
            })
        });
        let mut built = Self::from_schema(
            type_name,
            direction,
            schema,
            strict_name.map(|name| {
                // A provider fills the strict format and the runtime *deserializes* what it wrote,
                // so the strict form starts from the deserialize contract whatever the direction.
                let accepted = root(SchemaSettings::draft2020_12().for_deserialize());
                // It must also accept what the type itself writes: a property its own output
                // may leave out (`skip_serializing_if`) cannot be required, and strict mode
                // requires every property.
                let written = root(SchemaSettings::draft2020_12().for_serialize());
                if let Some(pointer) = strict::omittable_properties(&written).into_iter().next() {
                    return Err(StrictModeError {
                        schema_pointer: pointer,
                        reason: "the type's own output may leave this property out (`skip_serializing_if`?), and strict mode requires every property".into(),
                    });
                }
                strict::structured_output_format(name, accepted)
            }),
        );
        if built.validator.is_ok() {
            built.residual = residual;
            built.closed = closed;
        }
        built
    }

    /// Wraps a schema that was not generated from a Rust type (a hand-written or loaded
    /// schema). `type_name` names it in error messages.
    ///
    /// ```
    /// use agentio_core::{BoundarySchema, Direction};
    /// use serde_json::json;
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": { "limit": { "type": "integer", "minimum": 1, "maximum": 100 } },
    ///     "required": ["limit"]
    /// });
    /// let boundary = BoundarySchema::from_value("SearchArgs", Direction::Input, schema);
    /// assert!(boundary.compile_error().is_none());
    /// assert!(boundary.validate(&json!({ "limit": 10 })).is_ok());
    /// let err = boundary.validate(&json!({ "limit": 0 })).unwrap_err();
    /// assert_eq!(err.code().as_str(), "input_invalid");
    /// assert_eq!((err.violations()[0].pointer.as_str(), err.violations()[0].keyword.as_str()), ("/limit", "minimum"));
    /// ```
    pub fn from_value(type_name: &'static str, direction: Direction, schema: Value) -> Self {
        Self::from_schema(type_name, direction, schema, None)
    }

    /// Like [`Self::from_value`], with documents that `$ref`s in `schema` may name, each under
    /// its address. Nothing is ever fetched: a `$ref` to any other address fails to compile.
    ///
    /// ```
    /// use agentio_core::{BoundarySchema, Direction};
    /// use serde_json::json;
    ///
    /// let money = json!({ "type": "object", "required": ["cents"], "properties": { "cents": { "type": "integer" } } });
    /// let schema = json!({ "$ref": "https://example.com/money.json" });
    /// let boundary = BoundarySchema::from_value_with_resources(
    ///     "Price", Direction::Output, schema.clone(),
    ///     vec![("https://example.com/money.json".into(), money)],
    /// );
    /// assert!(boundary.validate(&json!({ "cents": 250 })).is_ok());
    /// assert!(boundary.validate(&json!({ "cents": "2.50" })).is_err());
    /// // Without the document, the reference is not fetched: the schema does not compile.
    /// let alone = BoundarySchema::from_value("Price", Direction::Output, schema);
    /// assert!(alone.compile_error().is_some());
    /// ```
    pub fn from_value_with_resources(
        type_name: &'static str,
        direction: Direction,
        schema: Value,
        resources: Vec<(String, Value)>,
    ) -> Self {
        let registry = jsonschema::Registry::new()
            .extend(resources)
            .and_then(jsonschema::RegistryBuilder::prepare)
            .map_err(|err| err.to_string());
        let validator = registry.and_then(|registry| {
            jsonschema::draft202012::options()
                .should_validate_formats(true)
                .with_registry(&registry)
                .build(&schema)
                .map_err(|err| err.to_string())
        });
        BoundarySchema {
            direction,
            type_name,
            schema,
            validator,
            strict: None,
            profiles: Default::default(),
            residual: None,
            closed: None,
            rules: None,
            text_len: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Adds the type's cross-field rules: [`Self::validate`] runs them on every value the
    /// schema accepts. The derives call it for `#[agent(validate = ...)]`.
    #[doc(hidden)]
    #[must_use]
    pub fn __with_rules(mut self, rules: fn(&Value) -> Vec<Violation>) -> Self {
        self.rules = Some(rules);
        self
    }

    /// The errors of the type's cross-field rules for a value the schema accepts, as the
    /// error [`Self::validate`] gives.
    #[doc(hidden)]
    pub fn __rule_error(&self, errors: Vec<Violation>) -> Result<(), SchemaError> {
        if errors.is_empty() {
            Ok(())
        } else {
            Err(self.violation_error(errors))
        }
    }

    /// Whether the schema compiled; when it did not, the reason.
    ///
    /// ```
    /// use agentio_core::{BoundarySchema, Direction};
    /// use serde_json::json;
    ///
    /// let good = BoundarySchema::from_value("Good", Direction::Input, json!({ "type": "string" }));
    /// assert_eq!(good.compile_error(), None);
    /// let bad = BoundarySchema::from_value("Bad", Direction::Input, json!({ "type": 12 }));
    /// assert!(bad.compile_error().is_some());
    /// // Never a panic: validating against it is an `internal` error.
    /// assert_eq!(bad.validate(&json!("x")).unwrap_err().code().as_str(), "internal");
    /// ```
    pub fn compile_error(&self) -> Option<&str> {
        self.validator.as_ref().err().map(String::as_str)
    }

    fn from_schema(
        type_name: &'static str,
        direction: Direction,
        schema: Value,
        strict: Option<Result<Value, StrictModeError>>,
    ) -> Self {
        let validator = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|err| err.to_string());
        BoundarySchema {
            direction,
            type_name,
            schema,
            validator,
            strict,
            profiles: Default::default(),
            residual: None,
            closed: None,
            rules: None,
            text_len: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// This schema in a client's profile ([`crate::profiles::apply`]), built on first use and
    /// kept: a type's or a contract's schema is rewritten once per profile.
    ///
    /// ```
    /// use agentio_core::{AgentInput, profiles::Profile};
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// struct Ask { q: String, limit: Option<u8> }
    /// let gemini = Ask::input_boundary().profile(Profile::Gemini).unwrap();
    /// assert_eq!(gemini["properties"]["limit"]["nullable"], true);
    /// assert!(std::ptr::eq(gemini, Ask::input_boundary().profile(Profile::Gemini).unwrap()));
    /// ```
    pub fn profile(
        &self,
        profile: crate::profiles::Profile,
    ) -> Result<&Value, &[crate::profiles::Refusal]> {
        self.profiled(profile).map(|(schema, _)| schema)
    }

    /// What this schema's form in `profile` leaves out for the client to be told (each
    /// keyword that narrows what is valid, with its pointer; the boundary still checks it), or
    /// why there is no such form. Built with [`Self::profile`], once.
    ///
    /// ```
    /// use agentio_core::{AgentInput, profiles::Profile};
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// struct Ask {
    ///     #[schemars(length(min = 3))]
    ///     q: String,
    /// }
    /// let relaxed = Ask::input_boundary().relaxations(Profile::OpenAiStrict).unwrap();
    /// assert_eq!((relaxed[0].pointer.as_str(), relaxed[0].keyword.as_str()), ("/properties/q", "minLength"));
    /// assert!(Ask::input_boundary().relaxations(Profile::Mcp).unwrap().is_empty());
    /// ```
    pub fn relaxations(
        &self,
        profile: crate::profiles::Profile,
    ) -> Result<&[crate::profiles::Relaxation], &[crate::profiles::Refusal]> {
        self.profiled(profile)
            .map(|(_, relaxed)| relaxed.as_slice())
    }

    fn profiled(
        &self,
        profile: crate::profiles::Profile,
    ) -> Result<&(Value, Vec<crate::profiles::Relaxation>), &[crate::profiles::Refusal]> {
        self.profiles[profile.index()]
            .get_or_init(|| crate::profiles::apply_reporting(profile, &self.schema))
            .as_ref()
            .map_err(Vec::as_slice)
    }

    /// The process-wide schema of `T` for `direction`, built on first use.
    ///
    /// Keyed by `TypeId`, so each instantiation of a generic type has its own. Later calls take
    /// a read lock and a hash lookup, and allocate nothing.
    ///
    /// ```
    /// use agentio_core::{BoundarySchema, Direction};
    ///
    /// #[derive(schemars::JsonSchema)]
    /// struct Page<T> { items: Vec<T> }
    ///
    /// let strings = BoundarySchema::cached::<Page<String>>(Direction::Input, None);
    /// assert!(std::ptr::eq(strings, BoundarySchema::cached::<Page<String>>(Direction::Input, None)));
    /// // Another instantiation, or the other direction, is another schema.
    /// let numbers = BoundarySchema::cached::<Page<u32>>(Direction::Input, None);
    /// assert!(!std::ptr::eq(strings, numbers));
    /// assert!(!std::ptr::eq(strings, BoundarySchema::cached::<Page<String>>(Direction::Output, None)));
    /// assert!(numbers.validate(&serde_json::json!({ "items": ["a"] })).is_err());
    /// ```
    pub fn cached<T: IsJsonSchema + ?Sized + 'static>(
        direction: Direction,
        strict_name: Option<&str>,
    ) -> &'static BoundarySchema {
        Self::cached_with::<T>(direction, strict_name, None)
    }

    /// [`Self::cached`], built with cross-field rules ([`crate::rules`]).
    #[doc(hidden)]
    pub fn cached_with<T: IsJsonSchema + ?Sized + 'static>(
        direction: Direction,
        strict_name: Option<&str>,
        rules: Option<fn(&Value) -> Vec<Violation>>,
    ) -> &'static BoundarySchema {
        Self::cached_erased(
            TypeId::of::<T>(),
            type_name::<T>(),
            T::__root_schema,
            direction,
            strict_name,
            rules,
        )
    }

    /// [`Self::cached_with`] past the steps that need `T` (its `TypeId`, its name and its root
    /// schema), so the cache's code is compiled here once and not in every crate once per
    /// type.
    fn cached_erased(
        type_id: TypeId,
        type_name: &'static str,
        root: fn(SchemaSettings) -> Value,
        direction: Direction,
        strict_name: Option<&str>,
        rules: Option<fn(&Value) -> Vec<Violation>>,
    ) -> &'static BoundarySchema {
        type Cache = RwLock<HashMap<(TypeId, Direction), &'static BoundarySchema>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let key = (type_id, direction);
        // A poisoned lock only means another thread panicked while holding it; the map is
        // still consistent (entries are inserted whole), so keep using it.
        if let Some(found) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return found;
        }
        // Build outside the lock: generation may be slow, and it must not block readers.
        let mut built = Self::__build_erased(type_name, root, direction, strict_name, None);
        built.rules = rules;
        let mut map = cache.write().unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_insert_with(|| Box::leak(Box::new(built)))
    }

    /// The JSON Schema, as generated.
    ///
    /// ```
    /// use agentio_core::AgentInput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
    /// struct Ask { question: String }
    ///
    /// let schema = Ask::input_boundary().schema();
    /// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    /// assert_eq!(schema["required"], serde_json::json!(["question"]));
    /// ```
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The Rust type the schema describes.
    ///
    /// ```
    /// use agentio_core::AgentOutput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// struct Answer { text: String }
    ///
    /// assert!(Answer::output_boundary().type_name().ends_with("Answer"));
    /// ```
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The side of the boundary the schema describes: it decides the error code of a
    /// failed check (`input_invalid` or `output_invalid`).
    ///
    /// ```
    /// use agentio_core::{AgentInput, AgentOutput, Direction};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Note { text: String }
    ///
    /// assert_eq!(Note::input_boundary().direction(), Direction::Input);
    /// assert_eq!(Note::output_boundary().direction(), Direction::Output);
    /// ```
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// Every place where `value` breaks the schema (at most [`MAX_VIOLATIONS`]); empty when it
    /// conforms.
    ///
    /// ```
    /// use agentio_core::{BoundarySchema, Direction};
    /// use serde_json::json;
    ///
    /// let boundary = BoundarySchema::from_value("Point", Direction::Input, json!({
    ///     "type": "object",
    ///     "properties": { "x": { "type": "number" }, "y": { "type": "number" } },
    ///     "required": ["x", "y"]
    /// }));
    /// let found = boundary.violations(&json!({ "x": "1" })).unwrap();
    /// let mut places: Vec<_> = found.iter().map(|v| (v.pointer.as_str(), v.keyword.as_str())).collect();
    /// places.sort();
    /// // A missing property is reported where it would be.
    /// assert_eq!(places, [("/x", "type"), ("/y", "required")]);
    /// assert!(boundary.violations(&json!({ "x": 1, "y": 2 })).unwrap().is_empty());
    /// ```
    pub fn violations(&self, value: &Value) -> Result<Vec<Violation>, SchemaError> {
        let validator = self.validator()?;
        if let Err(too_deep) = crate::limits::check_depth(value, crate::limits::MAX_DEPTH) {
            return Ok(vec![too_deep]);
        }
        let mut collected = Collected::default();
        for error in validator.iter_errors(value) {
            push_violations(&error, &mut collected);
            if collected.omitted >= MAX_OMITTED_COUNTED {
                break;
            }
        }
        let Collected {
            mut violations,
            omitted,
        } = collected;
        if omitted > 0 {
            let message = if omitted >= MAX_OMITTED_COUNTED {
                format!("at least {omitted} more violation(s) not listed")
            } else {
                format!("{omitted} more violation(s) not listed")
            };
            violations.push(Violation {
                pointer: String::new(),
                keyword: "limit".into(),
                message,
            });
        }
        Ok(violations)
    }

    /// Checks `value`; on failure the error is `input_invalid` or `output_invalid` (by the
    /// schema's [`Direction`]) and lists every violation with its JSON pointer.
    ///
    /// A value nested deeper than [`crate::limits::MAX_DEPTH`] is refused before it is
    /// walked, with one `depth` violation; at most [`MAX_VIOLATIONS`] violations are listed,
    /// each pointer and message bounded in size, and the rest counted.
    ///
    /// ```
    /// use agentio_core::AgentInput;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
    /// struct Order {
    ///     #[schemars(range(min = 1))]
    ///     quantity: u32,
    ///     sku: String,
    /// }
    ///
    /// let boundary = Order::input_boundary();
    /// assert!(boundary.validate(&json!({ "quantity": 2, "sku": "A-1" })).is_ok());
    /// let err = boundary.validate(&json!({ "quantity": 0, "sku": 7 })).unwrap_err();
    /// assert_eq!(err.code().as_str(), "input_invalid");
    /// let mut pointers: Vec<_> = err.violations().iter().map(|v| v.pointer.as_str()).collect();
    /// pointers.sort();
    /// assert_eq!(pointers, ["/quantity", "/sku"]);
    /// ```
    pub fn validate(&self, value: &Value) -> Result<(), SchemaError> {
        let validator = self.validator()?;
        if let Err(too_deep) = crate::limits::check_depth(value, crate::limits::MAX_DEPTH) {
            return Err(self.violation_error(vec![too_deep]));
        }
        if validator.is_valid(value) {
            return match self.rules {
                Some(rules) => self.__rule_error(rules(value)),
                None => Ok(()),
            };
        }
        let violations = self.violations(value)?;
        Err(self.violation_error(violations))
    }

    /// The error [`Self::validate`] reports for these violations: for a host's own checks, so
    /// that they fail the way the schema's do.
    ///
    /// ```
    /// use agentio_core::{AgentInput, Violation};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
    /// struct Transfer { from: String, to: String }
    ///
    /// let err = Transfer::input_boundary().violation_error(vec![Violation {
    ///     pointer: "/to".into(),
    ///     keyword: "distinct".into(),
    ///     message: "`to` must differ from `from`".into(),
    /// }]);
    /// assert_eq!(err.code().as_str(), "input_invalid");
    /// assert_eq!(err.violations()[0].keyword, "distinct");
    /// ```
    pub fn violation_error(&self, violations: Vec<Violation>) -> SchemaError {
        let noun = self.direction.noun();
        let short_name = short_type_name(self.type_name);
        let listed = violations
            .iter()
            .map(Violation::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        SchemaError::new(
            self.direction.error_code(),
            format!("{noun} does not match the schema of `{short_name}`: {listed}"),
        )
        .with_violations(violations)
    }

    /// What is left to check of this schema once serde has decoded a value into its type (an
    /// input) or encoded one from it (an output): `None` when the type's shape is not known (a
    /// hand-written schema, a generic type) and the full schema is checked; `Some(true)` when
    /// serde enforces all of it. See the [`residual`](crate::residual) module.
    ///
    /// ```
    /// use agentio_core::{AgentInput, AgentOutput};
    /// use serde_json::json;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput, AgentOutput)]
    /// struct Search {
    ///     #[schemars(range(min = 1, max = 100))]
    ///     limit: u32,
    ///     tags: Vec<String>,
    /// }
    /// // serde checks `tags` (and that `limit` is a `u32`); the range is left to the schema.
    /// assert_eq!(
    ///     Search::input_boundary().residual_schema(),
    ///     Some(&json!({
    ///         "type": "object",
    ///         "properties": { "limit": { "type": "integer", "format": "uint32", "minimum": 1, "maximum": 100 } },
    ///         "$schema": "https://json-schema.org/draft/2020-12/schema"
    ///     })),
    /// );
    /// ```
    pub fn residual_schema(&self) -> Option<&Value> {
        const NOTHING: &Value = &Value::Bool(true);
        match self.residual.as_ref()? {
            Residual::Nothing => Some(NOTHING),
            Residual::Check { schema, .. } => Some(schema),
        }
    }

    /// What the type can actually produce, as a schema: for an output whose type's shape is
    /// known, the output schema with `additionalProperties: false` on every object a derived
    /// `Serialize` writes (it writes its own fields and nothing more); otherwise the schema
    /// itself. Composition proofs ([`crate::compat`]) use it for producers, so that a consumer's
    /// extra optional field is not refused for a property the producer can never write.
    ///
    /// ```
    /// use agentio_core::AgentOutput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// struct Hits { hits: Vec<String> }
    /// let closed = Hits::output_boundary().produced_schema();
    /// assert_eq!(closed["additionalProperties"], false);
    /// assert!(Hits::output_boundary().schema().get("additionalProperties").is_none());
    /// ```
    pub fn produced_schema(&self) -> &Value {
        self.closed.as_ref().unwrap_or(&self.schema)
    }

    /// Whether serde's own encoding needs no check at all (the residual is `true`).
    pub(crate) fn needs_no_check(&self) -> bool {
        self.validator.is_ok() && matches!(self.residual, Some(Residual::Nothing))
    }

    /// A buffer for this boundary's next JSON text, as large as the longest one so far (at
    /// least 128 bytes, at most 64 KiB: one huge output does not make every later one
    /// reserve that much).
    pub(crate) fn text_buffer(&self) -> Vec<u8> {
        let len = self.text_len.load(std::sync::atomic::Ordering::Relaxed);
        Vec::with_capacity(len.clamp(128, 64 << 10))
    }

    /// Notes the length of a JSON text written for this boundary (see [`Self::text_buffer`]).
    pub(crate) fn wrote_text(&self, len: usize) {
        self.text_len
            .fetch_max(len, std::sync::atomic::Ordering::Relaxed);
    }

    /// The residual compiled for checking without the general validator, when there is one and
    /// the schema compiled.
    pub(crate) fn fast_check(&self) -> Option<&crate::residual::FastCheck> {
        match (&self.validator, &self.residual) {
            (Ok(_), Some(Residual::Check { fast, .. })) => fast.as_ref(),
            _ => None,
        }
    }

    /// Whether the residual is checked without the general validator (it uses only the common
    /// keywords). For tests and benchmarks.
    #[doc(hidden)]
    pub fn __residual_is_fast(&self) -> bool {
        matches!(&self.residual, Some(Residual::Check { fast: Some(_), .. }))
    }

    /// Checks a value that serde has just decoded into, or encoded from, this schema's type:
    /// only the residual when there is one, the full schema otherwise. On failure the error is
    /// the one [`Self::validate`] gives.
    ///
    /// `depth_checked`: the caller has already refused values nested too deep.
    pub(crate) fn validate_typed(
        &self,
        value: &Value,
        depth_checked: bool,
    ) -> Result<(), SchemaError> {
        let passed = match &self.residual {
            Some(Residual::Nothing) => return Ok(()),
            Some(Residual::Check {
                validator,
                bounded,
                fast,
                ..
            }) => match fast.as_ref().and_then(|fast| fast.check(value)) {
                Some(passed) => passed,
                None => {
                    (depth_checked
                        || *bounded
                        || crate::limits::check_depth(value, crate::limits::MAX_DEPTH).is_ok())
                        && validator.is_valid(value)
                }
            },
            None => return self.validate(value),
        };
        if passed {
            return Ok(());
        }
        match self.validate(value) {
            Err(err) => Err(err),
            // Unreachable while the residual is part of the schema; fail closed if it is not.
            Ok(()) => Err(self.violation_error(vec![Violation {
                pointer: String::new(),
                keyword: "residual".into(),
                message: "the value breaks a constraint of the schema".into(),
            }])),
        }
    }

    /// The provider structured-output description (`{"type": "json_schema", ...}`) for
    /// types marked strict whose schema strict mode can express; `None` otherwise.
    ///
    /// ```
    /// use agentio_core::AgentOutput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// #[agent(strict)]
    /// struct Verdict { passed: bool, reason: String }
    ///
    /// let format = Verdict::output_boundary().structured_output_format().unwrap();
    /// assert_eq!(format["type"], "json_schema");
    /// assert_eq!(format["json_schema"]["strict"], true);
    /// ```
    pub fn structured_output_format(&self) -> Option<&Value> {
        self.strict.as_ref().and_then(|s| s.as_ref().ok())
    }

    /// For strict types: the structured-output format, or why strict mode cannot express the
    /// schema (a nested type holding a map, say). `None` for types not marked strict.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use agentio_core::AgentOutput;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    /// struct Counts { by_name: BTreeMap<String, u32> }
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
    /// #[agent(strict)]
    /// struct Tally { counts: Counts }
    ///
    /// // A map's open keys are beyond strict mode. A map in the type itself is a compile
    /// // error; one in a nested type is found when the schema is built: the reason, not a
    /// // format.
    /// let refused = Tally::output_boundary().strict_format().unwrap();
    /// assert!(refused.is_err());
    /// assert!(Tally::output_boundary().structured_output_format().is_none());
    /// ```
    pub fn strict_format(&self) -> Option<Result<&Value, &StrictModeError>> {
        self.strict.as_ref().map(Result::as_ref)
    }

    pub(crate) fn validator(&self) -> Result<&jsonschema::Validator, SchemaError> {
        self.validator.as_ref().map_err(|reason| {
            SchemaError::new(
                SchemaErrorCode::Internal,
                format!(
                    "the {} schema of `{}` cannot be compiled",
                    self.direction.noun(),
                    short_type_name(self.type_name)
                ),
            )
            .with_detail(reason.clone())
        })
    }
}

impl fmt::Debug for BoundarySchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundarySchema")
            .field("type_name", &self.type_name)
            .field("direction", &self.direction)
            .field("compiles", &self.validator.is_ok())
            .field("strict", &self.strict.is_some())
            .finish_non_exhaustive()
    }
}

fn short_type_name(full: &str) -> String {
    // `alloc::vec::Vec<my_crate::Reading>` -> `Vec<Reading>`: module paths add noise, not meaning.
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    for ch in full.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == ':' {
            segment.push(ch);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
            segment.clear();
            out.push(ch);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
    out
}

fn truncate(mut message: String) -> String {
    if message.chars().count() > MAX_MESSAGE_CHARS {
        let cut = message
            .char_indices()
            .nth(MAX_MESSAGE_CHARS)
            .map_or(message.len(), |(i, _)| i);
        message.truncate(cut);
        message.push('…');
    }
    message
}

/// The longest prefix of `text` of at most `max` bytes, cut on a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[derive(Default)]
struct Collected {
    violations: Vec<Violation>,
    omitted: usize,
}

impl Collected {
    /// Adds a violation, formatting it only when it will be listed: past the cap, it is only
    /// counted.
    fn push<'k>(&mut self, make: impl FnOnce() -> (String, &'k str, String)) {
        if self.violations.len() < MAX_VIOLATIONS {
            let (pointer, keyword, message) = make();
            self.violations.push(Violation {
                pointer: crate::limits::clip_pointer(pointer),
                keyword: keyword.to_owned(),
                message: truncate(message),
            });
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }
}

fn push_violations(error: &jsonschema::ValidationError<'_>, out: &mut Collected) {
    // A pointer longer than the bound is cut anyway; do not copy more than that.
    let at = || {
        prefix(
            error.instance_path().as_str(),
            crate::limits::MAX_POINTER_BYTES + 1,
        )
        .to_owned()
    };
    let name = |name: &str| crate::limits::bounded_display(&name, MAX_NAME_CHARS);
    match error.kind() {
        // Point at the property that is missing, not at the object that lacks it.
        ValidationErrorKind::Required { property } => out.push(|| {
            let property = property.as_str().map_or_else(
                || crate::limits::bounded_display(property, MAX_NAME_CHARS),
                name,
            );
            (
                format!("{}/{}", at(), crate::pointer::escape_token(&property)),
                "required",
                format!("required property `{property}` is missing"),
            )
        }),
        // One violation per unexpected property, each pointing at that property.
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let keyword = error.kind().keyword();
            for unexpected in unexpected {
                if out.omitted >= MAX_OMITTED_COUNTED {
                    break;
                }
                out.push(|| {
                    let shown = name(unexpected);
                    let mut pointer = at();
                    pointer.push('/');
                    pointer.push_str(&crate::pointer::escape_token(prefix(
                        unexpected,
                        crate::limits::MAX_POINTER_BYTES,
                    )));
                    (
                        pointer,
                        keyword,
                        format!("property `{shown}` is not allowed here"),
                    )
                });
            }
        }
        kind => out.push(|| {
            (
                at(),
                kind.keyword(),
                crate::limits::bounded_display(error, MAX_MESSAGE_CHARS),
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_buffer_starts_as_large_as_the_longest_text_within_bounds() {
        let boundary = BoundarySchema::from_value(
            "Any",
            Direction::Output,
            serde_json::json!({ "type": "object" }),
        );
        assert_eq!(boundary.text_buffer().capacity(), 128);
        boundary.wrote_text(1000);
        assert!(boundary.text_buffer().capacity() >= 1000);
        // A shorter text does not shrink it; a huge one makes it no larger than 64 KiB.
        boundary.wrote_text(10);
        assert!(boundary.text_buffer().capacity() >= 1000);
        boundary.wrote_text(10 << 20);
        let capacity = boundary.text_buffer().capacity();
        assert!((64 << 10..2 * (64 << 10)).contains(&capacity), "{capacity}");
    }

    #[test]
    fn a_message_is_cut_only_past_its_cap() {
        let at_cap = "é".repeat(MAX_MESSAGE_CHARS);
        assert_eq!(truncate(at_cap.clone()), at_cap);
        let over = format!("{at_cap}x");
        let cut = truncate(over);
        assert_eq!(cut.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(cut.ends_with("é…"), "{cut}");
    }

    #[test]
    fn a_prefix_is_cut_on_a_character_boundary() {
        // `é` takes bytes 1 and 2: a cut at 2 falls inside it and moves back to 1.
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("aé", 3), "aé");
        assert_eq!(prefix("abc", 10), "abc");
    }

    #[test]
    fn a_pointer_past_the_bound_is_reported_clipped_with_its_mark() {
        let boundary = BoundarySchema::from_value(
            "Map",
            Direction::Input,
            serde_json::json!({ "type": "object", "additionalProperties": { "type": "integer" } }),
        );
        let key = "k".repeat(2 * crate::limits::MAX_POINTER_BYTES);
        let err = boundary
            .validate(&serde_json::json!({ key.clone(): "text" }))
            .unwrap_err();
        let pointer = &err.violations()[0].pointer;
        assert_eq!(pointer, &crate::limits::clip_pointer(format!("/{key}")));
        assert!(pointer.ends_with('…'), "{pointer}");
    }

    #[test]
    fn short_type_names_drop_module_paths() {
        assert_eq!(
            short_type_name("alloc::vec::Vec<my::Reading>"),
            "Vec<Reading>"
        );
        assert_eq!(short_type_name("u8"), "u8");
        assert_eq!(
            short_type_name("std::collections::HashMap<alloc::string::String, a::b::C>"),
            "HashMap<String, C>"
        );
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(crate::pointer::escape_token("a/b~c"), "a~1b~0c");
    }

    #[test]
    fn long_messages_are_cut_on_a_char_boundary() {
        let cut = truncate("é".repeat(500));
        assert_eq!(cut.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
