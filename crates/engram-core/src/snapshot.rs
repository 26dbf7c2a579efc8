//! A compact binary snapshot of a [`FileTable`] for thread checkpoints: one buffer, no per-file
//! JSON, bytes stored as they are.
//!
//! Layout (little-endian): `b"ENGT" 1u8 count:u32` then per file
//! `path_len:u32 path modified_at:f64 version:u64 data_len:u64 data`.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::path;
use crate::table::{FileEntry, FileTable};

const MAGIC: &[u8; 4] = b"ENGT";
const FORMAT: u8 = 1;

/// One file's record, as snapshots and deltas (`delta.rs`) both lay it out.
pub(crate) fn write_record(out: &mut Vec<u8>, p: &str, f: &FileEntry) {
    out.extend_from_slice(&(p.len() as u32).to_le_bytes());
    out.extend_from_slice(p.as_bytes());
    out.extend_from_slice(&f.modified_at.to_le_bytes());
    out.extend_from_slice(&f.version.to_le_bytes());
    out.extend_from_slice(&(f.data.len() as u64).to_le_bytes());
    out.extend_from_slice(&f.data);
}

impl FileTable {
    pub fn snapshot(&self) -> Vec<u8> {
        let body: usize = self.iter().map(|(p, f)| 4 + p.len() + 8 + 8 + 8 + f.data.len()).sum();
        let mut out = Vec::with_capacity(9 + body);
        out.extend_from_slice(MAGIC);
        out.push(FORMAT);
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        for (p, f) in self.iter() {
            write_record(&mut out, p, f);
        }
        out
    }

    /// Rebuilds a table; a truncated or altered snapshot is refused as a whole.
    pub fn from_snapshot(bytes: &[u8]) -> CoreResult<FileTable> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4)? != MAGIC || r.take(1)?[0] != FORMAT {
            return Err(corrupt("not an Engram file-table snapshot"));
        }
        let count = r.u32()? as usize;
        let mut table = FileTable::new();
        for _ in 0..count {
            let len = r.u32()? as usize;
            let p = std::str::from_utf8(r.take(len)?).map_err(|_| corrupt("path is not UTF-8"))?.to_string();
            if path::normalize(&p).ok().as_deref() != Some(p.as_str()) {
                return Err(corrupt("path is not normalised"));
            }
            let modified_at = f64::from_le_bytes(r.take(8)?.try_into().unwrap_or_default());
            let version = r.u64()?;
            let data_len = usize::try_from(r.u64()?).map_err(|_| corrupt("file too large"))?;
            let data = r.take(data_len)?.to_vec();
            table.restore(p, FileEntry { data, modified_at, version })?;
        }
        if r.at != bytes.len() {
            return Err(corrupt("trailing bytes"));
        }
        Ok(table)
    }
}

fn corrupt(why: &str) -> CoreError {
    CoreError::new(ErrorCode::Unsupported, "snapshot", format_args!("corrupt snapshot: {why}"))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> CoreResult<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| corrupt("truncated"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> CoreResult<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self) -> CoreResult<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trips_bytes_versions_and_directories() {
        let mut t = FileTable::new();
        t.write("/a/b.txt", b"hello".to_vec(), 1.5, None).unwrap();
        t.write("/bin", vec![0, 255, 10], 2.0, None).unwrap();
        t.write("/a/b.txt", b"again".to_vec(), 3.0, None).unwrap();
        let back = FileTable::from_snapshot(&t.snapshot()).unwrap();
        assert_eq!(back.get("/a/b.txt").unwrap().data, b"again");
        assert_eq!(back.get("/a/b.txt").unwrap().version, t.get("/a/b.txt").unwrap().version);
        assert_eq!(back.get("/bin").unwrap().modified_at, 2.0);
        assert_eq!(back.ls("/a").unwrap(), t.ls("/a").unwrap());
        let mut back = back;
        back.write("/new", vec![], 0.0, None).unwrap();
        assert!(back.get("/new").unwrap().version > 3, "versions keep increasing after a restore");
    }

    #[test]
    fn refuses_corrupt_input() {
        let mut t = FileTable::new();
        t.write("/x", b"data".to_vec(), 0.0, None).unwrap();
        let snap = t.snapshot();
        for cut in 0..snap.len() {
            assert!(FileTable::from_snapshot(&snap[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = snap.clone();
        extra.push(0);
        assert!(FileTable::from_snapshot(&extra).is_err());
        let mut bad_path = snap.clone();
        bad_path[13] = b'.';
        assert!(FileTable::from_snapshot(&bad_path).is_err());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = FileTable::from_snapshot(&bytes);
        }
    }
}
