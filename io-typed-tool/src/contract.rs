//! The AIP-14 tool contract: every field of the TOOL.md frontmatter and of `defineTool`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The contract of one tool: identity, schemas, side effects, governance and budget.
///
/// It holds every field of the AIP-14 frontmatter plus the `defineTool`-only `contextSchema`.
/// Serde names follow the frontmatter (`risk_level`, `timeout_ms`, ...), so serializing a
/// contract gives TOOL.md frontmatter and deserializing frontmatter gives a contract. There is
/// no `execute` field: bodies live on the tool type, not on its contract.
///
/// The [`tool`](crate::tool) macro builds a contract from a Rust tool and checks it at compile
/// time; [`ToolContract::check`] applies the same rules at run time to contracts built by
/// hand or parsed from a file.
///
/// ```
/// use agentio_tools::{Approval, ToolContract};
/// use serde_json::json;
/// let mut contract = ToolContract::new(
///     "weather.lookup", "1.0.0", "Looks up the weather for a city.",
///     json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] }),
///     json!({ "type": "object" }),
/// );
/// assert_eq!(contract.identity(), "weather.lookup@1");
/// assert!(contract.check().is_ok());
/// contract.mutates = vec!["workspace:/cache".into()];
/// // `auto` approval with mutations breaks TOOL.schema.json's rule, and is refused by name.
/// assert_eq!(contract.check().unwrap_err().problems[0].pointer, "/mutates");
/// contract.approval = Approval::default_for(&contract.mutates);
/// assert!(contract.check().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolContract {
    /// Human-readable display name (1–80 characters).
    pub name: String,
    /// Machine identifier: lowercase letters, digits, `-` and `.`, 2–80 characters.
    pub id: String,
    /// One-paragraph purpose, written for the model (at most 2000 characters).
    pub description: String,
    /// Semantic version of the contract; the major part is part of the tool's identity.
    pub version: String,
    /// JSON Schema (Draft 2020-12) of the arguments; always an object schema.
    pub inputs: Value,
    /// JSON Schema (Draft 2020-12) of the success value.
    pub outputs: Value,
    /// JSON Schema of the per-call context the host must supply (`defineTool`'s
    /// `contextSchema`). Not a TOOL.md field: rendered under `metadata.agent-io`.
    #[serde(
        rename = "contextSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub context_schema: Option<Value>,
    /// Safe to retry without observable extra effect.
    #[serde(default)]
    pub idempotent: bool,
    /// Resources the tool may modify, as `<class>:<scope>`; empty means a pure read.
    #[serde(default)]
    pub mutates: Vec<String>,
    /// Capability requirements (network hosts, secrets, other tools).
    #[serde(default, skip_serializing_if = "Requires::is_empty")]
    pub requires: Requires,
    /// Approval class.
    pub approval: Approval,
    /// 0 read-only, 1 scoped writes, 2 external side effects, 3 irreversible.
    #[serde(default)]
    pub risk_level: u8,
    /// Cost class.
    #[serde(default)]
    pub cost_class: CostClass,
    /// Hard wall-clock ceiling per attempt, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Retry policy for retryable failures (applied to idempotent tools only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    /// The implementation to prefer when nothing else decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_implementation: Option<String>,
    /// Which driver kinds may serve the tool.
    #[serde(default, skip_serializing_if = "DriverConstraints::is_empty")]
    pub driver_constraints: DriverConstraints,
    /// The AIP-39 action this tool implements (a reference string or an inline object). Not in
    /// the published TOOL.schema.json: rendered under `metadata.agent-io`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implements: Option<Value>,
    /// Discovery tags (lowercase, digits, `-`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Input/output pairs every implementation must satisfy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<ToolExample>,
    /// Free-form, namespaced metadata.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// AIP-14's default `timeout_ms`.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

impl ToolContract {
    /// A contract with the required fields and AIP-14's defaults for the rest (`approval` is
    /// `auto`; set `mutates` and the approval class together, see [`Approval::default_for`]).
    ///
    /// ```
    /// use agentio_tools::{Approval, ToolContract};
    /// use serde_json::json;
    ///
    /// let mut contract = ToolContract::new("notes.append", "1.2.0", "Appends a note.", json!({"type": "object"}), json!({}));
    /// assert!(!contract.needs_approval());
    /// assert!(!contract.idempotent);
    /// contract.mutates = vec!["workspace:/notes".into()];
    /// contract.approval = Approval::default_for(&contract.mutates);
    /// assert_eq!(contract.approval, Approval::OnMutate);
    /// assert!(contract.needs_approval());
    /// ```
    pub fn new(
        id: impl Into<String>,
        version: impl Into<String>,
        description: impl Into<String>,
        inputs: Value,
        outputs: Value,
    ) -> Self {
        let id = id.into();
        ToolContract {
            name: id.clone(),
            id,
            description: description.into(),
            version: version.into(),
            inputs,
            outputs,
            context_schema: None,
            idempotent: false,
            mutates: Vec::new(),
            requires: Requires::default(),
            approval: Approval::Auto,
            risk_level: 0,
            cost_class: CostClass::Trivial,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            retry: None,
            default_implementation: None,
            driver_constraints: DriverConstraints::default(),
            implements: None,
            tags: Vec::new(),
            examples: Vec::new(),
            metadata: Map::new(),
        }
    }

    /// The stable identity `id@major` that caches, audit logs and grants key on.
    ///
    /// ```
    /// # use agentio_tools::ToolContract;
    /// # use serde_json::json;
    /// let c = ToolContract::new("pricing-snapshot", "2.1.0", "d", json!({"type": "object"}), json!({}));
    /// assert_eq!(c.identity(), "pricing-snapshot@2");
    /// ```
    pub fn identity(&self) -> String {
        let major = self.version.split('.').next().unwrap_or(&self.version);
        format!("{}@{major}", self.id)
    }

    /// Whether a call needs a host approver's yes, by the approval class and `mutates`, and for
    /// every `expensive` call (AIP-14: "warn the user before invoking"; the approver is how a
    /// host reaches its user).
    ///
    /// ```
    /// use agentio_tools::{Approval, ToolContract};
    /// use serde_json::json;
    ///
    /// let mut contract = ToolContract::new("kb.search", "1.0.0", "Searches.", json!({ "type": "object" }), json!({}));
    /// assert!(!contract.needs_approval());
    /// contract.approval = Approval::Always;
    /// assert!(contract.needs_approval());
    /// // `on-mutate` without mutations asks nobody.
    /// contract.approval = Approval::OnMutate;
    /// assert!(!contract.needs_approval());
    /// contract.approval = Approval::Policy("finance-review".into());
    /// assert!(contract.needs_approval());
    /// // An expensive call warns the user first (AIP-14), whatever the approval class.
    /// contract.approval = Approval::Auto;
    /// contract.cost_class = agentio_tools::CostClass::Expensive;
    /// assert!(contract.needs_approval());
    /// ```
    pub fn needs_approval(&self) -> bool {
        // AIP-14: `expensive` means "warn the user before invoking", and the approver is the
        // host's one channel to its user, so an expensive call is asked about whatever its
        // approval class.
        self.cost_class == CostClass::Expensive
            || match &self.approval {
                Approval::Auto => false,
                Approval::Always | Approval::Policy(_) => true,
                Approval::OnMutate => !self.mutates.is_empty(),
            }
    }
}

/// Capability requirements (AIP-7 gating).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// Network hosts the tool reaches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    /// Secret slugs the tool needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// Other tools (by id) the tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl Requires {
    /// Whether nothing is required.
    ///
    /// ```
    /// use agentio_tools::Requires;
    /// assert!(Requires::default().is_empty());
    /// assert!(!Requires { network: vec!["api.example.com".into()], ..Requires::default() }.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.network.is_empty() && self.secrets.is_empty() && self.tools.is_empty()
    }
}

/// The approval class of a tool.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Approval {
    /// Run without asking.
    Auto,
    /// Always ask the host's approver.
    Always,
    /// Ask when the tool declares mutations.
    OnMutate,
    /// Defer to a named policy; the host's approver decides with the reference in hand.
    Policy(String),
}

impl Approval {
    /// The class a contract gets when it names none: `on-mutate` for a tool that declares
    /// mutations, `auto` otherwise (the reference `defineTool` does the same; the published
    /// schema refuses `auto` with mutations).
    ///
    /// ```
    /// use agentio_tools::Approval;
    /// assert_eq!(Approval::default_for(&[]), Approval::Auto);
    /// assert_eq!(Approval::default_for(&["workspace:/notes".into()]), Approval::OnMutate);
    /// ```
    pub fn default_for(mutates: &[String]) -> Approval {
        if mutates.is_empty() {
            Approval::Auto
        } else {
            Approval::OnMutate
        }
    }

    /// The wire form: `auto`, `always`, `on-mutate` or `policy:<ref>` (an example is on
    /// [`Self::parse`]).
    pub fn as_wire(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Approval::Auto => "auto".into(),
            Approval::Always => "always".into(),
            Approval::OnMutate => "on-mutate".into(),
            Approval::Policy(reference) => format!("policy:{reference}").into(),
        }
    }

    /// Parses the wire form; `None` for anything else.
    ///
    /// ```
    /// use agentio_tools::Approval;
    /// assert_eq!(Approval::parse("on-mutate"), Some(Approval::OnMutate));
    /// let policy = Approval::parse("policy:finance-review").unwrap();
    /// assert_eq!(policy.as_wire(), "policy:finance-review");
    /// assert_eq!(Approval::parse("policy:"), None);
    /// assert_eq!(Approval::parse("sometimes"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Approval> {
        match text {
            "auto" => Some(Approval::Auto),
            "always" => Some(Approval::Always),
            "on-mutate" => Some(Approval::OnMutate),
            other => {
                let reference = other.strip_prefix("policy:")?;
                let valid = !reference.is_empty()
                    && reference
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
                valid.then(|| Approval::Policy(reference.to_owned()))
            }
        }
    }
}

impl fmt::Display for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_wire())
    }
}

impl Serialize for Approval {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.as_wire())
    }
}

impl<'de> Deserialize<'de> for Approval {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Approval::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown approval class `{text}`: expected `auto`, `always`, `on-mutate` or `policy:<ref>`"
            ))
        })
    }
}

/// How expensive a call is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostClass {
    /// No metered call.
    #[default]
    Trivial,
    /// Counts against a quota.
    Metered,
    /// Warn the user before invoking.
    Expensive,
}

/// How a tool's failed attempts are retried.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1–20).
    pub max_attempts: u32,
    /// How the wait between attempts grows.
    pub backoff: Backoff,
    /// The first wait, in milliseconds.
    #[serde(default)]
    pub initial_ms: u64,
}

impl RetryPolicy {
    /// The wait before attempt `attempt` (2 for the first retry).
    ///
    /// ```
    /// use agentio_tools::{Backoff, RetryPolicy};
    /// use std::time::Duration;
    /// let policy = RetryPolicy { max_attempts: 4, backoff: Backoff::Exponential, initial_ms: 100 };
    /// let waits: Vec<Duration> = (2..=4).map(|attempt| policy.delay_before(attempt)).collect();
    /// assert_eq!(waits, [Duration::from_millis(100), Duration::from_millis(200), Duration::from_millis(400)]);
    /// let fixed = RetryPolicy { backoff: Backoff::Fixed, ..policy };
    /// assert_eq!(fixed.delay_before(4), Duration::from_millis(100));
    /// ```
    pub fn delay_before(&self, attempt: u32) -> std::time::Duration {
        let retries_so_far = attempt.saturating_sub(2);
        let millis = match self.backoff {
            Backoff::Fixed => self.initial_ms,
            Backoff::Exponential => self
                .initial_ms
                .saturating_mul(1u64 << retries_so_far.min(32)),
        };
        std::time::Duration::from_millis(millis)
    }
}

/// The growth of the wait between retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backoff {
    /// The same wait each time.
    Fixed,
    /// Doubling from `initial_ms`.
    Exponential,
}

/// The author's allowlist and denylist of driver kinds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverConstraints {
    /// Kinds the contract refuses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbid: Vec<DriverKind>,
    /// Kinds the contract allows (empty: all, less `forbid`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub require_kind: Vec<DriverKind>,
}

impl DriverConstraints {
    /// Whether there are no constraints.
    ///
    /// ```
    /// use agentio_tools::DriverConstraints;
    /// assert!(DriverConstraints::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.forbid.is_empty() && self.require_kind.is_empty()
    }
}

/// A kind of driver (AIP-30).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverKind {
    /// A command-line program.
    Cli,
    /// An HTTP API.
    Http,
    /// An MCP server.
    Mcp,
    /// A language SDK.
    Sdk,
    /// Built into the host (native Rust tools are this kind).
    Builtin,
}

/// An input/output pair every implementation must satisfy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolExample {
    /// What the example shows.
    pub name: String,
    /// The arguments.
    pub input: Value,
    /// The expected success value; `None` when only the input is illustrated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// A remark for readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub use agentio_core::files::MUTATION_CLASSES;
