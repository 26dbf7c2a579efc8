//! A 100 MB file is paginated by streaming: reads at a high offset return the right lines, and
//! the process's peak memory stays far below the file size. (Its own test binary, so no other
//! test inflates the peak.)

mod common;

use common::Sandbox;
use engram_core::ErrorCode;
use std::io::Write;

const LINE: usize = 64;
const LINES_PER_BLOCK: usize = (1 << 20) / LINE;
const BLOCKS: usize = 100;
const MARKER_BLOCK: usize = 73;

/// Peak resident set size of this process so far, in KiB (Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn hundred_megabyte_file_is_paginated_in_bounded_memory() {
    let s = Sandbox::new();
    let mut block = Vec::with_capacity(1 << 20);
    for i in 0..LINES_PER_BLOCK {
        let line = format!("{i:06} {}", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU");
        block.extend_from_slice(&line.as_bytes()[..LINE - 1]);
        block.push(b'\n');
    }
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(s.host("big.log")).unwrap());
        for b in 0..BLOCKS {
            if b == MARKER_BLOCK {
                f.write_all(b"MARKER line\r\n").unwrap();
            }
            f.write_all(&block).unwrap();
        }
        f.write_all(b"the end").unwrap();
    }
    let total = BLOCKS * LINES_PER_BLOCK + 2;
    let before = peak_rss_kib();
    let started = std::time::Instant::now();

    let tail = s.fs.read("/big.log", total - 2, Some(10)).unwrap();
    assert_eq!(tail.total_lines, total);
    assert_eq!(tail.lines, 2);
    assert!(tail.content.starts_with(&format!("{:06} ", LINES_PER_BLOCK - 1)));
    assert!(tail.content.ends_with("\nthe end"));

    let marker = s.fs.read("/big.log", MARKER_BLOCK * LINES_PER_BLOCK, Some(2)).unwrap();
    assert_eq!(marker.lines, 2);
    assert!(marker.content.starts_with("MARKER line\r\n000000 abc"), "{}", &marker.content[..30]);

    let past_end = s.fs.read("/big.log", total + 5, Some(3)).unwrap();
    assert_eq!((past_end.content.as_str(), past_end.lines, past_end.total_lines), ("", 0, total));

    // Whole-file operations are refused rather than loading 100 MB.
    assert_eq!(s.fs.read("/big.log", 0, None).unwrap_err().code, ErrorCode::TooLarge);
    assert_eq!(s.fs.read_bytes("/big.log").unwrap_err().code, ErrorCode::TooLarge);

    let elapsed = started.elapsed();
    if let (Some(before), Some(after)) = (before, peak_rss_kib()) {
        let grown_mib = after.saturating_sub(before) / 1024;
        eprintln!("peak RSS grew by {grown_mib} MiB over four streamed reads ({elapsed:?})");
        assert!(grown_mib < 32, "peak RSS grew by {grown_mib} MiB reading a 100 MB file");
    }
}
