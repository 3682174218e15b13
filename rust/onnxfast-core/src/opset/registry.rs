//! Operator schemas of onnx (every domain, full version history), loaded from
//! `data/op_schemas.txt`, which `scripts/gen_op_schemas.py` generates from
//! the installed onnx package.

use foldhash::HashMap;
use prost::Message;
use std::sync::OnceLock;

use super::typeset::TypeSet;
use crate::names::{same, Name, NameMap};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, FunctionProto, TensorProto};

/// How a formal input or output may be bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamOption {
    Single,
    Optional,
    Variadic,
}

#[derive(Debug, Clone)]
pub struct FormalParam {
    pub name: String,
    pub option: ParamOption,
    pub min_arity: u32,
    pub homogeneous: bool,
    /// A type constraint's name (`T`) or a type (`tensor(int64)`).
    pub type_str: String,
    /// The types it allows (the constraint's, or the one type).
    pub allowed: TypeSet,
    /// `type_str` as a small number: parameters of one schema have the
    /// same `var` exactly when they have the same `type_str`.
    pub var: u16,
}

#[derive(Debug, Clone)]
pub struct AttrSpec {
    pub name: String,
    /// `AttributeProto.AttributeType` code.
    pub attr_type: i32,
    pub required: bool,
    /// The schema's default value, as an attribute named `name`.
    pub default: Option<AttributeProto>,
}

/// A type constraint: a name (`T`) and the types it allows.
#[derive(Debug, Clone)]
pub struct TypeConstraint {
    pub name: String,
    pub allowed: TypeSet,
}

/// How onnx infers the outputs of an operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InferenceKind {
    /// The schema has a type-and-shape inference function.
    pub function: bool,
    /// The schema has a function body.
    pub body: bool,
    /// The schema has a context-dependent function body.
    pub context_body: bool,
}

/// One version of one operator.
#[derive(Debug, Clone)]
pub struct OpSchema {
    /// Index of this schema among all of the registry's (see
    /// [`SchemaRegistry::all`]), for tables indexed by schema.
    pub id: usize,
    pub domain: String,
    pub name: String,
    pub since_version: i64,
    pub deprecated: bool,
    pub min_input: u32,
    pub max_input: u32,
    pub min_output: u32,
    pub max_output: u32,
    pub inputs: Vec<FormalParam>,
    pub outputs: Vec<FormalParam>,
    pub attributes: Vec<AttrSpec>,
    pub constraints: Vec<TypeConstraint>,
    pub inference: InferenceKind,
    /// The function body onnx infers through (schemas with a body and no
    /// inference function).
    pub body: Option<FunctionProto>,
}

impl OpSchema {
    pub fn attribute(&self, name: &str) -> Option<&AttrSpec> {
        self.attributes.iter().find(|a| same(&a.name, name))
    }

    /// The formal input that actual input `i` binds to (the last one when it
    /// is variadic).
    pub fn input_param(&self, i: usize) -> Option<&FormalParam> {
        formal(&self.inputs, i)
    }

    /// The formal output that actual output `i` binds to.
    pub fn output_param(&self, i: usize) -> Option<&FormalParam> {
        formal(&self.outputs, i)
    }

    /// `'Conv' (opset ai.onnx version 11)`, for messages.
    pub fn display_name(&self) -> String {
        format!(
            "'{}' ({} version {})",
            self.name,
            if self.domain.is_empty() {
                "ai.onnx"
            } else {
                &self.domain
            },
            self.since_version
        )
    }
}

fn formal(params: &[FormalParam], i: usize) -> Option<&FormalParam> {
    params
        .get(i)
        .or_else(|| params.last().filter(|p| p.option == ParamOption::Variadic))
}

/// The last `N` schema lookups of one reader, answered again without the
/// registry's two hashed lookups (graphs repeat a few operators): a hit
/// costs a few short compares.
#[derive(Debug)]
pub struct RecentSchemas<const N: usize> {
    /// (registry address, op_type, domain, version, result).
    entries: [Option<RecentLookup>; N],
    next: usize,
}

type RecentLookup = (
    usize,
    compact_str::CompactString,
    compact_str::CompactString,
    i64,
    Option<&'static OpSchema>,
);

impl<const N: usize> RecentSchemas<N> {
    pub const fn new() -> Self {
        RecentSchemas {
            entries: [const { None }; N],
            next: 0,
        }
    }

    /// `registry.get(op_type, version, domain)`, remembered.
    pub fn get(
        &mut self,
        registry: &'static SchemaRegistry,
        op_type: &str,
        version: i64,
        domain: &str,
    ) -> Option<&'static OpSchema> {
        let at = std::ptr::from_ref(registry) as usize;
        for (r, o, d, v, found) in self.entries.iter().flatten() {
            if *r == at && *v == version && same(o, op_type) && same(d, domain) {
                return *found;
            }
        }
        let found = registry.get(op_type, version, domain);
        if N > 0 {
            self.entries[self.next % N] = Some((at, op_type.into(), domain.into(), version, found));
            self.next = (self.next + 1) % N;
        }
        found
    }
}

impl<const N: usize> Default for RecentSchemas<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// All schemas, by (domain, op_type), each list sorted by since_version.
/// An operator's schemas are read from the compiled-in table on first use
/// (a process that checks a model of a dozen operators reads a dozen of
/// 227; reading them all took ~2 ms, every fresh process).
#[derive(Debug, Default)]
pub struct SchemaRegistry {
    /// domain → op_type → index in `ops` (keys are slices of the
    /// compiled-in table).
    by_op: NameMap<'static, NameMap<'static, usize>>,
    /// Each operator's lines of the table and its versions, read on first
    /// use.
    ops: Vec<OpEntry>,
    /// How many schemas the table holds.
    count: usize,
    /// Opset version range each known domain has.
    pub domains: HashMap<String, (i64, i64)>,
    /// The onnx release the table comes from.
    pub onnx_version: String,
}

/// One operator of the table.
#[derive(Debug, Default)]
struct OpEntry {
    /// Its runs of lines (one, as the generator writes the table).
    blocks: Vec<&'static str>,
    /// The id of its first version; the others follow.
    first_id: usize,
    /// How many versions.
    count: usize,
    versions: OnceLock<Vec<OpSchema>>,
}

const DATA: &str = include_str!("../../data/op_schemas.txt");
const ORT_DATA: &str = include_str!("../../data/ort_schemas.txt");

fn token(t: &'static str) -> &'static str {
    if t == "-" {
        ""
    } else {
        t
    }
}

fn parse_param(fields: &[&'static str]) -> Option<FormalParam> {
    let option = match *fields.get(1)? {
        "S" => ParamOption::Single,
        "O" => ParamOption::Optional,
        "V" => ParamOption::Variadic,
        _ => return None,
    };
    Some(FormalParam {
        name: token(fields.first()?).to_string(),
        option,
        min_arity: fields.get(2)?.parse().ok()?,
        homogeneous: *fields.get(3)? == "1",
        type_str: token(fields.get(4)?).to_string(),
        // Resolved against the constraints when the schema is complete.
        allowed: TypeSet::default(),
        var: 0,
    })
}

fn unhex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A STRING default: `s` + text or `x` + hex.
fn parse_text(t: &str) -> Option<Vec<u8>> {
    if let Some(text) = t.strip_prefix('s') {
        Some(text.as_bytes().to_vec())
    } else {
        unhex(t.strip_prefix('x')?)
    }
}

/// A default value as the generator writes it (see gen_op_schemas.py).
fn parse_default(name: &str, attr_type: i32, text: &str) -> Option<AttributeProto> {
    if text == "-" {
        return None;
    }
    let kind = AttributeType::try_from(attr_type).ok()?;
    let mut a = AttributeProto {
        name: Some(name.into()),
        r#type: Some(attr_type),
        ..AttributeProto::default()
    };
    let list = || text.split(',');
    match kind {
        AttributeType::Int => a.i = Some(text.parse().ok()?),
        AttributeType::Float => a.f = Some(text.parse::<f64>().ok()? as f32),
        AttributeType::String => a.s = Some(parse_text(text)?.into()),
        AttributeType::Ints => a.ints = list().map(|v| v.parse().ok()).collect::<Option<_>>()?,
        AttributeType::Floats => {
            a.floats = list()
                .map(|v| v.parse::<f64>().ok().map(|f| f as f32))
                .collect::<Option<_>>()?
        }
        AttributeType::Strings => {
            a.extras_mut().strings = list()
                .map(|v| parse_text(v).map(Into::into))
                .collect::<Option<_>>()?
        }
        AttributeType::Tensor => {
            let bytes = unhex(text.strip_prefix('x')?)?;
            a.extras_mut().t = Some(Box::new(TensorProto::decode(bytes.as_slice()).ok()?));
        }
        _ => return None,
    }
    Some(a)
}

/// Resolves each formal parameter's allowed types once the schema is read.
fn resolve_params(s: &mut OpSchema) {
    let constraints = &s.constraints;
    let mut vars: Vec<String> = Vec::new();
    for p in s.inputs.iter_mut().chain(s.outputs.iter_mut()) {
        p.allowed = match constraints.iter().find(|c| c.name == p.type_str) {
            Some(c) => c.allowed.clone(),
            None => TypeSet::parse(&p.type_str).unwrap_or_default(),
        };
        let var = vars
            .iter()
            .position(|v| *v == p.type_str)
            .unwrap_or_else(|| {
                vars.push(p.type_str.clone());
                vars.len() - 1
            });
        p.var = u16::try_from(var).unwrap_or(u16::MAX);
    }
}

/// Reads the schemas of one operator's lines (`S` lines, each followed by
/// its `I`, `O`, `A`, `T` and `F` lines) into `out`.
fn read_schemas(block: &'static str, out: &mut Vec<OpSchema>) {
    let mut current: Option<OpSchema> = None;
    let mut fields: Vec<&'static str> = Vec::new();
    for line in block.lines() {
        fields.clear();
        fields.extend(line.split(' '));
        match fields.first().copied() {
            Some("S") if fields.len() == 10 => {
                if let Some(mut done) = current.take() {
                    resolve_params(&mut done);
                    out.push(done);
                }
                let num = |i: usize| fields[i].parse::<u32>().unwrap_or(0);
                current = Some(OpSchema {
                    id: 0,
                    domain: token(fields[1]).to_string(),
                    name: token(fields[2]).to_string(),
                    since_version: fields[3].parse().unwrap_or(0),
                    deprecated: fields[4] == "1",
                    min_input: num(5),
                    max_input: num(6),
                    min_output: num(7),
                    max_output: num(8),
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                    attributes: Vec::new(),
                    constraints: Vec::new(),
                    inference: InferenceKind {
                        function: fields[9].contains('i'),
                        body: fields[9].contains('f'),
                        context_body: fields[9].contains('c'),
                    },
                    body: None,
                });
            }
            Some("I") => {
                if let (Some(s), Some(p)) = (current.as_mut(), parse_param(&fields[1..])) {
                    s.inputs.push(p);
                }
            }
            Some("O") => {
                if let (Some(s), Some(p)) = (current.as_mut(), parse_param(&fields[1..])) {
                    s.outputs.push(p);
                }
            }
            Some("A") if fields.len() == 5 => {
                if let Some(s) = current.as_mut() {
                    let name = token(fields[1]);
                    let attr_type = fields[2].parse().unwrap_or(0);
                    s.attributes.push(AttrSpec {
                        name: name.to_string(),
                        attr_type,
                        required: fields[3] == "1",
                        default: parse_default(name, attr_type, fields[4]),
                    });
                }
            }
            Some("T") if fields.len() == 3 => {
                if let Some(s) = current.as_mut() {
                    s.constraints.push(TypeConstraint {
                        name: token(fields[1]).to_string(),
                        allowed: TypeSet::parse(token(fields[2])).unwrap_or_default(),
                    });
                }
            }
            Some("F") if fields.len() == 2 => {
                if let Some(s) = current.as_mut() {
                    s.body =
                        unhex(fields[1]).and_then(|b| FunctionProto::decode(b.as_slice()).ok());
                }
            }
            _ => {}
        }
    }
    if let Some(mut done) = current {
        resolve_params(&mut done);
        out.push(done);
    }
}

impl SchemaRegistry {
    /// Indexes `text`: the domains, and where each operator's lines are
    /// (its schemas are read by [`SchemaRegistry::versions`]).
    fn parse(text: &'static str) -> SchemaRegistry {
        Self::parse_from(text, 0)
    }

    /// [`SchemaRegistry::parse`], its schemas' ids from `first_id` on.
    fn parse_from(text: &'static str, first_id: usize) -> SchemaRegistry {
        let mut reg = SchemaRegistry::default();
        // The operator whose lines are being passed, and where they start.
        let mut open: Option<(usize, usize)> = None;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let start = at;
            at += line.len();
            let line = line.trim_end_matches(['\n', '\r']);
            match line.as_bytes().first() {
                Some(b'#') => {
                    reg.onnx_version = line.split(' ').nth(2).unwrap_or("").to_string();
                }
                Some(b'D') => {
                    let fields: Vec<&str> = line.split(' ').collect();
                    if let [_, domain, lo, hi] = fields[..] {
                        if let (Ok(lo), Ok(hi)) = (lo.parse(), hi.parse()) {
                            reg.domains.insert(token(domain).to_string(), (lo, hi));
                        }
                    }
                }
                // A schema line (read as one only with all ten fields).
                Some(b'S') if line.split(' ').count() == 10 => {
                    let mut fields = line.split(' ');
                    let (Some(domain), Some(name)) = (fields.nth(1), fields.next()) else {
                        continue;
                    };
                    let next = reg.ops.len();
                    let i = *reg
                        .by_op
                        .entry(Name(token(domain)))
                        .or_default()
                        .entry(Name(token(name)))
                        .or_insert(next);
                    if i == next {
                        reg.ops.push(OpEntry::default());
                    }
                    if open.map(|(o, _)| o) != Some(i) {
                        reg.close(open, text, start);
                        open = Some((i, start));
                    }
                    if let Some(op) = reg.ops.get_mut(i) {
                        op.count += 1;
                    }
                }
                _ => {}
            }
        }
        reg.close(open, text, text.len());
        let mut id = first_id;
        for op in &mut reg.ops {
            op.first_id = id;
            id += op.count;
        }
        reg.count = id - first_id;
        reg
    }

    /// Ends the run of lines of operator `open` (its index and where the
    /// run starts) at byte `end` of `text`.
    fn close(&mut self, open: Option<(usize, usize)>, text: &'static str, end: usize) {
        let Some((i, start)) = open else {
            return;
        };
        if let (Some(op), Some(block)) = (self.ops.get_mut(i), text.get(start..end)) {
            op.blocks.push(block);
        }
    }

    /// The versions of operator `op`, read now if they were not yet.
    fn read(op: &OpEntry) -> &[OpSchema] {
        op.versions.get_or_init(|| {
            let mut list = Vec::with_capacity(op.count);
            for block in &op.blocks {
                read_schemas(block, &mut list);
            }
            list.sort_by_key(|s| s.since_version);
            for (k, s) in list.iter_mut().enumerate() {
                s.id = op.first_id + k;
            }
            list
        })
    }

    /// The registry compiled into this build.
    pub fn global() -> &'static SchemaRegistry {
        static REGISTRY: OnceLock<SchemaRegistry> = OnceLock::new();
        REGISTRY.get_or_init(|| SchemaRegistry::parse(DATA))
    }

    /// The schemas of the onnxruntime operators `contrib_ops` infers
    /// (`data/ort_schemas.txt`, from `scripts/gen_ort_schemas.py`): their
    /// nodes are verified against them with that option. Their ids follow
    /// the global registry's, so tables keyed by schema id never confuse
    /// the two.
    pub fn contrib() -> &'static SchemaRegistry {
        static REGISTRY: OnceLock<SchemaRegistry> = OnceLock::new();
        REGISTRY.get_or_init(|| SchemaRegistry::parse_from(ORT_DATA, Self::global().len()))
    }

    /// The schema of `op_type` in `domain` in effect at opset `version`: the
    /// one with the highest since_version ≤ version.
    pub fn get(&self, op_type: &str, version: i64, domain: &str) -> Option<&OpSchema> {
        self.versions(op_type, domain)
            .iter()
            .rev()
            .find(|s| s.since_version <= version)
    }

    /// Every version of `op_type` in `domain`.
    pub fn versions(&self, op_type: &str, domain: &str) -> &[OpSchema] {
        self.by_op
            .get(&Name(domain))
            .and_then(|ops| ops.get(&Name(op_type)).copied())
            .and_then(|i| self.ops.get(i))
            .map_or(&[], Self::read)
    }

    /// Every schema (all read now); the i-th has `id` i (the first id + i
    /// for [`SchemaRegistry::contrib`]).
    pub fn all(&self) -> impl Iterator<Item = &OpSchema> {
        self.ops.iter().flat_map(Self::read)
    }

    /// Number of schemas.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Operator names of a domain (for suggestions).
    pub fn op_names<'a>(&'a self, domain: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.by_op
            .get(&Name(domain))
            .into_iter()
            .flat_map(|ops| ops.keys().map(|k| k.0))
    }

    pub fn is_known_domain(&self, domain: &str) -> bool {
        self.domains.contains_key(domain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_loads_and_resolves_versions() {
        let reg = SchemaRegistry::global();
        assert!(reg.onnx_version.starts_with("1."));
        let conv = reg.get("Conv", 13, "").expect("Conv");
        assert_eq!(conv.since_version, 11);
        assert_eq!((conv.min_input, conv.max_input), (2, 3));
        assert!(reg.get("Conv", 0, "").is_none());
        let relu = reg.get("Relu", 21, "").expect("Relu");
        assert_eq!(relu.since_version, 14);
        assert!(reg.get("LinearRegressor", 1, "ai.onnx.ml").is_some());
        assert!(reg.is_known_domain("ai.onnx.ml"));
        assert_eq!(reg.domains.get(""), Some(&(1, 28)));
        let concat = reg.get("Concat", 21, "").expect("Concat");
        assert_eq!(concat.inputs[0].option, ParamOption::Variadic);
        assert!(reg
            .get("Gemm", 13, "")
            .and_then(|s| s.attribute("transB"))
            .is_some());
    }

    #[test]
    fn operators_read_on_first_use_have_dense_ids() {
        // A fresh registry: nothing read until asked.
        let reg = SchemaRegistry::parse(DATA);
        assert!(reg.ops.iter().all(|op| op.versions.get().is_none()));
        let relu = reg.versions("Relu", "");
        assert!(relu
            .windows(2)
            .all(|w| w[0].since_version < w[1].since_version));
        let read = reg.ops.iter().filter(|op| op.versions.get().is_some());
        assert_eq!(read.count(), 1, "only Relu was read");
        // Every schema once, ids 0..len in order of `all`.
        let ids: Vec<usize> = reg.all().map(|s| s.id).collect();
        assert_eq!(ids, (0..reg.len()).collect::<Vec<_>>());
        let lines = DATA
            .lines()
            .filter(|l| l.starts_with("S ") && l.split(' ').count() == 10)
            .count();
        assert_eq!(reg.len(), lines);
        let mut ops: Vec<(&str, &str)> = DATA
            .lines()
            .filter(|l| l.starts_with("S "))
            .filter_map(|l| Some((l.split(' ').nth(1)?, l.split(' ').nth(2)?)))
            .collect();
        ops.dedup();
        assert_eq!(reg.ops.len(), ops.len(), "one entry an operator");
        let global = SchemaRegistry::global();
        for (a, b) in reg.all().zip(global.all()) {
            assert_eq!(
                (a.id, &a.name, a.since_version),
                (b.id, &b.name, b.since_version)
            );
        }
    }

    #[test]
    fn every_type_constraint_default_and_body_is_read() {
        let reg = SchemaRegistry::global();
        let mut defaults = 0;
        let mut bodies = 0;
        for list in reg.ops.iter().map(SchemaRegistry::read) {
            for s in list {
                for p in s.inputs.iter().chain(&s.outputs) {
                    assert!(!p.allowed.is_empty(), "{} {}", s.display_name(), p.name);
                }
                for c in &s.constraints {
                    assert!(!c.allowed.is_empty(), "{} {}", s.display_name(), c.name);
                }
                defaults += s.attributes.iter().filter(|a| a.default.is_some()).count();
                bodies += usize::from(s.body.is_some());
                assert_eq!(s.body.is_some(), s.inference.body && !s.inference.function);
            }
        }
        let written = DATA
            .lines()
            .filter(|l| l.starts_with("A ") && !l.ends_with(" -"))
            .count();
        assert_eq!(defaults, written);
        assert_eq!(bodies, DATA.lines().filter(|l| l.starts_with("F ")).count());
        assert!(bodies >= 4);

        let conv = reg.get("Conv", 22, "").expect("Conv");
        assert_eq!(conv.inputs[0].type_str, "T");
        assert!(conv.inputs[0].allowed.has_tensor(1));
        assert!(!conv.inputs[0].allowed.has_tensor(7));
        let group = conv.attribute("group").and_then(|a| a.default.as_ref());
        assert_eq!(group.and_then(|a| a.i), Some(1));
        let pad = conv.attribute("auto_pad").and_then(|a| a.default.as_ref());
        assert_eq!(pad.and_then(|a| a.s.as_deref()), Some(&b"NOTSET"[..]));
        let alpha = reg
            .get("LeakyRelu", 16, "")
            .and_then(|s| s.attribute("alpha"))
            .and_then(|a| a.default.as_ref())
            .and_then(|a| a.f);
        assert_eq!(alpha, Some(0.01));
        let shape = reg.get("Reshape", 21, "").expect("Reshape");
        assert_eq!(shape.inputs[1].type_str, "tensor(int64)");
        assert_eq!(
            shape.inputs[1].allowed.single(),
            Some(crate::ir::types::Type::tensor(7, None))
        );
        let mvn = reg.get("MeanVarianceNormalization", 21, "").expect("MVN");
        assert!(mvn.body.as_ref().is_some_and(|b| !b.node.is_empty()));
        let zipmap = reg.get("ZipMap", 1, "ai.onnx.ml").expect("ZipMap");
        assert_eq!(zipmap.outputs[0].allowed.len(), 2);
    }
}
