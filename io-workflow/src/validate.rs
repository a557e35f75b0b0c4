//! Parse-time validation (RFC-0024 §8), plus unknown dependencies, cycles and type names.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::errors::{ValidationError, quoted_list};
use crate::model::{InputSource, Phase, Workflow};
use crate::yaml::Position;

/// The closest name, for suggestions.
pub(crate) fn closest<'a>(word: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|n| (strsim::levenshtein(word, n), n))
        .filter(|(d, n)| *d <= 1.max(n.len() / 3) && *d < word.len())
        .min()
        .map(|(_, n)| n)
}

impl Workflow {
    /// Every problem of the document's structure and wiring, in document order.
    pub fn validate(&self) -> Vec<ValidationError> {
        let mut problems = Vec::new();
        self.check_types(&mut problems);
        self.check_dependencies(&mut problems);
        self.check_cycles(&mut problems);
        self.check_inputs(&mut problems);
        problems.sort_by_key(ValidationError::position);
        problems.into_iter().map(ValidationError::bounded).collect()
    }

    /// Every type name used (in `types` fields and outputs) is declared.
    fn check_types(&self, problems: &mut Vec<ValidationError>) {
        let declared: BTreeSet<&str> = self.types.iter().map(|t| t.name.as_str()).collect();
        let mut unknown = |location: String, ty: &crate::model::TypeRef, at: Position| {
            for name in ty.names() {
                if !declared.contains(name) {
                    let candidates = declared
                        .iter()
                        .copied()
                        .chain(["string", "number", "integer", "boolean", "object", "array"]);
                    let suggestion = closest(name, candidates).map_or_else(
                        || "declare it under `types`, or use a primitive type".to_owned(),
                        |close| format!("did you mean `{close}`?"),
                    );
                    problems.push(ValidationError::TypeDeclarationError {
                        location: location.clone(),
                        declared: ty.to_string(),
                        suggestion,
                        message: format!("type `{name}` is not declared in `types`"),
                        line: at.line,
                        column: at.column,
                    });
                }
            }
        };
        for def in &self.types {
            for (i, (field, ty)) in def.fields.iter().enumerate() {
                let at = def.field_positions.get(i).copied().unwrap_or(def.at);
                unknown(format!("types.{}.{field}", def.name), ty, at);
            }
        }
        for phase in &self.phases {
            for output in phase.outputs.iter().flatten() {
                unknown(
                    format!("workflow.{}.outputs.{}", phase.name, output.key),
                    &output.ty,
                    output.at,
                );
            }
        }
    }

    /// Every `depends_on` target is a phase.
    fn check_dependencies(&self, problems: &mut Vec<ValidationError>) {
        let names: BTreeSet<&str> = self.phases.iter().map(|p| p.name.as_str()).collect();
        for phase in &self.phases {
            for (dep, at) in &phase.depends_on {
                if !names.contains(dep.as_str()) {
                    let suggestion = closest(dep, names.iter().copied()).map_or_else(
                        || format!("remove `{dep}` from depends_on, or add a phase with that name"),
                        |close| format!("did you mean `{close}`?"),
                    );
                    problems.push(ValidationError::UnknownDependencyError {
                        phase_name: phase.name.clone(),
                        dependency: dep.clone(),
                        suggestion,
                        message: format!(
                            "phase '{}' depends on '{dep}', which is not a phase of this workflow",
                            phase.name
                        ),
                        line: at.line,
                        column: at.column,
                    });
                }
            }
        }
    }

    /// `depends_on` has no cycle; each cycle is reported once.
    fn check_cycles(&self, problems: &mut Vec<ValidationError>) {
        let index: BTreeMap<&str, usize> = self
            .phases
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.as_str(), i))
            .collect();
        let edges: Vec<Vec<usize>> = self
            .phases
            .iter()
            .map(|p| {
                p.depends_on
                    .iter()
                    .filter_map(|(d, _)| index.get(d.as_str()).copied())
                    .collect()
            })
            .collect();
        // Iterative depth-first search with colours: 0 new, 1 on the stack, 2 done.
        let mut colour = vec![0u8; self.phases.len()];
        let mut reported: BTreeSet<Vec<usize>> = BTreeSet::new();
        for start in 0..self.phases.len() {
            if colour[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            let mut path: Vec<usize> = vec![start];
            colour[start] = 1;
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if let Some(&dep) = edges[node].get(*next) {
                    *next += 1;
                    match colour[dep] {
                        0 => {
                            colour[dep] = 1;
                            stack.push((dep, 0));
                            path.push(dep);
                        }
                        1 => {
                            let from = path.iter().position(|&p| p == dep).unwrap_or(0);
                            let mut cycle: Vec<usize> = path[from..].to_vec();
                            let mut key = cycle.clone();
                            key.sort_unstable();
                            if reported.insert(key) {
                                cycle.push(dep);
                                let names: Vec<String> =
                                    cycle.iter().map(|&i| self.phases[i].name.clone()).collect();
                                let at = self.phases[cycle[0]].at;
                                problems.push(ValidationError::DependencyCycleError {
                                    message: format!("the phases {} depend on each other, so none of them can start", names.join(" -> ")),
                                    cycle: names,
                                    line: at.line,
                                    column: at.column,
                                });
                            }
                        }
                        _ => {}
                    }
                } else {
                    colour[node] = 2;
                    stack.pop();
                    path.pop();
                }
            }
        }
    }

    /// RFC-0024 §8: each mapping is well-formed (4), names an existing phase (1) that is a
    /// declared dependency (2), and a key that phase declares when it declares outputs (3).
    /// One `InputWiringError` per phase, listing all its invalid references.
    fn check_inputs(&self, problems: &mut Vec<ValidationError>) {
        let names: Vec<&str> = self.phases.iter().map(|p| p.name.as_str()).collect();
        let mut index: HashMap<&str, &Phase> = HashMap::with_capacity(self.phases.len());
        for phase in &self.phases {
            index.entry(phase.name.as_str()).or_insert(phase);
        }
        for phase in &self.phases {
            let mut invalid: Vec<(String, Position, String)> = Vec::new();
            for input in &phase.inputs {
                let problem = match &input.source {
                    InputSource::Malformed => Some(format!(
                        "`{}` is not a mapping: write `phase_name.key`, `$trigger.key` or `$initial_state.key`",
                        input.expression
                    )),
                    InputSource::Trigger(_) | InputSource::InitialState(_) => None,
                    InputSource::Phase {
                        phase: upstream,
                        key,
                    } => match index.get(upstream.as_str()).copied() {
                        None => Some(match closest(upstream, names.iter().copied()) {
                            Some(close) => format!(
                                "phase `{upstream}` does not exist; did you mean `{close}`?"
                            ),
                            None => format!("phase `{upstream}` does not exist in this workflow"),
                        }),
                        Some(_) if !phase.depends_on.iter().any(|(d, _)| d == upstream) => {
                            Some(format!(
                                "`{upstream}` is not in depends_on; add it: depends_on: [{}]",
                                phase
                                    .depends_on
                                    .iter()
                                    .map(|(d, _)| d.as_str())
                                    .chain([upstream.as_str()])
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                        }
                        Some(source) => match &source.outputs {
                            Some(outputs) if !outputs.iter().any(|o| &o.key == key) => {
                                let declared: Vec<String> =
                                    outputs.iter().map(|o| o.key.clone()).collect();
                                let hint = closest(key, declared.iter().map(String::as_str))
                                    .map_or_else(String::new, |close| {
                                        format!("did you mean `{upstream}.{close}`? ")
                                    });
                                Some(format!(
                                    "phase `{upstream}` does not declare output `{key}`; {hint}it declares {}",
                                    if declared.is_empty() {
                                        "none".to_owned()
                                    } else {
                                        quoted_list(&declared)
                                    }
                                ))
                            }
                            _ => None,
                        },
                    },
                };
                if let Some(problem) = problem {
                    invalid.push((input.expression.clone(), input.at, problem));
                }
            }
            if let Some((_, at, _)) = invalid.first() {
                let refs: Vec<String> = invalid.iter().map(|(r, _, _)| r.clone()).collect();
                let suggestion = invalid
                    .iter()
                    .map(|(_, _, p)| p.as_str())
                    .collect::<Vec<_>>()
                    .join("; ");
                problems.push(ValidationError::InputWiringError {
                    phase_name: phase.name.clone(),
                    message: format!(
                        "phase '{}' has invalid input mappings: {}",
                        phase.name,
                        quoted_list(&refs)
                    ),
                    invalid_refs: refs,
                    suggestion,
                    line: at.line,
                    column: at.column,
                });
            }
        }
    }

    /// The phases in an order where every phase comes after its dependencies, grouped in levels
    /// (a level's phases depend only on earlier levels). `None` when there is a cycle.
    pub fn levels(&self) -> Option<Vec<Vec<&str>>> {
        // Kahn's algorithm, level by level: O(phases + edges).
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(self.phases.len());
        for (at, phase) in self.phases.iter().enumerate() {
            index.entry(phase.name.as_str()).or_insert(at);
        }
        let mut waiting = vec![0usize; self.phases.len()];
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); self.phases.len()];
        for (at, phase) in self.phases.iter().enumerate() {
            let deps: BTreeSet<usize> = phase
                .depends_on
                .iter()
                .filter_map(|(d, _)| index.get(d.as_str()).copied())
                .collect();
            waiting[at] = deps.len();
            for dep in deps {
                dependents[dep].push(at);
            }
        }
        let mut level: Vec<usize> = (0..self.phases.len())
            .filter(|&i| waiting[i] == 0)
            .collect();
        let mut placed = 0;
        let mut levels = Vec::new();
        while !level.is_empty() {
            placed += level.len();
            let mut next = Vec::new();
            for &at in &level {
                for &dependent in &dependents[at] {
                    waiting[dependent] -= 1;
                    if waiting[dependent] == 0 {
                        next.push(dependent);
                    }
                }
            }
            next.sort_unstable();
            let mut names: Vec<&str> = level
                .iter()
                .map(|&i| self.phases[i].name.as_str())
                .collect();
            names.sort_unstable();
            levels.push(names);
            level = next;
        }
        (placed == self.phases.len()).then_some(levels)
    }
}

#[cfg(test)]
mod closest_tests {
    use super::closest;

    #[test]
    fn a_suggestion_is_within_a_third_of_the_name() {
        let names = ["research", "sources"];
        assert_eq!(closest("reserch", names), Some("research"));
        // Nine letters: three edits are close enough, four are not.
        assert_eq!(closest("abcdefxyz", ["abcdefghi"]), Some("abcdefghi"));
        assert_eq!(closest("abcdexyzw", ["abcdefghi"]), None);
        // A short name still gets a one-edit suggestion, not two.
        assert_eq!(closest("ax", ["ab"]), Some("ab"));
        assert_eq!(closest("xy", ["ab"]), None);
    }

    #[test]
    fn a_word_is_never_replaced_whole_and_the_nearest_wins() {
        // One edit, but it replaces all of the word: no suggestion.
        assert_eq!(closest("a", ["b"]), None);
        assert_eq!(closest("ab", ["abc", "abcd"]), Some("abc"));
        assert_eq!(closest("abcd", ["abce", "abcx"]), Some("abce"));
        assert_eq!(closest("same", ["same"]), Some("same"));
        assert_eq!(closest("word", []), None);
    }
}
