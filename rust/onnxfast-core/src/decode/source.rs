//! Getting a model's bytes: a read-only memory map, or an owned read.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{Mmap, UncheckedAdvice};

use crate::error::{Error, Result};

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
/// Use [`read_file`] where files can change under the reader.
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

/// Reads `path` into an owned buffer.
pub fn read_file(path: &Path) -> Result<Bytes> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut data = Vec::new();
    file.read_to_end(&mut data)
        .map_err(|e| Error::io(path, e))?;
    Ok(Bytes::from(data))
}
