//! The WebAssembly heap: `dlmalloc` — the allocator Rust's `std` uses on wasm32 — with one
//! change, how it asks for memory. `std`'s grows the linear memory by what one request needs
//! (about 64 KiB at a time while a table fills); every `memory.grow` past a few MB makes V8 run a
//! full garbage collection (external memory accounting), so filling a 10k-file table paid a GC
//! per 64 KiB and writes slowed down as the heap grew (measured: 64 KiB steps to 200 MB take
//! ~3 s in Node 20, eighth-of-the-heap steps 2 ms). Here memory grows by at least half its
//! current size: O(log n) grows for an n-byte heap. Half rather than an eighth because each grow
//! still costs a full collection: a table growing from 50 to 160 MB by 2 KB writes paid ten of
//! them (writes 2–4× slower around each, measured), now three. Untouched pages cost address
//! space, not memory. Allocation itself is unchanged.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;
use core::ptr;

#[cfg(target_feature = "atomics")]
compile_error!("the engram-wasm heap is single-threaded: build without the `atomics` target feature");

/// The WebAssembly page size.
const PAGE: usize = 64 * 1024;

/// The system side of `dlmalloc`: linear memory that only grows (never returned).
struct GrowingMemory;

// SAFETY: `alloc` hands out fresh pages from `memory.grow`, which no one else owns; nothing is
// ever unmapped, moved or released (remap/free/free_part refuse).
unsafe impl dlmalloc::Allocator for GrowingMemory {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let needed = size.div_ceil(PAGE);
        let wanted = needed.max(wasm32::memory_size(0) / 2);
        let mut pages = wanted;
        let mut previous = wasm32::memory_grow(0, pages);
        if previous == usize::MAX && wanted > needed {
            // Near the 4 GiB limit (or a host maximum): only what this request needs.
            pages = needed;
            previous = wasm32::memory_grow(0, pages);
        }
        if previous == usize::MAX {
            return (ptr::null_mut(), 0, 0);
        }
        let base = previous * PAGE;
        let len = pages * PAGE;
        // The last page of the 32-bit space: a pointer may not wrap to 0 (as std's dlmalloc does).
        if base.wrapping_add(len) == 0 {
            return (base as *mut u8, len - 16, 0);
        }
        (base as *mut u8, len, 0)
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

struct Heap(UnsafeCell<dlmalloc::Dlmalloc<GrowingMemory>>);

// SAFETY: wasm32-unknown-unknown without the `atomics` feature (checked above) runs one thread,
// and the allocator never re-enters itself.
unsafe impl Sync for Heap {}

#[global_allocator]
static HEAP: Heap = Heap(UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(GrowingMemory)));

// SAFETY: forwards to dlmalloc, which upholds `GlobalAlloc`'s contract for sizes and alignments;
// exclusive access to it comes from the single thread.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        (*self.0.get()).malloc(layout.size(), layout.align())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        (*self.0.get()).calloc(layout.size(), layout.align())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        (*self.0.get()).free(ptr, layout.size(), layout.align())
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        (*self.0.get()).realloc(ptr, layout.size(), layout.align(), new_size)
    }
}
