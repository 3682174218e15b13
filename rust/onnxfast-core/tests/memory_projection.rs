//! The memory budget's projection against what decoding then allocates:
//! for the shapes of real graphs it must be an upper bound, and a close one
//! (at most 1.5× the peak), so the default budget accepts every valid model
//! while a hostile expansion is still refused before anything is allocated.

#![allow(clippy::expect_used, clippy::panic)] // a test harness: panicking is how it fails

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use prost::Message;

use onnxfast_core::decode::lazy::decode_lazy;
use onnxfast_core::decode::projected_memory;
use onnxfast_core::decode::scan::{scan, scan_reference, DEFAULT_MAX_DEPTH};
use onnxfast_core::opset::SchemaRegistry;
use onnxfast_core::proto::schema::ids;
use onnxfast_core::proto::{
    attribute_proto::AttributeType, tensor_shape_proto, type_proto, AttributeProto, GraphProto,
    ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto,
    ValueInfoProto,
};
use onnxfast_core::{decode, DecodeOptions};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                + (new_size - layout.size());
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Tests share the counters: one measurement at a time.
static MEASURING: Mutex<()> = Mutex::new(());

fn dim(v: i64) -> tensor_shape_proto::Dimension {
    tensor_shape_proto::Dimension {
        denotation: None,
        value: Some(tensor_shape_proto::dimension::Value::DimValue(v)),
    }
}

fn vi(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto {
                    dim: vec![dim(1), dim(64), dim(8), dim(8)],
                }),
            })),
        }),
        ..ValueInfoProto::default()
    }
}

/// An exporter-shaped graph: `n` nodes, each with one attribute and short
/// names, optionally a value_info, an initializer and a doc string each.
fn exporter_graph(n: usize, value_info: bool, initializers: bool, docs: bool) -> Vec<u8> {
    let mut g = GraphProto {
        name: Some("exported".into()),
        input: vec![vi("x")],
        output: vec![vi(&format!("t{}", n - 1))],
        ..GraphProto::default()
    };
    for i in 0..n {
        let input = if i == 0 {
            "x".to_string()
        } else {
            format!("t{}", i - 1)
        };
        let mut node = NodeProto {
            op_type: Some(if i % 2 == 0 { "Transpose" } else { "LeakyRelu" }.into()),
            name: Some(format!("/layer{i}/op").as_str().into()),
            input: [input.as_str().into()].into_iter().collect(),
            output: [format!("t{i}").as_str().into()].into_iter().collect(),
            ..NodeProto::default()
        };
        node.attribute.push(if i % 2 == 0 {
            AttributeProto {
                name: Some("perm".into()),
                r#type: Some(AttributeType::Ints as i32),
                ints: vec![0, 1, 3, 2],
                ..AttributeProto::default()
            }
        } else {
            AttributeProto {
                name: Some("alpha".into()),
                r#type: Some(AttributeType::Float as i32),
                f: Some(0.01),
                ..AttributeProto::default()
            }
        });
        if initializers {
            node.input.push(format!("w{i}").as_str().into());
            g.initializer.push(TensorProto {
                name: Some(format!("w{i}")),
                data_type: Some(1),
                dims: vec![4],
                raw_data: Some(Bytes::from(vec![0u8; 16])),
                ..TensorProto::default()
            });
        }
        if docs {
            node.extras_mut().doc_string = Some(
                format!("exported from torch.nn.Module layer {i}")
                    .as_str()
                    .into(),
            );
        }
        if value_info {
            g.value_info.push(vi(&format!("t{i}")));
        }
        g.node.push(node);
    }
    ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(g),
        ..ModelProto::default()
    }
    .encode_to_vec()
}

/// What decoding a file allocates, against the projection.
struct Measured {
    projected: u64,
    /// Most bytes live at once while decoding eagerly.
    eager_peak: u64,
    /// Bytes held by the eagerly decoded model.
    eager_kept: u64,
    /// Most bytes live at once while loading on touch and then touching
    /// every element.
    lazy_peak: u64,
}

fn live() -> u64 {
    CURRENT.load(Ordering::Relaxed) as u64
}

/// Resets the peak to what is live now and returns that.
fn reset_peak() -> u64 {
    let now = CURRENT.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now as u64
}

fn peak_since(base: u64) -> u64 {
    (PEAK.load(Ordering::Relaxed) as u64).saturating_sub(base)
}

/// Measures `file`, again when something outside the measurement moved the
/// counters: the harness frees a finished test's captured output, and the
/// first decode starts the thread pool, on other threads while this one
/// counts. A clean measurement ends with exactly what was live at its start.
fn measure(file: &[u8]) -> Measured {
    let mut last = None;
    for _ in 0..5 {
        let start = live();
        let m = measure_once(file);
        if live() == start {
            return m;
        }
        last = Some(m);
    }
    eprintln!("the counters kept moving beside the measurement; kept the last one");
    last.expect("measured at least once")
}

fn measure_once(file: &[u8]) -> Measured {
    let stats = scan(file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).expect("scan");
    let projected = projected_memory(&stats);
    let buf = Bytes::copy_from_slice(file);
    let options = DecodeOptions::default();

    let base = reset_peak();
    let model: ModelProto = decode(buf.clone(), &options).expect("decode");
    let eager_peak = peak_since(base);
    let eager_kept = live().saturating_sub(base);
    drop(model);

    let base = reset_peak();
    let lazy = decode_lazy(buf, &options).expect("lazy");
    let node = lazy.lists.node.decode_all().expect("nodes");
    let initializer = lazy.lists.initializer.decode_all().expect("initializers");
    let value_info = lazy.lists.value_info.decode_all().expect("value_info");
    let lazy_peak = peak_since(base);
    drop((node, initializer, value_info, lazy));
    Measured {
        projected,
        eager_peak,
        eager_kept,
        lazy_peak,
    }
}

/// The projection bounds what is allocated, and closely.
fn check(label: &str, file: &[u8], slack: f64) -> Measured {
    let m = measure(file);
    let ratio = m.projected as f64 / m.eager_kept.max(1) as f64;
    eprintln!(
        "{label}: file {} KiB, projected {} KiB, eager peak {} KiB, kept {} KiB, lazy peak {} KiB ({ratio:.2}x kept)",
        file.len() / 1024,
        m.projected / 1024,
        m.eager_peak / 1024,
        m.eager_kept / 1024,
        m.lazy_peak / 1024,
    );
    assert!(
        m.projected >= m.eager_peak,
        "{label}: projection under the eager peak"
    );
    assert!(
        m.projected >= m.lazy_peak,
        "{label}: projection under the lazy peak"
    );
    assert!(
        ratio <= slack,
        "{label}: projection {} more than {slack}x what is kept ({})",
        m.projected,
        m.eager_kept
    );
    m
}

#[test]
fn projection_is_a_close_upper_bound_on_graph_shapes() {
    let _guard = MEASURING.lock();
    let shapes = [
        ("names and one attribute", false, false, false),
        ("+ value_info", true, false, false),
        ("+ initializers", false, true, false),
        ("+ doc strings", false, false, true),
        ("everything", true, true, true),
    ];
    for n in [1_000usize, 30_000, 100_000] {
        for &(label, vi, init, docs) in &shapes {
            let file = exporter_graph(n, vi, init, docs);
            assert_eq!(
                scan(&file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).ok(),
                scan_reference(&file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH),
                "{n} nodes, {label}: the scan's shortcuts count differently"
            );
            check(&format!("{n} nodes, {label}"), &file, 1.5);
        }
    }
}

fn corpus_dir() -> PathBuf {
    let version = &SchemaRegistry::global().onnx_version;
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/.corpus")
        .join(format!("onnx-{version}"))
}

#[test]
fn projection_bounds_every_corpus_model() {
    let _guard = MEASURING.lock();
    let Ok(entries) = std::fs::read_dir(corpus_dir()) else {
        eprintln!("skipped: the corpus is generated by pytest");
        return;
    };
    let (mut n, mut projected, mut kept, mut worst) = (0, 0u64, 0u64, 0f64);
    for case in entries.flatten() {
        let Ok(file) = std::fs::read(case.path().join("model.onnx")) else {
            continue;
        };
        let m = measure(&file);
        let name = case.path().display().to_string();
        assert_eq!(
            scan(&file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH).ok(),
            scan_reference(&file, ids::MODEL_PROTO, DEFAULT_MAX_DEPTH),
            "{name}: the scan's shortcuts count differently from its generic steps"
        );
        assert!(m.projected >= m.eager_peak, "{name}: under the eager peak");
        assert!(m.projected >= m.lazy_peak, "{name}: under the lazy peak");
        // Beyond the fixed working allowance (16 KiB), close to the tree.
        let tree = m.projected.saturating_sub(16 << 10);
        assert!(
            tree as f64 <= 1.5 * m.eager_kept as f64,
            "{name}: {tree} projected for {} kept",
            m.eager_kept
        );
        worst = worst.max(tree as f64 / m.eager_kept.max(1) as f64);
        n += 1;
        projected += m.projected;
        kept += m.eager_kept;
    }
    eprintln!("{n} models: projected {projected} bytes for {kept} kept (worst {worst:.2}x)");
    assert!(n > 1000, "only {n} corpus models");
}
