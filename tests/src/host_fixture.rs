//! A host that answers its MCP server's questions, for the tests of agent-io's client (Rust's
//! own, and `mcp-host`, which a server on the Python SDK asks): every form is accepted with
//! one answer, every prompt answered `hi` by `host-model`, the roots are `file:///work`, and
//! each question counted.

#![allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); both revisions have it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentio_mcp::rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorData,
    Implementation, ListRootsResult, Root, SamplingCapability,
};
use agentio_mcp::rmcp::service::RequestContext;
use agentio_mcp::rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

/// The host: it declares elicitation and sampling, and answers every form with `answer`.
#[derive(Clone)]
pub struct Host {
    /// How many questions it answered.
    pub asked: Arc<AtomicUsize>,
    answer: Value,
}

impl Host {
    /// A host whose user fills every form with `answer`.
    pub fn answering(answer: Value) -> Self {
        Host {
            asked: Arc::default(),
            answer,
        }
    }
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        capabilities.sampling = Some(SamplingCapability::default());
        ClientConfig::new(capabilities, Implementation::new("agent-io-host", "0.0.0"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.answer.clone()))
    }

    async fn create_message(
        &self,
        _request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        serde_json::from_value(json!({
            "model": "host-model",
            "role": "assistant",
            "content": { "type": "text", "text": "hi" }
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(ListRootsResult::new(vec![Root::new("file:///work")]))
    }
}
