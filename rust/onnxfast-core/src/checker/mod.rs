//! The graph checker: `onnx.checker.check_model`'s verdicts (onnx 1.23.2,
//! `full_check=False`), with every defect reported at once, each with a
//! stable code and an exact location. `strict` adds checks onnx lacks.
//! docs/checks.md lists every code.
//!
//! Walk order follows onnx's: model header, the main graph depth-first
//! (subgraphs where their node is), then model-local functions. Where onnx
//! stops at the first error, the checker records it and goes on, taking care
//! not to report consequences of an earlier finding twice.

mod function;
mod graph;
pub(crate) mod node;
pub mod policy;
pub(crate) use node::is_experimental;
mod strict;
mod tensor;

use crate::diag::codes;
use std::path::PathBuf;
use std::sync::Arc;

use crate::decode::lazy::GraphLists;
use crate::diag::codes::Code;
pub use crate::diag::{Counts, Diagnostic, Location, Report, Severity, Step};
use crate::error::DecodeError;
use crate::names::{Name, NameMap, NameSet};
use crate::opset::SchemaRegistry;
use crate::proto::{GraphProto, ModelProto};

/// The newest IR version this checker knows.
pub const IR_VERSION: i64 = 14;

/// What to check and where external files are.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Add the checks onnx lacks (docs/checks.md, codes S…).
    pub strict: bool,
    /// onnx's `full_check`: type and shape inference over the whole model
    /// after the structural checks (codes E7…, W79…).
    pub full: bool,
    /// The model's folder, for external-data locations. `None` resolves them
    /// against the current directory, as onnx does for in-memory models.
    pub model_dir: Option<PathBuf>,
    /// As onnx's `skip_opset_compatibility_check`.
    pub skip_opset_compatibility_check: bool,
    /// As onnx's `check_custom_domain`: unknown ops of custom domains are errors.
    pub check_custom_domain: bool,
    /// Keep at most this many diagnostics (the rest are counted in
    /// `Report::omitted`), so a hostile model cannot make the report itself
    /// unbounded. `None`: [`DEFAULT_MAX_DIAGNOSTICS`].
    pub max_diagnostics: Option<usize>,
    /// Rules of the caller's on top of validity (codes P…), enforced in the
    /// same walk.
    pub policy: Option<Arc<policy::Compiled>>,
    /// Size of the model file, for the policy's `max_file_bytes`.
    pub source_bytes: Option<u64>,
    /// Check as onnxruntime runs the model: its own operators
    /// ([`crate::infer::ops::contrib`]) are known (the default-domain ones
    /// are not E405) and, with `full`, inferred, so inference checks the
    /// graph after them too (onnx stops at the first operator it does not
    /// know).
    pub contrib_ops: bool,
    /// With `full`: inference follows the values of shape computations
    /// ([`crate::infer::InferOptions::data_prop`]), so a model whose
    /// computed shapes cannot fit (a Reshape to a computed shape that
    /// cannot broadcast after it, a computed axis out of range) is invalid,
    /// as a runtime finds when it runs it; onnx's full check does not
    /// propagate values.
    pub data_prop: bool,
}

/// Diagnostics kept by default.
pub const DEFAULT_MAX_DIAGNOSTICS: usize = 10_000;

/// Opset versions in effect, by domain.
pub(crate) type OpsetMap<'a> = NameMap<'a, i64>;

/// State shared by the whole walk (cheap to create: parallel parts of the
/// walk use one each and merge their findings in order).
pub(crate) struct Checker<'a> {
    pub options: &'a CheckOptions,
    pub schemas: &'static SchemaRegistry,
    /// `ModelProto.ir_version` as onnx keeps it (truncated to 32 bits).
    pub ir_version: i32,
    pub out: Vec<Diagnostic>,
    /// Findings so far by severity, kept or not.
    pub counts: Counts,
    pub limit: usize,
    /// What the policy adds up (nodes, parameters, external bytes).
    pub tally: policy::Tally,
    /// Keep only policy findings (functions onnx does not check).
    pub policy_only: bool,
}

/// What a checker (or a fork of it) found.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub out: Vec<Diagnostic>,
    pub counts: Counts,
    pub tally: policy::Tally,
}

impl Findings {
    /// Whether there is anything to take in.
    pub fn is_empty(&self) -> bool {
        self.counts.total() == 0 && self.tally.is_empty()
    }
}

impl<'a> Checker<'a> {
    /// A checker with the same context and no findings (for parallel work).
    pub fn fork(&self) -> Checker<'a> {
        Checker {
            options: self.options,
            schemas: self.schemas,
            ir_version: self.ir_version,
            out: Vec::new(),
            counts: Counts::default(),
            limit: self.limit,
            tally: policy::Tally::default(),
            policy_only: self.policy_only,
        }
    }

    /// Takes in the findings of a fork, in order, within the limit.
    pub fn absorb(&mut self, found: Findings) {
        self.counts.merge(found.counts);
        self.tally.merge(found.tally);
        let room = self.limit.saturating_sub(self.out.len());
        self.out.extend(found.out.into_iter().take(room));
    }

    /// The findings of this checker, for [`Checker::absorb`].
    pub fn into_findings(self) -> Findings {
        Findings {
            out: self.out,
            counts: self.counts,
            tally: self.tally,
        }
    }

    /// Records a finding of `code` (its severity is the code's).
    pub fn emit(&mut self, code: Code, location: &Location, message: String) {
        self.push(code, location, message, None);
    }

    /// As [`Checker::emit`], with a suggestion.
    pub fn emit_hint(
        &mut self,
        code: Code,
        location: &Location,
        message: String,
        hint: Option<String>,
    ) {
        self.push(code, location, message, hint);
    }

    fn push(
        &mut self,
        code: Code,
        location: &Location,
        message: String,
        suggestion: Option<String>,
    ) {
        if self.policy_only && !code.is_policy() {
            return;
        }
        self.counts.add(code.severity);
        if self.out.len() >= self.limit {
            return;
        }
        self.out.push(Diagnostic {
            code: code.id,
            severity: code.severity,
            message,
            location: location.clone(),
            suggestion,
        });
    }
}

/// Quotes an untrusted name for a message.
pub(crate) fn q(name: &str) -> String {
    Quoted(name).to_string()
}

/// An untrusted name, quoted (and cleaned) only if a message is formatted:
/// for checks that name their subject in many messages but usually emit none.
#[derive(Clone, Copy)]
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}'", crate::diag::clean(self.0))
    }
}

/// Checks a decoded model.
pub fn check_model(model: &ModelProto, options: &CheckOptions) -> Report {
    let limit = options.max_diagnostics.unwrap_or(DEFAULT_MAX_DIAGNOSTICS);
    if !options.full {
        let Ok(c) = structural(model, options, eager_main);
        return c.into_report();
    }
    // The structural checks and inference are independent: they run side
    // by side, and their findings are reported in that order.
    let store = crate::external::ExternalStore::new(options.model_dir.clone(), Default::default());
    let (Ok(mut c), inferred) = rayon::join(
        || structural(model, options, eager_main),
        || {
            crate::infer::infer_model(
                model,
                &crate::infer::InferOptions {
                    store: Some(&store),
                    max_diagnostics: limit,
                    contrib_ops: options.contrib_ops,
                    data_prop: options.data_prop,
                    ..Default::default()
                },
            )
        },
    );
    c.absorb(Findings {
        out: inferred.diagnostics,
        counts: inferred.counts,
        tally: Default::default(),
    });
    c.into_report()
}

/// [`check_model`] for a model loaded for decode on touch: `model` is its
/// decoded part (the main graph without its four lists), `lists` the rest.
/// The structural check streams over the lists (see
/// `graph::check_main_lazy`) where it can; the full and strict checks, and
/// graphs the fast path does not prove, decode the lists whole for the
/// time of the check. Fails only if an element cannot be decoded (the
/// load's scan makes that an internal error).
pub fn check_lazy(
    model: &ModelProto,
    lists: &GraphLists,
    options: &CheckOptions,
) -> Result<Report, DecodeError> {
    if options.strict {
        let whole = lists.whole_model(model)?;
        let report = check_model(&whole, options);
        free_off_thread(whole);
        return Ok(report);
    }
    let main = |c: &mut Checker<'_>, g: &GraphProto, opsets: &OpsetMap<'_>| {
        let mut scope = crate::ir::Scope::default();
        let top = Location::default();
        if !graph::check_main_lazy(c, g, lists, opsets, &mut scope, &top)? {
            let mut whole = g.clone();
            lists.fill(&mut whole)?;
            graph::check_graph(c, &whole, opsets, true, &mut scope, &top);
        }
        Ok(())
    };
    if !options.full {
        return Ok(structural(model, options, main)?.into_report());
    }
    // Inference reads nodes from their bytes (their attributes decoded for
    // the read), but a node holding a tensor or a graph decoded and kept
    // by the list (as if touched; within the load's budget), not copied
    // into a graph, so a loaded model's next full check finds it there; it
    // reads value_info entries and initializers from their bytes (a tensor
    // is decoded only for its value). The structural checks read the kept
    // nodes and views of the others beside inference, and decode
    // initializers a run at a time.
    if let Some(g) = &model.graph {
        crate::ir::view::GraphView::kept(g, lists)?;
        // The nodes inference keeps (their values outlive its read of
        // them), before both start.
        lists.node.keep_for_reader()?;
    }
    let limit = options.max_diagnostics.unwrap_or(DEFAULT_MAX_DIAGNOSTICS);
    let store = crate::external::ExternalStore::new(options.model_dir.clone(), Default::default());
    let (c, inferred) = rayon::join(
        || structural(model, options, main),
        || {
            crate::infer::infer_lazy(
                model,
                lists,
                &crate::infer::InferOptions {
                    store: Some(&store),
                    max_diagnostics: limit,
                    contrib_ops: options.contrib_ops,
                    data_prop: options.data_prop,
                    ..Default::default()
                },
            )
        },
    );
    let (mut c, inferred) = (c?, inferred?);
    c.absorb(Findings {
        out: inferred.diagnostics,
        counts: inferred.counts,
        tally: Default::default(),
    });
    Ok(c.into_report())
}

/// The main graph's check when it is decoded whole.
fn eager_main(
    c: &mut Checker<'_>,
    g: &GraphProto,
    opsets: &OpsetMap<'_>,
) -> Result<(), std::convert::Infallible> {
    graph::check_graph(
        c,
        g,
        opsets,
        true,
        &mut crate::ir::Scope::default(),
        &Location::default(),
    );
    Ok(())
}

/// Frees a big tree decoded for one check on a worker thread.
fn free_off_thread(model: ModelProto) {
    if model
        .graph
        .as_ref()
        .is_some_and(|g| g.node.len() >= crate::decode::PARALLEL_MIN)
    {
        crate::decode::drop_in_background(model);
    }
}

impl Checker<'_> {
    fn into_report(self) -> Report {
        let omitted = self.counts.total() - self.out.len() as u64;
        Report {
            diagnostics: self.out,
            omitted,
            counts: self.counts,
        }
    }
}

/// onnx's `check_model` without the full check (and the strict extras).
/// The structural checks; `main` checks the main graph (the only part
/// that can fail: when its lists are read on touch).
fn structural<'o, E>(
    model: &ModelProto,
    options: &'o CheckOptions,
    main: impl FnOnce(&mut Checker<'o>, &GraphProto, &OpsetMap<'_>) -> Result<(), E>,
) -> Result<Checker<'o>, E> {
    let mut c = Checker {
        options,
        schemas: SchemaRegistry::global(),
        ir_version: 0,
        out: Vec::new(),
        counts: Counts::default(),
        limit: options.max_diagnostics.unwrap_or(DEFAULT_MAX_DIAGNOSTICS),
        tally: policy::Tally::default(),
        policy_only: false,
    };
    let here = Location(vec![Step::Model]);
    let top = Location::default();
    let ir = model.ir_version();
    if ir == 0 {
        c.emit(
            codes::NO_IR_VERSION,
            &here.child(Step::Field("ir_version")),
            "the model has no ir_version (it is absent or 0)".into(),
        );
    } else if ir > IR_VERSION {
        c.emit(
            codes::IR_VERSION_TOO_NEW,
            &here.child(Step::Field("ir_version")),
            format!("ir_version {ir} is newer than this checker's ({IR_VERSION})"),
        );
    }
    if model.metadata_props.len() > 1 {
        let mut seen = NameSet::default();
        for (i, p) in model.metadata_props.iter().enumerate() {
            if !seen.insert(Name(p.key())) {
                c.emit(
                    codes::DUPLICATE_METADATA_KEY,
                    &here.child(Step::Item {
                        field: "metadata_props",
                        index: i,
                        name: p.key().to_string(),
                    }),
                    format!("metadata_props has the key {} more than once", q(p.key())),
                );
            }
        }
    }
    policy::model_header(&mut c, model, options.source_bytes);
    // onnx keeps the IR version in a 32-bit int.
    c.ir_version = ir as i32;
    let opsets = model_opsets(&mut c, model, &here);
    match &model.graph {
        Some(g) => main(&mut c, g, &opsets)?,
        None => c.emit(
            codes::NO_GRAPH_NAME,
            &here.child(Step::Field("graph")),
            "the model has no graph (a graph with a name is required)".into(),
        ),
    }
    if c.ir_version >= 8 {
        function::check_functions(&mut c, model, &opsets, &top);
    } else if options.policy.is_some() && !model.functions.is_empty() {
        // onnx ignores the functions of older models; a runtime may not,
        // so the policy still reads them (the walk's other findings are
        // dropped).
        let mut fork = c.fork();
        fork.policy_only = true;
        function::check_functions(&mut fork, model, &opsets, &top);
        c.absorb(fork.into_findings());
    }
    if options.strict {
        strict::check_model(&mut c, model, &here);
    }
    policy::finish(&mut c);
    Ok(c)
}

/// Builds the opset map of the model, with onnx's IR-version rules.
fn model_opsets<'m>(c: &mut Checker<'_>, model: &'m ModelProto, here: &Location) -> OpsetMap<'m> {
    let mut map = OpsetMap::default();
    for (i, o) in model.opset_import.iter().enumerate() {
        let version = o.version();
        if i32::try_from(version).is_err() {
            c.emit(
                codes::OPSET_VERSION_RANGE,
                &here.child(Step::Item {
                    field: "opset_import",
                    index: i,
                    name: o.domain().to_string(),
                }),
                format!("opset version {version} is out of the supported range (32-bit)"),
            );
        }
        // Duplicate domains: the last one wins, as in onnx.
        map.insert(Name(o.domain()), version);
    }
    let ir = model.ir_version();
    if ir == 0 {
        // Already reported (E101); the IR-dependent rules would only repeat it.
        return map;
    }
    if ir >= 3 {
        if map.is_empty() {
            c.emit(
                codes::NO_OPSET_IMPORT,
                &here.child(Step::Field("opset_import")),
                format!("a model with IR version {ir} (>= 3) must import an opset"),
            );
        }
    } else if !map.is_empty() {
        c.emit(
            codes::OPSET_IMPORT_BEFORE_IR3,
            &here.child(Step::Field("opset_import")),
            format!("a model with IR version {ir} (< 3) cannot have opset_import"),
        );
    } else {
        map.insert(Name(""), 1);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict counts the findings beyond `max_diagnostics`.
    #[test]
    fn verdict_counts_findings_not_kept() {
        let model = ModelProto::default(); // no ir_version, no graph: 2 errors
        for full in [false, true] {
            for cap in 0..4 {
                let report = check_model(
                    &model,
                    &CheckOptions {
                        full,
                        max_diagnostics: Some(cap),
                        ..CheckOptions::default()
                    },
                );
                assert!(!report.ok(), "cap {cap}");
                assert_eq!(report.counts.errors, 2);
                assert_eq!(report.diagnostics.len(), cap.min(2));
                assert_eq!(report.omitted, 2 - cap.min(2) as u64);
            }
        }
    }
}
