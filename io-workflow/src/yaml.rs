//! A YAML document as a tree whose every node knows its line and column, so that validation
//! can point at the exact place of each problem. Built from saphyr-parser's events.

use saphyr_parser::{Event, Parser, ScanError};

/// A position in the source: 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

/// A YAML node and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub(crate) at: Position,
    pub(crate) kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    /// A scalar, with whether it was quoted (a quoted `1` is a string, not a number).
    Scalar(String, bool),
    Sequence(Vec<Node>),
    Mapping(Vec<(Node, Node)>),
}

/// Why the text is not YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) at: Position,
    pub(crate) message: String,
}

impl From<ScanError> for SyntaxError {
    fn from(err: ScanError) -> Self {
        let marker = err.marker();
        SyntaxError {
            at: Position {
                line: marker.line(),
                column: marker.col() + 1,
            },
            message: err.info().to_owned(),
        }
    }
}

/// A collection being built: a sequence, or a mapping with the key waiting for its value.
enum Frame {
    Sequence(Position, Vec<Node>),
    Mapping(Position, Vec<(Node, Node)>, Option<Node>),
}

/// Parses the first document of `text`. An empty document is an empty mapping.
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut anchors: Vec<Option<Node>> = Vec::new();
    while let Some(event) = parser.next_event() {
        let (event, span) = event?;
        let at = Position {
            line: span.start.line(),
            column: span.start.col() + 1,
        };
        let (node, anchor) = match event {
            Event::Scalar(value, style, anchor, _) => {
                let quoted = !matches!(style, saphyr_parser::ScalarStyle::Plain);
                (
                    Node {
                        at,
                        kind: Kind::Scalar(value.into_owned(), quoted),
                    },
                    anchor,
                )
            }
            Event::SequenceStart(..) => {
                stack.push(Frame::Sequence(at, Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                stack.push(Frame::Mapping(at, Vec::new(), None));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Sequence(at, items)) => (
                    Node {
                        at,
                        kind: Kind::Sequence(items),
                    },
                    0,
                ),
                Some(Frame::Mapping(at, entries, _)) => (
                    Node {
                        at,
                        kind: Kind::Mapping(entries),
                    },
                    0,
                ),
                None => continue,
            },
            Event::Alias(id) => {
                let node = anchors
                    .get(id)
                    .cloned()
                    .flatten()
                    .ok_or_else(|| SyntaxError {
                        at,
                        message: "an alias refers to an anchor that is not defined".into(),
                    })?;
                (node, 0)
            }
            Event::DocumentEnd => break,
            _ => continue,
        };
        if anchor > 0 {
            if anchors.len() <= anchor {
                anchors.resize(anchor + 1, None);
            }
            anchors[anchor] = Some(node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Sequence(_, items)) => items.push(node),
            Some(Frame::Mapping(_, entries, pending)) => match pending.take() {
                Some(key) => entries.push((key, node)),
                None => *pending = Some(node),
            },
        }
    }
    Ok(root.unwrap_or(Node {
        at: Position { line: 1, column: 1 },
        kind: Kind::Mapping(Vec::new()),
    }))
}

impl Node {
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(text, _) => Some(text),
            _ => None,
        }
    }

    pub(crate) fn entries(&self) -> Option<&[(Node, Node)]> {
        match &self.kind {
            Kind::Mapping(entries) => Some(entries),
            _ => None,
        }
    }

    pub(crate) fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Sequence(items) => Some(items),
            _ => None,
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entries()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The node as JSON (plain scalars typed as YAML 1.2 core schema: null, booleans, numbers).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            Kind::Scalar(text, true) => Value::String(text.clone()),
            Kind::Scalar(text, false) => match text.as_str() {
                "" | "~" | "null" | "Null" | "NULL" => Value::Null,
                "true" | "True" | "TRUE" => Value::Bool(true),
                "false" | "False" | "FALSE" => Value::Bool(false),
                other => other
                    .parse::<i64>()
                    .map(Value::from)
                    .or_else(|_| {
                        other.parse::<f64>().map_err(|_| ()).and_then(|f| {
                            serde_json::Number::from_f64(f).map(Value::Number).ok_or(())
                        })
                    })
                    .unwrap_or_else(|()| Value::String(other.to_owned())),
            },
            Kind::Sequence(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Kind::Mapping(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str()
                                .map_or_else(|| k.to_json().to_string(), str::to_owned),
                            v.to_json(),
                        )
                    })
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_carry_their_positions() {
        let doc = parse("a: 1\nb:\n  c: [x, \"y\"]\n  d:\n    - 2\n").unwrap();
        let b = doc.get("b").unwrap();
        assert_eq!(b.at, Position { line: 3, column: 3 });
        let c = b.get("c").unwrap();
        assert_eq!(
            c.items().unwrap()[1].at,
            Position {
                line: 3,
                column: 10
            }
        );
        assert_eq!(
            doc.to_json(),
            serde_json::json!({ "a": 1, "b": { "c": ["x", "y"], "d": [2] } })
        );
    }

    #[test]
    fn quoted_scalars_stay_strings_and_empty_values_are_null() {
        let doc = parse("a: \"1\"\nb:\nc: 1.5\n").unwrap();
        assert_eq!(
            doc.to_json(),
            serde_json::json!({ "a": "1", "b": null, "c": 1.5 })
        );
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let err = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.at.line >= 1, "{err:?}");
    }
}
