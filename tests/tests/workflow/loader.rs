//! The workflow document loader: a closed format (unknown keys refused with "did you mean"),
//! no duplicate keys, the required keys of the OpenIntent workflow format, the legacy list of
//! outputs, enum and `any` types. Each rule with its exact error.

use std::sync::Arc;

use agentio_workflow::{TypeRef, ValidationError, Workflow, WorkflowRun};
use serde_json::{Value, json};

const HEAD: &str = "openintent: \"1.0\"\ninfo:\n  name: loader\n";

fn load(body: &str) -> Result<Workflow, Vec<ValidationError>> {
    Workflow::from_yaml(&format!("{HEAD}{body}"))
}

fn problems(body: &str) -> Vec<Value> {
    load(body)
        .unwrap_err()
        .iter()
        .map(ValidationError::to_json)
        .collect()
}

/// (name, line, column, suggestion) of each problem.
fn summary(body: &str) -> Vec<(String, u64, u64, String)> {
    problems(body)
        .iter()
        .map(|p| {
            (
                p["error"].as_str().unwrap().to_owned(),
                p["line"].as_u64().unwrap(),
                p["column"].as_u64().unwrap(),
                p["suggestion"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn row(name: &str, line: u64, column: u64, suggestion: &str) -> (String, u64, u64, String) {
    (name.to_owned(), line, column, suggestion.to_owned())
}

#[test]
fn unknown_keys_are_refused_at_every_level_with_did_you_mean() {
    let body = "\
workflows: {}
workflow:
  a:
    title: A
    assign: x
    ouputs:
      n: number
  b:
    title: B
    assign: x
    dependson: [a]
    input:
      n: a.n
    outputs:
      m:
        type: number
        requird: false
";
    assert_eq!(
        summary(&format!("{body}info2: 1\n")),
        [
            row("UnknownKeyError", 4, 1, "did you mean `workflow`?"),
            row("UnknownKeyError", 9, 5, "did you mean `outputs`?"),
            row("UnknownKeyError", 14, 5, "did you mean `depends_on`?"),
            row("UnknownKeyError", 15, 5, "did you mean `inputs`?"),
            row("UnknownKeyError", 20, 9, "did you mean `required`?"),
            row("UnknownKeyError", 21, 1, "did you mean `info`?"),
        ]
    );
    let first = &problems(body)[0];
    assert_eq!(first["location"], "the document");
    assert_eq!(first["key"], "workflows");
    assert_eq!(first["message"], "the document has no key `workflows`");
    // Displayed with its name and suggestion.
    assert_eq!(
        load(body).unwrap_err()[1].to_string(),
        "9:5: UnknownKeyError: phase 'a' has no key `ouputs` (did you mean `outputs`?)"
    );
    // A key nothing is close to lists what is allowed.
    let far = summary("workflow:\n  a:\n    assign: x\n    zzzzzzzz: 1\n");
    assert_eq!(
        far[0].3,
        "the keys of phase 'a' are `title`, `description`, `assign`, `depends_on`, `inputs`, `outputs`; extensions start with `x-`"
    );
    // Info keys, too.
    assert!(
        load("workflow: {}\n").is_ok(),
        "an empty workflow section is fine"
    );
    let info =
        Workflow::from_yaml("openintent: \"1.0\"\ninfo:\n  name: n\n  vesion: 1\nworkflow: {}\n")
            .unwrap_err();
    assert_eq!(info[0].suggestion(), Some("did you mean `version`?"));
}

#[test]
fn extension_keys_are_allowed_everywhere() {
    let workflow = load(
        "x-owner: team\nworkflow:\n  a:\n    assign: x\n    x-retry: 3\n    outputs:\n      n:\n        type: number\n        x-unit: ms\n",
    )
    .unwrap();
    assert_eq!(workflow.phases[0].outputs.as_ref().unwrap()[0].key, "n");
}

#[test]
fn duplicate_keys_are_refused() {
    let body = "\
workflow:
  a:
    assign: x
    inputs:
      q: $trigger.q
      q: $trigger.r
    outputs:
      n: number
      n: string
  a:
    assign: y
";
    assert_eq!(
        summary(body),
        [
            row(
                "DuplicateKeyError",
                9,
                7,
                "`q` is first written at line 8; keep one"
            ),
            row(
                "DuplicateKeyError",
                12,
                7,
                "`n` is first written at line 11; keep one"
            ),
            row(
                "DuplicateKeyError",
                13,
                3,
                "`a` is first written at line 5; keep one"
            ),
        ]
    );
    let duplicate = &problems(body)[2];
    assert_eq!(duplicate["location"], "workflow");
    assert_eq!(duplicate["message"], "`a` is written twice in workflow");
    // In the list form of outputs too.
    assert_eq!(
        summary("workflow:\n  a:\n    assign: x\n    outputs: [n, m, n]\n"),
        [row(
            "DuplicateKeyError",
            7,
            21,
            "`n` is first written at line 7; keep one"
        )]
    );
}

#[test]
fn openintent_info_name_and_assign_are_required_and_a_title_defaults_to_the_name() {
    let errors = Workflow::from_yaml("workflow:\n  fetch_data:\n    title: Fetch\n").unwrap_err();
    let summary: Vec<(String, usize, usize, String)> = errors
        .iter()
        .map(|e| {
            let (line, column) = e.position();
            (
                e.name().to_owned(),
                line,
                column,
                e.suggestion().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "MissingKeyError".to_owned(),
                1,
                1,
                "add `openintent: \"1.0\"` at the top".to_owned()
            ),
            (
                "MissingKeyError".to_owned(),
                1,
                1,
                "add `info:` with the workflow's `name`".to_owned()
            ),
            (
                "MissingKeyError".to_owned(),
                2,
                3,
                "name the agent that runs it: `assign: data-agent`".to_owned()
            ),
        ]
    );
    assert_eq!(
        errors[2].message(),
        "phase 'fetch_data' has no `assign`, which it requires"
    );
    let no_name =
        Workflow::from_yaml("openintent: \"1.0\"\ninfo:\n  version: 1.0.0\nworkflow: {}\n")
            .unwrap_err();
    assert_eq!(no_name[0].to_json()["key"], "name");
    assert_eq!(no_name[0].position(), (3, 3));

    // Present but empty, or of the wrong shape, is as wrong as absent.
    let messages = |doc: &str| -> Vec<String> {
        Workflow::from_yaml(doc)
            .unwrap_err()
            .iter()
            .map(|e| e.message().to_owned())
            .collect()
    };
    assert_eq!(
        messages("openintent: \"\"\ninfo:\n  name: x\nworkflow: {}\n"),
        ["`openintent` is the format version, like `openintent: \"1.0\"`"]
    );
    assert_eq!(
        messages("openintent: \"1.0\"\ninfo: [x]\nworkflow: {}\n"),
        ["`info` is a mapping with `name` and `version`"]
    );
    let empty_name =
        Workflow::from_yaml("openintent: \"1.0\"\ninfo:\n  name: \"\"\nworkflow: {}\n")
            .unwrap_err();
    assert_eq!(empty_name.len(), 1);
    assert_eq!(empty_name[0].to_json()["key"], "name");

    // `depends_on` may name one phase without a list.
    let single =
        load("workflow:\n  a:\n    assign: x\n  b:\n    assign: x\n    depends_on: a\n").unwrap();
    assert_eq!(single.phases[1].depends_on.len(), 1);
    assert_eq!(single.phases[1].depends_on[0].0, "a");
    // An empty `assign` is as missing as none; an empty title is the default one.
    let empty_assign = problems("workflow:\n  p:\n    assign: \"\"\n");
    assert_eq!(empty_assign.len(), 1);
    assert_eq!(empty_assign[0]["key"], "assign");
    let titled = load("workflow:\n  p_one:\n    title: First\n    assign: x\n  p_two:\n    title: \"\"\n    assign: x\n")
        .unwrap();
    assert_eq!(titled.phases[0].title, "First");
    assert_eq!(titled.phases[1].title, "P two");

    let workflow = load("workflow:\n  fetch_financial_data:\n    assign: x\n").unwrap();
    assert_eq!(workflow.phases[0].title, "Fetch financial data");
    assert_eq!(workflow.name, "loader");
    assert_eq!(workflow.openintent, "1.0");
}

#[test]
fn the_legacy_list_of_outputs_means_every_key_of_any_type() {
    let workflow = load(
        "workflow:\n  a:\n    assign: x\n    outputs: [revenue, label]\n  b:\n    assign: x\n    depends_on: [a]\n    inputs:\n      r: a.revenue\n",
    )
    .unwrap();
    let outputs = workflow.phases[0].outputs.as_ref().unwrap();
    assert_eq!(
        outputs
            .iter()
            .map(|o| (o.key.as_str(), &o.ty, o.required))
            .collect::<Vec<_>>(),
        [
            ("revenue", &TypeRef::Any, true),
            ("label", &TypeRef::Any, true)
        ]
    );
    let mut run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
    run.claim("a").unwrap();
    let errs = run
        .complete("a", json!({ "revenue": [1, "x"] }))
        .unwrap_err();
    assert_eq!(errs[0].to_json()["missing_keys"], json!(["label"]));
    run.complete("a", json!({ "revenue": { "q3": 1 }, "label": null }))
        .unwrap();
    assert_eq!(run.claim("b").unwrap().input["r"], json!({ "q3": 1 }));
    // A wiring check still applies: a key the list does not name.
    let errs = problems(
        "workflow:\n  a:\n    assign: x\n    outputs: [revenue]\n  b:\n    assign: x\n    depends_on: [a]\n    inputs:\n      r: a.revenu\n",
    );
    assert_eq!(
        errs[0]["suggestion"],
        "phase `a` does not declare output `revenu`; did you mean `a.revenue`? it declares 'revenue'"
    );
}

const ENUMS: &str = "\
types:
  Status:
    enum: [approved, rejected]
  Review:
    status: Status
    note: any
workflow:
  review:
    assign: x
    outputs:
      status: Status
      review: Review
      extra: any
";

#[test]
fn enum_and_any_types_load_and_are_checked_at_completion() {
    let workflow = load(ENUMS).unwrap();
    assert_eq!(
        workflow.type_def("Status").unwrap().values,
        Some(vec![json!("approved"), json!("rejected")])
    );
    let mut run = WorkflowRun::new(Arc::new(workflow), "r", json!({}), json!({})).unwrap();
    run.claim("review").unwrap();
    let errs = run
        .complete(
            "review",
            json!({ "status": "maybe", "review": { "status": "approved", "note": null }, "extra": null }),
        )
        .unwrap_err();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].to_json()["key"], "status");
    assert_eq!(errs[0].to_json()["expected_type"], "Status");
    let errs = run
        .complete(
            "review",
            json!({ "status": "approved", "review": { "status": "nope", "note": 1 }, "extra": [] }),
        )
        .unwrap_err();
    assert!(
        errs[0]
            .to_string()
            .contains("at '/status' (expected one of [\"approved\",\"rejected\"], got string)"),
        "{}",
        errs[0]
    );
    // `any` must be present, and may be anything, null included.
    let errs = run
        .complete(
            "review",
            json!({ "status": "approved", "review": { "status": "approved" } }),
        )
        .unwrap_err();
    assert_eq!(errs[0].to_json()["missing_keys"], json!(["extra"]));
    run.complete(
        "review",
        json!({ "status": "rejected", "review": { "status": "approved", "note": [1] }, "extra": null }),
    )
    .unwrap();
}

#[test]
fn a_missing_or_malformed_type_never_prints_an_empty_name() {
    let errs = problems(
        "types:\n  T:\n    a: \"\"\n    b: [1]\n    c: list of things\nworkflow:\n  p:\n    assign: x\n    outputs:\n      k: { required: false }\n      j: \"\"\n",
    );
    let messages: Vec<&str> = errs
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "field `a` of type `T` has no type: the type is empty",
            "field `b` of type `T` has no type: a type is written as a name, like `string`",
            "field `c` of type `T` has no valid type: `list of things` is not a type",
            "output `k` of phase 'p' has no `type`, which it requires",
            "output `j` of phase `p` has no type: the type is empty",
        ]
    );
    for message in messages {
        assert!(!message.contains("``"), "{message}");
    }
    let enum_errs = problems("types:\n  S:\n    enum: []\nworkflow: {}\n");
    assert_eq!(
        enum_errs[0]["message"],
        "the `enum` of type `S` is a non-empty list of values"
    );
}

/// Typed wiring of enum types: an enum output fits a field whose schema allows its values.
#[test]
fn enum_types_are_checked_in_typed_wiring() {
    use schemars::JsonSchema;
    let workflow = load(ENUMS).unwrap();
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(rename_all = "lowercase")]
    enum Verdict {
        Approved,
        Rejected,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(rename_all = "lowercase")]
    enum Narrow {
        Approved,
    }
    let schema = |s: schemars::Schema| s.to_value();
    let verdict = schema(schemars::schema_for!(Verdict));
    let narrow = schema(schemars::schema_for!(Narrow));
    let status = TypeRef::Named("Status".into());
    assert_eq!(workflow.fits_schema(&status, &verdict, &verdict), None);
    assert_eq!(
        workflow.fits_schema(&status, &narrow, &narrow).as_deref(),
        Some("it does not accept `\"rejected\"`, a value of `Status`")
    );
    // A producer's enum output satisfies the declared enum type when its values are listed.
    assert_eq!(workflow.schema_satisfies(&verdict, &verdict, &status), None);
    assert_eq!(workflow.schema_satisfies(&narrow, &narrow, &status), None);
    let string = json!({ "type": "string" });
    assert!(
        workflow
            .schema_satisfies(&string, &string, &status)
            .is_some()
    );
    // `any` fits only a field that accepts anything.
    assert_eq!(
        workflow.fits_schema(&TypeRef::Any, &json!(true), &json!(true)),
        None
    );
    assert!(
        workflow
            .fits_schema(&TypeRef::Any, &string, &string)
            .is_some()
    );
}

#[test]
fn names_are_at_most_128_characters() {
    let ok = "p".repeat(128);
    assert!(load(&format!("workflow:\n  {ok}:\n    assign: x\n")).is_ok());
    let long = "p".repeat(129);
    let errs = problems(&format!(
        "workflow:\n  {long}:\n    assign: x\n    outputs:\n      {long}: string\n"
    ));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0]["error"], "DocumentError");
    assert_eq!(
        (errs[0]["line"].as_u64(), errs[0]["column"].as_u64()),
        (Some(5), Some(3))
    );
    assert!(
        errs[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("is too long for a name in workflow (at most 128 characters)")
    );
}
