//! Our tools beside an rmcp handler's resources, prompts and completions, in one server.
//!
//! [`McpServer::with_handler`] takes any rmcp [`ServerHandler`]: `tools/*` and
//! `logging/setLevel` are the registry's, everything else (resources and their templates and
//! subscriptions, the skills extension's `skills/*` and `resources/directory/read`, prompts,
//! completions, other requests and notifications) is the handler's,
//! and `initialize` declares both sides' capabilities. The other direction needs nothing new:
//! an rmcp handler of your own can hold an [`McpServer`] and forward `list_tools` and
//! `call_tool` to it, since it is a `ServerHandler` too.

#![allow(deprecated)] // rmcp marks `resources/subscribe` legacy-only; clients before 2026-07-28 use it.

use std::sync::Arc;

use agentio_core::BoxFuture;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::McpServer;

/// [`ServerHandler`]'s non-tool half, object-safe, so that [`McpServer`] stays one type
/// whatever handler it serves beside its tools.
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn info(&self) -> ServerConfig;
    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<CompleteResult, McpError>>;
    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<(), McpError>>;
    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<GetPromptResponse, McpError>>;
    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListPromptsResult, McpError>>;
    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListResourcesResult, McpError>>;
    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListResourceTemplatesResult, McpError>>;
    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ReadResourceResponse, McpError>>;
    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ReadResourceDirectoryResult, McpError>>;
    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListSkillsResult, McpError>>;
    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<GetSkillResult, McpError>>;
    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<(), McpError>>;
    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<(), McpError>>;
    fn custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<CustomResult, McpError>>;
    fn accepted_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter>;
    fn listen(&self, context: SubscriptionContext) -> BoxFuture<'_, Result<(), McpError>>;
    fn initialized(&self, context: NotificationContext<RoleServer>) -> BoxFuture<'_, ()>;
    fn roots_list_changed(&self, context: NotificationContext<RoleServer>) -> BoxFuture<'_, ()>;
    fn custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> BoxFuture<'_, ()>;
}

impl<H: ServerHandler + 'static> DynHandler for H {
    fn info(&self) -> ServerConfig {
        self.get_info()
    }
    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<CompleteResult, McpError>> {
        Box::pin(ServerHandler::complete(self, request, context))
    }
    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<(), McpError>> {
        Box::pin(ServerHandler::set_level(self, request, context))
    }
    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<GetPromptResponse, McpError>> {
        Box::pin(ServerHandler::get_prompt(self, request, context))
    }
    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListPromptsResult, McpError>> {
        Box::pin(ServerHandler::list_prompts(self, request, context))
    }
    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListResourcesResult, McpError>> {
        Box::pin(ServerHandler::list_resources(self, request, context))
    }
    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListResourceTemplatesResult, McpError>> {
        Box::pin(ServerHandler::list_resource_templates(
            self, request, context,
        ))
    }
    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ReadResourceResponse, McpError>> {
        Box::pin(ServerHandler::read_resource(self, request, context))
    }
    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ReadResourceDirectoryResult, McpError>> {
        Box::pin(ServerHandler::read_resource_directory(
            self, request, context,
        ))
    }
    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<ListSkillsResult, McpError>> {
        Box::pin(ServerHandler::list_skills(self, request, context))
    }
    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<GetSkillResult, McpError>> {
        Box::pin(ServerHandler::get_skill(self, request, context))
    }
    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<(), McpError>> {
        Box::pin(ServerHandler::subscribe(self, request, context))
    }
    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<(), McpError>> {
        Box::pin(ServerHandler::unsubscribe(self, request, context))
    }
    fn custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> BoxFuture<'_, Result<CustomResult, McpError>> {
        Box::pin(ServerHandler::on_custom_request(self, request, context))
    }
    fn accepted_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        ServerHandler::accepted_subscription_filter(self, requested)
    }
    fn listen(&self, context: SubscriptionContext) -> BoxFuture<'_, Result<(), McpError>> {
        Box::pin(ServerHandler::listen(self, context))
    }
    fn initialized(&self, context: NotificationContext<RoleServer>) -> BoxFuture<'_, ()> {
        Box::pin(ServerHandler::on_initialized(self, context))
    }
    fn roots_list_changed(&self, context: NotificationContext<RoleServer>) -> BoxFuture<'_, ()> {
        Box::pin(ServerHandler::on_roots_list_changed(self, context))
    }
    fn custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(ServerHandler::on_custom_notification(
            self,
            notification,
            context,
        ))
    }
}

impl McpServer {
    /// Serves `handler`'s resources, prompts and completions beside the registry's tools:
    /// `tools/*` and `logging/setLevel` are the registry's, everything else (resources, their
    /// templates and subscriptions, prompts, completions, other requests and notifications)
    /// goes to `handler`, which also hears `logging/setLevel`. The server's capabilities are
    /// the handler's plus tools and logging; its name, version and instructions are this
    /// server's ([`Self::with_server_info`], [`Self::with_instructions`]), the handler's
    /// instructions when this server has none. The other direction needs nothing new: an rmcp
    /// handler of your own can hold an `McpServer` and forward `list_tools` and `call_tool` to
    /// it, since it is a `ServerHandler` too. The handler implements the `ServerHandler` of
    /// [`rmcp`](crate::rmcp), the version this crate is built on.
    ///
    /// One handler serves every session (HTTP clones the server per session, and the clones
    /// share it): keep per-session state in the request context, not in the handler.
    ///
    /// ```
    /// use agentio_mcp::McpServer;
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    /// use rmcp::model::{ListResourcesResult, PaginatedRequestParams, Resource, ServerCapabilities, ServerConfig};
    /// use rmcp::service::RequestContext;
    /// use rmcp::{ErrorData, RoleServer, ServerHandler};
    ///
    /// /// An rmcp handler with one resource.
    /// struct Docs;
    /// impl ServerHandler for Docs {
    ///     fn get_info(&self) -> ServerConfig {
    ///         ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
    ///     }
    ///     async fn list_resources(&self, _: Option<PaginatedRequestParams>, _: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
    ///         Ok(ListResourcesResult::with_all_items(vec![Resource::new("docs://readme", "readme")]))
    ///     }
    /// }
    ///
    /// #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct City { name: String }
    /// /// Says hello to a city.
    /// #[tool(id = "demo.hello")]
    /// async fn hello(city: City) -> Result<City, ToolError> { Ok(city) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(HelloTool)?;
    /// let server = McpServer::new(registry)?.with_handler(Docs);
    /// let capabilities = server.get_info().capabilities;
    /// assert!(capabilities.tools.is_some() && capabilities.resources.is_some() && capabilities.logging.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_handler(mut self, handler: impl ServerHandler + 'static) -> Self {
        self.set_handler(Arc::new(handler));
        self
    }
}
