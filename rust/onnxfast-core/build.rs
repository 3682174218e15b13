//! Compiles `proto/onnx.proto` without a system `protoc`: `protox` parses the
//! file in-process, `prost-build` generates the Rust types, and this script
//! also emits the field table the wire scanner (`src/decode/scan.rs`,
//! `walk.rs`) walks.

use std::collections::BTreeMap;
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use prost_build::Config;
use prost_types::{
    field_descriptor_proto::{Label, Type},
    DescriptorProto, FileDescriptorSet,
};

type BuildResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Large optional messages most values leave out are boxed, so the common
/// case pays a pointer instead of their whole struct: an AttributeProto
/// takes ~300 bytes instead of ~1.7 KB, a sparse tensor ~60 instead of ~700.
/// (Also the memory projection's view: a boxed field allocates its struct.)
const BOXED: &[&str] = &[
    ".onnx.AttributeProto.t",
    ".onnx.AttributeProto.g",
    ".onnx.AttributeProto.sparse_tensor",
    ".onnx.AttributeProto.tp",
    ".onnx.SparseTensorProto.values",
    ".onnx.SparseTensorProto.indices",
];

/// How the hand-written `NodeProto` (src/proto/node.rs) stores its fields,
/// for the memory projection: strings are `Str`s (inline up to 24 bytes),
/// inputs and outputs `SmallVec`s keeping 2 and 1 names inline, and fields
/// 6, 8, 9 and 10 live in one `Box<NodeExtras>` allocated on first use.
const NODE_SPILL: &[(&str, u8)] = &[("input", 2), ("output", 1)];
const NODE_EXTRAS: &[&str] = &[
    "doc_string",
    "overload",
    "metadata_props",
    "device_configurations",
];

/// The main graph's lists a lazily loaded model decodes on touch (the
/// fields of `decode::lazy::GraphLists`, which the binding's getters name:
/// a list missing there does not compile; one missing here reads empty and
/// fails the field-parity tests).
const GRAPH_LISTS: &[&str] = &["node", "initializer", "value_info", "sparse_initializer"];

fn main() -> BuildResult<()> {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    // The crate normally lives at rust/onnxfast-core inside the repository;
    // a packaged copy carries the proto next to its manifest instead.
    let candidates = [manifest.join("../../proto"), manifest.join("proto")];
    let proto_dir = candidates
        .iter()
        .find(|dir| dir.join("onnx.proto").is_file())
        .ok_or("proto/onnx.proto not found")?
        .canonicalize()?;
    let proto_file = proto_dir.join("onnx.proto");
    println!("cargo:rerun-if-changed={}", proto_file.display());

    let fds = protox::compile([&proto_file], [&proto_dir])?;
    write_schema(&fds)?;
    write_presence(&fds)?;
    write_field_table(&fds)?;

    let mut config = Config::new();
    for path in BOXED {
        config.boxed(path);
    }
    config
        // Every bytes field (raw_data, s, strings, string_data, string_keys)
        // becomes a `bytes::Bytes` slice of the source buffer: no copies.
        .bytes(["."])
        // NodeProto is written by hand (src/proto/node.rs): its strings are
        // small-string-optimised, so most names take no heap allocation.
        .extern_path(".onnx.NodeProto", "crate::proto::NodeProto")
        .compile_fds(fds)?;
    Ok(())
}

/// One message type as the scanner needs it.
struct Msg {
    /// Name as written in the proto, with enclosing messages: `TypeProto.Tensor`.
    name: String,
    fields: Vec<Field>,
    slots: Vec<SlotDecl>,
}

struct Field {
    number: u32,
    name: String,
    kind: String,
    repeated: bool,
    /// How its text is stored (`Text::...`).
    text: &'static str,
    /// Indexes of the containers (in `Msg::slots`) one occurrence adds to.
    slots: Vec<usize>,
}

/// A container of a decoded message: `(Slot constructor, element type)`.
type SlotDecl = (String, String);

fn collect(
    msg: &DescriptorProto,
    prefix: &str,
    rust_mod: &str,
    out: &mut Vec<(String, String, DescriptorProto)>,
) {
    let name = msg.name().to_string();
    let full = if prefix.is_empty() {
        name.clone()
    } else {
        format!("{prefix}.{name}")
    };
    let rust_path = if rust_mod.is_empty() {
        name.clone()
    } else {
        format!("{rust_mod}::{name}")
    };
    out.push((full.clone(), rust_path, msg.clone()));
    let child_mod = if rust_mod.is_empty() {
        snake(&name)
    } else {
        format!("{rust_mod}::{}", snake(&name))
    };
    for nested in &msg.nested_type {
        collect(nested, &full, &child_mod, out);
    }
}

/// prost's module name for a message: `TensorShapeProto` -> `tensor_shape_proto`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(*c);
        }
    }
    out
}

fn write_schema(fds: &FileDescriptorSet) -> BuildResult<()> {
    let mut all = Vec::new();
    for file in &fds.file {
        for msg in &file.message_type {
            collect(msg, "", "", &mut all);
        }
    }
    let index: BTreeMap<String, usize> = all
        .iter()
        .enumerate()
        .map(|(i, (full, _, _))| (format!(".onnx.{full}"), i))
        .collect();

    let mut msgs = Vec::new();
    for (full, _, desc) in &all {
        let mut fields = Vec::new();
        let mut slots: Vec<SlotDecl> = Vec::new();
        let is_node = full == "NodeProto";
        let mut extras_slot = None;
        for f in &desc.field {
            let kind = match f.r#type() {
                Type::Int32 => "Kind::Int32".to_string(),
                Type::Int64 => "Kind::Int64".to_string(),
                Type::Uint64 => "Kind::Uint64".to_string(),
                Type::Enum => "Kind::Enum".to_string(),
                Type::Float => "Kind::Float".to_string(),
                Type::Double => "Kind::Double".to_string(),
                Type::String => "Kind::String".to_string(),
                Type::Bytes => "Kind::Bytes".to_string(),
                Type::Message => {
                    let target = index
                        .get(f.type_name())
                        .ok_or_else(|| format!("unknown message type {}", f.type_name()))?;
                    format!("Kind::Message({target})")
                }
                other => {
                    return Err(format!("field type {other:?} is not used by onnx.proto").into())
                }
            };
            let repeated = f.label() == Label::Repeated;
            let elem = match f.r#type() {
                Type::Int32 | Type::Enum => "i32".to_string(),
                Type::Int64 => "i64".to_string(),
                Type::Uint64 => "u64".to_string(),
                Type::Float => "f32".to_string(),
                Type::Double => "f64".to_string(),
                Type::String if is_node => "crate::proto::Str".to_string(),
                Type::String => "::std::string::String".to_string(),
                Type::Bytes => "::bytes::Bytes".to_string(),
                _ => {
                    let target = index
                        .get(f.type_name())
                        .ok_or_else(|| format!("unknown message type {}", f.type_name()))?;
                    format!("crate::proto::{}", all[*target].1)
                }
            };
            let text = match f.r#type() {
                Type::String if is_node => "Text::Compact",
                Type::String => "Text::String",
                _ => "Text::None",
            };
            let mut field_slots = Vec::new();
            let boxed = BOXED.contains(&format!(".onnx.{full}.{}", f.name()).as_str());
            if repeated {
                let spill = NODE_SPILL
                    .iter()
                    .find(|(name, _)| is_node && *name == f.name());
                let ctor = match spill {
                    Some((_, inline)) => format!("Slot::spill({inline}, "),
                    None => "Slot::vec(".to_string(),
                };
                field_slots.push(slots.len());
                slots.push((ctor, elem));
            } else if boxed {
                field_slots.push(slots.len());
                slots.push(("Slot::once(".to_string(), elem));
            }
            if is_node && NODE_EXTRAS.contains(&f.name()) {
                let slot = *extras_slot.get_or_insert_with(|| {
                    slots.push((
                        "Slot::once(".to_string(),
                        "crate::proto::NodeExtras".to_string(),
                    ));
                    slots.len() - 1
                });
                field_slots.push(slot);
            }
            fields.push(Field {
                number: u32::try_from(f.number())?,
                name: f.name().to_string(),
                kind,
                repeated,
                text,
                slots: field_slots,
            });
        }
        fields.sort_by_key(|f| f.number);
        msgs.push(Msg {
            name: full.clone(),
            fields,
            slots,
        });
    }

    let mut src = String::new();
    writeln!(
        src,
        "// @generated by build.rs from proto/onnx.proto; do not edit."
    )?;
    writeln!(
        src,
        "/// Every message of onnx.proto, indexed by [`MessageId`]."
    )?;
    writeln!(src, "pub static MESSAGES: &[MessageSchema] = &[")?;
    for m in &msgs {
        let max = m.fields.iter().map(|f| f.number).max().unwrap_or(0);
        let mut lookup = vec![0u8; max as usize + 1];
        for (i, f) in m.fields.iter().enumerate() {
            lookup[f.number as usize] = u8::try_from(i + 1)?;
        }
        writeln!(src, "    MessageSchema {{")?;
        writeln!(src, "        name: {:?},", m.name)?;
        writeln!(src, "        fields: &[")?;
        for f in &m.fields {
            writeln!(
                src,
                "            FieldSchema {{ number: {}, name: {:?}, kind: {}, repeated: {}, text: {}, slots: &{:?} }},",
                f.number, f.name, f.kind, f.repeated, f.text, f.slots
            )?;
        }
        writeln!(src, "        ],")?;
        writeln!(src, "        slots: &[")?;
        for (ctor, elem) in &m.slots {
            writeln!(
                src,
                "            {ctor}::core::mem::size_of::<{elem}>() as u64),"
            )?;
        }
        writeln!(src, "        ],")?;
        writeln!(src, "        by_number: &{lookup:?},")?;
        writeln!(src, "    }},")?;
    }
    writeln!(src, "];")?;
    writeln!(
        src,
        "/// Field numbers of every message, by message (`fields::graph_proto::NODE`)."
    )?;
    writeln!(src, "pub mod fields {{")?;
    for m in &msgs {
        writeln!(src, "    /// `{}`", m.name)?;
        writeln!(src, "    pub mod {} {{", snake(&m.name.replace('.', "")))?;
        for f in &m.fields {
            writeln!(src, "        /// `{}`", f.name)?;
            writeln!(
                src,
                "        pub const {}: u32 = {};",
                f.name.to_ascii_uppercase(),
                f.number
            )?;
        }
        writeln!(src, "    }}")?;
    }
    writeln!(src, "}}")?;
    writeln!(src, "/// Index of each message in [`MESSAGES`].")?;
    writeln!(src, "pub mod ids {{")?;
    for (i, m) in msgs.iter().enumerate() {
        let konst = snake(&m.name.replace('.', "")).to_ascii_uppercase();
        writeln!(src, "    /// `{}`", m.name)?;
        writeln!(src, "    pub const {konst}: usize = {i};")?;
    }
    writeln!(src, "}}")?;
    let max_fields = msgs.iter().map(|m| m.fields.len()).max().unwrap_or(0);
    writeln!(
        src,
        "/// The largest number of fields any message declares."
    )?;
    writeln!(src, "pub const MAX_FIELDS: usize = {max_fields};")?;

    let out = PathBuf::from(env::var("OUT_DIR")?).join("schema.rs");
    fs::write(out, src)?;
    Ok(())
}

/// prost's type name for a proto name: `tensor_type` -> `TensorType`.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// The Rust path of a message or enum type name (`.onnx.TensorProto.DataLocation`
/// -> `crate::proto::tensor_proto::DataLocation`).
fn rust_type(type_name: &str) -> String {
    let parts: Vec<&str> = type_name.trim_start_matches(".onnx.").split('.').collect();
    let mut path = String::from("crate::proto::");
    for outer in &parts[..parts.len().saturating_sub(1)] {
        path.push_str(&snake(outer));
        path.push_str("::");
    }
    path.push_str(parts.last().copied().unwrap_or_default());
    path
}

/// Generates `presence.rs`: `impl Presence` for every message, protobuf's
/// `HasField` for each singular field: set (a message or scalar present),
/// the oneof holding that member, and, for enums (closed in proto2), a
/// value the enum knows (an unknown one is kept aside by protobuf, so
/// `HasField` is false). Repeated fields have no presence (`None`).
fn write_presence(fds: &FileDescriptorSet) -> BuildResult<()> {
    let mut all = Vec::new();
    for file in &fds.file {
        for msg in &file.message_type {
            collect(msg, "", "", &mut all);
        }
    }
    let mut src = String::from("// @generated by build.rs from proto/onnx.proto; do not edit.\n");
    for (full, rust_path, desc) in &all {
        let is_node = full == "NodeProto";
        let module = full.split('.').map(snake).collect::<Vec<_>>().join("::");
        let mut arms = String::new();
        for f in &desc.field {
            if f.label() == Label::Repeated {
                continue;
            }
            let ident = match f.name() {
                "type" => "r#type".to_string(),
                other => other.to_string(),
            };
            let test = if let Some(oneof) = f.oneof_index {
                let oneof = desc
                    .oneof_decl
                    .get(usize::try_from(oneof)?)
                    .ok_or("oneof index out of range")?
                    .name();
                format!(
                    "matches!(self.{}, Some(crate::proto::{module}::{}::{}(_)))",
                    snake(oneof),
                    camel(oneof),
                    camel(f.name())
                )
            } else if is_node && NODE_EXTRAS.contains(&f.name()) {
                format!("self.{}_opt().is_some()", f.name())
            } else if f.r#type() == Type::Enum {
                format!(
                    "self.{ident}.is_some_and(|v| {}::try_from(v).is_ok())",
                    rust_type(f.type_name())
                )
            } else {
                format!("self.{ident}.is_some()")
            };
            writeln!(arms, "            {:?} => {test},", f.name())?;
        }
        writeln!(src, "impl Presence for crate::proto::{rust_path} {{")?;
        if arms.is_empty() {
            writeln!(src, "    fn has_field(&self, _: &str) -> Option<bool> {{")?;
            writeln!(src, "        None")?;
        } else {
            writeln!(
                src,
                "    fn has_field(&self, field: &str) -> Option<bool> {{"
            )?;
            writeln!(src, "        Some(match field {{")?;
            src.push_str(&arms);
            writeln!(src, "            _ => return None,")?;
            writeln!(src, "        }})")?;
        }
        writeln!(src, "    }}")?;
        writeln!(src, "}}")?;
    }
    let out = PathBuf::from(env::var("OUT_DIR")?).join("presence.rs");
    fs::write(out, src)?;
    Ok(())
}

/// A field name as a Rust identifier (`type` -> `r#type`, as prost writes it).
fn ident(name: &str) -> String {
    match name {
        "type" | "ref" | "in" | "fn" | "mod" | "use" | "match" => format!("r#{name}"),
        other => other.to_string(),
    }
}

/// Scalar Rust type of a numeric field.
fn scalar_type(t: Type) -> BuildResult<&'static str> {
    Ok(match t {
        Type::Int32 | Type::Enum => "i32",
        Type::Int64 => "i64",
        Type::Uint64 => "u64",
        Type::Float => "f32",
        Type::Double => "f64",
        other => return Err(format!("{other:?} is not a numeric field type").into()),
    })
}

/// A message or enum's path under `proto::` (`.onnx.TypeProto.Tensor` ->
/// `type_proto::Tensor`), as the tokens the binding puts after `proto::`.
fn proto_path(type_name: &str) -> String {
    rust_type(type_name)
        .trim_start_matches("crate::proto::")
        .to_string()
}

/// Generates `field_table.rs`: the macro `onnx_fields!`, which gives, for
/// each message of onnx.proto (by its name in the proto, `"TensorProto"`,
/// `"TypeProto.Tensor"`), its fields sorted into the categories a binding
/// exposes differently (scalars, enums, strings, bytes, lists of each,
/// messages, repeated messages, oneof members), and hands them to a macro
/// of the caller's: `onnx_fields!("NodeProto", callback, {head} {tail})`
/// expands to `callback! { head { scalars: [...], ... } tail }`. The Python
/// classes (`onnxfast-py/src/messages.rs`) are made from it, so a field
/// added to onnx.proto appears in Python without a hand-kept list.
fn write_field_table(fds: &FileDescriptorSet) -> BuildResult<()> {
    let mut all = Vec::new();
    for file in &fds.file {
        for msg in &file.message_type {
            collect(msg, "", "", &mut all);
        }
    }
    let mut src = String::from("// @generated by build.rs from proto/onnx.proto; do not edit.\n");
    src.push_str(
        "/// The fields of each onnx.proto message by category, for a binding's\n\
         /// classes: `onnx_fields!(\"TensorProto\", callback, {head} {tail})`\n\
         /// expands to `callback! { head { scalars: [...], ... } tail }`\n\
         /// (generated by build.rs; message and enum types are paths under\n\
         /// `proto::`, in parentheses).\n\
         #[macro_export]\nmacro_rules! onnx_fields {\n",
    );
    for (full, _, desc) in &all {
        let is_node = full == "NodeProto";
        let is_graph = full == "GraphProto";
        let module = full.split('.').map(snake).collect::<Vec<_>>().join("::");
        let mut cat: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut oneofs: Vec<Vec<String>> = vec![Vec::new(); desc.oneof_decl.len()];
        for f in &desc.field {
            let id = ident(f.name());
            let t = f.r#type();
            if let Some(index) = f.oneof_index {
                let index = usize::try_from(index)?;
                let group = desc
                    .oneof_decl
                    .get(index)
                    .ok_or("oneof index out of range")?
                    .name();
                let variant = format!("{module}::{}::{}", camel(group), camel(f.name()));
                let group = ident(group);
                let (category, entry) = match t {
                    Type::String => ("oneof_strs", format!("{id} => {group}: ({variant})")),
                    Type::Message => (
                        "oneof_messages",
                        format!(
                            "{id}: ({}) => {group}: ({variant})",
                            proto_path(f.type_name())
                        ),
                    ),
                    Type::Bytes | Type::Enum => {
                        return Err(format!("oneof member {full}.{} of type {t:?}", f.name()).into())
                    }
                    other => (
                        "oneof_scalars",
                        format!("{id}: {} => {group}: ({variant})", scalar_type(other)?),
                    ),
                };
                cat.entry(category).or_default().push(entry);
                if let Some(members) = oneofs.get_mut(index) {
                    members.push(format!("{id} ({variant})"));
                }
                continue;
            }
            let repeated = f.label() == Label::Repeated;
            let (category, entry) = match (repeated, t) {
                (true, Type::Message) if is_graph && GRAPH_LISTS.contains(&f.name()) => {
                    ("graph_lists", id)
                }
                (true, Type::Message) if is_node && NODE_EXTRAS.contains(&f.name()) => {
                    ("method_lists", id)
                }
                (true, Type::Message) => ("lists", id),
                (true, Type::String) => ("str_lists", id),
                (true, Type::Bytes) => ("bytes_lists", id),
                (true, other) => ("num_lists", format!("{id}: {}", scalar_type(other)?)),
                (false, Type::Message) => {
                    ("messages", format!("{id}: ({})", proto_path(f.type_name())))
                }
                (false, Type::String) => ("strs", id),
                (false, Type::Bytes) => ("bytes", id),
                (false, Type::Enum) => ("enums", id),
                (false, other) => ("scalars", format!("{id}: {}", scalar_type(other)?)),
            };
            cat.entry(category).or_default().push(entry);
        }
        writeln!(
            src,
            "    ({full:?}, $callback:ident, {{ $($head:tt)* }} {{ $($tail:tt)* }}) => {{"
        )?;
        writeln!(src, "        $callback! {{ $($head)* {{")?;
        for category in [
            "scalars",
            "enums",
            "strs",
            "bytes",
            "str_lists",
            "num_lists",
            "bytes_lists",
            "messages",
            "lists",
            "method_lists",
            "graph_lists",
            "oneof_scalars",
            "oneof_strs",
            "oneof_messages",
        ] {
            let entries = cat.get(category).map(|v| v.join(", ")).unwrap_or_default();
            writeln!(src, "            {category}: [{entries}],")?;
        }
        let groups: Vec<String> = desc
            .oneof_decl
            .iter()
            .zip(&oneofs)
            .map(|(decl, members)| format!("{}: [{}]", ident(decl.name()), members.join(", ")))
            .collect();
        writeln!(src, "            oneofs: [{}],", groups.join(", "))?;
        writeln!(src, "        }} $($tail)* }}")?;
        writeln!(src, "    }};")?;
    }
    src.push_str("}\n");
    let out = PathBuf::from(env::var("OUT_DIR")?).join("field_table.rs");
    fs::write(out, src)?;
    Ok(())
}
