//! A YAML document as a tree whose every node knows its line and column, so that validation
//! can point at the exact place of each problem. Built from saphyr-parser's events.

use saphyr_parser::{Event, Marker, Parser, ScanError};

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
        // The scanner's own nesting guard (255 flow levels, reached while it looks ahead for a
        // key before this reader counts the levels): the same refusal, said our way.
        let message = if err.info().contains("recursion limit") {
            format!("the document nests deeper than {MAX_DEPTH} levels")
        } else {
            err.info().to_owned()
        };
        SyntaxError {
            at: position(*err.marker()),
            message,
        }
    }
}

/// Where `marker` is, columns counted from 1 as lines are.
fn position(marker: Marker) -> Position {
    Position {
        line: marker.line(),
        column: marker.col() + 1,
    }
}

/// How deep collections may nest in a workflow document. Deeper input is refused before the
/// parser goes further (a YAML scanner's cost grows with depth, and every later walk recurses).
pub(crate) const MAX_DEPTH: usize = 64;
/// How large a document may become once its aliases are expanded, in nodes plus scalar bytes
/// (an "alias bomb" of a large scalar or a nested collection repeated by alias is refused).
pub(crate) const MAX_EXPANDED_WEIGHT: usize = 8 * 1024 * 1024;

/// A collection being built: a sequence, or a mapping with the key waiting for its value; each
/// with its anchor (0: none) and its weight so far.
enum Frame {
    Sequence(Position, usize, usize, Vec<Node>),
    Mapping(Position, usize, usize, Vec<(Node, Node)>, Option<Node>),
}

/// Parses the first document of `text`. An empty document is an empty mapping.
///
/// Anchors and aliases are supported on scalars, sequences and mappings; an alias is expanded
/// in place. Refused: nesting deeper than [`MAX_DEPTH`], and a document whose expanded size
/// would exceed [`MAX_EXPANDED_WEIGHT`].
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    // Each anchor's node and weight (nodes + scalar bytes, aliases expanded).
    let mut anchors: Vec<Option<(Node, usize)>> = Vec::new();
    let mut total = 0usize;
    while let Some(event) = parser.next_event() {
        let (event, span) = event?;
        let at = position(span.start);
        let (node, anchor, weight) = match event {
            Event::Scalar(value, style, anchor, _) => {
                let quoted = !matches!(style, saphyr_parser::ScalarStyle::Plain);
                let weight = 1 + value.len();
                total = add_weight(total, weight, at)?;
                (
                    Node {
                        at,
                        kind: Kind::Scalar(value.into_owned(), quoted),
                    },
                    anchor,
                    weight,
                )
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(SyntaxError {
                        at,
                        message: format!("the document nests deeper than {MAX_DEPTH} levels"),
                    });
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Sequence(at, anchor, 1, Vec::new())
                } else {
                    Frame::Mapping(at, anchor, 1, Vec::new(), None)
                });
                total = add_weight(total, 1, at)?;
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Sequence(at, anchor, weight, items)) => (
                    Node {
                        at,
                        kind: Kind::Sequence(items),
                    },
                    anchor,
                    weight,
                ),
                Some(Frame::Mapping(at, anchor, weight, entries, _)) => (
                    Node {
                        at,
                        kind: Kind::Mapping(entries),
                    },
                    anchor,
                    weight,
                ),
                None => continue,
            },
            Event::Alias(id) => {
                let (node, weight) = anchors
                    .get(id)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| SyntaxError {
                        at,
                        message: "an alias refers to an anchor that is not defined (or to a collection that encloses it)".into(),
                    })?;
                // Checked before the copy is made: the expansion never exceeds the limit.
                total = add_weight(total, *weight, at)?;
                (node.clone(), 0, *weight)
            }
            Event::DocumentEnd => {
                // A second document is refused rather than silently ignored.
                match parser.next_event() {
                    Some(Ok((Event::DocumentStart(..), span))) => {
                        return Err(SyntaxError {
                            at: position(span.start),
                            message: "a second YAML document: a workflow file holds one".into(),
                        });
                    }
                    Some(Err(err)) => return Err(err.into()),
                    _ => break,
                }
            }
            _ => continue,
        };
        // Anchor 0 is "no anchor" (ids start at 1).
        if anchor != 0 {
            if anchors.len() <= anchor {
                anchors.resize(anchor + 1, None);
            }
            anchors[anchor] = Some((node.clone(), weight));
        }
        match stack.last_mut() {
            Some(Frame::Sequence(_, _, parent, _) | Frame::Mapping(_, _, parent, _, _)) => {
                *parent = parent.saturating_add(weight);
            }
            None => {}
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Sequence(_, _, _, items)) => items.push(node),
            Some(Frame::Mapping(_, _, _, entries, pending)) => match pending.take() {
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

fn add_weight(total: usize, weight: usize, at: Position) -> Result<usize, SyntaxError> {
    let total = total.saturating_add(weight);
    if total > MAX_EXPANDED_WEIGHT {
        return Err(SyntaxError {
            at,
            message: format!(
                "the document is too large: over {MAX_EXPANDED_WEIGHT} nodes and bytes, each alias counted as what it repeats"
            ),
        });
    }
    Ok(total)
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

    #[cfg(test)]
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
        // Columns count from 1, as lines do.
        let err = parse("a: b: c\n").unwrap_err();
        assert_eq!(err.at, Position { line: 1, column: 5 }, "{err:?}");
    }

    #[test]
    fn a_second_document_is_refused() {
        assert_eq!(
            parse("a: 1\n---\nb: 2\n").unwrap_err(),
            SyntaxError {
                at: Position { line: 2, column: 1 },
                message: "a second YAML document: a workflow file holds one".into()
            }
        );
        // One document, with or without its markers, and none at all.
        for one in ["a: 1\n", "---\na: 1\n", "---\na: 1\n...\n"] {
            assert_eq!(
                parse(one).unwrap().to_json(),
                serde_json::json!({ "a": 1 }),
                "{one:?}"
            );
        }
        assert_eq!(parse("").unwrap().to_json(), serde_json::json!({}));
        // What follows the end of the document is still read: bad text there is an error.
        let err = parse("a: 1\n...\n]\n").unwrap_err();
        assert_eq!(err.at.line, 3, "{err:?}");
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    /// `a: &x <L bytes>`, `b:` a list of `n` aliases of it, `c: <P bytes>`. Its weight: the
    /// mapping and the list (1 each), the keys (2 each: a node and a byte), the anchored scalar
    /// and every alias of it (1 + L each), the padding (1 + P).
    fn aliased(len: usize, aliases: usize, pad: usize) -> (String, usize) {
        let list = vec!["*x"; aliases].join(", ");
        let yaml = format!(
            "a: &x {}\nb: [{list}]\nc: {}\n",
            "v".repeat(len),
            "p".repeat(pad)
        );
        let weight = 1 + 1 + 3 * 2 + (aliases + 1) * (1 + len) + (1 + pad);
        (yaml, weight)
    }

    /// The weight is counted exactly (a miscount shows here, at the boundary, rather than as
    /// a bomb that never ends).
    #[test]
    fn a_document_may_weigh_the_limit_but_not_more() {
        let (at, weight) = aliased(1023, 8190, 1015);
        assert_eq!(weight, MAX_EXPANDED_WEIGHT);
        assert!(parse(&at).is_ok());
        let (over, weight) = aliased(1023, 8190, 1016);
        assert_eq!(weight, MAX_EXPANDED_WEIGHT + 1);
        let err = parse(&over).unwrap_err();
        assert_eq!(err.at.line, 3, "the padding's line crosses it");
        assert!(err.message.contains(
            "too large: over 8388608 nodes and bytes, each alias counted as what it repeats"
        ));
    }

    #[test]
    fn aliases_of_mappings_and_sequences_are_expanded() {
        let doc =
            parse("base: &b { x: 1, y: [a, b] }\nlist: &l [1, 2]\ncopy: *b\nagain: *l\n").unwrap();
        assert_eq!(
            doc.to_json(),
            serde_json::json!({
                "base": { "x": 1, "y": ["a", "b"] },
                "list": [1, 2],
                "copy": { "x": 1, "y": ["a", "b"] },
                "again": [1, 2]
            })
        );
    }

    #[test]
    fn alias_bombs_are_refused_before_they_are_expanded() {
        // One large scalar repeated by alias.
        let big = "x".repeat(1 << 20);
        let aliases = vec!["*a"; 5000].join(", ");
        let text = format!("description: &a \"{big}\"\ntags: [{aliases}]\n");
        let err = parse(&text).unwrap_err();
        assert!(
            err.message.contains(
                "too large: over 8388608 nodes and bytes, each alias counted as what it repeats"
            ),
            "{err:?}"
        );
        assert_eq!(err.at.line, 2);

        // The classic billion laughs: each level repeats the one before ten times.
        let mut text = String::from("a0: &a0 [lol]\n");
        for level in 1..12 {
            let prev = format!("*a{}", level - 1);
            text.push_str(&format!(
                "a{level}: &a{level} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        // Expanded, it would be 10^11 nodes: that the answer comes at all shows it was not.
        let err = parse(&text).unwrap_err();
        assert!(err.message.contains("too large"), "{err:?}");
    }

    /// The sum that guards expansion, on its own (a broken sum lets a bomb expand, which the
    /// tests above only show by never ending).
    #[test]
    fn the_expanded_weight_may_reach_the_limit_but_not_pass_it() {
        let at = Position { line: 4, column: 2 };
        assert_eq!(add_weight(3, 4, at).unwrap(), 7);
        assert_eq!(
            add_weight(MAX_EXPANDED_WEIGHT - 1, 1, at).unwrap(),
            MAX_EXPANDED_WEIGHT
        );
        let err = add_weight(MAX_EXPANDED_WEIGHT, 1, at).unwrap_err();
        assert_eq!((err.at.line, err.at.column), (4, 2));
        assert!(err.message.contains(
            "too large: over 8388608 nodes and bytes, each alias counted as what it repeats"
        ));
        // No wrap-around past `usize::MAX`.
        assert!(add_weight(usize::MAX, 2, at).is_err());
    }

    /// Every scalar weighs one besides its bytes: a bomb of empty strings is a bomb too.
    #[test]
    fn empty_scalars_count_toward_the_expanded_size() {
        let mut text = format!("a0: &a0 [{}]\n", ["\"\""; 10].join(", "));
        for level in 1..7 {
            let prev = format!("*a{}", level - 1);
            text.push_str(&format!(
                "a{level}: &a{level} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        let err = parse(&text).unwrap_err();
        assert!(err.message.contains("too large"), "{err:?}");
        // One level less (about 1.1 million nodes) is within the limit.
        let smaller: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
        assert!(parse(&smaller).is_ok());
    }

    #[test]
    fn deep_nesting_is_refused_at_the_limit() {
        let ok = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let err = parse(&deep).unwrap_err();
        assert_eq!(err.message, "the document nests deeper than 64 levels");
        // 100,000 levels: refused where the limit is crossed, not at the end.
        let huge = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        let err = parse(&huge).unwrap_err();
        assert_eq!(err.message, "the document nests deeper than 64 levels");
        // (The scanner's own guard answers first here, at level 256 of its look-ahead.)
        assert_eq!(err.at.line, 1);
        assert!(err.at.column <= 257, "{:?}", err.at);
        let block: String = (0..100_000)
            .map(|i| format!("{}- \n", " ".repeat(i % 50)))
            .collect();
        let _ = parse(&block);
    }
}
