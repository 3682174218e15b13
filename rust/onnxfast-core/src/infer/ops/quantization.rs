//! Rules of onnx's `quantization` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
