//! Type and shape inference: onnx's `infer_shapes(check_type=True,
//! strict_mode=True)`, which is what `onnx.checker.check_model(full_check=
//! True)` runs after the structural checks, with every defect reported.
//!
//! - [`engine`]: the graph walk (declared types, initializers, nodes,
//!   subgraphs, function bodies), onnx's merge and masking rules;
//! - [`context`]: what an operator's rule sees ([`NodeCtx`]);
//! - [`typecheck`]: the type-constraint check every operator gets from its
//!   schema;
//! - [`merge`]: inferred against declared types;
//! - [`constant`]: values of constant inputs (read from that tensor alone);
//! - [`propagate`]: with `data_prop`, the values of shape computations;
//! - [`ops`]: one file of rules per operator family, in one static table
//!   keyed by (domain, operator, version range).

pub mod annotate;
pub mod constant;
pub mod context;
pub(crate) mod engine;
pub mod merge;
pub mod ops;
pub mod propagate;
pub mod typecheck;
pub mod util;

pub use context::{At, Defect, InferError, InferResult, NodeCtx};

use crate::diag::Diagnostic;
use crate::external::ExternalStore;
use crate::ir::types::{Symbols, Type};
use crate::ir::view::GraphView;
use crate::proto::ModelProto;

/// What to infer and where constants' external data is.
#[derive(Debug, Clone)]
pub struct InferOptions<'m> {
    /// Reads external data of constants a rule needs (a Reshape's shape),
    /// beneath the model's folder. `None`: such constants are not read.
    pub store: Option<&'m ExternalStore>,
    /// Keep at most this many diagnostics.
    pub max_diagnostics: usize,
    /// Return the type of every value of every graph.
    pub collect_types: bool,
    /// Report a node that does not fit its operator's schema (E731), which
    /// inference skips. The full check leaves it to the structural checks
    /// it runs beside inference; standalone inference sets this.
    pub report_unfit: bool,
    /// Follow the values of shape computations (onnx's `data_prop=True`,
    /// see [`propagate`]).
    pub data_prop: bool,
    /// Dims as expressions over the model's symbols where a rule computes
    /// a dim from others (`seq + 1`, `floor((h - 3)/2) + 1`; see
    /// [`crate::ir::symbolic`]). Without it, onnx's behaviour: such dims
    /// are unknown.
    pub symbolic: bool,
}

impl Default for InferOptions<'_> {
    fn default() -> Self {
        InferOptions {
            store: None,
            max_diagnostics: crate::checker::DEFAULT_MAX_DIAGNOSTICS,
            collect_types: false,
            report_unfit: false,
            data_prop: false,
            symbolic: false,
        }
    }
}

/// The types of one graph's values, after inference.
#[derive(Debug, Clone)]
pub struct GraphTypes {
    /// `main`, or the path of a subgraph: `main/3.then_branch/0.body`
    /// (node index and attribute name at each level).
    pub path: String,
    /// The graph's place in the model, for writing types back: (node index,
    /// attribute name) at each level below the main graph (empty for the
    /// main graph). `None` for graphs inside function bodies and graphs no
    /// rule inferred (listed with their declared types).
    pub steps: Option<Vec<(usize, String)>>,
    /// For a subgraph: which of its inputs the caller gave a type (onnx
    /// writes those inputs' types back, merged with the declared ones).
    pub given: Vec<bool>,
    /// (value name, type) for inputs, `value_info` names, node outputs and
    /// outputs that have a type, in that order, each name once.
    pub values: Vec<(String, Type)>,
}

/// What inference found.
#[derive(Debug)]
pub struct Inference {
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics beyond `max_diagnostics`, counted but not kept.
    pub omitted: u64,
    /// Every diagnostic by severity, kept or not.
    pub counts: crate::diag::Counts,
    /// With `collect_types`: the types of every graph (main first).
    pub graphs: Vec<GraphTypes>,
    /// The symbols the types refer to.
    pub symbols: Symbols,
}

/// onnx's `infer_shapes`: infers `model` and writes what it found back
/// into it ([`annotate`]: every intermediate value's type in its graph's
/// `value_info`, outputs typed). The returned [`Inference`] holds the
/// diagnostics (a model with errors is still annotated with what could be
/// inferred, as onnx's non-strict mode does) and the types by graph.
pub fn infer_shapes(
    mut model: ModelProto,
    options: &InferOptions<'_>,
) -> (ModelProto, Inference, annotate::Annotated) {
    let options = InferOptions {
        collect_types: true,
        report_unfit: true,
        ..options.clone()
    };
    let inference = infer_model(&model, &options);
    let done = annotate::annotate(&mut model, &inference);
    (model, inference, done)
}

/// Infers the types and shapes of a decoded model.
pub fn infer_model<'m>(model: &'m ModelProto, options: &InferOptions<'m>) -> Inference {
    infer_graph_of(model, model.graph.as_ref().map(GraphView::whole), options)
}

/// [`infer_model`] for a lazily loaded model: `model`'s decoded part and
/// its main graph's `lists`, all of whose elements are decoded now and
/// kept by the lists (no copy of the graph is made).
pub fn infer_lazy<'m>(
    model: &'m ModelProto,
    lists: &'m crate::decode::lazy::GraphLists,
    options: &InferOptions<'m>,
) -> Result<Inference, crate::error::DecodeError> {
    let main = match &model.graph {
        Some(g) => Some(GraphView::kept(g, lists)?),
        None => None,
    };
    Ok(infer_graph_of(model, main, options))
}

fn infer_graph_of<'m>(
    model: &'m ModelProto,
    main: Option<GraphView<'m>>,
    options: &InferOptions<'m>,
) -> Inference {
    let nodes = main.as_ref().map_or(0, |g| g.node.len());
    let mut engine = engine::Engine::new(model, nodes, options);
    engine.run_model(model, main);
    let symbols = std::mem::take(&mut engine.symbols);
    let (diagnostics, counts, graphs) = engine.finish();
    Inference {
        omitted: counts.total() - diagnostics.len() as u64,
        diagnostics,
        counts,
        graphs: graphs.unwrap_or_default(),
        symbols,
    }
}
