//! Seeding many files in one call, as JavaScript hands them over: the paths joined by NUL (a
//! byte no valid path contains) and the contents back to back, or staged in the module's
//! memory first (WASM). Errors name the JavaScript call, `writeMany`.

use bytes::Bytes;
use engram_core::{CoreError, CoreResult, ErrorCode, FileTable};

/// The subject of a batch's own errors (a path's are about the path).
const CALL: &str = "writeMany";

/// When the files of a batch were last modified: all at one time, or each at its own (in the
/// batch's order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Modified<'a> {
    All(f64),
    Each(&'a [f64]),
}

impl<'a> Modified<'a> {
    /// Each file's time, for `count` files; a list of another length is `unsupported`.
    fn times(self, count: usize) -> CoreResult<impl Iterator<Item = f64> + 'a> {
        let (all, each) = match self {
            Modified::All(at) => (Some(at), &[][..]),
            Modified::Each(each) if each.len() == count => (None, each),
            Modified::Each(each) => {
                return Err(CoreError::new(
                    ErrorCode::Unsupported,
                    CALL,
                    format_args!("{} modification times for {count} files", each.len()),
                ))
            }
        };
        Ok((0..count).map(move |i| all.unwrap_or_else(|| each[i])))
    }
}

/// Seeds many files in one call: `paths` joined by NUL, `data` every content back to back,
/// `lengths[i]` the byte length of file `i`. The files keep slices of `data` (one buffer for the
/// batch, no copy per file). Returns how many files were written. All or nothing (see
/// [`FileTable::write_all`]): at the first invalid path or write error (its message names the
/// path) no file is written. Mismatched counts are `unsupported`.
pub fn write_many(
    t: &mut FileTable,
    paths: &str,
    data: Bytes,
    lengths: &[u32],
    modified: Modified,
) -> CoreResult<usize> {
    let names = split_paths(paths, lengths.len())?;
    let times = modified.times(lengths.len())?;
    let total: u64 = lengths.iter().map(|&n| u64::from(n)).sum();
    if total != data.len() as u64 {
        return Err(CoreError::new(
            ErrorCode::Unsupported,
            CALL,
            format_args!("lengths add up to {total} of {} bytes", data.len()),
        ));
    }
    let mut at = 0usize;
    let files = lengths.iter().map(|&len| {
        let start = at;
        at += len as usize;
        data.slice(start..at)
    });
    t.write_all(names.into_iter().zip(files).zip(times).map(|((p, d), m)| (p, d, m)))
}

/// [`write_many`] with each file's content given on its own (slices of a few shared buffers,
/// as a binding that converts the contents itself makes them).
pub fn write_many_files(t: &mut FileTable, paths: &str, files: Vec<Bytes>, modified: Modified) -> CoreResult<usize> {
    let names = split_paths(paths, files.len())?;
    let times = modified.times(files.len())?;
    t.write_all(names.into_iter().zip(files).zip(times).map(|((p, d), m)| (p, d, m)))
}

/// Room for exactly `bytes` bytes of a batch's contents in `staged` (zero-filled; what it
/// held is kept up to that length), for a binding whose caller encodes the contents straight
/// into its memory before [`write_many`]. A room that cannot be had (over the address space,
/// or the memory cannot grow that far) is `too_large`, and `staged` is released: the batch is
/// refused whole rather than aborting the process (WebAssembly's 32-bit memory meets this
/// first).
pub fn stage_room(staged: &mut Vec<u8>, bytes: f64) -> CoreResult<()> {
    let refused = |staged: &mut Vec<u8>| {
        *staged = Vec::new();
        Err(CoreError::new(
            ErrorCode::TooLarge,
            CALL,
            format_args!("{bytes} bytes of contents do not fit in this core's memory"),
        ))
    };
    // Negative or NaN is no size; past `isize::MAX` no buffer can be that large.
    if bytes.is_nan() || bytes < 0.0 || bytes > isize::MAX as f64 {
        return refused(staged);
    }
    let want = bytes as usize;
    if want > staged.len() && staged.try_reserve_exact(want - staged.len()).is_err() {
        return refused(staged);
    }
    staged.resize(want, 0);
    Ok(())
}

/// The NUL-joined paths of a batch of `count` files; another count is `unsupported`.
fn split_paths(paths: &str, count: usize) -> CoreResult<Vec<&str>> {
    let names: Vec<&str> = if paths.is_empty() && count == 0 { Vec::new() } else { paths.split('\0').collect() };
    if names.len() != count {
        return Err(CoreError::new(
            ErrorCode::Unsupported,
            CALL,
            format_args!("{} paths for {count} files", names.len()),
        ));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_core::api::{batch_bytes, edit};
    use engram_core::ops::EditOptions;

    #[test]
    fn stage_room_grows_keeps_and_refuses_what_cannot_fit() {
        let mut staged = Vec::new();
        assert_eq!(stage_room(&mut staged, 4.0), Ok(()));
        staged.copy_from_slice(b"abcd");
        assert_eq!(stage_room(&mut staged, 6.0), Ok(()));
        assert_eq!(staged, b"abcd\0\0", "grown, what it held kept");
        for bytes in [-1.0, f64::NAN, f64::INFINITY, 2f64.powi(70), isize::MAX as f64 * 2.0] {
            let e = stage_room(&mut staged, bytes).unwrap_err();
            assert_eq!((e.code, e.subject.as_str()), (ErrorCode::TooLarge, "writeMany"), "{bytes}");
            assert_eq!(staged.capacity(), 0, "released");
        }
        // Within the address space but more than an allocator can give.
        assert_eq!(stage_room(&mut staged, 2f64.powi(52)).unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(stage_room(&mut staged, 0.0), Ok(()));
    }

    #[test]
    fn a_batch_is_one_buffer_its_files_share() {
        let mut t = FileTable::new();
        let data = batch_bytes(b"onetwothree".to_vec(), 11);
        let start = data.as_ptr() as usize;
        assert_eq!(write_many(&mut t, "/a\0/b\0/c", data, &[3, 3, 5], Modified::All(1.0)), Ok(3));
        let at = |p: &str| t.get(p).unwrap().data.as_ptr() as usize - start;
        assert_eq!((at("/a"), at("/b"), at("/c")), (0, 3, 6), "slices of the batch, not copies");
        // Changing one file leaves its neighbours' bytes as they were.
        t.append("/a", b"!", 2.0).unwrap();
        let two = EditOptions {
            path: "/b".into(),
            old_string: "two".into(),
            new_string: "2".into(),
            replace_all: false,
            modified_at: 3.0,
            if_version: None,
        };
        edit(&mut t, &two).unwrap();
        assert_eq!(t.read_bytes("/a").unwrap(), b"one!");
        assert_eq!(t.read_bytes("/b").unwrap(), b"2");
        assert_eq!(t.read_bytes("/c").unwrap(), b"three");
        assert_eq!(t.content_bytes(), 4 + 1 + 5);
        let back = FileTable::from_snapshot(&t.snapshot()).unwrap();
        assert_eq!(back.read_bytes("/c").unwrap(), b"three");
        assert_eq!(back.content_bytes(), t.content_bytes());
        t.delete("/c").unwrap();
        assert_eq!(t.content_bytes(), 5);
    }

    #[test]
    fn batches_are_all_or_nothing_and_counted() {
        let mut t = FileTable::new();
        assert_eq!(
            write_many(&mut t, "/c.txt\0/d/e.txt", Bytes::from_static(b"onetwo"), &[3, 3], Modified::All(3.0)),
            Ok(2)
        );
        assert_eq!(t.read_bytes("/d/e.txt").unwrap(), b"two");
        assert_eq!(write_many(&mut t, "", Bytes::from_static(b""), &[], Modified::All(3.0)), Ok(0));
        let e = write_many(&mut t, "/x", Bytes::from_static(b"ab"), &[1], Modified::All(3.0)).unwrap_err();
        assert_eq!((e.code, e.subject.as_str()), (ErrorCode::Unsupported, "writeMany"));
        let (size, changes) = (t.len(), t.changes());
        assert_eq!(
            write_many(&mut t, "/y\0/../z", Bytes::from_static(b"ab"), &[1, 1], Modified::All(3.0)).unwrap_err().code,
            ErrorCode::PathEscape
        );
        assert!(t.get("/y").is_none(), "all or nothing");
        assert_eq!((t.len(), t.changes()), (size, changes));
        assert_eq!(
            write_many(&mut t, "", Bytes::from_static(b""), &[0], Modified::All(3.0)).unwrap_err().code,
            ErrorCode::InvalidPath
        );
        let e = write_many(&mut t, "/p\0/q", Bytes::from_static(b"ab"), &[2], Modified::All(3.0)).unwrap_err();
        assert_eq!((e.code, e.message.contains("2 paths for 1 files")), (ErrorCode::Unsupported, true), "{e:?}");
        assert_eq!(write_many(&mut t, "/y\0/y", Bytes::from_static(b"ab"), &[1, 1], Modified::All(3.0)), Ok(2));
        assert_eq!(t.read_bytes("/y").unwrap(), b"b", "a path given twice keeps its last content");
        let each = Modified::Each(&[5.0, 6.5]);
        assert_eq!(
            write_many_files(&mut t, "/m1\0/m2", vec![Bytes::from_static(b"1"), Bytes::from_static(b"2")], each),
            Ok(2)
        );
        assert_eq!((t.get("/m1").unwrap().modified_at, t.get("/m2").unwrap().modified_at), (5.0, 6.5));
        let short = Modified::Each(&[5.0]);
        let e = write_many(&mut t, "/m3\0/m4", Bytes::from_static(b"34"), &[1, 1], short).unwrap_err();
        assert_eq!((e.code, t.get("/m3").is_none()), (ErrorCode::Unsupported, true));
    }
}
