//! A non-allocating walk over the protobuf wire format, driven by the schema
//! table of `onnx.proto`.
//!
//! The scanner runs before prost decodes anything. It
//! - proves the buffer is well-formed (so prost's own checks are a backstop),
//!   and when it is not, reports the byte offset and the field path
//!   (`graph.node[41].attribute[2].t.raw_data`) of the first fault;
//! - bounds message nesting, iteratively (no recursion on input depth);
//! - counts what the decoder will allocate (messages per type, string bytes,
//!   repeated scalars), so a caller can refuse a memory bomb before
//!   allocating anything.
//!
//! It never touches the bytes of `bytes` fields (tensor `raw_data`): scanning
//! a memory-mapped multi-gigabyte model reads only its small fields.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::schema::{FieldSchema, Kind, MessageSchema, MAX_FIELDS, MESSAGES};

/// Protobuf's own default recursion limit, also onnx's (C++ protobuf).
pub const DEFAULT_MAX_DEPTH: usize = 100;

/// Largest field number protobuf allows.
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// What the scan counted: enough to project the decoded size.
#[derive(Debug, Clone)]
pub struct ScanStats {
    /// Messages of each type (indexed like [`MESSAGES`]), the root included.
    pub messages: Vec<u64>,
    /// Elements of repeated fields (messages, strings, bytes and scalars).
    pub repeated_elements: u64,
    /// Bytes of string fields (copied into Rust `String`s).
    pub string_bytes: u64,
    /// Deepest nesting seen (the root is depth 0).
    pub max_depth: usize,
}

/// One open message on the scanner's stack.
struct Frame {
    msg: usize,
    /// Offset one past the message's last byte.
    end: usize,
    /// Index, in the parent's schema, of the field holding this message.
    parent_field: usize,
    /// Position of this message among the parent's values of that field.
    elem_index: u32,
    /// Occurrences so far of each of this message's fields.
    counts: [u32; MAX_FIELDS],
}

struct Scanner<'a> {
    buf: &'a [u8],
    pos: usize,
    stack: Vec<Frame>,
    max_depth: usize,
    stats: ScanStats,
    /// Set while reading a field's payload: (field index, element index).
    current: Option<(usize, u32)>,
}

/// Walks `buf` as a message of type `root` (an index into [`MESSAGES`]).
pub fn scan(buf: &[u8], root: usize, max_depth: usize) -> Result<ScanStats, DecodeError> {
    let mut scanner = Scanner {
        buf,
        pos: 0,
        stack: Vec::with_capacity(16),
        max_depth,
        stats: ScanStats {
            messages: vec![0; MESSAGES.len()],
            repeated_elements: 0,
            string_bytes: 0,
            max_depth: 0,
        },
        current: None,
    };
    if let Some(slot) = scanner.stats.messages.get_mut(root) {
        *slot += 1;
    }
    scanner.stack.push(Frame {
        msg: root,
        end: buf.len(),
        parent_field: 0,
        elem_index: 0,
        counts: [0; MAX_FIELDS],
    });
    match scanner.run() {
        Ok(()) => Ok(scanner.stats),
        Err((offset, kind)) => Err(scanner.error(offset, kind, root)),
    }
}

type Fault = (usize, DecodeErrorKind);

impl Scanner<'_> {
    fn frame(&self) -> &Frame {
        // The stack is never empty while `run` loops.
        let last = self.stack.len().saturating_sub(1);
        &self.stack[last]
    }

    fn schema(&self) -> &'static MessageSchema {
        &MESSAGES[self.frame().msg]
    }

    fn in_buffer(&self) -> bool {
        self.stack.len() <= 1
    }

    fn truncated(&self, what: &'static str, at: usize) -> Fault {
        (
            at,
            DecodeErrorKind::Truncated {
                what,
                end: self.frame().end as u64,
                in_buffer: self.in_buffer(),
            },
        )
    }

    #[inline]
    fn varint(&mut self, what: &'static str) -> Result<u64, Fault> {
        let start = self.pos;
        let end = self.frame().end;
        let mut value: u64 = 0;
        for i in 0..10 {
            let at = start + i;
            if at >= end {
                return Err(self.truncated(what, start));
            }
            let byte = self.buf[at];
            if i == 9 && byte > 1 {
                return Err((start, DecodeErrorKind::VarintOverflow));
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                self.pos = at + 1;
                return Ok(value);
            }
        }
        Err((start, DecodeErrorKind::VarintOverflow))
    }

    /// Reads a length prefix and returns the payload's [start, end).
    #[inline]
    fn length(&mut self) -> Result<(usize, usize), Fault> {
        let at = self.pos;
        let len = self.varint("length")?;
        let end = self.frame().end;
        let room = (end - self.pos) as u64;
        if len > room {
            return Err((
                at,
                DecodeErrorKind::LengthPastEnd {
                    length: len,
                    end: end as u64,
                    in_buffer: self.in_buffer(),
                },
            ));
        }
        let start = self.pos;
        // `len <= room`, so this fits in usize and stays inside the frame.
        let stop = start + len as usize;
        Ok((start, stop))
    }

    fn skip_fixed(&mut self, width: usize, what: &'static str) -> Result<(), Fault> {
        let end = self.frame().end;
        if end - self.pos < width {
            return Err(self.truncated(what, self.pos));
        }
        self.pos += width;
        Ok(())
    }

    fn run(&mut self) -> Result<(), Fault> {
        loop {
            let end = self.frame().end;
            if self.pos >= end {
                if self.stack.len() == 1 {
                    return Ok(());
                }
                self.stack.pop();
                continue;
            }
            self.current = None;
            let key_at = self.pos;
            let key = self.varint("field tag")?;
            let number = key >> 3;
            let wire_type = (key & 7) as u8;
            if number == 0 || number > MAX_FIELD_NUMBER {
                return Err((key_at, DecodeErrorKind::InvalidFieldNumber { number }));
            }
            let schema = self.schema();
            match schema.field(number) {
                None => self.skip_unknown(number, wire_type, key_at)?,
                Some((index, field)) => {
                    let frame_idx = self.stack.len() - 1;
                    let count = self.stack[frame_idx].counts[index];
                    self.stack[frame_idx].counts[index] = count.saturating_add(1);
                    self.current = Some((index, count));
                    if field.repeated {
                        self.stats.repeated_elements += 1;
                    }
                    self.field(field, index, count, wire_type, key_at)?;
                }
            }
        }
    }

    fn expect_wire(&self, field: &FieldSchema, wire_type: u8, expected: u8, at: usize) -> Result<(), Fault> {
        if wire_type == expected {
            return Ok(());
        }
        let expected_name = match expected {
            0 => "a varint",
            1 => "a 64-bit value",
            2 => "a length-delimited value",
            _ => "a 32-bit value",
        };
        let expected_name = if field.repeated && field.kind.is_scalar_numeric() {
            match expected {
                0 => "a varint or a packed list",
                1 => "a 64-bit value or a packed list",
                _ => "a 32-bit value or a packed list",
            }
        } else {
            expected_name
        };
        Err((
            at,
            DecodeErrorKind::WrongWireType {
                wire_type,
                expected: expected_name,
            },
        ))
    }

    fn field(&mut self, field: &FieldSchema, index: usize, count: u32, wire_type: u8, key_at: usize) -> Result<(), Fault> {
        let packed = field.repeated && wire_type == 2 && field.kind.is_scalar_numeric();
        match field.kind {
            Kind::Message(id) => {
                self.expect_wire(field, wire_type, 2, key_at)?;
                let (start, stop) = self.length()?;
                let depth = self.stack.len();
                if depth > self.max_depth {
                    return Err((key_at, DecodeErrorKind::TooDeep { limit: self.max_depth }));
                }
                self.stats.max_depth = self.stats.max_depth.max(depth);
                if let Some(slot) = self.stats.messages.get_mut(id) {
                    *slot += 1;
                }
                self.pos = start;
                self.stack.push(Frame {
                    msg: id,
                    end: stop,
                    parent_field: index,
                    elem_index: count,
                    counts: [0; MAX_FIELDS],
                });
            }
            Kind::String => {
                self.expect_wire(field, wire_type, 2, key_at)?;
                let (start, stop) = self.length()?;
                if let Err(e) = std::str::from_utf8(&self.buf[start..stop]) {
                    return Err((
                        start,
                        DecodeErrorKind::InvalidUtf8 {
                            valid_up_to: e.valid_up_to(),
                        },
                    ));
                }
                self.stats.string_bytes += (stop - start) as u64;
                self.pos = stop;
            }
            Kind::Bytes => {
                self.expect_wire(field, wire_type, 2, key_at)?;
                let (_, stop) = self.length()?;
                self.pos = stop;
            }
            Kind::Int32 | Kind::Int64 | Kind::Uint64 | Kind::Enum => {
                if packed {
                    let (start, stop) = self.length()?;
                    self.packed_varints(start, stop)?;
                } else {
                    self.expect_wire(field, wire_type, 0, key_at)?;
                    self.varint("varint")?;
                }
            }
            Kind::Float | Kind::Double => {
                let width = field.kind.fixed_width().unwrap_or(4);
                if packed {
                    let at = self.pos;
                    let (start, stop) = self.length()?;
                    let len = stop - start;
                    if len % width != 0 {
                        return Err((
                            at,
                            DecodeErrorKind::PackedLength {
                                length: len as u64,
                                width,
                            },
                        ));
                    }
                    self.stats.repeated_elements += (len / width) as u64;
                    self.pos = stop;
                } else {
                    let wire = if width == 4 { 5 } else { 1 };
                    self.expect_wire(field, wire_type, wire, key_at)?;
                    self.skip_fixed(width, if width == 4 { "32-bit value" } else { "64-bit value" })?;
                }
            }
        }
        Ok(())
    }

    /// Checks that [start, stop) is a whole number of well-formed varints.
    fn packed_varints(&mut self, start: usize, stop: usize) -> Result<(), Fault> {
        let mut at = start;
        let mut elements = 0u64;
        while at < stop {
            let begin = at;
            let mut i = 0;
            loop {
                if at >= stop {
                    return Err((
                        begin,
                        DecodeErrorKind::Truncated {
                            what: "packed varint",
                            end: stop as u64,
                            in_buffer: false,
                        },
                    ));
                }
                let byte = self.buf[at];
                at += 1;
                if i == 9 && byte > 1 {
                    return Err((begin, DecodeErrorKind::VarintOverflow));
                }
                if byte < 0x80 {
                    break;
                }
                i += 1;
            }
            elements += 1;
        }
        self.stats.repeated_elements += elements;
        self.pos = stop;
        Ok(())
    }

    /// Skips a field the schema does not know (forward compatibility).
    fn skip_unknown(&mut self, number: u64, wire_type: u8, key_at: usize) -> Result<(), Fault> {
        match wire_type {
            0 => {
                self.varint("varint")?;
            }
            1 => self.skip_fixed(8, "64-bit value")?,
            2 => {
                let (_, stop) = self.length()?;
                self.pos = stop;
            }
            5 => self.skip_fixed(4, "32-bit value")?,
            3 => self.skip_group(number, key_at)?,
            4 => {
                return Err((
                    key_at,
                    DecodeErrorKind::BadGroup {
                        detail: "end-group tag without a start-group",
                    },
                ))
            }
            other => return Err((key_at, DecodeErrorKind::UnknownWireType { wire_type: other })),
        }
        Ok(())
    }

    /// Skips a (deprecated) group up to its matching end tag, iteratively.
    fn skip_group(&mut self, number: u64, key_at: usize) -> Result<(), Fault> {
        let mut open: Vec<u64> = vec![number];
        while let Some(&innermost) = open.last() {
            if self.stack.len() + open.len() > self.max_depth + 1 {
                return Err((key_at, DecodeErrorKind::TooDeep { limit: self.max_depth }));
            }
            let tag_at = self.pos;
            if tag_at >= self.frame().end {
                return Err((
                    key_at,
                    DecodeErrorKind::BadGroup {
                        detail: "group is not closed before the end of its message",
                    },
                ));
            }
            let key = self.varint("field tag")?;
            let inner = key >> 3;
            if inner == 0 || inner > MAX_FIELD_NUMBER {
                return Err((tag_at, DecodeErrorKind::InvalidFieldNumber { number: inner }));
            }
            match (key & 7) as u8 {
                0 => {
                    self.varint("varint")?;
                }
                1 => self.skip_fixed(8, "64-bit value")?,
                2 => {
                    let (_, stop) = self.length()?;
                    self.pos = stop;
                }
                5 => self.skip_fixed(4, "32-bit value")?,
                3 => open.push(inner),
                4 => {
                    if inner != innermost {
                        return Err((
                            tag_at,
                            DecodeErrorKind::BadGroup {
                                detail: "end-group tag does not match its start-group",
                            },
                        ));
                    }
                    open.pop();
                }
                other => return Err((tag_at, DecodeErrorKind::UnknownWireType { wire_type: other })),
            }
        }
        Ok(())
    }

    /// Builds the error with the field path of the current position.
    fn error(&self, offset: usize, kind: DecodeErrorKind, root: usize) -> DecodeError {
        let mut path = String::new();
        for pair in self.stack.windows(2) {
            let parent = &MESSAGES[pair[0].msg];
            push_segment(&mut path, parent, pair[1].parent_field, pair[1].elem_index);
        }
        if let (Some((index, count)), Some(frame)) = (self.current, self.stack.last()) {
            push_segment(&mut path, &MESSAGES[frame.msg], index, count);
        }
        DecodeError {
            offset: offset as u64,
            path,
            root: MESSAGES[root].name,
            kind,
        }
    }
}

fn push_segment(path: &mut String, parent: &MessageSchema, field_index: usize, elem: u32) {
    use std::fmt::Write as _;
    let Some(field) = parent.fields.get(field_index) else {
        return;
    };
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(field.name);
    if field.repeated && !field.kind.is_scalar_numeric() {
        let _ = write!(path, "[{elem}]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ids;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn ld(field: u64, payload: &[u8], out: &mut Vec<u8>) {
        varint((field << 3) | 2, out);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }

    #[test]
    fn empty_is_valid() {
        let stats = scan(&[], ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("empty model");
        assert_eq!(stats.messages[ids::MODEL_PROTO], 1);
    }

    #[test]
    fn reports_path_and_offset() {
        // graph { node { } node { attribute { t { raw_data: <len 4096, 2 bytes> } } } }
        let mut tensor = Vec::new();
        varint((9 << 3) | 2, &mut tensor);
        varint(4096, &mut tensor);
        tensor.extend_from_slice(&[1, 2]);
        let mut attr = Vec::new();
        ld(5, &tensor, &mut attr);
        let mut node = Vec::new();
        ld(5, &attr, &mut node);
        let mut graph = Vec::new();
        ld(1, &[], &mut graph);
        ld(1, &node, &mut graph);
        let mut model = Vec::new();
        ld(7, &graph, &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("truncated raw_data");
        assert_eq!(err.path, "graph.node[1].attribute[0].t.raw_data");
        assert!(matches!(err.kind, DecodeErrorKind::LengthPastEnd { length: 4096, .. }), "{err}");
        assert_eq!(err.offset as usize, model.len() - 2 - 2);
    }

    #[test]
    fn depth_limit_is_exact() {
        // TypeProto.sequence_type.elem_type nests two messages a level.
        fn nested(levels: usize) -> Vec<u8> {
            // Build a chain of `levels` nested messages under a ValueInfoProto root:
            // type(TypeProto) -> sequence_type(Sequence) -> elem_type(TypeProto) ...
            let mut inner: Vec<u8> = Vec::new();
            for i in (0..levels).rev() {
                let mut out = Vec::new();
                // odd positions are Sequence messages, even are TypeProto.
                let field = if i == 0 { 2 } else if i % 2 == 1 { 4 } else { 1 };
                ld(field, &inner, &mut out);
                inner = out;
            }
            inner
        }
        assert!(scan(&nested(100), ids::VALUE_INFO_PROTO, 100).is_ok());
        let err = scan(&nested(101), ids::VALUE_INFO_PROTO, 100).expect_err("too deep");
        assert_eq!(err.kind, DecodeErrorKind::TooDeep { limit: 100 });
    }

    #[test]
    fn unknown_fields_and_groups_are_skipped() {
        let mut model = Vec::new();
        varint((99 << 3) | 0, &mut model);
        varint(5, &mut model);
        varint((98 << 3) | 3, &mut model);
        varint((1 << 3) | 5, &mut model);
        model.extend_from_slice(&[0; 4]);
        varint((98 << 3) | 4, &mut model);
        ld(97, b"xyz", &mut model);
        assert!(scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).is_ok());
    }

    #[test]
    fn wrong_wire_type_and_overlong_varint() {
        let mut model = Vec::new();
        varint((7 << 3) | 0, &mut model); // graph as a varint
        varint(1, &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("wire type");
        assert_eq!(err.path, "graph");
        assert!(matches!(err.kind, DecodeErrorKind::WrongWireType { wire_type: 0, .. }));

        let mut model = vec![(1 << 3) as u8];
        model.extend_from_slice(&[0xff; 11]);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("varint");
        assert_eq!(err.kind, DecodeErrorKind::VarintOverflow);
        assert_eq!(err.path, "ir_version");
        assert_eq!(err.offset, 1);
    }

    #[test]
    fn invalid_utf8() {
        let mut model = Vec::new();
        ld(2, &[b'a', 0xff], &mut model);
        let err = scan(&model, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect_err("utf8");
        assert_eq!(err.kind, DecodeErrorKind::InvalidUtf8 { valid_up_to: 1 });
        assert_eq!(err.path, "producer_name");
    }
}
