//! Graphs: value infos, initializers, SSA form, topological order, outputs.

use crate::diag::codes;
use rayon::prelude::*;
use std::collections::VecDeque;

use super::node;
use super::tensor;
use super::{policy, q, Checker, Findings, OpsetMap};
use crate::decode::lazy::{GraphLists, LazyList, ListElement, NodeNames, NodeRef};
use crate::diag::{closest, Location, Step};
use crate::error::DecodeError;
use crate::ir::{DefUse, Scope};
use crate::names::{Lookahead, NameTable, PROBE_AHEAD};
use crate::proto::{type_proto, GraphProto, NodeFields, NodeProto, TensorProto, ValueInfoProto};

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
    policy::nodes(c, g.node.len());
    let outputs: usize = g.node.iter().map(|n| n.output.len()).sum();
    graph_head(
        c,
        g,
        is_main,
        scope,
        &here,
        g.initializer.len() + g.sparse_initializer.len() + outputs,
    );

    // Initializers and sparse initializers share one name set.
    let Ok(init_diags) = tensor_checks(c, g.initializer.as_slice(), &here);
    let mut init_names = initializer_names(
        c,
        scope,
        &here,
        g.initializer.iter().map(|t| t.name.as_deref()),
        // The sparse initializers' names are checked against these.
        !g.sparse_initializer.is_empty(),
    );
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
        } else if !init_names.insert(name, ()) {
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
    // beside a pass that proves the graph's SSA form and order right
    // (reporting nothing; the outputs it adds to the scope are taken back
    // when it fails); only a graph that fails it (or has subgraphs) takes
    // the exact, sequential walk below.
    let (Ok(local), proven) = if g.node.len() >= PARALLEL_NODES {
        let shared: &Checker<'_> = c;
        let proving: &mut Scope<'a> = scope;
        rayon::join(
            || node_findings(shared, g.node.as_slice(), opsets, is_main, &here),
            || {
                prove_ssa(
                    g.node
                        .iter()
                        .map(|n| Ok::<_, std::convert::Infallible>(NodeNames::of(n))),
                    proving,
                )
            },
        )
    } else {
        (
            node_findings(c, g.node.as_slice(), opsets, is_main, &here),
            Err(0),
        )
    };
    let mut local = local.into_iter().peekable();
    match proven {
        Ok(()) => {
            for (_, diags) in local {
                c.absorb(diags);
            }
            check_outputs_produced(c, g, &here, |name| scope.in_innermost(name));
            scope.pop();
            return;
        }
        Err(added) => unprove(&g.node, added, scope),
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
            .any(|a| a.g().is_some() || !a.graphs().is_empty())
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

/// A graph's list: decoded (a slice) or decoded on touch (the main graph
/// of a lazily loaded model), read a run of elements at a time.
pub(crate) trait Elements<T>: Sync {
    type Error: Send;
    fn count(&self) -> usize;
    /// Calls `f(i, element)` for each element of `range`, in order.
    fn each(
        &self,
        range: std::ops::Range<usize>,
        f: &mut dyn FnMut(usize, &T),
    ) -> Result<(), Self::Error>;
}

impl<T: Sync> Elements<T> for [T] {
    type Error = std::convert::Infallible;
    fn count(&self) -> usize {
        self.len()
    }
    fn each(
        &self,
        range: std::ops::Range<usize>,
        f: &mut dyn FnMut(usize, &T),
    ) -> Result<(), Self::Error> {
        for i in range {
            f(i, &self[i]);
        }
        Ok(())
    }
}

impl<T: ListElement> Elements<T> for LazyList<T> {
    type Error = DecodeError;
    fn count(&self) -> usize {
        self.len()
    }
    fn each(
        &self,
        range: std::ops::Range<usize>,
        f: &mut dyn FnMut(usize, &T),
    ) -> Result<(), Self::Error> {
        self.for_each_in(range, f)
    }
}

/// Elements a task checks.
const RUN: usize = 256;

/// Runs `run` on each run of [`RUN`] elements (in parallel for large
/// lists) and returns what it gave, in order.
fn runs<T, E: Elements<T> + ?Sized, R: Send>(
    list: &E,
    run: impl Fn(&mut dyn FnMut(&mut dyn FnMut(usize, &T)) -> Result<(), E::Error>) -> Result<R, E::Error>
        + Sync,
) -> Result<Vec<R>, E::Error> {
    over_runs(list.count(), |range| {
        run(&mut |f| list.each(range.clone(), f))
    })
}

/// Runs `one` on each run of [`RUN`] indexes of `0..n` (in parallel when
/// `n` is large) and returns what it gave, in order.
fn over_runs<R: Send, Er: Send>(
    n: usize,
    one: impl Fn(std::ops::Range<usize>) -> Result<R, Er> + Sync,
) -> Result<Vec<R>, Er> {
    let one = |r: usize| one(r * RUN..((r + 1) * RUN).min(n));
    if n >= PARALLEL_NODES {
        (0..n.div_ceil(RUN)).into_par_iter().map(one).collect()
    } else {
        (0..n.div_ceil(RUN)).map(one).collect()
    }
}

/// Runs `check` on every element (in parallel runs for large lists) and
/// returns what it gave, in element order.
fn each_checked<T, E: Elements<T> + ?Sized, R: Send>(
    list: &E,
    check: impl Fn(usize, &T) -> Option<R> + Sync,
) -> Result<Vec<R>, E::Error> {
    let parts = runs(list, |each| {
        let mut out = Vec::new();
        each(&mut |i, t| out.extend(check(i, t)))?;
        Ok(out)
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// Node-local findings, (node index, findings) for the nodes that have any.
fn node_findings<E: Elements<NodeProto> + ?Sized>(
    c: &Checker<'_>,
    nodes: &E,
    opsets: &OpsetMap<'_>,
    is_main: bool,
    here: &Location,
) -> Result<Vec<(usize, Findings)>, E::Error> {
    each_checked(nodes, |i, n| local_findings(c, i, n, opsets, is_main, here))
}

/// [`node_findings`] of a lazily loaded main graph: nodes not decoded yet
/// are checked through views over their bytes, not decoded.
fn node_findings_lazy(
    c: &Checker<'_>,
    nodes: &LazyList<NodeProto>,
    opsets: &OpsetMap<'_>,
    here: &Location,
) -> Result<Vec<(usize, Findings)>, DecodeError> {
    let parts = over_runs(nodes.len(), |range| {
        let mut out = Vec::new();
        nodes.for_each_node_in(range, |i, n| {
            out.extend(match n {
                NodeRef::View(v) => local_findings(c, i, v, opsets, true, here),
                NodeRef::Decoded(d) => local_findings(c, i, d, opsets, true, here),
            });
        })?;
        Ok(out)
    })?;
    Ok(parts.into_iter().flatten().collect())
}

/// The node-local findings of node `i`, if it has any.
fn local_findings<N: NodeFields + ?Sized>(
    c: &Checker<'_>,
    i: usize,
    n: &N,
    opsets: &OpsetMap<'_>,
    is_main: bool,
    here: &Location,
) -> Option<(usize, Findings)> {
    let mut fork = c.fork();
    node::check_node_local(&mut fork, n, opsets, is_main, &|| {
        here.child(node_step(i, n))
    });
    let found = fork.into_findings();
    (!found.is_empty()).then_some((i, found))
}

/// Proves a graph's nodes in SSA form and topological order without
/// reporting anything: every input is in scope or an earlier node's
/// output, every output is new. Outputs are added to the innermost scope
/// level as they are proven, so one probe of one table answers both
/// questions for a name; a node whose names cannot be read ends the proof
/// (the exact walk then reports why). `Err(n)`: not proven, after adding the first `n`
/// non-empty outputs (see [`unprove`]).
fn prove_ssa<'a, E>(
    nodes: impl IntoIterator<Item = Result<NodeNames<'a>, E>>,
    scope: &mut Scope<'a>,
) -> Result<(), usize> {
    let mut added = 0;
    // Nodes are read a few ahead: the probes of their names start (in a
    // large graph each is a cache miss) while earlier nodes are proven.
    let mut nodes = nodes.into_iter();
    let mut ahead: VecDeque<NodeNames<'a>> = VecDeque::with_capacity(PROBE_AHEAD + 1);
    // (more to read, a node could not be read)
    let (mut open, mut broken) = (true, false);
    loop {
        while open && ahead.len() <= PROBE_AHEAD {
            match nodes.next() {
                Some(Ok(n)) => {
                    for name in n.inputs.iter().chain(&n.outputs) {
                        scope.prefetch(name);
                    }
                    ahead.push_back(n);
                }
                // Proven up to the node that could not be read, not past it.
                Some(Err(_)) => (open, broken) = (false, true),
                None => open = false,
            }
        }
        let Some(n) = ahead.pop_front() else {
            return if broken { Err(added) } else { Ok(()) };
        };
        if n.has_subgraph {
            return Err(added);
        }
        for input in n.inputs {
            if !input.is_empty() && !scope.in_any(input) {
                return Err(added);
            }
        }
        for output in n.outputs {
            if output.is_empty() {
                continue;
            }
            if scope.in_outer(output) || !scope.add(output) {
                return Err(added);
            }
            added += 1;
        }
    }
}

/// Takes back the first `added` non-empty outputs of `nodes` that
/// [`prove_ssa`] added to the innermost scope level.
fn unprove<'a>(nodes: &'a [NodeProto], mut added: usize, scope: &mut Scope<'a>) {
    for output in nodes.iter().flat_map(|n| n.output.iter()) {
        if added == 0 {
            return;
        }
        if !output.is_empty() {
            scope.remove(output);
            added -= 1;
        }
    }
}

/// check_tensor of every initializer, in parallel runs for large graphs.
fn tensor_checks<E: Elements<TensorProto> + ?Sized>(
    c: &Checker<'_>,
    initializers: &E,
    here: &Location,
) -> Result<Findings, E::Error> {
    let parts = runs(initializers, |each| {
        let mut fork = c.fork();
        each(&mut |i, t| {
            let loc = || here.child(item("initializer", i, t.name()));
            policy::tensor(&mut fork, t, true, &loc);
            tensor::check_tensor(&mut fork, t, &loc);
        })?;
        Ok(fork.into_findings())
    })?;
    Ok(merged(c, parts))
}

/// The findings of runs checked on forks of `c`, in run order.
fn merged(c: &Checker<'_>, parts: Vec<Findings>) -> Findings {
    let mut all = c.fork();
    for part in parts {
        all.absorb(part);
    }
    all.into_findings()
}

/// [`tensor_checks`] of a decode-on-touch list: each initializer checked
/// as sketched from its bytes, decoded only where they cannot tell (see
/// `LazyList::sketch`); in strict mode, whose checks read whole tensors,
/// every one decoded.
fn tensor_checks_lazy(
    c: &Checker<'_>,
    initializers: &LazyList<TensorProto>,
    here: &Location,
) -> Result<Findings, DecodeError> {
    use crate::decode::lazy::Sketched;
    if c.options.strict {
        return tensor_checks(c, initializers, here);
    }
    let parts = over_runs(initializers.len(), |range| {
        let mut fork = c.fork();
        initializers.for_each_sketched_in(range, |i, t| {
            let facts: &dyn tensor::TensorFacts = match t {
                Sketched::Bytes(sketch) => sketch,
                Sketched::Decoded(t) => t,
            };
            let loc = || here.child(item("initializer", i, facts.name()));
            policy::tensor(&mut fork, facts, true, &loc);
            tensor::check_tensor_facts(&mut fork, facts, &loc);
        })?;
        Ok(fork.into_findings())
    })?;
    Ok(merged(c, parts))
}

/// A graph's name, inputs and outputs; opens its scope level (room for the
/// inputs and `room` more: initializers and node outputs, so the level
/// never grows by rehashing) holding the inputs.
fn graph_head<'a>(
    c: &mut Checker<'_>,
    g: &'a GraphProto,
    is_main: bool,
    scope: &mut Scope<'a>,
    here: &Location,
    room: usize,
) {
    if g.name().is_empty() {
        c.emit(
            codes::NO_GRAPH_NAME,
            here,
            "the graph has no name (graph names are required)".into(),
        );
    }
    for (i, vi) in g.input.iter().enumerate() {
        check_value_info(c, vi, is_main, &here.child(item("input", i, vi.name())));
    }
    for (i, vi) in g.output.iter().enumerate() {
        check_value_info(c, vi, is_main, &here.child(item("output", i, vi.name())));
    }
    scope.push_with_capacity(g.input.len() + room);
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
}

/// The initializers' names (None when absent): present, unique, graph
/// inputs up to IR version 3, in scope after. With `keep` (or up to IR
/// version 3) the names are also gathered in a table of their own, which
/// is returned (empty otherwise): from IR version 4 on, a repeated name is
/// found in the scope, where it is going anyway (the innermost level holds
/// the graph's inputs, then each initializer as it comes; an input's name
/// is repeated when a second initializer claims it). A table of 200,000
/// names is 7 MiB of fresh memory and a probe per name.
fn initializer_names<'a>(
    c: &mut Checker<'_>,
    scope: &mut Scope<'a>,
    here: &Location,
    names: impl ExactSizeIterator<Item = Option<&'a str>>,
    keep: bool,
) -> NameTable<'a, ()> {
    let own = keep || c.ir_version <= 3;
    let mut seen = if own {
        NameTable::with_capacity(names.len())
    } else {
        NameTable::default()
    };
    // Entries 0..inputs of the innermost level are the graph's inputs;
    // `claimed[k]`: an initializer gave input k a value.
    let inputs = scope.innermost_made();
    let mut claimed = if own { Vec::new() } else { vec![false; inputs] };
    // Both tables are probed a few names ahead: in a large graph each probe
    // is a cache miss.
    let mut names = Lookahead::new(names.enumerate());
    while let Some(((i, name), ahead)) = names.next_ahead() {
        if let Some(&(_, Some(later))) = ahead {
            if own {
                seen.prefetch(later);
            }
            scope.prefetch(later);
        }
        let text = name.unwrap_or("");
        // Built only for a finding (an allocation or two per initializer
        // otherwise: 35 ms for 200,000 of them).
        let loc = || here.child(item("initializer", i, text));
        let repeated = if text.is_empty() {
            c.emit(
                codes::NO_INITIALIZER_NAME,
                &loc(),
                "initializer has no name".into(),
            );
            if !own {
                scope.add(text);
            }
            false
        } else if own {
            !seen.insert(text, ())
        } else {
            match scope.add_or_index(text) {
                Ok(_) => false,
                Err(k) if k < inputs => claimed
                    .get_mut(k)
                    .is_some_and(|claim| std::mem::replace(claim, true)),
                Err(_) => true,
            }
        };
        if repeated {
            c.emit(
                codes::DUPLICATE_INITIALIZER,
                &loc(),
                format!("initializer name {} is used more than once", q(text)),
            );
        }
        if c.ir_version <= 3 {
            if !text.is_empty() && !scope.in_innermost(text) {
                c.emit(
                    codes::INITIALIZER_NOT_INPUT,
                    &loc(),
                    format!(
                        "initializer {} is not a graph input (required for IR version {} ≤ 3)",
                        q(text),
                        c.ir_version
                    ),
                );
                // Reported once, here: its uses see a value (no E212 each).
                scope.add(text);
            }
        } else if own {
            scope.add(text);
        }
    }
    seen
}

/// Checks the main graph of a model loaded for decode on touch without
/// decoding its lists whole: names are read from the source bytes, nodes
/// and initializers are decoded a run at a time for their own checks (or
/// read where already kept). Only the fast path of [`check_graph`] streams:
/// when the graph's SSA form is not proven right at once, or it holds
/// subgraphs or sparse initializers, nothing is reported and `Ok(false)`
/// asks the caller for the exact walk over the decoded graph. Findings, and
/// their order, are those [`check_graph`] gives.
pub(crate) fn check_main_lazy<'a>(
    c: &mut Checker<'_>,
    g: &'a GraphProto,
    lists: &'a GraphLists,
    opsets: &OpsetMap<'_>,
    scope: &mut Scope<'a>,
    parent: &Location,
) -> Result<bool, DecodeError> {
    if !lists.sparse_initializer.is_empty() || !g.sparse_initializer.is_empty() {
        return Ok(false);
    }
    let names = lists.initializer.name_table()?;
    // Rolled back if the fast path does not apply.
    let (kept, counts, tally) = (c.out.len(), c.counts, c.tally);
    let here = parent.child(Step::Graph(g.name().to_string()));
    // The level's room (one output a node; it grows past that) is made
    // beside the node checks, by the proof's thread: writing a large
    // table's slots is a page fault per 4 KiB, off the critical path there.
    graph_head(c, g, true, scope, &here, 0);
    let mut named = c.fork();
    let shared: &Checker<'_> = c;
    let proving: &mut Scope<'a> = scope;
    // Node checks and initializer checks (parallel runs) beside the
    // initializers' names and the proof (sequential, the names first);
    // their findings are kept only when the proof holds.
    let ((local, init_diags), proven) = rayon::join(
        || {
            rayon::join(
                || node_findings_lazy(shared, &lists.node, opsets, &here),
                || tensor_checks_lazy(shared, &lists.initializer, &here),
            )
        },
        || {
            proving.reserve(names.len() + lists.node.len());
            initializer_names(&mut named, proving, &here, names.iter(), false);
            prove_ssa((0..lists.node.len()).map(|i| lists.node.names(i)), proving)
        },
    );
    if proven.is_err() {
        c.out.truncate(kept);
        c.counts = counts;
        c.tally = tally;
        scope.pop();
        return Ok(false);
    };
    c.absorb(named.into_findings());
    policy::nodes(c, lists.node.len());
    c.absorb(init_diags?);
    for (_, diags) in local? {
        c.absorb(diags);
    }
    check_outputs_produced(c, g, &here, |name| scope.in_innermost(name));
    scope.pop();
    Ok(true)
}

pub(crate) fn item(field: &'static str, index: usize, name: &str) -> Step {
    Step::Item {
        field,
        index,
        name: name.to_string(),
    }
}

pub(crate) fn node_step<N: NodeFields + ?Sized>(index: usize, n: &N) -> Step {
    Step::Node {
        index,
        name: n.node_name().to_string(),
        op_type: n.node_op_type().to_string(),
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
