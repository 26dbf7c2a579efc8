//! Large buffers, reused.
//!
//! A batch of files (`writeMany`) or a restored snapshot fills tens of megabytes at once. Fresh
//! memory costs a page fault and a zeroed page per 4 KiB, which on a 10,000-file load took
//! longer than converting the text. So the large buffers of files that are gone are kept, up
//! to [`KEPT`] bytes in all, and the next batch fills one of those instead. A kept buffer's
//! pages are handed to the kernel to take back lazily (`MADV_FREE`): under memory pressure it
//! reclaims them, otherwise they are reused without a fault.
//!
//! (2 MiB pages were tried first: one load took 12 ms at best but 45 ms at the median, as
//! each fresh huge page waited for the kernel to compact and zero it.)

use engram_core::{api, Bytes};
use std::sync::Mutex;

/// The most bytes of buffers kept for reuse.
const KEPT: usize = 64 << 20;
/// The smallest buffer worth keeping (a batch's buffers are at least this large).
pub const LARGE: usize = 1 << 20;

/// The buffers kept, and their capacity in all.
static POOL: Mutex<(Vec<Vec<u8>>, usize)> = Mutex::new((Vec::new(), 0));

/// An empty buffer with room for at least `capacity` bytes: the smallest kept one that has it
/// with no more spare room than a batch may keep (`api::room_kept`: a small restore must not
/// hold on to a large batch's buffer), else a new one; `None` when memory cannot give it.
pub fn take(capacity: usize) -> Option<Vec<u8>> {
    if capacity >= LARGE {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let (kept, held) = &mut *pool;
        let best = (0..kept.len())
            .filter(|&i| api::room_kept(kept[i].capacity(), capacity))
            .min_by_key(|&i| kept[i].capacity());
        if let Some(i) = best {
            let buffer = kept.swap_remove(i);
            *held -= buffer.capacity();
            return Some(buffer);
        }
    }
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(capacity).ok()?;
    Some(buffer)
}

/// `buffer` as bytes that files share; once the last of them is gone, the buffer goes back to
/// the kept ones (when it is large and there is room).
pub fn share(buffer: Vec<u8>) -> Bytes {
    Bytes::from_owner(Returned(buffer))
}

/// A copy of `bytes` to share, in a kept buffer where one fits.
pub fn shared_copy(bytes: &[u8]) -> Bytes {
    let mut buffer = take(bytes.len()).unwrap_or_default();
    buffer.extend_from_slice(bytes);
    share(buffer)
}

/// A buffer that returns to the kept ones when dropped.
struct Returned(Vec<u8>);

impl AsRef<[u8]> for Returned {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        let capacity = self.0.capacity();
        if capacity < LARGE {
            return;
        }
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let (kept, held) = &mut *pool;
        if *held + capacity > KEPT {
            return;
        }
        let mut buffer = std::mem::take(&mut self.0);
        buffer.clear();
        lazily_free(&mut buffer);
        *held += capacity;
        kept.push(buffer);
    }
}

/// Lets the kernel take back the whole pages of an empty buffer's room whenever it needs
/// them (their contents are then zero; until then, reusing them faults nothing).
#[cfg(target_os = "linux")]
fn lazily_free(buffer: &mut Vec<u8>) {
    const PAGE: usize = 4096;
    let start = buffer.as_mut_ptr() as usize;
    let (from, to) = ((start + PAGE - 1) & !(PAGE - 1), (start + buffer.capacity()) & !(PAGE - 1));
    if from < to {
        // SAFETY: advice on whole pages inside this buffer's own allocation, none of it in use
        // (its length is 0): whatever they hold after is never read before being written.
        let _ = unsafe { rustix::mm::madvise(from as *mut _, to - from, rustix::mm::Advice::LinuxFree) };
    }
}

#[cfg(not(target_os = "linux"))]
fn lazily_free(_: &mut Vec<u8>) {}
