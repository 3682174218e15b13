//! `Model.save`: to a path or a Python file object, the binary format
//! streamed from Rust, onnx's text formats through onnx.

use std::io;
use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use onnxfast_core::encode::Target;
use onnxfast_core::proto;

use crate::root::Ptr;

/// `Model.save`'s keyword arguments.
pub struct SaveOptions {
    pub save_as_external_data: bool,
    pub all_tensors_to_one_file: bool,
    pub location: Option<String>,
    pub size_threshold: Option<i64>,
    pub convert_attribute: bool,
    pub alignment: Option<u64>,
    pub format: Option<String>,
}

/// Where a save goes, as the caller gave it.
enum Destination {
    Path(PathBuf),
    /// A file object, with the path its `name` gives (an open file's) and
    /// its file's device and inode numbers (from its descriptor).
    Stream {
        file: Py<PyAny>,
        path: Option<PathBuf>,
        identity: Option<(u64, u64)>,
    },
}

impl Destination {
    fn of(f: &Bound<'_, PyAny>) -> PyResult<Destination> {
        if let Ok(path) = f.extract::<PathBuf>() {
            return Ok(Destination::Path(path));
        }
        let writes = f.getattr("write").map(|w| w.is_callable()).unwrap_or(false);
        if !writes {
            return Err(PyTypeError::new_err(format!(
                "cannot save to {}: expected a path or a binary file object with write()",
                f.get_type().name()?
            )));
        }
        // An open file's `name` is its path (not sys.stdout's "<stdout>",
        // nor a descriptor's number); its descriptor says which file it is.
        let (path, identity) = f
            .py()
            .import("onnxfast._formats")?
            .call_method1("stream_file", (f,))?
            .extract::<(Option<PathBuf>, Option<(u64, u64)>)>()?;
        Ok(Destination::Stream {
            file: f.clone().unbind(),
            path,
            identity,
        })
    }

    /// The file's path, if it has one.
    fn path(&self) -> Option<&Path> {
        match self {
            Destination::Path(p) => Some(p),
            Destination::Stream { path, .. } => path.as_deref(),
        }
    }
}

/// `Model.save(f, ...)` of the model `object` (whose message is `model`).
pub fn save(
    object: &Bound<'_, PyAny>,
    model: &Ptr<proto::ModelProto>,
    f: &Bound<'_, PyAny>,
    options: SaveOptions,
) -> PyResult<u64> {
    use onnxfast_core::external::save::MAX_ALIGNMENT;
    let py = object.py();
    let save_as_external_data = options.save_as_external_data;
    if !save_as_external_data
        && (options.location.is_some()
            || options.size_threshold.is_some()
            || options.convert_attribute
            || options.alignment.is_some()
            || !options.all_tensors_to_one_file)
    {
        return Err(PyValueError::new_err(
            "location, size_threshold, convert_attribute, alignment and \
             all_tensors_to_one_file apply with save_as_external_data=True only",
        ));
    }
    if !options.all_tensors_to_one_file && options.location.is_some() {
        return Err(PyValueError::new_err(
            "location names the one data file: with all_tensors_to_one_file=False each \
             tensor's file is named after the tensor",
        ));
    }
    // Bytes, or a path-like (which may give bytes: os.scandir(b"...")'s
    // entries), name a path as open() takes them: one str from here on.
    let decoded;
    let f = if f.is_instance_of::<pyo3::types::PyBytes>() || f.hasattr("__fspath__")? {
        decoded = py.import("os")?.call_method1("fsdecode", (f,))?;
        &decoded
    } else {
        f
    };
    if f.extract::<String>().is_ok_and(|path| path.contains('\0')) {
        return Err(PyValueError::new_err("embedded null byte")); // as open() says it
    }
    let alignment = options.alignment.unwrap_or(1);
    if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
        return Err(PyValueError::new_err(format!(
            "alignment must be a power of two from 1 to {MAX_ALIGNMENT}, got {alignment}"
        )));
    }
    let formats = py.import("onnxfast._formats")?;
    let format: String = formats
        .call_method1("resolve", (options.format, f))?
        .extract()?;
    if format != "protobuf" && !save_as_external_data {
        let written: u64 = formats
            .call_method1("save_text", (object, f, format))?
            .extract()?;
        // A text model names its external data as a binary one does.
        if let Some(path) = Destination::of(f)?.path() {
            let unreachable = py.detach(|| unreachable_external_data(model, path));
            warn_unreachable(py, path, unreachable)?;
        }
        return Ok(written);
    }
    let destination = Destination::of(f)?;
    let external = match save_as_external_data {
        false => None,
        true => {
            let path = destination.path().ok_or_else(|| {
                PyValueError::new_err(
                    "save_as_external_data=True needs the model file's folder: pass a path, \
                     or a file object whose name is its path (an open file)",
                )
            })?;
            let files = match options.all_tensors_to_one_file {
                true => {
                    let (location, data_path) =
                        external_data_path(path, options.location.as_deref())?;
                    ExternalFiles::One {
                        location,
                        data_path,
                    }
                }
                false => ExternalFiles::PerTensor {
                    model_name: model_file_name(path)?.to_string(),
                    folder: crate::parent_dir(path),
                },
            };
            Some(ExternalTarget {
                files,
                text: (format != "protobuf").then_some(format),
                size_threshold: options.size_threshold.unwrap_or(1024),
                convert_attribute: options.convert_attribute,
                alignment,
            })
        }
    };
    if let Destination::Stream {
        identity: Some((dev, ino)),
        ..
    } = &destination
    {
        refuse_own_map(*dev, *ino, model)?;
    }
    let named = destination.path().map(Path::to_path_buf);
    let model = model.clone();
    let checked = named.clone();
    let (written, unreachable) = py.detach(move || {
        // Without a data file of its own, the saved model names the
        // source's: relative to the saved file's folder.
        let unreachable = match (&external, &checked) {
            (None, Some(path)) => unreachable_external_data(&model, path),
            _ => Ok(Vec::new()),
        };
        let written = match destination {
            Destination::Path(path) => save_model(&model, Target::Path(&path), external.as_ref()),
            Destination::Stream { file, .. } => {
                let mut stream = PyStream { file, raised: None };
                let written = save_model(&model, Target::Stream(&mut stream), external.as_ref());
                match stream.raised {
                    Some(e) => Err(SaveFailed::Raised(e)),
                    None => written,
                }
            }
        };
        (written, unreachable)
    });
    let written = match written {
        Ok(n) => n,
        Err(SaveFailed::Core(e)) => return Err(crate::errors::to_py(py, &e)),
        Err(SaveFailed::Io(e)) => return Err(crate::errors::write_error(py, e)),
        Err(SaveFailed::Raised(e)) => return Err(e),
    };
    if let Some(path) = &named {
        warn_unreachable(py, path, unreachable)?;
    }
    Ok(written)
}

/// An `ExternalDataWarning` naming the external data a model saved to
/// `path` would not find there (see [`unreachable_external_data`]).
fn warn_unreachable(
    py: Python<'_>,
    path: &Path,
    unreachable: Result<Vec<String>, onnxfast_core::error::DecodeError>,
) -> PyResult<()> {
    let unreachable = unreachable.map_err(|e| crate::errors::decode_error(py, &e))?;
    if unreachable.is_empty() {
        return Ok(());
    }
    let category = crate::errors::exception_class(py, "ExternalDataWarning")?;
    let names: Vec<String> = unreachable
        .iter()
        .map(|l| format!("'{}'", onnxfast_core::diag::clean(l)))
        .collect();
    let msg = format!(
        "{}: external data {} not in the saved model's folder, which its locations \
         are relative to: copy the files there, or save with \
         save_as_external_data=True to write the weights beside it",
        path.display(),
        names.join(", "),
    );
    let msg = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
    PyErr::warn(py, &category, &msg, 1)
}

/// Refuses a file object open on the file the model is mapped from: opening
/// it for writing has truncated the file under the map (reading a weight
/// would then fault), and writing to it would overwrite what is still to
/// be read.
fn refuse_own_map(dev: u64, ino: u64, model: &Ptr<proto::ModelProto>) -> PyResult<()> {
    let Some(pages) = model.root().source_pages.as_ref() else {
        return Ok(());
    };
    if pages.maps_file(dev, ino) {
        return Err(PyValueError::new_err(
            "cannot save to a file object open on the file this model is mapped from \
             (opening it for writing has truncated it under the map): save to its path \
             instead, which writes a new file and renames it into place, or load the \
             model with mmap=False",
        ));
    }
    Ok(())
}

/// A Python binary file object as a writer: each write is one call of its
/// `write()` with a `bytes` copy of the chunk, with the GIL taken for it.
struct PyStream {
    file: Py<PyAny>,
    /// What `write()` raised (re-raised as it is once the save stops).
    raised: Option<PyErr>,
}

impl io::Write for PyStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let result = self
                .file
                .bind(py)
                .call_method1("write", (PyBytes::new(py, buf),));
            let returned = match result {
                Ok(r) => r,
                Err(e) => {
                    self.raised = Some(e);
                    return Err(io::Error::other("the file object's write() raised"));
                }
            };
            // `None` (a writer that does not count) means all of it; a raw
            // file may take part of it, and the rest is written again.
            if returned.is_none() {
                return Ok(buf.len());
            }
            match returned.extract::<usize>() {
                Ok(n) if n <= buf.len() => Ok(n),
                _ => Err(io::Error::other(format!(
                    "the file object's write() of {} bytes returned {}",
                    buf.len(),
                    returned
                        .repr()
                        .map(|r| r.to_string())
                        .unwrap_or_else(|_| "?".into())
                ))),
            }
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        // As onnx.save_model, which leaves flushing to the caller.
        Ok(())
    }
}

/// Where `Model.save(path, save_as_external_data=True)` writes the data:
/// `location` (by default the model file's name with `.data` appended),
/// relative to `path`'s folder and kept inside it.
fn external_data_path(path: &Path, location: Option<&str>) -> PyResult<(String, PathBuf)> {
    let location = match location {
        Some(location) => location.to_string(),
        None => format!("{}.data", model_file_name(path)?),
    };
    onnxfast_core::external::check_location(&location).map_err(|rule| {
        PyValueError::new_err(format!(
            "location '{}': {rule}",
            onnxfast_core::diag::clean(&location)
        ))
    })?;
    // The folders on the way are real ones, as reading the model back
    // requires (it refuses a link): a link planted there would have the
    // data written wherever it points.
    let mut folder = crate::parent_dir(path);
    let mut steps = Path::new(&location).components().peekable();
    while let Some(step) = steps.next() {
        if steps.peek().is_none() {
            break; // the file itself
        }
        folder.push(step);
        let is_link = std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            return Err(PyValueError::new_err(format!(
                "location '{}': {} is a symbolic link (external data is read through real \
                 folders only, so it is written through them only)",
                onnxfast_core::diag::clean(&location),
                folder.display()
            )));
        }
    }
    let data_path = crate::parent_dir(path).join(&location);
    let same = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if same(&data_path) == same(path) {
        return Err(PyValueError::new_err(format!(
            "location '{}' is the model file itself",
            onnxfast_core::diag::clean(&location)
        )));
    }
    Ok((location, data_path))
}

/// The file name of the model's path, as a location can hold it (UTF-8).
fn model_file_name(path: &Path) -> PyResult<&str> {
    let name = path
        .file_name()
        .ok_or_else(|| PyValueError::new_err(format!("{} is not a file path", path.display())))?;
    name.to_str().ok_or_else(|| {
        PyValueError::new_err(format!(
            "{}: the file name is not UTF-8, and the data files' locations, which the model \
             holds as UTF-8 text, would be named after it (pass location= with a UTF-8 name, \
             and all_tensors_to_one_file=True)",
            path.display()
        ))
    })
}

/// Where the data goes.
enum ExternalFiles {
    /// One data file (`all_tensors_to_one_file=True`).
    One {
        location: String,
        data_path: PathBuf,
    },
    /// A file per tensor in `folder`, the model file's (named `model_name`).
    PerTensor { model_name: String, folder: PathBuf },
}

/// What `Model.save(..., save_as_external_data=True)` writes besides the model.
struct ExternalTarget {
    files: ExternalFiles,
    /// The model file's text format (onnx writes it), if not protobuf.
    text: Option<String>,
    size_threshold: i64,
    convert_attribute: bool,
    alignment: u64,
}

enum SaveFailed {
    Core(onnxfast_core::Error),
    Io(io::Error),
    /// The file object's `write()` raised this.
    Raised(PyErr),
}

/// `Model.save`'s work, without the GIL: the bytes written to `target`.
fn save_model(
    model: &Ptr<proto::ModelProto>,
    target: Target<'_>,
    external: Option<&ExternalTarget>,
) -> Result<u64, SaveFailed> {
    use onnxfast_core::encode::{
        write_bytes, write_bytes_with_data, write_message_releasing, write_message_with_data,
    };
    use onnxfast_core::external::save::{move_to_external, DataFiles, ExternalSave};
    let root = model.root();
    // Weights read from a map (the model file's, or an external file's)
    // have their pages released once written, so copying a model does not
    // leave all of it mapped into this process.
    let release = |slice: &[u8]| {
        if !root
            .source_pages
            .as_ref()
            .is_some_and(|p| p.release_slice(slice))
        {
            root.external.release_mapped(slice);
        }
    };
    let decoded = |e: onnxfast_core::error::DecodeError| SaveFailed::Core(e.into());
    let Some(external) = external else {
        if model.is_root() {
            return write_bytes(&root.source, target, &release).map_err(SaveFailed::Io);
        }
        let whole = root.full_model(model).map_err(decoded)?;
        return write_message_releasing(&*whole, target, &release).map_err(SaveFailed::Io);
    };
    let mut whole = root.full_model(model).map_err(decoded)?.into_owned();
    onnxfast_core::external::inline_all(&mut whole, &root.external).map_err(SaveFailed::Core)?;
    // A tensor's own file must not be the model file (whatever the file
    // system's case rules), a folder, or a temporary file's name.
    let usable = |name: &str| match &external.files {
        ExternalFiles::PerTensor { model_name, folder } => {
            name.to_lowercase() != model_name.to_lowercase()
                && !onnxfast_core::encode::is_temporary_name(name)
                && !folder.join(name).is_dir()
        }
        ExternalFiles::One { .. } => true,
    };
    let files = match &external.files {
        ExternalFiles::One { location, .. } => DataFiles::One(location),
        ExternalFiles::PerTensor { model_name, .. } => DataFiles::PerTensor {
            stem: model_name,
            usable: &usable,
        },
    };
    let how = ExternalSave {
        files,
        size_threshold: external.size_threshold,
        convert_attribute: external.convert_attribute,
        alignment: external.alignment,
    };
    let written = move_to_external(&mut whole, &how);
    let text = match &external.text {
        Some(format) => Some(text_of(&whole, format)?),
        None => None,
    };
    if written.is_empty() {
        // No tensor moved: onnx writes no data file either.
        return match &text {
            Some(text) => write_bytes(text, target, &release),
            None => write_message_releasing(&whole, target, &release),
        }
        .map_err(SaveFailed::Io);
    }
    let paths: Vec<PathBuf> = written
        .iter()
        .map(|f| match &external.files {
            ExternalFiles::One { data_path, .. } => data_path.clone(),
            ExternalFiles::PerTensor { folder, .. } => folder.join(&f.location),
        })
        .collect();
    let data: Vec<(&Path, &[bytes::Bytes])> = paths
        .iter()
        .zip(&written)
        .map(|(p, f)| (p.as_path(), &f.chunks[..]))
        .collect();
    match &text {
        Some(text) => write_bytes_with_data(text, target, &data, &release),
        None => write_message_with_data(&whole, target, &data, &release),
    }
    .map(|(model_bytes, _)| model_bytes)
    .map_err(SaveFailed::Io)
}

/// `model` in onnx's text format `format`, as onnx writes it (the GIL
/// taken for it).
fn text_of(model: &proto::ModelProto, format: &str) -> Result<Vec<u8>, SaveFailed> {
    let encoded = prost::Message::encode_to_vec(model);
    Python::attach(|py| {
        let text = py
            .import("onnxfast._formats")?
            .call_method1("text_of", (PyBytes::new(py, &encoded), format))?;
        Ok(text.cast::<PyBytes>()?.as_bytes().to_vec())
    })
    .map_err(SaveFailed::Raised)
}

/// The external-data locations of `model` that a copy saved to `path`
/// would not find: none when `path` is in the model's own folder;
/// otherwise those with no file of that name in `path`'s folder.
fn unreachable_external_data(
    model: &Ptr<proto::ModelProto>,
    path: &Path,
) -> Result<Vec<String>, onnxfast_core::error::DecodeError> {
    let folder = crate::parent_dir(path);
    let folder = std::path::absolute(&folder).unwrap_or(folder);
    if folder == model.root().external.base() {
        return Ok(Vec::new());
    }
    let mut locations = std::collections::BTreeSet::new();
    crate::messages::for_each_model_tensor(model, &mut |t| {
        if onnxfast_core::external::is_external(t) {
            if let Ok(info) = onnxfast_core::external::parse_info(t) {
                locations.insert(info.location);
            }
        }
    })?;
    Ok(locations
        .into_iter()
        .filter(|l| !folder.join(l).exists())
        .collect())
}

/// `data` written to `path` as a binary save writes it
/// (`encode::write_file`: links followed, a FIFO or device written into, a
/// file replaced through a temporary one keeping its mode and owner): for
/// the text formats' writer. Returns the bytes written.
#[pyfunction]
pub fn _write_file(py: Python<'_>, path: PathBuf, data: &[u8]) -> PyResult<u64> {
    py.detach(|| onnxfast_core::encode::write_file(data, &path))
        .map_err(|e| crate::errors::write_error(py, e))
}
