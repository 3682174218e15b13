//! Saving a model with its weights moved to external data files, as
//! `onnx.save_model(onnx.load(path), out, save_as_external_data=True,
//! all_tensors_to_one_file=..., location=..., size_threshold=...,
//! convert_attribute=...)` writes them: the same tensors chosen, in the same
//! order, at the same offsets, so the files come out byte for byte as
//! onnx's.
//!
//! onnx's rules, which this follows:
//! - the tensors considered are its `_get_all_tensors`: each graph's
//!   initializers, then those of its subgraphs (a node attribute whose
//!   declared `type` is GRAPH or GRAPHS), depth first; then the attribute
//!   tensors (`t`, `tensors`) of the main graph's nodes, their subgraphs'
//!   and the functions' nodes. Sparse tensors are not among them;
//! - a tensor is moved when it has `raw_data` and `sys.getsizeof(raw_data)`
//!   (its length plus the 33-byte header of a CPython `bytes` object) is at
//!   least `size_threshold`; attribute tensors only with `convert_attribute`;
//! - the moved tensors are written one after another from offset 0 of
//!   their file, with no padding, and each gets the entries `location`,
//!   `offset`, `length`;
//! - with one file per tensor ([`DataFiles::PerTensor`]), a tensor's file
//!   is named after the tensor, and tensors of the same name share it.
//!
//! Where onnx's per-tensor files go wrong, this does not: onnx takes any
//! name without `<>:;,?"*|/` as a file name, so `..`, `.`, names longer
//! than the file system takes and names with control characters fail its
//! save halfway (data files written, no model); a name that is the model
//! file's own is overwritten by the model; names differing only in case
//! overwrite each other on a case-insensitive file system; a name onnx
//! refuses gets a random uuid. Here a name that is not a plain file name
//! ([`is_plain_file_name`]) or that the caller refuses (the model file, an
//! existing folder) gets `<stem>.<k>.data` instead, `k` counting those from
//! 0, so the same model saves to the same files every time; names equal
//! but for case share the first one's file.
//!
//! Beyond onnx, `alignment` (a power of two) starts each moved tensor of at
//! least that many bytes at a multiple of it, zeros before it (4096: each
//! on pages of its own, which a runtime can map without its neighbours);
//! smaller tensors stay packed.
//!
//! External tensors of the source are first made inline, as `onnx.load`
//! does by default ([`super::inline_all`]), so a moved tensor's bytes come
//! from the source's data files (slices of their maps, never copied).

use bytes::Bytes;

use crate::proto::{
    attribute_proto::AttributeType, tensor_proto::DataLocation, AttributeProto, GraphProto,
    ModelProto, NodeProto, StringStringEntryProto, TensorProto,
};

/// What `sys.getsizeof` adds to a `bytes` object's length (CPython, 64-bit):
/// onnx compares that sum with `size_threshold`.
pub const BYTES_OBJECT_OVERHEAD: u64 = 33;

/// Which data file each moved tensor goes to.
#[derive(Clone, Copy)]
pub enum DataFiles<'a> {
    /// Every moved tensor in the file at this location, relative to the
    /// saved model's folder (onnx's `all_tensors_to_one_file=True`).
    One(&'a str),
    /// Each moved tensor in a file of the saved model's folder named after
    /// it (onnx's `all_tensors_to_one_file=False`): its name where that is
    /// a plain file name and `usable` takes it, else `<stem>.<k>.data`
    /// (see the module docs).
    PerTensor {
        stem: &'a str,
        usable: &'a dyn Fn(&str) -> bool,
    },
}

impl std::fmt::Debug for DataFiles<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataFiles::One(location) => f.debug_tuple("One").field(location).finish(),
            DataFiles::PerTensor { stem, .. } => {
                f.debug_struct("PerTensor").field("stem", stem).finish()
            }
        }
    }
}

/// Where and which tensors go (onnx's `save_model` arguments).
#[derive(Debug, Clone, Copy)]
pub struct ExternalSave<'a> {
    /// The data file or files.
    pub files: DataFiles<'a>,
    /// onnx's `size_threshold` (a negative one moves every tensor with
    /// `raw_data`).
    pub size_threshold: i64,
    /// Move attribute tensors (`Constant`'s value, ...) too.
    pub convert_attribute: bool,
    /// Offsets of moved tensors of at least this many bytes are multiples
    /// of it (a power of two; 1: packed, as onnx writes them).
    pub alignment: u64,
}

/// One data file to write: its location (relative to the saved model's
/// folder) and its content, the concatenation of `chunks`.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    pub location: String,
    pub chunks: Vec<Bytes>,
    /// Its length so far.
    end: u64,
}

/// The longest tensor name taken as its own file name, in bytes: room is
/// left under the usual 255-byte limit for the temporary name the file is
/// written under (`.<name>.<pid>.tmp`).
pub const MAX_TENSOR_FILE_NAME: usize = 200;

/// Whether `name` can be a file of the model's folder as it is: not empty,
/// not `.` or `..`, at most [`MAX_TENSOR_FILE_NAME`] bytes, without a path
/// separator (`/`, `\`), a control character, or a character onnx refuses
/// in such names (`<>:;,?"*|`).
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= MAX_TENSOR_FILE_NAME
        && !name
            .chars()
            .any(|c| c.is_control() || "<>:;,?\"*|/\\".contains(c))
}

/// The largest `alignment` taken (1 GiB).
pub const MAX_ALIGNMENT: u64 = 1 << 30;

/// Zeros that padding chunks are slices of.
static ZEROS: [u8; 64 << 10] = [0; 64 << 10];

impl ExternalSave<'_> {
    fn moves(&self, raw: &Bytes) -> bool {
        let size = i128::from(raw.len() as u64) + i128::from(BYTES_OBJECT_OVERHEAD);
        size >= i128::from(self.size_threshold)
    }
}

/// Rewrites the tensors of `model` (whose external tensors are inline
/// already) that `how` moves: their `raw_data` taken out, `data_location`
/// EXTERNAL and `external_data` naming their file and their offset in it.
/// Returns the data files in the order they are first written to, each
/// with its chunks (the moved bytes, and zeros where `how.alignment` pads);
/// none when no tensor moves.
///
/// `how.alignment` must be a power of two no larger than [`MAX_ALIGNMENT`]
/// (callers check; anything else is taken as 1).
pub fn move_to_external(model: &mut ModelProto, how: &ExternalSave<'_>) -> Vec<DataFile> {
    let alignment = match how.alignment {
        a if a.is_power_of_two() && a <= MAX_ALIGNMENT => a,
        _ => 1,
    };
    let mut files = Files::new(how.files);
    let mut visit = |t: &mut TensorProto, is_initializer: bool| {
        if !(is_initializer || how.convert_attribute) {
            return;
        }
        let Some(raw) = t.raw_data.take_if(|raw| how.moves(raw)) else {
            return;
        };
        let file = files.of(t.name());
        let length = raw.len() as u64;
        if alignment > 1 && length >= alignment {
            let mut pad = file.end.next_multiple_of(alignment) - file.end;
            file.end += pad;
            while pad > 0 {
                let n = pad.min(ZEROS.len() as u64);
                file.chunks.push(Bytes::from_static(&ZEROS[..n as usize]));
                pad -= n;
            }
        }
        t.data_location = Some(DataLocation::External as i32);
        t.external_data = vec![
            entry("location", file.location.clone()),
            entry("offset", file.end.to_string()),
            entry("length", length.to_string()),
        ];
        // The data of a model in memory fits in the address space, so the
        // running sum of its lengths fits in 64 bits.
        file.end = file.end.saturating_add(length);
        file.chunks.push(raw);
    };
    if let Some(graph) = model.graph.as_mut() {
        initializers(graph, &mut |t| visit(t, true));
        attribute_tensors(&mut graph.node, &mut |t| visit(t, false));
    }
    for function in &mut model.functions {
        attribute_tensors(&mut function.node, &mut |t| visit(t, false));
    }
    files.written
}

/// The data files of a save, as tensors are given to them.
struct Files<'a> {
    how: DataFiles<'a>,
    written: Vec<DataFile>,
    /// Per tensor: each file's index by its location folded to lower case.
    by_folded: std::collections::HashMap<String, usize>,
    /// The next `k` of `<stem>.<k>.data`.
    next_fallback: u64,
}

impl<'a> Files<'a> {
    fn new(how: DataFiles<'a>) -> Self {
        Files {
            how,
            written: Vec::new(),
            by_folded: std::collections::HashMap::new(),
            next_fallback: 0,
        }
    }

    /// The file the tensor named `name` goes to.
    fn of(&mut self, name: &str) -> &mut DataFile {
        let location = match self.how {
            DataFiles::One(location) => {
                if self.written.is_empty() {
                    self.written.push(DataFile::new(location.to_string()));
                }
                return &mut self.written[0];
            }
            DataFiles::PerTensor { stem, usable } => {
                if is_plain_file_name(name) && usable(name) {
                    name.to_string()
                } else {
                    loop {
                        let k = self.next_fallback;
                        self.next_fallback += 1;
                        let fallback = format!("{stem}.{k}.data");
                        if usable(&fallback) {
                            break fallback;
                        }
                    }
                }
            }
        };
        let index = match self.by_folded.entry(location.to_lowercase()) {
            std::collections::hash_map::Entry::Occupied(e) => *e.get(),
            std::collections::hash_map::Entry::Vacant(e) => {
                self.written.push(DataFile::new(location));
                *e.insert(self.written.len() - 1)
            }
        };
        &mut self.written[index]
    }
}

impl DataFile {
    fn new(location: String) -> Self {
        DataFile {
            location,
            chunks: Vec::new(),
            end: 0,
        }
    }
}

fn entry(key: &str, value: String) -> StringStringEntryProto {
    StringStringEntryProto {
        key: Some(key.to_string()),
        value: Some(value),
    }
}

/// The subgraphs onnx follows from an attribute: by its declared type.
fn subgraphs(a: &mut AttributeProto) -> &mut [GraphProto] {
    match a.r#type() {
        AttributeType::Graph => a.g_mut().map(std::slice::from_mut).unwrap_or_default(),
        AttributeType::Graphs => a.graphs_mut(),
        _ => &mut [],
    }
}

/// A graph's initializers, then its subgraphs' (onnx's
/// `_get_initializer_tensors_from_graph`). Nesting is bounded by decoding.
fn initializers(g: &mut GraphProto, f: &mut dyn FnMut(&mut TensorProto)) {
    for t in &mut g.initializer {
        f(t);
    }
    for node in &mut g.node {
        for a in &mut node.attribute {
            for sub in subgraphs(a) {
                initializers(sub, f);
            }
        }
    }
}

/// The attribute tensors of `nodes` and of their subgraphs' nodes (onnx's
/// `_get_attribute_tensors_from_graph`).
fn attribute_tensors(nodes: &mut [NodeProto], f: &mut dyn FnMut(&mut TensorProto)) {
    for node in nodes {
        for a in &mut node.attribute {
            if let Some(t) = a.t_mut() {
                f(t);
            }
            for t in a.tensors_mut() {
                f(t);
            }
            for sub in subgraphs(a) {
                attribute_tensors(&mut sub.node, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{FunctionProto, NodeProto};

    fn tensor(name: &str, len: usize) -> TensorProto {
        TensorProto {
            name: Some(name.into()),
            dims: vec![len as i64],
            data_type: Some(2),
            raw_data: Some(Bytes::from(vec![name.as_bytes()[0]; len])),
            ..Default::default()
        }
    }

    fn attribute_with(t: TensorProto) -> AttributeProto {
        let mut a = AttributeProto {
            name: Some("value".into()),
            ..Default::default()
        };
        a.set_type(AttributeType::Tensor);
        a.extras_mut().t = Some(Box::new(t));
        a
    }

    fn graph_attribute(g: GraphProto, declared: AttributeType) -> AttributeProto {
        let mut a = AttributeProto {
            name: Some("body".into()),
            ..Default::default()
        };
        a.set_type(declared);
        a.extras_mut().g = Some(Box::new(g));
        a
    }

    fn node(attribute: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            op_type: Some("X".into()),
            attribute,
            ..Default::default()
        }
    }

    fn of_initializers(initializer: Vec<TensorProto>) -> ModelProto {
        ModelProto {
            graph: Some(GraphProto {
                initializer,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// The first byte of each chunk of the one data file.
    fn locations(files: &[DataFile]) -> Vec<u8> {
        let [file] = files else {
            panic!("{} data files", files.len())
        };
        file.chunks.iter().map(|c| c[0]).collect()
    }

    fn one_file(files: Vec<DataFile>) -> Vec<u8> {
        let [file] = &files[..] else {
            panic!("{} data files", files.len())
        };
        file.chunks.concat()
    }

    #[test]
    fn onnx_order_and_threshold() {
        let sub = GraphProto {
            initializer: vec![tensor("s", 100)],
            node: vec![node(vec![attribute_with(tensor("c", 100))])],
            ..Default::default()
        };
        // A graph attribute declared as a tensor one: onnx does not follow it.
        let hidden = GraphProto {
            initializer: vec![tensor("h", 100)],
            ..Default::default()
        };
        let mut model = ModelProto {
            graph: Some(GraphProto {
                initializer: vec![tensor("a", 100), tensor("b", 66), tensor("d", 67)],
                node: vec![
                    node(vec![attribute_with(tensor("k", 100))]),
                    node(vec![
                        graph_attribute(sub, AttributeType::Graph),
                        graph_attribute(hidden, AttributeType::Tensor),
                    ]),
                ],
                ..Default::default()
            }),
            functions: vec![FunctionProto {
                node: vec![node(vec![attribute_with(tensor("f", 100))])],
                ..Default::default()
            }],
            ..Default::default()
        };
        let how = ExternalSave {
            files: DataFiles::One("w.bin"),
            size_threshold: 100,
            convert_attribute: false,
            alignment: 1,
        };
        // 66 + 33 < 100 <= 67 + 33.
        let chunks = move_to_external(&mut model.clone(), &how);
        assert_eq!(locations(&chunks), b"ads");
        let all = ExternalSave {
            convert_attribute: true,
            ..how
        };
        let chunks = move_to_external(&mut model, &all);
        assert_eq!(locations(&chunks), b"adskcf");
        let d = &model.graph.as_ref().unwrap().initializer[2];
        assert_eq!(d.raw_data, None);
        assert_eq!(d.data_location, Some(DataLocation::External as i32));
        let entries: Vec<(&str, &str)> = d
            .external_data
            .iter()
            .map(|e| (e.key(), e.value()))
            .collect();
        assert_eq!(
            entries,
            [("location", "w.bin"), ("offset", "100"), ("length", "67")]
        );
        let b = &model.graph.as_ref().unwrap().initializer[1];
        assert!(b.raw_data.is_some() && b.external_data.is_empty());
    }

    #[test]
    fn negative_threshold_and_empty_raw_data() {
        let mut model = ModelProto::default();
        assert!(move_to_external(
            &mut model,
            &ExternalSave {
                files: DataFiles::One("w"),
                size_threshold: -1,
                convert_attribute: true,
                alignment: 1,
            }
        )
        .is_empty());
        assert_eq!(model, ModelProto::default());
        let mut model = of_initializers(vec![tensor("e", 0)]);
        model.graph.as_mut().unwrap().initializer[0].raw_data = Some(Bytes::new());
        let chunks = move_to_external(
            &mut model,
            &ExternalSave {
                files: DataFiles::One("w"),
                size_threshold: 0,
                convert_attribute: false,
                alignment: 1,
            },
        );
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].chunks.len(), 1);
        assert!(chunks[0].chunks[0].is_empty());
    }

    #[test]
    fn alignment_pads_large_tensors_only() {
        let mut model = of_initializers(vec![
            tensor("a", 100),
            tensor("b", 5000),
            tensor("c", 10),
            tensor("d", 70_000),
        ]);
        let how = ExternalSave {
            files: DataFiles::One("w"),
            size_threshold: 0,
            convert_attribute: false,
            alignment: 4096,
        };
        let file = one_file(move_to_external(&mut model, &how));
        let offsets = placements(&model);
        // a packed at 0; b (at least 4096 bytes) at 4096; c packed after b;
        // d at the next multiple of 4096.
        assert_eq!(offsets[0], ("w".into(), 0, 100));
        assert_eq!(offsets[1], ("w".into(), 4096, 5000));
        assert_eq!(offsets[2], ("w".into(), 9096, 10));
        assert_eq!(offsets[3], ("w".into(), 12288, 70_000));
        assert_eq!(file.len(), 12288 + 70_000);
        assert!(file[100..4096].iter().all(|&b| b == 0));
        assert!(file[9106..12288].iter().all(|&b| b == 0));
        assert_eq!(&file[4096..9096], &[b'b'; 5000][..]);
        // A padding longer than the zero buffer, and a refused alignment.
        let mut model = of_initializers(vec![tensor("x", 1), tensor("y", 1 << 17)]);
        let wide = ExternalSave {
            alignment: 1 << 17,
            ..how
        };
        let file = one_file(move_to_external(&mut model, &wide));
        assert_eq!(file.len(), (1 << 17) * 2);
        let mut model = of_initializers(vec![tensor("x", 1), tensor("y", 5000)]);
        let odd = ExternalSave {
            alignment: 3000,
            ..how
        };
        assert_eq!(one_file(move_to_external(&mut model, &odd)).len(), 5001);
    }

    /// Each moved tensor's (location, offset, length).
    fn placements(model: &ModelProto) -> Vec<(String, u64, u64)> {
        model
            .graph
            .as_ref()
            .unwrap()
            .initializer
            .iter()
            .map(|t| {
                let get = |k: &str| {
                    t.external_data
                        .iter()
                        .find(|e| e.key() == k)
                        .map(|e| e.value().to_string())
                        .unwrap_or_default()
                };
                let num = |k: &str| get(k).parse::<u64>().unwrap_or(u64::MAX);
                (get("location"), num("offset"), num("length"))
            })
            .collect()
    }

    #[test]
    fn plain_file_names() {
        for plain in ["w", "a.b", "x y", "é", "-", "...", &"n".repeat(200)] {
            assert!(is_plain_file_name(plain), "{plain:?}");
        }
        for not in [
            "",
            ".",
            "..",
            "a/b",
            "a\\b",
            "c:d",
            "a;b",
            "a,b",
            "?",
            "\"",
            "*",
            "|",
            "<",
            ">",
            "a\0b",
            "a\nb",
            "\u{7f}",
            &"n".repeat(201),
        ] {
            assert!(!is_plain_file_name(not), "{not:?}");
        }
    }

    #[test]
    fn one_file_per_tensor() {
        let names = [
            "w",
            "..",
            "a/b",
            "W",
            "w",
            "x y",
            "m.onnx",
            "taken",
            "",
            "v",
            "m.onnx.1.data",
        ];
        let mut model = of_initializers(
            names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let mut t = tensor("z", 10 + i);
                    t.name = Some(n.to_string());
                    t
                })
                .collect(),
        );
        let usable = |n: &str| n != "m.onnx" && n != "taken" && n != "m.onnx.2.data";
        let how = ExternalSave {
            files: DataFiles::PerTensor {
                stem: "m.onnx",
                usable: &usable,
            },
            size_threshold: 0,
            convert_attribute: false,
            alignment: 1,
        };
        let files = move_to_external(&mut model, &how);
        let placed = placements(&model);
        let expected: [(&str, u64, u64); 11] = [
            ("w", 0, 10),
            // Not plain: the next fallback names.
            ("m.onnx.0.data", 0, 11),
            ("m.onnx.1.data", 0, 12),
            // The same file as "w", but for case: shared, after it.
            ("w", 10, 13),
            ("w", 23, 14),
            ("x y", 0, 15),
            // The model file and a folder: refused by the caller; the
            // fallback it refuses is skipped.
            ("m.onnx.3.data", 0, 16),
            ("m.onnx.4.data", 0, 17),
            ("m.onnx.5.data", 0, 18),
            ("v", 0, 19),
            // A tensor whose name is a fallback name shares that file.
            ("m.onnx.1.data", 12, 20),
        ];
        let expected: Vec<(String, u64, u64)> = expected
            .iter()
            .map(|(l, o, n)| (l.to_string(), *o, *n))
            .collect();
        assert_eq!(placed, expected);
        let order: Vec<&str> = files.iter().map(|f| f.location.as_str()).collect();
        assert_eq!(
            order,
            [
                "w",
                "m.onnx.0.data",
                "m.onnx.1.data",
                "x y",
                "m.onnx.3.data",
                "m.onnx.4.data",
                "m.onnx.5.data",
                "v"
            ]
        );
        // Each file holds its tensors' bytes where they say.
        for (i, (location, offset, length)) in placed.iter().enumerate() {
            let file = files.iter().find(|f| &f.location == location).unwrap();
            let content = file.chunks.concat();
            let range = *offset as usize..(*offset + *length) as usize;
            assert_eq!(&content[range], &vec![b'z'; 10 + i][..], "{location}");
        }
        // Alignment applies within each file.
        let mut model = of_initializers(vec![tensor("a", 10), tensor("A", 5000)]);
        let aligned = ExternalSave {
            alignment: 4096,
            ..how
        };
        let files = move_to_external(&mut model, &aligned);
        assert_eq!(files.len(), 1);
        assert_eq!(placements(&model)[1], ("a".into(), 4096, 5000));
        assert_eq!(files[0].chunks.concat().len(), 9096);
    }
}
