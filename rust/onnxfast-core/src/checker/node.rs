//! Nodes and attributes: well-formedness and operator-schema verification.

use super::graph::{check_graph, item};
use super::tensor;
use super::{q, Checker, OpsetMap};
use crate::diag::codes;
use crate::diag::{closest, Location, Step};
use crate::ir::Scope;
use crate::names::{same, Name, NameSet};
use crate::opset::{OpSchema, ParamOption};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, NodeFields, NodeProto};

/// Domains whose unknown operators are errors even without check_custom_domain.
const BUILTIN_DOMAINS: &[&str] = &["", "ai.onnx.ml", "ai.onnx", "ai.onnx.training"];

/// Operators onnx treats as experimental: no schema check. (A `match` on
/// the name: this runs for every node.)
pub(crate) fn is_experimental<N: NodeFields + ?Sized>(n: &N) -> bool {
    matches!(n.node_domain(), "" | "ai.onnx")
        && matches!(
            n.node_op_type(),
            "ATen"
                | "Affine"
                | "ConstantFill"
                | "Crop"
                | "DynamicSlice"
                | "GRUUnit"
                | "GivenTensorFill"
                | "ImageScaler"
                | "ParametricSoftplus"
                | "Scale"
                | "ScaledTanh"
        )
}

/// The attribute's declared type, if present and a known enumerator
/// (onnx's proto2 parser treats unknown enum values as absent).
pub(crate) fn declared_type(a: &AttributeProto) -> Option<AttributeType> {
    a.r#type.and_then(|v| AttributeType::try_from(v).ok())
}

/// The opset version a node's domain resolves to.
pub(crate) fn domain_version<N: NodeFields + ?Sized>(n: &N, opsets: &OpsetMap<'_>) -> Option<i64> {
    opsets
        .get(&Name(n.node_domain()))
        .or_else(|| {
            if n.node_domain().is_empty() {
                opsets.get(&Name("ai.onnx"))
            } else {
                None
            }
        })
        .copied()
}

/// Attributes of a node found repeated by comparing each with those before
/// it; more are put in a hashed set.
const FEW_ATTRIBUTES: usize = 16;

/// Everything about one node that does not depend on the names defined
/// around it (so nodes can be checked in parallel).
pub(crate) fn check_node_local<N: NodeFields + ?Sized>(
    c: &mut Checker<'_>,
    n: &N,
    opsets: &OpsetMap<'_>,
    is_main: bool,
    loc: &dyn Fn() -> Location,
) {
    if n.node_op_type().is_empty() {
        c.emit(codes::NO_OP_TYPE, &loc(), "the node has no op_type".into());
    }
    super::policy::node(c, n, loc);
    if n.inputs().len() == 0 && n.outputs().len() == 0 {
        c.emit(
            codes::NO_INPUTS_OR_OUTPUTS,
            &loc(),
            "the node has neither inputs nor outputs".into(),
        );
    }
    let version = domain_version(n, opsets);
    if version.is_none() {
        // Sorted: the map's order is the hasher's, which differs between
        // maps of the same domains (the eager and streaming checks must
        // give the same text).
        let mut imported: Vec<String> = opsets.keys().map(|d| q(d.0)).collect();
        imported.sort_unstable();
        c.emit_hint(
            codes::DOMAIN_NOT_IMPORTED,
            &loc(),
            format!(
                "the node's domain {} is not imported by the model (opset_import)",
                q(n.node_domain())
            ),
            Some(format!("imported domains: {}", imported.join(", "))),
        );
    }
    let attributes = n.attributes();
    // A node's few attributes are compared with those before; a set is
    // made for many (a hashed set allocated for each node cost more).
    let mut seen = (attributes.len() > FEW_ATTRIBUTES).then(NameSet::default);
    for (k, a) in attributes.iter().enumerate() {
        let aloc = || loc().child(Step::Attribute(a.name().to_string()));
        let repeated = match &mut seen {
            Some(seen) => !seen.insert(Name(a.name())),
            None => attributes[..k]
                .iter()
                .any(|b| crate::names::same(b.name(), a.name())),
        };
        if repeated {
            c.emit(
                codes::DUPLICATE_ATTRIBUTE,
                &aloc(),
                format!("attribute {} appears more than once", q(a.name())),
            );
        }
        check_attribute(c, a, is_main, &aloc);
    }
    let Some(version) = version else {
        return;
    };
    if n.node_op_type().is_empty() {
        return;
    }
    if is_experimental(n) {
        // onnx checks nothing of them. onnxruntime knows most of them to
        // opset 9, without verifying their nodes against its schemas (an
        // undeclared attribute or input passes), and refuses them from
        // opset 10 (deprecated).
        let (op, domain) = (n.node_op_type(), n.node_domain());
        if let Some(s) = c
            .options
            .contrib_ops
            .then(|| crate::opset::SchemaRegistry::contrib().get(op, version, domain))
            .flatten()
            .filter(|s| s.deprecated)
        {
            deprecated(c, n, s, version, loc);
        }
        return;
    }
    let schema = RECENT.with(|recent| {
        let (op, domain) = (n.node_op_type(), n.node_domain());
        recent.borrow_mut().get(c.schemas, op, version, domain)
    });
    let Some(schema) = schema else {
        let (op, domain) = (n.node_op_type(), n.node_domain());
        if c.options.contrib_ops && crate::infer::ops::contrib::rule(domain, op, version).is_some()
        {
            // An operator of onnxruntime's: known, inferred by its rule,
            // verified against its schema as onnxruntime does.
            if let Some(s) = crate::opset::SchemaRegistry::contrib().get(op, version, domain) {
                verify(c, n, s, loc);
            }
            return;
        }
        if BUILTIN_DOMAINS.contains(&n.node_domain()) || c.options.check_custom_domain {
            let hint = unknown_op_hint(c, n, version);
            c.emit_hint(
                codes::UNKNOWN_OPERATOR,
                &loc(),
                format!(
                    "no operator {} in domain {} at opset version {version}",
                    q(n.node_op_type()),
                    q(if n.node_domain().is_empty() {
                        "ai.onnx"
                    } else {
                        n.node_domain()
                    })
                ),
                hint,
            );
        }
        return;
    };
    if schema.deprecated {
        deprecated(c, n, schema, version, loc);
        return;
    }
    verify(c, n, schema, loc);
}

/// E406: the operator's schema at `version` is deprecated.
fn deprecated<N: NodeFields + ?Sized>(
    c: &mut Checker<'_>,
    n: &N,
    schema: &OpSchema,
    version: i64,
    loc: &dyn Fn() -> Location,
) {
    c.emit(
        codes::DEPRECATED_OPERATOR,
        &loc(),
        format!(
            "operator {} is deprecated at opset version {version} (since version {})",
            q(n.node_op_type()),
            schema.since_version
        ),
    );
}

thread_local! {
    /// This thread's last schema lookups: nodes are checked in runs on
    /// each thread, and graphs repeat a few operators.
    static RECENT: std::cell::RefCell<crate::opset::RecentSchemas<4>> =
        const { std::cell::RefCell::new(crate::opset::RecentSchemas::new()) };
}

fn unknown_op_hint<N: NodeFields + ?Sized>(c: &Checker<'_>, n: &N, version: i64) -> Option<String> {
    let (op_type, domain) = (n.node_op_type(), n.node_domain());
    let onnx = onnx_op_hint(c, op_type, domain, version);
    if crate::infer::ops::contrib::rule(domain, op_type, version).is_none() {
        return onnx.map(OnnxHint::text);
    }
    let ort = "an operator of onnxruntime's: with contrib_ops=True (--contrib-ops) it is known, \
               verified against onnxruntime's schema and inferred";
    Some(match onnx {
        // A fact about onnx's operator (where it exists) is worth saying
        // beside onnxruntime's; a guess at a similar name is not.
        Some(OnnxHint::Fact(h)) => format!("{h}; {ort}"),
        _ => ort.to_string(),
    })
}

/// What onnx's own operators say about an unknown one.
enum OnnxHint {
    /// The domain is spelled so onnx does not look it up, or the operator
    /// exists from a later opset.
    Fact(String),
    /// The closest operator name.
    Guess(String),
}

impl OnnxHint {
    fn text(self) -> String {
        match self {
            OnnxHint::Fact(t) | OnnxHint::Guess(t) => t,
        }
    }
}

fn onnx_op_hint(c: &Checker<'_>, op_type: &str, domain: &str, version: i64) -> Option<OnnxHint> {
    if domain == "ai.onnx" {
        return Some(OnnxHint::Fact(
            "onnx only finds ai.onnx operators when the node's domain is '' (empty)".into(),
        ));
    }
    if let Some(first) = c.schemas.versions(op_type, domain).first() {
        return Some(OnnxHint::Fact(format!(
            "{} exists from opset {} on; this model imports opset {version}",
            q(op_type),
            first.since_version
        )));
    }
    closest(op_type, c.schemas.op_names(domain))
        .map(|s| OnnxHint::Guess(format!("did you mean {}?", q(s))))
}

/// onnx's OpSchema::Verify.
fn verify<N: NodeFields + ?Sized>(
    c: &mut Checker<'_>,
    n: &N,
    s: &OpSchema,
    loc: &dyn Fn() -> Location,
) {
    let who = || {
        format!(
            "{} (opset {} version {})",
            q(&s.name),
            if s.domain.is_empty() {
                "ai.onnx"
            } else {
                &s.domain
            },
            s.since_version
        )
    };
    let range = |min: u32, max: u32| {
        if max == i32::MAX as u32 {
            format!("at least {min}")
        } else if min == max {
            format!("exactly {min}")
        } else {
            format!("{min} to {max}")
        }
    };
    let n_in = n.inputs().len();
    if n_in < s.min_input as usize || n_in > s.max_input as usize {
        c.emit(
            codes::INPUT_COUNT,
            &loc(),
            format!(
                "{} takes {} inputs, the node has {n_in}",
                who(),
                range(s.min_input, s.max_input)
            ),
        );
    }
    let n_out = n.outputs().len();
    if n_out < s.min_output as usize || n_out > s.max_output as usize {
        c.emit(
            codes::OUTPUT_COUNT,
            &loc(),
            format!(
                "{} has {} outputs, the node has {n_out}",
                who(),
                range(s.min_output, s.max_output)
            ),
        );
    } else if let Some(allowed) = allowed_outputs(s) {
        if !allowed.contains(&n_out) {
            c.emit(
                codes::OUTPUT_COUNT,
                &loc(),
                format!(
                    "{} has {allowed:?} outputs (no other count), the node has {n_out}",
                    who()
                ),
            );
        }
    }
    let params: [(_, &mut dyn Iterator<Item = &str>, _); 2] = [
        ("input", &mut n.inputs(), &s.inputs),
        ("output", &mut n.outputs(), &s.outputs),
    ];
    for (kind, names, formals) in params {
        for (i, name) in names.enumerate() {
            let formal = match formals.get(i) {
                Some(f) => f,
                None => match formals.last() {
                    Some(last) if last.option == ParamOption::Variadic => break,
                    _ => break,
                },
            };
            if name.is_empty() && formal.option == ParamOption::Single {
                c.emit(
                    codes::REQUIRED_PARAM_EMPTY,
                    &loc().child(item(
                        if kind == "input" { "input" } else { "output" },
                        i,
                        "",
                    )),
                    format!(
                        "{kind} {i} ({}) of {} is required, but the node leaves it empty",
                        q(&formal.name),
                        who()
                    ),
                );
            }
        }
    }
    // onnx's LayerNormalization 17, and onnxruntime's own LayerNormalization
    // and SimplifiedLayerNormalization (version 1: its schemas allow
    // unchecked attributes), take any attribute.
    let unchecked = s.domain.is_empty()
        && match s.name.as_str() {
            "LayerNormalization" => matches!(s.since_version, 1 | 17),
            "SimplifiedLayerNormalization" => true,
            _ => false,
        };
    for a in n.attributes() {
        let aloc = || loc().child(Step::Attribute(a.name().to_string()));
        let Some(spec) = s.attribute(a.name()) else {
            if unchecked || a.name().starts_with("__") {
                continue;
            }
            let hint = closest(a.name(), s.attributes.iter().map(|x| x.name.as_str()))
                .map(|x| format!("did you mean {}?", q(x)));
            c.emit_hint(
                codes::UNKNOWN_ATTRIBUTE,
                &aloc(),
                format!("{} has no attribute {}", who(), q(a.name())),
                hint.or_else(|| {
                    let names: Vec<&str> = s.attributes.iter().map(|x| x.name.as_str()).collect();
                    Some(if names.is_empty() {
                        "it takes no attributes".to_string()
                    } else {
                        format!("its attributes: {}", names.join(", "))
                    })
                }),
            );
            continue;
        };
        let actual = declared_type(a).unwrap_or(AttributeType::Undefined);
        let expected = AttributeType::try_from(spec.attr_type).unwrap_or(AttributeType::Undefined);
        if actual != expected {
            c.emit(
                codes::ATTRIBUTE_TYPE,
                &aloc(),
                format!(
                    "attribute {} of {} must be {}, it is {}",
                    q(a.name()),
                    who(),
                    expected.as_str_name(),
                    actual.as_str_name()
                ),
            );
            continue;
        }
        if !a.ref_attr_name().is_empty() {
            continue;
        }
        let missing = match expected {
            AttributeType::Tensor if a.t().is_none() => Some("t"),
            AttributeType::SparseTensor if a.sparse_tensor().is_none() => Some("sparse_tensor"),
            AttributeType::Graph if a.g().is_none() => Some("g"),
            AttributeType::TypeProto if a.tp().is_none() => Some("tp"),
            _ => None,
        };
        if let Some(field) = missing {
            c.emit(
                codes::ATTRIBUTE_NO_VALUE,
                &aloc(),
                format!(
                    "attribute {} is {} but has no value in its '{field}' field",
                    q(a.name()),
                    expected.as_str_name()
                ),
            );
        }
    }
    for spec in s.attributes.iter().filter(|x| x.required) {
        if !n.attributes().iter().any(|a| same(a.name(), &spec.name)) {
            c.emit(
                codes::MISSING_ATTRIBUTE,
                &loc(),
                format!("{} requires the attribute {}", who(), q(&spec.name)),
            );
        }
    }
}

/// Output counts a schema allows beyond its min/max (not visible from
/// onnx's Python API; see docs/checks.md).
pub(crate) fn allowed_outputs(s: &OpSchema) -> Option<&'static [usize]> {
    if !s.domain.is_empty() || s.name != "BatchNormalization" {
        return None;
    }
    match s.since_version {
        1 | 6 | 7 | 9 => Some(&[1, 5]),
        14 | 15 => Some(&[1, 3]),
        _ => None,
    }
}

/// onnx's check_attribute, except the subgraph recursion (see check_subgraphs).
fn check_attribute(
    c: &mut Checker<'_>,
    a: &AttributeProto,
    is_main: bool,
    loc: &dyn Fn() -> Location,
) {
    if a.name().is_empty() {
        c.emit(
            codes::NO_ATTRIBUTE_NAME,
            &loc(),
            "the attribute has no name".into(),
        );
    }
    let declared = declared_type(a);
    if c.ir_version >= 2 && declared.is_none() {
        c.emit(
            codes::NO_ATTRIBUTE_TYPE,
            &loc(),
            "the attribute has no type (required from IR version 2)".into(),
        );
    }
    let present = [
        (a.f.is_some(), AttributeType::Float),
        (a.i.is_some(), AttributeType::Int),
        (a.s.is_some(), AttributeType::String),
        (a.t().is_some(), AttributeType::Tensor),
        (a.g().is_some(), AttributeType::Graph),
        (a.tp().is_some(), AttributeType::TypeProto),
        (a.sparse_tensor().is_some(), AttributeType::SparseTensor),
        (!a.floats.is_empty(), AttributeType::Floats),
        (!a.ints.is_empty(), AttributeType::Ints),
        (!a.strings().is_empty(), AttributeType::Strings),
        (!a.tensors().is_empty(), AttributeType::Tensors),
        (!a.graphs().is_empty(), AttributeType::Graphs),
        (!a.sparse_tensors().is_empty(), AttributeType::SparseTensors),
        (!a.type_protos().is_empty(), AttributeType::TypeProtos),
    ];
    let mut used = 0;
    for (is_set, kind) in present {
        if !is_set {
            continue;
        }
        used += 1;
        if let Some(t) = declared {
            if t != kind {
                c.emit(
                    codes::ATTRIBUTE_VALUE_FIELD,
                    &loc(),
                    format!(
                        "the attribute's type is {} but it holds a {} value",
                        t.as_str_name(),
                        kind.as_str_name()
                    ),
                );
                break;
            }
        }
    }
    if used > 1 && declared.is_none() {
        c.emit(
            codes::ATTRIBUTE_MANY_VALUES,
            &loc(),
            "the attribute holds more than one value field".into(),
        );
    }
    if !is_main && a.ref_attr_name_opt().is_some() && used != 0 {
        c.emit(
            codes::REF_ATTRIBUTE_WITH_VALUE,
            &loc(),
            "inside a subgraph, an attribute that refers to a parent attribute (ref_attr_name) cannot also hold a value"
                .into(),
        );
    }
    if let Some(t) = a.t() {
        let tloc = || loc().child(Step::Field("t"));
        super::policy::tensor(c, t, true, &tloc);
        tensor::check_tensor(c, t, &tloc);
    }
    if let Some(s) = a.sparse_tensor() {
        tensor::check_sparse(c, s, &|| loc().child(Step::Field("sparse_tensor")));
    }
    for (i, t) in a.tensors().iter().enumerate() {
        let tloc = || loc().child(item("tensors", i, t.name()));
        super::policy::tensor(c, t, true, &tloc);
        tensor::check_tensor(c, t, &tloc);
    }
    for (i, s) in a.sparse_tensors().iter().enumerate() {
        tensor::check_sparse(c, s, &|| loc().child(item("sparse_tensors", i, "")));
    }
}

/// Checks the graphs a node's attributes hold, in the current scope.
pub(crate) fn check_subgraphs<'a>(
    c: &mut Checker<'_>,
    n: &'a NodeProto,
    opsets: &OpsetMap<'_>,
    scope: &mut Scope<'a>,
    loc: &Location,
) {
    for a in &n.attribute {
        if a.g().is_none() && a.graphs().is_empty() {
            continue;
        }
        super::policy::subgraph(c, loc, a.name());
        let aloc = loc.child(Step::Attribute(a.name().to_string()));
        if let Some(g) = a.g() {
            check_graph(c, g, opsets, false, scope, &aloc);
        }
        for g in a.graphs() {
            check_graph(c, g, opsets, false, scope, &aloc);
        }
    }
}
