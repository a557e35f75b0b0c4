//! The derives' expansions stay correct when the user's scope is unusual: shadowed prelude
//! names, no implicit prelude, strict lints, raw identifiers, generic bounds with lifetimes,
//! and a renamed path to agentio-core.

/// Shadows every prelude name the expansion might use unqualified.
#[deny(warnings, unused_qualifications)]
mod shadowed_prelude {
    #![allow(dead_code)]
    struct Result;
    struct Ok;
    struct Option;
    struct Some;
    struct None;
    struct String;
    struct Box;
    struct Vec;
    trait Send {}
    trait Sync {}

    #[derive(
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
        agentio_core::AgentInput,
        agentio_core::AgentOutput,
    )]
    pub(crate) struct Shadowed {
        pub(crate) name: std::string::String,
    }

    #[derive(
        serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput,
    )]
    #[agent(strict)]
    pub(crate) struct StrictShadowed {
        pub(crate) name: std::string::String,
    }
}

mod no_prelude {
    #![no_implicit_prelude]
    // schemars' expansion calls `.into()`; agent-io's needs nothing from the prelude.
    use ::std::convert::Into;

    // schemars' own expansion names `schemars::` relatively; point it at the absolute path.
    #[derive(
        ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema, ::agentio_core::AgentInput,
    )]
    #[schemars(crate = "::schemars")]
    pub(crate) struct Bare {
        pub(crate) count: u32,
    }

    #[derive(
        ::serde::Serialize,
        ::serde::Deserialize,
        ::schemars::JsonSchema,
        ::agentio_core::AgentOutput,
    )]
    #[schemars(crate = "::schemars")]
    pub(crate) struct BareGeneric<T> {
        pub(crate) item: T,
    }
}

/// `agentio_core` under another name, as a crate that re-exports it would have it.
mod renamed {
    pub(crate) use agentio_core as agentio;

    #[derive(
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
        agentio::AgentInput,
        agentio::AgentOutput,
    )]
    #[agent(crate = "crate::integration::hygiene::renamed::agentio")]
    pub(crate) struct ViaRename {
        pub(crate) r#type: String,
        pub(crate) r#match: bool,
    }
}

/// Lifetimes in where-clauses and bounds on generic parameters.
#[derive(
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
    agentio_core::AgentInput,
    agentio_core::AgentOutput,
)]
pub(crate) struct Bounded<T>
where
    T: Clone,
    for<'a> &'a T: std::fmt::Debug,
{
    pub(crate) value: T,
    pub(crate) r#ref: Option<String>,
}

use agentio_core::{AgentInput, AgentOutput};
use serde_json::json;

#[test]
fn expansions_work_in_unusual_scopes() {
    assert!(shadowed_prelude::Shadowed::validate_input(&json!({ "name": "a" })).is_ok());
    assert!(shadowed_prelude::StrictShadowed::structured_output_format().is_some());
    assert!(no_prelude::Bare::validate_input(&json!({ "count": 1 })).is_ok());
    assert!(no_prelude::BareGeneric::<u8>::validate_output(&json!({ "item": 300 })).is_err());
}

#[test]
fn raw_identifiers_serialize_under_their_plain_names() {
    let schema = renamed::ViaRename::input_schema();
    assert_eq!(schema["required"], json!(["type", "match"]));
    assert!(renamed::ViaRename::validate_input(&json!({ "type": "t", "match": true })).is_ok());
}

#[test]
fn generic_bounds_with_lifetimes_compile_and_validate() {
    assert!(Bounded::<u8>::validate_input(&json!({ "value": 3, "ref": null })).is_ok());
    assert!(Bounded::<u8>::validate_input(&json!({ "value": -3 })).is_err());
    assert!(Bounded::<String>::validate_output(&json!({ "value": "x", "ref": "y" })).is_ok());
}
