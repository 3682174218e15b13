//! Rules of onnx's `sequence` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
