//! Rules of onnx's `tensor` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
