//! `IsJsonSchema`: `schemars::JsonSchema` under a name that reports its absence clearly.
//!
//! `AgentInput` and `AgentOutput` require `Serialize` and `DeserializeOwned` directly (serde's
//! own diagnostics already name the missing derive) and `JsonSchema` through this trait, whose
//! `on_unimplemented` note says which derive to add. It is implemented for every `JsonSchema`
//! type; nothing else can or should implement it.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// Implemented for every `schemars::JsonSchema` type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `JsonSchema`, so agent-io cannot generate its schema",
    label = "`JsonSchema` is not implemented for `{Self}`",
    note = "add `#[derive(schemars::JsonSchema)]` to `{Self}`",
    note = "if `{Self}` already derives `JsonSchema`, it may be another version's: agent-io needs schemars 1.x; `cargo tree -d -i schemars` shows when two are built"
)]
pub trait IsJsonSchema {
    /// The root schema of `Self` under `settings`, as JSON: the one step of building a
    /// boundary that needs the type.
    #[doc(hidden)]
    fn __root_schema(settings: SchemaSettings) -> Value;
}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema + ?Sized> IsJsonSchema for T {
    fn __root_schema(settings: SchemaSettings) -> Value {
        settings
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value()
    }
}
