//! SEP-2243's `x-mcp-header`: an input property mirrored in an `Mcp-Param-{Name}` HTTP header,
//! so that a balancer or gateway can route a `tools/call` without reading its body.
//!
//! A client MUST exclude a tool whose annotations break the rules (MCP 2026-07-28; the
//! official conformance suite's `http-invalid-tool-headers` and rmcp's client do), so a tool
//! published with one is not refused anywhere: it silently disappears from every client's
//! list. The MCP profile refuses it instead, at export (which `McpServer::new` does), naming
//! the property. The rules, as those clients apply them:
//!
//! - the annotation sits on a property reached from the root through `properties` alone (not
//!   the root itself, not inside `$defs`, `items`, `anyOf` and the like);
//! - its value is a non-empty string of RFC 9110 token characters (no space, colon, control
//!   or non-ASCII character);
//! - no two annotations name the same header, compared without case;
//! - the property's `type` is exactly one of `string`, `integer` and `boolean`. A type list
//!   is refused too, `["string", "null"]` included: the schema of an `Option` field. A field
//!   that may be left out is `#[serde(default)]` instead (its header is then left out).

use std::collections::VecDeque;

use serde_json::{Map, Value};

use crate::pointer::push_token;
use crate::report::Refusal;

const KEYWORD: &str = "x-mcp-header";

/// Where a subschema sits.
#[derive(Clone, Copy)]
enum Place {
    /// The root, or a property reached from it through `properties` alone: its own
    /// `properties` may carry annotations.
    Chain,
    /// Anywhere else.
    Off,
}

/// One step of a JSON pointer.
enum Token<'a> {
    Key(&'a str),
    Index(usize),
}

/// The pointers of the walk, each a step from its parent's, spelled out only for a refusal:
/// spelling each as it is queued would cost the square of the depth.
struct Pointers<'a> {
    steps: Vec<(usize, Token<'a>)>,
}

/// The root's pointer, in [`Pointers`].
const ROOT: usize = usize::MAX;

impl<'a> Pointers<'a> {
    fn step(&mut self, parent: usize, token: Token<'a>) -> usize {
        self.steps.push((parent, token));
        self.steps.len() - 1
    }

    fn spell(&self, mut at: usize) -> String {
        let mut tokens = Vec::new();
        while at != ROOT {
            let (parent, token) = &self.steps[at];
            tokens.push(token);
            at = *parent;
        }
        let mut pointer = String::new();
        for token in tokens.into_iter().rev() {
            match token {
                Token::Key(key) => push_token(&mut pointer, key),
                Token::Index(index) => push_token(&mut pointer, &index.to_string()),
            }
        }
        pointer
    }
}

/// Every annotation of `schema` (an input schema) that a client would exclude its tool for,
/// in document order. The walk keeps its own queue, so no depth of nesting overflows a stack.
pub(crate) fn refusals(schema: &Value) -> Vec<Refusal> {
    let mut refusals = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut pointers = Pointers { steps: Vec::new() };
    let mut queue: VecDeque<(&Value, usize, Place)> = VecDeque::new();
    if let Some(root) = schema.as_object() {
        if root.contains_key(KEYWORD) {
            refusals.push(Refusal {
                pointer: format!("/{KEYWORD}"),
                reason: "`x-mcp-header` annotates a property, not the schema root".into(),
            });
        }
        members(root, ROOT, Place::Chain, &mut pointers, &mut queue);
    }
    while let Some((value, at, place)) = queue.pop_front() {
        match value {
            Value::Object(object) => {
                if let Some(header) = object.get(KEYWORD) {
                    let spelled = pointers.spell(at);
                    match place {
                        Place::Chain => check(object, header, &spelled, &mut seen, &mut refusals),
                        Place::Off => refusals.push(Refusal {
                            pointer: format!("{spelled}/{KEYWORD}"),
                            reason: "`x-mcp-header` annotates a property reached from the root through `properties` alone; clients do not look for it here".into(),
                        }),
                    }
                }
                members(object, at, place, &mut pointers, &mut queue);
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let here = pointers.step(at, Token::Index(index));
                    queue.push_back((item, here, Place::Off));
                }
            }
            _ => {}
        }
    }
    refusals
}

/// Queues the subschemas of the schema `object` at `at`: the properties of one on the chain
/// are on it too; everything else is off it.
fn members<'a>(
    object: &'a Map<String, Value>,
    at: usize,
    place: Place,
    pointers: &mut Pointers<'a>,
    queue: &mut VecDeque<(&'a Value, usize, Place)>,
) {
    for (key, inner) in object {
        match (key.as_str(), inner) {
            // The annotation itself, and data: an `x-mcp-header` key in a default is a value.
            (KEYWORD | "const" | "enum" | "default" | "examples", _) => {}
            // Schemas by name: every name is a schema's, whatever it spells.
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(named),
            ) => {
                let place = if key == "properties" {
                    place
                } else {
                    Place::Off
                };
                let there = pointers.step(at, Token::Key(key));
                for (name, schema) in named {
                    let here = pointers.step(there, Token::Key(name));
                    queue.push_back((schema, here, place));
                }
            }
            _ => {
                let there = pointers.step(at, Token::Key(key));
                queue.push_back((inner, there, Place::Off));
            }
        }
    }
}

/// One annotation on a property at `at`.
fn check(
    property: &Map<String, Value>,
    header: &Value,
    at: &str,
    seen: &mut Vec<(String, String)>,
    refusals: &mut Vec<Refusal>,
) {
    let mut refuse = |reason: String| {
        refusals.push(Refusal {
            pointer: format!("{at}/{KEYWORD}"),
            reason,
        });
    };
    let Some(header) = header.as_str() else {
        return refuse(format!("`x-mcp-header` must be a string, not {header}"));
    };
    if header.is_empty() {
        return refuse("`x-mcp-header` must name a header, not be empty".into());
    }
    if let Some(bad) = header.chars().find(|&c| !is_token_char(c)) {
        return refuse(format!(
            "`x-mcp-header` {header:?} is not an HTTP header name: {bad:?} is not an RFC 9110 token character"
        ));
    }
    let folded = header.to_ascii_lowercase();
    if let Some((first, _)) = seen.iter().find(|(_, other)| *other == folded) {
        return refuse(format!(
            "`x-mcp-header` {header:?} names the header {first} names already (header names ignore case)"
        ));
    }
    seen.push((at.to_owned(), folded));
    match property.get("type") {
        Some(Value::String(t)) if matches!(t.as_str(), "string" | "integer" | "boolean") => {}
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => refuse(format!(
            "`x-mcp-header` needs one primitive type (string, integer or boolean), and this property's is {}: a nullable field (an `Option`) cannot be mirrored in a header; give it a default with `#[serde(default)]` instead",
            Value::Array(types.clone())
        )),
        Some(other) => refuse(format!(
            "`x-mcp-header` needs one primitive type (string, integer or boolean), not {other}"
        )),
        None => refuse(
            "`x-mcp-header` needs one primitive type (string, integer or boolean), and this property has no `type`".into(),
        ),
    }
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::profiles::{Profile, apply};

    /// An input schema with one property `property`.
    fn with(property: Value) -> Value {
        json!({ "type": "object", "properties": { "p": property } })
    }

    /// The refusals' pointers and reasons for `schema` under the MCP profile.
    fn refused(schema: &Value) -> Vec<(String, String)> {
        match apply(Profile::Mcp, schema) {
            Ok(_) => Vec::new(),
            Err(refusals) => refusals
                .into_iter()
                .map(|r| (r.pointer, r.reason))
                .collect(),
        }
    }

    #[test]
    fn headers_a_client_can_use_are_published_as_written() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "priority": { "type": "integer", "x-mcp-header": "Priority" },
                "verbose": { "type": "boolean", "x-mcp-header": "X_Verbose.v2~!#$%&'*+^`|" },
                "nested": {
                    "type": "object",
                    "properties": { "zone": { "type": "string", "x-mcp-header": "Zone" } }
                },
                "query": { "type": "string", "default": { "x-mcp-header": "data, not a schema" } }
            }
        });
        assert_eq!(apply(Profile::Mcp, &schema).unwrap(), schema);
        // Other profiles do not look: a provider is not an MCP client.
        assert!(
            apply(
                Profile::Anthropic,
                &with(json!({ "type": "number", "x-mcp-header": "" }))
            )
            .is_ok()
        );
    }

    /// The conformance suite's `http-invalid-tool-headers` tools, each of which a client must
    /// exclude, and the `Option` field's schema.
    #[test]
    fn each_annotation_a_client_would_exclude_its_tool_for_is_refused_naming_it() {
        let at = "/properties/p/x-mcp-header";
        let cases = [
            (
                json!({ "type": "string", "x-mcp-header": "" }),
                "not be empty",
            ),
            (
                json!({ "type": "object", "x-mcp-header": "Data" }),
                "not \"object\"",
            ),
            (
                json!({ "type": "array", "items": { "type": "string" }, "x-mcp-header": "Items" }),
                "not \"array\"",
            ),
            (
                json!({ "type": "null", "x-mcp-header": "Nil" }),
                "not \"null\"",
            ),
            (
                json!({ "type": "number", "x-mcp-header": "Score" }),
                "not \"number\"",
            ),
            (
                json!({ "type": "string", "x-mcp-header": "My Region" }),
                "' ' is not an RFC 9110 token character",
            ),
            (
                json!({ "type": "string", "x-mcp-header": "Region:Primary" }),
                "':' is not",
            ),
            (
                json!({ "type": "string", "x-mcp-header": "Région" }),
                "'é' is not",
            ),
            (
                json!({ "type": "string", "x-mcp-header": "Region\t1" }),
                "'\\t' is not",
            ),
            (
                json!({ "type": "string", "x-mcp-header": 7 }),
                "must be a string, not 7",
            ),
            (json!({ "x-mcp-header": "Untyped" }), "has no `type`"),
            (
                json!({ "type": ["string", "null"], "x-mcp-header": "Region" }),
                "a nullable field (an `Option`) cannot be mirrored",
            ),
        ];
        for (property, reason) in cases {
            let refusals = refused(&with(property.clone()));
            assert_eq!(refusals.len(), 1, "{property}: {refusals:?}");
            assert_eq!(refusals[0].0, at, "{property}");
            assert!(
                refusals[0].1.contains(reason),
                "{property}: {}",
                refusals[0].1
            );
        }
    }

    #[test]
    fn two_annotations_naming_one_header_are_refused_whatever_their_case() {
        for (first, second) in [("Region", "Region"), ("MyField", "myfield")] {
            let schema = json!({
                "type": "object",
                "properties": {
                    "a": { "type": "string", "x-mcp-header": first },
                    "b": { "type": "string", "x-mcp-header": second }
                }
            });
            let refusals = refused(&schema);
            assert_eq!(refusals.len(), 1, "{refusals:?}");
            assert_eq!(refusals[0].0, "/properties/b/x-mcp-header");
            assert!(refusals[0].1.contains("/properties/a"), "{}", refusals[0].1);
        }
    }

    #[test]
    fn an_annotation_off_the_properties_chain_is_refused_where_it_is() {
        let schema = json!({
            "type": "object",
            "x-mcp-header": "Root",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": { "city": { "type": "string", "x-mcp-header": "City" } }
                }
            },
            "properties": {
                "address": { "$ref": "#/$defs/address" },
                "tags": { "type": "array", "items": { "type": "string", "x-mcp-header": "Tag" } },
                "either": { "anyOf": [{ "type": "string", "x-mcp-header": "Either" }] }
            }
        });
        let mut pointers: Vec<String> = refused(&schema).into_iter().map(|(p, _)| p).collect();
        pointers.sort();
        assert_eq!(
            pointers,
            [
                "/$defs/address/properties/city/x-mcp-header",
                "/properties/either/anyOf/0/x-mcp-header",
                "/properties/tags/items/x-mcp-header",
                "/x-mcp-header",
            ]
        );
    }

    #[test]
    fn a_hostile_depth_is_walked_to_the_end_without_recursion() {
        let mut schema = json!({ "type": "number", "x-mcp-header": "Deep" });
        let levels = 100_000;
        for _ in 0..levels {
            // Built by hand: `json!` would serialize `schema` again at each level, recursively.
            let properties = serde_json::Map::from_iter([("p".to_owned(), schema)]);
            schema = Value::Object(serde_json::Map::from_iter([
                ("type".to_owned(), json!("object")),
                ("properties".to_owned(), Value::Object(properties)),
            ]));
        }
        let refusals = super::refusals(&schema);
        assert_eq!(refusals.len(), 1);
        assert_eq!(
            refusals[0].pointer,
            format!("{}/x-mcp-header", "/properties/p".repeat(levels))
        );
        // A recursive drop of 100,000 levels would overflow the test's stack.
        std::mem::forget(schema);
    }

    #[test]
    fn a_type_list_is_one_type_too_many_with_or_without_null() {
        let refusals = refused(&with(
            json!({ "type": ["string", "integer"], "x-mcp-header": "Either" }),
        ));
        assert_eq!(refusals.len(), 1);
        assert!(
            refusals[0].1.ends_with(r#"not ["string","integer"]"#),
            "{}",
            refusals[0].1
        );
    }

    #[test]
    fn a_definition_is_a_schema_whatever_its_name_spells() {
        let schema = json!({
            "type": "object",
            "$defs": {
                "default": { "type": "string", "x-mcp-header": "D" },
                "x-mcp-header": { "type": "string", "x-mcp-header": "E" }
            },
            "properties": {
                "enum": { "type": "object", "properties": { "const": { "type": "number", "x-mcp-header": "C" } } }
            }
        });
        let pointers: Vec<String> = refused(&schema).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            pointers,
            [
                "/$defs/default/x-mcp-header",
                "/$defs/x-mcp-header/x-mcp-header",
                "/properties/enum/properties/const/x-mcp-header",
            ]
        );
    }
}
