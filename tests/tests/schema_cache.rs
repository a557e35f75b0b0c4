//! The second access to a type's schema returns the same reference and allocates nothing.
//!
//! Its own test binary: it installs a counting global allocator. The count is per thread, so
//! the harness's other threads cannot disturb a measurement.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use io_core::{AgentInput, AgentOutput, BoundarySchema};
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
