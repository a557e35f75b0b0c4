//! Limits checked on TOOL.md frontmatter before it is parsed for real: its size, how deep it
//! nests, and how large it becomes once aliases are expanded. A YAML parser's cost can grow
//! faster than the text (deep nesting, alias bombs); these checks stream the events once and
//! stop at the first limit crossed.
//!
//! [`split`] and [`parse`] read any Markdown file's frontmatter this way (a TOOL.md, an agent
//! skill's SKILL.md that an MCP server sends).

use saphyr_parser::{Event, Parser};
use serde_json::Value;

/// Which fence of a frontmatter [`split`] did not find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingFence {
    /// The text does not start with a `---` line.
    Opening,
    /// No `---` line closes the frontmatter.
    Closing,
}

/// A Markdown text's YAML frontmatter and the rest: after a byte order mark, if any, a fence
/// line, the YAML, and the next fence line; the rest starts after that line. A fence is `---`
/// with nothing after it but ASCII spaces, tabs and the line break (Unicode whitespace is not
/// trimmed: it would not be a YAML fence either).
pub fn split(text: &str) -> Result<(&str, &str), MissingFence> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let is_fence = |line: &str| line.trim_end_matches([' ', '\t', '\r', '\n']) == "---";
    let mut lines = text.split_inclusive('\n');
    let opening = match lines.next() {
        Some(line) if is_fence(line) => line.len(),
        _ => return Err(MissingFence::Opening),
    };
    let mut yaml_len = 0;
    for line in lines {
        if is_fence(line) {
            let rest = opening + yaml_len + line.len();
            return Ok((&text[opening..opening + yaml_len], &text[rest..]));
        }
        yaml_len += line.len();
    }
    Err(MissingFence::Closing)
}

/// `yaml` (a frontmatter [`split`] gave) as a JSON value, read only once it is within the
/// limits ([`MAX_FRONTMATTER_BYTES`], [`MAX_DEPTH`], [`MAX_EXPANDED_WEIGHT`]).
/// `Err((line in the YAML, 1-based; message))` names the first problem.
pub fn parse(yaml: &str) -> Result<Value, (Option<usize>, String)> {
    check(yaml)?;
    let value: Value = serde_norway::from_str(yaml).map_err(|err| {
        (
            err.location().map(|l| l.line()),
            format!("the frontmatter is not valid YAML: {err}"),
        )
    })?;
    if agentio_core::limits::check_depth(&value, MAX_DEPTH).is_err() {
        return Err((
            None,
            format!("the frontmatter nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    Ok(value)
}

/// The largest frontmatter accepted, in bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 1024 * 1024;
/// How deep collections may nest in a frontmatter.
pub const MAX_DEPTH: usize = 32;
/// How large a frontmatter may become once its aliases are expanded, in nodes plus scalar bytes.
pub const MAX_EXPANDED_WEIGHT: usize = 4 * 1024 * 1024;

/// Checks `yaml` against the limits: `Err((line in the YAML, 1-based; message))` for the first
/// one crossed, or for YAML this event parser refuses (so the real parser never reads a
/// document whose limits were not measured).
pub(crate) fn check(yaml: &str) -> Result<(), (Option<usize>, String)> {
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err((
            None,
            format!(
                "the frontmatter is {} bytes, over the limit of {MAX_FRONTMATTER_BYTES} bytes",
                yaml.len()
            ),
        ));
    }
    let mut parser = Parser::new_from_str(yaml);
    // Open collections: (anchor id, weight so far).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut anchors: Vec<usize> = Vec::new();
    let mut total = 0usize;
    while let Some(event) = parser.next_event() {
        let (event, span) = match event {
            Ok(event) => event,
            // The scanner's own nesting guard: the same refusal, said our way.
            Err(err) if err.info().contains("recursion limit") => {
                return Err((
                    Some(err.marker().line()),
                    format!("the frontmatter nests deeper than {MAX_DEPTH} levels"),
                ));
            }
            // What this parser refuses is refused: the parser that reads it for real must never
            // see a document the limits were not checked on.
            Err(err) => {
                return Err((
                    Some(err.marker().line()),
                    format!("the frontmatter is not valid YAML: {}", err.info()),
                ));
            }
        };
        let line = Some(span.start.line());
        let (anchor, weight) = match event {
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if open.len() >= MAX_DEPTH {
                    return Err((
                        line,
                        format!("the frontmatter nests deeper than {MAX_DEPTH} levels"),
                    ));
                }
                open.push((anchor, 1));
                total += 1;
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some(closed) => closed,
                None => continue,
            },
            Event::Scalar(value, _, anchor, _) => {
                total = total.saturating_add(1 + value.len());
                (anchor, 1 + value.len())
            }
            Event::Alias(id) => {
                let weight = anchors.get(id).copied().unwrap_or(1);
                total = total.saturating_add(weight);
                (0, weight)
            }
            _ => continue,
        };
        if total > MAX_EXPANDED_WEIGHT {
            return Err((
                line,
                format!(
                    "the frontmatter is too large: over {MAX_EXPANDED_WEIGHT} nodes and bytes, each alias counted as what it repeats"
                ),
            ));
        }
        // Anchor 0 is "no anchor" (ids start at 1).
        if anchor != 0 {
            if anchors.len() <= anchor {
                anchors.resize(anchor + 1, 1);
            }
            anchors[anchor] = weight;
        }
        if let Some((_, parent)) = open.last_mut() {
            *parent = parent.saturating_add(weight);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frontmatter_is_the_yaml_between_the_leading_fences() {
        assert_eq!(split("---\nname: a\n---\nbody"), Ok(("name: a\n", "body")));
        assert_eq!(
            split("\u{feff}---\r\nname: a\r\n---  \r\n"),
            Ok(("name: a\r\n", ""))
        );
        assert_eq!(split("---\n---\n"), Ok(("", "")));
        assert_eq!(split("name: a\n---\n"), Err(MissingFence::Opening));
        assert_eq!(split("---\nname: a\n"), Err(MissingFence::Closing));
        assert_eq!(split(" ---\nname: a\n---\n"), Err(MissingFence::Opening));
        assert_eq!(split("---\u{a0}\n---\n"), Err(MissingFence::Opening));
    }

    #[test]
    fn parse_reads_only_what_is_within_the_limits() {
        assert_eq!(
            parse("name: a\nn: 1\n"),
            Ok(serde_json::json!({ "name": "a", "n": 1 }))
        );
        let (over, _) = aliased(1023, 4094, 1016);
        assert!(parse(&over).unwrap_err().1.contains("too large"));
        let deep = format!("a: {}1{}\n", "[".repeat(40), "]".repeat(40));
        assert!(parse(&deep).unwrap_err().1.contains("deeper than 32"));
        let (line, message) = parse("a: 1\nb: [\n").unwrap_err();
        assert!(message.contains("not valid YAML"), "{message}");
        assert!(line.is_some());
    }

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

    #[test]
    fn the_expanded_weight_may_reach_the_limit_but_not_pass_it() {
        let (at, weight) = aliased(1023, 4094, 1015);
        assert_eq!(weight, MAX_EXPANDED_WEIGHT);
        assert_eq!(check(&at), Ok(()));
        let (over, weight) = aliased(1023, 4094, 1016);
        assert_eq!(weight, MAX_EXPANDED_WEIGHT + 1);
        let (line, message) = check(&over).unwrap_err();
        assert_eq!(line, Some(3), "the padding's line crosses it");
        assert!(
            message.contains(
                "too large: over 4194304 nodes and bytes, each alias counted as what it repeats"
            ),
            "{message}"
        );
    }

    #[test]
    fn an_alias_of_a_collection_weighs_the_whole_collection() {
        // Ten aliases of a list of 8 scalars of 1,023 bytes: 10 × 8 KiB, far under; a
        // thousand of a list of ten thousand scalars of 8 bytes: over.
        let small = format!(
            "a: &l [{}]\nb: [{}]\n",
            vec!["x".repeat(1023); 8].join(", "),
            ["*l"; 10].join(", ")
        );
        assert_eq!(check(&small), Ok(()));
        let big = format!(
            "a: &l [{}]\nb: [{}]\n",
            vec!["y".repeat(8); 10_000].join(", "),
            vec!["*l"; 1000].join(", ")
        );
        assert!(check(&big).is_err());
    }

    #[test]
    fn nesting_may_reach_the_limit_but_not_pass_it() {
        let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        assert_eq!(check(&nested(MAX_DEPTH)), Ok(()));
        let (line, message) = check(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(line, Some(1));
        assert!(message.contains("nests deeper than 32 levels"), "{message}");
        // The scanner looks ahead over flow collections that may still turn out to be a key,
        // and its own limit (255 levels) is reached before the 33rd level's event: the same
        // refusal, said the same way.
        let (line, message) = check(&"[".repeat(300)).unwrap_err();
        assert_eq!(line, Some(1));
        assert_eq!(message, "the frontmatter nests deeper than 32 levels");
        // Siblings are not nesting: closed collections no longer count.
        let siblings: String = (0..MAX_DEPTH * 2)
            .map(|i| format!("k{i}: {{a: [1]}}\n"))
            .collect();
        assert_eq!(check(&siblings), Ok(()));
    }

    #[test]
    fn the_size_may_reach_the_limit_but_not_pass_it() {
        let at = format!("a: {}", "x".repeat(MAX_FRONTMATTER_BYTES - 3));
        assert_eq!(at.len(), MAX_FRONTMATTER_BYTES);
        assert_eq!(check(&at), Ok(()));
        let over = format!("{at}x");
        assert_eq!(
            check(&over),
            Err((
                None,
                "the frontmatter is 1048577 bytes, over the limit of 1048576 bytes".to_owned()
            ))
        );
    }

    #[test]
    fn yaml_this_parser_refuses_is_refused_with_its_line() {
        let (line, message) = check("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(line.is_some());
        assert!(
            message.starts_with("the frontmatter is not valid YAML"),
            "{message}"
        );
    }
}
