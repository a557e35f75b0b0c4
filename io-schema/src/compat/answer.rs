//! The answer of a comparison: compatible, incompatible with a witness, or unknown with why.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// The answer of [`schema_compatible`](super::schema_compatible).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Compatibility {
    /// Every instance of the producer is valid for the consumer (proven).
    Compatible,
    /// A value the producer allows and the consumer refuses.
    Incompatible(Counterexample),
    /// Neither could be shown; the reason says what stopped the proof.
    Unknown(Undecided),
}

impl Compatibility {
    /// Whether inclusion was proven.
    pub fn is_compatible(&self) -> bool {
        matches!(self, Compatibility::Compatible)
    }
}

/// A value the producer's schema accepts and the consumer's refuses, and where they part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Counterexample {
    /// The value (checked: valid for the producer, invalid for the consumer).
    pub witness: Value,
    /// Where in the producer's schema the difference lies (a JSON pointer).
    pub producer_pointer: String,
    /// Where in the consumer's schema (a JSON pointer).
    pub consumer_pointer: String,
    /// What differs, in words.
    pub reason: String,
}

/// Why neither inclusion nor a counter-example could be shown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Undecided {
    /// Where in the producer's schema the proof stopped.
    pub producer_pointer: String,
    /// Where in the consumer's schema.
    pub consumer_pointer: String,
    /// What stopped it.
    pub reason: String,
}

impl fmt::Display for Compatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compatibility::Compatible => f.write_str("compatible"),
            Compatibility::Incompatible(c) => write!(
                f,
                "incompatible at {} (producer {}): {}; for example {}",
                or_root(&c.consumer_pointer),
                or_root(&c.producer_pointer),
                c.reason,
                crate::limits::bounded_display(&c.witness, 200)
            ),
            Compatibility::Unknown(u) => write!(
                f,
                "not proven at {} (producer {}): {}",
                or_root(&u.consumer_pointer),
                or_root(&u.producer_pointer),
                u.reason
            ),
        }
    }
}

fn or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}
