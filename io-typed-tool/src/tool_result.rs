//! A tool's answer as each provider's tool result takes it: [`tool_result`].

use std::fmt;

use serde_json::{Map, Value, json};

use crate::content::{Content, EmbeddedResource, ResourceBody};
use crate::export::Export;

/// Why a provider's tool result cannot carry some content: the block (its index in the list
/// given to [`tool_result`]) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentRefusal {
    /// A JSON pointer into the content list (`/2`).
    pub pointer: String,
    /// Why, naming the provider and what it takes instead.
    pub reason: String,
}

impl fmt::Display for ContentRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "content {}: {}", self.pointer, self.reason)
    }
}

impl std::error::Error for ContentRefusal {}

/// `{"type": kind, "text": text}`, the text moved in (`json!` would copy it).
pub(crate) fn text_block(kind: &str, text: String) -> Value {
    let mut block = Map::with_capacity(2);
    block.insert("type".into(), Value::from(kind));
    block.insert("text".into(), Value::String(text));
    Value::Object(block)
}

/// Image types Anthropic's image blocks take.
const ANTHROPIC_IMAGES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Media types Gemini's function-response parts take inline.
const GEMINI_INLINE: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/webp",
    "application/pdf",
    "text/plain",
];

/// A tool's answer as `target`'s tool result takes it: the output (when there is one: `None`
/// for a [`Contents`](crate::content::Contents) tool) and its content blocks.
///
/// - [`Export::Mcp`]: a `CallToolResult` (`content`, with the output's JSON text first, and
///   `structuredContent`).
/// - [`Export::OpenAiResponses`]: a `function_call_output`'s `output`: a string when all is
///   text, else a list of `input_text`, `input_image` (a `data:` URL) and `input_file` (PDF)
///   parts.
/// - [`Export::OpenAiChat`]: a `tool` message's `content`: text only (its tool messages take
///   no image), so any other block is refused.
/// - [`Export::Anthropic`]: a `tool_result`'s `content`: `text`, `image` (JPEG, PNG, GIF,
///   WebP) and `document` (PDF) blocks.
/// - [`Export::Gemini`]: a `FunctionResponse` (`response`, an object: `{"output": ...}` and
///   the text as `content`; and `parts` of `inlineData` for images, PDF and plain text).
///
/// Audio reaches no provider's tool result, and is refused everywhere but MCP.
///
/// ```
/// use agentio_tools::Export;
/// use agentio_tools::content::Content;
/// use agentio_tools::tool_result;
/// use serde_json::json;
///
/// let chart = [Content::text("the chart:"), Content::image(b"png", "image/png")];
/// let anthropic = tool_result(Export::Anthropic, None, &chart).unwrap();
/// assert_eq!(anthropic[1]["source"], json!({ "type": "base64", "media_type": "image/png", "data": "cG5n" }));
/// let responses = tool_result(Export::OpenAiResponses { strict: true }, None, &chart).unwrap();
/// assert_eq!(responses[1]["image_url"], "data:image/png;base64,cG5n");
/// let refused = tool_result(Export::OpenAiChat { strict: true }, None, &chart).unwrap_err();
/// assert_eq!(refused.pointer, "/1");
/// ```
pub fn tool_result(
    target: Export,
    output: Option<&Value>,
    content: &[Content],
) -> Result<Value, ContentRefusal> {
    // Gemini takes the output as an object, MCP as both; every other target as its JSON text.
    let text = || output.map(Value::to_string);
    match target {
        Export::Gemini => encoded_tool_result(target, None, output.cloned(), content),
        Export::Mcp => encoded_tool_result(target, text(), output.cloned(), content),
        _ => encoded_tool_result(target, text(), None, content),
    }
}

/// [`tool_result`] with the output already encoded as the target takes it, moved in: its JSON
/// text (every target but Gemini) and its value (Gemini and MCP).
pub(crate) fn encoded_tool_result(
    target: Export,
    output_text: Option<String>,
    output: Option<Value>,
    content: &[Content],
) -> Result<Value, ContentRefusal> {
    let refuse = |i: usize, reason: String| ContentRefusal {
        pointer: format!("/{i}"),
        reason,
    };
    match target {
        Export::Mcp => {
            let mut blocks: Vec<Value> = output_text
                .map(|text| text_block("text", text))
                .into_iter()
                .collect();
            blocks.extend(content.iter().map(Content::to_value));
            let mut result = Map::new();
            result.insert("content".into(), Value::Array(blocks));
            if let Some(output) = output {
                result.insert("structuredContent".into(), output);
            }
            result.insert("isError".into(), json!(false));
            Ok(Value::Object(result))
        }
        Export::OpenAiChat { .. } => {
            let mut text = output_text.unwrap_or_default();
            for (i, block) in content.iter().enumerate() {
                let line = text_of(block).ok_or_else(|| {
                    refuse(
                        i,
                        format!(
                            "an OpenAI Chat Completions `tool` message carries text only, not {}; export for the Responses API, whose tool output takes images and files",
                            what(block)
                        ),
                    )
                })?;
                push_line(&mut text, &line);
            }
            Ok(Value::String(text))
        }
        // The output alone: its text is the whole output.
        Export::OpenAiResponses { .. } if content.is_empty() => {
            Ok(Value::String(output_text.unwrap_or_default()))
        }
        Export::OpenAiResponses { .. } => {
            let mut parts: Vec<Value> = output_text
                .map(|text| text_block("input_text", text))
                .into_iter()
                .collect();
            for (i, block) in content.iter().enumerate() {
                let part = match block {
                    Content::Image { data, mime_type } => json!({
                        "type": "input_image",
                        "image_url": format!("data:{mime_type};base64,{data}"),
                    }),
                    Content::Resource { resource } if is_pdf_blob(resource) => json!({
                        "type": "input_file",
                        "filename": file_name(&resource.uri),
                        "file_data": format!("data:application/pdf;base64,{}", blob_of(resource)),
                    }),
                    other => match text_of(other) {
                        Some(text) => json!({ "type": "input_text", "text": text }),
                        None => {
                            return Err(refuse(
                                i,
                                format!(
                                    "an OpenAI Responses function output takes text, images and PDF files, not {}",
                                    what(other)
                                ),
                            ));
                        }
                    },
                };
                parts.push(part);
            }
            if parts.iter().all(|p| p["type"] == "input_text") {
                let texts: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                return Ok(Value::String(texts.join("\n")));
            }
            Ok(Value::Array(parts))
        }
        Export::Anthropic => {
            let mut blocks: Vec<Value> = output_text
                .map(|text| text_block("text", text))
                .into_iter()
                .collect();
            for (i, block) in content.iter().enumerate() {
                let converted = match block {
                    Content::Image { data, mime_type } => {
                        if !ANTHROPIC_IMAGES.contains(&mime_type.as_str()) {
                            return Err(refuse(
                                i,
                                format!(
                                    "Anthropic's image blocks take {}, not `{mime_type}`",
                                    ANTHROPIC_IMAGES.join(", ")
                                ),
                            ));
                        }
                        json!({
                            "type": "image",
                            "source": { "type": "base64", "media_type": mime_type, "data": data },
                        })
                    }
                    Content::Resource { resource } if is_pdf_blob(resource) => json!({
                        "type": "document",
                        "source": { "type": "base64", "media_type": "application/pdf", "data": blob_of(resource) },
                    }),
                    other => match text_of(other) {
                        Some(text) => json!({ "type": "text", "text": text }),
                        None => {
                            return Err(refuse(
                                i,
                                format!(
                                    "an Anthropic `tool_result` takes text, images and PDF documents, not {}",
                                    what(other)
                                ),
                            ));
                        }
                    },
                };
                blocks.push(converted);
            }
            Ok(Value::Array(blocks))
        }
        Export::Gemini => {
            let mut response = Map::new();
            if let Some(output) = output {
                response.insert("output".into(), output);
            }
            let mut text = String::new();
            let mut parts = Vec::new();
            for (i, block) in content.iter().enumerate() {
                let inline = match block {
                    Content::Image { data, mime_type } => Some((mime_type.as_str(), data.as_str())),
                    Content::Resource { resource } => match (&resource.body, &resource.mime_type) {
                        (ResourceBody::Blob { blob }, Some(mime)) => {
                            Some((mime.as_str(), blob.as_str()))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                match inline {
                    Some((mime_type, data)) if GEMINI_INLINE.contains(&mime_type) => {
                        parts
                            .push(json!({ "inlineData": { "mimeType": mime_type, "data": data } }));
                    }
                    Some((mime_type, _)) => {
                        return Err(refuse(
                            i,
                            format!(
                                "a Gemini function response takes inline {}, not `{mime_type}`",
                                GEMINI_INLINE.join(", ")
                            ),
                        ));
                    }
                    None => match text_of(block) {
                        Some(line) => push_line(&mut text, &line),
                        None => {
                            return Err(refuse(
                                i,
                                format!(
                                    "a Gemini function response takes text, images and PDF, not {}",
                                    what(block)
                                ),
                            ));
                        }
                    },
                }
            }
            if !text.is_empty() {
                response.insert("content".into(), Value::String(text));
            }
            let mut result = Map::new();
            result.insert("response".into(), Value::Object(response));
            if !parts.is_empty() {
                result.insert("parts".into(), Value::Array(parts));
            }
            Ok(Value::Object(result))
        }
    }
}

/// A block as text, when it has a text form: text, embedded text, a link (`name: uri`).
fn text_of(block: &Content) -> Option<String> {
    match block {
        Content::Text { text } => Some(text.clone()),
        Content::Resource { resource } => match &resource.body {
            ResourceBody::Text { text } => Some(text.clone()),
            ResourceBody::Blob { .. } => None,
        },
        Content::ResourceLink { uri, name, .. } => Some(format!("{name}: {uri}")),
        _ => None,
    }
}

fn what(block: &Content) -> String {
    match block {
        Content::Image { mime_type, .. } => format!("an image (`{mime_type}`)"),
        Content::Audio { mime_type, .. } => format!("audio (`{mime_type}`)"),
        Content::Resource { resource } => format!(
            "an embedded binary resource (`{}`)",
            resource.mime_type.as_deref().unwrap_or("no media type")
        ),
        other => format!("a `{}` block", other.kind()),
    }
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

fn is_pdf_blob(resource: &EmbeddedResource) -> bool {
    resource.mime_type.as_deref() == Some("application/pdf")
        && matches!(resource.body, ResourceBody::Blob { .. })
}

fn blob_of(resource: &EmbeddedResource) -> &str {
    match &resource.body {
        ResourceBody::Blob { blob } => blob,
        ResourceBody::Text { text } => text,
    }
}

fn file_name(uri: &str) -> &str {
    uri.rsplit('/')
        .next()
        .filter(|name| !name.is_empty())
        .unwrap_or("document.pdf")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::tests::all;

    #[test]
    fn each_provider_gets_its_own_form() {
        let output = json!({ "n": 1 });
        assert_eq!(
            tool_result(Export::Mcp, Some(&output), &all()[..2]).unwrap(),
            json!({
                "content": [
                    { "type": "text", "text": "{\"n\":1}" },
                    { "type": "text", "text": "hello" },
                    { "type": "image", "data": "aW1n", "mimeType": "image/png" }
                ],
                "structuredContent": { "n": 1 },
                "isError": false
            })
        );
        assert_eq!(
            tool_result(Export::OpenAiResponses { strict: false }, None, &all()).unwrap(),
            json!([
                { "type": "input_text", "text": "hello" },
                { "type": "input_image", "image_url": "data:image/png;base64,aW1n" },
                { "type": "input_text", "text": "body" },
                { "type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERg==" },
                { "type": "input_text", "text": "x: https://example.com/x" }
            ])
        );
        assert_eq!(
            tool_result(
                Export::OpenAiResponses { strict: false },
                Some(&output),
                &[Content::text("t")]
            )
            .unwrap(),
            json!("{\"n\":1}\nt")
        );
        assert_eq!(
            tool_result(Export::Anthropic, Some(&output), &all()).unwrap(),
            json!([
                { "type": "text", "text": "{\"n\":1}" },
                { "type": "text", "text": "hello" },
                { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "aW1n" } },
                { "type": "text", "text": "body" },
                { "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERg==" } },
                { "type": "text", "text": "x: https://example.com/x" }
            ])
        );
        assert_eq!(
            tool_result(Export::Gemini, Some(&output), &all()).unwrap(),
            json!({
                "response": { "output": { "n": 1 }, "content": "hello\nbody\nx: https://example.com/x" },
                "parts": [
                    { "inlineData": { "mimeType": "image/png", "data": "aW1n" } },
                    { "inlineData": { "mimeType": "application/pdf", "data": "JVBERg==" } }
                ]
            })
        );
        assert_eq!(
            tool_result(Export::Gemini, None, &[]).unwrap(),
            json!({ "response": {} })
        );
        assert_eq!(
            tool_result(
                Export::OpenAiChat { strict: true },
                Some(&output),
                &[Content::text("t"), Content::link("u", "n")]
            )
            .unwrap(),
            json!("{\"n\":1}\nt\nn: u")
        );
    }

    #[test]
    fn what_a_provider_cannot_take_is_refused_with_its_index() {
        let audio = Content::audio(b"a", "audio/wav");
        for target in [
            Export::OpenAiChat { strict: false },
            Export::OpenAiResponses { strict: false },
            Export::Anthropic,
            Export::Gemini,
        ] {
            let refusal =
                tool_result(target, None, &[Content::text("ok"), audio.clone()]).unwrap_err();
            assert_eq!(refusal.pointer, "/1", "{target:?}");
            assert!(
                refusal.reason.contains("audio (`audio/wav`)"),
                "{target:?}: {refusal}"
            );
        }
        assert!(tool_result(Export::Mcp, None, &[audio]).is_ok());
        let chat = tool_result(Export::OpenAiChat { strict: false }, None, &all()).unwrap_err();
        assert_eq!(chat.pointer, "/1");
        assert!(chat.reason.contains("Responses API"), "{chat}");
        let tiff = Content::image(b"i", "image/tiff");
        let anthropic =
            tool_result(Export::Anthropic, None, std::slice::from_ref(&tiff)).unwrap_err();
        assert_eq!(
            anthropic.to_string(),
            "content /0: Anthropic's image blocks take image/jpeg, image/png, image/gif, image/webp, not `image/tiff`"
        );
        let gemini = tool_result(Export::Gemini, None, &[tiff]).unwrap_err();
        assert!(gemini.reason.contains("not `image/tiff`"), "{gemini}");
        let zip = Content::embedded_blob("file:///a.zip", "application/zip", b"PK");
        for target in [Export::OpenAiResponses { strict: false }, Export::Anthropic] {
            let refusal = tool_result(target, None, std::slice::from_ref(&zip)).unwrap_err();
            assert!(
                refusal
                    .reason
                    .contains("embedded binary resource (`application/zip`)"),
                "{refusal}"
            );
        }
        let untyped = Content::Resource {
            resource: EmbeddedResource {
                uri: "u".into(),
                mime_type: None,
                body: ResourceBody::Blob {
                    blob: "AA==".into(),
                },
            },
        };
        assert!(
            tool_result(Export::Gemini, None, &[untyped])
                .unwrap_err()
                .reason
                .contains("no media type")
        );
    }

    #[test]
    fn a_file_name_is_the_uri_s_last_segment() {
        assert_eq!(file_name("file:///"), "document.pdf");
        assert_eq!(file_name("report.pdf"), "report.pdf");
        assert_eq!(file_name("file:///r/report.pdf"), "report.pdf");
    }
}
