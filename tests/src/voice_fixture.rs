//! Tools that speak beyond their output: content blocks, log lines, questions to the client's
//! user and model (Rust's rmcp client and Python's `mcp` SDK drive them).

use agentio_core::{AgentInput, AgentOutput};
use agentio_mcp::rmcp::model::{
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use agentio_mcp::rmcp::service::RequestContext;
use agentio_mcp::rmcp::{ErrorData, RoleServer, ServerHandler};
use agentio_tools::content::{Content, Contents};
use agentio_tools::voice::{Elicited, LogLevel, Questions, SamplingRequest};
use agentio_tools::{ToolContext, ToolError, ToolRegistry, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// No arguments.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct Empty {}

/// What a tool says.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct Said {
    /// What the tool says.
    pub said: String,
}

/// A bounded count, to see its schema.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct Counted {
    /// How many.
    pub n: u32,
}

/// A confirmation.
#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
pub struct Confirm {
    /// Yes or no.
    pub sure: bool,
}

/// The first bytes of a PNG.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Draws a chart: content only.
#[tool(id = "voice.chart")]
pub async fn chart(_: Empty) -> Result<Contents, ToolError> {
    Ok(Contents::from(vec![
        Content::text("the chart:"),
        Content::image(PNG, "image/png"),
        Content::embedded_text("chart://data", "text/csv", "x,y\n1,2"),
    ]))
}

/// Reports, with the chart attached.
#[tool(id = "voice.report")]
pub async fn report(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    ctx.attach(Content::image(PNG, "image/png"));
    Ok(Said {
        said: "see the chart".into(),
    })
}

/// Logs three lines.
#[tool(id = "voice.chatty")]
pub async fn chatty(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    let heard = [
        ctx.log(LogLevel::Debug, "starting"),
        ctx.log(LogLevel::Info, json!({ "step": 1 })),
        ctx.log(LogLevel::Warning, "almost out of room"),
    ];
    Ok(Said {
        said: format!("{heard:?}"),
    })
}

/// Asks its user whether they are sure.
#[tool(id = "voice.ask")]
pub async fn ask(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    let said = match ctx.elicit::<Confirm>("Are you sure?").await? {
        Elicited::Accepted(Confirm { sure }) => format!("sure: {sure}"),
        Elicited::Declined => "declined".into(),
        Elicited::Cancelled => "cancelled".into(),
    };
    Ok(Said { said })
}

/// Asks twice: on 2026-07-28, two rounds, the first answer carried in the sealed state.
#[tool(id = "voice.twice")]
pub async fn twice(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    let rounds = ctx.state::<u32>().unwrap_or(0);
    ctx.keep_state(rounds + 1);
    let first = ctx.elicit::<Confirm>("First?").await?;
    let second = ctx.elicit::<Confirm>("Second?").await?;
    Ok(Said {
        said: format!("{first:?} {second:?} after {rounds} earlier rounds"),
    })
}

/// Asks the client's model.
#[tool(id = "voice.muse")]
pub async fn muse(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    let answer = ctx.sample(SamplingRequest::prompt("Say hi", 16)).await?;
    Ok(Said {
        said: format!("{} said {}", answer.model, answer.text().unwrap_or("?")),
    })
}

/// Asks for the client's roots.
#[tool(id = "voice.roots")]
pub async fn roots(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    let answers = ctx.ask(&Questions::new().list_roots("roots")).await?;
    let uris: Vec<String> = answers.roots("roots")?.into_iter().map(|r| r.uri).collect();
    Ok(Said {
        said: uris.join(" "),
    })
}

/// Says which capabilities the client declared.
#[tool(id = "voice.can")]
pub async fn can(_: Empty, ctx: &ToolContext) -> Result<Said, ToolError> {
    let said: Vec<String> = ["elicitation", "sampling", "roots", "tasks"]
        .iter()
        .map(|c| format!("{c}:{}", ctx.client_can(c)))
        .collect();
    Ok(Said {
        said: said.join(" "),
    })
}

/// Counts.
#[tool(id = "voice.count")]
pub async fn count(input: Counted) -> Result<Said, ToolError> {
    Ok(Said {
        said: input.n.to_string(),
    })
}

/// Every voice tool in one registry.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    add_to(&mut registry);
    registry
}

/// Registers every voice tool in `registry`.
pub fn add_to(registry: &mut ToolRegistry) {
    registry
        .register(ChartTool)
        .expect("a voice tool registers");
    registry
        .register(ReportTool)
        .expect("a voice tool registers");
    registry
        .register(ChattyTool)
        .expect("a voice tool registers");
    registry.register(AskTool).expect("a voice tool registers");
    registry.register(MuseTool).expect("a voice tool registers");
    registry
        .register(TwiceTool)
        .expect("a voice tool registers");
    registry
        .register(CountTool)
        .expect("a voice tool registers");
    registry
        .register(RootsTool)
        .expect("a voice tool registers");
    registry.register(CanTool).expect("a voice tool registers");
}

/// An rmcp handler of one's own, with one resource.
pub struct Docs;

impl ServerHandler for Docs {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities).with_instructions("Docs live at docs://.")
    }

    /// Of what a client listens for (2026-07-28 `subscriptions/listen`), only resource list
    /// changes are served.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        (requested.resources_list_changed == Some(true)).then(|| {
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build()
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "docs://readme",
            "readme",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<agentio_mcp::rmcp::model::ReadResourceResponse, ErrorData> {
        if request.uri != "docs://readme" {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text("Read me.", "docs://readme")])
                .into(),
        )
    }
}
