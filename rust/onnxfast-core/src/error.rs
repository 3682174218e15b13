//! Errors of the core crate. Each carries data (offsets, field paths, names),
//! not only prose, so the binding layer can expose them as attributes.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What exactly went wrong while walking the wire format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// A varint, tag or fixed-width value is cut off by the end of its
    /// enclosing message or of the buffer.
    Truncated {
        what: &'static str,
        end: u64,
        in_buffer: bool,
    },
    /// A length prefix points past the end of its enclosing message.
    LengthPastEnd {
        length: u64,
        end: u64,
        in_buffer: bool,
    },
    /// A varint with more than ten bytes, or one that overflows 64 bits.
    VarintOverflow,
    /// Field number 0, or one above the protobuf maximum.
    InvalidFieldNumber { number: u64 },
    /// Wire type 6 or 7.
    UnknownWireType { wire_type: u8 },
    /// A known field arrived with a wire type its declared type cannot have.
    WrongWireType {
        wire_type: u8,
        expected: &'static str,
    },
    /// A packed fixed-width field whose length is not a multiple of the width.
    PackedLength { length: u64, width: usize },
    /// A string field holding bytes that are not UTF-8.
    InvalidUtf8 { valid_up_to: usize },
    /// Messages nested deeper than the limit.
    TooDeep { limit: usize },
    /// A group (deprecated wire types 3/4) that is not properly closed.
    BadGroup { detail: &'static str },
    /// The decoded model would need more memory than allowed.
    MemoryBudget { projected: u64, budget: u64 },
    /// A model read from a stream (a pipe, a FIFO, a socket: bytes that
    /// cannot be mapped, so they are read into memory) went on past the
    /// memory budget, `budget` bytes.
    StreamOverBudget { source: String, budget: u64 },
    /// The scanner accepted input that prost rejected (a bug on our side).
    Internal { detail: String },
}

fn wire_type_name(wire_type: u8) -> &'static str {
    match wire_type {
        0 => "varint",
        1 => "64-bit",
        2 => "length-delimited",
        3 => "start-group",
        4 => "end-group",
        5 => "32-bit",
        _ => "invalid",
    }
}

fn place(in_buffer: bool) -> &'static str {
    if in_buffer {
        "the buffer"
    } else {
        "its enclosing message"
    }
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeErrorKind::Truncated {
                what,
                end,
                in_buffer,
            } => {
                write!(
                    f,
                    "{what} runs past the end of {} at byte {end}",
                    place(*in_buffer)
                )
            }
            DecodeErrorKind::LengthPastEnd {
                length,
                end,
                in_buffer,
            } => {
                write!(
                    f,
                    "length {length} runs past the end of {} at byte {end}",
                    place(*in_buffer)
                )
            }
            DecodeErrorKind::VarintOverflow => {
                write!(f, "varint is longer than 10 bytes or overflows 64 bits")
            }
            DecodeErrorKind::InvalidFieldNumber { number } => {
                write!(f, "invalid field number {number}")
            }
            DecodeErrorKind::UnknownWireType { wire_type } => {
                write!(f, "invalid wire type {wire_type}")
            }
            DecodeErrorKind::WrongWireType {
                wire_type,
                expected,
            } => write!(
                f,
                "wire type {wire_type} ({}) where {expected} was expected",
                wire_type_name(*wire_type)
            ),
            DecodeErrorKind::PackedLength { length, width } => {
                write!(
                    f,
                    "packed length {length} is not a multiple of the element width {width}"
                )
            }
            DecodeErrorKind::InvalidUtf8 { valid_up_to } => {
                write!(f, "string is not valid UTF-8 (first bad byte at position {valid_up_to} of the string)")
            }
            DecodeErrorKind::TooDeep { limit } => {
                write!(f, "messages are nested deeper than {limit} levels")
            }
            DecodeErrorKind::BadGroup { detail } => write!(f, "malformed group: {detail}"),
            DecodeErrorKind::MemoryBudget { projected, budget } => write!(
                f,
                "decoding would need more than the memory budget of {} MiB (at least {} MiB) \
                 (raise max_memory if this model is trusted)",
                budget / (1 << 20),
                projected.div_ceil(1 << 20)
            ),
            DecodeErrorKind::StreamOverBudget { source, budget } => write!(
                f,
                "{source} is a stream (a pipe or socket, read into memory, not mapped) longer \
                 than the memory budget of {budget} bytes (raise max_memory, or save the model \
                 to a file, which is mapped)"
            ),
            DecodeErrorKind::Internal { detail } => {
                write!(
                    f,
                    "internal decoder error ({detail}); please report this as a bug"
                )
            }
        }
    }
}

/// A malformed protobuf: where (byte offset, field path) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset (in the decoded buffer) of the field or value at fault.
    pub offset: u64,
    /// Field path from the root message, e.g. `graph.node[41].attribute[2].t.raw_data`.
    /// Empty when the fault is in the root message itself, before any field.
    pub path: String,
    /// Name of the root message type, e.g. `ModelProto`.
    pub root: &'static str,
    pub kind: DecodeErrorKind,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} (byte {}): {}", self.root, self.offset, self.kind)
        } else {
            write!(f, "{} (byte {}): {}", self.path, self.offset, self.kind)
        }
    }
}

impl std::error::Error for DecodeError {}

/// What is wrong with a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorErrorKind {
    UndefinedType,
    UnknownType {
        code: i32,
    },
    NegativeDim {
        index: usize,
        value: i64,
    },
    CountOverflow {
        dims: Vec<i64>,
    },
    Segmented,
    StringInRaw,
    MultipleDataFields {
        fields: Vec<&'static str>,
    },
    SizeMismatch {
        field: &'static str,
        got: usize,
        expected: usize,
        unit: &'static str,
    },
    WrongField {
        field: &'static str,
        expected: &'static str,
    },
    NoData {
        expected: usize,
    },
    ExternalNotLoaded,
    StringNotBytes,
    NotString,
    InvalidUtf8 {
        index: usize,
    },
    Unsupported {
        detail: String,
    },
}

impl fmt::Display for TensorErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorErrorKind::UndefinedType => write!(f, "data_type is UNDEFINED (0)"),
            TensorErrorKind::UnknownType { code } => {
                write!(f, "data_type {code} is not a known element type")
            }
            TensorErrorKind::NegativeDim { index, value } => {
                write!(f, "dims[{index}] is negative ({value})")
            }
            TensorErrorKind::CountOverflow { dims } => {
                write!(
                    f,
                    "dims {dims:?} hold more elements than this machine can address"
                )
            }
            TensorErrorKind::Segmented => write!(
                f,
                "segmented tensors (the `segment` field) are not supported"
            ),
            TensorErrorKind::StringInRaw => {
                write!(f, "STRING tensors cannot store their data in raw_data")
            }
            TensorErrorKind::MultipleDataFields { fields } => {
                write!(
                    f,
                    "data is stored in more than one place ({})",
                    fields.join(", ")
                )
            }
            TensorErrorKind::SizeMismatch {
                field,
                got,
                expected,
                unit,
            } => write!(
                f,
                "{field} holds {got} {unit}, but the dims and data_type need {expected}"
            ),
            TensorErrorKind::WrongField { field, expected } => {
                write!(
                    f,
                    "data is in {field}, but this data_type stores it in {expected}"
                )
            }
            TensorErrorKind::NoData { expected } => {
                write!(f, "no data for its {expected} elements")
            }
            TensorErrorKind::ExternalNotLoaded => write!(f, "data is external and was not read"),
            TensorErrorKind::StringNotBytes => write!(f, "STRING tensors have no byte layout"),
            TensorErrorKind::NotString => write!(f, "not a STRING tensor"),
            TensorErrorKind::InvalidUtf8 { index } => {
                write!(f, "string_data[{index}] is not valid UTF-8")
            }
            TensorErrorKind::Unsupported { detail } => write!(f, "{detail}"),
        }
    }
}

/// A tensor whose data cannot be turned into an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorError {
    /// The tensor's name (may be empty).
    pub tensor: String,
    pub kind: TensorErrorKind,
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tensor '{}': {}",
            crate::diag::clean(&self.tensor),
            self.kind
        )
    }
}

impl std::error::Error for TensorError {}

/// Every error the core crate returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Tensor(#[from] TensorError),
    #[error(transparent)]
    External(#[from] crate::external::ExternalDataError),
    /// The model file (or a file it names) cannot be read.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
