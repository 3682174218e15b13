//! Rules of onnx's `optional` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
