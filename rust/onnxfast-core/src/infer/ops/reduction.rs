//! Rules of onnx's `reduction` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
