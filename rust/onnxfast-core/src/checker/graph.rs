//! Graphs: value infos, initializers, SSA form, topological order, outputs.

use crate::diag::codes;
use rayon::prelude::*;

use super::node;
use super::tensor;
use super::{q, Checker, OpsetMap};
use crate::diag::{closest, Location, Step};
use crate::ir::{DefUse, Scope};
use crate::names::{Name, NameSet};
use crate::proto::{type_proto, GraphProto, NodeProto, ValueInfoProto};

/// Undefined inputs per graph that get a spelling suggestion.
const MAX_SUGGESTIONS: usize = 20;

/// Names a suggestion compares against, at most.
pub(crate) const MAX_SUGGESTION_CANDIDATES: usize = 20_000;

/// Below this many nodes, node-local checks run on the calling thread.
const PARALLEL_NODES: usize = 512;

/// Checks a graph; `parent` is where it sits (empty for the main graph).
pub(crate) fn check_graph<'a>(
    c: &mut Checker<'_>,
    g: &'a GraphProto,
    opsets: &OpsetMap<'_>,
    is_main: bool,
    scope: &mut Scope<'a>,
    parent: &Location,
) {
    let here = parent.child(Step::Graph(g.name().to_string()));
    if g.name().is_empty() {
        c.emit(
            codes::NO_GRAPH_NAME,
            &here,
            "the graph has no name (graph names are required)".into(),
        );
    }
    for (i, vi) in g.input.iter().enumerate() {
        check_value_info(c, vi, is_main, &here.child(item("input", i, vi.name())));
    }
    for (i, vi) in g.output.iter().enumerate() {
        check_value_info(c, vi, is_main, &here.child(item("output", i, vi.name())));
    }
    scope.push_with_capacity(g.input.len() + g.initializer.len() + g.sparse_initializer.len());
    for (i, vi) in g.input.iter().enumerate() {
        if !scope.add(vi.name()) {
            c.emit(
                codes::DUPLICATE_GRAPH_INPUT,
                &here.child(item("input", i, vi.name())),
                format!(
                    "graph input {} is declared more than once (SSA form)",
                    q(vi.name())
                ),
            );
        }
    }

    // Initializers and sparse initializers share one name set.
    let mut init_names = NameSet::default();
    let init_diags = tensor_checks_in_parallel(c, g, &here);
    for (i, t) in g.initializer.iter().enumerate() {
        let loc = here.child(item("initializer", i, t.name()));
        if t.name.is_none() || t.name().is_empty() {
            c.emit(
                codes::NO_INITIALIZER_NAME,
                &loc,
                "initializer has no name".into(),
            );
        } else if !init_names.insert(Name(t.name())) {
            c.emit(
                codes::DUPLICATE_INITIALIZER,
                &loc,
                format!("initializer name {} is used more than once", q(t.name())),
            );
        }
        if c.ir_version <= 3 {
            if !t.name().is_empty() && !scope.in_innermost(t.name()) {
                c.emit(
                    codes::INITIALIZER_NOT_INPUT,
                    &loc,
                    format!(
                        "initializer {} is not a graph input (required for IR version {} ≤ 3)",
                        q(t.name()),
                        c.ir_version
                    ),
                );
            }
        } else {
            scope.add(t.name());
        }
    }
    c.absorb(init_diags);
    for (i, s) in g.sparse_initializer.iter().enumerate() {
        let name = s.values.as_ref().map_or("", |v| v.name());
        let loc = here.child(item("sparse_initializer", i, name));
        let has_name = s.values.as_ref().is_some_and(|v| v.name.is_some());
        if !has_name || name.is_empty() {
            c.emit(
                codes::NO_SPARSE_INITIALIZER_NAME,
                &loc,
                "sparse initializer has no name (values.name)".into(),
            );
        } else if !init_names.insert(Name(name)) {
            c.emit(
                codes::DUPLICATE_SPARSE_INITIALIZER,
                &loc,
                format!(
                    "sparse initializer name {} is already used by another initializer",
                    q(name)
                ),
            );
        }
        if s.values.is_some() {
            tensor::check_sparse(c, s, &|| loc.clone());
        }
        scope.add(name);
    }

    // Node-local checks (no scope involved) run in parallel on large graphs,
    // beside a read-only pass that proves the graph's SSA form and order
    // right; only a graph that fails it (or has subgraphs) takes the exact,
    // sequential walk below.
    let (local, proven) = if g.node.len() >= PARALLEL_NODES {
        let shared: &Checker<'_> = c;
        let shared_scope: &Scope<'a> = scope;
        rayon::join(
            || node_findings(shared, g, opsets, is_main, &here, true),
            || proven_ssa(g, shared_scope),
        )
    } else {
        (node_findings(c, g, opsets, is_main, &here, false), None)
    };
    let mut local = local.into_iter().peekable();
    if let Some(defined) = proven {
        for (_, diags) in local {
            c.absorb(diags);
        }
        check_outputs_produced(c, g, &here, |name| {
            scope.in_innermost(name) || defined.contains(&Name(name))
        });
        scope.pop();
        return;
    }

    scope.reserve(g.node.iter().map(|n| n.output.len()).sum());
    // Producer of each name in this graph, built on the first undefined input.
    let mut defuse: Option<DefUse> = None;
    // Spelling suggestions scan the names in scope: only for the first few
    // undefined inputs, so a hostile graph cannot make this quadratic.
    let mut suggestions_left = MAX_SUGGESTIONS;
    for (i, n) in g.node.iter().enumerate() {
        let loc = || here.child(node_step(i, n));
        for (k, input) in n.input.iter().enumerate() {
            if !input.is_empty() && !scope.in_any(input) {
                let defuse = defuse.get_or_insert_with(|| DefUse::build(&g.node));
                let hint = match defuse.producer(input) {
                    Some(j) if j >= i => Some(format!(
                        "{} is produced later, by {}: the nodes are not in topological order",
                        q(input),
                        node_step(j, &g.node[j])
                    )),
                    _ if suggestions_left > 0 => {
                        suggestions_left -= 1;
                        closest(input, scope.names().take(MAX_SUGGESTION_CANDIDATES))
                            .map(|s| format!("did you mean {}?", q(s)))
                    }
                    _ => None,
                };
                c.emit_hint(
                    codes::UNDEFINED_INPUT,
                    &loc().child(item("input", k, input)),
                    format!(
                        "input {} is not defined before this node (not a graph input, an \
                         initializer, or an output of an earlier node)",
                        q(input)
                    ),
                    hint,
                );
            }
        }
        if let Some((_, diags)) = local.next_if(|(j, _)| *j == i) {
            c.absorb(diags);
        }
        if n.attribute
            .iter()
            .any(|a| a.g.is_some() || !a.graphs.is_empty())
        {
            node::check_subgraphs(c, n, opsets, scope, &loc());
        }
        for (k, output) in n.output.iter().enumerate() {
            if output.is_empty() {
                continue;
            }
            // One lookup in the innermost level (insert), then the enclosing ones.
            if scope.in_outer(output) || !scope.add(output) {
                c.emit(
                    codes::ASSIGNED_TWICE,
                    &loc().child(item("output", k, output)),
                    format!(
                        "{} is assigned more than once (graphs must be in SSA form)",
                        q(output)
                    ),
                );
            }
        }
    }

    check_outputs_produced(c, g, &here, |name| scope.in_innermost(name));
    scope.pop();
}

/// E214: every graph output must be defined in the graph itself.
fn check_outputs_produced(
    c: &mut Checker<'_>,
    g: &GraphProto,
    here: &Location,
    produced: impl Fn(&str) -> bool,
) {
    for (i, vi) in g.output.iter().enumerate() {
        if !produced(vi.name()) {
            c.emit(
                codes::OUTPUT_NOT_PRODUCED,
                &here.child(item("output", i, vi.name())),
                format!(
                    "graph output {} is not produced in this graph",
                    q(vi.name())
                ),
            );
        }
    }
}

/// Node-local findings, (node index, findings) for the nodes that have any.
fn node_findings(
    c: &Checker<'_>,
    g: &GraphProto,
    opsets: &OpsetMap<'_>,
    is_main: bool,
    here: &Location,
    parallel: bool,
) -> Vec<(usize, (Vec<super::Diagnostic>, super::Counts))> {
    let check = |(i, n): (usize, &NodeProto)| {
        let mut fork = c.fork();
        node::check_node_local(&mut fork, n, opsets, is_main, &|| {
            here.child(node_step(i, n))
        });
        (fork.counts.total() > 0).then(|| (i, fork.into_findings()))
    };
    if parallel {
        g.node.par_iter().enumerate().filter_map(check).collect()
    } else {
        g.node.iter().enumerate().filter_map(check).collect()
    }
}

/// The names the nodes of `g` define, if every node input is defined before
/// its node (here or in an enclosing scope), no name is assigned twice and
/// no node holds a subgraph; `None` otherwise (the caller then walks the
/// graph again, exactly). `scope`'s innermost level holds the graph's inputs
/// and initializers.
fn proven_ssa<'a>(g: &'a GraphProto, scope: &Scope<'a>) -> Option<NameSet<'a>> {
    let outputs: usize = g.node.iter().map(|n| n.output.len()).sum();
    let mut defined = NameSet::default();
    defined.reserve(outputs);
    for n in &g.node {
        if n.attribute
            .iter()
            .any(|a| a.g.is_some() || !a.graphs.is_empty())
        {
            return None;
        }
        for input in &n.input {
            if !input.is_empty() && !defined.contains(&Name(input)) && !scope.in_any(input) {
                return None;
            }
        }
        for output in &n.output {
            if !output.is_empty() && (scope.in_any(output) || !defined.insert(Name(output))) {
                return None;
            }
        }
    }
    Some(defined)
}

/// check_tensor of every initializer, in parallel for large graphs.
fn tensor_checks_in_parallel(
    c: &Checker<'_>,
    g: &GraphProto,
    here: &Location,
) -> (Vec<super::Diagnostic>, super::Counts) {
    let check = |(i, t): (usize, &crate::proto::TensorProto)| {
        let mut fork = c.fork();
        tensor::check_tensor(&mut fork, t, &|| {
            here.child(item("initializer", i, t.name()))
        });
        fork.into_findings()
    };
    let parts: Vec<(Vec<super::Diagnostic>, super::Counts)> =
        if g.initializer.len() >= PARALLEL_NODES {
            g.initializer.par_iter().enumerate().map(check).collect()
        } else {
            g.initializer.iter().enumerate().map(check).collect()
        };
    let mut total = super::Counts::default();
    for p in &parts {
        total.merge(p.1);
    }
    let out = parts.into_iter().flat_map(|p| p.0).take(c.limit).collect();
    (out, total)
}

pub(crate) fn item(field: &'static str, index: usize, name: &str) -> Step {
    Step::Item {
        field,
        index,
        name: name.to_string(),
    }
}

pub(crate) fn node_step(index: usize, n: &NodeProto) -> Step {
    Step::Node {
        index,
        name: n.name().to_string(),
        op_type: n.op_type().to_string(),
    }
}

/// Graph inputs and outputs: a name always; a complete type in the main graph.
fn check_value_info(c: &mut Checker<'_>, vi: &ValueInfoProto, is_main: bool, loc: &Location) {
    if vi.name().is_empty() {
        c.emit(codes::NO_VALUE_NAME, loc, "the value has no name".into());
    }
    if !is_main {
        return;
    }
    let Some(t) = &vi.r#type else {
        c.emit(
            codes::NO_VALUE_TYPE,
            loc,
            "the value has no type (main-graph inputs and outputs need one)".into(),
        );
        return;
    };
    let missing =
        |what: &str| format!("its type has no {what} (required for main-graph inputs and outputs)");
    match &t.value {
        Some(type_proto::Value::TensorType(x)) => {
            if x.elem_type.is_none() {
                c.emit(codes::INCOMPLETE_VALUE_TYPE, loc, missing("elem_type"));
            } else if x.shape.is_none() {
                c.emit(codes::INCOMPLETE_VALUE_TYPE, loc, missing("shape"));
            }
        }
        Some(type_proto::Value::SparseTensorType(x)) => {
            if x.elem_type.is_none() {
                c.emit(codes::INCOMPLETE_VALUE_TYPE, loc, missing("elem_type"));
            } else if x.shape.is_none() {
                c.emit(codes::INCOMPLETE_VALUE_TYPE, loc, missing("shape"));
            }
        }
        Some(type_proto::Value::SequenceType(x)) => {
            if x.elem_type.is_none() {
                c.emit(
                    codes::INCOMPLETE_VALUE_TYPE,
                    loc,
                    missing("sequence elem_type"),
                );
            }
        }
        Some(type_proto::Value::OptionalType(x)) => {
            if x.elem_type.is_none() {
                c.emit(
                    codes::INCOMPLETE_VALUE_TYPE,
                    loc,
                    missing("optional elem_type"),
                );
            }
        }
        Some(type_proto::Value::MapType(x)) => {
            if x.key_type.is_none() {
                c.emit(codes::INCOMPLETE_VALUE_TYPE, loc, missing("map key_type"));
            } else if x.value_type.is_none() {
                c.emit(codes::INCOMPLETE_VALUE_TYPE, loc, missing("map value_type"));
            }
        }
        Some(type_proto::Value::OpaqueType(x)) => {
            if x.name().is_empty() {
                c.emit(
                    codes::INCOMPLETE_VALUE_TYPE,
                    loc,
                    "its opaque type has no name".into(),
                );
            }
        }
        None => c.emit(
            codes::EMPTY_VALUE_TYPE,
            loc,
            "its type sets none of tensor, sequence, map, optional, sparse or opaque".into(),
        ),
    }
}
