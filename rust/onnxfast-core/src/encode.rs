//! Writing messages to files and streams without holding their encoding in
//! memory.
//!
//! `prost::Message::encode` writes into any [`BufMut`]; [`FileSink`] is one
//! that passes what it is given on to a writer through a small buffer, and
//! large byte fields (tensor data, which are slices of a memory map) to the
//! writer directly. A model of several GiB is written with a buffer's worth
//! of extra memory, where `encode_to_vec` would hold a copy of all of it.

use std::fs::File;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

use bytes::buf::UninitSlice;
use bytes::BufMut;

/// The sink's buffer: large enough that small fields cost no system call
/// each, small beside any model worth streaming.
const BUFFER: usize = 1 << 20;

/// A [`BufMut`] writing to a file or any other writer. A write that fails
/// is kept (and what follows discarded) until [`FileSink::finish`] returns
/// it: `BufMut`'s methods cannot fail.
pub struct FileSink<'a> {
    out: &'a mut dyn Write,
    buf: Vec<u8>,
    written: u64,
    failed: Option<io::Error>,
    /// Called with each slice of [`RELEASE_MIN`] bytes or more once it is
    /// written or copied into the buffer (to release the pages of a map it
    /// came from).
    after_write: &'a dyn Fn(&[u8]),
}

/// Below this many bytes a slice's release costs more than it frees.
const RELEASE_MIN: usize = 64 << 10;

/// The `after_write` of a sink that releases nothing.
fn keep(_: &[u8]) {}

impl<'a> FileSink<'a> {
    /// A sink writing to `out` that calls `after_write` with each large
    /// slice once written (or copied into its buffer).
    pub fn releasing(out: &'a mut dyn Write, after_write: &'a dyn Fn(&[u8])) -> FileSink<'a> {
        FileSink {
            out,
            buf: Vec::with_capacity(BUFFER),
            written: 0,
            failed: None,
            after_write,
        }
    }

    /// Writes out the buffer (nothing after a failure).
    fn flush_buffer(&mut self) {
        write_out(self.out, &mut self.failed, &mut self.written, &self.buf);
        self.buf.clear();
    }

    /// Writes out what is buffered and flushes the writer: the bytes
    /// written, or the first failure.
    pub fn finish(mut self) -> io::Result<u64> {
        self.flush_buffer();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.written)
    }
}

// SAFETY: `chunk_mut` returns the buffer's spare capacity (never empty: a
// full buffer is written out first), and `advance_mut` only grows the
// buffer's length over bytes the caller has initialised in that chunk
// (`BufMut::advance_mut`'s contract), within its capacity.
unsafe impl BufMut for FileSink<'_> {
    fn remaining_mut(&self) -> usize {
        // A file takes what it is given (a full disk is a write failure).
        usize::MAX - self.buf.len()
    }

    unsafe fn advance_mut(&mut self, cnt: usize) {
        let len = self.buf.len() + cnt;
        assert!(len <= self.buf.capacity(), "advanced past the chunk");
        // SAFETY: the caller initialised `cnt` bytes of the chunk
        // `chunk_mut` returned, which starts at the current length.
        unsafe { self.buf.set_len(len) };
    }

    fn chunk_mut(&mut self) -> &mut UninitSlice {
        if self.buf.len() == self.buf.capacity() {
            self.flush_buffer();
        }
        let spare: &mut [MaybeUninit<u8>] = self.buf.spare_capacity_mut();
        UninitSlice::uninit(spare)
    }

    /// prost writes a `Bytes` field with `put`, whose default copies it
    /// through `chunk_mut` (the buffer): here each of its chunks goes to
    /// [`FileSink::put_slice`], so tensor data goes straight to the file.
    fn put<T: bytes::Buf>(&mut self, mut src: T)
    where
        Self: Sized,
    {
        while src.has_remaining() {
            let chunk = src.chunk();
            let n = chunk.len();
            self.put_slice(chunk);
            src.advance(n);
        }
    }

    fn put_slice(&mut self, src: &[u8]) {
        if src.len() >= BUFFER / 2 {
            // Tensor data: straight to the file, not through the buffer.
            // A window at a time, each released once written, so a large
            // field read from a map never has more than a window mapped.
            self.flush_buffer();
            for piece in src.chunks(crate::decode::source::RELEASE_WINDOW) {
                write_out(self.out, &mut self.failed, &mut self.written, piece);
                (self.after_write)(piece);
            }
            return;
        }
        // Smaller than the buffer: fits whole once the buffer is written out.
        if self.buf.capacity() - self.buf.len() < src.len() {
            self.flush_buffer();
        }
        self.buf.extend_from_slice(src);
        if src.len() >= RELEASE_MIN {
            (self.after_write)(src);
        }
    }
}

/// Writes `bytes` to `out` and counts them, unless a write failed before
/// (the failure is kept, what follows discarded).
fn write_out(out: &mut dyn Write, failed: &mut Option<io::Error>, written: &mut u64, bytes: &[u8]) {
    if failed.is_some() || bytes.is_empty() {
        return;
    }
    match out.write_all(bytes) {
        Ok(()) => *written += bytes.len() as u64,
        Err(e) => *failed = Some(e),
    }
}

/// Where a model's encoding goes: a file, or a stream such as an open file
/// or an in-memory buffer.
pub enum Target<'a> {
    /// Written to a temporary file beside the path, renamed over it once
    /// complete: a failed write leaves the path as it was. A symbolic link
    /// is followed (the file it names is written, as `open` writes it); a
    /// path that names a FIFO or a device (`/dev/null`, `/dev/stdout`) is
    /// written in place, as a stream, not replaced by a file.
    Path(&'a Path),
    /// Written in order as it is encoded (what a failed write leaves in the
    /// stream is the writer's).
    Stream(&'a mut dyn Write),
}

/// Writes `message`'s encoding to `path` (see [`Target::Path`]). Returns
/// the bytes written.
pub fn write_message<M: prost::Message>(message: &M, path: &Path) -> io::Result<u64> {
    write_message_releasing(message, Target::Path(path), &keep)
}

/// Writes `bytes` to `path` as a save does (see [`Target::Path`]): what
/// writers of other formats call to save as this module does.
pub fn write_file(bytes: &[u8], path: &Path) -> io::Result<u64> {
    write_bytes(bytes, Target::Path(path), &keep)
}

/// Writes `message`'s encoding to `target`, calling `after_write` with each
/// large byte field (tensor data) once it is written.
pub fn write_message_releasing<M: prost::Message>(
    message: &M,
    target: Target<'_>,
    after_write: &dyn Fn(&[u8]),
) -> io::Result<u64> {
    write_to(target, after_write, |sink| encode_into(message, sink))
}

/// Writes `bytes` to `target` as [`write_message_releasing`] does.
pub fn write_bytes(
    bytes: &[u8],
    target: Target<'_>,
    after_write: &dyn Fn(&[u8]),
) -> io::Result<u64> {
    write_to(target, after_write, |sink| {
        sink.put_slice(bytes);
        Ok(())
    })
}

/// Writes `message`'s encoding to `target`, and each data file (a path
/// and its content, the concatenation of its chunks) through a temporary
/// file beside it. Nothing is renamed into place before everything is
/// written, and the data files are renamed first, so a model file never
/// names data that is not there yet; to a stream, the model is written
/// before the data files are renamed into place (and they are left out
/// when the stream fails). `after_write` is called as [`FileSink`] calls
/// it, for the chunks and the message's byte fields. Returns the bytes
/// written to the model's target and to the data files.
pub fn write_message_with_data<M: prost::Message>(
    message: &M,
    target: Target<'_>,
    data: &[(&Path, &[bytes::Bytes])],
    after_write: &dyn Fn(&[u8]),
) -> io::Result<(u64, u64)> {
    write_with_data(target, data, after_write, |sink| encode_into(message, sink))
}

/// [`write_message_with_data`] of a model already encoded (`model`: the
/// model file's content, in whatever format).
pub fn write_bytes_with_data(
    model: &[u8],
    target: Target<'_>,
    data: &[(&Path, &[bytes::Bytes])],
    after_write: &dyn Fn(&[u8]),
) -> io::Result<(u64, u64)> {
    write_with_data(target, data, after_write, |sink| {
        sink.put_slice(model);
        Ok(())
    })
}

fn write_with_data(
    target: Target<'_>,
    data: &[(&Path, &[bytes::Bytes])],
    after_write: &dyn Fn(&[u8]),
    fill: impl FnOnce(&mut FileSink) -> io::Result<()>,
) -> io::Result<(u64, u64)> {
    // The model's file (a link's target), the FIFO or device it is
    // written into, or the stream.
    let mut model_out = match target {
        Target::Path(path) => ModelOut::Placed(placement(path)?),
        Target::Stream(out) => ModelOut::Stream(out),
    };
    // What would make a rename fail once the first is done.
    let mut seen = std::collections::HashSet::new();
    let model_path = match &model_out {
        ModelOut::Placed(Placement::Replace(p) | Placement::InPlace(p)) => Some(p.as_path()),
        ModelOut::Stream(_) => None,
    };
    for target in model_path.into_iter().chain(data.iter().map(|(p, _)| *p)) {
        if target.is_dir() {
            return Err(write_failed(
                target,
                io::Error::from(io::ErrorKind::IsADirectory),
            ));
        }
        if !seen.insert(target) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot write {} twice in one save", target.display()),
            ));
        }
    }
    let mut temps = Temps(Vec::with_capacity(data.len() + 1));
    let mut data_written: u64 = 0;
    // Each file is on disk before it is renamed into place: synced one by
    // one, or, many of them (a file per tensor), all together once written.
    let sync_each = data.len() <= SYNC_EACH_UP_TO;
    for (data_path, chunks) in data {
        let temp = write_temp(data_path, sync_each, after_write, |sink| {
            for chunk in chunks.iter() {
                sink.put_slice(chunk);
            }
            Ok(())
        })?;
        data_written = data_written.saturating_add(temp.1);
        temps.0.push((temp.0, data_path));
    }
    if !sync_each {
        temps.sync()?;
    }
    let model_written = match &mut model_out {
        ModelOut::Placed(Placement::Replace(file)) => {
            let (temp, n) = write_temp(file, true, after_write, fill)?;
            temps.0.push((temp, file));
            n
        }
        ModelOut::Placed(Placement::InPlace(special)) => {
            write_stream(&mut open_in_place(special)?, after_write, fill)?
        }
        ModelOut::Stream(out) => write_stream(&mut **out, after_write, fill)?,
    };
    temps.commit()?;
    Ok((model_written, data_written))
}

/// Where [`write_with_data`] writes the model.
enum ModelOut<'a> {
    Placed(Placement),
    Stream(&'a mut dyn Write),
}

/// Data files of a save up to this many are synced one by one.
const SYNC_EACH_UP_TO: usize = 8;

/// Temporary files written by [`write_temp`], each with the path it is to
/// be renamed to; those not renamed are removed when dropped.
struct Temps<'a>(Vec<(std::path::PathBuf, &'a Path)>);

impl Temps<'_> {
    /// Flushes the files to disk: on Linux, their file systems at once
    /// (one `syncfs` per folder, where a `fsync` each costs ~0.2 ms a
    /// file); elsewhere one by one.
    fn sync(&self) -> io::Result<()> {
        let failed = write_failed;
        #[cfg(target_os = "linux")]
        {
            let mut folders: Vec<&Path> = self.0.iter().map(|(_, p)| folder_of(p)).collect();
            folders.sort_unstable();
            folders.dedup();
            for folder in folders {
                File::open(folder)
                    .and_then(|f| rustix::fs::syncfs(&f).map_err(io::Error::from))
                    .map_err(|e| failed(folder, e))?;
            }
        }
        #[cfg(not(target_os = "linux"))]
        for (temp, path) in &self.0 {
            File::open(temp)
                .and_then(|f| f.sync_all())
                .map_err(|e| failed(path, e))?;
        }
        Ok(())
    }

    /// Renames each over its path, in order.
    fn commit(&mut self) -> io::Result<()> {
        let mut done = 0;
        let result = self.0.iter().try_for_each(|(temp, path)| {
            rename(temp, path)?;
            done += 1;
            Ok(())
        });
        self.0.drain(..done);
        result
    }
}

impl Drop for Temps<'_> {
    fn drop(&mut self) {
        for (temp, _) in &self.0 {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// `message` encoded into `sink` (its errors as I/O errors).
fn encode_into<M: prost::Message>(message: &M, sink: &mut FileSink) -> io::Result<()> {
    message
        .encode(sink)
        .map_err(|e| io::Error::other(e.to_string()))
}

fn write_to(
    target: Target<'_>,
    after_write: &dyn Fn(&[u8]),
    fill: impl FnOnce(&mut FileSink) -> io::Result<()>,
) -> io::Result<u64> {
    match target {
        Target::Path(path) => match placement(path)? {
            Placement::Replace(file) => commit(write_temp(&file, true, after_write, fill)?, &file),
            Placement::InPlace(special) => {
                write_stream(&mut open_in_place(&special)?, after_write, fill)
            }
        },
        Target::Stream(out) => write_stream(out, after_write, fill),
    }
}

/// The error of a save that could not write the file at `path`: what the
/// system said (`source`, its OS error number kept), and where. It travels
/// inside an `io::Error` of the same kind (see [`write_failed`]); a
/// binding finds it with `get_ref()` and a downcast.
#[derive(Debug)]
pub struct WriteFailed {
    pub path: PathBuf,
    pub source: io::Error,
}

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// `source`, a failure to write `path`, as the `io::Error` a save returns
/// (one already naming its file is passed on as it is).
fn write_failed(path: &Path, source: io::Error) -> io::Error {
    let named = source
        .get_ref()
        .is_some_and(|inner| inner.is::<WriteFailed>());
    if named {
        return source;
    }
    io::Error::new(
        source.kind(),
        WriteFailed {
            path: path.to_path_buf(),
            source,
        },
    )
}

/// How a save writes the file at a path (see [`placement`]).
#[derive(Debug, PartialEq, Eq)]
enum Placement {
    /// A regular file (or none yet) at this path: written beside it under
    /// a temporary name, then renamed over it.
    Replace(PathBuf),
    /// A FIFO, a socket or a device: written to in place, as a stream
    /// (replacing it would put a file where `/dev/null` was).
    InPlace(PathBuf),
}

/// Symbolic links followed one after another, at most (Linux's limit).
const MAX_LINKS: usize = 40;

/// Where and how a save to `path` writes: a symbolic link is followed to
/// the file it names, link after link (the link stays, its target gets the
/// content, as `open(path, "wb")` would have it); that file is replaced,
/// or written in place when it is not a regular file. A folder is an
/// error (`IsADirectory`), as `open` has it.
fn placement(path: &Path) -> io::Result<Placement> {
    let failed = |e: io::Error| write_failed(path, e);
    // What the path names in the end, as `open` finds it: a stream is
    // written through the path itself, whose links `open` follows (those
    // of /proc/self/fd too, which name a pipe as "pipe:[N]", no path).
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(failed(io::Error::from(io::ErrorKind::IsADirectory)));
        }
        if !meta.is_file() {
            return Ok(Placement::InPlace(path.to_path_buf()));
        }
    }
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Placement::Replace(at)),
            Err(e) => return Err(failed(e)),
            Ok(meta) => meta,
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if !may_follow(&at, &meta).map_err(failed)? {
                return Err(failed(io::Error::from(io::ErrorKind::PermissionDenied)));
            }
            // A relative target is relative to the link's folder.
            at = folder_of(&at).join(std::fs::read_link(&at).map_err(failed)?);
        } else if kind.is_file() {
            return Ok(Placement::Replace(at));
        } else if kind.is_dir() {
            return Err(failed(io::Error::from(io::ErrorKind::IsADirectory)));
        } else {
            return Ok(Placement::InPlace(at));
        }
    }
    Err(failed(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("more than {MAX_LINKS} symbolic links in a row"),
    )))
}

/// Whether a save may follow the symbolic link at `link` (its own
/// metadata `meta`): not in a sticky folder anyone can write to (/tmp)
/// when someone else planted it, neither this process's user nor the
/// folder's owner. The kernel's `fs.protected_symlinks` refuses `open`
/// the same link (EACCES); following links by hand must not get round it.
fn may_follow(link: &Path, meta: &std::fs::Metadata) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let folder = std::fs::metadata(folder_of(link))?;
        let sticky_and_open = folder.mode() & 0o1002 == 0o1002;
        let uid = meta.uid();
        Ok(!sticky_and_open || uid == rustix::process::geteuid().as_raw() || uid == folder.uid())
    }
    #[cfg(not(unix))]
    {
        let _ = (link, meta);
        Ok(true)
    }
}

/// A FIFO or device (see [`Placement::InPlace`]) opened for writing.
fn open_in_place(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| write_failed(path, e))
}

/// Writes a content to a stream: the bytes written.
fn write_stream(
    out: &mut dyn Write,
    after_write: &dyn Fn(&[u8]),
    fill: impl FnOnce(&mut FileSink) -> io::Result<()>,
) -> io::Result<u64> {
    let mut sink = FileSink::releasing(out, after_write);
    fill(&mut sink)?;
    sink.finish()
}

/// Writes a file's content to a temporary file beside `path`, synced to
/// disk when `sync`: its path and the bytes written (nothing is left
/// behind on failure).
fn write_temp(
    path: &Path,
    sync: bool,
    after_write: &dyn Fn(&[u8]),
    fill: impl FnOnce(&mut FileSink) -> io::Result<()>,
) -> io::Result<(std::path::PathBuf, u64)> {
    let name = path.file_name().ok_or_else(|| {
        write_failed(
            path,
            io::Error::new(io::ErrorKind::InvalidInput, "not a file path"),
        )
    })?;
    let temp = folder_of(path).join(temporary_name(name));
    // A new file, never one already there: a leftover of this name (or a
    // link planted under it, which `create` would write through) is
    // removed first, and `create_new` refuses whatever appears meanwhile.
    let _ = std::fs::remove_file(&temp);
    // The file it replaces, if any: its permissions (and owner) go to the
    // new file, so a private model stays private, as a write in place
    // would leave it.
    let replaced = std::fs::metadata(path).ok().filter(|m| m.is_file());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if let Some(old) = &replaced {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // Never looser than the old file while the bytes go in.
        options.mode(old.permissions().mode() & 0o777);
    }
    let created = options.open(&temp);
    let result = created.and_then(|mut file| {
        if let Some(old) = &replaced {
            keep_access(&file, old)?;
        }
        let n = write_stream(&mut file, after_write, fill)?;
        if sync {
            file.sync_all()?;
        }
        Ok(n)
    });
    match result {
        Ok(n) => Ok((temp, n)),
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            Err(write_failed(path, e))
        }
    }
}

/// Gives `file` (a save's new file) the permissions of the file `old` it
/// is to replace (the umask applied at creation removed), and, where this
/// process may (as root), its owner and group; a user who cannot give a
/// file away keeps it.
fn keep_access(file: &File, old: &std::fs::Metadata) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mine = file.metadata()?;
        if (mine.uid(), mine.gid()) != (old.uid(), old.gid()) {
            // Refused (EPERM) unless this process may give files away: the
            // file stays ours then. Before the mode, which a change of
            // owner would strip of set-id bits.
            let _ = rustix::fs::fchown(
                file,
                Some(rustix::fs::Uid::from_raw(old.uid())),
                Some(rustix::fs::Gid::from_raw(old.gid())),
            );
        }
    }
    file.set_permissions(old.permissions())
}

/// The name a file named `name` is written under before it is renamed
/// into place: `.<name>.<pid>.<thread>.tmp`, the thread's system id on
/// Linux (Python's `threading.get_native_id()`). One per process and
/// thread: two threads saving to one path write files of their own (with
/// one name, one removed the other's file as it wrote).
fn temporary_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".{}.{}.tmp", std::process::id(), thread_tag()));
    temp
}

/// This thread's system id.
#[cfg(target_os = "linux")]
fn thread_tag() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

/// A number of this thread's, unique in the process.
#[cfg(not(target_os = "linux"))]
fn thread_tag() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TAG: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TAG.with(|tag| *tag)
}

/// Whether a file named `name` could be one of the temporary files a save
/// writes (see [`temporary_name`]; any process's): a save must not give
/// one of its own files such a name, which another file's write would
/// replace.
pub fn is_temporary_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// The folder a file path is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Renames a temporary file written by [`write_temp`] over `path`.
fn commit((temp, n): (std::path::PathBuf, u64), path: &Path) -> io::Result<u64> {
    rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })?;
    Ok(n)
}

/// `temp` renamed over `path` (the error naming `path`).
fn rename(temp: &Path, path: &Path) -> io::Result<()> {
    std::fs::rename(temp, path).map_err(|e| write_failed(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{GraphProto, ModelProto, NodeProto, TensorProto};
    use prost::Message;

    fn model(tensor_bytes: usize, nodes: usize) -> ModelProto {
        let tensor = TensorProto {
            name: Some("w".into()),
            dims: vec![tensor_bytes as i64],
            data_type: Some(2),
            raw_data: Some(bytes::Bytes::from(
                (0..tensor_bytes)
                    .map(|i| (i % 251) as u8)
                    .collect::<Vec<_>>(),
            )),
            ..Default::default()
        };
        let node = |i: usize| NodeProto {
            op_type: Some("Relu".into()),
            input: [format!("t{i}").into()].into_iter().collect(),
            output: [format!("t{}", i + 1).into()].into_iter().collect(),
            ..Default::default()
        };
        ModelProto {
            ir_version: Some(9),
            graph: Some(GraphProto {
                node: (0..nodes).map(node).collect(),
                initializer: vec![tensor.clone(), tensor],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn written_file_is_the_encoding() {
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Small fields only; a tensor just under and one over the direct
        // write's size; many nodes, so the buffer fills several times.
        for (tensor, nodes) in [(10, 3), (BUFFER / 2 - 1, 10), (3 * BUFFER + 7, 100_000)] {
            let m = model(tensor, nodes);
            let path = dir.join("m.onnx");
            let n = write_message(&m, &path).unwrap();
            let written = std::fs::read(&path).unwrap();
            assert_eq!(written, m.encode_to_vec());
            assert_eq!(n, written.len() as u64);
        }
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("m.onnx")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn model_and_data_files_are_written_together() {
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-d-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = model(10, 3);
        let chunks = [
            bytes::Bytes::from_static(b"abc"),
            bytes::Bytes::new(),
            bytes::Bytes::from(vec![7u8; BUFFER + 3]),
        ];
        let (path, data) = (dir.join("m.onnx"), dir.join("m.onnx.data"));
        let released = std::cell::RefCell::new(Vec::new());
        let note = |slice: &[u8]| released.borrow_mut().push(slice.len());
        let (n, d) =
            write_message_with_data(&m, Target::Path(&path), &[(&data, &chunks)], &note).unwrap();
        // The large chunk; the model's 10-byte tensor is too small.
        assert_eq!(*released.borrow(), [BUFFER + 3]);
        assert_eq!(std::fs::read(&path).unwrap(), m.encode_to_vec());
        assert_eq!(std::fs::read(&data).unwrap(), chunks.concat());
        assert_eq!((n, d), (m.encode_to_vec().len() as u64, BUFFER as u64 + 6));
        // The data file's folder is missing: neither file is written.
        let fresh = dir.join("fresh.onnx");
        let err = write_message_with_data(
            &m,
            Target::Path(&fresh),
            &[(&dir.join("no/d.bin"), &chunks)],
            &keep,
        )
        .unwrap_err();
        assert!(err.to_string().contains("no/d.bin"), "{err}");
        // The model's target is a folder: the data file is not renamed either.
        std::fs::create_dir_all(dir.join("taken")).unwrap();
        let kept = dir.join("kept.bin");
        assert!(write_message_with_data(
            &m,
            Target::Path(&dir.join("taken")),
            &[(&kept, &chunks)],
            &keep
        )
        .is_err());
        let names = || {
            let mut names: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(), ["m.onnx", "m.onnx.data", "taken"]);
        // Several data files: each its own content; the second's folder
        // missing, none is written (the first's temporary file removed).
        let (a, b) = (dir.join("a"), dir.join("b"));
        let small = [bytes::Bytes::from_static(b"xyz")];
        let multi = write_message_with_data(
            &m,
            Target::Path(&dir.join("multi.onnx")),
            &[(&a, &chunks), (&b, &small)],
            &keep,
        )
        .unwrap();
        assert_eq!(multi.1, BUFFER as u64 + 9);
        assert_eq!(std::fs::read(&a).unwrap(), chunks.concat());
        assert_eq!(std::fs::read(&b).unwrap(), b"xyz");
        for (first, second) in [(&dir.join("c"), &dir.join("no/d")), (&a, &a)] {
            assert!(write_message_with_data(
                &m,
                Target::Path(&dir.join("never.onnx")),
                &[(first, &small), (second, &small)],
                &keep,
            )
            .is_err());
        }
        assert_eq!(
            names(),
            ["a", "b", "m.onnx", "m.onnx.data", "multi.onnx", "taken"]
        );
        assert_eq!(std::fs::read(&a).unwrap(), chunks.concat());
        // More files than are synced one by one: synced together.
        let many: Vec<std::path::PathBuf> = (0..=SYNC_EACH_UP_TO)
            .map(|i| dir.join(format!("many/{i}")))
            .collect();
        std::fs::create_dir_all(dir.join("many")).unwrap();
        let data: Vec<(&Path, &[bytes::Bytes])> =
            many.iter().map(|p| (p.as_path(), &small[..])).collect();
        let (_, d) =
            write_message_with_data(&m, Target::Path(&dir.join("many.onnx")), &data, &keep)
                .unwrap();
        assert_eq!(d, 3 * many.len() as u64);
        for p in &many {
            assert_eq!(std::fs::read(p).unwrap(), b"xyz");
        }
        assert_eq!(
            std::fs::read_dir(dir.join("many")).unwrap().count(),
            many.len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temporary_names_are_recognised() {
        let temp = temporary_name(std::ffi::OsStr::new("m.onnx"));
        assert!(is_temporary_name(temp.to_str().unwrap()));
        assert!(!is_temporary_name("m.onnx"));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_temporary_name_is_not_written_through() {
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-l-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let temp = dir.join(temporary_name(std::ffi::OsStr::new("m.onnx")));
        std::os::unix::fs::symlink(&victim, &temp).unwrap();
        let path = dir.join("m.onnx");
        assert_eq!(
            write_bytes(b"model", Target::Path(&path), &keep).unwrap(),
            5
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"model");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&temp).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_to_the_file_they_name() {
        use std::os::unix::fs::symlink;
        let dir =
            std::env::temp_dir().join(format!("onnxfast-encode-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::fs::write(dir.join("real/m.onnx"), b"old").unwrap();
        symlink("real/m.onnx", dir.join("first")).unwrap();
        symlink("first", dir.join("link")).unwrap();
        symlink("real/new.onnx", dir.join("dangling")).unwrap();
        symlink("loop", dir.join("loop")).unwrap();
        assert_eq!(
            placement(&dir.join("link")).unwrap(),
            Placement::Replace(dir.join("real/m.onnx"))
        );
        assert_eq!(
            placement(&dir.join("dangling")).unwrap(),
            Placement::Replace(dir.join("real/new.onnx"))
        );
        let looped = placement(&dir.join("loop")).unwrap_err();
        assert!(
            looped.to_string().contains("symbolic links in a row"),
            "{looped}"
        );
        // The model file and a data file, through links: the links stay.
        write_bytes(b"model", Target::Path(&dir.join("link")), &keep).unwrap();
        let data = [bytes::Bytes::from_static(b"data")];
        let data_path = dir.join("w.bin");
        let files: [(&Path, &[bytes::Bytes]); 1] = [(&data_path, &data)];
        write_bytes_with_data(b"again", Target::Path(&dir.join("dangling")), &files, &keep)
            .unwrap();
        assert_eq!(std::fs::read(dir.join("real/m.onnx")).unwrap(), b"model");
        assert_eq!(std::fs::read(dir.join("real/new.onnx")).unwrap(), b"again");
        assert_eq!(std::fs::read(&data_path).unwrap(), b"data");
        for link in ["first", "link", "dangling"] {
            assert!(std::fs::symlink_metadata(dir.join(link))
                .unwrap()
                .file_type()
                .is_symlink());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_written_in_place() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("m.onnx");
        crate::fuzzing::make_fifo(&fifo).unwrap();
        assert_eq!(placement(&fifo).unwrap(), Placement::InPlace(fifo.clone()));
        // Through a link: the link's path, which `open` follows.
        let link = dir.join("link");
        std::os::unix::fs::symlink("m.onnx", &link).unwrap();
        assert_eq!(placement(&link).unwrap(), Placement::InPlace(link.clone()));
        let reading = fifo.clone();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            File::open(reading).unwrap().read_to_end(&mut got).unwrap();
            got
        });
        assert_eq!(
            write_bytes(b"model", Target::Path(&fifo), &keep).unwrap(),
            5
        );
        assert_eq!(reader.join().unwrap(), b"model");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_target_alone() {
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-f-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A directory where the file should go: the rename fails.
        let target = dir.join("taken");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        assert!(write_bytes(b"abc", Target::Path(&target), &keep).is_err());
        assert!(target.join("inside").is_dir());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("taken")]);
        // No such folder: nothing written.
        assert!(write_bytes(
            b"abc",
            Target::Path(&dir.join("missing").join("m.onnx")),
            &keep
        )
        .is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A writer taking at most `step` bytes a call, failing once `fail_at`
    /// bytes have been taken.
    struct Trickle {
        got: Vec<u8>,
        step: usize,
        fail_at: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.got.len() >= self.fail_at {
                return Err(io::Error::other("the stream is closed"));
            }
            let n = buf.len().min(self.step);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn streams_get_the_encoding() {
        for (tensor, nodes) in [(10, 3), (3 * BUFFER + 7, 1000)] {
            let m = model(tensor, nodes);
            let mut out = Vec::new();
            let n = write_message_releasing(&m, Target::Stream(&mut out), &keep).unwrap();
            assert_eq!(out, m.encode_to_vec());
            assert_eq!(n, out.len() as u64);
            // Short writes are taken up where they stopped.
            let mut trickle = Trickle {
                got: Vec::new(),
                step: 4093,
                fail_at: usize::MAX,
            };
            write_message_releasing(&m, Target::Stream(&mut trickle), &keep).unwrap();
            assert_eq!(trickle.got, out);
        }
        let mut out = Vec::new();
        assert_eq!(
            write_bytes(b"abc", Target::Stream(&mut out), &keep).unwrap(),
            3
        );
        assert_eq!(out, b"abc");
    }

    #[test]
    fn a_failed_stream_leaves_no_data_file() {
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-s-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = model(3 * BUFFER, 10);
        let chunks = [bytes::Bytes::from(vec![5u8; BUFFER + 1])];
        let data = dir.join("m.data");
        let mut out = Vec::new();
        let (n, d) =
            write_message_with_data(&m, Target::Stream(&mut out), &[(&data, &chunks)], &keep)
                .unwrap();
        assert_eq!(out, m.encode_to_vec());
        assert_eq!((n, d), (out.len() as u64, BUFFER as u64 + 1));
        assert_eq!(std::fs::read(&data).unwrap(), chunks.concat());
        std::fs::remove_file(&data).unwrap();
        let mut failing = Trickle {
            got: Vec::new(),
            step: usize::MAX,
            fail_at: 1,
        };
        let err = write_message_with_data(
            &m,
            Target::Stream(&mut failing),
            &[(&data, &chunks), (&dir.join("second.data"), &chunks)],
            &keep,
        )
        .unwrap_err();
        assert!(err.to_string().contains("closed"), "{err}");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(names.is_empty(), "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
