//! Rules of onnx's `text` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
