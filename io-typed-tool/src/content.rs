//! Content a tool returns beside its structured output, or instead of it: text, images,
//! audio, embedded resources and resource links, as typed Rust values.
//!
//! Two ways to return content:
//! - **Beside** a structured output: the body calls [`ToolContext::attach`] and returns its
//!   typed output as ever. The output is still checked against its schema; the content goes
//!   to hosts that carry it ([`CallOptions::content`]): an MCP server sends it after the
//!   output's JSON text block, next to `structuredContent`.
//! - **Instead of** one: the tool's output type is [`Contents`]. Its schema is that of a list
//!   of content blocks, so the registry checks the blocks' shape like any output; an MCP server
//!   then sends them as the result's `content`, with no `structuredContent` and no
//!   `outputSchema` (there is no structured output to describe).
//!
//! [`Content`] serializes as MCP's `ContentBlock` (`{"type": "image", "data", "mimeType"}`,
//! ...). [`tool_result`] writes content (and an output) as each provider's tool result takes
//! it, refusing with the block's index what a provider does not publish support for.
//!
//! Decisions, where the specifications leave room:
//! - Binary data is base64 in the value (MCP's wire form); the constructors taking bytes encode
//!   it. A block whose `data` is not base64 is still a string to the schema: a provider or
//!   client decodes it.
//! - A resource link (`resource_link`) reaches a provider as a line of text (`name: uri`): a
//!   model reads a URI as text; no provider's tool result has a link part.
//! - Attachments made while no host collects them (a plain [`ToolRegistry::call`]) are dropped:
//!   the call's output is what such a caller asked for.
//!
//! ```
//! use agentio_tools::content::Content;
//! use serde_json::json;
//!
//! let png = Content::image(b"\x89PNG\r\n\x1a\n", "image/png");
//! assert_eq!(
//!     serde_json::to_value(&png).unwrap(),
//!     json!({ "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" })
//! );
//! let note = Content::embedded_text("file:///notes/today.md", "text/markdown", "# Today");
//! assert_eq!(
//!     serde_json::to_value(&note).unwrap(),
//!     json!({ "type": "resource", "resource": {
//!         "uri": "file:///notes/today.md", "mimeType": "text/markdown", "text": "# Today"
//!     } })
//! );
//! ```
//!
//! [`ToolContext::attach`]: crate::ToolContext::attach
//! [`CallOptions::content`]: crate::CallOptions::content
//! [`ToolRegistry::call`]: crate::ToolRegistry::call

use std::fmt;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::export::Export;

/// One content block, as MCP's `ContentBlock` on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image's bytes, base64.
        data: String,
        /// Its media type (`image/png`, ...).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// The audio's bytes, base64.
        data: String,
        /// Its media type (`audio/wav`, ...).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its media type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// What it is, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// An embedded resource: its URI, media type and contents (text or base64 bytes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// Its media type, when known.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its contents.
    #[serde(flatten)]
    pub body: ResourceBody,
}

/// What an embedded resource holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ResourceBody {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// Bytes, base64.
    Blob {
        /// The bytes, base64.
        blob: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from the image's bytes (encoded as base64 here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: BASE64.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An image block from base64 the caller already has.
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from the audio's bytes (encoded as base64 here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: BASE64.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 the caller already has.
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                body: ResourceBody::Text { text: text.into() },
            },
        }
    }

    /// An embedded binary resource from its bytes (encoded as base64 here).
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                body: ResourceBody::Blob {
                    blob: BASE64.encode(bytes),
                },
            },
        }
    }

    /// A link to a resource.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
            description: None,
        }
    }

    /// The block's MCP `type` (`text`, `image`, `audio`, `resource`, `resource_link`).
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Text { .. } => "text",
            Content::Image { .. } => "image",
            Content::Audio { .. } => "audio",
            Content::Resource { .. } => "resource",
            Content::ResourceLink { .. } => "resource_link",
        }
    }

    /// The block as MCP JSON.
    pub fn to_value(&self) -> Value {
        // A `Content` is strings in maps: serializing it cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A tool output made of content blocks only (see the [module](self) documentation).
///
/// ```
/// use agentio_tools::content::{Content, Contents};
/// use agentio_tools::{ToolError, ToolRegistry, tool};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
/// struct Empty {}
///
/// /// Draws a one-pixel chart.
/// #[tool(id = "chart.draw")]
/// async fn draw(_: Empty) -> Result<Contents, ToolError> {
///     Ok(Contents::from(vec![Content::text("the chart:"), Content::image([0u8; 4], "image/png")]))
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(DrawTool)?;
/// assert!(registry.returns_content_only("chart.draw"));
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
/// let out = runtime.block_on(registry.call("chart.draw", serde_json::json!({})))?;
/// assert_eq!(out[1]["type"], "image");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    JsonSchema,
    agentio_core::AgentOutput,
)]
#[serde(transparent)]
#[schemars(transparent)]
pub struct Contents(pub Vec<Content>);

impl From<Vec<Content>> for Contents {
    fn from(blocks: Vec<Content>) -> Self {
        Contents(blocks)
    }
}

impl From<Content> for Contents {
    fn from(block: Content) -> Self {
        Contents(vec![block])
    }
}

impl FromIterator<Content> for Contents {
    fn from_iter<I: IntoIterator<Item = Content>>(iter: I) -> Self {
        Contents(iter.into_iter().collect())
    }
}

/// Where a call's attached content goes: give one to [`CallOptions::content`] and read it
/// after the call. Clones share the list.
///
/// [`CallOptions::content`]: crate::CallOptions::content
#[derive(Clone, Default)]
pub struct ContentCollector {
    blocks: Arc<Mutex<Vec<Content>>>,
}

impl ContentCollector {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn push(&self, block: Content) {
        self.blocks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(block);
    }

    /// The blocks attached so far, in order, leaving the collector empty.
    pub fn take(&self) -> Vec<Content> {
        std::mem::take(&mut *self.blocks.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl fmt::Debug for ContentCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.blocks.lock().map(|b| b.len()).unwrap_or_default();
        f.debug_struct("ContentCollector")
            .field("blocks", &count)
            .finish()
    }
}

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
/// for a [`Contents`] tool) and its content blocks.
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
/// use agentio_tools::content::{Content, tool_result};
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
    let refuse = |i: usize, reason: String| ContentRefusal {
        pointer: format!("/{i}"),
        reason,
    };
    let output_text = output.map(|value| serde_json::to_string(value).unwrap_or_default());
    match target {
        Export::Mcp => {
            let mut blocks: Vec<Value> = output_text
                .map(|text| json!({ "type": "text", "text": text }))
                .into_iter()
                .collect();
            blocks.extend(content.iter().map(Content::to_value));
            let mut result = Map::new();
            result.insert("content".into(), Value::Array(blocks));
            if let Some(output) = output {
                result.insert("structuredContent".into(), output.clone());
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
        Export::OpenAiResponses { .. } => {
            let mut parts: Vec<Value> = output_text
                .map(|text| json!({ "type": "input_text", "text": text }))
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
                .map(|text| json!({ "type": "text", "text": text }))
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
                response.insert("output".into(), output.clone());
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

    fn all() -> Vec<Content> {
        vec![
            Content::text("hello"),
            Content::image(b"img", "image/png"),
            Content::embedded_text("file:///a.txt", "text/plain", "body"),
            Content::embedded_blob("file:///r/report.pdf", "application/pdf", b"%PDF"),
            Content::link("https://example.com/x", "x"),
        ]
    }

    #[test]
    fn blocks_are_mcp_content_blocks() {
        let values: Vec<Value> = all().iter().map(Content::to_value).collect();
        assert_eq!(
            values,
            vec![
                json!({ "type": "text", "text": "hello" }),
                json!({ "type": "image", "data": "aW1n", "mimeType": "image/png" }),
                json!({ "type": "resource", "resource": { "uri": "file:///a.txt", "mimeType": "text/plain", "text": "body" } }),
                json!({ "type": "resource", "resource": { "uri": "file:///r/report.pdf", "mimeType": "application/pdf", "blob": "JVBERg==" } }),
                json!({ "type": "resource_link", "uri": "https://example.com/x", "name": "x" }),
            ]
        );
        for (block, value) in all().iter().zip(&values) {
            assert_eq!(
                &serde_json::from_value::<Content>(value.clone()).unwrap(),
                block
            );
            assert_eq!(value["type"], block.kind());
        }
        assert_eq!(
            Content::audio(b"a", "audio/wav").to_value(),
            json!({ "type": "audio", "data": "YQ==", "mimeType": "audio/wav" })
        );
        assert_eq!(
            Content::audio_base64("YQ==", "audio/wav"),
            Content::audio(b"a", "audio/wav")
        );
        assert_eq!(
            Content::image_base64("aW1n", "image/png"),
            Content::image(b"img", "image/png")
        );
    }

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
    fn a_collector_hands_over_what_was_attached_once() {
        let collector = ContentCollector::new();
        let shared = collector.clone();
        shared.push(Content::text("a"));
        shared.push(Content::text("b"));
        assert_eq!(format!("{collector:?}"), "ContentCollector { blocks: 2 }");
        assert_eq!(
            collector.take(),
            vec![Content::text("a"), Content::text("b")]
        );
        assert!(collector.take().is_empty());
        assert_eq!(file_name("file:///"), "document.pdf");
        assert_eq!(file_name("report.pdf"), "report.pdf");
    }
}
