"""ai.onnx.ml, training and preview operators (ArrayFeatureExtractor,
Binarizer, CastMap, CategoryMapper, DictVectorizer, LabelEncoder, linear and
tree models, ZipMap, Adagrad/Momentum/Adam, FlexAttention): edge and failure
cases of the inference rules.

The operators' outputs are not graph outputs (an Identity of a dummy input
is), so their types come from inference alone. A value of unknown rank is
the output of a CastMap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, helper

from ._build import (
    F16,
    I16,
    I32,
    I64,
    B,
    Cases,
    D,
    F,
    S,
    attr,
    graph,
    init,
    model,
    node,
    tensor,
    typed,
)

ONNX_CRASHES: tuple[str, ...] = ()

ML = "ai.onnx.ml"
TR = "ai.onnx.preview.training"
PV = "ai.onnx.preview"
INTS, STRINGS = AttributeProto.INTS, AttributeProto.STRINGS

_MAP_FLOAT = helper.make_map_type_proto(I64, helper.make_tensor_type_proto(F, None))
_MAP_STRING = helper.make_map_type_proto(I64, helper.make_tensor_type_proto(S, None))
_CATS = {"cats_int64s": [1, 2], "cats_strings": ["a", "b"]}
_MOMENTUM = {"alpha": 0.9, "beta": 0.1, "norm_coefficient": 0.0, "mode": "standard"}


class _Cases(Cases):
    def case(
        self,
        name: str,
        nodes: Sequence[onnx.NodeProto],
        inputs: Sequence[onnx.ValueInfoProto],
        opsets: Sequence[tuple[str, int]],
        ir: int = 10,
    ) -> None:
        """`nodes` on `inputs`, with the default domain at opset 21 and
        `opsets`; the graph's output is an Identity of a dummy input."""
        dummy = node("Identity", ["dummy"], ["dummy_out"])
        g = graph(
            [*nodes, dummy],
            [*inputs, tensor("dummy", F, [1])],
            [tensor("dummy_out", F, [1])],
        )
        self.add(name, model(g, [("", 21), *opsets], ir))


def ml(op: str, inputs: Sequence[str], outputs: Sequence[str], **attrs: Any) -> onnx.NodeProto:
    """A node of ai.onnx.ml."""
    return node(op, inputs, outputs, domain=ML, **attrs)


def _shape(s: Any) -> Any:
    return list(s) if s is not None else None


def _array_feature_extractor(c: _Cases) -> None:
    """ArrayFeatureExtractor."""

    def afe(name: str, xs: Any, ys: Any, xe: int = F) -> None:
        afe_node = ml("ArrayFeatureExtractor", ["x", "y"], ["z"])
        c.case(name, [afe_node], [tensor("x", xe, xs), tensor("y", I64, ys)], [(ML, 1)])

    afe("arrayfeatureextractor/basic", [3, 4], [2])
    afe("arrayfeatureextractor/sym", [3, 4], ["N"])
    afe("arrayfeatureextractor/sym_times_one", [3, 4], [1, "N"])
    afe("arrayfeatureextractor/sym_times_two", [3, 4], [2, "N"])
    afe("arrayfeatureextractor/two_syms", [3, 4], ["N", "M"])
    afe("arrayfeatureextractor/scalar_indices", [3, 4], [])
    afe("arrayfeatureextractor/unknown_index_dim", [3, 4], [None, 2])
    afe("arrayfeatureextractor/rank1_input", [5], [2])
    afe("arrayfeatureextractor/rank0_input", [], [2])
    afe("arrayfeatureextractor/no_x_shape", None, [2])
    afe("arrayfeatureextractor/no_y_shape", [3, 4], None)
    afe("arrayfeatureextractor/overflow", [3, 4], [2**62, 4])
    afe("arrayfeatureextractor/zero_then_big", [3, 4], [0, 2**62, 4])
    afe("arrayfeatureextractor/rank3", ["A", 2, 4], [2, 3], xe=S)
    afe("arrayfeatureextractor/bad_x_type", [3, 4], [2], xe=B)


def _encoders(c: _Cases) -> None:
    """Binarizer, CastMap, CategoryMapper, DictVectorizer."""
    c.case(
        "binarizer/basic",
        [ml("Binarizer", ["x"], ["y"], threshold=0.5)],
        [tensor("x", D, ["N", 3])],
        [(ML, 1)],
    )
    c.case(
        "binarizer/no_shape", [ml("Binarizer", ["x"], ["y"])], [tensor("x", I32, None)], [(ML, 1)]
    )
    c.case(
        "binarizer/seq",
        [ml("Binarizer", ["x"], ["y"])],
        [typed("x", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2])))],
        [(ML, 1)],
    )

    for cast in [None, "TO_FLOAT", "TO_INT64", "TO_STRING", "BAD"]:
        kw = {} if cast is None else {"cast_to": cast}
        c.case(
            f"castmap/{cast or 'default'}",
            [ml("CastMap", ["x"], ["y"], **kw)],
            [typed("x", _MAP_FLOAT)],
            [(ML, 1)],
        )
    c.case(
        "castmap/sparse",
        [ml("CastMap", ["x"], ["y"], cast_to="TO_STRING", map_form="SPARSE", max_map=5)],
        [typed("x", _MAP_STRING)],
        [(ML, 1)],
    )

    def catmap(name: str, x: onnx.ValueInfoProto, **kw: Any) -> None:
        c.case(name, [ml("CategoryMapper", ["x"], ["y"], **kw)], [x], [(ML, 1)])

    catmap("categorymapper/s2i", tensor("x", S, [2, 3]), **_CATS)
    catmap("categorymapper/i2s", tensor("x", I64, ["N"]), **_CATS)
    catmap("categorymapper/no_shape", tensor("x", I64, None), **_CATS)
    catmap("categorymapper/no_ints", tensor("x", S, [2]), cats_strings=["a"])
    catmap("categorymapper/no_strings", tensor("x", S, [2]), cats_int64s=[1])
    catmap(
        "categorymapper/len_differs", tensor("x", S, [2]), cats_int64s=[1, 2], cats_strings=["a"]
    )
    catmap(
        "categorymapper/empty_lists",
        tensor("x", S, [2]),
        extra=[attr("cats_int64s", INTS), attr("cats_strings", STRINGS)],
    )
    catmap("categorymapper/float_input", tensor("x", F, [2]), **_CATS)

    for k, v in [(S, F), (I64, D), (S, I64), (I64, S)]:
        voc = {"string_vocabulary": ["a", "b"]} if k == S else {"int64_vocabulary": [1, 2]}
        key, value = (onnx.TensorProto.DataType.Name(e).lower() for e in (k, v))
        c.case(
            f"dictvectorizer/{key}_{value}",
            [ml("DictVectorizer", ["x"], ["y"], **voc)],
            [typed("x", helper.make_map_type_proto(k, helper.make_tensor_type_proto(v, None)))],
            [(ML, 1)],
        )
    c.case(
        "dictvectorizer/bad_map",
        [ml("DictVectorizer", ["x"], ["y"], string_vocabulary=["a"])],
        [typed("x", helper.make_map_type_proto(S, helper.make_tensor_type_proto(B, None)))],
        [(ML, 1)],
    )
    c.case(
        "dictvectorizer/tensor_input",
        [ml("DictVectorizer", ["x"], ["y"], string_vocabulary=["a"])],
        [tensor("x", F, [2])],
        [(ML, 1)],
    )


def _label_encoder(c: _Cases) -> None:
    """LabelEncoder 1, 2 and 4."""

    def le(name: str, version: int, x: onnx.ValueInfoProto, **kw: Any) -> None:
        c.case(name, [ml("LabelEncoder", ["x"], ["y"], **kw)], [x], [(ML, version)])

    le("labelencoder1/s2i", 1, tensor("x", S, [2, 3]), classes_strings=["a", "b"])
    le("labelencoder1/i2s", 1, tensor("x", I64, [2]), classes_strings=["a", "b"])
    le("labelencoder1/float", 1, tensor("x", F, [2]), classes_strings=["a"])

    x2 = tensor("x", S, [2, "N"])
    le("labelencoder2/s2i", 2, x2, keys_strings=["a", "b"], values_int64s=[1, 2])
    le("labelencoder2/f2s", 2, tensor("x", F, [2, "N"]), keys_floats=[1.0], values_strings=["x"])
    le("labelencoder2/i2f", 2, tensor("x", I64, [2, "N"]), keys_int64s=[1], values_floats=[1.0])
    le("labelencoder2/no_keys", 2, x2, values_int64s=[1])
    le("labelencoder2/two_keys", 2, x2, keys_strings=["a"], keys_int64s=[1], values_int64s=[1])
    le("labelencoder2/key_type", 2, x2, keys_int64s=[1], values_int64s=[1])
    le("labelencoder2/no_values", 2, x2, keys_strings=["a"])
    le(
        "labelencoder2/two_values",
        2,
        x2,
        keys_strings=["a"],
        values_int64s=[1],
        values_floats=[1.0],
    )
    le("labelencoder2/len_differs_ok", 2, x2, keys_strings=["a", "b"], values_int64s=[1])
    le(
        "labelencoder2/empty_keys_attr",
        2,
        tensor("x", S, [2]),
        values_int64s=[1],
        extra=[attr("keys_strings", STRINGS)],
    )
    le("labelencoder2/no_shape", 3, tensor("x", S, None), keys_strings=["a"], values_int64s=[1])

    def le4(name: str, xe: int, **kw: Any) -> None:
        le(name, 4, tensor("x", xe, [2, "N"]), **kw)

    no_keys = attr("keys_int64s", INTS)
    le4("labelencoder4/s2i", S, keys_strings=["a", "b"], values_int64s=[1, 2])
    le4(
        "labelencoder4/tensors",
        I32,
        keys_tensor=init("k", [1, 2], np.int32),
        values_tensor=init("v", [1, 2], np.float64),
    )
    le4(
        "labelencoder4/int16_to_str",
        I16,
        keys_tensor=init("k", [1], np.int16),
        values_strings=["a"],
    )
    le4("labelencoder4/no_keys", S, values_int64s=[1])
    le4("labelencoder4/key_type", F, keys_strings=["a"], values_int64s=[1])
    le4(
        "labelencoder4/keys_2d",
        I32,
        keys_tensor=init("k", [[1, 2]], np.int32),
        values_int64s=[1, 2],
    )
    le4("labelencoder4/no_values", S, keys_strings=["a"])
    le4("labelencoder4/len_differs", S, keys_strings=["a", "b"], values_int64s=[1])
    le4("labelencoder4/two_keys", S, keys_strings=["a"], keys_int64s=[1], values_int64s=[1])
    le4(
        "labelencoder4/empty_then_keys",
        S,
        keys_strings=["a"],
        values_int64s=[1],
        extra=[no_keys],
    )
    le4(
        "labelencoder4/keys_then_empty",
        S,
        keys_tensor=init("k", ["a"], object),
        values_int64s=[1],
        extra=[no_keys],
    )
    le4(
        "labelencoder4/default_ok",
        S,
        keys_strings=["a"],
        values_int64s=[1],
        default_tensor=init("d", [7]),
    )
    le4(
        "labelencoder4/default_type",
        S,
        keys_strings=["a"],
        values_int64s=[1],
        default_tensor=init("d", [7], np.float32),
    )
    le4(
        "labelencoder4/default_dims",
        S,
        keys_strings=["a"],
        values_int64s=[1],
        default_tensor=init("d", [7, 8]),
    )
    le4(
        "labelencoder4/default_scalar",
        S,
        keys_strings=["a"],
        values_int64s=[1],
        default_tensor=init("d", 7),
    )
    le4(
        "labelencoder4/keys_neg_len",
        I32,
        keys_tensor=init("k", [1], np.int32, dims=[-1]),
        values_int64s=[1],
    )


def _linear_svm(c: _Cases) -> None:
    """LinearClassifier, OneHotEncoder, SVMClassifier."""

    def lc(name: str, xs: Any, **kw: Any) -> None:
        c.case(
            name,
            [ml("LinearClassifier", ["x"], ["y", "z"], **kw)],
            [tensor("x", F, xs)],
            [(ML, 1)],
        )

    nine = [1.0] * 9
    lc(
        "linearclassifier/basic",
        ["N", 3],
        coefficients=nine,
        intercepts=[0.0] * 3,
        classlabels_ints=[0, 1, 2],
    )
    lc(
        "linearclassifier/rank1",
        [3],
        coefficients=nine,
        intercepts=[0.0] * 3,
        classlabels_ints=[0, 1, 2],
    )
    lc("linearclassifier/rank3", [2, 3, 4], coefficients=nine, intercepts=[0.0] * 3)
    lc(
        "linearclassifier/binary_strings",
        [5, 3],
        coefficients=[1.0] * 3,
        intercepts=[0.0],
        classlabels_strings=["a", "b"],
    )
    lc(
        "linearclassifier/binary_ints",
        [5, 3],
        coefficients=[1.0] * 3,
        intercepts=[0.0],
        classlabels_ints=[4, 5],
    )
    lc("linearclassifier/no_shape", None, coefficients=[1.0] * 3, intercepts=[0.0, 1.0])
    lc("linearclassifier/no_intercepts", [5, 3], coefficients=[1.0] * 3)
    lc("linearclassifier/rank0", [], coefficients=[1.0] * 3)

    def ohe(name: str, x: onnx.ValueInfoProto, **kw: Any) -> None:
        c.case(name, [ml("OneHotEncoder", ["x"], ["y"], **kw)], [x], [(ML, 1)])

    ohe("onehotencoder/ints", tensor("x", I64, [2, "N"]), cats_int64s=[1, 2, 3, 4])
    ohe("onehotencoder/strings", tensor("x", S, []), cats_strings=["a", "b"])
    ohe("onehotencoder/both", tensor("x", S, [2]), cats_int64s=[1], cats_strings=["a"])
    ohe("onehotencoder/none", tensor("x", S, [2]))
    ohe("onehotencoder/no_shape", tensor("x", D, None), cats_int64s=[1])

    x23 = [tensor("x", F, [2, 3])]
    svm = "SVMClassifier"
    c.case(
        "svmclassifier/strings",
        [ml(svm, ["x"], ["y", "z"], classlabels_strings=["a", "b"])],
        x23,
        [(ML, 1)],
    )
    c.case(
        "svmclassifier/ints", [ml(svm, ["x"], ["y", "z"], classlabels_ints=[1, 2])], x23, [(ML, 1)]
    )


def _tree_ensembles(c: _Cases) -> None:
    """TreeEnsembleClassifier 1 and 3, TreeEnsembleRegressor 3, TreeEnsemble 5."""
    x23 = [tensor("x", F, [2, 3])]
    tec = "TreeEnsembleClassifier"
    c.case(
        "treeensembleclassifier1/strings",
        [ml(tec, ["x"], ["y", "z"], classlabels_strings=["a"])],
        x23,
        [(ML, 1)],
    )
    c.case("treeensembleclassifier1/none", [ml(tec, ["x"], ["y", "z"])], x23, [(ML, 2)])

    def tec3(name: str, xs: Any, **kw: Any) -> None:
        c.case(name, [ml(tec, ["x"], ["y", "z"], **kw)], [tensor("x", F, xs)], [(ML, 3)])

    one = init("t", [1.0], np.float64)
    tec3("treeensembleclassifier3/ints", ["N", 4], classlabels_int64s=[0, 1, 2])
    tec3("treeensembleclassifier3/strings", [5, 4], classlabels_strings=["a", "b"])
    tec3("treeensembleclassifier3/no_labels", [5, 4])
    tec3("treeensembleclassifier3/no_shape", None, classlabels_int64s=[0, 1])
    tec3("treeensembleclassifier3/rank3", [5, 4, 1], classlabels_int64s=[0, 1])
    tec3(
        "treeensembleclassifier3/twin_values",
        [5, 4],
        classlabels_int64s=[0],
        nodes_values=[1.0],
        nodes_values_as_tensor=one,
    )
    tec3(
        "treeensembleclassifier3/twin_weights",
        [5, 4],
        classlabels_int64s=[0],
        class_weights=[1.0],
        class_weights_as_tensor=one,
    )
    tec3(
        "treeensembleclassifier3/twin_base",
        [5, 4],
        classlabels_int64s=[0],
        base_values=[1.0],
        base_values_as_tensor=one,
    )
    tec3(
        "treeensembleclassifier3/twin_hitrates",
        [5, 4],
        classlabels_int64s=[0],
        nodes_hitrates=[1.0],
        nodes_hitrates_as_tensor=one,
    )

    def ter3(name: str, xs: Any, **kw: Any) -> None:
        c.case(
            name,
            [ml("TreeEnsembleRegressor", ["x"], ["y"], **kw)],
            [tensor("x", D, xs)],
            [(ML, 3)],
        )

    ter3("treeensembleregressor3/targets", [5, 4], n_targets=2)
    ter3("treeensembleregressor3/no_targets", ["N", 4])
    ter3("treeensembleregressor3/rank1", [4], n_targets=2)
    ter3(
        "treeensembleregressor3/twin_weights",
        [5, 4],
        target_weights=[1.0],
        target_weights_as_tensor=one,
    )

    def te(name: str, xs: Any = (3, 2), xe: int = D, drop: Sequence[str] = (), **over: Any) -> None:
        """A valid TreeEnsemble with attributes `over` replaced, `drop` removed."""
        a = {
            "aggregate_function": 1,
            "leaf_targetids": [0, 1, 0, 1],
            "leaf_weights": init("w", [5.23, 12.12, -12.23, 7.21], np.float64),
            "n_targets": 2,
            "nodes_falseleafs": [1, 0, 1],
            "nodes_falsenodeids": [2, 2, 3],
            "nodes_featureids": [0, 0, 0],
            "nodes_modes": init("m", [0, 0, 0], np.uint8),
            "nodes_splits": init("s", [3.14, 1.2, 4.2], np.float64),
            "nodes_trueleafs": [0, 1, 1],
            "nodes_truenodeids": [1, 0, 1],
            "post_transform": 0,
            "tree_roots": [0],
        }
        a.update(over)
        for k in drop:
            a.pop(k)
        c.case(
            name,
            [ml("TreeEnsemble", ["x"], ["y"], **a)],
            [tensor("x", xe, _shape(xs))],
            [(ML, 5)],
        )

    te("treeensemble/ok")
    te("treeensemble/no_targets", drop=["n_targets"])
    te("treeensemble/sym_batch", xs=("N", 2))
    te("treeensemble/no_shape", xs=None)
    te("treeensemble/rank3", xs=(3, 2, 1))
    te("treeensemble/float_input", xe=F)
    te("treeensemble/modes_len", nodes_modes=init("m", [0, 0], np.uint8))
    te("treeensemble/modes_type", nodes_modes=init("m", [0, 0, 0]))
    te("treeensemble/featureids_len", nodes_featureids=[0, 0])
    te("treeensemble/hitrates_type", nodes_hitrates=init("r", [1, 1, 1], np.float64))
    te("treeensemble/hitrates_ok", nodes_hitrates=init("r", [1, 1, 1], np.float32))
    te("treeensemble/tracks_len", nodes_missing_value_tracks_true=[0])
    te("treeensemble/membership_type", membership_values=init("mv", [1.0], np.float32))
    te("treeensemble/membership_ok", membership_values=init("mv", [1.0], np.float64))
    te(
        "treeensemble/leaf_weights_2d",
        leaf_weights=init("w", [[5.23, 12.12, -12.23, 7.21]], np.float64),
    )
    te("treeensemble/leaf_len", leaf_targetids=[0, 1, 0])
    te("treeensemble/leaf_type", leaf_weights=init("w", [5.23, 12.12, -12.23, 7.21], np.float32))
    te("treeensemble/splits_scalar", nodes_splits=init("s", 3.0, np.float64))
    te("treeensemble/splits_neg", nodes_splits=init("s", [3.0], np.float64, dims=[-1]))
    te("treeensemble/featureids_missing", drop=["nodes_featureids"])
    te("treeensemble/leaf_missing", drop=["leaf_weights"])
    te("treeensemble/trueleafs_float", nodes_trueleafs=[0.0, 1.0, 1.0])
    te(
        "treeensemble/fp16",
        xe=F16,
        nodes_splits=init("s", [3.14, 1.2, 4.2], np.float16),
        leaf_weights=init("w", [5.23, 12.12, -12.23, 7.21], np.float16),
    )
    empty = [
        "nodes_featureids",
        "leaf_targetids",
        "nodes_falseleafs",
        "nodes_falsenodeids",
        "nodes_trueleafs",
        "nodes_truenodeids",
    ]
    c.case(
        "treeensemble/empty_lists",
        [
            ml(
                "TreeEnsemble",
                ["x"],
                ["y"],
                leaf_weights=init("w", [], np.float64),
                nodes_modes=init("m", [], np.uint8),
                nodes_splits=init("s", [], np.float64),
                tree_roots=[0],
                extra=[attr(a, INTS) for a in empty],
            )
        ],
        [tensor("x", D, [3, 2])],
        [(ML, 5)],
    )


def _zipmap(c: _Cases) -> None:
    """ZipMap."""

    def zipmap(name: str, xs: Any, **kw: Any) -> None:
        c.case(name, [ml("ZipMap", ["x"], ["z"], **kw)], [tensor("x", F, xs)], [(ML, 1)])

    zipmap("zipmap/strings", [1, 2], classlabels_strings=["a", "b"])
    zipmap("zipmap/ints", [2], classlabels_int64s=[1, 2])
    zipmap("zipmap/rank3", [1, 1, 2], classlabels_int64s=[1, 2])
    zipmap("zipmap/none", [1, 2])
    zipmap("zipmap/both", [1, 2], classlabels_int64s=[1], classlabels_strings=["a"])
    zipmap("zipmap/no_shape", None, classlabels_strings=["a"])


def _optimizers(c: _Cases) -> None:
    """Adagrad, Momentum, Adam (inputs alternate float and double, so that a
    mismatch shows who gets what)."""

    def opt(name: str, op: str, n_in: int, n_out: int, shapes: Any = None, **kw: Any) -> None:
        ins = [tensor("r", F, []), tensor("t", I64, [])]
        names = ["r", "t"]
        for i in range(n_in):
            s = (shapes or {}).get(i, [3, i + 1])
            ins.append(tensor(f"in{i}", F if i % 2 == 0 else D, s))
            names.append(f"in{i}")
        outs = [f"out{i}" for i in range(n_out)]
        c.case(name, [node(op, names, outs, domain=TR, **kw)], ins, [(TR, 1)])

    opt("adagrad/one", "Adagrad", 3, 2)
    opt("adagrad/two", "Adagrad", 6, 4)
    opt("adagrad/extra_input", "Adagrad", 5, 2)
    opt("adagrad/few_outputs", "Adagrad", 3, 1)
    opt("adagrad/extra_outputs", "Adagrad", 3, 3)
    opt("adagrad/no_shape", "Adagrad", 3, 2, shapes={0: None})
    opt("momentum/one", "Momentum", 3, 2, **_MOMENTUM)
    opt("momentum/two", "Momentum", 6, 4, **_MOMENTUM)
    opt("momentum/not_multiple", "Momentum", 4, 2, **_MOMENTUM)
    opt("momentum/few_outputs", "Momentum", 6, 3, **_MOMENTUM)
    opt("adam/one", "Adam", 4, 3)
    opt("adam/two", "Adam", 8, 6)
    opt("adam/not_multiple", "Adam", 5, 3)
    opt("adam/few_outputs", "Adam", 4, 2)
    opt("adam/sym", "Adam", 4, 3, shapes={0: ["N", 3], 3: ["M"]})


def _mod_graph(
    name: str = "score_mod",
    in_t: int = F,
    out_t: int = F,
    in_shape: Any = ("B", "H", "L", "S"),
    out_shape: Any = ("B", "H", "L", "S"),
    n_in: int = 1,
    out_type: onnx.ValueInfoProto | None = None,
) -> onnx.AttributeProto:
    """A score_mod / prob_mod attribute: an Identity of its first input."""
    ins = [tensor(f"s{i}", in_t, _shape(in_shape)) for i in range(n_in)]
    out = out_type if out_type is not None else tensor("o", out_t, _shape(out_shape))
    g = graph([node("Identity", ["s0"], ["o"])], ins, [out], name="mod")
    return helper.make_attribute(name, g)


def _flex_attention(c: _Cases) -> None:
    """FlexAttention."""

    def fa(
        name: str,
        q: Any = (1, 2, 4, 8),
        k: Any = (1, 2, 4, 8),
        v: Any = (1, 2, 4, 8),
        elems: Sequence[int] = (F, F, F),
        attrs: Sequence[onnx.AttributeProto] = (),
    ) -> None:
        ins = [
            tensor("q", elems[0], _shape(q)),
            tensor("k", elems[1], _shape(k)),
            tensor("v", elems[2], _shape(v)),
        ]
        n = node("FlexAttention", ["q", "k", "v"], ["y"], domain=PV, extra=attrs)
        c.case(name, [n], ins, [(PV, 1)], ir=11)

    def precision(value: int) -> onnx.AttributeProto:
        return helper.make_attribute("softmax_precision", value)

    fa("flexattention/basic")
    fa("flexattention/gqa", q=(1, 4, 4, 8))
    fa("flexattention/gqa_bad", q=(1, 3, 4, 8))
    fa("flexattention/heads_kv", v=(1, 3, 4, 8))
    fa("flexattention/seq_kv", v=(1, 2, 5, 8))
    fa("flexattention/head_size", k=(1, 2, 4, 7), v=(1, 2, 4, 7))
    fa("flexattention/dv", v=(1, 2, 4, 16))
    fa("flexattention/rank3", q=(1, 2, 4))
    fa("flexattention/no_shape", q=None)
    fa("flexattention/elem", elems=(F, D, F))
    fa("flexattention/sym_batch", q=("B", 2, "L", 8), k=(1, 2, "S", 8), v=("B", 2, "S", 8))
    fa(
        "flexattention/sym_all",
        q=("B", "H", "L", "D"),
        k=("B", "G", "S", "D"),
        v=("B", "G", "S", "E"),
    )
    fa("flexattention/batch_differs", k=(2, 2, 4, 8), v=(2, 2, 4, 8))
    fa("flexattention/batch_kv_differs", q=("B", 2, 4, 8), k=(2, 2, 4, 8), v=(3, 2, 4, 8))
    fa("flexattention/kv_heads_zero", q=(1, 2, 4, 8), k=(1, 0, 4, 8), v=(1, 0, 4, 8))
    fa("flexattention/double", elems=(D, D, D))
    fa("flexattention/fp16", elems=(F16,) * 3)
    fa("flexattention/softmax_int", attrs=[precision(6)])
    fa("flexattention/softmax_f16", attrs=[precision(10)])
    fa("flexattention/softmax_wrap", attrs=[precision(2**32 + 1)])
    fa("flexattention/score_mod", attrs=[_mod_graph()])
    fa("flexattention/prob_mod", attrs=[_mod_graph("prob_mod")])
    fa("flexattention/mod_two_inputs", attrs=[_mod_graph(n_in=2)])
    fa("flexattention/mod_in_double", attrs=[_mod_graph(in_t=D)])
    fa("flexattention/mod_out_double", attrs=[_mod_graph(out_t=D)])
    fa("flexattention/mod_double_ok", elems=(D, D, D), attrs=[_mod_graph(in_t=D, out_t=D)])
    fa("flexattention/mod_double_inputs_float_mod", elems=(D, D, D), attrs=[_mod_graph()])
    fa("flexattention/mod_rank3", attrs=[_mod_graph(in_shape=("B", "H", "L"))])
    fa("flexattention/mod_out_rank3", attrs=[_mod_graph(out_shape=("B", "H", "L"))])
    fa(
        "flexattention/mod_shape_change",
        attrs=[_mod_graph(in_shape=(1, 2, 4, 4), out_shape=(1, 2, 4, 5))],
    )
    fa("flexattention/mod_no_shapes", attrs=[_mod_graph(in_shape=None, out_shape=None)])
    seq_out = typed("o", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None)))
    fa("flexattention/mod_seq_out", attrs=[_mod_graph(out_type=seq_out)])
    fa("flexattention/mod_f16_precision", attrs=[precision(10), _mod_graph()])


def _unknown_rank(c: _Cases) -> None:
    """Inputs of unknown rank (a CastMap's output has no shape)."""

    def noshape(
        name: str,
        to: str,
        op_nodes: Sequence[onnx.NodeProto],
        extra_inputs: Sequence[onnx.ValueInfoProto] = (),
        opsets: Sequence[tuple[str, int]] = ((ML, 5),),
    ) -> None:
        cast = ml("CastMap", ["m"], ["u"], cast_to=to)
        c.case(name, [cast, *op_nodes], [typed("m", _MAP_FLOAT), *extra_inputs], list(opsets))

    one = [1.0]
    noshape(
        "unknown_rank/arrayfeatureextractor_x",
        "TO_FLOAT",
        [ml("ArrayFeatureExtractor", ["u", "y"], ["z"])],
        [tensor("y", I64, [2])],
    )
    noshape(
        "unknown_rank/arrayfeatureextractor_y",
        "TO_INT64",
        [ml("ArrayFeatureExtractor", ["x", "u"], ["z"])],
        [tensor("x", F, [3, 4])],
    )
    noshape("unknown_rank/binarizer", "TO_FLOAT", [ml("Binarizer", ["u"], ["y"])])
    noshape(
        "unknown_rank/categorymapper", "TO_INT64", [ml("CategoryMapper", ["u"], ["y"], **_CATS)]
    )
    noshape(
        "unknown_rank/labelencoder1",
        "TO_STRING",
        [ml("LabelEncoder", ["u"], ["y"], classes_strings=["a"])],
        opsets=[(ML, 1)],
    )
    for version in (2, 4):
        noshape(
            f"unknown_rank/labelencoder{version}",
            "TO_STRING",
            [ml("LabelEncoder", ["u"], ["y"], keys_strings=["a"], values_floats=one)],
            opsets=[(ML, version)],
        )
    noshape(
        "unknown_rank/linearclassifier",
        "TO_FLOAT",
        [ml("LinearClassifier", ["u"], ["y", "z"], coefficients=one, intercepts=[1.0, 2.0])],
    )
    noshape(
        "unknown_rank/onehotencoder",
        "TO_INT64",
        [ml("OneHotEncoder", ["u"], ["y"], cats_int64s=[1, 2])],
    )
    noshape(
        "unknown_rank/treeensembleclassifier3",
        "TO_FLOAT",
        [ml("TreeEnsembleClassifier", ["u"], ["y", "z"], classlabels_int64s=[1, 2])],
        opsets=[(ML, 3)],
    )
    noshape(
        "unknown_rank/treeensembleregressor3",
        "TO_FLOAT",
        [ml("TreeEnsembleRegressor", ["u"], ["y"], n_targets=3)],
        opsets=[(ML, 3)],
    )
    noshape(
        "unknown_rank/treeensemble",
        "TO_FLOAT",
        [
            ml(
                "TreeEnsemble",
                ["u"],
                ["y"],
                leaf_targetids=[0],
                leaf_weights=init("w", one, np.float32),
                nodes_falseleafs=[1],
                nodes_falsenodeids=[0],
                nodes_featureids=[0],
                nodes_modes=init("m", [0], np.uint8),
                nodes_splits=init("s", one, np.float32),
                nodes_trueleafs=[1],
                nodes_truenodeids=[0],
                tree_roots=[0],
            )
        ],
    )
    noshape("unknown_rank/zipmap", "TO_FLOAT", [ml("ZipMap", ["u"], ["z"], classlabels_int64s=[1])])
    noshape(
        "unknown_rank/adam",
        "TO_FLOAT",
        [node("Adam", ["r", "t", "u", "u", "u", "u"], ["a", "b", "c"], domain=TR)],
        [tensor("r", F, []), tensor("t", I64, [])],
        opsets=[(ML, 5), (TR, 1)],
    )
    noshape(
        "unknown_rank/flexattention_q",
        "TO_FLOAT",
        [node("FlexAttention", ["u", "k", "v"], ["y"], domain=PV)],
        [tensor("k", F, [1, 2, 4, 8]), tensor("v", F, [1, 2, 4, 8])],
        opsets=[(ML, 5), (PV, 1)],
    )
    noshape(
        "unknown_rank/flexattention_kv",
        "TO_FLOAT",
        [node("FlexAttention", ["q", "u", "u"], ["y"], domain=PV)],
        [tensor("q", F, [1, 2, 4, 8])],
        opsets=[(ML, 5), (PV, 1)],
    )


def _after_unknown_op(c: _Cases) -> None:
    """After an operator onnx cannot infer, inference errors are masked,
    runtime errors are not."""

    def masked(
        name: str,
        op_node: onnx.NodeProto,
        inputs: Sequence[onnx.ValueInfoProto],
        opsets: Sequence[tuple[str, int]],
    ) -> None:
        unknown = node("Foo", ["dummy"], ["foo_out"], domain="custom.x")
        c.case(name, [unknown, op_node], inputs, [*opsets, ("custom.x", 1)])

    r_t = [tensor("r", F, []), tensor("t", I64, [])]
    masked(
        "after_unknown_op/momentum_not_multiple",
        node("Momentum", ["r", "t", "a", "b"], ["o1", "o2"], domain=TR, **_MOMENTUM),
        [*r_t, tensor("a", F, [2]), tensor("b", F, [2])],
        [(TR, 1)],
    )
    masked(
        "after_unknown_op/adam_few_outputs",
        node("Adam", ["r", "t", "a", "b", "c", "d"], ["o1", "o2"], domain=TR),
        [*r_t, *(tensor(n, F, [2]) for n in "abcd")],
        [(TR, 1)],
    )
    masked(
        "after_unknown_op/onehotencoder_none",
        ml("OneHotEncoder", ["x"], ["y"]),
        [tensor("x", S, [2])],
        [(ML, 1)],
    )
    masked(
        "after_unknown_op/flexattention_gqa_bad",
        node("FlexAttention", ["q", "k", "v"], ["y"], domain=PV),
        [tensor("q", F, [1, 3, 4, 8]), tensor("k", F, [1, 2, 4, 8]), tensor("v", F, [1, 2, 4, 8])],
        [(PV, 1)],
    )


_SECTIONS = (
    _array_feature_extractor,
    _encoders,
    _label_encoder,
    _linear_svm,
    _tree_ensembles,
    _zipmap,
    _optimizers,
    _flex_attention,
    _unknown_rank,
    _after_unknown_op,
)


def cases() -> list[tuple[str, onnx.ModelProto]]:
    c = _Cases()
    for section in _SECTIONS:
        section(c)
    return c.built
