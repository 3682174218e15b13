//! Tensors and sparse tensors, as onnx checks them (onnx 1.23.2).

use crate::diag::codes;
use std::path::{Component, Path, PathBuf};

use super::graph::item;
use super::{q, Checker, Quoted};
use crate::decode::lazy::TensorSketch;
use crate::diag::{Location, Step};
use crate::proto::{
    tensor_proto::DataLocation, SparseTensorProto, StringStringEntryProto, TensorProto,
};

/// What onnx's check of a tensor (and the policy's count of it) reads: a
/// decoded tensor, or an initializer of a decode-on-touch list sketched
/// from its bytes ([`TensorSketch`]: the initializer is then not decoded).
pub(crate) trait TensorFacts {
    fn name(&self) -> &str;
    fn data_type(&self) -> Option<i32>;
    fn dims(&self) -> &[i64];
    fn raw_data(&self) -> Option<&[u8]>;
    /// Values of float_data, int32_data, string_data, int64_data,
    /// double_data and uint64_data.
    fn counts(&self) -> [usize; 6];
    fn data_location(&self) -> Option<i32>;
    /// The external data entries (a sketch is never of an external tensor).
    fn external_data(&self) -> &[StringStringEntryProto];
    /// int32_data's values (read for FLOAT6 tensors only, which are never
    /// sketched).
    fn int32_data(&self) -> &[i32];

    fn is_external(&self) -> bool {
        // An unknown enum value counts as absent (proto2 closed enum).
        self.data_location() == Some(DataLocation::External as i32)
    }
}

impl TensorFacts for TensorProto {
    fn name(&self) -> &str {
        TensorProto::name(self)
    }
    fn data_type(&self) -> Option<i32> {
        self.data_type
    }
    fn dims(&self) -> &[i64] {
        &self.dims
    }
    fn raw_data(&self) -> Option<&[u8]> {
        self.raw_data.as_deref()
    }
    fn counts(&self) -> [usize; 6] {
        [
            self.float_data.len(),
            self.int32_data.len(),
            self.string_data.len(),
            self.int64_data.len(),
            self.double_data.len(),
            self.uint64_data.len(),
        ]
    }
    fn data_location(&self) -> Option<i32> {
        self.data_location
    }
    fn external_data(&self) -> &[StringStringEntryProto] {
        &self.external_data
    }
    fn int32_data(&self) -> &[i32] {
        &self.int32_data
    }
}

impl TensorFacts for TensorSketch<'_> {
    fn name(&self) -> &str {
        self.header.name
    }
    fn data_type(&self) -> Option<i32> {
        self.header.data_type
    }
    fn dims(&self) -> &[i64] {
        &self.header.dims
    }
    fn raw_data(&self) -> Option<&[u8]> {
        self.raw_data
    }
    fn counts(&self) -> [usize; 6] {
        self.counts
    }
    fn data_location(&self) -> Option<i32> {
        self.data_location
    }
    fn external_data(&self) -> &[StringStringEntryProto] {
        &[]
    }
    fn int32_data(&self) -> &[i32] {
        &[]
    }
}

/// Data fields in onnx's counting order.
fn data_fields<T: TensorFacts + ?Sized>(t: &T) -> [(&'static str, bool); 7] {
    let [floats, int32s, strings, int64s, doubles, uint64s] = t.counts();
    [
        ("float_data", floats > 0),
        ("int32_data", int32s > 0),
        ("string_data", strings > 0),
        ("int64_data", int64s > 0),
        ("raw_data", t.raw_data().is_some_and(|r| !r.is_empty())),
        ("double_data", doubles > 0),
        ("uint64_data", uint64s > 0),
    ]
}

/// onnx's check_tensor. Returns whether the tensor passed (sparse checks
/// skip their index checks after a failure, as onnx would have stopped).
pub(crate) fn check_tensor(
    c: &mut Checker<'_>,
    t: &TensorProto,
    loc: &dyn Fn() -> Location,
) -> bool {
    let before = c.counts.total();
    check_tensor_inner(c, t, loc);
    if c.options.strict {
        let passed = c.counts.total() == before;
        super::strict::check_tensor(c, t, &loc(), passed);
    }
    c.counts.total() == before
}

/// [`check_tensor`] of a tensor as [`TensorFacts`] (a sketch), outside
/// strict mode (whose checks read the whole message).
pub(crate) fn check_tensor_facts<T: TensorFacts + ?Sized>(
    c: &mut Checker<'_>,
    t: &T,
    loc: &dyn Fn() -> Location,
) -> bool {
    debug_assert!(!c.options.strict, "strict checks read the whole tensor");
    let before = c.counts.total();
    check_tensor_inner(c, t, loc);
    c.counts.total() == before
}

fn check_tensor_inner<T: TensorFacts + ?Sized>(
    c: &mut Checker<'_>,
    t: &T,
    loc: &dyn Fn() -> Location,
) {
    let name = Quoted(t.name());
    let Some(dt) = t.data_type() else {
        c.emit(
            codes::NO_DATA_TYPE,
            &loc(),
            format!("tensor {name} has no data_type"),
        );
        return;
    };
    if dt == 0 {
        c.emit(
            codes::UNDEFINED_DATA_TYPE,
            &loc(),
            format!("tensor {name} has data_type UNDEFINED (0)"),
        );
        return;
    }
    let fields = data_fields(t);
    let count = fields.iter().filter(|(_, set)| *set).count();
    let value_field = fields
        .iter()
        .rev()
        .find(|(_, set)| *set)
        .map_or("", |(f, _)| *f);
    if t.is_external() {
        if count > 0 {
            c.emit(
                codes::EXTERNAL_AND_INLINE,
                &loc(),
                format!("tensor {name} is stored externally but also has data in {value_field}"),
            );
            return;
        }
        let mut found = false;
        for e in t.external_data() {
            if e.key.is_some() && e.value.is_some() && e.key() == "location" {
                found = true;
                if let Err(rule) = resolve_location(c.options.model_dir.as_deref(), e.value()) {
                    c.emit(
                        codes::BAD_EXTERNAL_LOCATION,
                        &loc(),
                        format!(
                            "tensor {name}: external data location {}: {rule}",
                            q(e.value())
                        ),
                    );
                    return;
                }
            }
        }
        if !found {
            c.emit(
                codes::NO_EXTERNAL_LOCATION,
                &loc(),
                format!("tensor {name} is stored externally but has no location"),
            );
        }
        return;
    }
    let mut nelem: i64 = 1;
    for &d in t.dims() {
        if d < 0 {
            c.emit(
                codes::NEGATIVE_DIM,
                &loc(),
                format!("tensor {name} has a negative dimension ({d})"),
            );
            return;
        }
        match nelem.checked_mul(d) {
            Some(v) => nelem = v,
            None => {
                c.emit(
                    codes::DIMS_OVERFLOW,
                    &loc(),
                    format!("the product of tensor {name}'s dims overflows 64 bits"),
                );
                return;
            }
        }
    }
    if nelem == 0 && count > 0 {
        c.emit(
            codes::DATA_IN_EMPTY_TENSOR,
            &loc(),
            format!("tensor {name} has no elements but holds data in {value_field}"),
        );
        return;
    }
    if nelem != 0 && count != 1 {
        let what = if count == 0 {
            "no data field".to_string()
        } else {
            let set: Vec<&str> = fields.iter().filter(|(_, s)| *s).map(|(f, _)| *f).collect();
            format!("{count} data fields ({})", set.join(", "))
        };
        c.emit(
            codes::NOT_ONE_DATA_FIELD,
            &loc(),
            format!("tensor {name} must hold its data in exactly one field, it has {what}"),
        );
        return;
    }
    let too_large =
        || format!("tensor {name} has a shape too large to validate against its data type");
    if fields[4].1 {
        let raw = t.raw_data().map_or(0, |r| r.len()) as i64;
        if dt == 8 {
            c.emit(
                codes::STRING_RAW_DATA,
                &loc(),
                format!("STRING tensor {name} stores its data in raw_data"),
            );
            return;
        }
        let expected = match dt {
            21..=23 => Some((nelem + 1) / 2),
            25 | 26 => Some((nelem + 3) / 4),
            27 | 28 => {
                let Some(bits) = nelem.checked_mul(6) else {
                    c.emit(codes::RAW_DATA_TOO_SMALL, &loc(), too_large());
                    return;
                };
                let expected = (bits + 7) / 8;
                if expected > 0 && raw >= expected && bits % 8 != 0 {
                    let last = t
                        .raw_data()
                        .and_then(|r| r.get((expected - 1) as usize))
                        .copied()
                        .unwrap_or(0);
                    let mask = (0xffu32 << (bits % 8)) as u8;
                    if last & mask != 0 {
                        c.emit(codes::FLOAT6_PADDING, &loc(), format!("tensor {name} has non-zero padding bits in its packed FLOAT6 raw_data"));
                        return;
                    }
                }
                Some(expected)
            }
            2 | 3 | 9 | 17..=20 | 24 => Some(nelem),
            4 | 5 | 10 | 16 => nelem.checked_mul(2).or_else(|| {
                c.emit(codes::RAW_DATA_TOO_SMALL, &loc(), too_large());
                None
            }),
            1 | 6 | 12 => nelem.checked_mul(4).or_else(|| {
                c.emit(codes::RAW_DATA_TOO_SMALL, &loc(), too_large());
                None
            }),
            7 | 11 | 13 | 14 => nelem.checked_mul(8).or_else(|| {
                c.emit(codes::RAW_DATA_TOO_SMALL, &loc(), too_large());
                None
            }),
            15 => nelem.checked_mul(16).or_else(|| {
                c.emit(codes::RAW_DATA_TOO_SMALL, &loc(), too_large());
                None
            }),
            _ => return, // unknown data types are not size-checked by onnx
        };
        let Some(expected) = expected else {
            return;
        };
        if raw < expected {
            c.emit(
                codes::RAW_DATA_TOO_SMALL,
                &loc(),
                format!("tensor {name}: raw_data has {raw} bytes, too few for its dims and data type ({expected} required)"),
            );
        }
        return;
    }
    let (required, min, unit): (&'static str, i64, &str) = match dt {
        1 => ("float_data", nelem, "float"),
        14 => ("float_data", nelem.saturating_mul(2), "float"),
        11 => ("double_data", nelem, "double"),
        15 => ("double_data", nelem.saturating_mul(2), "double"),
        6 | 2..=5 | 9 | 10 | 16..=20 | 24 | 27 | 28 => ("int32_data", nelem, "int32"),
        21..=23 => ("int32_data", (nelem + 7) / 8, "packed int32"),
        25 | 26 => ("int32_data", (nelem + 15) / 16, "packed int32"),
        7 => ("int64_data", nelem, "int64"),
        12 | 13 => ("uint64_data", nelem, "uint64"),
        8 => ("string_data", nelem, "string"),
        _ => {
            c.emit(
                codes::UNKNOWN_DATA_TYPE_DATA,
                &loc(),
                format!("tensor {name} has an unknown data_type {dt}"),
            );
            return;
        }
    };
    let [floats, int32s, strings, int64s, doubles, uint64s] = t.counts();
    let have = match required {
        "float_data" => floats,
        "double_data" => doubles,
        "int32_data" => int32s,
        "int64_data" => int64s,
        "uint64_data" => uint64s,
        _ => strings,
    } as i64;
    if nelem != 0 && have == 0 {
        c.emit(
            codes::WRONG_DATA_FIELD,
            &loc(),
            format!("tensor {name}: data_type {dt} stores its values in {required}, not in {value_field}"),
        );
        return;
    }
    if nelem > 0 && have < min {
        c.emit(
            codes::TYPED_DATA_TOO_SHORT,
            &loc(),
            format!("tensor {name}: {required} has {have} values, too few for its dims ({min} {unit} values required)"),
        );
        return;
    }
    if nelem > 0 && matches!(dt, 27 | 28) && t.int32_data().iter().any(|v| !(0..=63).contains(v)) {
        c.emit(
            codes::FLOAT6_VALUE_BITS,
            &loc(),
            format!("tensor {name}: FLOAT6 int32_data values must use only bits 0-5"),
        );
    }
}

/// onnx's resolve_external_data_location (checked even without full_check).
/// `model_dir`: the model's folder, `None` for the current directory.
pub(crate) fn resolve_location(model_dir: Option<&Path>, location: &str) -> Result<(), String> {
    if location.is_empty() {
        return Err("the location is empty".into());
    }
    if Path::new(location).is_absolute() {
        return Err("the location is an absolute path".into());
    }
    let normal = lexically_normal(location);
    if normal.to_string_lossy().contains("..") {
        return Err("the location points outside the model's folder ('..')".into());
    }
    let base = model_dir.map(Path::to_path_buf).unwrap_or_default();
    let data_path = if base.as_os_str().is_empty() {
        normal.clone()
    } else {
        base.join(&normal)
    };
    match std::fs::symlink_metadata(&data_path) {
        Ok(m) if m.file_type().is_symlink() => return Err("the file is a symbolic link".into()),
        _ => {}
    }
    if base.as_os_str().is_empty() && data_path.to_string_lossy().starts_with('#') {
        return Ok(());
    }
    if !base.as_os_str().is_empty() {
        if let (Ok(canon_base), Ok(canon_data)) = (base.canonicalize(), data_path.canonicalize()) {
            if !canon_data.starts_with(&canon_base) || canon_data == canon_base {
                return Err("the file resolves outside the model's folder".into());
            }
        }
    }
    let meta = match std::fs::metadata(&data_path) {
        Ok(m) if m.is_file() => m,
        Ok(_) => return Err("the location is not a regular file".into()),
        Err(_) => return Err("the file does not exist (or is not a regular file)".into()),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err("the file has more than one hard link".into());
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    Ok(())
}

/// `std::filesystem::path::lexically_normal` for relative paths.
fn lexically_normal(location: &str) -> PathBuf {
    let mut parts: Vec<String> = Vec::new();
    for comp in Path::new(location).components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.last().is_some_and(|p| p != "..") {
                    parts.pop();
                } else {
                    parts.push("..".into());
                }
            }
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    if parts.is_empty() {
        return PathBuf::from(".");
    }
    parts.iter().collect()
}

/// onnx's check_sparse_tensor.
pub(crate) fn check_sparse(c: &mut Checker<'_>, s: &SparseTensorProto, loc: &dyn Fn() -> Location) {
    let Some(values) = &s.values else {
        c.emit(
            codes::SPARSE_NO_VALUES,
            &loc(),
            "the sparse tensor has no values".into(),
        );
        return;
    };
    let vloc = loc().child(Step::Field("values"));
    super::policy::tensor(c, &**values, true, &|| vloc.clone());
    if let Some(indices) = &s.indices {
        let iloc = || loc().child(Step::Field("indices"));
        super::policy::tensor(c, &**indices, false, &iloc);
    }
    if !check_tensor(c, values, &|| vloc.clone()) {
        return;
    }
    let vname = q(values.name());
    if values.dims.len() != 1 {
        c.emit(
            codes::SPARSE_VALUES_RANK,
            &vloc,
            format!(
                "sparse tensor values {vname} must have rank 1, not {}",
                values.dims.len()
            ),
        );
        return;
    }
    let nnz = values.dims[0];
    if s.dims.is_empty() {
        c.emit(
            codes::SPARSE_NO_DIMS,
            &loc(),
            format!("sparse tensor {vname} has no dims (dense rank must be > 0)"),
        );
        return;
    }
    if s.dims.iter().any(|&d| d <= 0) {
        c.emit(
            codes::SPARSE_DIM_NOT_POSITIVE,
            &loc(),
            format!("sparse tensor {vname} has a dimension that is not positive"),
        );
        return;
    }
    let Some(indices) = &s.indices else {
        if nnz != 0 {
            c.emit(
                codes::SPARSE_NO_INDICES,
                &loc(),
                format!("sparse tensor {vname} has {nnz} values but no indices"),
            );
        }
        return;
    };
    let iloc = loc().child(Step::Field("indices"));
    if !check_tensor(c, indices, &|| iloc.clone()) {
        return;
    }
    let iname = q(indices.name());
    if indices.data_type() != 7 {
        c.emit(
            codes::SPARSE_INDICES_TYPE,
            &iloc,
            format!("sparse tensor indices {iname} must be INT64"),
        );
        return;
    }
    let rank = s.dims.len();
    match indices.dims.len() {
        1 => {
            if indices.dims[0] != nnz {
                c.emit(
                    codes::SPARSE_INDICES_SHAPE,
                    &iloc,
                    format!(
                        "sparse tensor indices {iname} has {} values, but NNZ is {nnz}",
                        indices.dims[0]
                    ),
                );
                return;
            }
            let Some(idx) = index_data(c, indices, &iloc) else {
                return;
            };
            let dense: i64 = s.dims.iter().fold(1i64, |a, &d| a.wrapping_mul(d));
            let mut prev = -1i64;
            for (i, &v) in idx
                .iter()
                .enumerate()
                .take(usize::try_from(nnz).unwrap_or(0))
            {
                if v < 0 || v >= dense {
                    c.emit(
                        codes::SPARSE_INDEX_RANGE,
                        &iloc.child(item("index", i, "")),
                        format!(
                            "sparse index {v} at position {i} is out of range [0, {}]",
                            dense - 1
                        ),
                    );
                    return;
                }
                if v <= prev {
                    c.emit(
                        codes::SPARSE_INDICES_ORDER,
                        &iloc.child(item("index", i, "")),
                        format!("sparse index at position {i} is not in sorted order"),
                    );
                    return;
                }
                prev = v;
            }
        }
        2 => {
            if indices.dims[0] != nnz {
                c.emit(
                    codes::SPARSE_INDICES_SHAPE,
                    &iloc,
                    format!("sparse tensor indices {iname}: first dimension is not NNZ ({nnz})"),
                );
                return;
            }
            if indices.dims[1] != rank as i64 {
                c.emit(
                    codes::SPARSE_INDICES_SHAPE,
                    &iloc,
                    format!("sparse tensor indices {iname}: second dimension is not the tensor's rank ({rank})"),
                );
                return;
            }
            let Some(idx) = index_data(c, indices, &iloc) else {
                return;
            };
            let mut prev = -1i64;
            for i in 0..usize::try_from(nnz).unwrap_or(0) {
                let mut linear = 0i64;
                for (j, &dim) in s.dims.iter().enumerate() {
                    let v = idx.get(i * rank + j).copied().unwrap_or(-1);
                    if v < 0 || v >= dim {
                        c.emit(
                            codes::SPARSE_INDEX_RANGE,
                            &iloc.child(item("index", i, "")),
                            format!("sparse index value at position [{i},{j}] is out of range"),
                        );
                        return;
                    }
                    linear = linear.wrapping_mul(dim).wrapping_add(v);
                }
                if linear <= prev {
                    c.emit(
                        codes::SPARSE_INDICES_ORDER,
                        &iloc.child(item("index", i, "")),
                        format!(
                            "sparse index at position {i} is not in lexicographic sorted order"
                        ),
                    );
                    return;
                }
                prev = linear;
            }
        }
        r => c.emit(
            codes::SPARSE_INDICES_SHAPE,
            &iloc,
            format!("sparse tensor indices {iname} must have rank 1 or 2, not {r}"),
        ),
    }
}

/// onnx's ParseData<int64_t> for sparse indices.
fn index_data(c: &mut Checker<'_>, t: &TensorProto, loc: &Location) -> Option<Vec<i64>> {
    let name = q(t.name());
    if TensorFacts::is_external(t) {
        c.emit(
            codes::SPARSE_INDICES_UNREADABLE,
            loc,
            format!("sparse indices {name} are stored externally (onnx cannot parse them)"),
        );
        return None;
    }
    let nelem: i64 = t.dims.iter().fold(1i64, |a, &d| a.saturating_mul(d));
    if let Some(raw) = &t.raw_data {
        if (raw.len() / 8) < usize::try_from(nelem).unwrap_or(usize::MAX) {
            c.emit(
                codes::SPARSE_INDICES_UNREADABLE,
                loc,
                format!(
                    "sparse indices {name}: raw_data has {} bytes for {nelem} int64 elements",
                    raw.len()
                ),
            );
            return None;
        }
        return Some(
            raw.chunks_exact(8)
                .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
        );
    }
    if t.int64_data.len() as i64 != nelem {
        c.emit(
            codes::SPARSE_INDICES_UNREADABLE,
            loc,
            format!(
                "sparse indices {name}: int64_data has {} elements, dims need exactly {nelem}",
                t.int64_data.len()
            ),
        );
        return None;
    }
    Some(t.int64_data.clone())
}
