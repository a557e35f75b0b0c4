//! The supertraits of [`AgentInput`](crate::AgentInput) and [`AgentOutput`](crate::AgentOutput).
//!
//! Each is exactly one serde or schemars trait under another name, implemented for every type
//! that has it. They exist for the compiler's messages: when a type derives `AgentInput` but
//! lacks, say, `JsonSchema`, the error names the missing derive and where to add it, instead of
//! a bare "trait bound not satisfied". Code bounded by `T: AgentInput` still sees `Serialize`,
//! `DeserializeOwned` and `JsonSchema` through them.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `Serialize`, under a name that reports its absence clearly.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Serialize`, so it cannot cross an agent boundary as JSON",
    label = "`Serialize` is not implemented for `{Self}`",
    note = "add `#[derive(serde::Serialize)]` to `{Self}`"
)]
pub trait IsSerialize: Serialize {}

#[diagnostic::do_not_recommend]
impl<T: Serialize + ?Sized> IsSerialize for T {}

/// `DeserializeOwned`, under a name that reports its absence clearly.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Deserialize`, so it cannot be decoded from JSON at an agent boundary",
    label = "`Deserialize` is not implemented for `{Self}`",
    note = "add `#[derive(serde::Deserialize)]` to `{Self}`; the type must own its data (no borrowed `&str` fields)"
)]
pub trait IsDeserialize: DeserializeOwned {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> IsDeserialize for T {}

/// `JsonSchema`, under a name that reports its absence clearly.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `JsonSchema`, so agent-io cannot generate its schema",
    label = "`JsonSchema` is not implemented for `{Self}`",
    note = "add `#[derive(schemars::JsonSchema)]` to `{Self}`"
)]
pub trait IsJsonSchema: JsonSchema {}

#[diagnostic::do_not_recommend]
impl<T: JsonSchema + ?Sized> IsJsonSchema for T {}
