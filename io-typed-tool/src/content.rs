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
//! ...). [`tool_result`](crate::tool_result) writes content (and an output) as each provider's
//! tool result takes it, refusing with the block's index what a provider does not publish
//! support for.
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
use serde_json::Value;

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// One block of each kind, for this module's tests and `tool_result`'s.
    pub(crate) fn all() -> Vec<Content> {
        vec![
            Content::text("hello"),
            Content::image(b"img", "image/png"),
            Content::embedded_text("file:///a.txt", "text/plain", "body"),
            Content::embedded_blob("file:///r/report.pdf", "application/pdf", b"%PDF"),
            Content::link("https://example.com/x", "x"),
        ]
    }

    #[test]
    fn contents_are_made_from_a_block_a_list_or_an_iterator() {
        assert_eq!(
            Contents::from(Content::text("a")).0,
            vec![Content::text("a")]
        );
        assert_eq!(Contents::from(all()).0, all());
        let collected: Contents = all().into_iter().collect();
        assert_eq!(collected.0, all());
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
    }
}
