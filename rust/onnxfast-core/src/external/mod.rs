//! External tensor data: parsed, resolved and read safely.
//!
//! A tensor with `data_location = EXTERNAL` names a file (`location`) relative
//! to the model's folder. Models are untrusted input, so:
//! - only the keys `location`, `offset`, `length`, `checksum` are used; other
//!   keys are reported and ignored; a repeated key is an error;
//! - `offset` and `length` are plain non-negative decimal integers;
//! - a location that is absolute, has a drive or UNC prefix, a `..`
//!   component or a NUL byte is refused before touching the file system;
//! - the base folder is opened once, and every file is opened *through* it
//!   with no symlink followed in any component (`openat2` with
//!   `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` on Linux, a component-by-
//!   component `O_NOFOLLOW` walk elsewhere), without blocking (FIFOs);
//! - the opened descriptor must be a regular file with one hard link (unless
//!   hard links are allowed explicitly); every later read or map uses that
//!   descriptor, so nothing can be swapped in after the checks;
//! - `offset + length` must fit in the file, and `length`, when given, must
//!   be the tensor's size.
//!
//! Each file is opened (and mapped) once and shared by all its tensors.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::proto::{tensor_proto::DataLocation, TensorProto};

pub mod save;

/// Why external data could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalDataError {
    pub tensor: String,
    /// The `location` as written in the model (may be empty or refused).
    pub location: String,
    /// The rule that was broken, in plain words.
    pub rule: String,
}

impl std::fmt::Display for ExternalDataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loc = crate::diag::clean(&self.location);
        let name = crate::diag::clean(&self.tensor);
        write!(f, "tensor '{name}', external data '{loc}': {}", self.rule)
    }
}

impl std::error::Error for ExternalDataError {}

/// The interpreted `external_data` entries of a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalInfo {
    pub location: String,
    pub offset: u64,
    pub length: Option<u64>,
    pub checksum: Option<String>,
    /// Keys other than the four above: ignored, reported once.
    pub ignored_keys: Vec<String>,
}

fn parse_decimal(key: &str, value: &str) -> Result<u64, String> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{key}' must be a non-negative decimal integer, got '{}'",
            crate::diag::clean(value)
        ));
    }
    value
        .parse::<u64>()
        .map_err(|_| format!("'{key}' = {value} does not fit in 64 bits"))
}

/// Refuses locations that could name a file outside the base folder,
/// whatever the file system holds.
pub fn check_location(location: &str) -> Result<(), String> {
    if location.is_empty() {
        return Err("the location is empty".into());
    }
    if location.contains('\0') {
        return Err("the location contains a NUL byte".into());
    }
    if location.starts_with('/') || location.starts_with('\\') {
        return Err("absolute locations are not allowed".into());
    }
    let bytes = location.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        return Err("drive-letter locations are not allowed".into());
    }
    if location.split(['/', '\\']).any(|c| c == "..") {
        return Err("'..' components are not allowed".into());
    }
    Ok(())
}

/// Reads the `external_data` entries of `t` by the rules of the module docs.
pub fn parse_info(t: &TensorProto) -> Result<ExternalInfo, ExternalDataError> {
    let mut location: Option<String> = None;
    let mut offset = None;
    let mut length = None;
    let mut checksum = None;
    let mut ignored = Vec::new();
    let fail = |location: &Option<String>, rule: String| ExternalDataError {
        tensor: t.name().to_string(),
        location: location.clone().unwrap_or_default(),
        rule,
    };
    for entry in &t.external_data {
        let key = entry.key();
        let value = entry.value();
        let slot_taken = match key {
            "location" => location.replace(value.to_string()).is_some(),
            "offset" => offset.replace(value.to_string()).is_some(),
            "length" => length.replace(value.to_string()).is_some(),
            "checksum" => checksum.replace(value.to_string()).is_some(),
            other => {
                ignored.push(other.to_string());
                false
            }
        };
        if slot_taken {
            return Err(fail(
                &location,
                format!("the key '{key}' appears more than once"),
            ));
        }
    }
    let Some(loc) = location.clone() else {
        return Err(fail(
            &location,
            "the required key 'location' is missing".into(),
        ));
    };
    check_location(&loc).map_err(|rule| fail(&location, rule))?;
    let offset = match offset {
        Some(v) => parse_decimal("offset", &v).map_err(|rule| fail(&location, rule))?,
        None => 0,
    };
    let length = match length {
        Some(v) => Some(parse_decimal("length", &v).map_err(|rule| fail(&location, rule))?),
        None => None,
    };
    Ok(ExternalInfo {
        location: loc,
        offset,
        length,
        checksum,
        ignored_keys: ignored,
    })
}

/// How external files are opened and read.
#[derive(Debug, Clone, Copy)]
pub struct ExternalOptions {
    /// Map files (zero-copy) or read with positional reads into owned buffers.
    pub mmap: bool,
    /// Accept files with more than one hard link.
    pub allow_hardlinks: bool,
    /// Verify `checksum` (SHA-1 of the bytes) when present.
    pub verify_checksum: bool,
}

impl Default for ExternalOptions {
    fn default() -> Self {
        ExternalOptions {
            mmap: true,
            allow_hardlinks: false,
            verify_checksum: false,
        }
    }
}

/// One opened external file: mapped (the descriptor is then closed, so a
/// model with thousands of external files holds no descriptors), or kept
/// open for positional reads.
struct ExtFile {
    len: u64,
    content: Content,
}

enum Content {
    /// The map, and what releases its pages once a reader is done with them.
    Mapped(Bytes, Option<crate::decode::source::PageReleaser>),
    Open(File),
}

/// Resolves and reads the external data of one model.
pub struct ExternalStore {
    base: PathBuf,
    options: ExternalOptions,
    base_dir: OnceLock<Result<File, String>>,
    files: Mutex<HashMap<String, Arc<ExtFile>>>,
}

impl std::fmt::Debug for ExternalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalStore")
            .field("base", &self.base)
            .field("options", &self.options)
            .finish()
    }
}

impl ExternalStore {
    /// `base`: the model's folder; `None` or empty means the current directory.
    pub fn new(base: Option<PathBuf>, options: ExternalOptions) -> Self {
        let base = match base {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => PathBuf::from("."),
        };
        // Pin a relative base to the current directory now, not at first use.
        let base = std::path::absolute(&base).unwrap_or(base);
        ExternalStore {
            base,
            options,
            base_dir: OnceLock::new(),
            files: Mutex::new(HashMap::new()),
        }
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    pub fn options(&self) -> ExternalOptions {
        self.options
    }

    fn base_dir(&self) -> Result<&File, String> {
        self.base_dir
            .get_or_init(|| sandbox::open_dir(&self.base))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn file(&self, location: &str) -> Result<Arc<ExtFile>, String> {
        if let Ok(files) = self.files.lock() {
            if let Some(f) = files.get(location) {
                return Ok(Arc::clone(f));
            }
        }
        let dir = self.base_dir()?;
        let file = sandbox::open_beneath(dir, location, self.options.allow_hardlinks)?;
        let len = file
            .metadata()
            .map_err(|e| format!("cannot stat the file: {e}"))?
            .len();
        // Mapped, unless asked not to or the file system cannot map it
        // (then read at offsets, as with mmap=False).
        let mapped = match self.options.mmap {
            true => sandbox::map(&file, location)?,
            false => None,
        };
        let (len, content) = match mapped {
            // The map's own length bounds every slice of it (the file may
            // have changed since the stat).
            Some(mapped) => (
                mapped.bytes.len() as u64,
                Content::Mapped(mapped.bytes, mapped.pages),
            ),
            None => (len, Content::Open(file)),
        };
        let opened = Arc::new(ExtFile { len, content });
        if let Ok(mut files) = self.files.lock() {
            // Another thread may have opened it meanwhile: keep the first.
            return Ok(Arc::clone(
                files.entry(location.to_string()).or_insert(opened),
            ));
        }
        Ok(opened)
    }

    /// Releases the pages of `slice` (external data read through this
    /// store, which a writer has just copied out) when it lies in one of
    /// the store's maps; anything else is left alone. The bytes stay
    /// readable: released pages are read back on the next access.
    pub fn release_mapped(&self, slice: &[u8]) -> bool {
        let Ok(files) = self.files.lock() else {
            return false;
        };
        files.values().any(|f| match &f.content {
            Content::Mapped(_, Some(pages)) => pages.release_slice(slice),
            _ => false,
        })
    }

    /// Size of the file at `location` (opened with every rule applied).
    pub fn file_size(&self, location: &str) -> Result<u64, String> {
        check_location(location)?;
        Ok(self.file(location)?.len)
    }

    /// The bytes of `t`'s external data; `expected` is the byte size its
    /// dims and data type call for.
    pub fn read(&self, t: &TensorProto, expected: usize) -> Result<Bytes, ExternalDataError> {
        let info = parse_info(t)?;
        let fail = |rule: String| ExternalDataError {
            tensor: t.name().to_string(),
            location: info.location.clone(),
            rule,
        };
        let file = self.file(&info.location).map_err(fail)?;
        if let Some(length) = info.length {
            if info.offset.checked_add(length).is_none() {
                return Err(fail(format!(
                    "offset {} + length {length} overflows",
                    info.offset
                )));
            }
        }
        if info.offset > file.len {
            return Err(fail(format!(
                "offset {} is past the end of the file ({} bytes)",
                info.offset, file.len
            )));
        }
        let length = match info.length {
            Some(length) => {
                let end = info.offset.checked_add(length).ok_or_else(|| {
                    fail(format!(
                        "offset {} + length {length} overflows",
                        info.offset
                    ))
                })?;
                if end > file.len {
                    return Err(fail(format!(
                        "offset {} + length {length} = {end} is past the end of the file ({} bytes)",
                        info.offset, file.len
                    )));
                }
                length
            }
            None => file.len - info.offset,
        };
        if length != expected as u64 {
            let how = if info.length.is_some() {
                "length"
            } else {
                "the rest of the file after offset"
            };
            return Err(fail(format!(
                "{how} is {length} bytes, but the dims and data_type need {expected}"
            )));
        }
        // Both fit in the file, whose size fits in memory when mapped; when
        // read, `length` equals `expected`, a usize.
        let start = usize::try_from(info.offset)
            .map_err(|_| fail("offset does not fit in memory".into()))?;
        let data = match &file.content {
            Content::Mapped(whole, _) => whole.slice(start..start + expected),
            Content::Open(handle) => {
                sandbox::read_at(handle, info.offset, expected).map_err(fail)?
            }
        };
        if self.options.verify_checksum {
            if let Some(expected_sum) = &info.checksum {
                use sha1::Digest;
                let digest = sha1::Sha1::digest(&data);
                let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
                if !hex.eq_ignore_ascii_case(expected_sum.trim()) {
                    return Err(fail(format!(
                        "SHA-1 checksum mismatch: the bytes hash to {hex}, the model says {}",
                        crate::diag::clean(expected_sum)
                    )));
                }
            }
        }
        Ok(data)
    }
}

/// Reads every external tensor of `model` into memory and makes it inline
/// (`raw_data` set, `external_data` cleared, `data_location` set to DEFAULT,
/// present as onnx leaves it), as `onnx.load(..., load_external_data=True)`
/// does. With a mapped store the data are slices of the maps, not copies.
pub fn inline_all(
    model: &mut crate::proto::ModelProto,
    store: &ExternalStore,
) -> Result<(), crate::Error> {
    crate::ir::visit::try_for_each_tensor_mut(
        model,
        &mut |t: &mut TensorProto| -> Result<(), crate::Error> {
            if !is_external(t) {
                return Ok(());
            }
            let plan = crate::tensor::plan(t)?;
            let expected = plan
                .elem
                .raw_len(plan.count)
                .ok_or_else(|| crate::TensorError {
                    tensor: t.name().to_string(),
                    kind: crate::TensorErrorKind::CountOverflow {
                        dims: t.dims.clone(),
                    },
                })?;
            let data = store.read(t, expected)?;
            t.raw_data = Some(data);
            t.external_data.clear();
            t.data_location = Some(DataLocation::Default as i32);
            Ok(())
        },
    )
}

/// True when `t` keeps its data in an external file.
pub fn is_external(t: &TensorProto) -> bool {
    t.data_location() == DataLocation::External
}

#[cfg(unix)]
mod sandbox {
    //! The file-system side: opening beneath a directory without symlinks.

    use std::fs::File;
    use std::os::fd::OwnedFd;
    use std::os::unix::fs::FileExt;
    use std::path::Path;

    use bytes::Bytes;
    use rustix::fs::{FileType, Mode, OFlags};
    use rustix::io::Errno;

    pub fn open_dir(path: &Path) -> Result<File, String> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("cannot open the base folder {}: {e}", path.display()))?;
        Ok(File::from(fd))
    }

    fn explain(e: Errno) -> String {
        match e {
            Errno::NOENT => "the file does not exist".into(),
            Errno::LOOP | Errno::MLINK => {
                "a symbolic link is on the path (symlinks are refused)".into()
            }
            Errno::XDEV => "the path leaves the model's folder".into(),
            Errno::NOTDIR => {
                "a component of the path is not a folder (or is a symbolic link)".into()
            }
            Errno::ACCESS | Errno::PERM => "permission denied".into(),
            Errno::ISDIR => "the location is a folder".into(),
            other => format!("cannot open the file: {other}"),
        }
    }

    fn flags() -> OFlags {
        // NONBLOCK: opening a FIFO must not wait for a writer.
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::NOFOLLOW
    }

    /// Opens `location` beneath `dir` following no symlink, then checks the
    /// descriptor itself.
    pub fn open_beneath(dir: &File, location: &str, allow_hardlinks: bool) -> Result<File, String> {
        let fd = open_no_symlinks(dir, location)?;
        let st = rustix::fs::fstat(&fd).map_err(|e| format!("cannot stat the file: {e}"))?;
        let kind = FileType::from_raw_mode(st.st_mode);
        if kind != FileType::RegularFile {
            let what = match kind {
                FileType::Fifo => "a FIFO",
                FileType::CharacterDevice => "a character device",
                FileType::BlockDevice => "a block device",
                FileType::Directory => "a folder",
                FileType::Socket => "a socket",
                FileType::Symlink => "a symbolic link",
                _ => "not a regular file",
            };
            return Err(format!("the location is {what}, not a regular file"));
        }
        if st.st_nlink > 1 && !allow_hardlinks {
            return Err(format!(
                "the file has {} hard links (refused unless hard links are allowed explicitly)",
                st.st_nlink
            ));
        }
        Ok(File::from(fd))
    }

    #[cfg(target_os = "linux")]
    fn open_no_symlinks(dir: &File, location: &str) -> Result<OwnedFd, String> {
        use rustix::fs::ResolveFlags;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(dir, location, flags(), Mode::empty(), resolve) {
            Ok(fd) => Ok(fd),
            // openat2 unavailable (old kernel, seccomp): walk by hand.
            Err(Errno::NOSYS | Errno::PERM) => walk(dir, location),
            Err(e) => Err(explain(e)),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn open_no_symlinks(dir: &File, location: &str) -> Result<OwnedFd, String> {
        walk(dir, location)
    }

    /// Component-by-component walk, refusing symlinks at every step.
    pub(super) fn walk(dir: &File, location: &str) -> Result<OwnedFd, String> {
        let parts: Vec<&str> = location
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        let Some((last, folders)) = parts.split_last() else {
            return Err("the location names no file".into());
        };
        let mut current: Option<OwnedFd> = None;
        for part in folders {
            let base = match &current {
                Some(fd) => rustix::fs::openat(
                    fd,
                    *part,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                ),
                None => rustix::fs::openat(
                    dir,
                    *part,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                ),
            };
            current = Some(base.map_err(explain)?);
        }
        let opened = match &current {
            Some(fd) => rustix::fs::openat(fd, *last, flags(), Mode::empty()),
            None => rustix::fs::openat(dir, *last, flags(), Mode::empty()),
        };
        opened.map_err(explain)
    }

    /// A read-only map of a regular file opened and checked above (empty
    /// for an empty file); None when its file system cannot map files
    /// (read it instead). If another process truncates the file while it
    /// is mapped, reads past the new end fault (SIGBUS): the documented
    /// reason for the `mmap=False` mode.
    pub fn map(
        file: &File,
        location: &str,
    ) -> Result<Option<crate::decode::source::Mapped>, String> {
        use crate::decode::source::{cannot_map, map_open_file};
        match map_open_file(file, Path::new(location)) {
            Ok(mapped) => Ok(Some(mapped)),
            Err(crate::error::Error::Io { source, .. }) if cannot_map(&source) => Ok(None),
            Err(e) => Err(format!("cannot map the file: {e}")),
        }
    }

    pub fn read_at(file: &File, offset: u64, len: usize) -> Result<Bytes, String> {
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, offset)
            .map_err(|e| format!("cannot read {len} bytes at offset {offset}: {e}"))?;
        Ok(Bytes::from(buf))
    }
}

#[cfg(not(unix))]
mod sandbox {
    use std::fs::File;
    use std::path::Path;

    use bytes::Bytes;

    const UNSUPPORTED: &str =
        "external data is only supported on Unix-like systems in this version";

    pub fn open_dir(_path: &Path) -> Result<File, String> {
        Err(UNSUPPORTED.into())
    }

    pub fn open_beneath(
        _dir: &File,
        _location: &str,
        _allow_hardlinks: bool,
    ) -> Result<File, String> {
        Err(UNSUPPORTED.into())
    }

    pub fn map(
        _file: &File,
        _location: &str,
    ) -> Result<Option<crate::decode::source::Mapped>, String> {
        Err(UNSUPPORTED.into())
    }

    pub fn read_at(_file: &File, _offset: u64, _len: usize) -> Result<Bytes, String> {
        Err(UNSUPPORTED.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_rules() {
        for bad in [
            "",
            "/etc/passwd",
            "\\\\server\\share",
            "//server/x",
            "C:\\x",
            "c:x",
            "../x",
            "a/../../b",
            "a\\..\\b",
            "a\0b",
            "..",
        ] {
            assert!(check_location(bad).is_err(), "{bad:?} must be refused");
        }
        for ok in [
            "weights.bin",
            "sub/dir/w.bin",
            "./w.bin",
            "a..b",
            "..a",
            "x/...",
            "weights.data",
        ] {
            assert!(check_location(ok).is_ok(), "{ok:?} must be accepted");
        }
    }

    fn tensor(entries: &[(&str, &str)]) -> TensorProto {
        TensorProto {
            name: Some("t".into()),
            data_location: Some(1),
            external_data: entries
                .iter()
                .map(|(k, v)| crate::proto::StringStringEntryProto {
                    key: Some((*k).into()),
                    value: Some((*v).into()),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn key_rules() {
        let info = parse_info(&tensor(&[
            ("location", "w.bin"),
            ("offset", "16"),
            ("length", "8"),
            ("x", "y"),
        ]))
        .unwrap();
        assert_eq!((info.offset, info.length), (16, Some(8)));
        assert_eq!(info.ignored_keys, vec!["x".to_string()]);
        for bad in [
            vec![("location", "a"), ("location", "b")],
            vec![("offset", "1")],
            vec![("location", "a"), ("offset", "-1")],
            vec![("location", "a"), ("offset", "0x10")],
            vec![("location", "a"), ("length", " 4")],
            vec![("location", "a"), ("length", "99999999999999999999")],
            vec![("location", "a"), ("offset", "+3")],
        ] {
            assert!(parse_info(&tensor(&bad)).is_err(), "{bad:?}");
        }
    }
}
