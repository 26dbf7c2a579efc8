//! Incremental checkpoints of a [`FileTable`]: the files written since a [`Mark`] as one delta
//! record, and a snapshot merged with the deltas saved after it back into one snapshot.
//!
//! Delta layout (little-endian): `b"ENGD" 1u8 count:u32`, then per file the record of a
//! snapshot (`path_len:u32 path modified_at:f64 version:u64 data_len:u64 data`), in path order.
//! A delta holds written files only: a delete leaves nothing to record, so after one
//! [`FileTable::delta_since`] answers `None` and a full snapshot is saved instead.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::path;
use crate::snapshot::write_record;
use crate::table::FileTable;
use std::collections::BTreeMap;

const DELTA_MAGIC: &[u8; 4] = b"ENGD";
const SNAPSHOT_MAGIC: &[u8; 4] = b"ENGT";
const FORMAT: u8 = 1;

/// Where a table stood when it was checkpointed: its version counter and change counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub last_version: u64,
    pub changes: u64,
}

impl FileTable {
    /// The table's counters now, to take a delta against later.
    pub fn mark(&self) -> Mark {
        Mark { last_version: self.last_version(), changes: self.changes() }
    }

    /// The files written since `mark`, as a delta record (no files when nothing changed), or
    /// `None` when writes alone cannot describe the change: a file was deleted since (every
    /// change but a delete consumes a version), or the counters went back (another table).
    pub fn delta_since(&self, mark: Mark) -> Option<Vec<u8>> {
        let now = self.mark();
        let writes = now.last_version.checked_sub(mark.last_version)?;
        if now.changes.checked_sub(mark.changes)? != writes {
            return None;
        }
        let mut out = Vec::new();
        out.extend_from_slice(DELTA_MAGIC);
        out.push(FORMAT);
        out.extend_from_slice(&0u32.to_le_bytes());
        if writes == 0 {
            return Some(out);
        }
        let mut count = 0u32;
        for (p, f) in self.iter().filter(|(_, f)| f.version > mark.last_version) {
            count += 1;
            write_record(&mut out, p, f);
        }
        out[5..9].copy_from_slice(&count.to_le_bytes());
        Some(out)
    }
}

/// One file record inside a snapshot or delta buffer.
struct Record<'a> {
    path: &'a str,
    bytes: &'a [u8],
}

/// The records of a snapshot (`magic` = `ENGT`) or a delta (`ENGD`), checked for shape.
fn records<'a>(bytes: &'a [u8], magic: &[u8; 4], what: &str) -> CoreResult<Vec<Record<'a>>> {
    let bad = |why: &str| CoreError::new(ErrorCode::Unsupported, what, format_args!("corrupt {what}: {why}"));
    let mut at = 0usize;
    let mut take = |n: usize| -> CoreResult<(usize, &'a [u8])> {
        let start = at;
        let end = at.checked_add(n).filter(|&e| e <= bytes.len()).ok_or_else(|| bad("truncated"))?;
        at = end;
        Ok((start, &bytes[start..end]))
    };
    if take(4)?.1 != magic || take(1)?.1[0] != FORMAT {
        return Err(bad(&format!("not an Engram file-table {what}")));
    }
    let count = u32::from_le_bytes(take(4)?.1.try_into().unwrap_or_default()) as usize;
    let mut out: Vec<Record<'a>> = Vec::with_capacity(count.min(bytes.len() / 28));
    for _ in 0..count {
        let (from, len) = take(4)?;
        let len = u32::from_le_bytes(len.try_into().unwrap_or_default()) as usize;
        let p = std::str::from_utf8(take(len)?.1).map_err(|_| bad("path is not UTF-8"))?;
        if path::normalize(p).ok().as_deref() != Some(p) {
            return Err(bad("path is not normalised"));
        }
        take(16)?;
        let data_len = u64::from_le_bytes(take(8)?.1.try_into().unwrap_or_default());
        let data_len = usize::try_from(data_len).map_err(|_| bad("file too large"))?;
        let (data_at, _) = take(data_len)?;
        if out.last().is_some_and(|r| r.path >= p) {
            return Err(bad("paths out of order"));
        }
        out.push(Record { path: p, bytes: &bytes[from..data_at + data_len] });
    }
    let (end, _) = take(0)?;
    if end != bytes.len() {
        return Err(bad("trailing bytes"));
    }
    Ok(out)
}

/// `snapshot` with `deltas` applied in order (a later record of a path replaces an earlier one):
/// the snapshot of the table the last delta was taken from, byte for byte. A damaged snapshot
/// or delta is refused as a whole (`unsupported`, "corrupt …"), as is a result that is not a
/// valid table (a file below another file).
pub fn apply_deltas(snapshot: &[u8], deltas: &[&[u8]]) -> CoreResult<Vec<u8>> {
    let mut merged: BTreeMap<&str, &[u8]> =
        records(snapshot, SNAPSHOT_MAGIC, "snapshot")?.into_iter().map(|r| (r.path, r.bytes)).collect();
    for d in deltas {
        for r in records(d, DELTA_MAGIC, "delta")? {
            merged.insert(r.path, r.bytes);
        }
    }
    let size: usize = merged.values().map(|b| b.len()).sum();
    let mut out = Vec::with_capacity(9 + size);
    out.extend_from_slice(SNAPSHOT_MAGIC);
    out.push(FORMAT);
    out.extend_from_slice(&(merged.len() as u32).to_le_bytes());
    for b in merged.values() {
        out.extend_from_slice(b);
    }
    // The one home of table validity (no file below a file, no duplicate): the snapshot reader.
    FileTable::from_snapshot(&out)?;
    Ok(out)
}

/// [`apply_deltas`] with the deltas concatenated in one buffer (`lengths` = their sizes), as the
/// bindings pass them; errors as `{ "error": … }` JSON text.
pub fn apply_deltas_packed(snapshot: &[u8], deltas: &[u8], lengths: &[u32]) -> Result<Vec<u8>, String> {
    let mut parts = Vec::with_capacity(lengths.len());
    let mut at = 0usize;
    for &n in lengths {
        let end = at.checked_add(n as usize).filter(|&e| e <= deltas.len());
        let Some(end) = end else {
            return Err(crate::api::error_json(&CoreError::new(
                ErrorCode::Unsupported,
                "deltas",
                "lengths exceed the deltas buffer",
            )));
        };
        parts.push(&deltas[at..end]);
        at = end;
    }
    if at != deltas.len() {
        return Err(crate::api::error_json(&CoreError::new(
            ErrorCode::Unsupported,
            "deltas",
            "lengths do not cover the deltas buffer",
        )));
    }
    apply_deltas(snapshot, &parts).map_err(|e| crate::api::error_json(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table() -> FileTable {
        let mut t = FileTable::new();
        for i in 0..50 {
            t.write(&format!("/d{}/f{i}.txt", i % 5), format!("file {i}").into_bytes(), i as f64, None).unwrap();
        }
        t
    }

    #[test]
    fn a_chain_of_deltas_restores_the_table_byte_for_byte() {
        let mut t = table();
        let base = t.snapshot();
        let mut deltas = Vec::new();
        let mut mark = t.mark();
        for round in 0..4 {
            t.write(&format!("/d1/f{round}.txt"), vec![round as u8; 10], 100.0, None).unwrap();
            t.write(&format!("/new/{round}"), vec![], 101.0, None).unwrap();
            t.append("/d2/f2.txt", b"+", 102.0).unwrap();
            deltas.push(t.delta_since(mark).unwrap());
            mark = t.mark();
        }
        let parts: Vec<&[u8]> = deltas.iter().map(Vec::as_slice).collect();
        assert_eq!(apply_deltas(&base, &parts).unwrap(), t.snapshot());
    }

    #[test]
    fn a_delta_holds_only_the_written_files() {
        let mut t = table();
        let mark = t.mark();
        assert_eq!(t.delta_since(mark).unwrap().len(), 9, "nothing changed: an empty delta");
        t.write("/d3/f3.txt", b"edited".to_vec(), 5.0, None).unwrap();
        let d = t.delta_since(mark).unwrap();
        assert_eq!(d.len(), 9 + 4 + "/d3/f3.txt".len() + 24 + 6);
        assert_eq!(&d[5..9], &1u32.to_le_bytes());
    }

    #[test]
    fn a_delete_or_another_table_needs_a_full_snapshot() {
        let mut t = table();
        let mark = t.mark();
        t.delete("/d0/f0.txt").unwrap();
        t.write("/d0/f0.txt", b"back".to_vec(), 0.0, None).unwrap();
        assert!(t.delta_since(mark).is_none());
        let fresh = FileTable::from_snapshot(&t.snapshot()).unwrap();
        assert!(fresh.delta_since(t.mark()).is_none(), "counters went back");
    }

    #[test]
    fn refuses_damaged_input_whole() {
        let mut t = table();
        let base = t.snapshot();
        let mark = t.mark();
        t.write("/d4/f4.txt", b"x".to_vec(), 0.0, None).unwrap();
        let d = t.delta_since(mark).unwrap();
        for cut in 0..d.len() {
            assert!(apply_deltas(&base, &[&d[..cut]]).is_err(), "cut at {cut}");
        }
        assert!(apply_deltas(&base[..base.len() - 1], &[&d]).is_err());
        assert!(apply_deltas(&d, &[&d]).is_err(), "a delta is not a snapshot");
        assert!(apply_deltas(&base, &[&base]).is_err(), "a snapshot is not a delta");
        // A file below a file is not a table.
        let mut other = FileTable::new();
        let m = other.mark();
        other.write("/d4/f4.txt/below", b"y".to_vec(), 0.0, None).unwrap();
        let below = other.delta_since(m).unwrap();
        assert!(apply_deltas(&base, &[&below]).is_err());
        assert!(apply_deltas_packed(&base, &d, &[d.len() as u32 + 1]).is_err());
        assert_eq!(apply_deltas_packed(&base, &d, &[d.len() as u32]).unwrap(), t.snapshot());
    }

    proptest! {
        #[test]
        fn arbitrary_deltas_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let base = FileTable::new().snapshot();
            let _ = apply_deltas(&base, &[&bytes]);
        }
    }
}
