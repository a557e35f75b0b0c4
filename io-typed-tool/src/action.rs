//! AIP-14 "Action implementation": a tool that `implements` an AIP-39 action inherits the
//! action's governance and may only narrow it.
//!
//! Decisions where AIP-14 leaves room, taken as a careful user would expect:
//! - **Inherit or refuse.** A field the tool leaves at its default (no `mutates`, `risk_level`
//!   0, `approval: auto`, an empty `requires` list) inherits the action's. A field the tool
//!   declares must keep the action's floor: every action `mutates` and `requires` entry, a
//!   `risk_level` at least the action's, an approval at least as strict. Anything else is a
//!   widening, refused at registration with the field named.
//! - **Approval order.** `auto` < `on-mutate` < `policy:<ref>` < `always` (AIP-14's own list,
//!   "auto → always → on-mutate", is read as a list of classes, not an order: `always` asks on
//!   every call, so nothing is stricter). A tool may replace an action's `policy:<ref>` only
//!   with the same policy or `always`: another policy is not known to be stricter.
//! - **Resolution.** An inline action (`{ "inline": { "id": ..., ... } }`) is read from the
//!   contract; a reference (a bare id, a registry ref, a path) must name an action the host
//!   registered with [`ToolRegistry::register_action`](crate::ToolRegistry::register_action)
//!   under that exact string. An unknown action is refused: a contract cannot claim an action
//!   the host has not seen.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::check::ContractProblem;
use crate::contract::{Approval, Requires, ToolContract};

/// An AIP-39 action's governance: the floor every tool implementing it keeps.
///
/// ```
/// use agentio_tools::{Action, Approval};
/// let action: Action = serde_json::from_value(serde_json::json!({
///     "id": "storage:commit", "mutates": ["workspace:/"], "risk_level": 1, "approval": "on-mutate",
/// })).unwrap();
/// assert_eq!(action.approval, Approval::OnMutate);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// The action's id (`storage:commit`).
    pub id: String,
    /// What every implementation may modify, at least.
    #[serde(default)]
    pub mutates: Vec<String>,
    /// The lowest risk level an implementation may declare.
    #[serde(default)]
    pub risk_level: u8,
    /// The loosest approval class an implementation may declare.
    #[serde(default = "auto")]
    pub approval: Approval,
    /// What every implementation requires, at least.
    #[serde(default)]
    pub requires: Requires,
}

fn auto() -> Approval {
    Approval::Auto
}

impl Action {
    /// An action with no floor beyond its id.
    pub fn new(id: impl Into<String>) -> Self {
        Action {
            id: id.into(),
            mutates: Vec::new(),
            risk_level: 0,
            approval: Approval::Auto,
            requires: Requires::default(),
        }
    }
}

/// How strict an approval class is, for the narrowing rule (see the module's decisions).
fn strictness(approval: &Approval) -> u8 {
    match approval {
        Approval::Auto => 0,
        Approval::OnMutate => 1,
        Approval::Policy(_) => 2,
        Approval::Always => 3,
    }
}

/// The action `implements` names: inline, or one of `known` by its exact reference.
pub(crate) fn resolve<'a>(
    implements: &Value,
    known: &'a [Action],
) -> Result<std::borrow::Cow<'a, Action>, ContractProblem> {
    let problem = |message: String| ContractProblem {
        pointer: "/implements".into(),
        message,
    };
    match implements {
        Value::String(reference) => known
            .iter()
            .find(|action| action.id == *reference)
            .map(std::borrow::Cow::Borrowed)
            .ok_or_else(|| {
                let mut shown = reference.clone();
                agentio_core::limits::clip(&mut shown, 128);
                problem(format!(
                    "unknown action `{shown}`: register it with ToolRegistry::register_action before the tools that implement it"
                ))
            }),
        Value::Object(map) => match map.get("inline") {
            Some(inline) => serde_json::from_value::<Action>(inline.clone())
                .map(std::borrow::Cow::Owned)
                .map_err(|e| problem(format!("the inline action is not an action: {e}"))),
            None => Err(problem(
                "an action given as an object must be `{ \"inline\": { ... } }`".into(),
            )),
        },
        _ => Err(problem(
            "`implements` is an action reference (a string) or `{ \"inline\": { ... } }`".into(),
        )),
    }
}

/// `contract` narrowed onto `action`: each field left at its default inherits the action's,
/// each declared field must keep the action's floor. Every widening is reported, by field.
pub(crate) fn narrow(contract: &mut ToolContract, action: &Action) -> Vec<ContractProblem> {
    let mut problems = Vec::new();
    let mut widens = |pointer: &str, message: String| {
        problems.push(ContractProblem {
            pointer: pointer.into(),
            message: format!("widens the action `{}`: {message}", action.id),
        });
    };

    if contract.mutates.is_empty() {
        contract.mutates = action.mutates.clone();
    } else {
        let dropped = missing(&action.mutates, &contract.mutates);
        if !dropped.is_empty() {
            widens("/mutates", format!("drops mutates {dropped:?}"));
        }
    }

    if contract.risk_level == 0 {
        contract.risk_level = action.risk_level;
    } else if contract.risk_level < action.risk_level {
        widens(
            "/risk_level",
            format!(
                "lowers risk_level from {} to {}",
                action.risk_level, contract.risk_level
            ),
        );
    }

    if contract.approval == Approval::Auto {
        contract.approval = action.approval.clone();
    } else {
        let relaxed = strictness(&contract.approval) < strictness(&action.approval)
            || matches!((&action.approval, &contract.approval),
                (Approval::Policy(floor), Approval::Policy(own)) if floor != own);
        if relaxed {
            widens(
                "/approval",
                format!(
                    "relaxes approval from `{}` to `{}`",
                    action.approval, contract.approval
                ),
            );
        }
    }
    // The published schema's rule: mutations are never `auto`.
    if contract.approval == Approval::Auto && !contract.mutates.is_empty() {
        contract.approval = Approval::OnMutate;
    }

    for (field, own, floor) in [
        (
            "network",
            &mut contract.requires.network,
            &action.requires.network,
        ),
        (
            "secrets",
            &mut contract.requires.secrets,
            &action.requires.secrets,
        ),
        (
            "tools",
            &mut contract.requires.tools,
            &action.requires.tools,
        ),
    ] {
        if own.is_empty() {
            own.clone_from(floor);
        } else {
            let dropped = missing(floor, own);
            if !dropped.is_empty() {
                widens(
                    &format!("/requires/{field}"),
                    format!("drops requires.{field} {dropped:?}"),
                );
            }
        }
    }
    problems
}

fn missing(floor: &[String], own: &[String]) -> Vec<String> {
    floor
        .iter()
        .filter(|entry| !own.contains(entry))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn floor() -> Action {
        Action {
            id: "storage:commit".into(),
            mutates: vec!["workspace:/data".into()],
            risk_level: 2,
            approval: Approval::Policy("review".into()),
            requires: Requires {
                network: vec!["api.example.com".into()],
                secrets: vec!["db".into()],
                tools: vec!["kb.search".into()],
            },
        }
    }

    fn tool() -> ToolContract {
        ToolContract::new(
            "t.tool",
            "1.0.0",
            "d",
            json!({ "type": "object" }),
            json!({}),
        )
    }

    fn pointers(problems: &[ContractProblem]) -> Vec<&str> {
        problems.iter().map(|p| p.pointer.as_str()).collect()
    }

    #[test]
    fn a_tool_that_declares_nothing_inherits_the_whole_floor() {
        let mut contract = tool();
        assert!(narrow(&mut contract, &floor()).is_empty());
        assert_eq!(contract.mutates, floor().mutates);
        assert_eq!(contract.risk_level, 2);
        assert_eq!(contract.approval, Approval::Policy("review".into()));
        assert_eq!(contract.requires, floor().requires);
    }

    #[test]
    fn every_widening_is_refused_by_its_field() {
        let mut contract = tool();
        contract.mutates = vec!["workspace:/other".into()];
        contract.risk_level = 1;
        contract.approval = Approval::OnMutate;
        contract.requires = Requires {
            network: vec!["other.example.com".into()],
            secrets: vec!["other".into()],
            tools: vec!["other.tool".into()],
        };
        let problems = narrow(&mut contract, &floor());
        assert_eq!(
            pointers(&problems),
            [
                "/mutates",
                "/risk_level",
                "/approval",
                "/requires/network",
                "/requires/secrets",
                "/requires/tools"
            ]
        );
        assert!(
            problems[0].message.contains("workspace:/data"),
            "{}",
            problems[0]
        );
        assert!(
            problems[2]
                .message
                .contains("`policy:review` to `on-mutate`"),
            "{}",
            problems[2]
        );
    }

    #[test]
    fn narrowing_is_accepted() {
        let mut contract = tool();
        contract.mutates = vec!["workspace:/data".into(), "workspace:/log".into()];
        contract.risk_level = 3;
        contract.approval = Approval::Always;
        contract.requires.network = vec!["api.example.com".into(), "more.example.com".into()];
        assert!(narrow(&mut contract, &floor()).is_empty());
        assert_eq!(contract.risk_level, 3);
        assert_eq!(contract.approval, Approval::Always);
        // The same policy is no widening; another policy is.
        let mut same = tool();
        same.approval = Approval::Policy("review".into());
        assert!(narrow(&mut same, &floor()).is_empty());
        let mut other = tool();
        other.approval = Approval::Policy("lenient".into());
        assert_eq!(pointers(&narrow(&mut other, &floor())), ["/approval"]);
        // A risk level equal to the floor is kept.
        let mut equal = tool();
        equal.risk_level = 2;
        assert!(narrow(&mut equal, &floor()).is_empty());
    }

    #[test]
    fn the_approval_order_runs_auto_on_mutate_policy_always() {
        let classes = [
            Approval::Auto,
            Approval::OnMutate,
            Approval::Policy("p".into()),
            Approval::Always,
        ];
        for (i, action_class) in classes.iter().enumerate() {
            for (j, tool_class) in classes.iter().enumerate().skip(1) {
                let mut action = Action::new("a");
                action.approval = action_class.clone();
                let mut contract = tool();
                contract.approval = tool_class.clone();
                let refused = !narrow(&mut contract, &action).is_empty();
                assert_eq!(refused, j < i, "action {action_class}, tool {tool_class}");
            }
        }
    }

    #[test]
    fn inherited_mutations_are_never_auto() {
        let mut action = Action::new("a");
        action.mutates = vec!["external:x".into()];
        let mut contract = tool();
        assert!(narrow(&mut contract, &action).is_empty());
        assert_eq!(contract.approval, Approval::OnMutate);
        contract.check().unwrap();
    }

    #[test]
    fn actions_resolve_inline_or_by_their_exact_reference() {
        let known = [floor()];
        assert_eq!(
            resolve(&json!("storage:commit"), &known).unwrap().id,
            "storage:commit"
        );
        let unknown = resolve(&json!("storage:delete"), &known).unwrap_err();
        assert_eq!(unknown.pointer, "/implements");
        assert!(unknown.message.contains("unknown action `storage:delete`"));
        let inline = resolve(
            &json!({ "inline": { "id": "x:y", "risk_level": 3 } }),
            &known,
        )
        .unwrap();
        assert_eq!((inline.id.as_str(), inline.risk_level), ("x:y", 3));
        assert!(resolve(&json!({ "inline": { "risk_level": 3 } }), &known).is_err());
        assert!(resolve(&json!({ "id": "x" }), &known).is_err());
        assert!(resolve(&json!(7), &known).is_err());
    }
}
