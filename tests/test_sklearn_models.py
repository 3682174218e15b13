"""scikit-learn models converted by skl2onnx, the way most tabular models
reach an ingestion pipeline: 174 models of 47 classifiers, regressors,
transformers, encoders and pipelines fitted on a small random data set and
converted at skl2onnx's default opset and at opsets 13 and 9, with and
without ZipMap, with float and double inputs. Their graphs are made of
onnx's ai.onnx.ml operators (LinearClassifier, LinearRegressor,
SVMClassifier, SVMRegressor, TreeEnsembleClassifier and Regressor, ZipMap,
Scaler, Normalizer, Binarizer, Imputer, OneHotEncoder, LabelEncoder,
DictVectorizer, ArrayFeatureExtractor) and of the computations skl2onnx
writes around them (shape arithmetic, TopK, a Scan for k-neighbors'
distances). Against onnx and onnxruntime:

- decoding: every field equal to onnx's;
- `scripts/diff_random_models.py`'s comparison: the full check's verdict,
  `infer_shapes(strict=True)`'s verdict and every value's type, with
  `data_prop=True` the verdict and every value's type onnx's or a refinement
  of it;
- the conversions skl2onnx gets wrong are refused by both, with the same
  findings (REFUSED);
- checked as onnxruntime runs them (`contrib_ops=True`), the classic ML
  operators onnx's rules give types only (tree ensembles of version 1,
  LinearRegressor, SVMClassifier, SVMRegressor, ArrayFeatureExtractor of a
  vector, Scaler, Normalizer, Imputer) get the shapes
  onnxruntime's kernels compute: the one wrong declaration that shows (a
  two-target tree) is reported, no other verdict changes;
- `infer_shapes(symbolic=True, data_prop=True, contrib_ops=True)`: every dim
  of every model onnxruntime runs, at two batch sizes, is the dim of the
  array onnxruntime computes for that value.

The models are made by a fixture (no file is committed); the conversions
are deterministic for the pinned scikit-learn and skl2onnx.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from skl2onnx import convert_sklearn
from skl2onnx.common.data_types import (
    DictionaryType,
    DoubleTensorType,
    FloatTensorType,
    Int64TensorType,
    StringTensorType,
)
from sklearn import (
    cluster,
    compose,
    cross_decomposition,
    decomposition,
    ensemble,
    feature_extraction,
    impute,
    linear_model,
    mixture,
    multiclass,
    naive_bayes,
    neighbors,
    neural_network,
    pipeline,
    preprocessing,
    svm,
    tree,
)

import onnxfast

from _compare import assert_same
from conftest import _script_module

_RNG = np.random.RandomState(0)
_X = _RNG.rand(60, 5).astype(np.float32)
_TWO = (_X[:, 0] > 0.5).astype(np.int64)
_THREE = (_X[:, 0] * 3).astype(np.int64)
_TARGET = _X @ np.arange(1, 6, dtype=np.float32) + 0.1
_FLOATS = [("X", FloatTensorType([None, 5]))]
_DOUBLES = [("X", DoubleTensorType([None, 5]))]
_CATEGORIES = np.array([["a", "x"], ["b", "y"], ["c", "x"], ["a", "z"]] * 5)


def _estimators() -> dict[str, tuple]:
    """name: (fitted estimator, initial types, classifier: ZipMap is an
    option)."""
    classifiers = {
        "logistic_binary": (linear_model.LogisticRegression(), _TWO),
        "logistic": (linear_model.LogisticRegression(), _THREE),
        "logistic_strings": (linear_model.LogisticRegression(), np.array(list("abc"))[_THREE]),
        "linear_svc": (svm.LinearSVC(), _THREE),
        "svc": (svm.SVC(probability=True), _THREE),
        "decision_tree": (tree.DecisionTreeClassifier(max_depth=4, random_state=0), _THREE),
        "random_forest": (
            ensemble.RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0),
            _TWO,
        ),
        "gradient_boosting": (
            ensemble.GradientBoostingClassifier(n_estimators=4, random_state=0),
            _THREE,
        ),
        "hist_gradient_boosting": (ensemble.HistGradientBoostingClassifier(max_iter=4), _THREE),
        "k_neighbors": (neighbors.KNeighborsClassifier(3), _THREE),
        "gaussian_nb": (naive_bayes.GaussianNB(), _THREE),
        "bernoulli_nb": (naive_bayes.BernoulliNB(), _TWO),
        "mlp": (
            neural_network.MLPClassifier(hidden_layer_sizes=(8,), max_iter=30, random_state=0),
            _THREE,
        ),
        "one_vs_rest": (multiclass.OneVsRestClassifier(linear_model.LogisticRegression()), _THREE),
        "one_vs_one": (multiclass.OneVsOneClassifier(linear_model.LogisticRegression()), _THREE),
        "voting": (
            ensemble.VotingClassifier(
                [("a", linear_model.LogisticRegression()), ("b", naive_bayes.GaussianNB())],
                voting="soft",
            ),
            _THREE,
        ),
        "pipeline": (
            pipeline.make_pipeline(
                preprocessing.StandardScaler(),
                decomposition.PCA(3),
                linear_model.LogisticRegression(),
            ),
            _THREE,
        ),
        # Multi-label: skl2onnx declares the label as rank 1 (see REFUSED).
        "mlp_multilabel": (
            neural_network.MLPClassifier(hidden_layer_sizes=(4,), max_iter=30, random_state=0),
            np.stack([_TWO, 1 - _TWO], 1),
        ),
    }
    others = {
        "linear_regression": linear_model.LinearRegression(),
        "ridge": linear_model.Ridge(),
        "svr": svm.SVR(),
        "tree_regressor": tree.DecisionTreeRegressor(max_depth=4, random_state=0),
        "forest_regressor": ensemble.RandomForestRegressor(
            n_estimators=3, max_depth=3, random_state=0
        ),
        "hist_gradient_regressor": ensemble.HistGradientBoostingRegressor(max_iter=4),
        "k_neighbors_regressor": neighbors.KNeighborsRegressor(3),
        "mlp_regressor": neural_network.MLPRegressor(
            hidden_layer_sizes=(8,), max_iter=30, random_state=0
        ),
        # skl2onnx declares PLS's output with the input's width (REFUSED).
        "pls": cross_decomposition.PLSRegression(2),
    }
    # Two targets: skl2onnx declares the output [N, 1] (see
    # test_tree_outputs_as_onnxruntime_computes_them).
    two_targets = tree.DecisionTreeRegressor(max_depth=3, random_state=0)
    two_targets.fit(_X, np.stack([_TARGET, -_TARGET], 1))
    transformers = {
        "standard_scaler": preprocessing.StandardScaler(),
        "min_max_scaler": preprocessing.MinMaxScaler(),
        "normalizer": preprocessing.Normalizer(),
        "binarizer": preprocessing.Binarizer(threshold=0.5),
        "polynomial": preprocessing.PolynomialFeatures(2),
        "bins_onehot": preprocessing.KBinsDiscretizer(3, encode="onehot-dense"),
        "imputer": impute.SimpleImputer(),
        "pca": decomposition.PCA(3),
        "truncated_svd": decomposition.TruncatedSVD(3),
        "kmeans": cluster.KMeans(3, n_init=2, random_state=0),
        "gaussian_mixture": mixture.GaussianMixture(2, random_state=0),
        "isolation_forest": ensemble.IsolationForest(n_estimators=4, random_state=0),
        "union": pipeline.make_union(preprocessing.StandardScaler(), decomposition.PCA(2)),
    }
    made: dict[str, tuple] = {}
    for name, (est, y) in classifiers.items():
        made[name] = (est.fit(_X, y), True)
    for name, est in others.items():
        made[name] = (est.fit(_X, _TARGET), False)
    for name, est in transformers.items():
        made[name] = (est.fit(_X), False)
    made["tree_two_targets"] = (two_targets, False)
    return made


def _encoders() -> dict[str, tuple]:
    """Models of strings, integers and maps: name: (fitted estimator,
    initial types)."""
    strings = [("c", StringTensorType([None, 2]))]
    columns = compose.ColumnTransformer(
        [
            ("scaled", preprocessing.StandardScaler(), [0, 1]),
            ("binned", preprocessing.KBinsDiscretizer(3, encode="onehot-dense"), [2, 3]),
        ]
    )
    return {
        "onehot_strings": (preprocessing.OneHotEncoder().fit(_CATEGORIES), strings),
        "ordinal_strings": (preprocessing.OrdinalEncoder().fit(_CATEGORIES), strings),
        "onehot_ints": (
            preprocessing.OneHotEncoder().fit(_RNG.randint(0, 4, (20, 3))),
            [("c", Int64TensorType([None, 3]))],
        ),
        "label_encoder": (
            preprocessing.LabelEncoder().fit(["a", "b", "c"]),
            [("c", StringTensorType([None]))],
        ),
        "column_transformer": (
            pipeline.make_pipeline(columns, linear_model.LogisticRegression()).fit(_X, _TWO),
            _FLOATS,
        ),
        "dict_vectorizer": (
            feature_extraction.DictVectorizer(sparse=False).fit([{"a": 1.0, "b": 2.0}, {"c": 3.0}]),
            [("d", DictionaryType(StringTensorType([1]), FloatTensorType([1])))],
        ),
    }


def _convert(est, types, opset: int | None, options: dict | None) -> onnx.ModelProto | None:
    kw: dict = {"initial_types": types}
    if opset is not None:
        kw["target_opset"] = opset
    if options:
        kw["options"] = {id(est): options}
    try:
        return convert_sklearn(est, **kw)
    except Exception:
        # skl2onnx has no converter at this opset (or for this option).
        return None


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("sklearn")
    written: dict[str, Path] = {}

    def write(name: str, model: onnx.ModelProto | None) -> None:
        if model is not None:
            path = folder / f"{name}.onnx"
            path.write_bytes(model.SerializeToString())
            written[name] = path

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (est, classifier) in _estimators().items():
            for opset in (None, 13, 9):
                suffix = "" if opset is None else f"_opset{opset}"
                write(name + suffix, _convert(est, _FLOATS, opset, None))
                if classifier and opset is None:
                    write(f"{name}_nozipmap", _convert(est, _FLOATS, None, {"zipmap": False}))
            write(f"{name}_double", _convert(est, _DOUBLES, None, None))
        for name, (est, types) in _encoders().items():
            for opset in (None, 13):
                write(
                    name + ("" if opset is None else f"_opset{opset}"),
                    _convert(est, types, opset, None),
                )
    return written


# Conversions both checkers refuse, with onnxfast's findings (the comparison
# below finds the same verdict in onnx's). skl2onnx declares a multi-label
# MLP's label as rank 1 where its graph computes [N, 2] (E712; without
# ZipMap also the probabilities' width, E713); a one-vs-one classifier's
# label as rank 1 where ArgMax keeps the axis ([N, 1]); PLS's output as
# [N, 5] (the input's width) where it computes [N, 1] (E713). At opset 9 it
# writes the one-vs-one Slices with inputs, which Slice takes from opset 10
# (E407, E413). With double inputs it feeds doubles to ZipMap, which takes
# floats (E701), declares the float outputs of trees and of KBinsDiscretizer
# as double (E711), and concatenates a float constant with doubles (E702).
REFUSED = {
    "logistic_binary_double": ["E701"],
    "logistic_double": ["E701"],
    "logistic_strings_double": ["E701"],
    "svc_double": ["E701"],
    "decision_tree_double": ["E711"],
    "gradient_boosting_double": ["E711"],
    "k_neighbors_double": ["E701"],
    "gaussian_nb_double": ["E701"],
    "bernoulli_nb_double": ["E701"],
    "mlp_double": ["E701"],
    "one_vs_rest_double": ["E701"],
    "one_vs_one": ["E712"],
    "one_vs_one_nozipmap": ["E712"],
    "one_vs_one_opset9": ["E407", "E413", "E413", "E407", "E413", "E413", "E407", "E413", "E413"],
    "one_vs_one_double": ["E712", "E701"],
    "pipeline_double": ["E701"],
    "mlp_multilabel": ["E712"],
    "mlp_multilabel_nozipmap": ["E712", "E713"],
    "mlp_multilabel_opset13": ["E712"],
    "mlp_multilabel_opset9": ["E712"],
    "mlp_multilabel_double": ["E712", "E701"],
    "tree_regressor_double": ["E711"],
    "forest_regressor_double": ["E711"],
    "pls": ["E713"],
    "pls_opset13": ["E713"],
    "pls_opset9": ["E713"],
    "pls_double": ["E713"],
    "polynomial_double": ["E702"],
    "bins_onehot_double": ["E711"],
    "tree_two_targets_double": ["E711"],
}
# ... and onnxfast with data_prop: one_vs_one at opset 13 reshapes each
# binary classifier's probabilities to [dim, -1] from the input's Shape;
# onnx's Reshape 13 reads a constant shape only (its 14 reads the computed
# one), so only onnxfast infers the label's rank 2 there.
DATA_PROP_FINDS = {"one_vs_one_opset13": "'output_label': the inferred rank 2 [?,1] differs"}


def test_sklearn_models_decode_check_and_infer_as_onnx(models: dict[str, Path]) -> None:
    compare = _script_module("diff_random_models").compare
    assert len(models) > 120, len(models)
    failures = []
    refused = 0
    for name, path in models.items():
        assert_same(onnxfast.load(path), onnx.load(path))
        codes = [d.code for d in onnxfast.check(path, full=True).errors]
        refused += bool(codes)
        if codes != REFUSED.get(name, []):
            failures.append(f"{name}: {codes}")
        found = compare(str(path))["found"]
        if name in DATA_PROP_FINDS:
            assert [kind for kind, _ in found] == ["data_prop verdict"], found
            assert "onnx True" in found[0][1], found
            assert DATA_PROP_FINDS[name] in found[0][1], found
            continue
        failures.extend(f"{name}: {kind}: {detail}" for kind, detail in found)
    assert not failures, "\n".join(failures[:20])
    assert refused == len(REFUSED), refused


def test_tree_outputs_as_onnxruntime_computes_them(models: dict[str, Path]) -> None:
    """onnx has no shape rule for TreeEnsembleRegressor 1 and types only for
    TreeEnsembleClassifier 1, the versions skl2onnx writes; onnxruntime's
    kernels give them version 3's shapes ([N, n_targets]; [N] and
    [N, classes]). Checked as onnxruntime runs them, they get those: the
    output skl2onnx declares [N, 1] for a tree of two targets is reported
    (onnxruntime returns [N, 2]), and no other model's verdict changes."""
    import onnxruntime as ort

    failures = []
    for name, path in models.items():
        codes = [d.code for d in onnxfast.check(path, full=True, contrib_ops=True).errors]
        two = name.startswith("tree_two_targets") and name not in REFUSED
        if codes != (["E713"] if two else REFUSED.get(name, [])):
            failures.append(f"{name}: {codes}")
    assert not failures, failures
    path = models["tree_two_targets"]
    assert onnxfast.check(path, full=True).ok
    (finding,) = onnxfast.check(path, full=True, contrib_ops=True).errors
    assert "inferred [?,2], declared [?,1]" in str(finding), finding
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"X": _X[:3]})
    assert y.shape == (3, 2)


# onnxruntime has no kernel of doubles for SVMRegressor and Imputer.
NOT_RUN = {"svr_double", "imputer_double"}


def test_sklearn_models_symbolic_shapes_are_the_runtimes(models: dict[str, Path]) -> None:
    from test_real_models import _probe, _runtime_shapes

    probes, inferred = {}, {}
    for name, path in models.items():
        model = onnx.load(path)
        inputs = [v.type.tensor_type for v in model.graph.input]
        if name in REFUSED or name in NOT_RUN or any(t.elem_type not in (1, 11) for t in inputs):
            # Refused models, and inputs other than floats and doubles
            # (strings, maps).
            continue
        for t in inputs:
            # The batch, unnamed in skl2onnx's inputs, named so that its
            # dims are checked too (at batches of 1 and 2).
            if t.shape.dim and not t.shape.dim[0].HasField("dim_value"):
                t.shape.dim[0].dim_param = "N"
        inferred[name] = values = onnxfast.infer_shapes(
            model, symbolic=True, data_prop=True, contrib_ops=True
        ).graph.values
        probes[name] = _probe(model, values)
    failures = []
    checked = twice = 0
    for name, runs in _runtime_shapes(probes).items():
        twice += len(runs) == 2
        if not runs:
            failures.append(f"{name}: onnxruntime ran it at none of the sizes tried")
        for sizes, shapes in runs:
            for value, shape in shapes.items():
                at = inferred[name][value].shape_at(sizes)
                if at is None:
                    continue
                if name in DATA_PROP_FINDS and value == "output_label":
                    # The declaration data_prop reports: the array has the
                    # inferred rank 2, not the declared 1.
                    assert (len(at), len(shape)) == (1, 2), (at, shape)
                    continue
                if name.startswith("tree_two_targets") and value == "variable":
                    # The declaration reported above: 2 targets, not 1.
                    assert (at[1], shape[1]) == (1, 2), (at, shape)
                    continue
                if len(at) != len(shape):
                    failures.append(f"{name} {value}: {at} ran {shape}")
                    continue
                for k, (d, n) in enumerate(zip(at, shape, strict=True)):
                    if d is not None:
                        checked += 1
                        if d != n:
                            failures.append(f"{name} {value}[{k}] = {d}, ran {n} at {sizes}")
    assert not failures, f"{len(failures)} dims differ:\n" + "\n".join(failures[:20])
    # 132 models, each at batches of 1 and 2; ~4,000 dims.
    assert len(probes) > 120, len(probes)
    assert twice == len(probes), twice
    assert checked > 3_000, checked
