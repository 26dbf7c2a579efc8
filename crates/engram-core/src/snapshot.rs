//! A compact binary snapshot of a [`FileTable`] for thread checkpoints: one buffer, no per-file
//! JSON, bytes stored as they are.
//!
//! Layout (little-endian): `b"ENGT" 1u8 count:u32` then per file
//! `path_len:u32 path modified_at:f64 version:u64 data_len:u64 data`.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::path;
use crate::table::{FileEntry, FileTable};
use bytes::Bytes;

/// The first bytes of a snapshot buffer (a delta starts `ENGD`, see `delta.rs`).
pub(crate) const SNAPSHOT_MAGIC: &[u8; 4] = b"ENGT";
/// The layout version of snapshots and deltas.
pub(crate) const FORMAT: u8 = 1;

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
        out.extend_from_slice(SNAPSHOT_MAGIC);
        out.push(FORMAT);
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        for (p, f) in self.iter() {
            write_record(&mut out, p, f);
        }
        out
    }

    /// Rebuilds a table; a truncated or altered snapshot is refused as a whole. The bytes are
    /// copied once, and the files keep slices of that copy (see [`FileEntry::data`]).
    pub fn from_snapshot(bytes: &[u8]) -> CoreResult<FileTable> {
        Self::from_snapshot_bytes(Bytes::copy_from_slice(bytes))
    }

    /// [`Self::from_snapshot`] of a buffer the table may keep: the files point into it.
    pub fn from_snapshot_bytes(shared: Bytes) -> CoreResult<FileTable> {
        let (mut r, count) = Reader::open(&shared, SNAPSHOT_MAGIC, "snapshot")?;
        let mut table = FileTable::new();
        for _ in 0..count {
            let rec = r.record()?;
            let entry =
                FileEntry { data: shared.slice_ref(rec.data), modified_at: rec.modified_at, version: rec.version };
            table.restore(rec.path.to_string(), entry)?;
        }
        r.finish()?;
        Ok(table)
    }
}

/// One file's record as read back by [`Reader::record`].
pub(crate) struct Record<'a> {
    /// A normalised virtual path (checked).
    pub path: &'a str,
    pub modified_at: f64,
    pub version: u64,
    pub data: &'a [u8],
    /// The whole record as encoded, from its path length to its last data byte (deltas merge
    /// records without decoding them again).
    pub raw: &'a [u8],
}

/// The one reader of the record layout [`write_record`] writes, for snapshots and deltas: the
/// header (`magic`, [`FORMAT`], record count), then one record per call, then [`Reader::finish`].
/// Every length is checked against the buffer; a damaged buffer gives `unsupported` with the
/// subject `what` ("snapshot" or "delta") and the detail "corrupt {what}: {why}".
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// Checks the header; answers the reader and the record count the header declares.
    pub(crate) fn open(bytes: &'a [u8], magic: &[u8; 4], what: &'static str) -> CoreResult<(Self, usize)> {
        let mut r = Reader { bytes, at: 0, what };
        if r.take(4)? != magic || r.take(1)?[0] != FORMAT {
            return Err(r.corrupt(&format!("not an Engram file-table {what}")));
        }
        let count = r.u32()? as usize;
        Ok((r, count))
    }

    /// The next record: its path is UTF-8 and normalised, its data within the buffer.
    pub(crate) fn record(&mut self) -> CoreResult<Record<'a>> {
        let from = self.at;
        let len = self.u32()? as usize;
        let p = std::str::from_utf8(self.take(len)?).map_err(|_| self.corrupt("path is not UTF-8"))?;
        if path::normalize(p).ok().as_deref() != Some(p) {
            return Err(self.corrupt("path is not normalised"));
        }
        let modified_at = f64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default());
        let version = self.u64()?;
        let data_len = usize::try_from(self.u64()?).map_err(|_| self.corrupt("file too large"))?;
        let data = self.take(data_len)?;
        Ok(Record { path: p, modified_at, version, data, raw: &self.bytes[from..self.at] })
    }

    /// Refuses bytes after the last record.
    pub(crate) fn finish(&self) -> CoreResult<()> {
        if self.at != self.bytes.len() {
            return Err(self.corrupt("trailing bytes"));
        }
        Ok(())
    }

    /// The error for a damaged buffer, `why` saying what is wrong.
    pub(crate) fn corrupt(&self, why: &str) -> CoreError {
        let what = self.what;
        CoreError::new(ErrorCode::Unsupported, what, format_args!("corrupt {what}: {why}"))
    }

    fn take(&mut self, n: usize) -> CoreResult<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| self.corrupt("truncated"))?;
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
        assert_eq!(back.get("/a/b.txt").unwrap().data, &b"again"[..]);
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
