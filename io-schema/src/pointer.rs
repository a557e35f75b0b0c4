//! JSON pointers (RFC 6901), as the engine writes them into errors and reports, and as a
//! schema's local references (`$ref: "#/$defs/A"`) hold them: the vocabulary every walk over a
//! schema or a value shares, kept below all of them.

use std::borrow::Cow;

use serde_json::Value;

/// Escapes one reference token of a JSON pointer (`~` -> `~0`, `/` -> `~1`).
///
/// ```
/// assert_eq!(agentio_schema::pointer::escape_token("a/b~c"), "a~1b~0c");
/// ```
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one reference token of a JSON pointer (`~1` -> `/`, `~0` -> `~`, in that order).
///
/// ```
/// assert_eq!(agentio_schema::pointer::unescape_token("a~1b~0c~01"), "a/b~c~1");
/// ```
pub fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Appends `/token`, escaped, to `pointer`.
///
/// ```
/// let mut at = String::from("/properties");
/// agentio_schema::pointer::push_token(&mut at, "a/b");
/// assert_eq!(at, "/properties/a~1b");
/// ```
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    pointer.push_str(&escape_token(token));
}

/// The JSON pointer a local reference stands for: `#` (the root, `""`) or `#/...`, its
/// fragment percent-decoded, since a `$ref` is a URI and a pointer in its fragment is
/// percent-encoded where a URI needs it (`#/$defs/a%20b` is `/$defs/a b`;
/// RFC 6901, section 6). It is read as the validator reads it (jsonschema's `referencing`,
/// with the same `percent-encoding` crate): `%` and two hex digits is one byte, any other `%`
/// stays as written. `None` for a reference that is not local, one naming an anchor
/// (`#name`), and one whose decoded bytes are not UTF-8 (the validator refuses it too).
///
/// The walks that follow a pointer themselves (OpenAI's strict form, the inlined profile, the
/// schema comparison) read it here, so that a spelling cannot steer one of them past a
/// definition the validator follows; the bound on a schema's expansion resolves every kind of
/// reference with the validator's own resolver ([`crate::limits::check_expansion`]).
///
/// ```
/// use agentio_schema::pointer::local_pointer;
/// assert_eq!(local_pointer("#/$defs/a%20b").as_deref(), Some("/$defs/a b"));
/// assert_eq!(local_pointer("#/%24defs/A").as_deref(), Some("/$defs/A"));
/// assert_eq!(local_pointer("#").as_deref(), Some(""));
/// assert_eq!(local_pointer("#name"), None);
/// assert_eq!(local_pointer("other.json#/a"), None);
/// ```
pub fn local_pointer(reference: &str) -> Option<Cow<'_, str>> {
    let fragment = reference.strip_prefix('#')?;
    if !fragment.is_empty() && !fragment.starts_with('/') {
        return None;
    }
    if !fragment.contains('%') {
        return Some(Cow::Borrowed(fragment));
    }
    percent_encoding::percent_decode_str(fragment)
        .decode_utf8()
        .ok()
}

/// The schema a local reference ([`local_pointer`]) points at in `root`, if any.
///
/// ```
/// use serde_json::json;
/// let root = json!({ "$defs": { "a b": { "type": "integer" } } });
/// let target = agentio_schema::pointer::resolve_local(&root, "#/$defs/a%20b");
/// assert_eq!(target, Some(&json!({ "type": "integer" })));
/// ```
pub fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(&local_pointer(reference)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_are_escaped_tilde_first() {
        assert_eq!(escape_token("~1"), "~01");
        assert_eq!(escape_token("a/b~c"), "a~1b~0c");
        let mut at = String::new();
        push_token(&mut at, "");
        assert_eq!(at, "/");
        for token in ["", "a", "~", "/", "~1", "~0", "a/b~c", "~01/~10"] {
            assert_eq!(unescape_token(&escape_token(token)), token);
        }
        assert_eq!(unescape_token("~01"), "~1");
    }

    #[test]
    fn a_local_reference_is_percent_decoded_as_the_validator_decodes_it() {
        let decoded = |reference| local_pointer(reference).map(Cow::into_owned);
        assert_eq!(decoded("#"), Some(String::new()));
        assert_eq!(decoded("#/"), Some("/".into()));
        assert_eq!(decoded("#/$defs/A"), Some("/$defs/A".into()));
        // Written as it is, nothing copied.
        assert!(matches!(local_pointer("#/$defs/A"), Some(Cow::Borrowed(_))));
        assert_eq!(decoded("#/a%20b/%41"), Some("/a b/A".into()));
        assert_eq!(decoded("#/%C3%A9"), Some("/é".into()));
        assert_eq!(decoded("#/%c3%a9"), Some("/é".into()));
        // A `%` not followed by two hex digits stays as written.
        assert_eq!(decoded("#/a%2"), Some("/a%2".into()));
        assert_eq!(decoded("#/%"), Some("/%".into()));
        assert_eq!(decoded("#/%zz"), Some("/%zz".into()));
        // Decoded bytes that are not UTF-8; not local; an anchor.
        assert_eq!(decoded("#/%ff"), None);
        assert_eq!(decoded("/$defs/A"), None);
        assert_eq!(decoded("other.json#/$defs/A"), None);
        assert_eq!(decoded("#A"), None);
        assert_eq!(decoded(""), None);
        // `~1` is the pointer's own escape, decoded by the pointer, after the URI's.
        let root = json!({ "$defs": { "a/b": 1, "%41": 2, "A": 3, "é": 4 } });
        assert_eq!(resolve_local(&root, "#/$defs/a~1b"), Some(&json!(1)));
        assert_eq!(resolve_local(&root, "#/$defs/a%7E1b"), Some(&json!(1)));
        assert_eq!(resolve_local(&root, "#/$defs/%2541"), Some(&json!(2)));
        assert_eq!(resolve_local(&root, "#/$defs/%41"), Some(&json!(3)));
        assert_eq!(resolve_local(&root, "#/%24defs/%C3%A9"), Some(&json!(4)));
        assert_eq!(resolve_local(&root, "#"), Some(&root));
        assert_eq!(resolve_local(&root, "#/$defs/B"), None);
        assert_eq!(resolve_local(&root, "#A"), None);
    }

    /// The validator follows every spelling above to the definition `local_pointer` names:
    /// what each walk here follows is what the validator checks.
    #[test]
    fn the_validator_follows_the_same_definitions() {
        for reference in [
            "#/$defs/a%20b",
            "#/%24defs/a%20b",
            "#/$defs/a%20%62",
            "#/$defs/s~1t",
            "#/$defs/s%7E1t",
        ] {
            let schema = json!({
                "$defs": { "a b": { "type": "integer" }, "s/t": { "type": "integer" } },
                "properties": { "n": { "$ref": reference } }
            });
            assert!(resolve_local(&schema, reference).is_some(), "{reference}");
            let validator = jsonschema::draft202012::new(&schema).unwrap();
            assert!(validator.is_valid(&json!({ "n": 1 })), "{reference}");
            assert!(!validator.is_valid(&json!({ "n": "one" })), "{reference}");
        }
    }
}
