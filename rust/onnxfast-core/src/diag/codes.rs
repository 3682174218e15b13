//! Every diagnostic code, as named constants. docs/checks.md documents each
//! (a test keeps the two in step); the `summary` is its one-line meaning.

use super::Severity;

/// A diagnostic code: its stable identifier, its severity and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code {
    /// `E…` (errors onnx also reports), `S…` (strict errors), `W…` (warnings).
    pub id: &'static str,
    pub severity: Severity,
    /// One line, as in docs/checks.md (Markdown).
    pub summary: &'static str,
}

impl Code {
    /// A policy's code (P…): a rule of the caller's, not of ONNX.
    pub fn is_policy(&self) -> bool {
        self.id.starts_with('P')
    }
}

const fn error(id: &'static str, summary: &'static str) -> Code {
    Code {
        id,
        severity: Severity::Error,
        summary,
    }
}

const fn warning(id: &'static str, summary: &'static str) -> Code {
    Code {
        id,
        severity: Severity::Warning,
        summary,
    }
}

// Model
pub const NO_IR_VERSION: Code = error("E101", "`ir_version` is absent or 0.");
pub const IR_VERSION_TOO_NEW: Code = error("E102", "`ir_version` is newer than this checker (14).");
pub const DUPLICATE_METADATA_KEY: Code = error("E103", "`metadata_props` has the same key twice.");
pub const OPSET_VERSION_RANGE: Code =
    error("E104", "An opset import version does not fit in 32 bits.");
pub const NO_OPSET_IMPORT: Code = error("E105", "IR version ≥ 3 but no `opset_import`.");
pub const OPSET_IMPORT_BEFORE_IR3: Code =
    error("E106", "IR version < 3 but `opset_import` is present.");

// Graph
pub const NO_GRAPH_NAME: Code = error(
    "E201",
    "The graph (main graph or subgraph) has no name, or the model has no graph.",
);
pub const NO_VALUE_NAME: Code = error("E202", "A graph input or output has no name.");
pub const NO_VALUE_TYPE: Code = error("E203", "A main-graph input or output has no type.");
pub const INCOMPLETE_VALUE_TYPE: Code = error(
    "E204",
    "A main-graph input or output type is incomplete (tensor without `elem_type` or `shape`, sequence/optional without `elem_type`, map without key/value type, opaque without name).",
);
pub const EMPTY_VALUE_TYPE: Code = error(
    "E205",
    "A main-graph input or output type sets none of the type kinds.",
);
pub const DUPLICATE_GRAPH_INPUT: Code = error("E206", "A graph input name is declared twice.");
pub const NO_INITIALIZER_NAME: Code = error("E207", "An initializer has no name.");
pub const DUPLICATE_INITIALIZER: Code = error("E208", "Two initializers share a name.");
pub const INITIALIZER_NOT_INPUT: Code =
    error("E209", "IR ≤ 3: an initializer is not also a graph input.");
pub const NO_SPARSE_INITIALIZER_NAME: Code =
    error("E210", "A sparse initializer has no name (`values.name`).");
pub const DUPLICATE_SPARSE_INITIALIZER: Code = error(
    "E211",
    "A sparse initializer's name is already used by another initializer.",
);
pub const UNDEFINED_INPUT: Code = error(
    "E212",
    "A node input is not defined before the node (graph input, initializer, earlier node output, or an enclosing graph's value). The suggestion names a later producer (ordering problem) or a similar defined name.",
);
pub const ASSIGNED_TWICE: Code = error(
    "E213",
    "A name is assigned twice (SSA): node outputs reusing an input, initializer, earlier output or enclosing-graph name.",
);
pub const OUTPUT_NOT_PRODUCED: Code =
    error("E214", "A graph output is not produced inside that graph.");

// Tensors
pub const NO_DATA_TYPE: Code = error("E301", "`data_type` is absent.");
pub const UNDEFINED_DATA_TYPE: Code = error("E302", "`data_type` is UNDEFINED (0).");
pub const EXTERNAL_AND_INLINE: Code = error("E303", "An external tensor also holds inline data.");
pub const NO_EXTERNAL_LOCATION: Code = error("E304", "An external tensor has no `location`.");
pub const BAD_EXTERNAL_LOCATION: Code = error(
    "E305",
    "An external location is empty, absolute, leaves the model folder (`..`), is a symlink, is not a regular file, or has several hard links (onnx checks the file system here too).",
);
pub const NEGATIVE_DIM: Code = error("E306", "A dimension is negative.");
pub const DIMS_OVERFLOW: Code = error("E307", "The product of the dims overflows 64 bits.");
pub const DATA_IN_EMPTY_TENSOR: Code = error("E308", "A tensor with zero elements holds data.");
pub const NOT_ONE_DATA_FIELD: Code = error(
    "E309",
    "A non-empty tensor does not hold its data in exactly one field.",
);
pub const STRING_RAW_DATA: Code = error("E310", "A STRING tensor uses `raw_data`.");
pub const RAW_DATA_TOO_SMALL: Code = error(
    "E311",
    "`raw_data` is smaller than dims × element size (or the shape is too large to compute it).",
);
pub const FLOAT6_PADDING: Code = error(
    "E312",
    "Packed FLOAT6 `raw_data` has non-zero padding bits.",
);
pub const WRONG_DATA_FIELD: Code = error(
    "E313",
    "The data is in a typed field that the `data_type` does not use.",
);
pub const TYPED_DATA_TOO_SHORT: Code = error(
    "E314",
    "The typed field holds fewer values than the dims need.",
);
pub const FLOAT6_VALUE_BITS: Code =
    error("E315", "FLOAT6 `int32_data` values use more than 6 bits.");
pub const UNKNOWN_DATA_TYPE_DATA: Code = error("E316", "Typed data of an unknown `data_type`.");
pub const SPARSE_NO_VALUES: Code = error("E320", "A sparse tensor has no `values`.");
pub const SPARSE_VALUES_RANK: Code = error("E321", "Sparse `values` are not rank 1.");
pub const SPARSE_NO_DIMS: Code = error("E322", "A sparse tensor has no dims.");
pub const SPARSE_DIM_NOT_POSITIVE: Code =
    error("E323", "A sparse tensor dimension is not positive.");
pub const SPARSE_INDICES_TYPE: Code = error("E324", "Sparse indices are not INT64.");
pub const SPARSE_INDICES_SHAPE: Code = error(
    "E325",
    "Sparse indices have the wrong shape (not `[NNZ]` or `[NNZ, rank]`).",
);
pub const SPARSE_INDEX_RANGE: Code = error("E326", "A sparse index is out of range.");
pub const SPARSE_INDICES_ORDER: Code = error("E327", "Sparse indices are not strictly increasing.");
pub const SPARSE_INDICES_UNREADABLE: Code = error(
    "E328",
    "Sparse index data cannot be read (external, or too short / wrong count).",
);
pub const SPARSE_NO_INDICES: Code = error("E329", "A sparse tensor has values but no indices.");

// Nodes
pub const NO_OP_TYPE: Code = error("E401", "A node has no `op_type`.");
pub const NO_INPUTS_OR_OUTPUTS: Code = error("E402", "A node has neither inputs nor outputs.");
pub const DOMAIN_NOT_IMPORTED: Code = error(
    "E403",
    "The node's domain is not imported (a `''` node may use an `ai.onnx` import; a node written with domain `ai.onnx` needs an `ai.onnx` import).",
);
pub const DUPLICATE_ATTRIBUTE: Code = error("E404", "An attribute name appears twice in a node.");
pub const UNKNOWN_OPERATOR: Code = error(
    "E405",
    "No schema for the operator at the imported opset version, in an ONNX domain (`''`, `ai.onnx`, `ai.onnx.ml`, `ai.onnx.training`) or any domain with `check_custom_domain`. As in onnx, a node whose domain is written `ai.onnx` never finds a schema.",
);
pub const DEPRECATED_OPERATOR: Code = error(
    "E406",
    "The operator's schema at that version is deprecated.",
);
pub const INPUT_COUNT: Code = error("E407", "Wrong number of inputs for the schema.");
pub const OUTPUT_COUNT: Code = error(
    "E408",
    "Wrong number of outputs (including BatchNormalization's allowed counts {1,5} / {1,3}, which onnx does not expose in Python).",
);
pub const REQUIRED_PARAM_EMPTY: Code = error(
    "E409",
    "A required (single) input or output is an empty name.",
);
pub const UNKNOWN_ATTRIBUTE: Code = error(
    "E410",
    "The schema has no attribute of that name (names starting with `__` and every attribute of LayerNormalization-17 are ignored, as in onnx).",
);
pub const ATTRIBUTE_TYPE: Code = error("E411", "The attribute's type differs from the schema's.");
pub const ATTRIBUTE_NO_VALUE: Code = error(
    "E412",
    "A TENSOR / SPARSE_TENSOR / GRAPH / TYPE_PROTO attribute has no value.",
);
pub const MISSING_ATTRIBUTE: Code = error("E413", "A required attribute is missing.");

// Attributes
pub const NO_ATTRIBUTE_NAME: Code = error("E501", "An attribute has no name.");
pub const NO_ATTRIBUTE_TYPE: Code = error("E502", "IR ≥ 2: an attribute has no (known) `type`.");
pub const ATTRIBUTE_VALUE_FIELD: Code = error(
    "E503",
    "An attribute's value field does not match its `type`.",
);
pub const ATTRIBUTE_MANY_VALUES: Code = error(
    "E504",
    "An attribute without `type` holds more than one value field.",
);
pub const REF_ATTRIBUTE_WITH_VALUE: Code = error(
    "E505",
    "Inside a subgraph, an attribute has both `ref_attr_name` and a value.",
);

// Model-local functions (IR ≥ 8)
pub const TOO_MANY_FUNCTIONS: Code = error("E601", "More than 10,000 functions.");
pub const DUPLICATE_FUNCTION: Code = error(
    "E602",
    "Two functions share an id (domain, name, overload; `ai.onnx` counts as `''`).",
);
pub const FUNCTION_CYCLE: Code = error("E603", "Functions call each other in a cycle.");
pub const FUNCTION_CALLS_TOO_DEEP: Code = error(
    "E604",
    "A chain of nested function calls is deeper than 256 (see differences).",
);
pub const NO_FUNCTION_NAME: Code = error("E605", "A function has no name.");
pub const NO_FUNCTION_DOMAIN: Code = error("E606", "A function has no `domain` field.");
pub const DUPLICATE_FUNCTION_INPUT: Code = error("E607", "A function input is declared twice.");
pub const DUPLICATE_FUNCTION_OUTPUT: Code = error("E608", "A function output is declared twice.");
pub const DUPLICATE_FUNCTION_ATTRIBUTE: Code =
    error("E609", "A function attribute name is declared twice.");
pub const UNDEFINED_FUNCTION_INPUT: Code = error(
    "E610",
    "A node input inside a function is neither a function input nor an earlier output.",
);
pub const FUNCTION_DOMAIN_NOT_IMPORTED: Code =
    error("E611", "A node's domain is not imported by its function.");
pub const FUNCTION_OPSET_MISMATCH: Code = error(
    "E612",
    "The function's opset for a domain resolves an operator to a different schema version than the model's.",
);
pub const FUNCTION_ASSIGNED_TWICE: Code =
    error("E613", "A name is assigned twice inside a function.");

// Strict (`strict=True`)
pub const STRICT_DATA_SIZE: Code = error(
    "S901",
    "Data size does not match dims × element size exactly (onnx accepts extra data), or the tensor otherwise cannot be turned into an array.",
);
pub const STRICT_DATA_TYPE: Code = error(
    "S902",
    "`data_type` is not an ONNX element type (onnx accepts unknown codes in `raw_data`).",
);
pub const STRICT_EXTERNAL_DATA: Code = error(
    "S903",
    "External data the loader would refuse or could not read: unknown/duplicate keys, non-decimal offset/length, symlinked or escaping paths, missing file, `offset + length` past the end, length ≠ tensor size.",
);
pub const STRICT_VALUE_INFO: Code = error(
    "S904",
    "A `graph.value_info` entry has no name or an incomplete/unknown type (onnx never checks `value_info`).",
);
pub const STRICT_NEGATIVE_DIM: Code = error(
    "S908",
    "A graph input, output or `value_info` type declares a negative dim value (exporters write -1 for a dynamic dim; onnx's inference carries it to every later value, and a declared -1 conflicts with any size inferred for it): a dynamic dim has a `dim_param` or no value.",
);
pub const UNUSED_INITIALIZER: Code = warning("W905", "An initializer is never used.");
pub const DEAD_NODE: Code = warning(
    "W906",
    "No output of a node reaches a graph output (dead code).",
);
pub const EXPERIMENTAL_OPERATOR: Code =
    warning("W907", "An experimental operator (no schema check).");

// Types and shapes (full check)
pub const INPUT_TYPE_NOT_ALLOWED: Code = error(
    "E701",
    "An input's type is not one its formal parameter allows (the operator schema's type constraint).",
);
pub const TYPE_VARIABLE_CONFLICT: Code = error(
    "E702",
    "Inputs or outputs bound to the same type variable (`T`) have different types.",
);
pub const OUTPUT_TYPE_NOT_ALLOWED: Code = error(
    "E703",
    "An output's inferred type is not one its formal parameter allows.",
);
pub const TYPE_NOT_CHECKABLE: Code = error(
    "E704",
    "A value's type cannot be checked against the schema: its element type is UNDEFINED (0) or not an ONNX type, or a sequence, optional or map has no element type.",
);
pub const DECLARED_KIND: Code = error(
    "E710",
    "An inferred type and the declared type of the value (graph input or output, `value_info`) are of different kinds (tensor, sparse tensor, sequence, optional, map, opaque).",
);
pub const DECLARED_ELEM_TYPE: Code = error(
    "E711",
    "An inferred element type (or map key type) differs from the declared one.",
);
pub const DECLARED_RANK: Code = error("E712", "An inferred rank differs from the declared one.");
pub const DECLARED_DIM: Code = error(
    "E713",
    "An inferred static dimension differs from the declared one.",
);
pub const INITIALIZER_DECLARED_TYPE: Code = error(
    "E714",
    "An initializer's element type or shape differs from the declared type of the same name (graph input, output or `value_info`).",
);
pub const INCOMPATIBLE_SHAPES: Code = error(
    "E720",
    "The input shapes cannot go together (broadcasting, matrix product, concatenation, channels, ...).",
);
pub const BAD_INPUT_RANK: Code = error("E721", "An input's rank is not one the operator accepts.");
pub const BAD_ATTRIBUTE: Code = error(
    "E722",
    "An attribute's value is invalid for the operator or its inputs (axis out of range, `perm` not a permutation, a `to` that is not an element type, `kernel_shape` of the wrong length, ...).",
);
pub const BAD_CONSTANT_INPUT: Code = error(
    "E723",
    "A constant input that decides a shape (a Reshape's `shape`, Slice's `starts`, ...) holds an invalid value, or its data cannot be read.",
);
pub const MISSING_INPUT_TYPE: Code = error(
    "E724",
    "An input the operator's inference needs is not given or has no type.",
);
pub const INPUT_KIND: Code = error(
    "E725",
    "An input is not the kind of value the operator's inference needs (a sequence where a tensor is needed, ...).",
);
pub const BAD_ELEM_TYPE: Code = error(
    "E726",
    "An input or attribute has an element type the operator's inference refuses, beyond its type constraint (e.g. a Constant's sparse value of the wrong type).",
);
pub const INFERENCE_FAILED: Code = error(
    "E729",
    "Another failure of an operator's inference (the message says which).",
);
pub const SUBGRAPH_SIGNATURE: Code = error(
    "E730",
    "A subgraph does not fit its node: number of inputs or outputs, or the types the node gives it or needs from it (If branches, Loop and Scan bodies).",
);
pub const UNFIT_NODE: Code = error(
    "E731",
    "Standalone inference (`infer_shapes`) met a node whose input or output count does not fit its operator's schema and did not infer it (a node that fits in counts but not otherwise, such as an empty required input or a missing required attribute, is inferred, as onnx infers it); the structural check reports the details (E4xx). The full check does not raise this code.",
);
pub const DATA_PROPAGATION: Code = error(
    "E732",
    "With data propagation (`data_prop=True`), the values of a shape computation are invalid: an index out of range, values that cannot broadcast, an overflow, a Slice step of 0, an int64/int32 constant whose data does not fit its dims; or a value defined twice in one graph gets values a second time (onnx's \"Data for input 0 already exists\").",
);
pub const NO_INFERENCE: Code = warning(
    "W790",
    "An operator of a custom domain has no schema or model-local function: its outputs get no types and inference goes on without them (reported once per operator; for an operator of onnxruntime's, the hint names `contrib_ops=True`).",
);
pub const MASKED_BY_UNKNOWN_OP: Code = warning(
    "W791",
    "A type or shape defect onnx does not report, because an earlier node of the same graph is an operator it cannot infer (onnx stops reporting inference errors there), or because the defect is inside a subgraph or function body of a node after such an operator (whatever its kind: onnx sees it as that node's inference error); a warning, to keep onnx's verdict. The message names the defect's code.",
);
pub const INFERENCE_BUDGET: Code = warning(
    "W792",
    "Inference stopped expanding function bodies and subgraphs after its work budget (bounded time on hostile models); later calls are not inferred.",
);

// Reading
pub const UNREADABLE: Code = error(
    "F001",
    "The file cannot be read as a model: not ONNX (a decode error, with its byte offset and field path), external data refused or missing, or an I/O error. Reported by the command line's reports (SARIF, annotations) for files it could not check.",
);

// Policies (`policy=`; docs: README, "Policies")
pub const POLICY_DOMAIN_NOT_ALLOWED: Code =
    error("P001", "A node's domain is not in `allowed_domains`.");
pub const POLICY_DOMAIN_DENIED: Code = error("P002", "A node's domain is in `denied_domains`.");
pub const POLICY_OP_NOT_ALLOWED: Code = error(
    "P003",
    "A node's operator matches no entry of `allowed_ops`.",
);
pub const POLICY_OP_DENIED: Code = error(
    "P004",
    "A node's operator matches an entry of `denied_ops`.",
);
pub const POLICY_OPSET_TOO_OLD: Code = error(
    "P005",
    "An opset import (of the model or a function) is below `min_opset` for its domain.",
);
pub const POLICY_OPSET_TOO_NEW: Code = error(
    "P006",
    "An opset import (of the model or a function) is above `max_opset` for its domain.",
);
pub const POLICY_IR_TOO_OLD: Code = error("P007", "`ir_version` is below `min_ir_version`.");
pub const POLICY_IR_TOO_NEW: Code = error("P008", "`ir_version` is above `max_ir_version`.");
pub const POLICY_FILE_TOO_LARGE: Code = error(
    "P009",
    "The model file is larger than `max_file_bytes` (external data not included).",
);
pub const POLICY_TOO_MANY_PARAMETERS: Code = error(
    "P010",
    "The weights hold more elements than `max_parameters` (initializers, tensor attributes, sparse tensors' values; every graph and function).",
);
pub const POLICY_TOO_MANY_NODES: Code = error(
    "P011",
    "The model has more nodes than `max_nodes` (every graph, subgraph and function body).",
);
pub const POLICY_SUBGRAPH_TOO_DEEP: Code = error(
    "P012",
    "A subgraph is nested deeper than `max_subgraph_depth` (reported at the first level over it).",
);
pub const POLICY_EXTERNAL_DATA: Code = error(
    "P013",
    "A tensor keeps its data in an external file and `allow_external_data` is false.",
);
pub const POLICY_EXTERNAL_TOO_LARGE: Code = error(
    "P014",
    "Tensors keep more bytes in external files than `max_external_bytes`.",
);
pub const POLICY_FUNCTION: Code = error(
    "P015",
    "The model defines a local function and `allow_functions` is false.",
);
pub const POLICY_METADATA_MISSING: Code = error(
    "P016",
    "A key of `required_metadata` is missing from `metadata_props`.",
);

/// Every code, in docs order.
pub const ALL: &[Code] = &[
    NO_IR_VERSION,
    IR_VERSION_TOO_NEW,
    DUPLICATE_METADATA_KEY,
    OPSET_VERSION_RANGE,
    NO_OPSET_IMPORT,
    OPSET_IMPORT_BEFORE_IR3,
    NO_GRAPH_NAME,
    NO_VALUE_NAME,
    NO_VALUE_TYPE,
    INCOMPLETE_VALUE_TYPE,
    EMPTY_VALUE_TYPE,
    DUPLICATE_GRAPH_INPUT,
    NO_INITIALIZER_NAME,
    DUPLICATE_INITIALIZER,
    INITIALIZER_NOT_INPUT,
    NO_SPARSE_INITIALIZER_NAME,
    DUPLICATE_SPARSE_INITIALIZER,
    UNDEFINED_INPUT,
    ASSIGNED_TWICE,
    OUTPUT_NOT_PRODUCED,
    NO_DATA_TYPE,
    UNDEFINED_DATA_TYPE,
    EXTERNAL_AND_INLINE,
    NO_EXTERNAL_LOCATION,
    BAD_EXTERNAL_LOCATION,
    NEGATIVE_DIM,
    DIMS_OVERFLOW,
    DATA_IN_EMPTY_TENSOR,
    NOT_ONE_DATA_FIELD,
    STRING_RAW_DATA,
    RAW_DATA_TOO_SMALL,
    FLOAT6_PADDING,
    WRONG_DATA_FIELD,
    TYPED_DATA_TOO_SHORT,
    FLOAT6_VALUE_BITS,
    UNKNOWN_DATA_TYPE_DATA,
    SPARSE_NO_VALUES,
    SPARSE_VALUES_RANK,
    SPARSE_NO_DIMS,
    SPARSE_DIM_NOT_POSITIVE,
    SPARSE_INDICES_TYPE,
    SPARSE_INDICES_SHAPE,
    SPARSE_INDEX_RANGE,
    SPARSE_INDICES_ORDER,
    SPARSE_INDICES_UNREADABLE,
    SPARSE_NO_INDICES,
    NO_OP_TYPE,
    NO_INPUTS_OR_OUTPUTS,
    DOMAIN_NOT_IMPORTED,
    DUPLICATE_ATTRIBUTE,
    UNKNOWN_OPERATOR,
    DEPRECATED_OPERATOR,
    INPUT_COUNT,
    OUTPUT_COUNT,
    REQUIRED_PARAM_EMPTY,
    UNKNOWN_ATTRIBUTE,
    ATTRIBUTE_TYPE,
    ATTRIBUTE_NO_VALUE,
    MISSING_ATTRIBUTE,
    NO_ATTRIBUTE_NAME,
    NO_ATTRIBUTE_TYPE,
    ATTRIBUTE_VALUE_FIELD,
    ATTRIBUTE_MANY_VALUES,
    REF_ATTRIBUTE_WITH_VALUE,
    TOO_MANY_FUNCTIONS,
    DUPLICATE_FUNCTION,
    FUNCTION_CYCLE,
    FUNCTION_CALLS_TOO_DEEP,
    NO_FUNCTION_NAME,
    NO_FUNCTION_DOMAIN,
    DUPLICATE_FUNCTION_INPUT,
    DUPLICATE_FUNCTION_OUTPUT,
    DUPLICATE_FUNCTION_ATTRIBUTE,
    UNDEFINED_FUNCTION_INPUT,
    FUNCTION_DOMAIN_NOT_IMPORTED,
    FUNCTION_OPSET_MISMATCH,
    FUNCTION_ASSIGNED_TWICE,
    INPUT_TYPE_NOT_ALLOWED,
    TYPE_VARIABLE_CONFLICT,
    OUTPUT_TYPE_NOT_ALLOWED,
    TYPE_NOT_CHECKABLE,
    DECLARED_KIND,
    DECLARED_ELEM_TYPE,
    DECLARED_RANK,
    DECLARED_DIM,
    INITIALIZER_DECLARED_TYPE,
    INCOMPATIBLE_SHAPES,
    BAD_INPUT_RANK,
    BAD_ATTRIBUTE,
    BAD_CONSTANT_INPUT,
    MISSING_INPUT_TYPE,
    INPUT_KIND,
    BAD_ELEM_TYPE,
    INFERENCE_FAILED,
    SUBGRAPH_SIGNATURE,
    UNFIT_NODE,
    DATA_PROPAGATION,
    NO_INFERENCE,
    MASKED_BY_UNKNOWN_OP,
    INFERENCE_BUDGET,
    STRICT_DATA_SIZE,
    STRICT_DATA_TYPE,
    STRICT_EXTERNAL_DATA,
    STRICT_VALUE_INFO,
    STRICT_NEGATIVE_DIM,
    UNUSED_INITIALIZER,
    DEAD_NODE,
    EXPERIMENTAL_OPERATOR,
    UNREADABLE,
    POLICY_DOMAIN_NOT_ALLOWED,
    POLICY_DOMAIN_DENIED,
    POLICY_OP_NOT_ALLOWED,
    POLICY_OP_DENIED,
    POLICY_OPSET_TOO_OLD,
    POLICY_OPSET_TOO_NEW,
    POLICY_IR_TOO_OLD,
    POLICY_IR_TOO_NEW,
    POLICY_FILE_TOO_LARGE,
    POLICY_TOO_MANY_PARAMETERS,
    POLICY_TOO_MANY_NODES,
    POLICY_SUBGRAPH_TOO_DEEP,
    POLICY_EXTERNAL_DATA,
    POLICY_EXTERNAL_TOO_LARGE,
    POLICY_FUNCTION,
    POLICY_METADATA_MISSING,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/checks.md has one table row per code, with the same meaning.
    #[test]
    fn every_code_is_documented_once() {
        let doc = include_str!("../../../../docs/checks.md");
        let mut rows = std::collections::HashMap::new();
        for line in doc.lines() {
            let cells: Vec<&str> = line.split(" | ").collect();
            let Some(id) = cells.first().and_then(|c| c.strip_prefix("| ")) else {
                continue;
            };
            if id.len() == 4 && id[1..].bytes().all(|b| b.is_ascii_digit()) {
                let summary = cells.last().map_or("", |c| c.trim_end_matches(" |"));
                assert!(rows.insert(id, summary).is_none(), "{id} documented twice");
            }
        }
        let mut ids = std::collections::HashSet::new();
        for code in ALL {
            assert!(ids.insert(code.id), "{} defined twice", code.id);
            assert_eq!(rows.get(code.id), Some(&code.summary), "{}", code.id);
            let expected = if code.id.starts_with('W') {
                Severity::Warning
            } else {
                Severity::Error
            };
            assert_eq!(code.severity, expected, "{}", code.id);
        }
        assert_eq!(rows.len(), ALL.len(), "documented codes without a constant");
    }
}
