//! Type and shape inference: onnx's `infer_shapes(check_type=True,
//! strict_mode=True)`, which is what `onnx.checker.check_model(full_check=
//! True)` runs after the structural checks, with every defect reported
//! (`check_type=False`, onnx's default for `infer_shapes`, through
//! [`InferOptions::check_type`]).
//!
//! - [`engine`]: the graph walk (declared types, initializers, nodes,
//!   subgraphs, function bodies), onnx's merge and masking rules;
//! - [`context`]: what an operator's rule sees ([`NodeCtx`]);
//! - [`typecheck`]: the type-constraint check every operator gets from its
//!   schema (with `check_type`);
//! - [`merge`]: inferred against declared types;
//! - [`constant`]: values of constant inputs (read from that tensor alone);
//! - [`propagate`]: with `data_prop`, the values of shape computations;
//! - [`ops`]: one file of rules per operator family, in one static table
//!   keyed by (domain, operator, version range).

pub mod annotate;
pub mod annotate_lazy;
pub mod constant;
pub mod context;
pub(crate) mod engine;
pub mod merge;
pub mod ops;
pub mod propagate;
pub mod typecheck;
pub mod util;

pub use context::{At, Defect, InferError, InferResult, NodeCtx};

use std::sync::Arc;

use crate::decode::lazy::{Edit, GraphLists};
use crate::diag::Diagnostic;
use crate::error::DecodeError;
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
    /// With `collect_types`: the main graph's types as [`MainTypes`] (a
    /// type id per node output, for [`annotate::annotate_lazy`]) instead of
    /// (name, type) pairs, which cost an allocation or three per value.
    pub compact_main: bool,
    /// Standalone inference (which sets this): a node that does not fit
    /// its operator's schema but in its input and output counts is inferred,
    /// as onnx infers it, and one whose counts do not fit is skipped and
    /// reported (E731); an input no value defines before its node is read
    /// as onnx reads it, without a type. The full check skips these
    /// quietly, leaving them to the structural checks it runs beside
    /// inference (E407, E212, ...).
    pub report_unfit: bool,
    /// Follow the values of shape computations (onnx's `data_prop=True`,
    /// see [`propagate`]).
    pub data_prop: bool,
    /// Dims as expressions over the model's symbols where a rule computes
    /// a dim from others (`seq + 1`, `floor((h - 3)/2) + 1`; see
    /// [`crate::ir::symbolic`]). Without it, onnx's behaviour: such dims
    /// are unknown.
    pub symbolic: bool,
    /// Check every node's input and output types against its operator's
    /// type constraints (E701-E704), and leave the outputs of a node that
    /// fails unknown: onnx's `check_type=True`, which its full check uses.
    /// Without it (onnx's default for `infer_shapes`), a node whose types
    /// its schema does not allow is inferred as its rule reads it.
    pub check_type: bool,
    /// Infer onnxruntime's own operators (com.microsoft, and those it adds
    /// to the default domain) as onnxruntime does ([`ops::contrib`]); onnx
    /// knows none of them, so without it their outputs get no types.
    pub contrib_ops: bool,
}

impl Default for InferOptions<'_> {
    fn default() -> Self {
        InferOptions {
            store: None,
            max_diagnostics: crate::checker::DEFAULT_MAX_DIAGNOSTICS,
            collect_types: false,
            compact_main: false,
            report_unfit: false,
            data_prop: false,
            symbolic: false,
            check_type: true,
            contrib_ops: false,
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
    /// The subgraph's inference stopped while its inputs were merged with
    /// the types the node gave (one contradicts its declaration): `values`
    /// holds the inputs merged before it, the only change onnx leaves in
    /// such a graph (it merges input by input, in place).
    pub inputs_only: bool,
}

/// The main graph's types after inference, compactly (with
/// [`InferOptions::compact_main`]).
#[derive(Debug, Clone, Default)]
pub struct MainTypes {
    /// Every distinct type, once.
    pub types: Vec<Type>,
    /// For each node output in node order: its name's type when its node
    /// was done, an index into `types`, or [`MainTypes::NONE`]. That is
    /// the name's final type unless a later node outputs the same name.
    pub node_outputs: Vec<u32>,
    /// For each node output: its name was new when its node was done (not
    /// a typed declaration, an untyped graph input, an initializer or an
    /// earlier output).
    pub first: Vec<bool>,
    /// Room for the write-back's appended entries, made beside inference.
    pub room: Option<annotate_lazy::PlanRoom>,
}

impl MainTypes {
    /// No type.
    pub const NONE: u32 = u32::MAX;

    /// The type of the `p`th node output.
    pub fn output(&self, p: usize) -> Option<&Type> {
        self.types.get(*self.node_outputs.get(p)? as usize)
    }
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
    /// With [`InferOptions::compact_main`]: the main graph's types (its
    /// entry in `graphs` has no values).
    pub main: Option<MainTypes>,
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

/// [`infer_shapes`] for a model loaded for decode on touch (`model`, its
/// decoded part, and `lists`, its main graph's lists): inference decodes
/// and keeps every element of `lists`; the result is the decoded part
/// written back and new lists over the same source bytes whose elements
/// are written back as they are decoded
/// ([`annotate_lazy::annotate_lazy`]): nothing of the graph is copied.
/// A main graph that outputs a name twice (not SSA form) is written back
/// decoded instead: the result is then a whole model and no lists.
#[allow(clippy::type_complexity)]
pub fn infer_shapes_lazy(
    model: &ModelProto,
    lists: &GraphLists,
    options: &InferOptions<'_>,
) -> Result<
    (
        ModelProto,
        Option<GraphLists>,
        Inference,
        annotate::Annotated,
    ),
    DecodeError,
> {
    let (written, inference, done) = write_back_lazy(model, lists, options)?;
    Ok(match written {
        WrittenBack::Lists(w) => {
            let w = *w;
            (w.model, Some(w.lists), inference, done)
        }
        WrittenBack::Whole(whole) => (*whole, None, inference, done),
    })
}

/// What [`write_back_lazy`] gives.
pub enum WrittenBack {
    /// The main graph's lists, written back as they are decoded.
    Lists(Box<LazyWritten>),
    /// A main graph not in SSA form, decoded and written back whole.
    Whole(Box<ModelProto>),
}

/// A lazily loaded model after write-back: its decoded part, its main
/// graph's lists (their elements written back as they are decoded) and
/// the edits that do it, which answer where each value's type is.
pub struct LazyWritten {
    /// The decoded part, the main graph's inputs and outputs written back.
    pub model: ModelProto,
    pub lists: GraphLists,
    /// The main graph's `value_info` edit: its appended entries' names.
    pub value_info: Arc<annotate_lazy::ValueInfoEdit>,
    /// The main-graph nodes whose subgraphs were written back.
    pub node: Option<Arc<annotate_lazy::NodeEdit>>,
}

/// [`infer_shapes_lazy`], keeping the edits apart.
pub fn write_back_lazy(
    model: &ModelProto,
    lists: &GraphLists,
    options: &InferOptions<'_>,
) -> Result<(WrittenBack, Inference, annotate::Annotated), DecodeError> {
    let lazy_options = InferOptions {
        collect_types: true,
        compact_main: true,
        report_unfit: true,
        ..options.clone()
    };
    let main = match &model.graph {
        Some(g) => Some(GraphView::kept(g, lists)?),
        None => None,
    };
    // Every node output in order, for the write-back: gathered beside
    // inference (see GraphView::read_nodes_gathering).
    let gathering = match &main {
        Some(GraphView {
            node: crate::ir::view::Seq::Kept(list),
            ..
        }) => Some(crate::ir::view::Gathering::new(list)),
        _ => None,
    };
    let mut inference = match (main, &gathering) {
        (Some(g), Some(gathering)) => {
            g.read_nodes_gathering(gathering, |g| infer_graph_of(model, Some(g), &lazy_options))?
        }
        _ => infer_graph_of(model, main, &lazy_options),
    };
    let outputs = gathering.and_then(crate::ir::view::Gathering::finish);
    let Some(main) = main else {
        let written = LazyWritten {
            model: model.clone(),
            lists: lists.edited(None, None),
            value_info: Arc::default(),
            node: None,
        };
        return Ok((
            WrittenBack::Lists(Box::new(written)),
            inference,
            annotate::Annotated::default(),
        ));
    };
    match annotate_lazy::annotate_lazy(model, main, outputs.as_deref(), &mut inference) {
        Some(written) => {
            let node = written
                .node
                .as_ref()
                .map(|e| Arc::clone(e) as Arc<dyn Edit<_>>);
            let value_info: Arc<dyn Edit<_>> = written.value_info.clone();
            let lists = lists.edited(node, Some(value_info));
            let done = written.done;
            let written = LazyWritten {
                model: written.model,
                lists,
                value_info: written.value_info,
                node: written.node,
            };
            Ok((WrittenBack::Lists(Box::new(written)), inference, done))
        }
        None => {
            let (whole, inference, done) = infer_shapes(lists.whole_model(model)?, options);
            Ok((WrittenBack::Whole(Box::new(whole)), inference, done))
        }
    }
}

/// Infers the types and shapes of a decoded model.
pub fn infer_model<'m>(model: &'m ModelProto, options: &InferOptions<'m>) -> Inference {
    infer_graph_of(model, model.graph.as_ref().map(GraphView::whole), options)
}

/// [`infer_model`] for a lazily loaded model: `model`'s decoded part and
/// its main graph's `lists` (no copy of the graph is made). Nodes without
/// attributes, `value_info` entries and initializers are read from their
/// bytes; other nodes (and an initializer whose value a rule reads) are
/// decoded now and kept by the lists.
pub fn infer_lazy<'m>(
    model: &'m ModelProto,
    lists: &'m crate::decode::lazy::GraphLists,
    options: &InferOptions<'m>,
) -> Result<Inference, crate::error::DecodeError> {
    let main = match &model.graph {
        Some(g) => Some(GraphView::kept(g, lists)?),
        None => None,
    };
    match main {
        Some(g) => g.read_nodes(|| infer_graph_of(model, main, options)),
        None => Ok(infer_graph_of(model, main, options)),
    }
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
    let main = engine.main_types.take();
    let (diagnostics, counts, graphs) = engine.finish();
    Inference {
        omitted: counts.total() - diagnostics.len() as u64,
        diagnostics,
        counts,
        graphs: graphs.unwrap_or_default(),
        main,
        symbols,
    }
}
