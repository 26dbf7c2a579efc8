//! Incremental checkpoints of a [`FileTable`]: the files written since a [`Mark`] as one delta
//! record, and a snapshot merged with the deltas saved after it back into one snapshot.
//!
//! Delta layout (little-endian): `b"ENGD" 1u8 count:u32`, then per file the record of a
//! snapshot (`path_len:u32 path modified_at:f64 version:u64 data_len:u64 data`), in path order.
//! A delta holds written files only: a delete leaves nothing to record, so after one
//! [`FileTable::delta_since`] answers `None` and a full snapshot is saved instead.

use crate::error::{CoreError, CoreResult, ErrorCode};
use crate::snapshot::{write_record, Reader, Record, FORMAT, SNAPSHOT_MAGIC};
use crate::table::FileTable;
use std::collections::BTreeMap;

const DELTA_MAGIC: &[u8; 4] = b"ENGD";

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

/// The records of a snapshot (`magic` = `ENGT`) or a delta (`ENGD`), read by the one record
/// reader ([`Reader`]), in strictly increasing path order (a path at most once).
fn records<'a>(bytes: &'a [u8], magic: &[u8; 4], what: &'static str) -> CoreResult<Vec<Record<'a>>> {
    let (mut r, count) = Reader::open(bytes, magic, what)?;
    let mut out: Vec<Record<'a>> = Vec::with_capacity(count.min(bytes.len() / 28));
    for _ in 0..count {
        let rec = r.record()?;
        if out.last().is_some_and(|last| last.path >= rec.path) {
            return Err(r.corrupt("paths out of order"));
        }
        out.push(rec);
    }
    r.finish()?;
    Ok(out)
}

/// `snapshot` with `deltas` applied in order (a later record of a path replaces an earlier one):
/// the snapshot of the table the last delta was taken from, byte for byte. A damaged snapshot
/// or delta is refused as a whole (`unsupported`, "corrupt …"), as is a result that is not a
/// valid table (a file below another file).
pub fn apply_deltas(snapshot: &[u8], deltas: &[&[u8]]) -> CoreResult<Vec<u8>> {
    let mut merged: BTreeMap<&str, &[u8]> =
        records(snapshot, SNAPSHOT_MAGIC, "snapshot")?.into_iter().map(|r| (r.path, r.raw)).collect();
    for d in deltas {
        for r in records(d, DELTA_MAGIC, "delta")? {
            merged.insert(r.path, r.raw);
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
/// bindings pass them.
pub fn apply_deltas_packed(snapshot: &[u8], deltas: &[u8], lengths: &[u32]) -> CoreResult<Vec<u8>> {
    let mut parts = Vec::with_capacity(lengths.len());
    let mut at = 0usize;
    for &n in lengths {
        let end = at.checked_add(n as usize).filter(|&e| e <= deltas.len());
        let Some(end) = end else {
            return Err(CoreError::new(ErrorCode::Unsupported, "deltas", "lengths exceed the deltas buffer"));
        };
        parts.push(&deltas[at..end]);
        at = end;
    }
    if at != deltas.len() {
        return Err(CoreError::new(ErrorCode::Unsupported, "deltas", "lengths do not cover the deltas buffer"));
    }
    apply_deltas(snapshot, &parts)
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

    /// An error's code, subject and detail.
    type Failure = Option<(ErrorCode, String, String)>;

    /// A buffer of `magic` holding `records` (already encoded) under a declared `count`.
    fn buffer(magic: &[u8; 4], count: u32, records: &[u8]) -> Vec<u8> {
        let mut out = magic.to_vec();
        out.push(FORMAT);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(records);
        out
    }

    /// One record as `write_record` lays it out, fields given raw (so they can be wrong).
    fn raw_record(path_len: u32, path: &[u8], data_len: u64, data: &[u8]) -> Vec<u8> {
        let mut out = path_len.to_le_bytes().to_vec();
        out.extend_from_slice(path);
        out.extend_from_slice(&1.5f64.to_le_bytes());
        out.extend_from_slice(&7u64.to_le_bytes());
        out.extend_from_slice(&data_len.to_le_bytes());
        out.extend_from_slice(data);
        out
    }

    /// The same record bytes read as a snapshot (`from_snapshot`, and as the base of
    /// `apply_deltas`) and as a delta (`apply_deltas` over an empty snapshot): the error of each,
    /// with the buffer's kind written as "delta" so the three compare.
    fn errors_of(count: u32, records: &[u8]) -> [Failure; 3] {
        let snap = buffer(SNAPSHOT_MAGIC, count, records);
        let delta = buffer(DELTA_MAGIC, count, records);
        let empty = FileTable::new().snapshot();
        let as_delta = |e: CoreError| {
            let subject = if e.subject == "snapshot" { "delta".to_string() } else { e.subject };
            (
                e.code,
                subject,
                e.detail.replace("corrupt snapshot", "corrupt delta").replace("table snapshot", "table delta"),
            )
        };
        [
            FileTable::from_snapshot(&snap).err().map(as_delta),
            apply_deltas(&snap, &[]).err().map(as_delta),
            apply_deltas(&empty, &[&delta]).err().map(as_delta),
        ]
    }

    #[test]
    fn snapshots_and_deltas_refuse_damaged_records_alike() {
        let good = raw_record(4, b"/a/b", 3, b"abc");
        let second = raw_record(2, b"/c", 0, b"");
        let two = [good.clone(), second].concat();
        let corrupt = |why: &str| Some((ErrorCode::Unsupported, "delta".to_string(), format!("corrupt delta: {why}")));
        let cases: Vec<(&str, u32, Vec<u8>, Failure)> = vec![
            ("valid", 2, two.clone(), None),
            ("count above the records", 3, two.clone(), corrupt("truncated")),
            ("count below the records", 1, two.clone(), corrupt("trailing bytes")),
            ("path length past the end", 1, raw_record(u32::MAX, b"/a/b", 3, b"abc"), corrupt("truncated")),
            ("data length past the end", 1, raw_record(4, b"/a/b", u64::MAX, b"abc"), corrupt("truncated")),
            ("data length one short", 1, raw_record(4, b"/a/b", 2, b"abc"), corrupt("trailing bytes")),
            ("path not UTF-8", 1, raw_record(4, b"/a\xff", 3, b"abc"), corrupt("path is not UTF-8")),
            ("path not normalised", 1, raw_record(4, b"/a/.", 3, b"abc"), corrupt("path is not normalised")),
            ("relative path", 1, raw_record(3, b"a/b", 3, b"abc"), corrupt("path is not normalised")),
            ("empty path", 1, raw_record(0, b"", 3, b"abc"), corrupt("path is not normalised")),
            ("trailing byte", 2, [two.as_slice(), &[0]].concat(), corrupt("trailing bytes")),
            (
                "a file below a file",
                2,
                [raw_record(2, b"/a", 0, b""), raw_record(4, b"/a/b", 0, b"")].concat(),
                Some((ErrorCode::InvalidPath, "/a/b".to_string(), "'/a' is a file".to_string())),
            ),
        ];
        for (name, count, records, want) in cases {
            let [snapshot, base, delta] = errors_of(count, &records);
            assert_eq!(snapshot, want, "{name}: from_snapshot");
            assert_eq!(base, want, "{name}: a damaged base snapshot");
            assert_eq!(delta, want, "{name}: a damaged delta");
            // Every truncation of the buffer is refused, by both readers alike.
            for cut in 0..records.len() {
                let [s, b, d] = errors_of(count, &records[..cut]);
                // Every cut of a whole buffer is refused.
                assert!(s.is_some() || want.is_some(), "{name}: cut at {cut}");
                assert_eq!((&s, &b), (&d, &d), "{name}: cut at {cut}");
            }
        }
        // Out of order: the merge refuses it in a snapshot or a delta; `from_snapshot` needs no order.
        let swapped = [raw_record(2, b"/c", 0, b""), good].concat();
        let [snapshot, base, delta] = errors_of(2, &swapped);
        assert_eq!(snapshot, None);
        assert_eq!((base.clone(), delta), (corrupt("paths out of order"), corrupt("paths out of order")));
        // Wrong magic or format.
        for bad in [b"ENGX".as_slice(), b"ENGT\x02", b"ENGD\x02"] {
            let mut snap = buffer(SNAPSHOT_MAGIC, 0, &[]);
            snap[..bad.len()].copy_from_slice(bad);
            let err = FileTable::from_snapshot(&snap).unwrap_err();
            assert_eq!(err.detail, "corrupt snapshot: not an Engram file-table snapshot");
            let mut delta = buffer(DELTA_MAGIC, 0, &[]);
            delta[..bad.len()].copy_from_slice(bad);
            let err = apply_deltas(&FileTable::new().snapshot(), &[&delta]).unwrap_err();
            assert_eq!(
                (err.code, err.detail.as_str()),
                (ErrorCode::Unsupported, "corrupt delta: not an Engram file-table delta")
            );
        }
    }

    proptest! {
        #[test]
        fn arbitrary_deltas_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let base = FileTable::new().snapshot();
            let _ = apply_deltas(&base, &[&bytes]);
        }

        /// A real table's records, cut short and one byte altered, read as a snapshot and as a
        /// delta: the same error from both (or none), whatever the damage.
        #[test]
        fn damaged_records_read_alike(
            files in prop::collection::btree_map("/[a-c]{1,2}(/[a-c]{1,2})?", prop::collection::vec(any::<u8>(), 0..6), 1..5),
            cut in any::<prop::sample::Index>(),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut t = FileTable::new();
            for (p, data) in &files {
                let _ = t.write(p, data.clone(), 0.0, None);
            }
            let snap = t.snapshot();
            let count = u32::from_le_bytes(snap[5..9].try_into().unwrap());
            let mut records = snap[9..].to_vec();
            records.truncate(cut.index(records.len() + 1));
            if !records.is_empty() {
                let i = at.index(records.len());
                records[i] = byte;
            }
            let [s, b, d] = errors_of(count, &records);
            let unordered = d.as_ref().is_some_and(|e| e.2 == "corrupt delta: paths out of order");
            if !unordered {
                prop_assert_eq!(&s, &d);
                prop_assert_eq!(&b, &d);
            }
        }
    }
}
