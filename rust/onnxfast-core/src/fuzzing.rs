//! Entry points shared by the cargo-fuzz targets (`fuzz/`) and the
//! regression tests that replay their minimised findings (`tests/`).
//! Each function must return normally for every input; a panic is a bug.
//! (The functions assert properties of their results: panicking on a
//! violation is how a fuzzer reports it.)
#![allow(clippy::panic)]

mod random_graph;
pub use random_graph::{infer_random_model, random_model, write_back_agrees};

/// The choice bytes of seeded random graphs ([`random_model`]'s input), 512
/// a graph, from an xorshift64* stream: the same seed gives the same graphs
/// (seed 1 is the stream `tests/fuzz_regressions.rs` replays).
pub fn seeded_choices(seed: u64) -> impl Iterator<Item = Vec<u8>> {
    let mut state: u64 = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    std::iter::repeat_with(move || {
        (0..512)
            .map(|_| {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
            })
            .collect()
    })
}

use std::path::{Path, PathBuf};

use bytes::Bytes;
use prost::Message;

use crate::checker::{check_model, CheckOptions};
use crate::decode::{decode, DecodeOptions};
use crate::external::{ExternalOptions, ExternalStore};
use crate::proto::{ModelProto, StringStringEntryProto, TensorProto};
use crate::tensor;

fn options(len: usize) -> DecodeOptions {
    DecodeOptions {
        max_memory: Some((len as u64).saturating_mul(16).saturating_add(64 << 20)),
        ..DecodeOptions::default()
    }
}

/// Decodes a model; if it decodes, its re-encoding decodes to the same model,
/// and decode on touch agrees with the eager decoder (both accept or both
/// refuse, and give the same model).
pub fn decode_roundtrip(data: &[u8]) {
    // The scan's shortcuts (list runs, plain nodes, remembered children)
    // count exactly what its generic steps count, and agree on the verdict.
    {
        use crate::decode::scan::{scan, scan_reference, DEFAULT_MAX_DEPTH};
        use crate::proto::schema::ids::MODEL_PROTO;
        assert_eq!(
            scan(data, MODEL_PROTO, DEFAULT_MAX_DEPTH).ok(),
            scan_reference(data, MODEL_PROTO, DEFAULT_MAX_DEPTH),
            "the scan's shortcuts and its generic steps disagree"
        );
    }
    let lazy = crate::decode::lazy::decode_lazy(Bytes::copy_from_slice(data), &options(data.len()));
    let Ok(model) = decode::<ModelProto>(Bytes::copy_from_slice(data), &options(data.len())) else {
        if let Ok(lazy) = lazy {
            // The lazy load allocates less than the eager decode's budget
            // allows; elements over the budget are refused on touch.
            let _ = lazy.materialize();
        }
        return;
    };
    let lazy = match lazy {
        Ok(lazy) => lazy,
        Err(e) => panic!("the eager decode accepts, decode on touch refuses: {e}"),
    };
    match lazy.materialize() {
        Ok(whole) => assert_eq!(
            whole.encode_to_vec(),
            model.encode_to_vec(),
            "decode on touch differs from the eager decode"
        ),
        Err(e) => panic!("the eager decode accepts, decode on touch refuses: {e}"),
    }
    // Names read straight from the bytes are the decoded ones.
    if let Some(g) = &model.graph {
        for (i, n) in g.node.iter().enumerate() {
            let read = lazy
                .lists
                .node
                .names(i)
                .unwrap_or_else(|e| panic!("names: {e}"));
            let decoded = crate::decode::lazy::NodeNames::of(n);
            assert_eq!(
                (&read.inputs, &read.outputs, read.has_subgraph),
                (&decoded.inputs, &decoded.outputs, decoded.has_subgraph),
                "node {i}'s names differ"
            );
            // A node the scan calls plain holds nothing a reader keeps.
            if lazy.lists.node.is_plain(i) {
                assert!(
                    !n.attribute.iter().any(|a| a.holds_message())
                        && n.metadata_props().is_empty()
                        && n.device_configurations().is_empty(),
                    "node {i} is called plain"
                );
            }
            // What Python's node objects read from the bytes (a scanned
            // node can always be read so, but for one of 1 MiB or more in a
            // mapped file, which is decoded instead: these bytes are not
            // mapped).
            use crate::proto::schema::fields::node_proto as F;
            let strings = |number| {
                lazy.lists
                    .node
                    .strings(i, number)
                    .unwrap_or_else(|| panic!("node {i}'s field {number} not readable"))
            };
            let last = |number| strings(number).last().copied().unwrap_or_default();
            assert_eq!(
                (last(F::NAME), last(F::OP_TYPE), last(F::DOMAIN)),
                (n.name(), n.op_type(), n.domain()),
                "node {i}'s name, op_type or domain differ"
            );
            assert_eq!(
                &strings(F::INPUT)[..],
                &decoded.inputs[..],
                "node {i}'s inputs"
            );
            assert_eq!(
                &strings(F::OUTPUT)[..],
                &decoded.outputs[..],
                "node {i}'s outputs"
            );
        }
        for (i, t) in g.initializer.iter().enumerate() {
            let read = lazy
                .lists
                .initializer
                .name(i)
                .unwrap_or_else(|e| panic!("name: {e}"));
            assert_eq!(read, t.name.as_deref(), "initializer {i}'s name differs");
            let header = lazy
                .lists
                .initializer
                .header(i)
                .unwrap_or_else(|| panic!("initializer {i}'s header not readable"));
            assert_eq!(
                (header.name, header.data_type, &header.dims[..]),
                (t.name(), t.data_type, &t.dims[..]),
                "initializer {i}'s header differs"
            );
        }
        let table = lazy
            .lists
            .initializer
            .name_table()
            .unwrap_or_else(|e| panic!("name table: {e}"));
        let decoded: Vec<Option<&str>> = g.initializer.iter().map(|t| t.name.as_deref()).collect();
        assert_eq!(
            table.iter().collect::<Vec<_>>(),
            decoded,
            "name table differs"
        );
        let by_index: Vec<Option<&str>> = (0..table.len()).map(|i| table.get(i)).collect();
        assert_eq!(by_index, decoded, "name table's get differs");
    }
    let encoded = model.encode_to_vec();
    let again: ModelProto = match decode(Bytes::from(encoded.clone()), &options(encoded.len())) {
        Ok(m) => m,
        Err(e) => panic!("re-encoded model does not decode: {e}"),
    };
    // Compare encodings (NaN floats make PartialEq unusable).
    assert_eq!(again.encode_to_vec(), encoded, "decode(encode(m)) != m");
    // Differential: plain prost decoding takes the generic path for every
    // node (NodeProto::merge_field), ours the scan-driven fast paths; when
    // both accept the input they must agree on every value.
    if let Ok(generic) = ModelProto::decode(data) {
        assert_eq!(
            generic.encode_to_vec(),
            encoded,
            "fast-path decode differs from prost's generic decode"
        );
    }
    external_save(&model, data);
}

/// Saving with external data (`external::save::move_to_external`) takes
/// `raw_data` out of some tensors and changes nothing else: each moved
/// tensor names its own range of a data file, the ranges of each file tile
/// it (with zeros before the aligned ones), and each holds the bytes the
/// tensor had. With one file per tensor, every file is a plain file name
/// of the model's folder, whatever the tensors are named.
fn external_save(model: &ModelProto, data: &[u8]) {
    use crate::external::save::{is_plain_file_name, move_to_external, DataFiles, ExternalSave};
    use crate::ir::visit::for_each_tensor;
    let mut moved = model.clone();
    let refused = |name: &str| name.len() % 7 != 3;
    let files = match data.len() % 4 {
        0 => DataFiles::PerTensor {
            stem: "m.onnx",
            usable: &refused,
        },
        _ => DataFiles::One("w.bin"),
    };
    let how = ExternalSave {
        files,
        size_threshold: i64::from(data.first().copied().unwrap_or(0)) - 40,
        convert_attribute: data.len() % 2 == 0,
        alignment: [1, 64, 4096][data.len() % 3],
    };
    let written = move_to_external(&mut moved, &how);
    let contents: std::collections::HashMap<&str, Vec<u8>> = written
        .iter()
        .map(|f| (f.location.as_str(), f.chunks.concat()))
        .collect();
    assert_eq!(contents.len(), written.len(), "a data file written twice");
    for location in contents.keys() {
        assert!(
            is_plain_file_name(location) && crate::external::check_location(location).is_ok(),
            "data file {location:?}"
        );
        if let DataFiles::One(one) = how.files {
            assert_eq!(*location, one, "a second data file");
        }
    }
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for_each_tensor(model, &mut |t| before.push(t));
    for_each_tensor(&moved, &mut |t| after.push(t));
    assert_eq!(before.len(), after.len(), "tensors added or lost");
    let mut ranges: std::collections::HashMap<&str, Vec<(usize, usize)>> =
        std::collections::HashMap::new();
    for (old, new) in before.iter().zip(&after) {
        let (Some(raw), None) = (&old.raw_data, &new.raw_data) else {
            assert_eq!(
                old.encode_to_vec(),
                new.encode_to_vec(),
                "an unmoved tensor changed"
            );
            continue;
        };
        let entries: Vec<(&str, &str)> = new
            .external_data
            .iter()
            .map(|e| (e.key(), e.value()))
            .collect();
        let [("location", location), ("offset", offset), ("length", length)] = entries[..] else {
            panic!("moved tensor's entries: {entries:?}");
        };
        let (offset, length): (usize, usize) = match (offset.parse(), length.parse()) {
            (Ok(o), Ok(l)) => (o, l),
            _ => panic!("moved tensor's offset or length: {entries:?}"),
        };
        let Some((location, file)) = contents.get_key_value(location) else {
            panic!("a moved tensor names a file not written: {location:?}");
        };
        assert_eq!(length, raw.len(), "moved length");
        assert_eq!(
            file.get(offset..offset + length),
            Some(&raw[..]),
            "moved bytes"
        );
        assert!(
            raw.len() as u64 + 33 >= how.size_threshold.max(0) as u64,
            "moved below the threshold"
        );
        let mut back = TensorProto::clone(new);
        back.raw_data = Some(raw.clone());
        back.data_location = old.data_location;
        back.external_data = old.external_data.clone();
        assert_eq!(
            old.encode_to_vec(),
            back.encode_to_vec(),
            "a moved tensor's other fields"
        );
        ranges.entry(location).or_default().push((offset, length));
    }
    assert_eq!(ranges.len(), contents.len(), "a data file no tensor names");
    for (location, mut ranges) in ranges {
        ranges.sort_unstable();
        let file = &contents[location];
        let mut end: usize = 0;
        for (offset, length) in ranges {
            // Packed, or (a tensor of `alignment` bytes or more) at the
            // next multiple of it, zeros between.
            let aligned = how.alignment > 1 && length as u64 >= how.alignment;
            let expected = match aligned {
                true => end.next_multiple_of(how.alignment as usize),
                false => end,
            };
            assert_eq!(offset, expected, "a moved range is not where it belongs");
            assert!(
                file[end..offset].iter().all(|&b| b == 0),
                "padding is not zeros"
            );
            end = offset + length;
        }
        assert_eq!(
            end,
            file.len(),
            "the data file holds more than the moved tensors"
        );
    }
}

/// Decodes and checks a model (strict, and the full check with type and
/// shape inference); the checker must always return.
/// Evaluates every symbolic dim of the main graph's declarations at a few
/// sizes (`ir::evaluate` on untrusted text): always returns.
pub(crate) fn evaluate_dims(model: &ModelProto) {
    use crate::proto::{tensor_shape_proto::dimension::Value as D, type_proto::Value as T};
    let Some(g) = &model.graph else {
        return;
    };
    for vi in g.input.iter().chain(&g.output).chain(&g.value_info) {
        let Some(T::TensorType(t)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
            continue;
        };
        for d in t.shape.iter().flat_map(|s| &s.dim) {
            if let Some(D::DimParam(text)) = &d.value {
                for size in [0, 3, i64::MAX] {
                    let _ = crate::ir::evaluate::evaluate(text, &|_| Some(size));
                }
            }
        }
    }
}

pub fn decode_and_check(data: &[u8]) {
    let Ok(model) = decode::<ModelProto>(Bytes::copy_from_slice(data), &options(data.len())) else {
        return;
    };
    evaluate_dims(&model);
    let dir = std::env::temp_dir().join("onnxfast-fuzz-empty");
    let _ = std::fs::create_dir_all(&dir);
    let lazy = crate::decode::lazy::decode_lazy(Bytes::copy_from_slice(data), &options(data.len()));
    // Every policy key set tight, so hostile models hit every rule.
    let policy = std::sync::Arc::new(crate::checker::policy::Compiled::from(
        crate::checker::policy::Policy {
            allowed_domains: Some(vec!["ai.onnx".into(), "ai.onnx.ml".into()]),
            denied_domains: vec!["com.microsoft".into()],
            allowed_ops: Some(
                ["Add", "Relu", "If", "Loop", "Constant", "ai.onnx.ml::*"]
                    .iter()
                    .filter_map(|t| crate::checker::policy::OpRule::parse(t).ok())
                    .collect(),
            ),
            denied_ops: vec![crate::checker::policy::OpRule {
                domain: String::new(),
                op: Some("Loop".into()),
            }],
            min_opset: vec![("".into(), 10)],
            max_opset: vec![("ai.onnx".into(), 20), ("ai.onnx.ml".into(), 3)],
            min_ir_version: Some(4),
            max_ir_version: Some(10),
            max_file_bytes: Some(1 << 12),
            max_parameters: Some(16),
            max_nodes: Some(8),
            max_subgraph_depth: Some(1),
            allow_external_data: false,
            max_external_bytes: Some(0),
            allow_functions: false,
            required_metadata: vec!["license".into()],
        },
    ));
    for (strict, full, policy) in [
        (false, false, None),
        (true, false, None),
        (false, true, None),
        (false, false, Some(policy.clone())),
        (false, true, Some(policy)),
    ] {
        let options = CheckOptions {
            strict,
            full,
            model_dir: Some(dir.clone()),
            policy,
            source_bytes: Some(data.len() as u64),
            ..CheckOptions::default()
        };
        let report = check_model(&model, &options);
        for d in &report.diagnostics {
            let _ = d.to_string();
        }
        // Differential: the check over decode-on-touch lists (streamed where
        // it can be) reports the same findings, in the same order.
        if let Ok(lazy) = &lazy {
            let streamed = crate::checker::check_lazy(&lazy.model, &lazy.lists, &options)
                .unwrap_or_else(|e| panic!("the streaming check fails to decode: {e}"));
            let show = |r: &crate::checker::Report| -> Vec<String> {
                r.diagnostics.iter().map(ToString::to_string).collect()
            };
            assert_eq!(show(&streamed), show(&report), "streaming check differs");
            assert_eq!(
                streamed.counts, report.counts,
                "streaming check counts differ"
            );
        }
    }
    // The value index of the main graph: every value defined once, every
    // capture undefined here, every user a node of the graph.
    if let Some(g) = &model.graph {
        let values = crate::ir::DefUse::of_graph(g);
        for name in values.own() {
            assert!(
                values.def(name).is_some(),
                "own value {name:?} has no definition"
            );
            for user in values.users(name) {
                assert!(user < g.node.len(), "user {user} of {name:?} out of range");
            }
        }
        for name in values.captured() {
            assert!(
                values.def(name).is_none(),
                "captured {name:?} is defined here"
            );
        }
    }
    // Every inferred type can be shown.
    let inferred = crate::infer::infer_model(
        &model,
        &crate::infer::InferOptions {
            collect_types: true,
            report_unfit: false,
            ..crate::infer::InferOptions::default()
        },
    );
    for g in &inferred.graphs {
        for (_, t) in &g.values {
            let _ = inferred.symbols.show(t);
        }
    }
    // Standalone inference with data propagation, written back.
    let _ = crate::infer::infer_shapes(
        model,
        &crate::infer::InferOptions {
            data_prop: true,
            symbolic: true,
            ..crate::infer::InferOptions::default()
        },
    );
}

/// A dim's text (a model's `dim_param`, hostile as any) evaluated at sizes
/// the input also picks: the first byte gives each name of one to three
/// characters a size or none; the rest is the text. Evaluating never
/// panics and gives the same answer twice.
pub fn evaluate_text(data: &[u8]) {
    let Some((&seed, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    let size = |name: &str| -> Option<i64> {
        let h = name.bytes().fold(u64::from(seed), |h, b| {
            h.wrapping_mul(31).wrapping_add(u64::from(b))
        });
        match (name.len() <= 3, h % 4) {
            (false, _) | (_, 0) => None,
            (_, 1) => Some(i64::MAX - (h % 7) as i64),
            (_, _) => Some((h % 100) as i64),
        }
    };
    let first = crate::ir::evaluate::evaluate(&text, &size);
    assert_eq!(first, crate::ir::evaluate::evaluate(&text, &size));
}

/// Decodes a tensor and turns it into numpy-layout bytes and f32/i8 values.
pub fn tensor_to_arrays(data: &[u8]) {
    let Ok(t) = decode::<TensorProto>(Bytes::copy_from_slice(data), &options(data.len())) else {
        return;
    };
    let Ok(plan) = tensor::plan(&t) else {
        return;
    };
    // Stay within a sane size for the fuzzer itself.
    if plan.nbytes() > 1 << 24 {
        return;
    }
    if plan.elem.storage == tensor::Storage::StringData {
        let _ = tensor::string_elements(&t, &plan);
        return;
    }
    let Ok(bytes) = tensor::numpy_bytes(&t, &plan, None) else {
        return;
    };
    assert_eq!(bytes.as_bytes().len(), plan.nbytes(), "numpy bytes size");
    if crate::tensor::convert::converts_to_f32(plan.elem) {
        let mut out = vec![0f32; plan.count];
        let (src, packed) = match &plan.source {
            tensor::Source::Raw(raw) => (raw.as_ref(), true),
            _ => (bytes.as_bytes(), false),
        };
        crate::tensor::convert::to_f32(plan.elem, src, packed, &mut out);
        if crate::tensor::convert::converts_to_i8(plan.elem) {
            let mut out = vec![0i8; plan.count];
            crate::tensor::convert::to_i8(plan.elem, src, packed, &mut out);
        }
    }
}

/// The sandbox the external-data target resolves against: a model folder
/// holding a regular file, a subfolder, a symlink to outside, a symlink to a
/// folder, a hard link to an outside file and a FIFO; outside it, a file of
/// marker bytes that must never be returned.
pub struct Sandbox {
    pub root: PathBuf,
    pub model_dir: PathBuf,
}

/// Makes a FIFO (a named pipe) at `path`, readable and writable by its
/// owner (for the sandbox and for tests of readers and writers of paths).
#[cfg(unix)]
pub fn make_fifo(path: &Path) -> std::io::Result<()> {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )?;
    Ok(())
}

/// Bytes of the file outside the model folder.
pub const OUTSIDE_MARKER: &[u8] = b"#OUTSIDE-THE-MODEL-FOLDER#";
/// Bytes of `model/inside.bin`.
pub const INSIDE: &[u8] = b"0123456789abcdef0123456789abcdef";

impl Sandbox {
    /// Creates (or reuses) the sandbox under `root`.
    pub fn create(root: &Path) -> std::io::Result<Sandbox> {
        let model_dir = root.join("model");
        std::fs::create_dir_all(model_dir.join("sub"))?;
        std::fs::write(root.join("outside.bin"), OUTSIDE_MARKER.repeat(4))?;
        std::fs::write(model_dir.join("inside.bin"), INSIDE)?;
        std::fs::write(model_dir.join("sub").join("inner.bin"), INSIDE)?;
        #[cfg(unix)]
        {
            let link = |target: &Path, at: &Path| {
                let _ = std::fs::remove_file(at);
                std::os::unix::fs::symlink(target, at)
            };
            link(&root.join("outside.bin"), &model_dir.join("link.bin"))?;
            link(Path::new(".."), &model_dir.join("sub").join("up"))?;
            link(root, &model_dir.join("rootlink"))?;
            let hard = model_dir.join("hard.bin");
            let _ = std::fs::remove_file(&hard);
            std::fs::hard_link(root.join("outside.bin"), &hard)?;
            let fifo = model_dir.join("fifo");
            if !fifo.exists() {
                make_fifo(&fifo)?;
            }
        }
        Ok(Sandbox {
            root: root.to_path_buf(),
            model_dir,
        })
    }
}

/// Reads external data described by fuzzed entries (`key=value` lines) from
/// the sandbox: a successful read must be inside the model folder.
pub fn external_read(sandbox: &Sandbox, data: &[u8], mmap: bool) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let dims: i64 = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(4)
        .clamp(0, 1 << 20);
    let mut t = TensorProto {
        name: Some("fuzz".into()),
        data_type: Some(2), // UINT8
        dims: vec![dims],
        data_location: Some(1),
        ..Default::default()
    };
    for line in lines.take(8) {
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        t.external_data.push(StringStringEntryProto {
            key: Some(k.to_string()),
            value: Some(v.to_string()),
        });
    }
    for allow_hardlinks in [false, true] {
        let store = ExternalStore::new(
            Some(sandbox.model_dir.clone()),
            ExternalOptions {
                mmap,
                allow_hardlinks,
                verify_checksum: true,
            },
        );
        let expected = usize::try_from(dims).unwrap_or(0);
        if let Ok(bytes) = store.read(&t, expected) {
            assert_eq!(bytes.len(), expected);
            // Releasing the pages a writer has copied out leaves the bytes
            // as they were (read back from the file).
            let copy = bytes.to_vec();
            let released = store.release_mapped(&bytes);
            assert!(mmap || !released, "released what was not mapped");
            if !bytes.is_empty() {
                assert_eq!(released, mmap, "a mapped read not found in its map");
            }
            assert_eq!(
                &bytes[..],
                &copy[..],
                "released pages read back differently"
            );
            let marker_start = &OUTSIDE_MARKER[..OUTSIDE_MARKER.len().min(bytes.len().max(1))];
            if !allow_hardlinks {
                assert!(
                    !bytes.windows(marker_start.len()).any(|w| w == marker_start)
                        || bytes.is_empty(),
                    "read bytes from outside the model folder: {t:?}"
                );
            }
        }
    }
}
