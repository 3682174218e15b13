//! Model-local functions (checked from IR version 8, as onnx does).

use crate::diag::codes;
use std::collections::{HashMap, HashSet};

use super::graph::{item, node_step};
use super::node::{check_node_local, check_subgraphs};
use super::{q, Checker, OpsetMap};
use crate::diag::{Location, Step};
use crate::ir::Scope;
use crate::names::Name;
use crate::proto::{FunctionProto, GraphProto, ModelProto, NodeProto};

/// More functions than this is refused (onnx's limit).
const MAX_FUNCTIONS: usize = 10_000;

/// Longest acyclic call chain accepted. onnx's own limit (100) depends on
/// hash-map iteration order; this bound only catches chains no real model
/// has (see docs/checks.md).
const MAX_CALL_DEPTH: usize = 256;

fn normalize(domain: &str) -> &str {
    if domain == "ai.onnx" {
        ""
    } else {
        domain
    }
}

fn function_id(f: &FunctionProto) -> String {
    let mut id = format!("{}::{}", normalize(f.domain()), f.name());
    if !f.overload().is_empty() {
        id.push_str("::");
        id.push_str(f.overload());
    }
    id
}

fn callee_id(n: &NodeProto) -> String {
    let mut id = format!("{}::{}", normalize(n.domain()), n.op_type());
    if !n.overload().is_empty() {
        id.push_str("::");
        id.push_str(n.overload());
    }
    id
}

pub(crate) fn function_step(f: &FunctionProto) -> Step {
    Step::Function {
        domain: f.domain().to_string(),
        name: f.name().to_string(),
    }
}

fn opset_map<'f>(c: &mut Checker<'_>, f: &'f FunctionProto, loc: &Location) -> OpsetMap<'f> {
    let mut map = OpsetMap::default();
    for (i, o) in f.opset_import.iter().enumerate() {
        if i32::try_from(o.version()).is_err() {
            c.emit(
                codes::OPSET_VERSION_RANGE,
                &loc.child(item("opset_import", i, o.domain())),
                format!(
                    "opset version {} is out of the supported range (32-bit)",
                    o.version()
                ),
            );
        }
        map.insert(Name(o.domain()), o.version());
    }
    map
}

pub(crate) fn check_functions(
    c: &mut Checker<'_>,
    model: &ModelProto,
    model_opsets: &OpsetMap<'_>,
    parent: &Location,
) {
    // Opsets of the model, completed by the first function importing a domain.
    let mut merged = model_opsets.clone();
    for f in &model.functions {
        for o in &f.opset_import {
            merged.entry(Name(o.domain())).or_insert(o.version());
        }
    }
    if model.functions.len() > MAX_FUNCTIONS {
        c.emit(
            codes::TOO_MANY_FUNCTIONS,
            &parent.child(Step::Field("functions")),
            format!(
                "the model has {} functions, more than the limit of {MAX_FUNCTIONS}",
                model.functions.len()
            ),
        );
        return;
    }
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut duplicate = false;
    for (i, f) in model.functions.iter().enumerate() {
        let id = function_id(f);
        if ids.insert(id.clone(), i).is_some() {
            duplicate = true;
            c.emit(
                codes::DUPLICATE_FUNCTION,
                &parent.child(function_step(f)),
                format!("more than one function has the id {}", q(&id)),
            );
        }
    }
    if !duplicate {
        check_call_graph(c, model, &ids, parent);
    }
    for f in &model.functions {
        check_function(c, f, &merged, &parent.child(function_step(f)));
    }
}

/// Cycles (recursion) and over-long call chains between local functions.
fn check_call_graph(
    c: &mut Checker<'_>,
    model: &ModelProto,
    ids: &HashMap<String, usize>,
    parent: &Location,
) {
    let n = model.functions.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, f) in model.functions.iter().enumerate() {
        let mut callees = HashSet::new();
        let mut stack: Vec<&NodeProto> = f.node.iter().collect();
        while let Some(node) = stack.pop() {
            if let Some(&j) = ids.get(&callee_id(node)) {
                callees.insert(j);
            }
            for a in &node.attribute {
                let graphs: Vec<&GraphProto> = a.g().into_iter().chain(a.graphs().iter()).collect();
                for g in graphs {
                    stack.extend(g.node.iter());
                }
            }
        }
        let mut sorted: Vec<usize> = callees.into_iter().collect();
        sorted.sort_unstable();
        edges[i] = sorted;
    }
    // Iterative DFS with colours; the longest chain is computed on the way back.
    #[derive(Clone, Copy, PartialEq)]
    enum Colour {
        White,
        Grey,
        Black,
    }
    let mut colour = vec![Colour::White; n];
    let mut depth = vec![1usize; n];
    let mut reported_cycle = false;
    for start in 0..n {
        if colour[start] != Colour::White {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        colour[start] = Colour::Grey;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&w) = edges[v].get(*next) {
                *next += 1;
                match colour[w] {
                    Colour::White => {
                        colour[w] = Colour::Grey;
                        stack.push((w, 0));
                    }
                    Colour::Grey => {
                        if !reported_cycle {
                            reported_cycle = true;
                            let from = stack.iter().position(|&(x, _)| x == w).unwrap_or(0);
                            let mut path: Vec<String> = stack[from..]
                                .iter()
                                .map(|&(x, _)| function_id(&model.functions[x]))
                                .collect();
                            path.push(function_id(&model.functions[w]));
                            c.emit(
                                codes::FUNCTION_CYCLE,
                                &parent.child(function_step(&model.functions[w])),
                                format!(
                                    "model-local functions call each other in a cycle: {}",
                                    path.join(" -> ")
                                ),
                            );
                        }
                    }
                    Colour::Black => {}
                }
            } else {
                colour[v] = Colour::Black;
                depth[v] = 1 + edges[v]
                    .iter()
                    .filter(|&&w| colour[w] == Colour::Black)
                    .map(|&w| depth[w])
                    .max()
                    .unwrap_or(0);
                stack.pop();
            }
        }
    }
    if !reported_cycle {
        if let Some((i, &d)) = depth.iter().enumerate().max_by_key(|&(_, d)| *d) {
            if d > MAX_CALL_DEPTH {
                c.emit(
                    codes::FUNCTION_CALLS_TOO_DEEP,
                    &parent.child(function_step(&model.functions[i])),
                    format!(
                        "a chain of {d} nested function calls starts here (limit {MAX_CALL_DEPTH})"
                    ),
                );
            }
        }
    }
}

fn check_function(
    c: &mut Checker<'_>,
    f: &FunctionProto,
    model_opsets: &OpsetMap<'_>,
    loc: &Location,
) {
    if f.name().is_empty() {
        c.emit(
            codes::NO_FUNCTION_NAME,
            loc,
            "the function has no name".into(),
        );
    }
    if f.domain.is_none() {
        c.emit(
            codes::NO_FUNCTION_DOMAIN,
            loc,
            "the function has no domain field (it may be empty, but must be present)".into(),
        );
    }
    let opsets = opset_map(c, f, loc);
    super::policy::nodes(c, f.node.len());
    let mut scope = Scope::default();
    scope.push();
    for (i, input) in f.input.iter().enumerate() {
        if !scope.add(input) {
            c.emit(
                codes::DUPLICATE_FUNCTION_INPUT,
                &loc.child(item("input", i, input)),
                format!("function input {} is declared more than once", q(input)),
            );
        }
    }
    let mut seen = HashSet::new();
    for (i, o) in f.output.iter().enumerate() {
        if !seen.insert(o.as_str()) {
            c.emit(
                codes::DUPLICATE_FUNCTION_OUTPUT,
                &loc.child(item("output", i, o)),
                format!("function output {} is declared more than once", q(o)),
            );
        }
    }
    let mut seen = HashSet::new();
    for (i, a) in f.attribute.iter().enumerate() {
        if !seen.insert(a.as_str()) {
            c.emit(
                codes::DUPLICATE_FUNCTION_ATTRIBUTE,
                &loc.child(item("attribute", i, a)),
                format!("function attribute {} is declared more than once", q(a)),
            );
        }
    }
    let mut suggestions_left = 20usize;
    for (i, n) in f.node.iter().enumerate() {
        let nloc = loc.child(node_step(i, n));
        for (k, input) in n.input.iter().enumerate() {
            if !input.is_empty() && !scope.in_innermost(input) {
                let hint = if suggestions_left > 0 {
                    suggestions_left -= 1;
                    crate::diag::closest(
                        input,
                        scope.names().take(super::graph::MAX_SUGGESTION_CANDIDATES),
                    )
                    .map(|s| format!("did you mean {}?", q(s)))
                } else {
                    None
                };
                c.emit_hint(
                    codes::UNDEFINED_FUNCTION_INPUT,
                    &nloc.child(item("input", k, input)),
                    format!(
                        "input {} is neither a function input nor an output of an earlier node",
                        q(input)
                    ),
                    hint,
                );
            }
        }
        if !c.options.skip_opset_compatibility_check {
            check_opset_compatibility(c, n, &opsets, model_opsets, &nloc);
        }
        check_node_local(c, n, &opsets, true, &|| nloc.clone());
        check_subgraphs(c, n, &opsets, &mut scope, &nloc);
        for (k, output) in n.output.iter().enumerate() {
            if output.is_empty() {
                continue;
            }
            if scope.in_any(output) {
                c.emit(
                    codes::FUNCTION_ASSIGNED_TWICE,
                    &nloc.child(item("output", k, output)),
                    format!(
                        "{} is assigned more than once (functions must be in SSA form)",
                        q(output)
                    ),
                );
            } else {
                scope.add(output);
            }
        }
    }
}

fn check_opset_compatibility(
    c: &mut Checker<'_>,
    n: &NodeProto,
    func: &OpsetMap<'_>,
    model: &OpsetMap<'_>,
    loc: &Location,
) {
    let Some(&fv) = func.get(&Name(n.domain())) else {
        c.emit(
            codes::FUNCTION_DOMAIN_NOT_IMPORTED,
            loc,
            format!(
                "the function does not import the node's domain {}",
                q(n.domain())
            ),
        );
        return;
    };
    let Some(&mv) = model.get(&Name(n.domain())) else {
        return;
    };
    if fv == mv {
        return;
    }
    let sm = c
        .schemas
        .get(n.op_type(), mv, n.domain())
        .map(|s| s.since_version);
    let sf = c
        .schemas
        .get(n.op_type(), fv, n.domain())
        .map(|s| s.since_version);
    if sm != sf {
        c.emit(
            codes::FUNCTION_OPSET_MISMATCH,
            loc,
            format!(
                "operator {} differs between the function's opset ({fv}) and the model's ({mv}) for domain {}",
                q(n.op_type()),
                q(n.domain())
            ),
        );
    }
}
