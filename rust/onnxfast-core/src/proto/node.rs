//! `NodeProto`, the one message type written by hand rather than generated.
//!
//! Nodes are the bulk of large graphs, and a node is mostly short strings:
//! input and output value names, its name, op_type, domain. With `String`
//! each of them is a heap allocation (five to seven per node, a million for
//! a 200,000-node graph, and as many frees when the model is dropped). Here
//! they are [`Str`]s, which keep up to 24 bytes inline (`"Add"`, `"t41"`,
//! `"ai.onnx.ml"`) and use the heap only for longer names. Everything else
//! matches what prost would generate for the message in `proto/onnx.proto`:
//! the same field names, accessors and wire encoding.

use bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::DecodeError;

use super::schema::fields::node_proto as F;
use super::{AttributeProto, NodeDeviceConfigurationProto, StringStringEntryProto};

/// The string type of node fields: a `str` of up to 24 bytes kept inline.
pub type Str = compact_str::CompactString;

/// Input names of a node: two kept inline (most operators take one or two).
pub type Inputs = smallvec::SmallVec<[Str; 2]>;

/// Output names of a node: one kept inline.
pub type Outputs = smallvec::SmallVec<[Str; 1]>;

/// One operator invocation (`onnx.NodeProto`).
///
/// 192 bytes, and no heap allocation for a node whose names are short and
/// which has at most two inputs and one output (prost's layout: 240 bytes
/// plus five to seven allocations). Fields few nodes carry live in
/// [`NodeExtras`], allocated only when one of them is present; read them
/// through the accessors ([`NodeProto::doc_string`], ...).
#[derive(Clone, PartialEq, Default, Debug)]
pub struct NodeProto {
    /// Field 1: names of the input values ("" for an omitted optional input).
    pub input: Inputs,
    /// Field 2: names of the output values.
    pub output: Outputs,
    /// Field 3.
    pub name: Option<Str>,
    /// Field 4.
    pub op_type: Option<Str>,
    /// Field 7: operator set domain ("" or absent: the default ONNX domain).
    pub domain: Option<Str>,
    /// Field 5.
    pub attribute: Vec<AttributeProto>,
    /// Fields 6, 8, 9 and 10, when any of them is present.
    pub extras: Option<Box<NodeExtras>>,
}

/// The fields of a [`NodeProto`] that few nodes have.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct NodeExtras {
    /// Field 8: selects one of several functions sharing (domain, op_type).
    pub overload: Option<Str>,
    /// Field 6.
    pub doc_string: Option<Str>,
    /// Field 9.
    pub metadata_props: Vec<StringStringEntryProto>,
    /// Field 10.
    pub device_configurations: Vec<NodeDeviceConfigurationProto>,
}

static NO_METADATA: Vec<StringStringEntryProto> = Vec::new();
static NO_DEVICE_CONFIGURATIONS: Vec<NodeDeviceConfigurationProto> = Vec::new();

impl NodeProto {
    /// `name`, or "" when absent (as prost's accessors).
    #[inline]
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// `op_type`, or "" when absent.
    #[inline]
    pub fn op_type(&self) -> &str {
        self.op_type.as_deref().unwrap_or("")
    }

    /// `domain`, or "" when absent.
    #[inline]
    pub fn domain(&self) -> &str {
        self.domain.as_deref().unwrap_or("")
    }

    /// `overload`, or "" when absent.
    pub fn overload(&self) -> &str {
        self.overload_opt().unwrap_or("")
    }

    /// `overload`, `None` when absent.
    pub fn overload_opt(&self) -> Option<&str> {
        self.extras.as_ref()?.overload.as_deref()
    }

    /// `doc_string`, or "" when absent.
    pub fn doc_string(&self) -> &str {
        self.doc_string_opt().unwrap_or("")
    }

    /// `doc_string`, `None` when absent.
    pub fn doc_string_opt(&self) -> Option<&str> {
        self.extras.as_ref()?.doc_string.as_deref()
    }

    /// `metadata_props` (empty when absent).
    pub fn metadata_props(&self) -> &Vec<StringStringEntryProto> {
        self.extras
            .as_ref()
            .map_or(&NO_METADATA, |e| &e.metadata_props)
    }

    /// `device_configurations` (empty when absent).
    pub fn device_configurations(&self) -> &Vec<NodeDeviceConfigurationProto> {
        self.extras
            .as_ref()
            .map_or(&NO_DEVICE_CONFIGURATIONS, |e| &e.device_configurations)
    }

    /// Stores the text of string field `number` (one for which
    /// [`is_string_field`] holds): appended for inputs and outputs, set
    /// otherwise (protobuf's last-one-wins).
    #[inline]
    pub(crate) fn set_string(&mut self, number: u32, text: Str) {
        match number {
            F::INPUT => self.input.push(text),
            F::OUTPUT => self.output.push(text),
            F::NAME => self.name = Some(text),
            F::OP_TYPE => self.op_type = Some(text),
            F::DOC_STRING => self.extras_mut().doc_string = Some(text),
            F::DOMAIN => self.domain = Some(text),
            _ => self.extras_mut().overload = Some(text),
        }
    }

    /// The rare fields, allocated on first use.
    pub fn extras_mut(&mut self) -> &mut NodeExtras {
        self.extras.get_or_insert_with(Box::default)
    }
}

/// What node checks read of a node: its names and attributes. Implemented
/// by a decoded [`NodeProto`] and by a view over a node's bytes
/// (`decode::lazy::NodeView`), so a graph can be checked without decoding
/// (and copying) every node.
pub trait NodeFields {
    /// `name`, or "" when absent.
    fn node_name(&self) -> &str;
    /// `op_type`, or "" when absent.
    fn node_op_type(&self) -> &str;
    /// `domain`, or "" when absent.
    fn node_domain(&self) -> &str;
    /// The input names, in order.
    fn inputs(&self) -> impl ExactSizeIterator<Item = &str>;
    /// The output names, in order.
    fn outputs(&self) -> impl ExactSizeIterator<Item = &str>;
    /// The attributes, decoded.
    fn attributes(&self) -> &[AttributeProto];
}

impl NodeFields for NodeProto {
    #[inline]
    fn node_name(&self) -> &str {
        self.name()
    }
    #[inline]
    fn node_op_type(&self) -> &str {
        self.op_type()
    }
    #[inline]
    fn node_domain(&self) -> &str {
        self.domain()
    }
    fn inputs(&self) -> impl ExactSizeIterator<Item = &str> {
        self.input.iter().map(|s| s.as_str())
    }
    fn outputs(&self) -> impl ExactSizeIterator<Item = &str> {
        self.output.iter().map(|s| s.as_str())
    }
    fn attributes(&self) -> &[AttributeProto] {
        &self.attribute
    }
}

/// What inference reads of a node, borrowed: names as `&str`s (slices of
/// the source bytes, or of a decoded node's strings) and the attributes
/// of a decoded node. Made per node as it is read, in the reader's slot: a
/// node read from its bytes (`decode::lazy::LazyList::read_into`, its
/// attributes decoded beside it) is never decoded or kept.
#[derive(Clone, Debug, Default)]
pub struct NodeHead<'a> {
    pub input: smallvec::SmallVec<[&'a str; 4]>,
    pub output: smallvec::SmallVec<[&'a str; 2]>,
    /// The node's attributes (empty for a node read from its bytes).
    pub attribute: &'a [AttributeProto],
    pub(crate) name: &'a str,
    pub(crate) op_type: &'a str,
    pub(crate) domain: &'a str,
    pub(crate) overload: &'a str,
}

impl<'a> NodeHead<'a> {
    /// The head of a decoded node.
    pub fn of(n: &'a NodeProto) -> Self {
        let mut head = NodeHead::default();
        head.assign(n);
        head
    }

    /// Makes this the head of a decoded node, in place (its name lists
    /// keep their room).
    pub fn assign(&mut self, n: &'a NodeProto) {
        self.clear();
        self.input.extend(n.input.iter().map(|s| s.as_str()));
        self.output.extend(n.output.iter().map(|s| s.as_str()));
        self.attribute = &n.attribute;
        self.name = n.name();
        self.op_type = n.op_type();
        self.domain = n.domain();
        self.overload = n.overload();
    }

    /// Empties this head, in place.
    pub fn clear(&mut self) {
        self.input.clear();
        self.output.clear();
        self.attribute = &[];
        self.name = "";
        self.op_type = "";
        self.domain = "";
        self.overload = "";
    }

    /// `name`, or "" when absent.
    #[inline]
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// `op_type`, or "" when absent.
    #[inline]
    pub fn op_type(&self) -> &'a str {
        self.op_type
    }

    /// `domain`, or "" when absent.
    #[inline]
    pub fn domain(&self) -> &'a str {
        self.domain
    }

    /// `overload`, or "" when absent.
    #[inline]
    pub fn overload(&self) -> &'a str {
        self.overload
    }
}

impl NodeFields for NodeHead<'_> {
    #[inline]
    fn node_name(&self) -> &str {
        self.name
    }
    #[inline]
    fn node_op_type(&self) -> &str {
        self.op_type
    }
    #[inline]
    fn node_domain(&self) -> &str {
        self.domain
    }
    fn inputs(&self) -> impl ExactSizeIterator<Item = &str> {
        self.input.iter().copied()
    }
    fn outputs(&self) -> impl ExactSizeIterator<Item = &str> {
        self.output.iter().copied()
    }
    fn attributes(&self) -> &[AttributeProto] {
        self.attribute
    }
}

/// Whether `number` is one of NodeProto's string fields: 1 input and
/// 2 output (repeated), 3 name, 4 op_type, 6 doc_string, 7 domain,
/// 8 overload. The scanner's and the decoder's fast paths read exactly these.
#[inline]
pub(crate) const fn is_string_field(number: u64) -> bool {
    const INPUT: u64 = F::INPUT as u64;
    const OUTPUT: u64 = F::OUTPUT as u64;
    const NAME: u64 = F::NAME as u64;
    const OP_TYPE: u64 = F::OP_TYPE as u64;
    const DOC_STRING: u64 = F::DOC_STRING as u64;
    const DOMAIN: u64 = F::DOMAIN as u64;
    const OVERLOAD: u64 = F::OVERLOAD as u64;
    matches!(
        number,
        INPUT | OUTPUT | NAME | OP_TYPE | DOC_STRING | DOMAIN | OVERLOAD
    )
}

/// Decodes one length-delimited string field: read in place from the
/// buffer's current chunk (inline when short, no intermediate `String`);
/// through prost's own string decoder when the text spans chunks or is not
/// what it should be (prost's errors). Nodes of a model's main graph take a
/// faster path still (`decode.rs`).
pub(super) fn merge_str(
    wire_type: WireType,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<Str, DecodeError> {
    if wire_type == WireType::LengthDelimited {
        let chunk = buf.chunk();
        let mut at = 0;
        if let Ok(len) = crate::decode::varint::read(chunk, &mut at, chunk.len()) {
            let text = usize::try_from(len)
                .ok()
                .and_then(|len| chunk.get(at..at.checked_add(len)?))
                .and_then(|bytes| crate::decode::utf8(bytes).ok());
            if let Some(text) = text {
                let (text, used) = (Str::from(text), at + text.len());
                buf.advance(used);
                return Ok(text);
            }
        }
    }
    let mut text = String::new();
    encoding::string::merge(wire_type, &mut text, buf, ctx)?;
    Ok(Str::from(text))
}

pub(super) fn encode_str(tag: u32, text: &str, buf: &mut impl BufMut) {
    encoding::encode_key(tag, WireType::LengthDelimited, buf);
    encoding::encode_varint(text.len() as u64, buf);
    buf.put_slice(text.as_bytes());
}

pub(super) fn str_len(tag: u32, text: &str) -> usize {
    encoding::key_len(tag) + encoding::encoded_len_varint(text.len() as u64) + text.len()
}

impl prost::Message for NodeProto {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        // Field-number order, as protobuf's own serializers write it.
        for text in &self.input {
            encode_str(1, text, buf);
        }
        for text in &self.output {
            encode_str(2, text, buf);
        }
        if let Some(text) = &self.name {
            encode_str(3, text, buf);
        }
        if let Some(text) = &self.op_type {
            encode_str(4, text, buf);
        }
        encoding::message::encode_repeated(5, &self.attribute, buf);
        if let Some(text) = self.doc_string_opt() {
            encode_str(6, text, buf);
        }
        if let Some(text) = &self.domain {
            encode_str(7, text, buf);
        }
        if let Some(text) = self.overload_opt() {
            encode_str(8, text, buf);
        }
        encoding::message::encode_repeated(9, self.metadata_props(), buf);
        encoding::message::encode_repeated(10, self.device_configurations(), buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            t if is_string_field(u64::from(t)) => {
                let text = merge_str(wire_type, buf, ctx)?;
                self.set_string(t, text);
            }
            F::ATTRIBUTE => {
                encoding::message::merge_repeated(wire_type, &mut self.attribute, buf, ctx)?
            }
            F::METADATA_PROPS => encoding::message::merge_repeated(
                wire_type,
                &mut self.extras_mut().metadata_props,
                buf,
                ctx,
            )?,
            F::DEVICE_CONFIGURATIONS => encoding::message::merge_repeated(
                wire_type,
                &mut self.extras_mut().device_configurations,
                buf,
                ctx,
            )?,
            _ => encoding::skip_field(wire_type, tag, buf, ctx)?,
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        let strs =
            |tag: u32, texts: &[Str]| -> usize { texts.iter().map(|t| str_len(tag, t)).sum() };
        let opt = |tag: u32, text: Option<&str>| text.map_or(0, |t| str_len(tag, t));
        strs(1, &self.input)
            + strs(2, &self.output)
            + opt(3, self.name.as_deref())
            + opt(4, self.op_type.as_deref())
            + encoding::message::encoded_len_repeated(5, &self.attribute)
            + opt(6, self.doc_string_opt())
            + opt(7, self.domain.as_deref())
            + opt(8, self.overload_opt())
            + encoding::message::encoded_len_repeated(9, self.metadata_props())
            + encoding::message::encoded_len_repeated(10, self.device_configurations())
    }

    fn clear(&mut self) {
        *self = NodeProto::default();
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
        #[prost(string, repeated, tag = "1")]
        input: Vec<String>,
        #[prost(string, repeated, tag = "2")]
        output: Vec<String>,
        #[prost(string, optional, tag = "3")]
        name: Option<String>,
        #[prost(string, optional, tag = "4")]
        op_type: Option<String>,
        #[prost(string, optional, tag = "7")]
        domain: Option<String>,
        #[prost(string, optional, tag = "8")]
        overload: Option<String>,
        #[prost(message, repeated, tag = "5")]
        attribute: Vec<AttributeProto>,
        #[prost(string, optional, tag = "6")]
        doc_string: Option<String>,
        #[prost(message, repeated, tag = "9")]
        metadata_props: Vec<StringStringEntryProto>,
        #[prost(message, repeated, tag = "10")]
        device_configurations: Vec<NodeDeviceConfigurationProto>,
    }

    fn sample() -> Generated {
        Generated {
            input: vec![
                "x".into(),
                String::new(),
                "a name longer than twenty-four bytes".into(),
            ],
            output: vec!["y".into()],
            name: Some("n0".into()),
            op_type: Some("Conv".into()),
            domain: Some("ai.onnx.ml.experimental.long.domain".into()),
            overload: Some("o".into()),
            attribute: vec![AttributeProto {
                name: Some("alpha".into()),
                f: Some(0.5),
                r#type: Some(1),
                ..Default::default()
            }],
            doc_string: Some("d\u{e9}j\u{e0} vu".into()),
            metadata_props: vec![StringStringEntryProto {
                key: Some("k".into()),
                value: Some("v".into()),
            }],
            device_configurations: vec![NodeDeviceConfigurationProto {
                configuration_id: Some("c".into()),
                pipeline_stage: Some(2),
                ..Default::default()
            }],
        }
    }

    #[test]
    fn same_bytes_as_prost_generated() {
        let reference = sample();
        let bytes = reference.encode_to_vec();
        let node = NodeProto::decode(bytes.as_slice()).expect("decode");
        assert_eq!(
            node.input.as_slice(),
            ["x", "", "a name longer than twenty-four bytes"]
        );
        assert_eq!(node.name(), "n0");
        assert_eq!(node.overload(), "o");
        assert_eq!(node.attribute, reference.attribute);
        assert_eq!(node.encoded_len(), bytes.len());
        assert_eq!(node.encode_to_vec(), bytes);
        let back = Generated::decode(node.encode_to_vec().as_slice()).expect("decode back");
        assert_eq!(back, reference);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn compact_layout() {
        assert_eq!(std::mem::size_of::<NodeProto>(), 192);
        let node = NodeProto::decode(sample().encode_to_vec().as_slice()).expect("decode");
        assert!(node.input.spilled(), "three inputs do not fit inline");
        let mut two = NodeProto::default();
        two.input.extend(["a".into(), "b".into()]);
        two.output.push("c".into());
        assert!(!two.input.spilled() && !two.output.spilled());
    }

    #[test]
    fn absent_fields_and_unknown_fields() {
        // An unknown field (number 99, varint) is skipped.
        let node = NodeProto::decode(&[0x98, 0x06, 0x01][..]).expect("decode");
        assert_eq!(node, NodeProto::default());
        assert_eq!(
            (node.name(), node.domain(), node.doc_string()),
            ("", "", "")
        );
        assert!(node.name.is_none());
    }

    #[test]
    fn refuses_bad_utf8_and_wire_types() {
        // input = b"\xff"
        assert!(NodeProto::decode(&[0x0a, 0x01, 0xff][..]).is_err());
        // name as a varint
        assert!(NodeProto::decode(&[0x18, 0x01][..]).is_err());
        // op_type length past the end
        assert!(NodeProto::decode(&[0x22, 0x05, b'A'][..]).is_err());
    }
}
