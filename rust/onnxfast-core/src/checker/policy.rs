//! Ingestion policies: rules a pipeline sets on top of validity (which
//! operators and domains, opset and IR ranges, sizes, external data,
//! functions, metadata), evaluated in the checker's own walk.
//!
//! Per-element rules run where the checker already holds the element: a
//! node's domain and operator in `check_node_local` (every graph, subgraph
//! and function body, in the parallel runs of large graphs), a tensor's
//! size and storage where its check runs, a subgraph's depth where the
//! checker enters it. Totals (nodes, parameters, external bytes) add up in
//! the checker's [`Tally`] and are judged at the end ([`finish`]); the
//! model's header (IR version, opset imports, metadata, functions, file
//! size) is judged at the start ([`model_header`]). Each rule has its own
//! code (P0…, docs/checks.md); violations are errors.

use std::hash::BuildHasher;

use super::{q, Checker};
use crate::diag::codes::{self, Code};
use crate::diag::{Location, Step};
use crate::proto::{ModelProto, NodeFields, OperatorSetIdProto};

/// A policy. The default allows everything; each rule set narrows it.
/// Domains are as in `NodeProto.domain`, with `""` and `"ai.onnx"` the same
/// (both are written `ai.onnx` in findings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// When set, every node's domain must be one of these.
    pub allowed_domains: Option<Vec<String>>,
    /// No node may be in one of these domains.
    pub denied_domains: Vec<String>,
    /// When set, every node must match one of these.
    pub allowed_ops: Option<Vec<OpRule>>,
    /// No node may match one of these.
    pub denied_ops: Vec<OpRule>,
    /// Lowest opset version allowed, by domain (opset imports of the model
    /// and of its functions).
    pub min_opset: Vec<(String, i64)>,
    /// Highest opset version allowed, by domain.
    pub max_opset: Vec<(String, i64)>,
    pub min_ir_version: Option<i64>,
    pub max_ir_version: Option<i64>,
    /// Size of the model file (external data not included).
    pub max_file_bytes: Option<u64>,
    /// Elements of every weight: initializers, tensor-valued attributes
    /// (`Constant`'s value, ...), sparse tensors' stored values.
    pub max_parameters: Option<u64>,
    /// Nodes of every graph, subgraph and function body.
    pub max_nodes: Option<u64>,
    /// Nesting of graphs in node attributes: 0 allows no subgraph, 1 allows
    /// the main graph's (and function bodies') subgraphs, and so on.
    pub max_subgraph_depth: Option<u32>,
    pub allow_external_data: bool,
    /// Bytes of every tensor stored in external files, in all.
    pub max_external_bytes: Option<u64>,
    pub allow_functions: bool,
    /// Keys `metadata_props` must hold.
    pub required_metadata: Vec<String>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allowed_domains: None,
            denied_domains: Vec::new(),
            allowed_ops: None,
            denied_ops: Vec::new(),
            min_opset: Vec::new(),
            max_opset: Vec::new(),
            min_ir_version: None,
            max_ir_version: None,
            max_file_bytes: None,
            max_parameters: None,
            max_nodes: None,
            max_subgraph_depth: None,
            allow_external_data: true,
            max_external_bytes: None,
            allow_functions: true,
            required_metadata: Vec::new(),
        }
    }
}

/// An operator pattern: `op` in `domain`, or every operator of `domain`
/// when `op` is `None` (written `domain::*`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpRule {
    pub domain: String,
    pub op: Option<String>,
}

impl OpRule {
    /// Parses `Op` (the `ai.onnx` domain), `domain::Op` or `domain::*`.
    pub fn parse(text: &str) -> Result<OpRule, String> {
        let (domain, op) = match text.rsplit_once("::") {
            Some((d, o)) => (d, o),
            None => ("", text),
        };
        if op.is_empty() {
            return Err(format!(
                "{text:?} names no operator (write `Op`, `domain::Op` or `domain::*`)"
            ));
        }
        Ok(OpRule {
            domain: domain_key(domain).to_string(),
            op: (op != "*").then(|| op.to_string()),
        })
    }
}

/// The canonical spelling of a domain: `ai.onnx` is the empty domain.
pub fn domain_key(domain: &str) -> &str {
    if domain == "ai.onnx" {
        ""
    } else {
        domain
    }
}

fn domain_text(domain: &str) -> &str {
    if domain.is_empty() {
        "ai.onnx"
    } else {
        domain
    }
}

/// Totals the policy judges at the end, summed over the checker's forks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub nodes: u64,
    pub parameters: u64,
    pub external_bytes: u64,
}

impl Tally {
    pub fn merge(&mut self, other: Tally) {
        self.nodes = self.nodes.saturating_add(other.nodes);
        self.parameters = self.parameters.saturating_add(other.parameters);
        self.external_bytes = self.external_bytes.saturating_add(other.external_bytes);
    }

    pub fn is_empty(&self) -> bool {
        *self == Tally::default()
    }
}

/// Owned strings looked up by a borrowed one without calling `memcmp`
/// (see `crate::names`: per call it costs more than the rest of a node's
/// rules): by hash, then compared inline.
#[derive(Debug, Clone)]
struct StrMap<V> {
    hasher: foldhash::fast::FixedState,
    by_hash: foldhash::HashMap<u64, Vec<(String, V)>>,
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        StrMap {
            hasher: foldhash::fast::FixedState::with_seed(0x6f6e_6e78),
            by_hash: Default::default(),
        }
    }
}

impl<V> StrMap<V> {
    fn get(&self, key: &str) -> Option<&V> {
        let bucket = self.by_hash.get(&self.hasher.hash_one(key))?;
        bucket
            .iter()
            .find(|(k, _)| crate::names::same(k, key))
            .map(|(_, v)| v)
    }

    fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> V) -> &mut V {
        let bucket = self.by_hash.entry(self.hasher.hash_one(key)).or_default();
        let at = match bucket.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                bucket.push((key.to_string(), make()));
                bucket.len() - 1
            }
        };
        &mut bucket[at].1
    }

    fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// Domain names (canonical).
type DomainSet = StrMap<()>;

/// Operator patterns by domain: `None` matches every operator of it.
type OpSet = StrMap<Option<StrMap<()>>>;

/// A policy ready for lookups (what the checker's options hold): a node
/// costs a few hash probes, however long the lists.
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    pub policy: Policy,
    allowed_domains: Option<DomainSet>,
    denied_domains: DomainSet,
    allowed_ops: Option<OpSet>,
    denied_ops: OpSet,
}

impl From<Policy> for Compiled {
    fn from(policy: Policy) -> Self {
        let domains = |v: &[String]| -> DomainSet {
            let mut set = DomainSet::default();
            for d in v {
                set.get_or_insert_with(domain_key(d), || ());
            }
            set
        };
        let ops = |v: &[OpRule]| -> OpSet {
            let mut set = OpSet::default();
            for r in v {
                let entry =
                    set.get_or_insert_with(domain_key(&r.domain), || Some(StrMap::default()));
                match (&r.op, entry) {
                    (None, entry) => *entry = None,
                    (Some(op), Some(ops)) => {
                        ops.get_or_insert_with(op, || ());
                    }
                    (Some(_), None) => {}
                }
            }
            set
        };
        Compiled {
            allowed_domains: policy.allowed_domains.as_deref().map(domains),
            denied_domains: domains(&policy.denied_domains),
            allowed_ops: policy.allowed_ops.as_deref().map(ops),
            denied_ops: ops(&policy.denied_ops),
            policy,
        }
    }
}

impl Compiled {
    fn matches(set: &OpSet, domain: &str, op: &str) -> bool {
        set.get(domain)
            .is_some_and(|ops| ops.as_ref().is_none_or(|ops| ops.contains(op)))
    }
}

/// Whether the check enforces a policy.
fn active<'c>(c: &Checker<'c>) -> Option<&'c Compiled> {
    c.options.policy.as_deref()
}

/// The domain and operator rules for one node (one finding at most: a
/// domain's rule first, then the operator's).
pub(crate) fn node<N: NodeFields + ?Sized>(c: &mut Checker<'_>, n: &N, loc: &dyn Fn() -> Location) {
    let Some(p) = active(c) else {
        return;
    };
    let domain = domain_key(n.node_domain());
    let op = n.node_op_type();
    let found: Option<(Code, String)> = if p
        .allowed_domains
        .as_ref()
        .is_some_and(|s| !s.contains(domain))
    {
        Some((
            codes::POLICY_DOMAIN_NOT_ALLOWED,
            format!(
                "the node's domain {} is not in the policy's allowed_domains",
                q(domain_text(domain))
            ),
        ))
    } else if p.denied_domains.contains(domain) {
        Some((
            codes::POLICY_DOMAIN_DENIED,
            format!(
                "the node's domain {} is in the policy's denied_domains",
                q(domain_text(domain))
            ),
        ))
    } else if p
        .allowed_ops
        .as_ref()
        .is_some_and(|s| !Compiled::matches(s, domain, op))
    {
        Some((
            codes::POLICY_OP_NOT_ALLOWED,
            format!(
                "operator {} is not in the policy's allowed_ops",
                q(&op_text(domain, op))
            ),
        ))
    } else if Compiled::matches(&p.denied_ops, domain, op) {
        Some((
            codes::POLICY_OP_DENIED,
            format!(
                "operator {} is in the policy's denied_ops",
                q(&op_text(domain, op))
            ),
        ))
    } else {
        None
    };
    if let Some((code, message)) = found {
        c.emit(code, &loc(), message);
    }
}

fn op_text(domain: &str, op: &str) -> String {
    if domain.is_empty() {
        op.to_string()
    } else {
        format!("{domain}::{op}")
    }
}

/// A graph's nodes, for `max_nodes`.
pub(crate) fn nodes(c: &mut Checker<'_>, count: usize) {
    if active(c).is_some() {
        c.tally.nodes = c.tally.nodes.saturating_add(count as u64);
    }
}

/// A subgraph held by the node at `node_loc`: its depth is the number of
/// graphs (and function bodies) around that node. Only the first level over
/// the limit is reported (deeper ones would repeat it).
pub(crate) fn subgraph(c: &mut Checker<'_>, node_loc: &Location, attribute: &str) {
    let Some(max) = active(c).and_then(|p| p.policy.max_subgraph_depth) else {
        return;
    };
    let depth = node_loc
        .0
        .iter()
        .filter(|s| matches!(s, Step::Graph(_) | Step::Function { .. }))
        .count();
    if depth == max as usize + 1 {
        c.emit(
            codes::POLICY_SUBGRAPH_TOO_DEEP,
            &node_loc.child(Step::Attribute(attribute.to_string())),
            format!(
                "this subgraph is nested {depth} deep, more than the policy's \
                 max_subgraph_depth of {max}"
            ),
        );
    }
}

/// A tensor: its elements count as parameters when `weights` (sparse
/// indices do not); its bytes in an external file count for
/// `max_external_bytes` and are refused without `allow_external_data`.
pub(crate) fn tensor<T: super::tensor::TensorFacts + ?Sized>(
    c: &mut Checker<'_>,
    t: &T,
    weights: bool,
    loc: &dyn Fn() -> Location,
) {
    let Some(p) = active(c) else {
        return;
    };
    let count = t
        .dims()
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).unwrap_or(0)))
        .unwrap_or(u64::MAX);
    if weights {
        c.tally.parameters = c.tally.parameters.saturating_add(count);
    }
    if !t.is_external() {
        return;
    }
    let bytes = crate::tensor::elem_type(t.data_type().unwrap_or(0))
        .and_then(|e| e.raw_len(usize::try_from(count).ok()?))
        .map_or(u64::MAX, |b| b as u64);
    c.tally.external_bytes = c.tally.external_bytes.saturating_add(bytes);
    if !p.policy.allow_external_data {
        c.emit(
            codes::POLICY_EXTERNAL_DATA,
            &loc(),
            format!(
                "tensor {} keeps its data in an external file, and the policy sets \
                 allow_external_data = false",
                q(t.name())
            ),
        );
    }
}

/// The model's header: IR version, opset imports (the model's and its
/// functions'), required metadata, functions, file size.
pub(crate) fn model_header(c: &mut Checker<'_>, model: &ModelProto, source_bytes: Option<u64>) {
    let Some(p) = active(c) else {
        return;
    };
    let policy = &p.policy;
    let here = Location(vec![Step::Model]);
    let ir = model.ir_version();
    let ir_loc = here.child(Step::Field("ir_version"));
    if let Some(min) = policy.min_ir_version.filter(|&m| ir < m) {
        c.emit(
            codes::POLICY_IR_TOO_OLD,
            &ir_loc,
            format!("ir_version {ir} is below the policy's min_ir_version of {min}"),
        );
    }
    if let Some(max) = policy.max_ir_version.filter(|&m| ir > m) {
        c.emit(
            codes::POLICY_IR_TOO_NEW,
            &ir_loc,
            format!("ir_version {ir} is above the policy's max_ir_version of {max}"),
        );
    }
    opset_imports(c, &model.opset_import, &here);
    for f in &model.functions {
        let floc = here.child(super::function::function_step(f));
        opset_imports(c, &f.opset_import, &floc);
        if !policy.allow_functions {
            c.emit(
                codes::POLICY_FUNCTION,
                &floc,
                "the model defines a local function, and the policy sets allow_functions = false"
                    .into(),
            );
        }
    }
    for key in &policy.required_metadata {
        if !model.metadata_props.iter().any(|m| m.key() == key) {
            c.emit(
                codes::POLICY_METADATA_MISSING,
                &here.child(Step::Field("metadata_props")),
                format!(
                    "metadata_props has no key {} (the policy's required_metadata)",
                    q(key)
                ),
            );
        }
    }
    if let (Some(max), Some(size)) = (policy.max_file_bytes, source_bytes) {
        if size > max {
            c.emit(
                codes::POLICY_FILE_TOO_LARGE,
                &here,
                format!(
                    "the model file is {size} bytes, more than the policy's max_file_bytes \
                     of {max}"
                ),
            );
        }
    }
}

fn opset_imports(c: &mut Checker<'_>, imports: &[OperatorSetIdProto], here: &Location) {
    let Some(p) = active(c) else {
        return;
    };
    if p.policy.min_opset.is_empty() && p.policy.max_opset.is_empty() {
        return;
    }
    let limit = |rules: &[(String, i64)], domain: &str| {
        rules
            .iter()
            .rev()
            .find(|(d, _)| domain_key(d) == domain)
            .map(|&(_, v)| v)
    };
    for (i, o) in imports.iter().enumerate() {
        let domain = domain_key(o.domain());
        let version = o.version();
        let loc = || here.child(super::graph::item("opset_import", i, o.domain()));
        if let Some(min) = limit(&p.policy.min_opset, domain).filter(|&m| version < m) {
            c.emit(
                codes::POLICY_OPSET_TOO_OLD,
                &loc(),
                format!(
                    "{} opset {version} is below the policy's min_opset of {min}",
                    domain_text(domain)
                ),
            );
        }
        if let Some(max) = limit(&p.policy.max_opset, domain).filter(|&m| version > m) {
            c.emit(
                codes::POLICY_OPSET_TOO_NEW,
                &loc(),
                format!(
                    "{} opset {version} is above the policy's max_opset of {max}",
                    domain_text(domain)
                ),
            );
        }
    }
}

/// The totals, once the walk is over.
pub(crate) fn finish(c: &mut Checker<'_>) {
    let Some(p) = active(c) else {
        return;
    };
    let policy = &p.policy;
    let here = Location(vec![Step::Model]);
    let tally = c.tally;
    if let Some(max) = policy.max_nodes.filter(|&m| tally.nodes > m) {
        c.emit(
            codes::POLICY_TOO_MANY_NODES,
            &here,
            format!(
                "the model has {} nodes (every graph and function), more than the policy's \
                 max_nodes of {max}",
                tally.nodes
            ),
        );
    }
    if let Some(max) = policy.max_parameters.filter(|&m| tally.parameters > m) {
        c.emit(
            codes::POLICY_TOO_MANY_PARAMETERS,
            &here,
            format!(
                "the model has {} parameters (weight elements), more than the policy's \
                 max_parameters of {max}",
                tally.parameters
            ),
        );
    }
    if let Some(max) = policy
        .max_external_bytes
        .filter(|&m| tally.external_bytes > m)
    {
        c.emit(
            codes::POLICY_EXTERNAL_TOO_LARGE,
            &here,
            format!(
                "the model's tensors keep {} bytes in external files, more than the \
                 policy's max_external_bytes of {max}",
                tally.external_bytes
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_rules_parse() {
        let rule = |d: &str, o: Option<&str>| OpRule {
            domain: d.into(),
            op: o.map(Into::into),
        };
        assert_eq!(OpRule::parse("Conv"), Ok(rule("", Some("Conv"))));
        assert_eq!(OpRule::parse("ai.onnx::Conv"), Ok(rule("", Some("Conv"))));
        assert_eq!(
            OpRule::parse("com.x::y::Op"),
            Ok(rule("com.x::y", Some("Op")))
        );
        assert_eq!(OpRule::parse("ai.onnx.ml::*"), Ok(rule("ai.onnx.ml", None)));
        assert!(OpRule::parse("com.x::").is_err());
        assert!(OpRule::parse("").is_err());
    }

    #[test]
    fn sets_match_exactly_and_by_domain() {
        let ops: Vec<OpRule> = ["Conv", "com.x::*", "com.x::A", "ai.onnx.ml::Scaler"]
            .iter()
            .map(|t| OpRule::parse(t).unwrap())
            .collect();
        let p = Compiled::from(Policy {
            allowed_ops: Some(ops.clone()),
            denied_ops: ops,
            ..Policy::default()
        });
        let allowed = p.allowed_ops.as_ref().unwrap();
        for (domain, op, expected) in [
            ("", "Conv", true),
            ("", "conv", false),
            ("", "Relu", false),
            ("com.x", "A", true),
            ("com.x", "Anything", true), // the wildcard wins over the entry
            ("com.y", "A", false),
            ("ai.onnx.ml", "Scaler", true),
            ("ai.onnx.ml", "Normalizer", false),
        ] {
            assert_eq!(
                Compiled::matches(allowed, domain, op),
                expected,
                "{domain}::{op}"
            );
            assert_eq!(Compiled::matches(&p.denied_ops, domain, op), expected);
        }
    }

    #[test]
    fn str_map_finds_every_key_among_many() {
        let mut map = StrMap::<usize>::default();
        let keys: Vec<String> = (0..5000).map(|i| format!("op{i}")).collect();
        for (i, k) in keys.iter().enumerate() {
            *map.get_or_insert_with(k, || 0) = i;
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k), Some(&i));
        }
        assert_eq!(map.get("op5000"), None);
        assert_eq!(map.get(""), None);
        // Inserting again keeps the entry.
        assert_eq!(*map.get_or_insert_with("op7", || 99), 7);
    }
}
