"""Tensor.numpy(): bit-exact with onnx.numpy_helper.to_array and ml_dtypes,
zero-copy when the stored bytes are the array, clear TensorErrors otherwise."""

from __future__ import annotations

import gc

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxfast

from conftest import corpus_models, corpus_pb_files

# (data type, ml_dtypes type, number of codes)
FLOAT8 = [
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
    (TensorProto.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu),
]
SUB_BYTE = [
    (TensorProto.FLOAT6E2M3, ml_dtypes.float6_e2m3fn, 64),
    (TensorProto.FLOAT6E3M2, ml_dtypes.float6_e3m2fn, 64),
    (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn, 16),
    (TensorProto.INT4, ml_dtypes.int4, 16),
    (TensorProto.UINT4, ml_dtypes.uint4, 16),
    (TensorProto.INT2, ml_dtypes.int2, 4),
    (TensorProto.UINT2, ml_dtypes.uint2, 4),
]
PACKED_INTS = {TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2}


def _ours(tensor: TensorProto) -> onnxfast.Tensor:
    return onnxfast.load_tensor(tensor.SerializeToString())


def assert_same_array(ours: np.ndarray, theirs: np.ndarray, what: str = "") -> None:
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    if theirs.dtype == object:
        assert ours.tolist() == theirs.tolist(), what
    else:
        assert ours.tobytes() == theirs.tobytes(), f"{what}: bytes differ"


def _tensors_in_test_data(pb) -> list[TensorProto]:
    """Every TensorProto inside a test-data file (tensor, sequence, optional, map)."""
    data = pb.read_bytes()
    kind = {"map_type": "map", "sequence_type": "seq", "optional_type": "opt"}
    graph = onnx.load(pb.parent.parent / "model.onnx", load_external_data=False).graph
    prefix, index = pb.stem.split("_")
    info = (graph.input if prefix == "input" else graph.output)[int(index)]
    which = kind.get(info.type.WhichOneof("value"), "tensor")
    found: list[TensorProto] = []

    def walk_seq(seq):
        found.extend(seq.tensor_values)
        for s in seq.sequence_values:
            walk_seq(s)
        for o in seq.optional_values:
            walk_opt(o)

    def walk_opt(opt):
        if opt.HasField("tensor_value"):
            found.append(opt.tensor_value)
        if opt.HasField("sequence_value"):
            walk_seq(opt.sequence_value)
        if opt.HasField("optional_value"):
            walk_opt(opt.optional_value)

    if which == "tensor":
        found.append(TensorProto.FromString(data))
    elif which == "seq":
        walk_seq(onnx.SequenceProto.FromString(data))
    elif which == "opt":
        walk_opt(onnx.OptionalProto.FromString(data))
    return found


def test_node_corpus_tensors_match_to_array() -> None:
    checked = 0
    types = set()
    failures = []
    for pb in corpus_pb_files():
        for tensor in _tensors_in_test_data(pb):
            try:
                theirs = numpy_helper.to_array(tensor)
            except Exception:
                with pytest.raises(onnxfast.TensorError):
                    _ours(tensor).numpy()
                continue
            try:
                assert_same_array(_ours(tensor).numpy(), theirs, str(pb))
            except (AssertionError, onnxfast.OnnxFastError) as e:
                failures.append(f"{pb}: {e}")
            types.add(tensor.data_type)
            checked += 1
    assert not failures, "\n".join(failures[:20])
    assert checked > 6000
    assert len(types) >= 24, sorted(types)


def test_node_corpus_initializers_and_constants_match_to_array() -> None:
    checked = 0
    for path in corpus_models():
        theirs_model = onnx.load(path, load_external_data=False)
        ours_model = onnxfast.load(path)
        pairs = list(zip(ours_model.graph.initializer, theirs_model.graph.initializer))
        for ours_node, node in zip(ours_model.graph.node, theirs_model.graph.node):
            for ours_attr, attr in zip(ours_node.attribute, node.attribute):
                if attr.HasField("t"):
                    pairs.append((ours_attr.t, attr.t))
        for ours, theirs in pairs:
            assert_same_array(ours.numpy(), numpy_helper.to_array(theirs), f"{path}:{theirs.name}")
            checked += 1
    assert checked > 300


@pytest.mark.parametrize(("code", "mltype"), FLOAT8, ids=lambda v: str(v))
def test_every_float8_code(code, mltype) -> None:
    codes = np.arange(256, dtype=np.uint8)
    tensor = helper.make_tensor("f8", code, [16, 16], codes.tobytes(), raw=True)
    ours = _ours(tensor)
    arr = ours.numpy()
    assert arr.dtype == np.dtype(mltype)
    assert arr.tobytes() == codes.tobytes()
    expected = codes.view(mltype).astype(np.float32).reshape(16, 16)
    got = ours.numpy(dtype=np.float32)
    assert got.dtype == np.float32
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()
    assert_same_array(arr, numpy_helper.to_array(tensor))
    # typed-field encoding (int32_data) of the same codes
    typed = TensorProto(
        name="f8t", data_type=code, dims=[256], int32_data=codes.astype(np.int32).tolist()
    )
    assert_same_array(_ours(typed).numpy(), numpy_helper.to_array(typed))
    assert (
        _ours(typed).numpy(dtype=np.float32).view(np.uint32).tolist()
        == expected.ravel().view(np.uint32).tolist()
    )


@pytest.mark.parametrize(("code", "mltype", "n"), SUB_BYTE, ids=lambda v: str(v))
def test_every_sub_byte_code(code, mltype, n) -> None:
    # every code, at every position of a packing group (repeat with offsets)
    values = np.concatenate([np.arange(n), np.arange(n)[::-1], [1, 2, 3]]).astype(np.uint8)
    typed_values = values.view(mltype)
    tensor = numpy_helper.from_array(typed_values, "p")
    theirs = numpy_helper.to_array(tensor)
    ours = _ours(tensor)
    assert_same_array(ours.numpy(), theirs)
    expected = typed_values.astype(np.float32)
    assert (
        ours.numpy(dtype=np.float32).view(np.uint32).tolist() == expected.view(np.uint32).tolist()
    )
    if code in PACKED_INTS:
        assert ours.numpy(dtype=np.int8).tolist() == typed_values.astype(np.int8).tolist()
    # typed-field encoding as onnx writes it (packed bytes in int32_data for 4-/2-bit)
    typed = helper.make_tensor("p", code, [len(values)], typed_values, raw=False)
    assert_same_array(_ours(typed).numpy(), numpy_helper.to_array(typed))
    assert (
        _ours(typed).numpy(dtype=np.float32).view(np.uint32).tolist()
        == expected.view(np.uint32).tolist()
    )


def test_float16_and_bfloat16_all_codes() -> None:
    codes = np.arange(65536, dtype=np.uint16)
    for code, dtype in (
        (TensorProto.FLOAT16, np.float16),
        (TensorProto.BFLOAT16, ml_dtypes.bfloat16),
    ):
        tensor = helper.make_tensor("h", code, [65536], codes.tobytes(), raw=True)
        ours = _ours(tensor)
        assert_same_array(ours.numpy(), numpy_helper.to_array(tensor))
        expected = codes.view(dtype).astype(np.float32).view(np.uint32)
        assert np.array_equal(ours.numpy(dtype=np.float32).view(np.uint32), expected)
        typed = TensorProto(
            name="ht", data_type=code, dims=[65536], int32_data=codes.astype(np.int32).tolist()
        )
        assert_same_array(_ours(typed).numpy(), numpy_helper.to_array(typed))


@pytest.mark.parametrize(
    "array",
    [
        np.arange(-6, 6, dtype=np.float32).reshape(3, 4),
        np.arange(12, dtype=np.float64).reshape(3, 4) / 7,
        np.array([0, 1, 255], dtype=np.uint8),
        np.array([-128, 0, 127], dtype=np.int8),
        np.array([0, 65535], dtype=np.uint16),
        np.array([-32768, 32767], dtype=np.int16),
        np.array([-(2**31), 2**31 - 1], dtype=np.int32),
        np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        np.array([0, 2**32 - 1], dtype=np.uint32),
        np.array([0, 2**64 - 1], dtype=np.uint64),
        np.array([True, False, True]),
        np.array([1 + 2j, -3.5j], dtype=np.complex64),
        np.array([1 + 2j, -3.5j], dtype=np.complex128),
        np.array([[1.5, -2.25]], dtype=np.float16),
        np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16),
        np.array(3.25, dtype=np.float32),
        np.zeros((0, 3), dtype=np.float32),
    ],
    ids=lambda a: f"{a.dtype}{list(a.shape)}",
)
def test_raw_and_typed_encodings_of_every_width(array) -> None:
    raw = numpy_helper.from_array(array, "x")
    assert_same_array(_ours(raw).numpy(), numpy_helper.to_array(raw), "raw")
    code = helper.np_dtype_to_tensor_dtype(array.dtype)
    typed = helper.make_tensor(
        "x", code, array.shape, array.ravel().tolist() if array.size else [], raw=False
    )
    assert_same_array(_ours(typed).numpy(), numpy_helper.to_array(typed), "typed")


def test_typed_fields_truncate_like_onnx() -> None:
    # Out-of-range values in int32_data: onnx keeps the low bits.
    for code in (
        TensorProto.UINT8,
        TensorProto.INT8,
        TensorProto.INT16,
        TensorProto.UINT16,
        TensorProto.BOOL,
    ):
        t = TensorProto(name="t", data_type=code, dims=[4], int32_data=[-1, 256, 70000, 2])
        assert_same_array(_ours(t).numpy(), numpy_helper.to_array(t), str(code))
    t = TensorProto(name="u", data_type=TensorProto.UINT32, dims=[2], uint64_data=[2**40 + 5, 7])
    assert_same_array(_ours(t).numpy(), numpy_helper.to_array(t))


def test_strings() -> None:
    t = numpy_helper.from_array(np.array([["a", "bé"], ["", "z"]], dtype=object), "s")
    assert_same_array(_ours(t).numpy(), numpy_helper.to_array(t))
    bad = TensorProto(name="s", data_type=TensorProto.STRING, dims=[1], string_data=[b"\xff"])
    with pytest.raises(onnxfast.TensorError, match="UTF-8"):
        _ours(bad).numpy()


def test_zero_copy_views(tmp_path) -> None:
    array = np.arange(1 << 16, dtype=np.float32).reshape(256, 256)
    model = helper.make_model(
        helper.make_graph([], "g", [], [], initializer=[numpy_helper.from_array(array, "w")])
    )
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    loaded = onnxfast.load(path)
    tensor = loaded.graph.initializer[0]
    view = tensor.numpy()
    assert not view.flags.writeable
    assert np.shares_memory(view, tensor.numpy())
    assert np.array_equal(view, array)
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 1
    copied = tensor.numpy(copy=True)
    assert copied.flags.writeable
    assert not np.shares_memory(copied, view)
    assert tensor.numpy(copy=False).base is not None
    # The view keeps the mapped file alive after every onnxfast object is gone.
    del loaded, tensor
    gc.collect()
    assert float(view[255, 255]) == 65535.0
    # bytes input: views share the caller's bytes object (no copy at all)
    data = model.SerializeToString()
    from_bytes = onnxfast.load(data).graph.initializer[0].numpy()
    assert np.shares_memory(from_bytes, np.frombuffer(data, dtype=np.uint8))


def test_copy_false_refuses_when_a_copy_is_needed() -> None:
    typed = helper.make_tensor("t", TensorProto.FLOAT, [2], [1.0, 2.0])
    with pytest.raises(onnxfast.TensorError, match="float_data"):
        _ours(typed).numpy(copy=False)
    assert _ours(typed).numpy(copy=None).tolist() == [1.0, 2.0]
    with pytest.raises(onnxfast.TensorError, match="dtype conversion"):
        _ours(helper.make_tensor("h", TensorProto.FLOAT16, [1], [1.0])).numpy(
            copy=False, dtype=np.float32
        )


def test_metadata_without_data() -> None:
    t = _ours(
        helper.make_tensor(
            "w", TensorProto.BFLOAT16, [3, 5], np.zeros(15, np.uint16).tobytes(), raw=True
        )
    )
    assert t.dtype == np.dtype(ml_dtypes.bfloat16)
    assert t.shape == (3, 5)
    assert t.nbytes == 30
    assert not t.is_external
    assert onnxfast.to_array(t).shape == (3, 5)


def test_conversion_requests_that_make_no_sense() -> None:
    t = _ours(helper.make_tensor("i", TensorProto.INT32, [2], [1, 2]))
    with pytest.raises(ValueError, match="no direct conversion"):
        t.numpy(dtype=np.float32)
    assert t.numpy(dtype=np.int32).tolist() == [1, 2]  # its own dtype: fine


def test_large_tensors_convert_in_parallel_identically() -> None:
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 256, size=3_000_001, dtype=np.uint8)
    t = helper.make_tensor("big", TensorProto.FLOAT8E4M3FN, [codes.size], codes.tobytes(), raw=True)
    got = _ours(t).numpy(dtype=np.float32)
    expected = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    packed = rng.integers(-8, 8, size=2_000_001).astype(ml_dtypes.int4)
    t4 = numpy_helper.from_array(packed, "big4")
    assert np.array_equal(_ours(t4).numpy(dtype=np.int8), packed.astype(np.int8))


@pytest.mark.parametrize(
    ("tensor", "message"),
    [
        (TensorProto(name="u", dims=[1], raw_data=b"\0"), "UNDEFINED"),
        (TensorProto(name="k", data_type=99, dims=[1], raw_data=b"\0"), "99"),
        (TensorProto(name="n", data_type=1, dims=[-1], raw_data=b""), r"dims\[0\] is negative"),
        (TensorProto(name="o", data_type=1, dims=[2**62, 2**62], raw_data=b""), "more elements"),
        (
            TensorProto(name="s", data_type=1, dims=[3], raw_data=b"\0" * 8),
            "raw_data holds 8 bytes",
        ),
        (TensorProto(name="t", data_type=8, dims=[1], raw_data=b"x"), "STRING"),
        (
            TensorProto(name="m", data_type=1, dims=[1], raw_data=b"\0" * 4, float_data=[1.0]),
            "more than one",
        ),
        (TensorProto(name="w", data_type=1, dims=[2], int32_data=[1, 2]), "int32_data"),
        (TensorProto(name="e", data_type=1, dims=[2]), "no data"),
        (TensorProto(name="c", data_type=1, dims=[3], float_data=[1.0]), "float_data holds 1"),
        (
            TensorProto(
                name="g",
                data_type=1,
                dims=[1],
                raw_data=b"\0" * 4,
                segment=TensorProto.Segment(begin=0, end=1),
            ),
            "segment",
        ),
    ],
    ids=lambda v: v.name if isinstance(v, TensorProto) else "",
)
def test_bad_tensors_raise_tensor_error(tensor, message) -> None:
    with pytest.raises(onnxfast.TensorError, match=message) as info:
        _ours(tensor).numpy()
    assert info.value.tensor == tensor.name
    assert f"tensor '{tensor.name}'" in str(info.value)
