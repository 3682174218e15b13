//! onnxfast-core: ONNX models without Python. The modules read as the
//! pipeline, each using only those above it:
//!
//! - [`proto`]: prost types of every ONNX message (`proto/onnx.proto`), whose
//!   bytes fields are zero-copy slices of the source buffer; the generated
//!   schema tables (field numbers, wire types, containers, presence).
//! - [`decode`](mod@decode): the source (map or bytes), the scan (framing, nesting,
//!   UTF-8, memory projection, budget), the walk it shares with diagnose
//!   (offset + field path of a fault), the span index, eager decoding and
//!   decode on touch ([`decode::lazy`]).
//! - [`tensor`]: element types, validation, numpy-layout bytes, conversion
//!   kernels.
//! - [`external`]: external data: location rules, sandboxed open, file store.
//! - [`ir`], [`opset`], [`diag`]: the graph view, the op-schema registry,
//!   diagnostics.
//! - [`checker`] and [`infer`]: onnx's checker and type/shape inference.

pub mod checker;
pub mod decode;
pub mod diag;
pub mod encode;
pub mod error;
pub mod external;
#[doc(hidden)]
pub mod fuzzing;
pub mod infer;
pub mod ir;
pub mod names;
pub mod opset;
pub mod proto;
pub mod tensor;

pub use bytes::Bytes;
pub use decode::{decode, DecodeOptions, RootMessage};
pub use error::{DecodeError, DecodeErrorKind, Error, Result, TensorError, TensorErrorKind};
