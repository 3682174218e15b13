//! Writing messages to files without holding their encoding in memory.
//!
//! `prost::Message::encode` writes into any [`BufMut`]; [`FileSink`] is one
//! that passes what it is given on to a file through a small buffer, and
//! large byte fields (tensor data, which are slices of a memory map) to the
//! file directly. A model of several GiB is written with a buffer's worth
//! of extra memory, where `encode_to_vec` would hold a copy of all of it.

use std::fs::File;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::path::Path;

use bytes::buf::UninitSlice;
use bytes::BufMut;

/// The sink's buffer: large enough that small fields cost no system call
/// each, small beside any model worth streaming.
const BUFFER: usize = 1 << 20;

/// A [`BufMut`] writing to a file. A write that fails is kept (and what
/// follows discarded) until [`FileSink::finish`] returns it: `BufMut`'s
/// methods cannot fail.
pub struct FileSink {
    file: File,
    buf: Vec<u8>,
    written: u64,
    failed: Option<io::Error>,
}

impl FileSink {
    pub fn new(file: File) -> FileSink {
        FileSink {
            file,
            buf: Vec::with_capacity(BUFFER),
            written: 0,
            failed: None,
        }
    }

    /// Writes out the buffer (nothing after a failure).
    fn flush_buffer(&mut self) {
        write_out(
            &mut self.file,
            &mut self.failed,
            &mut self.written,
            &self.buf,
        );
        self.buf.clear();
    }

    /// Writes out what is buffered and syncs the file: the bytes written,
    /// or the first failure.
    pub fn finish(mut self) -> io::Result<u64> {
        self.flush_buffer();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.file.sync_all()?;
        Ok(self.written)
    }
}

// SAFETY: `chunk_mut` returns the buffer's spare capacity (never empty: a
// full buffer is written out first), and `advance_mut` only grows the
// buffer's length over bytes the caller has initialised in that chunk
// (`BufMut::advance_mut`'s contract), within its capacity.
unsafe impl BufMut for FileSink {
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

    fn put_slice(&mut self, src: &[u8]) {
        if src.len() >= BUFFER / 2 {
            // Tensor data: straight to the file, not through the buffer.
            self.flush_buffer();
            write_out(&mut self.file, &mut self.failed, &mut self.written, src);
            return;
        }
        // Smaller than the buffer: fits whole once the buffer is written out.
        if self.buf.capacity() - self.buf.len() < src.len() {
            self.flush_buffer();
        }
        self.buf.extend_from_slice(src);
    }
}

/// Writes `bytes` to `file` and counts them, unless a write failed before
/// (the failure is kept, what follows discarded).
fn write_out(file: &mut File, failed: &mut Option<io::Error>, written: &mut u64, bytes: &[u8]) {
    if failed.is_some() || bytes.is_empty() {
        return;
    }
    match file.write_all(bytes) {
        Ok(()) => *written += bytes.len() as u64,
        Err(e) => *failed = Some(e),
    }
}

/// Writes `message`'s encoding to `path`, through a temporary file beside
/// it renamed over `path` once complete (a failed write leaves `path` as
/// it was). Returns the bytes written.
pub fn write_message<M: prost::Message>(message: &M, path: &Path) -> io::Result<u64> {
    write_atomically(path, |sink| {
        message
            .encode(sink)
            .map_err(|e| io::Error::other(e.to_string()))
    })
}

/// Writes `bytes` to `path` as [`write_message`] does.
pub fn write_bytes(bytes: &[u8], path: &Path) -> io::Result<u64> {
    write_atomically(path, |sink| {
        sink.put_slice(bytes);
        Ok(())
    })
}

fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut FileSink) -> io::Result<()>,
) -> io::Result<u64> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let result = File::create(&temp).and_then(|file| {
        let mut sink = FileSink::new(file);
        fill(&mut sink)?;
        sink.finish()
    });
    let renamed = result.and_then(|n| std::fs::rename(&temp, path).map(|()| n));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    renamed
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
    fn a_failed_write_leaves_the_target_alone() {
        let dir = std::env::temp_dir().join(format!("onnxfast-encode-f-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A directory where the file should go: the rename fails.
        let target = dir.join("taken");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        assert!(write_bytes(b"abc", &target).is_err());
        assert!(target.join("inside").is_dir());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("taken")]);
        // No such folder: nothing written.
        assert!(write_bytes(b"abc", &dir.join("missing").join("m.onnx")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
