//! What a client's form of a schema cannot say ([`Refusal`]) and what it leaves out
//! ([`Relaxation`]): the vocabulary of [`crate::profiles`] and of the strict structured-output
//! form, kept below both.

use std::fmt;

/// Why a schema has no form in a profile: where, and what the client cannot express there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// A JSON pointer into the canonical schema.
    pub pointer: String,
    /// What is there, and why the profile cannot say it.
    pub reason: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", at(&self.pointer), self.reason)
    }
}

impl std::error::Error for Refusal {}

/// A keyword a client's form leaves out: the client cannot express it, and it only narrows
/// what is valid, so the client is shown a wider schema and the boundary, which still checks
/// the canonical one, refuses what the keyword refuses. Annotations (`default`, `examples`,
/// `deprecated`, ...) and formats no validator checks are not relaxations, and are not
/// reported.
///
/// ```
/// use agentio_core::profiles::{Profile, apply_reporting};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "code": { "type": "string", "minLength": 3, "default": "abc" } },
///     "required": ["code"]
/// });
/// let (strict, relaxed) = apply_reporting(Profile::OpenAiStrict, &schema).unwrap();
/// assert!(strict["properties"]["code"].get("minLength").is_none());
/// assert_eq!(relaxed.len(), 1); // `default` is an annotation: dropped, not a relaxation
/// assert_eq!((relaxed[0].pointer.as_str(), relaxed[0].keyword.as_str()), ("/properties/code", "minLength"));
/// assert_eq!(relaxed[0].to_string(), "/properties/code: `minLength` is left out (the client cannot express it; the boundary still checks it)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relaxation {
    /// A JSON pointer into the canonical schema, at the schema that carried the keyword.
    pub pointer: String,
    /// The keyword left out (`minLength`, `uniqueItems`, `format`, ...).
    pub keyword: String,
}

impl fmt::Display for Relaxation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: `{}` is left out (the client cannot express it; the boundary still checks it)",
            at(&self.pointer),
            self.keyword
        )
    }
}

fn at(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

/// Keywords that only describe (Draft 2020-12's annotations): leaving one out changes no
/// verdict, so it is not a relaxation.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "$id",
    "$anchor",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Records that `keyword` (with `value`) was left out of the schema at `pointer`, when that
/// narrows what is valid.
pub(crate) fn left_out(
    relaxed: &mut Vec<Relaxation>,
    pointer: &str,
    keyword: &str,
    value: &serde_json::Value,
) {
    if ANNOTATIONS.contains(&keyword) {
        return;
    }
    if keyword == "format"
        && !value
            .as_str()
            .is_some_and(|f| crate::formats::STANDARD.contains(&f))
    {
        return;
    }
    relaxed.push(Relaxation {
        pointer: pointer.to_owned(),
        keyword: keyword.to_owned(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_keywords_that_narrow_are_relaxations() {
        let mut relaxed = Vec::new();
        left_out(&mut relaxed, "/a", "default", &json!(1));
        left_out(&mut relaxed, "/a", "description", &json!("x"));
        left_out(&mut relaxed, "/a", "format", &json!("uint8"));
        assert!(relaxed.is_empty());
        left_out(&mut relaxed, "/a", "format", &json!("uri"));
        left_out(&mut relaxed, "/b", "uniqueItems", &json!(true));
        assert_eq!(
            relaxed,
            [
                Relaxation {
                    pointer: "/a".into(),
                    keyword: "format".into()
                },
                Relaxation {
                    pointer: "/b".into(),
                    keyword: "uniqueItems".into()
                }
            ]
        );
    }

    #[test]
    fn the_root_is_named_in_messages() {
        let refusal = Refusal {
            pointer: String::new(),
            reason: "no".into(),
        };
        assert_eq!(refusal.to_string(), "(root): no");
        let relaxation = Relaxation {
            pointer: String::new(),
            keyword: "not".into(),
        };
        assert!(
            relaxation
                .to_string()
                .starts_with("(root): `not` is left out")
        );
    }
}
