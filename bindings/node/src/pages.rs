//! Large buffers of fresh memory.

/// Asks Linux to back a large buffer's untouched room with 2 MiB pages: filling fresh memory
/// otherwise faults once per 4 KiB page (a best effort: nothing changes where it is refused).
#[cfg(target_os = "linux")]
pub fn huge_pages(buffer: &mut Vec<u8>) {
    const HUGE: usize = 2 << 20;
    if buffer.capacity() < HUGE {
        return;
    }
    let start = buffer.as_mut_ptr() as usize;
    let end = start + buffer.capacity();
    let (from, to) = ((start + HUGE - 1) & !(HUGE - 1), end & !(HUGE - 1));
    if from < to {
        // SAFETY: advice on whole pages inside this buffer's own allocation, none of it in use.
        let _ = unsafe { rustix::mm::madvise(from as *mut _, to - from, rustix::mm::Advice::LinuxHugepage) };
    }
}

#[cfg(not(target_os = "linux"))]
pub fn huge_pages(_: &mut Vec<u8>) {}

/// A copy of `bytes` in a buffer of exactly their size, on 2 MiB pages where Linux grants them
/// (a snapshot restored into a table is tens of megabytes that are all written at once).
pub fn fresh_copy(bytes: &[u8]) -> Vec<u8> {
    let mut buffer = Vec::with_capacity(bytes.len());
    huge_pages(&mut buffer);
    buffer.extend_from_slice(bytes);
    buffer
}
