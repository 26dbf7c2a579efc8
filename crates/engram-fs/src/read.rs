//! Reading files: streamed pagination (bounded memory on huge files) and capped whole reads.

use crate::contain::{sys, Target, READ_FLAGS};
use crate::error::{io_error, is_directory, not_regular};
use crate::meta::version;
use crate::RootedFs;
use engram_core::read::ReadResult;
use engram_core::CoreResult;
use rustix::fs::{openat, Mode, Stat};
use rustix::io::Errno;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

const STREAM_BUFFER: usize = 64 << 10;

/// Reads up to `cap + 1` bytes into `buf` (cleared first); more than `cap` means "too large".
pub(crate) fn read_capped(file: &File, size_hint: u64, cap: u64, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    buf.reserve(usize::try_from(size_hint.min(cap)).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(buf).map(|_| ())
}

impl RootedFs {
    /// Opens a contained regular file by its parent's handle (`O_NOFOLLOW`); the returned
    /// metadata comes from the open descriptor.
    pub(crate) fn open_file(&self, t: &Target) -> CoreResult<(File, Stat)> {
        self.jail.require_file(t)?;
        let fd = openat(t.dir()?, t.name.as_os_str(), READ_FLAGS, Mode::empty()).map_err(|e| match e {
            // The final component became a symlink after the check.
            Errno::LOOP => self.jail.link_error(t),
            e => sys(e, &t.vpath),
        })?;
        let st = rustix::fs::fstat(&fd).map_err(|e| sys(e, &t.vpath))?;
        match crate::contain::kind_of(&st) {
            crate::contain::Kind::File => Ok((File::from(fd), st)),
            crate::contain::Kind::Dir => Err(is_directory(&t.vpath)),
            _ => Err(not_regular(&t.vpath)),
        }
    }

    /// Reads a whole file of at most `max_file_bytes` (`too_large` otherwise).
    pub(crate) fn read_target(&self, t: &Target) -> CoreResult<(Vec<u8>, Stat)> {
        let (file, st) = self.open_file(t)?;
        let size = st.st_size as u64;
        if size > self.max_file_bytes {
            return Err(self.too_large(&t.vpath, size));
        }
        let mut data = Vec::new();
        read_capped(&file, size, self.max_file_bytes, &mut data).map_err(|e| io_error(&e, &t.vpath))?;
        if data.len() as u64 > self.max_file_bytes {
            return Err(self.too_large(&t.vpath, data.len() as u64));
        }
        Ok((data, st))
    }

    /// Lines `offset .. offset + limit` of a file (all remaining lines when `limit` is `None`),
    /// exactly as [`engram_core::read::read_lines`] gives them for the same bytes.
    ///
    /// The file is streamed: memory is bounded by the returned content, which may not exceed
    /// `max_file_bytes` (`too_large`: read fewer lines), however large the file.
    pub fn read(&self, vpath: &str, offset: usize, limit: Option<usize>) -> CoreResult<ReadResult> {
        let t = self.jail.resolve(vpath)?;
        let (file, _) = self.open_file(&t)?;
        let reader = BufReader::with_capacity(STREAM_BUFFER, file);
        match read_lines_streamed(reader, offset, limit, self.max_file_bytes) {
            Ok(r) => Ok(r),
            Err(Stream::Io(e)) => Err(io_error(&e, &t.vpath)),
            Err(Stream::TooLarge(n)) => Err(self.too_large(&t.vpath, n)),
        }
    }

    /// The whole content of a file; `too_large` over `max_file_bytes`.
    pub fn read_bytes(&self, vpath: &str) -> CoreResult<Vec<u8>> {
        self.read_versioned(vpath).map(|(data, _)| data)
    }

    /// The whole content of a file and the version of exactly those bytes (taken from the open
    /// descriptor), for a later compare-and-swap.
    pub fn read_versioned(&self, vpath: &str) -> CoreResult<(Vec<u8>, String)> {
        let t = self.jail.resolve(vpath)?;
        self.read_target(&t).map(|(data, st)| (data, version(&st)))
    }
}

#[derive(Debug)]
pub(crate) enum Stream {
    Io(io::Error),
    /// The requested lines hold more than the cap (bytes collected so far).
    TooLarge(u64),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Counting newlines up to the first requested line.
    Skip,
    /// Copying requested lines.
    Take,
    /// Only counting the remaining lines.
    Count,
}

/// [`engram_core::read::read_lines`] over a stream, holding at most `cap` bytes of content.
pub(crate) fn read_lines_streamed<R: BufRead>(
    mut reader: R,
    offset: usize,
    limit: Option<usize>,
    cap: u64,
) -> Result<ReadResult, Stream> {
    let wanted = limit.unwrap_or(usize::MAX);
    let mut phase = if offset == 0 { Phase::Take } else { Phase::Skip };
    if phase == Phase::Take && wanted == 0 {
        phase = Phase::Count;
    }
    let mut newlines = 0usize;
    let mut taken = 0usize;
    // Whether the first requested line exists (some byte follows the offset-th newline).
    let mut started = false;
    let mut content: Vec<u8> = Vec::new();
    let mut last: Option<u8> = None;
    loop {
        let buf = match reader.fill_buf() {
            Ok([]) => break,
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Stream::Io(e)),
        };
        let mut i = 0;
        while i < buf.len() {
            match phase {
                Phase::Skip => {
                    i = match memchr::memchr_iter(b'\n', &buf[i..]).nth(offset - newlines - 1) {
                        Some(j) => {
                            newlines = offset;
                            phase = if wanted == 0 { Phase::Count } else { Phase::Take };
                            i + j + 1
                        }
                        None => {
                            newlines += memchr::memchr_iter(b'\n', &buf[i..]).count();
                            buf.len()
                        }
                    };
                }
                Phase::Take => {
                    started = true;
                    let rest = &buf[i..];
                    let mut end = rest.len();
                    for j in memchr::memchr_iter(b'\n', rest) {
                        newlines += 1;
                        taken += 1;
                        if taken == wanted {
                            end = j + 1;
                            phase = Phase::Count;
                            break;
                        }
                    }
                    content.extend_from_slice(&rest[..end]);
                    if content.len() as u64 > cap {
                        return Err(Stream::TooLarge(content.len() as u64));
                    }
                    i += end;
                }
                Phase::Count => {
                    newlines += memchr::memchr_iter(b'\n', &buf[i..]).count();
                    i = buf.len();
                }
            }
        }
        last = buf.last().copied().or(last);
        let n = buf.len();
        reader.consume(n);
    }
    let unterminated = last.is_some_and(|b| b != b'\n');
    let lines = match (started, phase) {
        (false, _) => 0,
        // Still taking at the end of the data: the unterminated last line (if any) counts.
        (true, Phase::Take) => taken + usize::from(unterminated),
        (true, _) => taken,
    };
    let mut slice = content.as_slice();
    slice = slice.strip_suffix(b"\n").unwrap_or(slice);
    slice = slice.strip_suffix(b"\r").unwrap_or(slice);
    Ok(ReadResult {
        content: String::from_utf8_lossy(slice).into_owned(),
        total_lines: newlines + usize::from(unterminated),
        offset,
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_core::read::read_lines;
    use proptest::prelude::*;

    fn streamed(data: &[u8], offset: usize, limit: Option<usize>, chunk: usize) -> ReadResult {
        let reader = BufReader::with_capacity(chunk, data);
        read_lines_streamed(reader, offset, limit, u64::MAX).unwrap()
    }

    #[test]
    fn agrees_with_read_lines_on_edge_cases() {
        let cases: &[&[u8]] = &[
            b"",
            b"\n",
            b"\n\n",
            b"a",
            b"a\n",
            b"a\nb",
            b"l0\nl1\r\nl2\nl3",
            b"one\r\ntwo\r\n",
            b"tail\r",
            b"ok\n\xff\xfe\n\xe6\x96",
            b"\n\nx\n",
        ];
        for data in cases {
            for offset in 0..6 {
                for limit in [None, Some(0), Some(1), Some(2), Some(100)] {
                    for chunk in [1, 2, 3, 64] {
                        assert_eq!(
                            streamed(data, offset, limit, chunk),
                            read_lines(data, offset, limit),
                            "data {data:?} offset {offset} limit {limit:?} chunk {chunk}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn content_over_the_cap_is_refused() {
        let data = b"0123456789\nabc\n";
        let r = read_lines_streamed(BufReader::with_capacity(4, &data[..]), 0, Some(1), 5);
        assert!(matches!(r, Err(Stream::TooLarge(_))));
        let ok = read_lines_streamed(BufReader::with_capacity(4, &data[..]), 1, Some(1), 5).unwrap();
        assert_eq!((ok.content.as_str(), ok.total_lines), ("abc", 2));
    }

    proptest! {
        #[test]
        fn agrees_with_read_lines(
            data in prop::collection::vec(prop::sample::select(vec![b'a', b'\n', b'\r', 0xff, 0xe6, 0x96, b' ']), 0..200),
            offset in 0usize..40,
            limit in prop::option::of(0usize..40),
            chunk in 1usize..17,
        ) {
            prop_assert_eq!(streamed(&data, offset, limit, chunk), read_lines(&data, offset, limit));
        }
    }
}
