//! Getting a model's bytes: a read-only memory map, or an owned read.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{Mmap, UncheckedAdvice};

use crate::error::{DecodeError, DecodeErrorKind, Error, Result};

/// Shares one map between the `Bytes` that slice it and the [`PageReleaser`].
struct MapOwner(Arc<Mmap>);

impl AsRef<[u8]> for MapOwner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Drops the page-table entries of ranges of a file map that a walk has
/// passed, so that reading a model's small fields does not keep its large
/// neighbours mapped. On recent kernels one touch can map a whole 2 MiB page
/// cache folio: 300 tensor headers would otherwise leave ~600 MiB of weights
/// counted in the process's RSS. Released pages are re-read from the page
/// cache (or the file) on the next access, with the same contents. It also
/// knows which file it maps, so a writer can refuse to write over it.
#[derive(Clone)]
pub struct PageReleaser {
    map: Arc<Mmap>,
    /// The mapped file's device and inode numbers.
    file: Option<(u64, u64)>,
}

impl std::fmt::Debug for PageReleaser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageReleaser")
            .field("len", &self.map.len())
            .finish()
    }
}

/// How far a walk advances between two releases (two 2 MiB folios).
pub const RELEASE_WINDOW: usize = 4 << 20;

impl PageReleaser {
    /// Whether the map is of the file with these device and inode numbers.
    pub fn maps_file(&self, dev: u64, ino: u64) -> bool {
        self.file == Some((dev, ino))
    }

    /// Releases the whole pages inside `[start, end)` (offsets in the map).
    pub fn release(&self, start: usize, end: usize) {
        const PAGE: usize = 4096;
        let end = end.min(self.map.len());
        let first = start.div_ceil(PAGE) * PAGE;
        let last = end / PAGE * PAGE;
        if last <= first {
            return;
        }
        // SAFETY: the map is a read-only MAP_SHARED file mapping (memmap2's
        // `Mmap::map`). MADV_DONTNEED on it only unmaps pages; any later read
        // faults them back from the page cache or the file, with identical
        // contents, so live slices stay valid. The range is inside the map.
        // A failure only means the pages stay mapped.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, first, last - first)
        };
    }

    /// Releases the whole pages of `slice` when it lies in this map (a
    /// slice of its `Bytes`): whether it does.
    pub fn release_slice(&self, slice: &[u8]) -> bool {
        let base = self.map.as_ptr() as usize;
        let start = slice.as_ptr() as usize;
        let inside = start >= base && start + slice.len() <= base + self.map.len();
        if inside {
            self.release(start - base, start - base + slice.len());
        }
        inside
    }

    /// Releases everything.
    pub fn release_all(&self) {
        self.release(0, self.map.len());
    }
}

/// Releases the pages behind a walk over elements in file order, a window
/// at a time, so a walk over big tensors never keeps more than a window
/// (and the folio it is in) of them mapped.
pub struct Behind<'a> {
    pages: Option<&'a PageReleaser>,
    from: Option<usize>,
    to: usize,
}

impl<'a> Behind<'a> {
    pub fn new(pages: Option<&'a PageReleaser>) -> Self {
        Behind {
            pages,
            from: None,
            to: 0,
        }
    }

    /// The walk is about to read `[start, end)`; what lies a window or
    /// more behind `start` is released.
    pub fn advance(&mut self, start: usize, end: usize) {
        let from = *self.from.get_or_insert(start);
        if start.saturating_sub(from) >= RELEASE_WINDOW {
            if let Some(pages) = self.pages {
                pages.release(from, start);
            }
            self.from = Some(start);
        }
        self.to = self.to.max(end);
    }

    /// Releases what the walk read since the last release.
    pub fn finish(self) {
        if let (Some(pages), Some(from)) = (self.pages, self.from) {
            pages.release(from, self.to);
        }
    }
}

/// A mapped file: its bytes and the handle that releases walked-over pages.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub bytes: Bytes,
    /// None for empty files (nothing is mapped).
    pub pages: Option<PageReleaser>,
}

/// Maps `path` read-only and returns its bytes as one shared buffer; every
/// `Bytes` sliced from it keeps the map alive.
///
/// The map reflects the file: if another process truncates or rewrites the
/// file while it is mapped, reads may see new contents or fault (SIGBUS).
/// Use [`open_path`] without `mmap` where files can change under the reader.
pub fn map_file(path: &Path) -> Result<Mapped> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    map_open_file(&file, path)
}

/// Maps an already opened file (see [`map_file`]).
pub fn map_open_file(file: &File, path: &Path) -> Result<Mapped> {
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::io(path, std::io::Error::from_raw_os_error(21)));
    }
    if meta.len() == 0 {
        // mmap(2) refuses empty maps; an empty message is still valid.
        return Ok(Mapped {
            bytes: Bytes::new(),
            pages: None,
        });
    }
    // SAFETY: the map is read-only and owned (through an Arc) by the returned
    // `Bytes`, which keeps it alive for every slice. Concurrent modification
    // of the file by another process is the documented hazard of file-backed
    // maps (see the function docs); nothing here writes through the map.
    let map = Arc::new(unsafe { Mmap::map(file) }.map_err(|e| Error::io(path, e))?);
    Ok(Mapped {
        bytes: Bytes::from_owner(MapOwner(Arc::clone(&map))),
        pages: Some(PageReleaser {
            map,
            file: file_identity(&meta),
        }),
    })
}

/// A file's device and inode numbers (where the platform has them).
pub fn file_identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// A model at `path`, as each kind of file can give it:
/// - a regular file is mapped (`mmap`), else read whole;
/// - a pipe, a FIFO or a socket (`/dev/stdin` fed by a pipe, a shell's
///   `<(...)`), or a file that reports no size (`/proc`), is read to its
///   end into memory, refused past `stream_limit` bytes (a decode error of
///   the root message `root`, e.g. `ModelProto`);
/// - a device is refused (`/dev/zero` has no end, a terminal waits for
///   typing).
///
/// Opening a FIFO waits for a writer, as any reader of it does.
pub fn open_path(
    path: &Path,
    mmap: bool,
    stream_limit: Option<u64>,
    root: &'static str,
) -> Result<Mapped> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_file() && meta.len() > 0 {
        if mmap {
            match map_open_file(&file, path) {
                // A file system that cannot map its files (sysfs, FUSE
                // mounts with direct I/O): read it.
                Err(Error::Io { source, .. }) if cannot_map(&source) => {}
                mapped => return mapped,
            }
        }
        return read_open_file(file, path, None, root).map(|bytes| Mapped { bytes, pages: None });
    }
    if meta.is_dir() {
        return Err(Error::io(path, std::io::Error::from_raw_os_error(21)));
    }
    if let Some(device) = device_kind(&meta) {
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{device}, not a model file (models are read from files, pipes and sockets)"
                ),
            ),
        ));
    }
    let bytes = read_open_file(file, path, stream_limit, root)?;
    Ok(Mapped { bytes, pages: None })
}

/// Whether a failed map says that the file's file system cannot map files
/// (ENODEV: sysfs, FUSE mounts with direct I/O), where reading works.
pub fn cannot_map(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(rustix::io::Errno::NODEV.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// What kind of device `meta` describes, if it is one.
fn device_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    None
}

/// Reads `file` (opened from `path`) to its end; with a `limit`, refuses
/// more than `limit` bytes (after reading one more, no further).
fn read_open_file(
    file: File,
    path: &Path,
    limit: Option<u64>,
    root: &'static str,
) -> Result<Bytes> {
    let mut data = Vec::new();
    let read = match limit {
        Some(limit) => file.take(limit.saturating_add(1)).read_to_end(&mut data),
        None => { file }.read_to_end(&mut data),
    };
    read.map_err(|e| Error::io(path, e))?;
    match limit {
        Some(limit) if data.len() as u64 > limit => Err(Error::Decode(DecodeError {
            offset: limit,
            path: String::new(),
            root,
            kind: DecodeErrorKind::StreamOverBudget {
                source: path.display().to_string(),
                budget: limit,
            },
        })),
        _ => Ok(Bytes::from(data)),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;

    /// A FIFO in the temporary folder, removed on drop.
    struct Fifo(std::path::PathBuf);

    impl Fifo {
        fn new(tag: &str) -> std::io::Result<Fifo> {
            let path = std::env::temp_dir()
                .join(format!("onnxfast-source-{tag}-{}.onnx", std::process::id()));
            let _ = std::fs::remove_file(&path);
            crate::fuzzing::make_fifo(&path)?;
            Ok(Fifo(path))
        }

        /// Writes `data` into the FIFO from another thread (a reader that
        /// stops early breaks the pipe: ignored).
        fn feed(&self, data: &'static [u8]) -> std::thread::JoinHandle<()> {
            let path = self.0.clone();
            std::thread::spawn(move || {
                if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(path) {
                    let _ = f.write_all(data);
                }
            })
        }
    }

    impl Drop for Fifo {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    const DATA: &[u8] = b"\x08\x07\x12\x04none";

    #[test]
    fn a_fifo_is_read_to_its_end_mapped_or_not() {
        let fifo = Fifo::new("read").expect("mkfifo");
        for mmap in [true, false] {
            let writer = fifo.feed(DATA);
            let got = open_path(&fifo.0, mmap, None, "ModelProto").expect("read");
            writer.join().expect("writer");
            assert_eq!(&got.bytes[..], DATA);
            assert!(got.pages.is_none());
        }
    }

    #[test]
    fn a_fifo_past_its_limit_is_refused_after_one_byte_more() {
        let fifo = Fifo::new("limit").expect("mkfifo");
        let writer = fifo.feed(DATA);
        let limit = DATA.len() as u64 - 1;
        let err = open_path(&fifo.0, true, Some(limit), "ModelProto").expect_err("refused");
        writer.join().expect("writer");
        let Error::Decode(err) = err else {
            panic!("not a decode error: {err}");
        };
        assert_eq!(err.offset, limit);
        assert_eq!(err.root, "ModelProto");
        assert!(
            matches!(err.kind, DecodeErrorKind::StreamOverBudget { budget, .. } if budget == limit)
        );
        let writer = fifo.feed(DATA);
        let exact = open_path(&fifo.0, true, Some(DATA.len() as u64), "ModelProto");
        writer.join().expect("writer");
        assert_eq!(&exact.expect("at the limit").bytes[..], DATA);
    }

    #[test]
    fn devices_are_refused() {
        let zero = Path::new("/dev/zero");
        if !zero.exists() {
            return;
        }
        for mmap in [true, false] {
            let err = open_path(zero, mmap, None, "ModelProto").expect_err("refused");
            let Error::Io { source, .. } = &err else {
                panic!("not an I/O error: {err}");
            };
            assert_eq!(source.kind(), std::io::ErrorKind::InvalidInput);
            assert!(
                source.to_string().contains("a character device"),
                "{source}"
            );
        }
    }

    #[test]
    fn files_that_cannot_be_mapped_are_read() {
        // sysfs maps nothing (ENODEV), as FUSE mounts with direct I/O.
        let path = Path::new("/sys/kernel/mm/transparent_hugepage/enabled");
        let Ok(file) = File::open(path) else {
            return;
        };
        match map_open_file(&file, path) {
            Err(Error::Io { source, .. }) if cannot_map(&source) => {}
            _ => return,
        }
        let read = open_path(path, true, None, "ModelProto").expect("read");
        assert_eq!(&read.bytes[..], &std::fs::read(path).expect("content")[..]);
        assert!(read.pages.is_none());
    }

    #[test]
    fn regular_files_are_mapped() {
        let path =
            std::env::temp_dir().join(format!("onnxfast-source-{}.onnx", std::process::id()));
        std::fs::write(&path, DATA).expect("write");
        let mapped = open_path(&path, true, Some(1), "ModelProto");
        let read = open_path(&path, false, Some(1), "ModelProto");
        let _ = std::fs::remove_file(&path);
        // The stream limit is for streams: a file's size is known.
        let mapped = mapped.expect("mapped");
        assert_eq!(&mapped.bytes[..], DATA);
        assert!(mapped.pages.is_some());
        assert_eq!(&read.expect("read").bytes[..], DATA);
    }
}
