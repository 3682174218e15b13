//! onnxfast-core: ONNX models without Python.
//!
//! - [`proto`]: prost types of every ONNX message (`proto/onnx.proto`), whose
//!   bytes fields are zero-copy slices of the source buffer.
//! - [`wire`]: a schema-driven, non-allocating scan of the wire format that
//!   locates faults (offset + field path), bounds nesting and projects memory.
//! - [`decode`]: scan, then decode with prost.
//! - [`source`]: memory-mapped or owned file contents.
//! - [`tensor`]: element types, validation, numpy-layout bytes.
//! - [`convert`]: sub-byte unpacking and small-float → f32 / i8 kernels.

pub mod checker;
pub mod decode;
pub mod diag;
pub mod error;
pub mod external;
#[doc(hidden)]
pub mod fuzzing;
pub mod infer;
pub mod ir;
mod names;
pub mod opset;
pub mod proto;
pub mod tensor;

pub use bytes::Bytes;
pub use decode::{decode, DecodeOptions, RootMessage};
pub use error::{DecodeError, DecodeErrorKind, Error, Result, TensorError, TensorErrorKind};
