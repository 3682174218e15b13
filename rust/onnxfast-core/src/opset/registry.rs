//! Operator schemas of onnx (every domain, full version history), loaded from
//! `data/op_schemas.txt`, which `scripts/gen_op_schemas.py` generates from
//! the installed onnx package.

use foldhash::HashMap;
use std::sync::OnceLock;

use crate::names::{same, Name, NameMap};

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
}

#[derive(Debug, Clone)]
pub struct AttrSpec {
    pub name: String,
    /// `AttributeProto.AttributeType` code.
    pub attr_type: i32,
    pub required: bool,
}

/// One version of one operator.
#[derive(Debug, Clone)]
pub struct OpSchema {
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
}

impl OpSchema {
    pub fn attribute(&self, name: &str) -> Option<&AttrSpec> {
        self.attributes.iter().find(|a| same(&a.name, name))
    }
}

/// All schemas, by (domain, op_type), each list sorted by since_version.
#[derive(Debug, Default)]
pub struct SchemaRegistry {
    /// domain → op_type → index in `lists` (keys are slices of the
    /// compiled-in table).
    by_op: NameMap<'static, NameMap<'static, usize>>,
    /// The versions of one operator each.
    lists: Vec<Vec<OpSchema>>,
    /// Opset version range each known domain has.
    pub domains: HashMap<String, (i64, i64)>,
    /// The onnx release the table comes from.
    pub onnx_version: String,
}

const DATA: &str = include_str!("../../data/op_schemas.txt");

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
    })
}

impl SchemaRegistry {
    fn parse(text: &'static str) -> SchemaRegistry {
        let mut reg = SchemaRegistry::default();
        // The schema being read, with its domain and name as keys.
        let mut current: Option<(Name<'static>, Name<'static>, OpSchema)> = None;
        let flush = |reg: &mut SchemaRegistry,
                     s: Option<(Name<'static>, Name<'static>, OpSchema)>| {
            if let Some((domain, name, s)) = s {
                let next = reg.lists.len();
                let i = *reg
                    .by_op
                    .entry(domain)
                    .or_default()
                    .entry(name)
                    .or_insert(next);
                if i == next {
                    reg.lists.push(Vec::new());
                }
                if let Some(list) = reg.lists.get_mut(i) {
                    list.push(s);
                }
            }
        };
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            match fields.first().copied() {
                Some("#") => reg.onnx_version = fields.get(2).copied().unwrap_or("").to_string(),
                Some("D") if fields.len() == 4 => {
                    if let (Ok(lo), Ok(hi)) = (fields[2].parse(), fields[3].parse()) {
                        reg.domains.insert(token(fields[1]).to_string(), (lo, hi));
                    }
                }
                Some("S") if fields.len() == 9 => {
                    flush(&mut reg, current.take());
                    let num = |i: usize| fields[i].parse::<u32>().unwrap_or(0);
                    let (domain, name) = (token(fields[1]), token(fields[2]));
                    current = Some((
                        Name(domain),
                        Name(name),
                        OpSchema {
                            domain: domain.to_string(),
                            name: name.to_string(),
                            since_version: fields[3].parse().unwrap_or(0),
                            deprecated: fields[4] == "1",
                            min_input: num(5),
                            max_input: num(6),
                            min_output: num(7),
                            max_output: num(8),
                            inputs: Vec::new(),
                            outputs: Vec::new(),
                            attributes: Vec::new(),
                        },
                    ));
                }
                Some("I") => {
                    if let (Some((_, _, s)), Some(p)) =
                        (current.as_mut(), parse_param(&fields[1..]))
                    {
                        s.inputs.push(p);
                    }
                }
                Some("O") => {
                    if let (Some((_, _, s)), Some(p)) =
                        (current.as_mut(), parse_param(&fields[1..]))
                    {
                        s.outputs.push(p);
                    }
                }
                Some("A") if fields.len() == 4 => {
                    if let Some((_, _, s)) = current.as_mut() {
                        s.attributes.push(AttrSpec {
                            name: token(fields[1]).to_string(),
                            attr_type: fields[2].parse().unwrap_or(0),
                            required: fields[3] == "1",
                        });
                    }
                }
                _ => {}
            }
        }
        flush(&mut reg, current);
        for list in &mut reg.lists {
            list.sort_by_key(|s| s.since_version);
        }
        reg
    }

    /// The registry compiled into this build.
    pub fn global() -> &'static SchemaRegistry {
        static REGISTRY: OnceLock<SchemaRegistry> = OnceLock::new();
        REGISTRY.get_or_init(|| SchemaRegistry::parse(DATA))
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
            .and_then(|i| self.lists.get(i))
            .map_or(&[], Vec::as_slice)
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
}
