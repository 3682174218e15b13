//! `AttributeProto`, written by hand like [`NodeProto`](super::NodeProto).
//!
//! Exporter graphs carry an attribute or more on most nodes (`perm`,
//! `axes`, `alpha`, `to`), each holding one small value. prost's struct
//! for the message has room for all eighteen fields inline (336 bytes, its
//! name a heap `String`); here the fields a node's attribute holds
//! (name, type, one scalar, bytes or number list) are inline and the name a
//! [`Str`] (inline up to 24 bytes), and the rest (tensors, graphs, type
//! protos, string lists, `ref_attr_name`, `doc_string`) lives in one
//! [`AttributeExtras`] allocated when one of them is present: 144 bytes.
//! Field names, accessors and the wire encoding are prost's for the message
//! in `proto/onnx.proto`.

use bytes::{Buf, BufMut, Bytes};
use prost::encoding::{self, DecodeContext, WireType};
use prost::DecodeError;

use super::node::{encode_str, merge_str, str_len, Str};
use super::schema::fields::attribute_proto as F;
use super::{GraphProto, SparseTensorProto, TensorProto, TypeProto};

/// A named attribute of a node, or a formal attribute of a function
/// (`onnx.AttributeProto`). Exactly one value field is expected to be set,
/// and `type` names it; models written before IR version 2 may omit `type`.
///
/// The fields few attributes carry live in [`AttributeExtras`]: read them
/// through the accessors ([`AttributeProto::g`], [`AttributeProto::t`],
/// ...), set them through [`AttributeProto::extras_mut`].
#[derive(Clone, PartialEq, Default, Debug)]
pub struct AttributeProto {
    /// Field 1.
    pub name: Option<Str>,
    /// Field 20: an [`attribute_proto::AttributeType`] code.
    pub r#type: Option<i32>,
    /// Field 2.
    pub f: Option<f32>,
    /// Field 3.
    pub i: Option<i64>,
    /// Field 4.
    pub s: Option<Bytes>,
    /// Field 7.
    pub floats: Vec<f32>,
    /// Field 8.
    pub ints: Vec<i64>,
    /// Fields 5, 6, 9, 10, 11, 13, 14, 15, 21, 22 and 23, when any of them
    /// is present.
    pub extras: Option<Box<AttributeExtras>>,
}

/// The fields of an [`AttributeProto`] that few attributes have.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct AttributeExtras {
    /// Field 21: inside a function body, the attribute takes the value of
    /// the calling node's attribute with this name.
    pub ref_attr_name: Option<Str>,
    /// Field 13.
    pub doc_string: Option<Str>,
    /// Field 5.
    pub t: Option<Box<TensorProto>>,
    /// Field 6.
    pub g: Option<Box<GraphProto>>,
    /// Field 22.
    pub sparse_tensor: Option<Box<SparseTensorProto>>,
    /// Field 14.
    pub tp: Option<Box<TypeProto>>,
    /// Field 9.
    pub strings: Vec<Bytes>,
    /// Field 10.
    pub tensors: Vec<TensorProto>,
    /// Field 11.
    pub graphs: Vec<GraphProto>,
    /// Field 23.
    pub sparse_tensors: Vec<SparseTensorProto>,
    /// Field 15.
    pub type_protos: Vec<TypeProto>,
}

/// Nested types of `AttributeProto` (as prost would generate them).
pub mod attribute_proto {
    /// Which value field of an attribute holds its value.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
    #[repr(i32)]
    pub enum AttributeType {
        Undefined = 0,
        Float = 1,
        Int = 2,
        String = 3,
        Tensor = 4,
        Graph = 5,
        SparseTensor = 11,
        TypeProto = 13,
        Floats = 6,
        Ints = 7,
        Strings = 8,
        Tensors = 9,
        Graphs = 10,
        SparseTensors = 12,
        TypeProtos = 14,
    }

    impl AttributeType {
        /// The value's name in onnx.proto (`"FLOAT"`).
        pub fn as_str_name(&self) -> &'static str {
            match self {
                Self::Undefined => "UNDEFINED",
                Self::Float => "FLOAT",
                Self::Int => "INT",
                Self::String => "STRING",
                Self::Tensor => "TENSOR",
                Self::Graph => "GRAPH",
                Self::SparseTensor => "SPARSE_TENSOR",
                Self::TypeProto => "TYPE_PROTO",
                Self::Floats => "FLOATS",
                Self::Ints => "INTS",
                Self::Strings => "STRINGS",
                Self::Tensors => "TENSORS",
                Self::Graphs => "GRAPHS",
                Self::SparseTensors => "SPARSE_TENSORS",
                Self::TypeProtos => "TYPE_PROTOS",
            }
        }

        /// The value of a name in onnx.proto.
        pub fn from_str_name(value: &str) -> Option<Self> {
            [
                Self::Undefined,
                Self::Float,
                Self::Int,
                Self::String,
                Self::Tensor,
                Self::Graph,
                Self::SparseTensor,
                Self::TypeProto,
                Self::Floats,
                Self::Ints,
                Self::Strings,
                Self::Tensors,
                Self::Graphs,
                Self::SparseTensors,
                Self::TypeProtos,
            ]
            .into_iter()
            .find(|t| t.as_str_name() == value)
        }
    }
}

use attribute_proto::AttributeType;

static NO_BYTES: Vec<Bytes> = Vec::new();
static NO_TENSORS: Vec<TensorProto> = Vec::new();
static NO_GRAPHS: Vec<GraphProto> = Vec::new();
static NO_SPARSE_TENSORS: Vec<SparseTensorProto> = Vec::new();
static NO_TYPE_PROTOS: Vec<TypeProto> = Vec::new();

impl AttributeProto {
    /// `name`, or "" when absent.
    #[inline]
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// `type`, or `Undefined` when absent or not a known code.
    pub fn r#type(&self) -> AttributeType {
        self.r#type
            .and_then(|t| AttributeType::try_from(t).ok())
            .unwrap_or(AttributeType::Undefined)
    }

    /// Sets `type`.
    pub fn set_type(&mut self, value: AttributeType) {
        self.r#type = Some(value as i32);
    }

    /// `f`, or 0 when absent.
    pub fn f(&self) -> f32 {
        self.f.unwrap_or(0.0)
    }

    /// `i`, or 0 when absent.
    pub fn i(&self) -> i64 {
        self.i.unwrap_or(0)
    }

    /// `s`, or empty when absent.
    pub fn s(&self) -> &[u8] {
        self.s.as_deref().unwrap_or(&[])
    }

    /// `ref_attr_name`, or "" when absent.
    pub fn ref_attr_name(&self) -> &str {
        self.ref_attr_name_opt().unwrap_or("")
    }

    /// `ref_attr_name`, `None` when absent.
    pub fn ref_attr_name_opt(&self) -> Option<&str> {
        self.extras.as_ref()?.ref_attr_name.as_deref()
    }

    /// `doc_string`, or "" when absent.
    pub fn doc_string(&self) -> &str {
        self.doc_string_opt().unwrap_or("")
    }

    /// `doc_string`, `None` when absent.
    pub fn doc_string_opt(&self) -> Option<&str> {
        self.extras.as_ref()?.doc_string.as_deref()
    }

    /// `t`, `None` when absent.
    pub fn t(&self) -> Option<&TensorProto> {
        self.extras.as_ref()?.t.as_deref()
    }

    /// `g`, `None` when absent.
    pub fn g(&self) -> Option<&GraphProto> {
        self.extras.as_ref()?.g.as_deref()
    }

    /// `t` to change in place, `None` when absent.
    pub fn t_mut(&mut self) -> Option<&mut TensorProto> {
        self.extras.as_mut()?.t.as_deref_mut()
    }

    /// `g` to change in place, `None` when absent.
    pub fn g_mut(&mut self) -> Option<&mut GraphProto> {
        self.extras.as_mut()?.g.as_deref_mut()
    }

    /// `sparse_tensor` to change in place, `None` when absent.
    pub fn sparse_tensor_mut(&mut self) -> Option<&mut SparseTensorProto> {
        self.extras.as_mut()?.sparse_tensor.as_deref_mut()
    }

    /// `sparse_tensor`, `None` when absent.
    pub fn sparse_tensor(&self) -> Option<&SparseTensorProto> {
        self.extras.as_ref()?.sparse_tensor.as_deref()
    }

    /// `tp`, `None` when absent.
    pub fn tp(&self) -> Option<&TypeProto> {
        self.extras.as_ref()?.tp.as_deref()
    }

    /// Whether the attribute holds a tensor or a graph (or a list of
    /// them): messages a reader may borrow for longer than the attribute
    /// is read (a reader of attributes from bytes keeps such a node
    /// decoded; see `LazyList::kept_by_reader`).
    pub fn holds_message(&self) -> bool {
        self.extras.as_ref().is_some_and(|e| {
            e.t.is_some()
                || e.g.is_some()
                || e.sparse_tensor.is_some()
                || !e.tensors.is_empty()
                || !e.graphs.is_empty()
                || !e.sparse_tensors.is_empty()
        })
    }

    /// `strings` (empty when absent).
    pub fn strings(&self) -> &Vec<Bytes> {
        self.extras.as_ref().map_or(&NO_BYTES, |e| &e.strings)
    }

    /// `tensors` (empty when absent).
    pub fn tensors(&self) -> &Vec<TensorProto> {
        self.extras.as_ref().map_or(&NO_TENSORS, |e| &e.tensors)
    }

    /// `graphs` (empty when absent).
    pub fn graphs(&self) -> &Vec<GraphProto> {
        self.extras.as_ref().map_or(&NO_GRAPHS, |e| &e.graphs)
    }

    /// `tensors` to change in place (empty when absent).
    pub fn tensors_mut(&mut self) -> &mut [TensorProto] {
        match self.extras.as_mut() {
            Some(e) => &mut e.tensors,
            None => &mut [],
        }
    }

    /// `graphs` to change in place (empty when absent).
    pub fn graphs_mut(&mut self) -> &mut [GraphProto] {
        match self.extras.as_mut() {
            Some(e) => &mut e.graphs,
            None => &mut [],
        }
    }

    /// `sparse_tensors` to change in place (empty when absent).
    pub fn sparse_tensors_mut(&mut self) -> &mut [SparseTensorProto] {
        match self.extras.as_mut() {
            Some(e) => &mut e.sparse_tensors,
            None => &mut [],
        }
    }

    /// `sparse_tensors` (empty when absent).
    pub fn sparse_tensors(&self) -> &Vec<SparseTensorProto> {
        self.extras
            .as_ref()
            .map_or(&NO_SPARSE_TENSORS, |e| &e.sparse_tensors)
    }

    /// `type_protos` (empty when absent).
    pub fn type_protos(&self) -> &Vec<TypeProto> {
        self.extras
            .as_ref()
            .map_or(&NO_TYPE_PROTOS, |e| &e.type_protos)
    }

    /// The rare fields, allocated on first use.
    pub fn extras_mut(&mut self) -> &mut AttributeExtras {
        self.extras.get_or_insert_with(Box::default)
    }

    /// This attribute with rare fields set by `set`: `AttributeProto {
    /// name, r#type, ..Default::default() }.with_extras(|e| e.g =
    /// Some(Box::new(graph)))`.
    #[must_use]
    pub fn with_extras(mut self, set: impl FnOnce(&mut AttributeExtras)) -> Self {
        set(self.extras_mut());
        self
    }
}

impl prost::Message for AttributeProto {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        // Field-number order, as prost's derived encoder writes it.
        if let Some(text) = &self.name {
            encode_str(F::NAME, text, buf);
        }
        if let Some(v) = &self.f {
            encoding::float::encode(F::F, v, buf);
        }
        if let Some(v) = &self.i {
            encoding::int64::encode(F::I, v, buf);
        }
        if let Some(v) = &self.s {
            encoding::bytes::encode(F::S, v, buf);
        }
        if let Some(m) = self.t() {
            encoding::message::encode(F::T, m, buf);
        }
        if let Some(m) = self.g() {
            encoding::message::encode(F::G, m, buf);
        }
        encoding::float::encode_repeated(F::FLOATS, &self.floats, buf);
        encoding::int64::encode_repeated(F::INTS, &self.ints, buf);
        encoding::bytes::encode_repeated(F::STRINGS, self.strings(), buf);
        encoding::message::encode_repeated(F::TENSORS, self.tensors(), buf);
        encoding::message::encode_repeated(F::GRAPHS, self.graphs(), buf);
        if let Some(text) = self.doc_string_opt() {
            encode_str(F::DOC_STRING, text, buf);
        }
        if let Some(m) = self.tp() {
            encoding::message::encode(F::TP, m, buf);
        }
        encoding::message::encode_repeated(F::TYPE_PROTOS, self.type_protos(), buf);
        if let Some(v) = &self.r#type {
            encoding::int32::encode(F::TYPE, v, buf);
        }
        if let Some(text) = self.ref_attr_name_opt() {
            encode_str(F::REF_ATTR_NAME, text, buf);
        }
        if let Some(m) = self.sparse_tensor() {
            encoding::message::encode(F::SPARSE_TENSOR, m, buf);
        }
        encoding::message::encode_repeated(F::SPARSE_TENSORS, self.sparse_tensors(), buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        use encoding::message::{merge, merge_repeated};
        match tag {
            F::NAME => self.name = Some(merge_str(wire_type, buf, ctx)?),
            F::TYPE => encoding::int32::merge(
                wire_type,
                self.r#type.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::F => encoding::float::merge(
                wire_type,
                self.f.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::I => encoding::int64::merge(
                wire_type,
                self.i.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::S => encoding::bytes::merge(
                wire_type,
                self.s.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::FLOATS => encoding::float::merge_repeated(wire_type, &mut self.floats, buf, ctx)?,
            F::INTS => encoding::int64::merge_repeated(wire_type, &mut self.ints, buf, ctx)?,
            F::REF_ATTR_NAME => {
                self.extras_mut().ref_attr_name = Some(merge_str(wire_type, buf, ctx)?)
            }
            F::DOC_STRING => self.extras_mut().doc_string = Some(merge_str(wire_type, buf, ctx)?),
            F::T => merge(
                wire_type,
                self.extras_mut().t.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::G => merge(
                wire_type,
                self.extras_mut().g.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::SPARSE_TENSOR => merge(
                wire_type,
                self.extras_mut()
                    .sparse_tensor
                    .get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::TP => merge(
                wire_type,
                self.extras_mut().tp.get_or_insert_with(Default::default),
                buf,
                ctx,
            )?,
            F::STRINGS => encoding::bytes::merge_repeated(
                wire_type,
                &mut self.extras_mut().strings,
                buf,
                ctx,
            )?,
            F::TENSORS => merge_repeated(wire_type, &mut self.extras_mut().tensors, buf, ctx)?,
            F::GRAPHS => merge_repeated(wire_type, &mut self.extras_mut().graphs, buf, ctx)?,
            F::SPARSE_TENSORS => {
                merge_repeated(wire_type, &mut self.extras_mut().sparse_tensors, buf, ctx)?
            }
            F::TYPE_PROTOS => {
                merge_repeated(wire_type, &mut self.extras_mut().type_protos, buf, ctx)?
            }
            _ => encoding::skip_field(wire_type, tag, buf, ctx)?,
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        let opt = |tag: u32, text: Option<&str>| text.map_or(0, |t| str_len(tag, t));
        opt(F::NAME, self.name.as_deref())
            + self.f.map_or(0, |v| encoding::float::encoded_len(F::F, &v))
            + self.i.map_or(0, |v| encoding::int64::encoded_len(F::I, &v))
            + self
                .s
                .as_ref()
                .map_or(0, |v| encoding::bytes::encoded_len(F::S, v))
            + self
                .t()
                .map_or(0, |m| encoding::message::encoded_len(F::T, m))
            + self
                .g()
                .map_or(0, |m| encoding::message::encoded_len(F::G, m))
            + encoding::float::encoded_len_repeated(F::FLOATS, &self.floats)
            + encoding::int64::encoded_len_repeated(F::INTS, &self.ints)
            + encoding::bytes::encoded_len_repeated(F::STRINGS, self.strings())
            + encoding::message::encoded_len_repeated(F::TENSORS, self.tensors())
            + encoding::message::encoded_len_repeated(F::GRAPHS, self.graphs())
            + opt(F::DOC_STRING, self.doc_string_opt())
            + self
                .tp()
                .map_or(0, |m| encoding::message::encoded_len(F::TP, m))
            + encoding::message::encoded_len_repeated(F::TYPE_PROTOS, self.type_protos())
            + self
                .r#type
                .map_or(0, |v| encoding::int32::encoded_len(F::TYPE, &v))
            + opt(F::REF_ATTR_NAME, self.ref_attr_name_opt())
            + self
                .sparse_tensor()
                .map_or(0, |m| encoding::message::encoded_len(F::SPARSE_TENSOR, m))
            + encoding::message::encoded_len_repeated(F::SPARSE_TENSORS, self.sparse_tensors())
    }

    fn clear(&mut self) {
        // As prost's: the lists keep their room.
        self.name = None;
        self.r#type = None;
        self.f = None;
        self.i = None;
        self.s = None;
        self.floats.clear();
        self.ints.clear();
        self.extras = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// What prost generates for the same message, field for field: the
    /// reference the hand-written encoding and decoding are held to.
    #[derive(Clone, PartialEq, prost::Message)]
    struct Generated {
        #[prost(string, optional, tag = "1")]
        name: Option<String>,
        #[prost(string, optional, tag = "21")]
        ref_attr_name: Option<String>,
        #[prost(string, optional, tag = "13")]
        doc_string: Option<String>,
        #[prost(int32, optional, tag = "20")]
        r#type: Option<i32>,
        #[prost(float, optional, tag = "2")]
        f: Option<f32>,
        #[prost(int64, optional, tag = "3")]
        i: Option<i64>,
        #[prost(bytes = "bytes", optional, tag = "4")]
        s: Option<Bytes>,
        #[prost(message, optional, boxed, tag = "5")]
        t: Option<Box<TensorProto>>,
        #[prost(message, optional, boxed, tag = "6")]
        g: Option<Box<GraphProto>>,
        #[prost(message, optional, boxed, tag = "22")]
        sparse_tensor: Option<Box<SparseTensorProto>>,
        #[prost(message, optional, boxed, tag = "14")]
        tp: Option<Box<TypeProto>>,
        #[prost(float, repeated, packed = "false", tag = "7")]
        floats: Vec<f32>,
        #[prost(int64, repeated, packed = "false", tag = "8")]
        ints: Vec<i64>,
        #[prost(bytes = "bytes", repeated, tag = "9")]
        strings: Vec<Bytes>,
        #[prost(message, repeated, tag = "10")]
        tensors: Vec<TensorProto>,
        #[prost(message, repeated, tag = "11")]
        graphs: Vec<GraphProto>,
        #[prost(message, repeated, tag = "23")]
        sparse_tensors: Vec<SparseTensorProto>,
        #[prost(message, repeated, tag = "15")]
        type_protos: Vec<TypeProto>,
    }

    fn every_field() -> Generated {
        let tensor = TensorProto {
            name: Some("w".into()),
            dims: vec![2],
            data_type: Some(1),
            ..Default::default()
        };
        let graph = GraphProto {
            name: Some("body".into()),
            ..Default::default()
        };
        let sparse = SparseTensorProto {
            dims: vec![3],
            ..Default::default()
        };
        Generated {
            name: Some("an attribute name longer than 24 bytes".into()),
            ref_attr_name: Some("r".into()),
            doc_string: Some("d\u{e9}j\u{e0} vu".into()),
            r#type: Some(-7),
            f: Some(0.25),
            i: Some(-3),
            s: Some(Bytes::from_static(b"\xffbytes")),
            t: Some(Box::new(tensor.clone())),
            g: Some(Box::new(graph.clone())),
            sparse_tensor: Some(Box::new(sparse.clone())),
            tp: Some(Box::new(TypeProto {
                denotation: Some("IMAGE".into()),
                ..Default::default()
            })),
            floats: vec![1.0, f32::MIN_POSITIVE],
            ints: vec![i64::MIN, 0, 9],
            strings: vec![Bytes::from_static(b"a"), Bytes::new()],
            tensors: vec![tensor.clone(), tensor],
            graphs: vec![graph],
            sparse_tensors: vec![sparse],
            type_protos: vec![TypeProto::default()],
        }
    }

    #[test]
    fn same_bytes_as_prost_generated() {
        let reference = every_field();
        let bytes = reference.encode_to_vec();
        let a = AttributeProto::decode(bytes.as_slice()).expect("decode");
        assert_eq!(a.name(), "an attribute name longer than 24 bytes");
        assert_eq!(
            (a.ref_attr_name(), a.doc_string()),
            ("r", "d\u{e9}j\u{e0} vu")
        );
        assert_eq!(
            (a.r#type, a.f(), a.i(), a.s()),
            (Some(-7), 0.25, -3, &b"\xffbytes"[..])
        );
        assert_eq!(a.t(), reference.t.as_deref());
        assert_eq!(a.g(), reference.g.as_deref());
        assert_eq!(a.tensors().len(), 2);
        assert_eq!(a.encoded_len(), bytes.len());
        assert_eq!(a.encode_to_vec(), bytes);
        let back = Generated::decode(a.encode_to_vec().as_slice()).expect("decode back");
        assert_eq!(back, reference);
        // One field at a time: each lands where it should, nothing else set.
        let only = [
            Generated {
                r#type: Some(2),
                i: Some(5),
                ..Default::default()
            },
            Generated {
                ints: vec![1, 2],
                ..Default::default()
            },
            Generated {
                g: reference.g.clone(),
                ..Default::default()
            },
            Generated {
                strings: reference.strings.clone(),
                ..Default::default()
            },
        ];
        for g in only {
            let bytes = g.encode_to_vec();
            let a = AttributeProto::decode(bytes.as_slice()).expect("decode");
            assert_eq!(a.encode_to_vec(), bytes);
            assert_eq!(a.encoded_len(), bytes.len());
        }
    }

    #[test]
    fn packed_lists_and_merged_messages_decode_as_prost() {
        // ints packed (protobuf parsers accept both forms), a graph given
        // in two halves (merged), a name given twice (the later kept).
        let mut bytes = Vec::new();
        encoding::encode_key(F::INTS, WireType::LengthDelimited, &mut bytes);
        encoding::encode_varint(2, &mut bytes);
        bytes.extend([3, 4]);
        for half in [
            GraphProto {
                name: Some("g".into()),
                ..Default::default()
            },
            GraphProto {
                doc_string: Some("d".into()),
                ..Default::default()
            },
        ] {
            encoding::message::encode(F::G, &half, &mut bytes);
        }
        encode_str(F::NAME, "first", &mut bytes);
        encode_str(F::NAME, "second", &mut bytes);
        let a = AttributeProto::decode(bytes.as_slice()).expect("decode");
        let want = Generated::decode(bytes.as_slice()).expect("decode");
        assert_eq!(a.ints, want.ints);
        assert_eq!(a.g(), want.g.as_deref());
        assert_eq!(a.name(), "second");
        assert_eq!(
            Generated::decode(a.encode_to_vec().as_slice()).expect("again"),
            want
        );
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn compact_layout() {
        assert_eq!(std::mem::size_of::<AttributeProto>(), 144);
        let plain = Generated {
            name: Some("perm".into()),
            r#type: Some(7),
            ints: vec![0, 2, 1],
            ..Default::default()
        };
        let a = AttributeProto::decode(plain.encode_to_vec().as_slice()).expect("decode");
        assert!(a.extras.is_none(), "no rare field: nothing out of line");
        assert_eq!(a.r#type(), AttributeType::Ints);
    }

    #[test]
    fn refuses_bad_utf8_and_wire_types() {
        // name = b"\xff"
        assert!(AttributeProto::decode(&[0x0a, 0x01, 0xff][..]).is_err());
        // doc_string = b"\xff" (out of line)
        assert!(AttributeProto::decode(&[0x6a, 0x01, 0xff][..]).is_err());
        // i as a length-delimited value
        assert!(AttributeProto::decode(&[0x1a, 0x00][..]).is_err());
        let unknown = AttributeProto::decode(&[0x98, 0x06, 0x01][..]).expect("skipped");
        assert_eq!(unknown, AttributeProto::default());
    }

    #[test]
    fn attribute_type_names() {
        for code in 0..16 {
            if let Ok(t) = AttributeType::try_from(code) {
                assert_eq!(AttributeType::from_str_name(t.as_str_name()), Some(t));
            }
        }
        assert_eq!(AttributeType::from_str_name("NOPE"), None);
    }
}
