//! Limits checked on TOOL.md frontmatter before it is parsed for real: its size, how deep it
//! nests, and how large it becomes once aliases are expanded. A YAML parser's cost can grow
//! faster than the text (deep nesting, alias bombs); these checks stream the events once and
//! stop at the first limit crossed.

use saphyr_parser::{Event, Parser};

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
                    "the frontmatter is too large once its aliases are expanded (over {MAX_EXPANDED_WEIGHT} nodes and bytes)"
                ),
            ));
        }
        if anchor > 0 {
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
