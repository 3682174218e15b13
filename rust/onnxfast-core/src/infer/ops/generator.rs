//! Rules of onnx's `generator` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
