//! Skills (io-traits.md "Composition validation"): chains checked before anything runs, every
//! broken link reported at once, and a checked chain run step by step.

use std::sync::Arc;

use agentio_core::skill::{SkillManifest, SkillProblem};
use agentio_core::{AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime};
use agentio_tools::{ToolError, ToolRegistry, tool, tool_registry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Query {
    q: String,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Hits {
    hits: Vec<Hit>,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Hit {
    title: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    score: f64,
}

/// What `summarize` takes: the hits, and optionally a language (a field `search` never
/// writes: compatible because `search`'s output is a derived struct, closed).
#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct SummarizeArgs {
    hits: Vec<Hit>,
    #[serde(default)]
    language: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Summary {
    text: String,
    #[schemars(range(min = 0, max = 10))]
    confidence: u8,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Tone {
    Plain,
    Formal,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Publish {
    text: String,
    #[schemars(range(min = 0, max = 10))]
    confidence: u8,
}

/// Needs a field no step produces.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct NeedsAuthor {
    text: String,
    author: String,
}

/// Takes a narrower range than `Summary` produces.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct StrictConfidence {
    text: String,
    #[schemars(range(min = 5, max = 10))]
    confidence: u8,
}

/// Takes a number where `Summary` has a string.
#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct NumericText {
    text: u32,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Styled {
    tone: Tone,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum FormalOnly {
    Formal,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct FormalStyled {
    tone: FormalOnly,
}

/// Searches.
#[tool(id = "kb.search", idempotent)]
async fn search(q: Query) -> Result<Hits, ToolError> {
    Ok(Hits {
        hits: vec![Hit {
            title: format!("about {}", q.q),
            score: 0.5,
        }],
    })
}

/// Summarizes.
#[tool(id = "kb.summarize", idempotent)]
async fn summarize(args: SummarizeArgs) -> Result<Summary, ToolError> {
    let text = args
        .hits
        .iter()
        .map(|h| h.title.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    Ok(Summary {
        text,
        confidence: 7,
    })
}

/// Publishes.
#[tool(id = "kb.publish", idempotent)]
async fn publish(p: Publish) -> Result<Query, ToolError> {
    Ok(Query { q: p.text })
}

/// Needs an author.
#[tool(id = "kb.attribute", idempotent)]
async fn attribute(a: NeedsAuthor) -> Result<Query, ToolError> {
    Ok(Query { q: a.author })
}

/// Needs confidence ≥ 5.
#[tool(id = "kb.confident", idempotent)]
async fn confident(a: StrictConfidence) -> Result<Query, ToolError> {
    Ok(Query { q: a.text })
}

/// Wants a number.
#[tool(id = "kb.count", idempotent)]
async fn count(a: NumericText) -> Result<Query, ToolError> {
    Ok(Query {
        q: a.text.to_string(),
    })
}

/// Picks a tone.
#[tool(id = "style.pick", idempotent)]
async fn pick(_q: Query) -> Result<Styled, ToolError> {
    Ok(Styled { tone: Tone::Plain })
}

/// Formal only.
#[tool(id = "style.formal", idempotent)]
async fn formal(s: FormalStyled) -> Result<Query, ToolError> {
    let _ = s.tone;
    Ok(Query { q: "formal".into() })
}

fn registry() -> ToolRegistry {
    tool_registry![
        SearchTool,
        SummarizeTool,
        PublishTool,
        AttributeTool,
        ConfidentTool,
        CountTool,
        PickTool,
        FormalTool
    ]
    .unwrap()
}

#[test]
fn a_valid_three_step_chain_passes() {
    let registry = registry();
    let skill = SkillManifest::new("research", ["kb.search", "kb.summarize", "kb.publish"]);
    registry.validate_skill(&skill).unwrap();
}

#[test]
fn broken_links_are_each_named_with_a_witness() {
    let registry = registry();
    let check = |steps: &[&str]| {
        registry
            .validate_skill(&SkillManifest::new("broken", steps.iter().copied()))
            .unwrap_err()
            .problems
    };
    // A missing required field.
    let problems = check(&["kb.search", "kb.summarize", "kb.attribute"]);
    let [
        SkillProblem::IncompatibleChain {
            step: 2,
            from,
            to,
            counterexample,
        },
    ] = problems.as_slice()
    else {
        panic!("{problems:?}")
    };
    assert_eq!(
        (from.as_str(), to.as_str()),
        ("kb.summarize", "kb.attribute")
    );
    assert!(
        counterexample.reason.contains("`author`"),
        "{counterexample:?}"
    );
    // A range.
    let problems = check(&["kb.search", "kb.summarize", "kb.confident"]);
    let [SkillProblem::IncompatibleChain { counterexample, .. }] = problems.as_slice() else {
        panic!("{problems:?}")
    };
    assert_eq!(counterexample.consumer_pointer, "/properties/confidence");
    assert!(counterexample.witness["confidence"].as_u64().unwrap() < 5);
    // A type.
    let problems = check(&["kb.search", "kb.summarize", "kb.count"]);
    let [SkillProblem::IncompatibleChain { counterexample, .. }] = problems.as_slice() else {
        panic!("{problems:?}")
    };
    assert!(counterexample.witness["text"].is_string());
    // An enum value.
    let problems = check(&["style.pick", "style.formal"]);
    let [SkillProblem::IncompatibleChain { counterexample, .. }] = problems.as_slice() else {
        panic!("{problems:?}")
    };
    assert_eq!(counterexample.witness["tone"], "plain");
}

#[test]
fn every_broken_step_is_reported_at_once() {
    let registry = registry();
    let skill = SkillManifest::new(
        "all wrong",
        [
            "kb.search",
            "kb.publish",
            "kb.nope",
            "kb.summarize",
            "kb.count",
        ],
    );
    let err = registry.validate_skill(&skill).unwrap_err();
    let steps: Vec<(usize, &str)> = err
        .problems
        .iter()
        .map(|p| match p {
            SkillProblem::UnknownStep { step, .. } => (*step, "unknown"),
            SkillProblem::IncompatibleChain { step, .. } => (*step, "incompatible"),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        steps,
        [(2, "unknown"), (1, "incompatible"), (4, "incompatible")]
    );
    let text = err.to_string();
    assert!(
        text.starts_with("all wrong cannot run as written (3 problem(s))"),
        "{text}"
    );
}

#[test]
fn mappings_pick_fields_and_are_checked() {
    let registry = registry();
    let skill = SkillManifest::from_yaml_or_json(
        r#"
name: mapped
steps:
  - tool: kb.search
  - tool: kb.publish
    inputs: { text: /hits/0/title }
"#,
    )
    .unwrap();
    // The list of hits may be empty, so `text` may be missing; and `publish` also requires
    // `confidence`, which no mapping gives.
    let err = registry.validate_skill(&skill).unwrap_err();
    assert!(
        matches!(&err.problems[0], SkillProblem::IncompatibleChain { step: 1, counterexample, .. } if counterexample.reason.contains("`text`")),
        "{err}"
    );
    let mut both = skill.clone();
    both.steps[1]
        .inputs
        .insert("confidence".into(), "/hits/0/score".into());
    let err = registry.validate_skill(&both).unwrap_err();
    assert!(
        matches!(&err.problems[0], SkillProblem::IncompatibleChain { .. }),
        "{err}"
    );
    // A pointer to nothing in the producer.
    let bad = SkillManifest::from_yaml_or_json(
        r#"{ "steps": [ { "tool": "kb.search" }, { "tool": "kb.publish", "inputs": { "text": "/nope" } } ] }"#,
    )
    .unwrap();
    let err = registry.validate_skill(&bad).unwrap_err();
    assert!(
        matches!(&err.problems[0], SkillProblem::BadMapping { field, .. } if field == "text"),
        "{err}"
    );
    // A hit's title may be absent (the list may be empty): `Query` requires `q`.
    let maybe = SkillManifest::from_yaml_or_json(
        r#"{ "steps": [ { "tool": "kb.search" }, { "tool": "kb.search", "inputs": { "q": "/hits/0/title" } } ] }"#,
    )
    .unwrap();
    let err = registry.validate_skill(&maybe).unwrap_err();
    assert!(
        matches!(&err.problems[0], SkillProblem::IncompatibleChain { .. }),
        "{err}"
    );
    // A malformed manifest says where.
    let err = SkillManifest::from_yaml_or_json("steps: [ { tool: a, extra: 1 } ]").unwrap_err();
    assert!(err.to_string().contains("extra"), "{err}");
}

#[tokio::test]
async fn a_checked_skill_runs_step_by_step() {
    let registry = registry();
    let skill = SkillManifest::new("research", ["kb.search", "kb.summarize", "kb.publish"]);
    let out = registry
        .run_skill(&skill, json!({ "q": "rust" }), Default::default())
        .await
        .unwrap();
    assert_eq!(out, json!({ "q": "about rust" }));
    // A skill that does not check does not run any step.
    let bad = SkillManifest::new("bad", ["kb.search", "kb.count"]);
    let err = registry
        .run_skill(&bad, json!({ "q": "rust" }), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "incompatible_chain");
    // A step's failure names the step.
    let err = registry
        .run_skill(&skill, json!({ "q": 3 }), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "input_invalid");
    assert!(
        err.message().starts_with("skill step 0 (`kb.search`)"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn a_mapping_on_the_first_step_builds_its_input_from_the_skill_s_input() {
    let registry = registry();
    let mut skill = SkillManifest::new("research", ["kb.search"]);
    skill.steps[0]
        .inputs
        .insert("q".into(), "/request/text".into());
    let out = registry
        .run_skill(
            &skill,
            json!({ "request": { "text": "rust" } }),
            Default::default(),
        )
        .await
        .unwrap();
    // `kb.search` got `{"q": "rust"}`, not the skill's input whole (which it would refuse).
    assert_eq!(
        out,
        json!({ "hits": [{ "title": "about rust", "score": 0.5 }] })
    );
}

struct Summarizer;

impl AgentCore for Summarizer {
    type Input = Hits;
    type Output = Summary;

    fn core_type(&self) -> &str {
        "summarizer"
    }

    async fn run_turn(
        &mut self,
        input: Hits,
        _ctx: &mut AgentContext,
    ) -> Result<Summary, AgentError> {
        Ok(Summary {
            text: input.hits.len().to_string(),
            confidence: 1,
        })
    }
}

#[test]
fn the_runtime_checks_skills_over_its_core_and_its_tools() {
    let runtime = AgentRuntime::new(Summarizer).with_tools(Arc::new(registry()));
    runtime
        .validate_skill(&SkillManifest::new(
            "mixed",
            ["kb.search", "summarizer", "kb.publish"],
        ))
        .unwrap();
    let err = runtime
        .validate_skill(&SkillManifest::new(
            "mixed",
            ["kb.search", "summarizer", "kb.confident"],
        ))
        .unwrap_err();
    assert!(
        matches!(
            err.problems[0],
            SkillProblem::IncompatibleChain { step: 2, .. }
        ),
        "{err}"
    );
    // Tools outside the allow-list are not the runtime's to chain.
    let limited = AgentRuntime::new(Summarizer)
        .with_tools(Arc::new(registry()))
        .with_allowed_tools(["kb.publish"]);
    let err = limited
        .validate_skill(&SkillManifest::new("mixed", ["kb.search", "summarizer"]))
        .unwrap_err();
    assert!(
        matches!(err.problems[0], SkillProblem::UnknownStep { step: 0, .. }),
        "{err}"
    );
}

/// Claims more confidence than its schema allows.
#[tool(id = "kb.overconfident", idempotent)]
async fn overconfident(args: SummarizeArgs) -> Result<Summary, ToolError> {
    Ok(Summary {
        text: args.hits.len().to_string(),
        confidence: 11,
    })
}

impl From<Hits> for SummarizeArgs {
    fn from(hits: Hits) -> Self {
        SummarizeArgs {
            hits: hits.hits,
            language: None,
        }
    }
}
impl From<Summary> for Publish {
    fn from(s: Summary) -> Self {
        Publish {
            text: s.text,
            confidence: s.confidence,
        }
    }
}

#[tokio::test]
async fn typed_chains_run_the_bodies_and_check_each_output() {
    use agentio_tools::ToolContext;
    use agentio_tools::chain::{Then, TypedStep};

    let ctx = ToolContext::new("run-1", "research");
    let research = SearchTool.then(SummarizeTool).then(PublishTool);
    let out = research
        .run(Query { q: "rust".into() }, &ctx)
        .await
        .unwrap();
    assert_eq!(out.q, "about rust");
    // A step's output is held to its schema, as the registry would hold it.
    let err = SearchTool
        .then(OverconfidentTool)
        .run(Query { q: "x".into() }, &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "output_invalid");
    assert_eq!(err.violations()[0].pointer, "/confidence");
}

#[test]
fn mapping_pointers_are_checked_for_form_and_for_circular_producers() {
    use agentio_core::skill::check_skill;
    let object = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] });
    // The producer's schema refers to itself and never reaches a property.
    let circular = json!({ "$ref": "#/$defs/A", "$defs": { "A": { "$ref": "#/$defs/A" } } });
    let lookup = |id: &str| match id {
        "loop" => Some((object.clone(), circular.clone())),
        "plain" => Some((object.clone(), object.clone())),
        _ => None,
    };
    let mapped = |from: &str, pointer: &str| {
        let mut skill = SkillManifest::new("m", [from, "plain"]);
        skill.steps[1]
            .inputs
            .insert("text".into(), pointer.to_owned());
        skill
    };
    let reason_of = |skill: &SkillManifest| {
        let err = check_skill(skill, lookup).unwrap_err();
        match &err.problems[..] {
            [SkillProblem::BadMapping { reason, .. }] => reason.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        reason_of(&mapped("loop", "/text")),
        "the producer's schema goes round in circles here"
    );
    assert_eq!(
        reason_of(&mapped("plain", "text")),
        "a JSON pointer starts with `/`"
    );
    // `/text` of the producer is a string and always there; the empty pointer is the whole
    // output, an object where a string is needed.
    assert!(check_skill(&mapped("plain", "/text"), lookup).is_ok());
    let whole = check_skill(&mapped("plain", ""), lookup).unwrap_err();
    assert!(
        matches!(
            &whole.problems[..],
            [SkillProblem::IncompatibleChain { step: 1, .. }]
        ),
        "{whole}"
    );
}

#[test]
fn a_long_chain_of_references_is_followed_up_to_the_bound() {
    use agentio_core::skill::check_skill;
    let object = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] });
    // `refs` references in a row before the object; with the step into `text` and the last
    // look, following `/text` takes `refs + 2` hops, and 256 is the most.
    let chain = |refs: usize| {
        let mut defs = serde_json::Map::new();
        for i in 1..refs {
            defs.insert(
                format!("D{i}"),
                json!({ "$ref": format!("#/$defs/D{}", i + 1) }),
            );
        }
        defs.insert(format!("D{refs}"), object.clone());
        json!({ "$ref": "#/$defs/D1", "$defs": defs })
    };
    let check = |refs: usize| {
        let produced = chain(refs);
        let mut skill = SkillManifest::new("m", ["long", "plain"]);
        skill.steps[1].inputs.insert("text".into(), "/text".into());
        check_skill(&skill, |id| match id {
            "long" => Some((object.clone(), produced.clone())),
            "plain" => Some((object.clone(), object.clone())),
            _ => None,
        })
    };
    assert!(check(254).is_ok());
    let err = check(255).unwrap_err();
    assert!(
        matches!(&err.problems[..], [SkillProblem::BadMapping { reason, .. }] if reason.contains("circles")),
        "{err}"
    );
}

#[test]
fn an_index_steps_into_a_list_schema_with_or_without_its_type() {
    use agentio_core::skill::check_skill;
    let object = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] });
    for produced in [
        json!({ "type": "array", "items": { "type": "string" }, "minItems": 1 }),
        json!({ "items": { "type": "string" }, "minItems": 1 }),
        json!({ "prefixItems": [{ "type": "string" }], "minItems": 1 }),
    ] {
        let mut skill = SkillManifest::new("m", ["list", "plain"]);
        skill.steps[1].inputs.insert("text".into(), "/0".into());
        let checked = check_skill(&skill, |id| match id {
            "list" => Some((object.clone(), produced.clone())),
            "plain" => Some((object.clone(), object.clone())),
            _ => None,
        });
        assert!(checked.is_ok(), "{produced}: {checked:?}");
    }
}

#[test]
fn a_mapping_follows_the_branch_of_an_option_that_is_not_null() {
    use agentio_core::skill::check_skill;
    let hit = json!({ "type": "object", "properties": { "text": { "type": "string" } }, "required": ["text"] });
    let produced = json!({
        "type": "object",
        "properties": { "hit": { "anyOf": [hit, { "type": "null" }] } },
        "required": ["hit"]
    });
    // The hit may be null, so `text` may be missing: fine for a consumer that does not
    // require it, and a counterexample for one that does.
    let optional = json!({ "type": "object", "properties": { "text": { "type": "string" } } });
    let mut skill = SkillManifest::new("m", ["search", "optional"]);
    skill.steps[1]
        .inputs
        .insert("text".into(), "/hit/text".into());
    let lookup = |id: &str| match id {
        "search" => Some((optional.clone(), produced.clone())),
        "optional" => Some((optional.clone(), optional.clone())),
        "required" => Some((hit.clone(), hit.clone())),
        _ => None,
    };
    assert!(check_skill(&skill, lookup).is_ok());
    skill.steps[1].tool = "required".into();
    let err = check_skill(&skill, lookup).unwrap_err();
    assert!(
        matches!(
            &err.problems[..],
            [SkillProblem::IncompatibleChain { step: 1, .. }]
        ),
        "{err}"
    );
}
