//! One registry, every client: tool definitions for OpenAI (Chat Completions and Responses),
//! Anthropic, Gemini and MCP, each with its schema in that client's profile
//! ([`agentio_core::profiles`]) and a provider-safe name that maps back to the tool.
//!
//! Tool ids contain dots (`kb.search`), which OpenAI and Anthropic refuse in names. Names are
//! mapped reversibly: `.` becomes `_` (ids never contain `_`), and when several majors of one id
//! are registered, `@2` becomes `__2`. A name over the provider's limit (64 characters, the
//! bound every provider accepts) is refused at export time, and
//! [`ToolRegistry::tool_for_provider_name`] maps a name a model sends back to the tool.

use std::collections::BTreeMap;
use std::fmt;

use agentio_core::profiles::{Profile, Refusal, Relaxation};
use serde_json::{Map, Value, json};

use crate::registry::ToolRegistry;

/// A client to export tool definitions for: each gets its schemas in that client's profile
/// and provider-safe names that map back to the tools.
///
/// ```
/// use agentio_tools::{Export, ToolError, tool, tool_registry};
/// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
/// # struct Query { q: String }
/// /// Searches the knowledge base.
/// #[tool(id = "kb.search", idempotent)]
/// async fn search(query: Query) -> Result<Query, ToolError> { Ok(query) }
///
/// let registry = tool_registry![SearchTool].unwrap();
/// let openai = registry.export(Export::OpenAiChat { strict: true }).unwrap();
/// assert_eq!(openai[0]["function"]["name"], "kb_search");
/// assert_eq!(openai[0]["function"]["parameters"]["additionalProperties"], false);
/// let anthropic = registry.export(Export::Anthropic).unwrap();
/// assert_eq!(anthropic[0]["input_schema"]["type"], "object");
/// let mcp = registry.export(Export::Mcp).unwrap();
/// assert_eq!(mcp[0]["name"], "kb.search");
/// assert_eq!(mcp[0]["annotations"]["readOnlyHint"], true);
/// assert_eq!(registry.tool_for_provider_name("kb_search").as_deref(), Some("kb.search"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Export {
    /// Chat Completions `tools`: `{type: "function", function: {name, description, parameters,
    /// strict}}`; with `strict`, parameters in OpenAI's strict profile.
    OpenAiChat {
        /// Ask for strict mode (structured outputs for arguments).
        strict: bool,
    },
    /// Responses API `tools`: `{type: "function", name, description, parameters, strict}`.
    OpenAiResponses {
        /// Ask for strict mode.
        strict: bool,
    },
    /// Messages API `tools`: `{name, description, input_schema}`.
    Anthropic,
    /// `FunctionDeclaration`s: `{name, description, parameters}` in the OpenAPI subset.
    Gemini,
    /// MCP `tools/list` entries: `{name, title, description, inputSchema, outputSchema,
    /// annotations}`, with hints derived from the contract. Every tool has an `outputSchema`,
    /// whatever its output's type (protocol 2026-07-28 allows any; for an older peer, a server
    /// leaves out one whose root is not an object, as [rmcp] does), except a tool whose output
    /// is [`Contents`](crate::content::Contents): it answers in content blocks.
    ///
    /// [rmcp]: https://docs.rs/rmcp
    Mcp,
}

/// Why an export has no definition for some tools: each tool with its refusals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportError {
    /// Each refused tool (by identity), with where and why.
    pub problems: Vec<(String, Refusal)>,
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("some tools cannot be exported:")?;
        for (tool, refusal) in &self.problems {
            write!(f, "\n  - {tool}: {refusal}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ExportError {}

/// An export with what it leaves out: the definitions, and each keyword a client's form drops
/// (it cannot express it; the registry still checks it on every call) with its tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportReport {
    /// The definitions, as [`ToolRegistry::export`] returns them.
    pub tools: Vec<Value>,
    /// Each left-out keyword: the tool (by identity), and where (`/inputs...`, a pointer into
    /// its input schema) and what.
    pub relaxed: Vec<(String, Relaxation)>,
}

/// The longest tool name every provider accepts (OpenAI 64, Anthropic 64 per its guide).
pub const MAX_PROVIDER_NAME: usize = 64;

impl ToolRegistry {
    /// Every registered tool's definition for `target`, in identity order, or every problem
    /// (an example of each target is in [`Export`]'s documentation).
    ///
    /// ```
    /// use agentio_tools::{Export, ToolError, tool, tool_registry};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Query { q: String, limit: Option<u8> }
    ///
    /// /// Searches the knowledge base.
    /// #[tool(id = "kb.search")]
    /// async fn search(query: Query) -> Result<Query, ToolError> { Ok(query) }
    ///
    /// let registry = tool_registry![SearchTool].unwrap();
    /// let gemini = registry.export(Export::Gemini).unwrap();
    /// assert_eq!(gemini[0]["name"], "kb_search");
    /// // Gemini's OpenAPI subset: an optional field is `nullable`, not a type list.
    /// assert_eq!(gemini[0]["parameters"]["properties"]["limit"]["nullable"], true);
    /// let responses = registry.export(Export::OpenAiResponses { strict: false }).unwrap();
    /// assert_eq!((responses[0]["type"].as_str(), responses[0]["name"].as_str()), (Some("function"), Some("kb_search")));
    /// ```
    pub fn export(&self, target: Export) -> Result<Vec<Value>, ExportError> {
        self.export_report(target).map(|report| report.tools)
    }

    /// [`Self::export`], with every keyword each definition leaves out for its client (a
    /// narrowing the client cannot express; the registry checks it on every call all the
    /// same). A host that wants nothing left out refuses a report whose `relaxed` is not
    /// empty.
    ///
    /// ```
    /// use agentio_core::io;
    /// use agentio_tools::{Export, ToolError, tool, tool_registry};
    ///
    /// #[io(input, output)]
    /// struct Query {
    ///     #[schemars(length(min = 2, max = 200))]
    ///     q: String,
    /// }
    ///
    /// /// Searches.
    /// #[tool(id = "kb.search")]
    /// async fn search(query: Query) -> Result<Query, ToolError> { Ok(query) }
    ///
    /// let registry = tool_registry![SearchTool].unwrap();
    /// let report = registry.export_report(Export::OpenAiChat { strict: true }).unwrap();
    /// let relaxed: Vec<String> = report.relaxed.iter().map(|(tool, r)| format!("{tool} {} {}", r.pointer, r.keyword)).collect();
    /// assert_eq!(relaxed, ["kb.search@1 /inputs/properties/q minLength", "kb.search@1 /inputs/properties/q maxLength"]);
    /// // Gemini's subset has both bounds: nothing left out.
    /// assert!(registry.export_report(Export::Gemini).unwrap().relaxed.is_empty());
    /// ```
    pub fn export_report(&self, target: Export) -> Result<ExportReport, ExportError> {
        let mut relaxed = Vec::new();
        let mut problems = Vec::new();
        let mut definitions = Vec::new();
        let mut names: BTreeMap<String, String> = BTreeMap::new();
        for (identity, contract, inputs, outputs) in self.registered() {
            let mut refuse = |pointer: &str, reason: String| {
                problems.push((
                    identity.to_owned(),
                    Refusal {
                        pointer: pointer.to_owned(),
                        reason,
                    },
                ));
            };
            let name = match target {
                Export::Mcp => self.mcp_name(identity),
                _ => self.provider_name_of(identity),
            };
            if name.len() > MAX_PROVIDER_NAME {
                refuse(
                    "/name",
                    format!(
                        "the name `{name}` is {} characters, over the providers' limit of {MAX_PROVIDER_NAME}",
                        name.len()
                    ),
                );
                continue;
            }
            if let Some(other) = names.insert(name.clone(), identity.to_owned()) {
                refuse("/name", format!("the name `{name}` is also `{other}`'s"));
                continue;
            }
            let profile = match target {
                Export::OpenAiChat { strict: true } | Export::OpenAiResponses { strict: true } => {
                    Profile::OpenAiStrict
                }
                Export::OpenAiChat { .. } | Export::OpenAiResponses { .. } => Profile::Canonical,
                Export::Anthropic => Profile::Anthropic,
                Export::Gemini => Profile::Gemini,
                Export::Mcp => Profile::Mcp,
            };
            let parameters = match inputs.profile(profile) {
                Ok(schema) => {
                    for relaxation in inputs.relaxations(profile).unwrap_or_default() {
                        relaxed.push((
                            identity.to_owned(),
                            Relaxation {
                                pointer: format!("/inputs{}", relaxation.pointer),
                                keyword: relaxation.keyword.clone(),
                            },
                        ));
                    }
                    schema.clone()
                }
                Err(refusals) => {
                    for refusal in refusals {
                        refuse(
                            &format!("/inputs{}", refusal.pointer),
                            refusal.reason.clone(),
                        );
                    }
                    continue;
                }
            };
            let description = contract.description.clone();
            definitions.push(match target {
                Export::OpenAiChat { strict } => json!({
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": description,
                        "parameters": parameters,
                        "strict": strict,
                    }
                }),
                Export::OpenAiResponses { strict } => json!({
                    "type": "function",
                    "name": name,
                    "description": description,
                    "parameters": parameters,
                    "strict": strict,
                }),
                Export::Anthropic => json!({
                    "name": name,
                    "description": description,
                    "input_schema": parameters,
                }),
                Export::Gemini => json!({
                    "name": name,
                    "description": description,
                    "parameters": parameters,
                }),
                Export::Mcp => {
                    let mut tool = Map::new();
                    tool.insert("name".into(), json!(name));
                    tool.insert("title".into(), json!(contract.name));
                    tool.insert("description".into(), json!(description));
                    tool.insert("inputSchema".into(), parameters);
                    // Every structured output has a schema: from protocol 2026-07-28,
                    // `structuredContent` may be any JSON value. A server answering an older
                    // peer drops a schema whose root is not `"type": "object"` (rmcp does), as
                    // that peer expects. A tool answering in content blocks has none.
                    if !self.returns_content_only(identity) {
                        let output = outputs
                            .profile(Profile::Mcp)
                            .or_else(|_| outputs.profile(Profile::Canonical))
                            .unwrap_or(outputs.schema());
                        tool.insert("outputSchema".into(), output.clone());
                    }
                    tool.insert("annotations".into(), annotations(contract));
                    Value::Object(tool)
                }
            });
        }
        if problems.is_empty() {
            Ok(ExportReport {
                tools: definitions,
                relaxed,
            })
        } else {
            Err(ExportError { problems })
        }
    }

    /// The provider-safe name of a registered tool (`kb.search` -> `kb_search`; with several
    /// majors of one id registered, `kb.search@2` -> `kb_search__2`). `None` for an id that
    /// names no single tool.
    ///
    /// ```
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Query { q: String }
    /// /// Searches (first major).
    /// #[tool(id = "kb.search", version = "1.4.0")]
    /// async fn search_v1(query: Query) -> Result<Query, ToolError> { Ok(query) }
    /// /// Searches (second major).
    /// #[tool(id = "kb.search", version = "2.0.0")]
    /// async fn search_v2(query: Query) -> Result<Query, ToolError> { Ok(query) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(SearchV1Tool).unwrap();
    /// registry.register(SearchV2Tool).unwrap();
    /// assert_eq!(registry.provider_name("kb.search@2").as_deref(), Some("kb_search__2"));
    /// // Two majors: the bare id is ambiguous.
    /// assert_eq!(registry.provider_name("kb.search"), None);
    /// ```
    pub fn provider_name(&self, tool_id: &str) -> Option<String> {
        let identity = self
            .registered()
            .find(|(identity, contract, _, _)| {
                *identity == tool_id
                    || (contract.id == tool_id && self.majors_of(&contract.id) == 1)
            })?
            .0;
        Some(self.provider_name_of(identity))
    }

    /// The tool a provider-safe name (or an MCP name) stands for, as `id@major` when several
    /// majors are registered and as the id otherwise; `None` when no tool has that name.
    ///
    /// ```
    /// use agentio_tools::{ToolError, ToolRegistry, tool};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Query { q: String }
    /// /// Searches (first major).
    /// #[tool(id = "kb.search", version = "1.4.0")]
    /// async fn search_v1(query: Query) -> Result<Query, ToolError> { Ok(query) }
    /// /// Searches (second major).
    /// #[tool(id = "kb.search", version = "2.0.0")]
    /// async fn search_v2(query: Query) -> Result<Query, ToolError> { Ok(query) }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(SearchV1Tool).unwrap();
    /// registry.register(SearchV2Tool).unwrap();
    /// assert_eq!(registry.tool_for_provider_name("kb_search__1").as_deref(), Some("kb.search@1"));
    /// // The name MCP lists it under maps back too.
    /// let mcp = registry.export(agentio_tools::Export::Mcp).unwrap();
    /// let listed = mcp[1]["name"].as_str().unwrap();
    /// assert_eq!(registry.tool_for_provider_name(listed).as_deref(), Some("kb.search@2"));
    /// assert_eq!(registry.tool_for_provider_name("kb_lookup"), None);
    /// ```
    pub fn tool_for_provider_name(&self, name: &str) -> Option<String> {
        // Called for every call a model makes (`ToolRegistry::dispatch`): one lookup in the
        // names, indexed once after the last registration (`provider_names`).
        self.names
            .get_or_init(|| self.provider_names())
            .get(name)
            .cloned()
    }

    /// Every tool's provider name and MCP name, each mapped to its id (its identity when the
    /// id has several majors). Where two tools' names meet, the first in identity order has
    /// the name.
    pub(crate) fn provider_names(
        &self,
    ) -> std::collections::HashMap<String, String, foldhash::fast::RandomState> {
        let mut names = std::collections::HashMap::default();
        for (identity, _, _, _) in self.registered() {
            let (id, _) = identity.split_once('@').unwrap_or((identity, ""));
            let target = if self.majors_of(id) == 1 {
                id.to_owned()
            } else {
                identity.to_owned()
            };
            let mcp = self.mcp_name(identity);
            names
                .entry(mcp.replace('.', "_"))
                .or_insert_with(|| target.clone());
            names.entry(mcp).or_insert(target);
        }
        names
    }

    fn majors_of(&self, id: &str) -> usize {
        self.majors.get(id).map_or(0, Vec::len)
    }

    /// `id` or `id__major`, with dots kept (MCP names may hold dots).
    fn mcp_name(&self, identity: &str) -> String {
        let (id, major) = identity.split_once('@').unwrap_or((identity, ""));
        if self.majors_of(id) > 1 && !major.is_empty() {
            format!("{id}__{major}")
        } else {
            id.to_owned()
        }
    }

    pub(crate) fn provider_name_of(&self, identity: &str) -> String {
        self.mcp_name(identity).replace('.', "_")
    }
}

/// MCP hints from the contract: read-only when nothing is mutated; destructive when something
/// is (the contract cannot say that a mutation only adds); idempotent as declared; open-world
/// when the tool reaches the network (a `network:` mutation or a `requires.network` host).
fn annotations(contract: &crate::ToolContract) -> Value {
    let read_only = contract.mutates.is_empty();
    let open_world = !contract.requires.network.is_empty()
        || contract.mutates.iter().any(|m| m.starts_with("network:"));
    json!({
        "title": contract.name,
        "readOnlyHint": read_only,
        "destructiveHint": !read_only,
        "idempotentHint": contract.idempotent,
        "openWorldHint": open_world,
    })
}
