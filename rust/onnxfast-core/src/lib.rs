//! onnxfast-core: ONNX models without Python.
//!
//! - [`proto`]: prost types of every ONNX message (`proto/onnx.proto`), whose
//!   bytes fields are zero-copy slices of the source buffer.
//! - [`wire`]: a schema-driven, non-allocating scan of the wire format that
//!   locates faults (offset + field path), bounds nesting and projects memory.
//! - [`decode`]: scan, then decode with prost.
//! - [`source`]: memory-mapped or owned file contents.

pub mod decode;
pub mod error;
pub mod proto;
pub mod schema;
pub mod source;
pub mod wire;

pub use bytes::Bytes;
pub use decode::{decode, DecodeOptions, RootMessage};
pub use error::{DecodeError, DecodeErrorKind, Error, Result};
