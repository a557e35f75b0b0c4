#![doc = include_str!("../README.md")]
//!
//! # Decisions where the specifications are silent or disagree
//!
//! - **Associated-type defaults** are unstable, so `AgentCore` has plain associated types and
//!   [`agent_core`] fills in `TurnInput` / `TurnOutput` when an impl leaves them out.
//! - **Input and output schemas** use schemars' deserialize and serialize contracts: an input
//!   field with `#[serde(default)]` is optional, and an output field is required unless
//!   `skip_serializing_if` may drop it. Schemas are Draft 2020-12.
//! - **Inputs are JSON objects** (AIP-14 and AIP-16 both describe `inputs` as an object). The
//!   derive accepts structs with named fields and internally *or adjacently* tagged enums (both
//!   always serialize to objects); tuple and unit structs, externally tagged, untagged and
//!   `transparent` types are compile errors.
//! - **`format` is validated** (`date-time`, `uuid`, `email`, ...): serde would refuse such a
//!   value anyway, and refusing it at the boundary names the place.
//! - **Violations point at the field**: a missing required property is reported at the pointer
//!   of that property, and an unknown property at its own pointer, not at the parent object.
//! - **Error codes** are AIP-14's standard codes plus `output_invalid`, `context_invalid` and
//!   `approval_denied` for boundaries AIP-14 does not name; violations travel in
//!   `error.cause.violations`, the envelope's free-form `cause`.
//! - **Strict outputs** follow OpenAI strict structured outputs; see [`StrictModeError`] and
//!   the `strict` module notes on [`AgentOutput::structured_output_format`].
//! - **Property order is declaration order** (schemars `preserve_order`): providers generate
//!   strict structured outputs in schema order, so a `reasoning` field declared before
//!   `answer` is written first.
//! - **A panic in a core** is contained and reported as `internal`; the core stays in the
//!   runtime and its next turn runs normally.
//! - **Residual validation** ([`residual`]): a typed boundary decodes with serde first and
//!   then checks only what serde does not enforce. Its promise is equivalence with the full
//!   path ("validate, then decode"): the same values accepted, the same errors reported. That
//!   is the property tested, rather than "decodes iff the schema accepts": serde is stricter
//!   than a schema in places (`3.0` for a `u8` passes `"type": "integer"` and fails serde),
//!   and both paths refuse such a value alike.
//! - **Composition** ([`compat`], [`skill`]): a chain is accepted only when every link is
//!   *proven*; a link the checker can neither prove nor refute is reported as
//!   [`skill::SkillProblem::Unproven`], beside the incompatible ones, so that a careful host
//!   decides. A typed producer is described by what it can produce (derived structs closed,
//!   [`BoundarySchema::produced_schema`]); the schema it advertises stays open.
//! - **The schema engine is its own crate** (`agentio-schema`), which knows nothing of agents:
//!   [`BoundarySchema`]'s checks return a [`SchemaError`], which becomes an [`AgentError`] with
//!   `?` or `From` (code, message, violations and detail kept), and whose code compares equal
//!   to the [`ErrorCode`] of its name. Everything else keeps the path it had in this crate.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

mod ceiling;
mod context;
mod core;
mod deadline;
mod error;
pub mod files;
mod future;
mod io;
pub mod limits;
mod runtime;
pub mod skill;
mod turn;

// The JSON Schema engine is its own crate (`agentio-schema`); its modules and types keep the
// paths they had here.
pub use agentio_schema::{
    BoundarySchema, Direction, MAX_VIOLATIONS, SchemaError, SchemaErrorCode, StrictModeError,
    Violation,
};
pub use agentio_schema::{bounds, compat, pointer, profiles, residual, rules};

#[doc(hidden)]
pub use crate::ceiling::Started as __Started;
pub use crate::context::{AgentContext, AgentEvent, EventLog, EventSink, ToolCall, ToolInvoker};
pub use crate::core::{AgentCore, ErasedAgentCore};
#[doc(hidden)]
pub use crate::deadline::Deadline as __Deadline;
pub use crate::error::{AgentError, ErrorCode, ok_envelope};
pub use crate::future::BoxFuture;
pub use crate::io::{AgentInput, AgentOutput};
#[doc(hidden)]
pub use crate::runtime::{__next_run_sequence, __run_id_text};
pub use crate::runtime::{AgentRuntime, contain_panics, new_run_id, panicked};
pub use crate::turn::{ChatMessage, Role, ToolCallRecord, TurnInput, TurnOutput};

// The macros are documented (and their examples tested) here, where users reach them:
// agentio-derive is a proc-macro crate, whose doctests would build this crate and its
// dependencies a second time, for the host.
/// Implements `agentio_core::AgentInput` for a type that also derives `Serialize`, `Deserialize`
/// and `JsonSchema`.
///
/// Compile-time checks: the type is a JSON object (a struct with named fields, or an
/// internally or adjacently tagged enum); a field serialized as `_workflowFsRoot` is an
/// `Option<FsRoot>` (recommended: `FsRoot::file(key)` gives a staged file's path),
/// `Option<PathBuf>` or `Option<String>`; a field that looks like that reserved name but is not
/// spelled like it is refused; a field marked as an MCP header
/// (`#[schemars(extend("x-mcp-header" = "Region"))]`, SEP-2243) names a header (an HTTP token,
/// one field a header, ignoring case), is a property of the input object (not in an enum
/// variant, not flattened) and is a string, an integer or a boolean (not an `Option`, a float,
/// a sequence or a map).
///
/// ```
/// use agentio_core::AgentInput;
/// use serde_json::json;
///
/// /// A question for the knowledge base.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentInput)]
/// #[serde(deny_unknown_fields)]
/// struct Ask {
///     /// What to look up.
///     question: String,
///     /// How many answers, 1 to 10.
///     #[schemars(range(min = 1, max = 10))]
///     limit: Option<u8>,
/// }
///
/// assert!(Ask::validate_input(&json!({ "question": "refunds?" })).is_ok());
/// let err = Ask::validate_input(&json!({ "question": 1, "limit": 50 })).unwrap_err();
/// let pointers: Vec<_> = err.violations().iter().map(|v| v.pointer.as_str()).collect();
/// assert_eq!(pointers, ["/question", "/limit"]);
/// assert_eq!(Ask::input_schema()["required"], json!(["question"]));
/// ```
///
/// Options, in `#[agent(...)]`: `crate = "path"` (where `agentio_core` is); `strict` (the input
/// must have an OpenAI strict form, for function calling with `strict: true`: the same rules as
/// a strict output, checked at compile time, so `ToolRegistry::export(Export::OpenAiChat {
/// strict: true })` cannot refuse it for its shape); `validate = path::to::function` (the
/// type's cross-field rules, a `fn(&Self, &mut agentio_core::rules::Rules)` run after the schema
/// wherever a value of the type is checked; see `agentio_core::rules`).
pub use agentio_derive::AgentInput;
/// Implements `agentio_core::AgentOutput` for a type that also derives `Serialize`, `Deserialize`
/// and `JsonSchema`.
///
/// Options, in `#[agent(...)]`: `crate = "path"`; `strict` (OpenAI strict structured outputs:
/// the type must be a struct with named fields, no field may be a map, a `serde_json::Value`,
/// a tuple or `#[serde(flatten)]`, and none may be left out by `skip_serializing_if`, since
/// strict mode requires every property); `name = "..."` (the structured-output name,
/// by default the type's name); `validate = path::to::function` (cross-field rules, as for
/// `AgentInput`: one function serves both directions).
///
/// ```
/// use agentio_core::AgentOutput;
/// use serde_json::json;
///
/// /// A verdict, in OpenAI's strict structured-output form too.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, AgentOutput)]
/// #[agent(strict, name = "verdict")]
/// struct Verdict {
///     approved: bool,
///     reason: Option<String>,
/// }
///
/// assert!(Verdict::validate_output(&json!({ "approved": true, "reason": null })).is_ok());
/// let format = Verdict::structured_output_format().expect("a strict output");
/// assert_eq!(format["json_schema"]["name"], "verdict");
/// assert_eq!(format["json_schema"]["schema"]["required"], json!(["approved", "reason"]));
/// ```
pub use agentio_derive::AgentOutput;
/// On an `impl AgentCore for T` block: adds `type Input = agentio_core::TurnInput;` and
/// `type Output = agentio_core::TurnOutput;` when the block leaves them out (associated-type
/// defaults are not stable Rust). Takes an optional `crate = "path"`.
///
/// ```
/// use agentio_core::{AgentContext, AgentCore, AgentError, AgentRuntime, TurnInput, TurnOutput, agent_core};
///
/// struct Echo;
///
/// #[agent_core]
/// impl AgentCore for Echo {
///     fn core_type(&self) -> &str { "echo" }
///
///     async fn run_turn(&mut self, input: TurnInput, _ctx: &mut AgentContext) -> Result<TurnOutput, AgentError> {
///         Ok(TurnOutput::new(format!("you said: {}", input.message)))
///     }
/// }
///
/// let mut runtime = AgentRuntime::new(Echo);
/// let out = pollster::block_on(runtime.run_turn(serde_json::json!({ "message": "hi" }))).unwrap();
/// assert_eq!(out["response"], "you said: hi");
/// ```
pub use agentio_derive::agent_core;
/// AIP-16 IO blocks for a struct or enum, an `impl` block (of a tool or a core) or a function:
///
/// ```text
/// #[define_io(
///     inputs = ReportInput,
///     outputs = ReportOutput,
///     inputs_files = { sales => { path = "data/sales.csv", mode = "ro", content_type = "text/csv" } },
///     outputs_files = { report => { path = "reports/<isoDate>/<runId>.md", mode = "rw" } },
///     max_input_bytes = 10485760, // optional: each staged input at most 10 MiB
/// )]
/// ```
///
/// Implements `agentio_core::files::DefinesIo` (on a function, for a generated `NameIo` struct; a
/// `#[tool]` on the same function is pointed at it; on an `impl TypedTool` block, the tool's
/// `file_contract()` returns it). Checked at compile time: keys are plain file names, paths
/// are workspace-relative without `..` and with only the AIP-16 tokens, modes are `ro`/`rw`,
/// an input type that declares files can receive `_workflowFsRoot`, and, when a `#[tool]` on
/// the same item is visible, each output file is covered by the tool's `mutates` (a declared
/// output file is a workspace mutation).
///
/// (`agentio_core::files::define_io_handle`, the function, is the run-time form: it builds the same
/// `IoHandle` from an `IoDefinition` value, for blocks known only at run time.)
///
/// ```
/// use agentio_core::{define_io, files::{DefinesIo, FsRoot}};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
/// struct Scan {
///     locale: String,
///     #[serde(rename = "_workflowFsRoot", default)]
///     root: Option<FsRoot>,
/// }
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
/// struct Text { text: String }
///
/// /// An OCR unit: reads an uploaded image, writes its text next to it.
/// #[define_io(
///     inputs = Scan,
///     outputs = Text,
///     inputs_files = { image => { path = "uploads/scan.png", content_type = "image/png" } },
///     outputs_files = { text => { path = "uploads/<isoDate>-<runId>.txt" } },
///     max_input_bytes = 10485760,
/// )]
/// struct Ocr;
///
/// let io = Ocr::io_handle();
/// assert!(io.inputs()["properties"]["_workflowFsRoot"].is_object());
/// assert_eq!(io.max_input_bytes(), Some(10_485_760));
/// assert_eq!(io.outputs_files()["text"].path, "uploads/<isoDate>-<runId>.txt");
/// ```
pub use agentio_derive::define_io;
/// serde's, schemars' and the agent derives on a struct or enum, with the paths they need: one
/// line in place of `#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]` plus
/// `#[serde(crate = "...")]` and `#[schemars(crate = "...")]`, which serde's and schemars'
/// derives need in a crate that reaches them only through the `agentio` facade.
///
/// - `#[io]`: `Serialize`, `Deserialize` and `JsonSchema` (a type nested in an input or output);
/// - `#[io(input)]`: and `AgentInput`; `#[io(output)]`: and `AgentOutput`; `#[io(input, output)]`:
///   both;
/// - `crate = "path"`: where `agentio_core` is, when it is renamed or re-exported.
///
/// A derive the item already lists is not added again, and a `crate = ...` it already gives is
/// kept. Put `#[io]` above the item's own `#[derive(...)]`, so that it sees them. Every other
/// attribute (`#[serde(...)]`, `#[schemars(...)]`, `#[agent(...)]`, doc comments) works as
/// with the derives written out.
///
/// ```
/// use agentio_core::{AgentInput, AgentOutput, io};
/// use serde_json::json;
///
/// /// A question for the knowledge base.
/// #[io(input)]
/// #[serde(deny_unknown_fields)]
/// struct Ask {
///     question: String,
///     #[schemars(range(min = 1, max = 10))]
///     limit: Option<u8>,
/// }
///
/// /// One hit (nested in the output: no agent derive of its own).
/// #[io]
/// #[derive(Debug, Clone)]
/// struct Hit { title: String }
///
/// #[io(output)]
/// #[agent(strict)]
/// struct Hits { hits: Vec<Hit> }
///
/// assert!(Ask::validate_input(&json!({ "question": "refunds?" })).is_ok());
/// assert!(Ask::validate_input(&json!({ "question": "refunds?", "limit": 50 })).is_err());
/// assert!(Hits::structured_output_format().is_some());
/// ```
pub use agentio_derive::io;

/// What the macros' expansions name. Not public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::sync::OnceLock;

    use crate::{AgentInput, AgentOutput, BoundarySchema, Direction};

    pub use crate::residual::{
        FieldShape, InputShape, OutputShape, Probe, ProbeInput, ProbeOpaqueInput,
        ProbeOpaqueOutput, ProbeOutput, Shape, StructShape,
    };
    use schemars::generate::SchemaSettings;

    /// What a derived type's boundary is built from: everything the build needs of the type,
    /// gathered by one small generic function per type ([`input_parts`] and the like), so
    /// that the build itself is compiled once, here and not in the user's crate per type.
    pub struct BoundaryParts {
        type_name: &'static str,
        root: fn(SchemaSettings) -> serde_json::Value,
        direction: Direction,
        shape: Option<fn() -> Shape>,
    }

    // The derives build through these, bounded by the trait being implemented, so a type
    // missing `JsonSchema` gets one error (at the impl) and not a second one in the body.

    // Four constructors, one per trait and per kind of type, each generic only over `T`:
    // written by a macro rather than through a shared generic helper, which would cost every
    // derived type one more instantiation in the user's crate.
    macro_rules! parts {
        ($($(#[$doc:meta])* $name:ident<$($bound:path),+>: $direction:ident, $shape:expr;)+) => {$(
            $(#[$doc])*
            pub fn $name<T: $($bound +)+>() -> BoundaryParts {
                BoundaryParts {
                    type_name: std::any::type_name::<T>(),
                    root: <T as crate::bounds::IsJsonSchema>::__root_schema,
                    direction: Direction::$direction,
                    shape: $shape,
                }
            }
        )+};
    }

    parts! {
        /// The parts of `T`'s input boundary, with what serde enforces of it.
        input_parts<AgentInput, InputShape>: Input, Some(<T as InputShape>::input_shape);
        /// The parts of `T`'s output boundary, with what serde enforces of it.
        output_parts<AgentOutput, OutputShape>: Output, Some(<T as OutputShape>::output_shape);
        /// The parts of `T`'s input boundary, for a type whose serde view the derive does not
        /// read (an enum, a `flatten`ed field): validated in full.
        input_parts_opaque<AgentInput>: Input, None;
        /// [`input_parts_opaque`] for an output.
        output_parts_opaque<AgentOutput>: Output, None;
    }

    /// The `static` a derived type keeps its boundary in, built on first use. Not generic: a
    /// `OnceLock<BoundarySchema>` initialized through a closure would instantiate
    /// `OnceLock`'s initialization in the user's crate once per derived type; this cell's is
    /// compiled once, here.
    pub struct BoundaryCell(OnceLock<BoundarySchema>);

    impl BoundaryCell {
        /// An empty cell, for a `static`.
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            BoundaryCell(OnceLock::new())
        }

        /// The boundary, built from `parts()` on first use.
        pub fn get(&'static self, parts: fn() -> BoundaryParts) -> &'static BoundarySchema {
            self.get_with(parts, None, None)
        }

        /// [`Self::get`] for a strict output (`strict_name`) or a type with cross-field
        /// `rules`.
        pub fn get_with(
            &'static self,
            parts: fn() -> BoundaryParts,
            strict_name: Option<&str>,
            rules: Option<fn(&serde_json::Value) -> Vec<crate::Violation>>,
        ) -> &'static BoundarySchema {
            match self.0.get() {
                Some(built) => built,
                None => self.init(parts, strict_name, rules),
            }
        }

        #[cold]
        #[inline(never)]
        fn init(
            &'static self,
            parts: fn() -> BoundaryParts,
            strict_name: Option<&str>,
            rules: Option<fn(&serde_json::Value) -> Vec<crate::Violation>>,
        ) -> &'static BoundarySchema {
            self.0.get_or_init(|| {
                let parts = parts();
                let built = BoundarySchema::__build_erased(
                    parts.type_name,
                    parts.root,
                    parts.direction,
                    strict_name,
                    parts.shape.map(|shape| shape()),
                );
                match rules {
                    Some(rules) => built.__with_rules(rules),
                    None => built,
                }
            })
        }
    }

    /// `T`'s input rules over a JSON value, for [`BoundarySchema::validate`].
    pub fn input_rules<T: AgentInput>(value: &serde_json::Value) -> Vec<crate::Violation> {
        crate::rules::errors_of::<T>(value, |decoded, rules| decoded.__input_rules(rules))
    }

    /// `T`'s output rules over a JSON value, for [`BoundarySchema::validate`].
    pub fn output_rules<T: AgentOutput>(value: &serde_json::Value) -> Vec<crate::Violation> {
        crate::rules::errors_of::<T>(value, |decoded, rules| decoded.__output_rules(rules))
    }

    pub fn cached_input_with_rules<T: AgentInput>(
        strict_name: Option<&str>,
    ) -> &'static BoundarySchema {
        BoundarySchema::cached_with::<T>(Direction::Input, strict_name, Some(input_rules::<T>))
    }

    pub fn cached_output_with_rules<T: AgentOutput>(
        strict_name: Option<&str>,
    ) -> &'static BoundarySchema {
        BoundarySchema::cached_with::<T>(Direction::Output, strict_name, Some(output_rules::<T>))
    }

    pub fn cached_input<T: AgentInput>(strict_name: Option<&str>) -> &'static BoundarySchema {
        BoundarySchema::cached::<T>(Direction::Input, strict_name)
    }

    pub fn cached_output<T: AgentOutput>(strict_name: Option<&str>) -> &'static BoundarySchema {
        BoundarySchema::cached::<T>(Direction::Output, strict_name)
    }

    type FileArg = (
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
    );

    /// The handle `#[define_io]` builds. Keys, paths and modes were checked at compile time;
    /// a schema that does not compile is reported when it is used, as for any boundary.
    pub fn io_handle<I: AgentInput, O: AgentOutput>(
        inputs_files: &[FileArg],
        outputs_files: &[FileArg],
    ) -> crate::files::IoHandle {
        io_handle_with_limit::<I, O>(inputs_files, outputs_files, None)
    }

    /// [`io_handle`] with the contract's `max_input_bytes`.
    pub fn io_handle_with_limit<I: AgentInput, O: AgentOutput>(
        inputs_files: &[FileArg],
        outputs_files: &[FileArg],
        max_input_bytes: Option<u64>,
    ) -> crate::files::IoHandle {
        use crate::files::{FileEntry, FileMode, IoDefinition};
        let entry = |(key, path, mode, content_type): &FileArg| {
            let mode = match *mode {
                Some("ro") => Some(FileMode::Ro),
                Some(_) => Some(FileMode::Rw),
                None => None,
            };
            let content_type = content_type.map(str::to_owned);
            (
                (*key).to_owned(),
                FileEntry {
                    path: (*path).to_owned(),
                    mode,
                    content_type,
                },
            )
        };
        let definition = IoDefinition {
            inputs_files: inputs_files.iter().map(entry).collect(),
            outputs_files: outputs_files.iter().map(entry).collect(),
            max_input_bytes,
            ..IoDefinition::typed::<I, O>()
        };
        crate::files::build_io(definition).0
    }
}
