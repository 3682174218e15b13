//! Operator rules, one file per family (as onnx's `onnx/defs/<family>/`),
//! gathered in one static table keyed by (domain, operator, range of
//! schema versions). [`rule`] finds a schema's rule by the schema's index,
//! so the hot path does no string lookup beyond the schema's own.
//!
//! A rule is a short function of the node's context: it reads input types,
//! attributes (with the schema's defaults) and constant inputs, and sets
//! output types or returns a defect. Rules follow what onnx 1.23 infers and
//! refuses, operator by operator; where a rule is silent on something, the
//! schema's type constraints still apply ([`super::typecheck`]).

use std::sync::OnceLock;

use foldhash::HashMap;

use super::context::{InferResult, NodeCtx};
use crate::opset::{OpSchema, SchemaRegistry};

pub mod contrib;
pub mod contrib_extra;
pub mod controlflow;
pub mod generator;
pub mod image;
pub mod logical;
pub mod math;
pub mod nn;
pub mod object_detection;
pub mod optional;
pub mod quantization;
pub mod reduction;
pub mod rnn;
pub mod sequence;
pub mod tensor;
pub mod text;
pub mod traditionalml;
pub mod training;

/// An operator's inference rule.
pub type Rule = fn(&mut NodeCtx<'_, '_>) -> InferResult;

/// One row of the table: `rule` serves the schemas of `op` in `domain`
/// whose since_version is in `from..=to`.
#[derive(Clone, Copy)]
pub struct Entry {
    pub domain: &'static str,
    pub op: &'static str,
    pub from: i64,
    pub to: i64,
    pub rule: Rule,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}::{} {}..={}",
            self.domain, self.op, self.from, self.to
        )
    }
}

/// A row for the default domain (`ai.onnx`).
pub const fn onnx(op: &'static str, from: i64, to: i64, rule: Rule) -> Entry {
    Entry {
        domain: "",
        op,
        from,
        to,
        rule,
    }
}

/// A row for `ai.onnx.ml`.
pub const fn ml(op: &'static str, from: i64, to: i64, rule: Rule) -> Entry {
    Entry {
        domain: "ai.onnx.ml",
        op,
        from,
        to,
        rule,
    }
}

/// Every family's rows.
const FAMILIES: &[&[Entry]] = &[
    math::OPS,
    nn::OPS,
    tensor::OPS,
    reduction::OPS,
    logical::OPS,
    controlflow::OPS,
    sequence::OPS,
    optional::OPS,
    quantization::OPS,
    rnn::OPS,
    generator::OPS,
    image::OPS,
    object_detection::OPS,
    text::OPS,
    traditionalml::OPS,
    training::OPS,
];

/// Every row of every family.
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// The rows of each operator, by (domain, op_type).
fn rows_by_op() -> &'static HashMap<(&'static str, &'static str), Vec<&'static Entry>> {
    static ROWS: OnceLock<HashMap<(&'static str, &'static str), Vec<&'static Entry>>> =
        OnceLock::new();
    ROWS.get_or_init(|| {
        let mut by_op: HashMap<(&'static str, &'static str), Vec<&'static Entry>> =
            HashMap::default();
        for e in entries() {
            by_op.entry((e.domain, e.op)).or_default().push(e);
        }
        by_op
    })
}

/// The rule of each schema, by schema id, found on the first call for it
/// (the registry reads an operator's schemas on first use too).
fn table() -> &'static [OnceLock<Option<Rule>>] {
    static TABLE: OnceLock<Vec<OnceLock<Option<Rule>>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..SchemaRegistry::global().len())
            .map(|_| OnceLock::new())
            .collect()
    })
}

/// The rule for a schema, if the engine has one.
pub fn rule(schema: &OpSchema) -> Option<Rule> {
    let slot = table().get(schema.id)?;
    *slot.get_or_init(|| {
        let rows = rows_by_op().get(&(schema.domain.as_str(), schema.name.as_str()))?;
        // The last row serving the version (a test asserts there is one).
        rows.iter()
            .rev()
            .find(|e| (e.from..=e.to).contains(&schema.since_version))
            .map(|e| e.rule)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every schema onnx infers with a function of its own has a rule here.
    #[test]
    fn missing_rules() {
        let reg = SchemaRegistry::global();
        let missing: Vec<String> = reg
            .all()
            .filter(|s| s.inference.function && rule(s).is_none())
            .map(|s| format!("{}::{}-{}", s.domain, s.name, s.since_version))
            .collect();
        eprintln!(
            "{} schemas without a rule:\n{}",
            missing.len(),
            missing.join("\n")
        );
        assert!(missing.is_empty());
    }

    /// Table rows name schemas that exist, and no two rows serve one schema.
    #[test]
    fn rows_match_schemas_once() {
        let reg = SchemaRegistry::global();
        let mut served = vec![0u32; reg.len()];
        for e in entries() {
            let versions = reg.versions(e.op, e.domain);
            let hits: Vec<&OpSchema> = versions
                .iter()
                .filter(|s| (e.from..=e.to).contains(&s.since_version))
                .collect();
            assert!(!hits.is_empty(), "{e:?} serves no schema");
            for s in hits {
                served[s.id] += 1;
            }
        }
        assert!(served.iter().all(|&n| n <= 1), "a schema has two rules");
    }
}
