//! Tensor element types and the bytes of a tensor in numpy's memory layout.
//!
//! [`plan`] validates a `TensorProto` (type, dims, which data field, sizes)
//! without touching its data; [`numpy_bytes`] then produces the array's bytes:
//! a zero-copy slice of the source when the stored bytes already are the
//! array's layout (little-endian `raw_data` of a byte-addressable type), an
//! owned buffer otherwise (typed fields, packed 4-/2-/6-bit types, big-endian
//! hosts). Layout rules follow `onnx.numpy_helper.to_array` of onnx 1.23.

pub mod convert;

use bytes::Bytes;

use crate::error::{TensorError, TensorErrorKind};
use crate::proto::{tensor_proto::DataLocation, TensorProto};

/// The typed field that stores a data type's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    FloatData,
    Int32Data,
    StringData,
    Int64Data,
    DoubleData,
    Uint64Data,
}

impl Storage {
    pub fn field_name(self) -> &'static str {
        match self {
            Storage::FloatData => "float_data",
            Storage::Int32Data => "int32_data",
            Storage::StringData => "string_data",
            Storage::Int64Data => "int64_data",
            Storage::DoubleData => "double_data",
            Storage::Uint64Data => "uint64_data",
        }
    }
}

/// Facts about one `TensorProto.DataType`.
#[derive(Debug)]
pub struct ElemType {
    pub code: i32,
    pub name: &'static str,
    /// Bits one element takes when stored in `raw_data` (0 for STRING).
    pub bits: u32,
    /// Bytes one element takes in numpy (ml_dtypes' sub-byte types take 1).
    pub itemsize: usize,
    pub storage: Storage,
    /// True for floating-point types narrower than 32 bits (the float32
    /// kernel's inputs).
    pub small_float: bool,
    /// True for the packed integer types (int4, uint4, int2, uint2).
    pub packed_int: bool,
}

macro_rules! elem {
    ($code:expr, $name:expr, $bits:expr, $item:expr, $storage:ident, $small_float:expr, $packed_int:expr) => {
        ElemType {
            code: $code,
            name: $name,
            bits: $bits,
            itemsize: $item,
            storage: Storage::$storage,
            small_float: $small_float,
            packed_int: $packed_int,
        }
    };
}

/// Every data type of onnx 1.23, indexed by code - 1.
pub static ELEM_TYPES: [ElemType; 28] = [
    elem!(1, "FLOAT", 32, 4, FloatData, false, false),
    elem!(2, "UINT8", 8, 1, Int32Data, false, false),
    elem!(3, "INT8", 8, 1, Int32Data, false, false),
    elem!(4, "UINT16", 16, 2, Int32Data, false, false),
    elem!(5, "INT16", 16, 2, Int32Data, false, false),
    elem!(6, "INT32", 32, 4, Int32Data, false, false),
    elem!(7, "INT64", 64, 8, Int64Data, false, false),
    elem!(8, "STRING", 0, 0, StringData, false, false),
    elem!(9, "BOOL", 8, 1, Int32Data, false, false),
    elem!(10, "FLOAT16", 16, 2, Int32Data, true, false),
    elem!(11, "DOUBLE", 64, 8, DoubleData, false, false),
    elem!(12, "UINT32", 32, 4, Uint64Data, false, false),
    elem!(13, "UINT64", 64, 8, Uint64Data, false, false),
    elem!(14, "COMPLEX64", 64, 8, FloatData, false, false),
    elem!(15, "COMPLEX128", 128, 16, DoubleData, false, false),
    elem!(16, "BFLOAT16", 16, 2, Int32Data, true, false),
    elem!(17, "FLOAT8E4M3FN", 8, 1, Int32Data, true, false),
    elem!(18, "FLOAT8E4M3FNUZ", 8, 1, Int32Data, true, false),
    elem!(19, "FLOAT8E5M2", 8, 1, Int32Data, true, false),
    elem!(20, "FLOAT8E5M2FNUZ", 8, 1, Int32Data, true, false),
    elem!(21, "UINT4", 4, 1, Int32Data, false, true),
    elem!(22, "INT4", 4, 1, Int32Data, false, true),
    elem!(23, "FLOAT4E2M1", 4, 1, Int32Data, true, false),
    elem!(24, "FLOAT8E8M0", 8, 1, Int32Data, true, false),
    elem!(25, "UINT2", 2, 1, Int32Data, false, true),
    elem!(26, "INT2", 2, 1, Int32Data, false, true),
    elem!(27, "FLOAT6E2M3", 6, 1, Int32Data, true, false),
    elem!(28, "FLOAT6E3M2", 6, 1, Int32Data, true, false),
];

/// The element type of `code`, if onnx 1.23 defines it (UNDEFINED does not count).
pub fn elem_type(code: i32) -> Option<&'static ElemType> {
    let index = usize::try_from(code).ok()?.checked_sub(1)?;
    ELEM_TYPES.get(index)
}

impl ElemType {
    /// True when raw_data holds one whole byte (or more) per element, so it
    /// can be viewed in place.
    pub fn byte_addressable(&self) -> bool {
        self.bits >= 8
    }

    /// Bytes `count` elements take in `raw_data` (packed for sub-byte types).
    pub fn raw_len(&self, count: usize) -> Option<usize> {
        if self.bits >= 8 {
            count.checked_mul((self.bits / 8) as usize)
        } else {
            Some(count.checked_mul(self.bits as usize)?.div_ceil(8))
        }
    }

    /// Entries `count` elements take in their typed field.
    pub fn typed_len(&self, count: usize) -> Option<usize> {
        match self.code {
            // COMPLEX64 / COMPLEX128: real and imaginary parts.
            14 | 15 => count.checked_mul(2),
            // 4-bit types: one int32 entry per packed byte (two elements).
            21..=23 => Some(count.div_ceil(2)),
            // 2-bit types: one entry per packed byte (four elements).
            25 | 26 => Some(count.div_ceil(4)),
            _ => Some(count),
        }
    }
}

/// Where a tensor's elements are.
#[derive(Debug, Clone)]
pub enum Source {
    /// `raw_data` (present, possibly empty).
    Raw(Bytes),
    /// The type's typed field.
    Typed,
    /// An external file (`data_location = EXTERNAL`).
    External,
    /// No data at all (only valid for zero elements).
    Empty,
}

/// A validated tensor: type, shape, element count and data source.
#[derive(Debug, Clone)]
pub struct TensorPlan {
    pub elem: &'static ElemType,
    pub dims: Vec<usize>,
    pub count: usize,
    pub source: Source,
}

impl TensorPlan {
    /// Bytes of the array numpy() returns (count × itemsize).
    pub fn nbytes(&self) -> usize {
        self.count.saturating_mul(self.elem.itemsize)
    }
}

fn err(t: &TensorProto, kind: TensorErrorKind) -> TensorError {
    TensorError {
        tensor: t.name().to_string(),
        kind,
    }
}

/// Number of entries in the typed field of `storage`.
fn typed_entries(t: &TensorProto, storage: Storage) -> usize {
    match storage {
        Storage::FloatData => t.float_data.len(),
        Storage::Int32Data => t.int32_data.len(),
        Storage::StringData => t.string_data.len(),
        Storage::Int64Data => t.int64_data.len(),
        Storage::DoubleData => t.double_data.len(),
        Storage::Uint64Data => t.uint64_data.len(),
    }
}

/// Validates `t` without reading its data.
pub fn plan(t: &TensorProto) -> Result<TensorPlan, TensorError> {
    let code = t.data_type();
    if code == 0 {
        return Err(err(t, TensorErrorKind::UndefinedType));
    }
    let elem = elem_type(code).ok_or_else(|| err(t, TensorErrorKind::UnknownType { code }))?;
    if t.segment.is_some() {
        return Err(err(t, TensorErrorKind::Segmented));
    }
    let mut dims = Vec::with_capacity(t.dims.len());
    let mut count: usize = 1;
    for (index, &d) in t.dims.iter().enumerate() {
        let d = usize::try_from(d)
            .map_err(|_| err(t, TensorErrorKind::NegativeDim { index, value: d }))?;
        count = count.checked_mul(d).ok_or_else(|| {
            err(
                t,
                TensorErrorKind::CountOverflow {
                    dims: t.dims.clone(),
                },
            )
        })?;
        dims.push(d);
    }

    // Which data fields are present.
    let mut present: Vec<&'static str> = Vec::new();
    if t.raw_data.is_some() {
        present.push("raw_data");
    }
    for (storage, len) in [
        (Storage::FloatData, t.float_data.len()),
        (Storage::Int32Data, t.int32_data.len()),
        (Storage::StringData, t.string_data.len()),
        (Storage::Int64Data, t.int64_data.len()),
        (Storage::DoubleData, t.double_data.len()),
        (Storage::Uint64Data, t.uint64_data.len()),
    ] {
        if len > 0 {
            present.push(storage.field_name());
        }
    }
    let external = t.data_location() == DataLocation::External;
    if external {
        present.push("external_data");
    }
    if present.len() > 1 {
        return Err(err(
            t,
            TensorErrorKind::MultipleDataFields { fields: present },
        ));
    }

    let raw_len = elem.raw_len(count).ok_or_else(|| {
        err(
            t,
            TensorErrorKind::CountOverflow {
                dims: t.dims.clone(),
            },
        )
    })?;
    let source = if let Some(raw) = &t.raw_data {
        if elem.storage == Storage::StringData {
            return Err(err(t, TensorErrorKind::StringInRaw));
        }
        if raw.len() != raw_len {
            return Err(err(
                t,
                TensorErrorKind::SizeMismatch {
                    field: "raw_data",
                    got: raw.len(),
                    expected: raw_len,
                    unit: "bytes",
                },
            ));
        }
        Source::Raw(raw.clone())
    } else if external {
        Source::External
    } else {
        let got = typed_entries(t, elem.storage);
        let field = elem.storage.field_name();
        if got == 0 {
            if let Some(wrong) = present.first() {
                return Err(err(
                    t,
                    TensorErrorKind::WrongField {
                        field: wrong,
                        expected: field,
                    },
                ));
            }
            if count > 0 {
                return Err(err(t, TensorErrorKind::NoData { expected: count }));
            }
            Source::Empty
        } else {
            let expected = elem.typed_len(count).unwrap_or(usize::MAX);
            if got != expected {
                return Err(err(
                    t,
                    TensorErrorKind::SizeMismatch {
                        field,
                        got,
                        expected,
                        unit: "entries",
                    },
                ));
            }
            Source::Typed
        }
    };
    Ok(TensorPlan {
        elem,
        dims,
        count,
        source,
    })
}

/// An owned, zero-initialised, 8-byte-aligned byte buffer (so numpy arrays
/// made from it are aligned for every element type).
///
/// Large buffers are anonymous maps advised to use transparent huge pages:
/// filling a 2 GB array then takes ~1,000 page faults instead of ~500,000,
/// which is most of the cost of a conversion on a virtual machine.
#[derive(Debug)]
pub struct AlignedBuf {
    storage: BufStorage,
    len: usize,
}

#[derive(Debug)]
enum BufStorage {
    Heap(Vec<u64>),
    Map(memmap2::MmapMut),
}

/// Buffers at least this large are mapped rather than heap-allocated.
const MAP_THRESHOLD: usize = 4 << 20;

impl Default for AlignedBuf {
    fn default() -> Self {
        AlignedBuf::zeroed(0)
    }
}

impl AlignedBuf {
    /// A zero-filled buffer of `len` bytes.
    pub fn zeroed(len: usize) -> Self {
        if len >= MAP_THRESHOLD {
            if let Ok(map) = memmap2::MmapMut::map_anon(len) {
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                return AlignedBuf {
                    storage: BufStorage::Map(map),
                    len,
                };
            }
        }
        AlignedBuf {
            storage: BufStorage::Heap(vec![0u64; len.div_ceil(8)]),
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn base(&self) -> *const u8 {
        match &self.storage {
            BufStorage::Heap(words) => words.as_ptr().cast::<u8>(),
            BufStorage::Map(map) => map.as_ptr(),
        }
    }

    /// Raw pointer to the first byte, for handing the buffer to numpy.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match &mut self.storage {
            BufStorage::Heap(words) => words.as_mut_ptr().cast::<u8>(),
            BufStorage::Map(map) => map.as_mut_ptr(),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: the storage holds at least `len` initialised (zeroed or
        // written) bytes; u8 has alignment 1 and no invalid bit patterns.
        unsafe { std::slice::from_raw_parts(self.base(), self.len) }
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        // SAFETY: as in `as_bytes`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), len) }
    }

    /// The buffer viewed as `f32`s (length `len / 4`).
    pub fn as_f32_mut(&mut self) -> &mut [f32] {
        let n = self.len / 4;
        let ptr = self.as_mut_ptr().cast::<f32>();
        debug_assert!(ptr.is_aligned());
        // SAFETY: heap storage is 8-byte aligned, maps are page aligned; the
        // bytes are initialised and every bit pattern is a valid f32; the
        // length is rounded down; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(ptr, n) }
    }
}

/// The bytes of a tensor's array in numpy's layout.
#[derive(Debug)]
pub enum NumpyBytes {
    /// A zero-copy slice of the source (a memory map or the caller's bytes).
    View(Bytes),
    /// A buffer made for the array (the data had to be unpacked or converted).
    Owned(AlignedBuf),
}

impl NumpyBytes {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            NumpyBytes::View(b) => b,
            NumpyBytes::Owned(b) => b.as_bytes(),
        }
    }
}

/// Element bytes in numpy layout for `plan`. `raw` is the stored data for
/// raw and external sources (the tensor's raw_data, or the external bytes).
pub fn numpy_bytes(
    t: &TensorProto,
    plan: &TensorPlan,
    raw: Option<&Bytes>,
) -> Result<NumpyBytes, TensorError> {
    let elem = plan.elem;
    if elem.storage == Storage::StringData {
        return Err(err(t, TensorErrorKind::StringNotBytes));
    }
    match (&plan.source, raw) {
        (Source::Raw(_) | Source::External, Some(raw)) => {
            let expected = elem.raw_len(plan.count).unwrap_or(usize::MAX);
            if raw.len() != expected {
                return Err(err(
                    t,
                    TensorErrorKind::SizeMismatch {
                        field: "external data",
                        got: raw.len(),
                        expected,
                        unit: "bytes",
                    },
                ));
            }
            if elem.byte_addressable() {
                if cfg!(target_endian = "big") && elem.bits > 8 {
                    let mut out = AlignedBuf::zeroed(raw.len());
                    out.as_bytes_mut().copy_from_slice(raw);
                    byteswap_in_place(out.as_bytes_mut(), swap_width(elem));
                    return Ok(NumpyBytes::Owned(out));
                }
                return Ok(NumpyBytes::View(raw.clone()));
            }
            let mut out = AlignedBuf::zeroed(plan.count);
            crate::tensor::convert::unpack_bits(elem, raw, out.as_bytes_mut());
            Ok(NumpyBytes::Owned(out))
        }
        (Source::Raw(raw), None) => numpy_bytes(t, plan, Some(raw)),
        (Source::External, None) => Err(err(t, TensorErrorKind::ExternalNotLoaded)),
        (Source::Empty, _) => Ok(NumpyBytes::Owned(AlignedBuf::zeroed(0))),
        (Source::Typed, _) => Ok(NumpyBytes::Owned(typed_bytes(t, plan))),
    }
}

/// Width of the units to byte-swap on big-endian hosts (complex: each part).
fn swap_width(elem: &ElemType) -> usize {
    match elem.code {
        14 => 4,
        15 => 8,
        _ => (elem.bits / 8) as usize,
    }
}

fn byteswap_in_place(bytes: &mut [u8], width: usize) {
    if width > 1 {
        for chunk in bytes.chunks_exact_mut(width) {
            chunk.reverse();
        }
    }
}

/// Builds numpy-layout bytes from the typed field, as onnx's to_array does:
/// integer fields are truncated to the element width (two's complement).
fn typed_bytes(t: &TensorProto, plan: &TensorPlan) -> AlignedBuf {
    let elem = plan.elem;
    let mut out = AlignedBuf::zeroed(plan.nbytes());
    let buf = out.as_bytes_mut();
    match elem.code {
        // float_data
        1 | 14 => {
            for (dst, v) in buf.chunks_exact_mut(4).zip(&t.float_data) {
                dst.copy_from_slice(&v.to_ne_bytes());
            }
        }
        // double_data
        11 | 15 => {
            for (dst, v) in buf.chunks_exact_mut(8).zip(&t.double_data) {
                dst.copy_from_slice(&v.to_ne_bytes());
            }
        }
        7 => {
            for (dst, v) in buf.chunks_exact_mut(8).zip(&t.int64_data) {
                dst.copy_from_slice(&v.to_ne_bytes());
            }
        }
        12 => {
            for (dst, v) in buf.chunks_exact_mut(4).zip(&t.uint64_data) {
                dst.copy_from_slice(&(*v as u32).to_ne_bytes());
            }
        }
        13 => {
            for (dst, v) in buf.chunks_exact_mut(8).zip(&t.uint64_data) {
                dst.copy_from_slice(&v.to_ne_bytes());
            }
        }
        6 => {
            for (dst, v) in buf.chunks_exact_mut(4).zip(&t.int32_data) {
                dst.copy_from_slice(&v.to_ne_bytes());
            }
        }
        // 16-bit types: the low 16 bits of each entry.
        4 | 5 | 10 | 16 => {
            for (dst, v) in buf.chunks_exact_mut(2).zip(&t.int32_data) {
                dst.copy_from_slice(&(*v as u16).to_ne_bytes());
            }
        }
        // 6-bit floats: one element per entry, low 6 bits.
        27 | 28 => {
            for (dst, v) in buf.iter_mut().zip(&t.int32_data) {
                *dst = (*v as u8) & 0x3f;
            }
        }
        // 4- and 2-bit types: each entry holds one packed byte.
        21..=23 | 25 | 26 => {
            let packed: Vec<u8> = t.int32_data.iter().map(|v| *v as u8).collect();
            crate::tensor::convert::unpack_bits(elem, &packed, buf);
        }
        // 8-bit types (ints, bool, float8): the low 8 bits.
        _ => {
            for (dst, v) in buf.iter_mut().zip(&t.int32_data) {
                *dst = *v as u8;
            }
        }
    }
    out
}

/// The elements of a STRING tensor (raw bytes; onnx decodes them as UTF-8).
pub fn string_elements<'a>(
    t: &'a TensorProto,
    plan: &TensorPlan,
) -> Result<&'a [Bytes], TensorError> {
    if plan.elem.storage != Storage::StringData {
        return Err(err(t, TensorErrorKind::NotString));
    }
    Ok(&t.string_data)
}
