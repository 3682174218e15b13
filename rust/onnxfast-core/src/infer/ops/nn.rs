//! Rules of onnx's `nn` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
