//! Getting a model's bytes: a read-only memory map, or an owned read.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use bytes::Bytes;
use memmap2::Mmap;

use crate::error::{Error, Result};

/// Maps `path` read-only and returns its bytes as one shared buffer; every
/// `Bytes` sliced from it keeps the map alive.
///
/// The map reflects the file: if another process truncates or rewrites the
/// file while it is mapped, reads may see new contents or fault (SIGBUS).
/// Use [`read_file`] where files can change under the reader.
pub fn map_file(path: &Path) -> Result<Bytes> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    map_open_file(&file, path)
}

/// Maps an already opened file (see [`map_file`]).
pub fn map_open_file(file: &File, path: &Path) -> Result<Bytes> {
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"),
        ));
    }
    if meta.len() == 0 {
        // mmap(2) refuses empty maps; an empty message is still valid.
        return Ok(Bytes::new());
    }
    // SAFETY: the map is read-only and owned by the returned `Bytes`, which
    // keeps it alive for every slice. Concurrent modification of the file by
    // another process is the documented hazard of file-backed maps (see the
    // function docs); nothing here writes through the map.
    let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io(path, e))?;
    Ok(Bytes::from_owner(map))
}

/// Reads `path` into an owned buffer.
pub fn read_file(path: &Path) -> Result<Bytes> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut data = Vec::new();
    file.read_to_end(&mut data)
        .map_err(|e| Error::io(path, e))?;
    Ok(Bytes::from(data))
}
