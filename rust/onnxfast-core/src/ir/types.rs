//! Types of values, as the inference engine and the op-schema registry see
//! them: the `TypeProto` of the IR spec without its protobuf baggage.
//!
//! A tensor type has an element type (a `TensorProto.DataType` code, 0 when
//! unknown) and maybe a shape; a shape's dims are a value, a symbol or
//! unknown. Symbols are interned in a [`Symbols`] table per run, so a dim is
//! 16 bytes and comparing two symbols compares two integers. Symbols the
//! model names (`dim_param`) and fresh ones the engine makes for unknown
//! output dims (onnx names those `unk__N`) live in the same table.

use std::fmt;

use compact_str::CompactString;
use foldhash::HashMap;
use smallvec::SmallVec;

use crate::proto::{tensor_shape_proto, type_proto, TensorShapeProto, TypeProto};

/// Largest rank the engine represents. onnx has no limit; a shape is a
/// list in the file, so a hostile model can declare millions of dims. Ranks
/// above this are treated as unknown shapes (see docs/checks.md).
pub const MAX_RANK: usize = 4096;

/// An interned symbol (a symbolic dim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(u32);

/// One dimension of a shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// `dim_value` (may be negative in a declared type; onnx keeps it).
    Value(i64),
    /// `dim_param`, or a fresh symbol of the engine.
    Sym(Sym),
    /// Neither.
    Unknown,
}

impl Dim {
    pub fn value(self) -> Option<i64> {
        match self {
            Dim::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_known(self) -> bool {
        !matches!(self, Dim::Unknown)
    }
}

impl From<i64> for Dim {
    fn from(v: i64) -> Dim {
        Dim::Value(v)
    }
}

/// The dims of a shape (four kept inline).
pub type Dims = SmallVec<[Dim; 4]>;

/// A tensor (or sparse tensor) type: element type and optional shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TensorType {
    /// `TensorProto.DataType` code; 0 (UNDEFINED) when not known.
    pub elem: i32,
    /// `None`: the rank is not known.
    pub shape: Option<Dims>,
}

impl TensorType {
    pub fn new(elem: i32, shape: Option<Dims>) -> TensorType {
        TensorType { elem, shape }
    }

    pub fn rank(&self) -> Option<usize> {
        self.shape.as_ref().map(|s| s.len())
    }
}

/// The type of a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Tensor(TensorType),
    SparseTensor(TensorType),
    /// `seq(T)`; `None` when the element type is not set.
    Sequence(Option<Box<Type>>),
    /// `optional(T)`.
    Optional(Option<Box<Type>>),
    /// `map(K, V)`: key element type and value type.
    Map(i32, Option<Box<Type>>),
    /// `opaque(domain, name)`.
    Opaque {
        domain: Option<CompactString>,
        name: Option<CompactString>,
    },
}

impl Type {
    pub fn tensor(elem: i32, shape: Option<Dims>) -> Type {
        Type::Tensor(TensorType::new(elem, shape))
    }

    /// A tensor of known element type and dims.
    pub fn tensor_of(elem: i32, dims: &[i64]) -> Type {
        Type::tensor(elem, Some(dims.iter().map(|&d| Dim::Value(d)).collect()))
    }

    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_tensor_mut(&mut self) -> Option<&mut TensorType> {
        match self {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The value case's name, as onnx's messages spell it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Type::Tensor(_) => "tensor_type",
            Type::SparseTensor(_) => "sparse_tensor_type",
            Type::Sequence(_) => "sequence_type",
            Type::Optional(_) => "optional_type",
            Type::Map(..) => "map_type",
            Type::Opaque { .. } => "opaque_type",
        }
    }

    /// Same type for a type constraint: equal apart from shapes (onnx
    /// compares `DataTypeUtils::ToType` strings, which have no shapes).
    pub fn same_kind(&self, other: &Type) -> bool {
        fn inner(a: &Option<Box<Type>>, b: &Option<Box<Type>>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => a.same_kind(b),
                (None, None) => true,
                _ => false,
            }
        }
        match (self, other) {
            (Type::Tensor(a), Type::Tensor(b)) | (Type::SparseTensor(a), Type::SparseTensor(b)) => {
                a.elem == b.elem
            }
            (Type::Sequence(a), Type::Sequence(b)) | (Type::Optional(a), Type::Optional(b)) => {
                inner(a, b)
            }
            (Type::Map(ka, va), Type::Map(kb, vb)) => ka == kb && inner(va, vb),
            (
                Type::Opaque {
                    domain: da,
                    name: na,
                },
                Type::Opaque {
                    domain: db,
                    name: nb,
                },
            ) => {
                da.as_deref().unwrap_or("") == db.as_deref().unwrap_or("")
                    && na.as_deref().unwrap_or("") == nb.as_deref().unwrap_or("")
            }
            _ => false,
        }
    }

    /// onnx's type string without shapes (`tensor(float)`,
    /// `seq(tensor(int64))`, `map(int64,tensor(float))`), or the reason it
    /// has none: an element type onnx does not know (0, or a code it does
    /// not define) or a container whose element type is not set.
    pub fn type_str(&self) -> Result<String, TypeStrError> {
        let mut out = String::new();
        self.write_type_str(&mut out)?;
        Ok(out)
    }

    fn write_type_str(&self, out: &mut String) -> Result<(), TypeStrError> {
        fn inner(t: &Option<Box<Type>>, out: &mut String) -> Result<(), TypeStrError> {
            match t {
                Some(t) => t.write_type_str(out),
                None => Err(TypeStrError::NoElemType),
            }
        }
        match self {
            Type::Tensor(t) => {
                out.push_str("tensor(");
                out.push_str(elem_name(t.elem).ok_or(TypeStrError::BadElem(t.elem))?);
                out.push(')');
            }
            Type::SparseTensor(t) => {
                out.push_str("sparse_tensor(");
                out.push_str(elem_name(t.elem).ok_or(TypeStrError::BadElem(t.elem))?);
                out.push(')');
            }
            Type::Sequence(e) => {
                out.push_str("seq(");
                inner(e, out)?;
                out.push(')');
            }
            Type::Optional(e) => {
                out.push_str("optional(");
                inner(e, out)?;
                out.push(')');
            }
            Type::Map(k, v) => {
                out.push_str("map(");
                out.push_str(elem_name(*k).ok_or(TypeStrError::BadElem(*k))?);
                out.push(',');
                inner(v, out)?;
                out.push(')');
            }
            Type::Opaque { domain, name } => {
                out.push_str("opaque(");
                if let Some(d) = domain.as_deref().filter(|d| !d.is_empty()) {
                    out.push_str(d);
                    out.push(',');
                }
                out.push_str(name.as_deref().unwrap_or(""));
                out.push(')');
            }
        }
        Ok(())
    }
}

/// Why a type has no onnx type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeStrError {
    /// An element type code onnx does not define (or 0, UNDEFINED).
    BadElem(i32),
    /// A sequence, optional or map without its element type.
    NoElemType,
}

impl fmt::Display for TypeStrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeStrError::BadElem(0) => write!(f, "its element type is UNDEFINED (0)"),
            TypeStrError::BadElem(c) => write!(f, "its element type {c} is not an ONNX data type"),
            TypeStrError::NoElemType => write!(f, "a container in it has no element type"),
        }
    }
}

/// onnx's lower-case name of an element type (`float`, `int64`,
/// `float8e4m3fn`), as in type strings.
pub fn elem_name(code: i32) -> Option<&'static str> {
    const NAMES: [&str; 28] = [
        "float",
        "uint8",
        "int8",
        "uint16",
        "int16",
        "int32",
        "int64",
        "string",
        "bool",
        "float16",
        "double",
        "uint32",
        "uint64",
        "complex64",
        "complex128",
        "bfloat16",
        "float8e4m3fn",
        "float8e4m3fnuz",
        "float8e5m2",
        "float8e5m2fnuz",
        "uint4",
        "int4",
        "float4e2m1",
        "float8e8m0",
        "uint2",
        "int2",
        "float6e2m3",
        "float6e3m2",
    ];
    let index = usize::try_from(code).ok()?.checked_sub(1)?;
    NAMES.get(index).copied()
}

/// The element type code of a lower-case name.
pub fn elem_code(name: &str) -> Option<i32> {
    (1..=28).find(|&c| elem_name(c) == Some(name))
}

/// Interned symbols of one run: the model's `dim_param`s and fresh ones.
#[derive(Debug, Default, Clone)]
pub struct Symbols {
    /// Name of each symbol; `None` for a fresh one.
    names: Vec<Option<CompactString>>,
    by_name: HashMap<CompactString, Sym>,
    /// Expression symbols (`InferOptions::symbolic`): what each stands for,
    /// and each expression's symbol.
    /// (expression, nesting depth of its floor divisions).
    exprs: HashMap<Sym, (super::symbolic::SymExpr, u8)>,
    by_expr: HashMap<super::symbolic::SymExpr, Sym>,
    /// Read a declared negative dim value (Paddle2ONNX's -1 for a dynamic
    /// dim) as unknown, not as the value onnx carries on
    /// (`InferOptions::symbolic`: dims that are the runtime's).
    pub negative_dims_unknown: bool,
}

/// More symbols than this in one run are not created: dims that would need
/// one stay unknown (a hostile model cannot grow the table without bound).
pub const MAX_SYMBOLS: usize = 1 << 24;

impl Symbols {
    /// The symbol named `name`.
    pub fn intern(&mut self, name: &str) -> Dim {
        if let Some(&s) = self.by_name.get(name) {
            return Dim::Sym(s);
        }
        if self.names.len() >= MAX_SYMBOLS {
            return Dim::Unknown;
        }
        let s = Sym(self.names.len() as u32);
        self.names.push(Some(CompactString::from(name)));
        self.by_name.insert(CompactString::from(name), s);
        Dim::Sym(s)
    }

    /// A symbol different from every other.
    pub fn fresh(&mut self) -> Dim {
        if self.names.len() >= MAX_SYMBOLS {
            return Dim::Unknown;
        }
        let s = Sym(self.names.len() as u32);
        self.names.push(None);
        Dim::Sym(s)
    }

    /// The symbol standing for an expression (the same one each time).
    pub fn intern_expr(&mut self, e: super::symbolic::SymExpr) -> Option<Sym> {
        if let Some(&s) = self.by_expr.get(&e) {
            return Some(s);
        }
        if self.names.len() >= MAX_SYMBOLS {
            return None;
        }
        let depth = self.nesting(&e)?;
        let s = Sym(self.names.len() as u32);
        self.names.push(None);
        self.exprs.insert(s, (e.clone(), depth));
        self.by_expr.insert(e, s);
        Some(s)
    }

    /// What an expression symbol stands for (`None` for the model's symbols
    /// and fresh ones).
    pub fn expr(&self, s: Sym) -> Option<&super::symbolic::SymExpr> {
        if self.exprs.is_empty() {
            return None;
        }
        self.exprs.get(&s).map(|(e, _)| e)
    }

    /// How deep `e` nests floor divisions, mins and maxes; `None` past
    /// [`super::symbolic::MAX_NESTING`] (rendering and comparing stay
    /// shallow on hostile chains of pooling).
    fn nesting(&self, e: &super::symbolic::SymExpr) -> Option<u8> {
        use super::symbolic::SymExpr;
        let (p, q, own) = match e {
            SymExpr::Poly(p) => (p, None, 0),
            SymExpr::FloorDiv(p, _) => (p, None, 1),
            SymExpr::FloorDivBy(p, q) | SymExpr::Min(p, q) | SymExpr::Max(p, q) => (p, Some(q), 1),
        };
        let inner = p
            .atoms()
            .chain(q.into_iter().flat_map(|q| q.atoms()))
            .filter_map(|a| self.exprs.get(&a).map(|(_, d)| *d))
            .max()
            .unwrap_or(0);
        let depth = inner.checked_add(own)?;
        (usize::from(depth) <= super::symbolic::MAX_NESTING).then_some(depth)
    }

    /// The text of a dim's symbol: the model's name, an expression (fresh
    /// symbols in it named by `fresh`), or `None` for a fresh symbol.
    pub fn text(&self, s: Sym, fresh: &mut dyn FnMut(Sym) -> String) -> Option<String> {
        if let Some(n) = self.name(s) {
            return Some(n.to_string());
        }
        self.render_expr(s, &mut |a| match self.name(a) {
            Some(n) => n.to_string(),
            None => fresh(a),
        })
    }

    /// The model's name of `s`, or `None` for a fresh symbol.
    pub fn name(&self, s: Sym) -> Option<&str> {
        self.names.get(s.0 as usize).and_then(|n| n.as_deref())
    }

    /// Index of a symbol, for display of fresh ones (`unk__N`-like).
    pub fn index(s: Sym) -> u32 {
        s.0
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The engine's view of a `TypeProto`; `None` when no value case is set.
    /// Shapes of rank above [`MAX_RANK`] are kept as unknown.
    pub fn type_from_proto(&mut self, t: &TypeProto) -> Option<Type> {
        self.type_from_proto_depth(t, 0)
    }

    fn type_from_proto_depth(&mut self, t: &TypeProto, depth: usize) -> Option<Type> {
        // Decoding bounds nesting (100 levels); this guards direct callers.
        if depth > 128 {
            return None;
        }
        let inner = |s: &mut Symbols, e: &Option<Box<TypeProto>>| {
            e.as_deref()
                .and_then(|e| s.type_from_proto_depth(e, depth + 1))
                .map(Box::new)
        };
        Some(match t.value.as_ref()? {
            type_proto::Value::TensorType(x) => Type::Tensor(TensorType {
                elem: x.elem_type.unwrap_or(0),
                shape: x.shape.as_ref().and_then(|s| self.shape_from_proto(s)),
            }),
            type_proto::Value::SparseTensorType(x) => Type::SparseTensor(TensorType {
                elem: x.elem_type.unwrap_or(0),
                shape: x.shape.as_ref().and_then(|s| self.shape_from_proto(s)),
            }),
            type_proto::Value::SequenceType(x) => Type::Sequence(inner(self, &x.elem_type)),
            type_proto::Value::OptionalType(x) => Type::Optional(inner(self, &x.elem_type)),
            type_proto::Value::MapType(x) => {
                Type::Map(x.key_type.unwrap_or(0), inner(self, &x.value_type))
            }
            type_proto::Value::OpaqueType(x) => Type::Opaque {
                domain: x.domain.as_deref().map(CompactString::from),
                name: x.name.as_deref().map(CompactString::from),
            },
        })
    }

    /// The dims of a shape, or `None` above [`MAX_RANK`].
    pub fn shape_from_proto(&mut self, s: &TensorShapeProto) -> Option<Dims> {
        if s.dim.len() > MAX_RANK {
            return None;
        }
        Some(
            s.dim
                .iter()
                .map(|d| match &d.value {
                    Some(tensor_shape_proto::dimension::Value::DimValue(v)) => {
                        if *v < 0 && self.negative_dims_unknown {
                            Dim::Unknown
                        } else {
                            Dim::Value(*v)
                        }
                    }
                    Some(tensor_shape_proto::dimension::Value::DimParam(p)) => self.intern(p),
                    None => Dim::Unknown,
                })
                .collect(),
        )
    }

    /// Formats a type for a message: `tensor(float)[N,3,?]`, `seq(tensor(int64)[?])`.
    pub fn show(&self, t: &Type) -> String {
        let mut out = String::new();
        self.write(t, &mut out);
        out
    }

    /// Formats a shape: `[N,3,?]`.
    pub fn show_dims(&self, dims: &[Dim]) -> String {
        let mut out = String::new();
        self.write_dims(dims, &mut out);
        out
    }

    fn write_dims(&self, dims: &[Dim], out: &mut String) {
        use fmt::Write as _;
        out.push('[');
        for (i, d) in dims.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if i == 32 && dims.len() > 40 {
                let _ = write!(out, "… {} more", dims.len() - 32);
                break;
            }
            match d {
                Dim::Value(v) => {
                    let _ = write!(out, "{v}");
                }
                Dim::Sym(s) => match self.text(*s, &mut |_| "?".to_string()) {
                    Some(n) => out.push_str(&crate::diag::clean(&n)),
                    None => out.push('?'),
                },
                Dim::Unknown => out.push('?'),
            }
        }
        out.push(']');
    }

    fn write(&self, t: &Type, out: &mut String) {
        use fmt::Write as _;
        let elem = |code: i32| match elem_name(code) {
            Some(n) => n.to_string(),
            None if code == 0 => "undefined".to_string(),
            None => format!("<{code}>"),
        };
        let inner = |s: &Symbols, e: &Option<Box<Type>>, out: &mut String| match e {
            Some(e) => s.write(e, out),
            None => out.push('?'),
        };
        match t {
            Type::Tensor(x) | Type::SparseTensor(x) => {
                let kind = if matches!(t, Type::Tensor(_)) {
                    "tensor"
                } else {
                    "sparse_tensor"
                };
                let _ = write!(out, "{kind}({})", elem(x.elem));
                if let Some(dims) = &x.shape {
                    self.write_dims(dims, out);
                }
            }
            Type::Sequence(e) => {
                out.push_str("seq(");
                inner(self, e, out);
                out.push(')');
            }
            Type::Optional(e) => {
                out.push_str("optional(");
                inner(self, e, out);
                out.push(')');
            }
            Type::Map(k, v) => {
                let _ = write!(out, "map({},", elem(*k));
                inner(self, v, out);
                out.push(')');
            }
            Type::Opaque { domain, name } => {
                let _ = write!(
                    out,
                    "opaque({},{})",
                    crate::diag::clean(domain.as_deref().unwrap_or("")),
                    crate::diag::clean(name.as_deref().unwrap_or(""))
                );
            }
        }
    }
}

/// A parsed canonical type string (`tensor(float)`, `seq(tensor(int64))`,
/// `map(int64,tensor(float))`, `optional(seq(tensor(uint8)))`), as the
/// op-schema table writes them. Shapes are never part of it.
pub fn parse_type_str(s: &str) -> Option<Type> {
    fn strip<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
        s.strip_prefix(prefix)?.strip_prefix('(')?.strip_suffix(')')
    }
    if let Some(inner) = strip(s, "seq") {
        return Some(Type::Sequence(Some(Box::new(parse_type_str(inner)?))));
    }
    if let Some(inner) = strip(s, "optional") {
        return Some(Type::Optional(Some(Box::new(parse_type_str(inner)?))));
    }
    if let Some(inner) = strip(s, "map") {
        let (k, v) = inner.split_once(',')?;
        return Some(Type::Map(elem_code(k)?, Some(Box::new(parse_type_str(v)?))));
    }
    if let Some(inner) = strip(s, "sparse_tensor") {
        return Some(Type::SparseTensor(TensorType::new(elem_code(inner)?, None)));
    }
    if let Some(inner) = strip(s, "tensor") {
        return Some(Type::tensor(elem_code(inner)?, None));
    }
    None
}

/// Converts the engine's dims back to a `TensorShapeProto` (fresh symbols
/// are named by `fresh_name`).
pub fn shape_to_proto(
    dims: &[Dim],
    symbols: &Symbols,
    fresh_name: &mut dyn FnMut(Sym) -> String,
) -> TensorShapeProto {
    use tensor_shape_proto::{dimension::Value, Dimension};
    TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                denotation: None,
                value: match d {
                    Dim::Value(v) => Some(Value::DimValue(*v)),
                    Dim::Sym(s) => Some(Value::DimParam(
                        match symbols.text(*s, &mut |a| fresh_name(a)) {
                            Some(n) => n,
                            None => fresh_name(*s),
                        },
                    )),
                    Dim::Unknown => None,
                },
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_strings_round_trip() {
        for s in [
            "tensor(float)",
            "tensor(float6e3m2)",
            "sparse_tensor(int64)",
            "seq(tensor(uint8))",
            "optional(seq(tensor(bool)))",
            "map(int64,tensor(float))",
            "seq(map(string,tensor(float)))",
        ] {
            let t = parse_type_str(s).expect(s);
            assert_eq!(t.type_str().as_deref(), Ok(s));
        }
        assert!(parse_type_str("tensor(float").is_none());
        assert!(parse_type_str("tensor(float128)").is_none());
        assert_eq!(
            Type::tensor(0, None).type_str(),
            Err(TypeStrError::BadElem(0))
        );
        assert_eq!(
            Type::Sequence(None).type_str(),
            Err(TypeStrError::NoElemType)
        );
    }

    #[test]
    fn symbols_intern_and_show() {
        let mut s = Symbols::default();
        let n = s.intern("N");
        assert_eq!(s.intern("N"), n);
        let f = s.fresh();
        assert_ne!(f, s.fresh());
        let t = Type::tensor(
            1,
            Some([n, Dim::Value(3), f, Dim::Unknown].into_iter().collect()),
        );
        assert_eq!(s.show(&t), "tensor(float)[N,3,?,?]");
        assert!(t.same_kind(&Type::tensor(1, None)));
        assert!(!t.same_kind(&Type::tensor(7, None)));
    }
}
