//! The second access to a type's schema returns the same reference and allocates nothing;
//! checked text output and a common registry call keep to their allocation budgets.
//!
//! Its own test binary: it installs a counting global allocator. The count is per thread, so
//! the harness's other threads cannot disturb a measurement.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use agentio_core::{AgentInput, AgentOutput, BoundarySchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's obligations are passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations_during<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (result, ALLOCATIONS.with(Cell::get) - before)
}

/// `to_output_json`'s text, asserted equal to `serde_json::to_string`'s, and the allocations
/// each made (after a first call, which may size the boundary's buffer): `(ours, serde's)`.
fn written_as_serde_writes_it<T: Serialize + AgentOutput>(value: &T) -> (u64, u64) {
    let _ = value.to_output_json().unwrap();
    let (direct, floor) = allocations_during(|| serde_json::to_string(value).unwrap());
    let (text, ours) = allocations_during(|| value.to_output_json().unwrap());
    assert_eq!(text, direct);
    (ours, floor)
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Reading {
    sensor: String,
    value: f64,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
struct Batch<T> {
    items: Vec<T>,
}

#[test]
fn a_concrete_type_builds_once_then_returns_the_same_reference_without_allocating() {
    let (first, built) = allocations_during(Reading::input_schema);
    assert!(built > 0, "the first access builds the schema");
    let (second, again) = allocations_during(Reading::input_schema);
    assert!(std::ptr::eq(first, second));
    assert_eq!(again, 0, "the second access allocated {again} time(s)");
    // The output schema is a separate cache entry, with the same guarantee.
    let output = Reading::output_schema();
    let (again_output, later) = allocations_during(Reading::output_schema);
    assert!(std::ptr::eq(output, again_output));
    assert_eq!(later, 0);
}

#[test]
fn a_generic_instantiation_is_cached_process_wide_without_allocating_later() {
    let first: &'static BoundarySchema = Batch::<Reading>::input_boundary();
    let (second, again) = allocations_during(Batch::<Reading>::input_boundary);
    assert!(std::ptr::eq(first, second));
    assert_eq!(again, 0, "the second access allocated {again} time(s)");
    // Another instantiation is another schema.
    assert!(!std::ptr::eq(first, Batch::<u8>::input_boundary()));
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
struct Named {
    label: String,
}

#[test]
fn a_boundary_names_its_type_and_direction() {
    let boundary = Named::input_boundary();
    assert!(
        boundary.type_name().ends_with("schema_cache::Named"),
        "{}",
        boundary.type_name()
    );
    let debug = format!("{boundary:?}");
    assert!(
        debug.starts_with("BoundarySchema { type_name: \"")
            && debug.ends_with("Named\", direction: Input, compiles: true, strict: false, .. }"),
        "{debug}"
    );
}

/// Strings, booleans and lists of them: serde's own output is the whole contract, so the
/// residual is `true` and nothing is left to check.
#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Plain {
    title: String,
    done: bool,
    tags: Vec<String>,
}

#[test]
fn text_output_that_needs_no_check_is_written_without_a_value() {
    let boundary = Plain::output_boundary();
    assert_eq!(
        boundary.residual_schema(),
        Some(&serde_json::Value::Bool(true))
    );
    let plain = Plain {
        title: "a title".into(),
        done: true,
        tags: (0..16).map(|i| format!("tag-{i}")).collect(),
    };
    let (ours, floor) = written_as_serde_writes_it(&plain);
    // A `Value` would allocate each of the 18 strings again, and its maps and vectors.
    assert!(
        ours <= floor,
        "to_output_json allocated {ours} time(s), serde_json::to_string alone {floor}"
    );
}

/// Bounds serde does not enforce (a range, a length), on common keywords only: the residual
/// is checked as the text is written, without a `Value`.
#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Scored {
    #[schemars(length(min = 1, max = 64))]
    title: String,
    #[schemars(range(min = 0, max = 100))]
    score: u32,
    tags: Vec<String>,
}

#[test]
fn text_output_with_bounds_is_checked_as_written_without_a_value() {
    let boundary = Scored::output_boundary();
    assert!(
        boundary.__residual_is_fast(),
        "{:?}",
        boundary.residual_schema()
    );
    let scored = Scored {
        title: "a title".into(),
        score: 42,
        tags: (0..16).map(|i| format!("tag-{i}")).collect(),
    };
    let (ours, floor) = written_as_serde_writes_it(&scored);
    // Through a `Value` the 18 strings would be allocated again, with the map and the vector.
    assert!(
        ours <= floor + 2,
        "to_output_json allocated {ours} time(s), serde_json::to_string alone {floor}"
    );
    // The bound is still checked on the way out.
    let over = Scored {
        score: 101,
        ..scored
    };
    let err = over.to_output_json().unwrap_err();
    assert!(format!("{err:?}").contains("/score"), "{err:?}");
}

/// A recursive output with a constraint serde does not enforce: its residual has a `$ref`, so
/// it is checked by the general validator, and its depth is not bounded by the schema.
#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Node {
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    name: String,
    children: Vec<Node>,
}

fn chain(depth: usize) -> Node {
    let mut node = Node {
        name: "leaf".into(),
        children: Vec::new(),
    };
    for _ in 1..depth {
        node = Node {
            name: "inner".into(),
            children: vec![node],
        };
    }
    node
}

#[test]
fn a_recursive_output_is_checked_by_its_residual() {
    let residual = Node::output_boundary()
        .residual_schema()
        .unwrap()
        .to_string();
    assert!(residual.contains("\"$ref\""), "{residual}");
    assert!(!Node::output_boundary().__residual_is_fast());

    let value = chain(3).to_output_value().unwrap();
    assert_eq!(value["children"][0]["children"][0]["name"], "leaf");
    assert!(chain(3).to_output_json().unwrap().contains("\"leaf\""));

    let mut bad = chain(3);
    bad.children[0].name = "Not lower".into();
    let err = bad.to_output_value().unwrap_err();
    assert_eq!(err.code().as_str(), "output_invalid");
    assert_eq!(err.violations()[0].pointer, "/children/0/name");
}

#[test]
fn a_recursive_output_nested_too_deep_is_refused_before_it_is_walked() {
    // 100 levels of `Node` are 200 levels of JSON (an object and its `children` array).
    let deep = chain(100);
    let err = deep.to_output_value().unwrap_err();
    assert_eq!(err.code().as_str(), "output_invalid");
    assert_eq!(err.violations().len(), 1, "{err}");
    assert_eq!(err.violations()[0].keyword, "depth", "{err}");
    let err = deep.to_output_json().unwrap_err();
    assert_eq!(err.violations()[0].keyword, "depth", "{err}");
    // Within the limit, the same shape passes.
    assert!(chain(60).to_output_value().is_ok());
}

/// A constraint the fast checker leaves to the general validator (a pattern), next to a field
/// the schema leaves open: no `$ref`, so the residual's check is as deep as the schema.
#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Wrapped {
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    name: String,
    payload: serde_json::Value,
}

#[test]
fn an_output_open_value_nested_past_the_limit_is_not_walked_on_the_way_out() {
    // As documented on `AgentOutput::to_output_value`: the depth limit guards values from
    // outside; the typed output check walks only as deep as the residual's constraints.
    let mut payload = serde_json::json!("bottom");
    for _ in 0..200 {
        payload = serde_json::json!([payload]);
    }
    let wrapped = Wrapped {
        name: "ok".into(),
        payload,
    };
    let boundary = Wrapped::output_boundary();
    assert!(!boundary.__residual_is_fast());
    let value = wrapped.to_output_value().unwrap();
    // `validate_output` is given a value from outside, and refuses it.
    let err = Wrapped::validate_output(&value).unwrap_err();
    assert_eq!(err.violations()[0].keyword, "depth", "{err}");
    // The residual is still checked.
    let bad = Wrapped {
        name: "Upper".into(),
        payload: serde_json::Value::Null,
    };
    assert_eq!(
        bad.to_output_value().unwrap_err().violations()[0].pointer,
        "/name"
    );
}

#[derive(Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    #[schemars(length(min = 1, max = 200))]
    query: String,
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Hit {
    id: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    score: f64,
}

#[derive(Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Hits {
    hits: Vec<Hit>,
}

fn search_body(args: &SearchArgs) -> Hits {
    Hits {
        hits: (0..args.limit.min(5))
            .map(|i| Hit {
                id: format!("{}-{i}", args.query),
                score: 1.0 / f64::from(i + 1),
            })
            .collect(),
    }
}

/// Searches.
#[agentio_tools::tool(id = "kb.search", idempotent)]
async fn search(args: SearchArgs) -> Result<Hits, agentio_tools::ToolError> {
    Ok(search_body(&args))
}

/// A registry call that needs none of the contract's rarer machinery (one attempt, no
/// approval, no files, on a current-thread runtime) allocates twice beyond the serde floor of
/// decoding its input, running its body and encoding its output: the decoded input's box and
/// the body's future. (Its run id is written only when something reads it.) Approval, retries, files and a spawned body are
/// boxed only for the calls that use them; the input and output checks allocate nothing.
#[test]
fn a_common_registry_call_allocates_twice_beyond_the_serde_floor() {
    let mut registry = agentio_tools::ToolRegistry::new();
    registry.register(SearchTool).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let arguments = serde_json::json!({ "query": "invoices", "limit": 5 });
    let floor = || {
        let args = SearchArgs::deserialize(&arguments).unwrap();
        serde_json::to_value(search_body(&args)).unwrap()
    };
    let call = |input| runtime.block_on(registry.call("kb.search", input)).unwrap();
    // The first call compiles the boundaries and warms the runtime.
    assert_eq!(call(arguments.clone()), floor());
    for _ in 0..3 {
        let (expected, floor_allocations) = allocations_during(floor);
        let input = arguments.clone();
        let (output, call_allocations) = allocations_during(|| call(input));
        assert_eq!(output, expected);
        assert_eq!(
            call_allocations,
            floor_allocations + 2,
            "the call allocated {call_allocations} time(s), the floor {floor_allocations}"
        );
    }
}
