//! Rules of onnx's `controlflow` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
