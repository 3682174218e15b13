//! Rules of onnx's `rnn` family.

use super::Entry;

pub const OPS: &[Entry] = &[];
