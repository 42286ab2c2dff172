//! ucpd's global allocator: mimalloc, called the way its C API is fastest.
//!
//! The `mimalloc` crate's `GlobalAlloc` passes every request to `mi_malloc_aligned` (and
//! `mi_realloc_aligned`, `mi_zalloc_aligned`), with Rust's alignment. mimalloc 3 serves an
//! aligned request from its fast path only when the size class's page has a free block that
//! happens to be aligned; otherwise (a page used up, or a request over 1 KiB whose size class
//! is not a power of two) it takes the generic aligned path, which over-allocates by the
//! alignment and can land the block in a larger size class. Almost every Rust allocation asks
//! for an alignment that plain `mi_malloc` already guarantees: its blocks are aligned to 16
//! bytes (`MI_MAX_ALIGN_SIZE`) from the first block of a page, and every size class above 16
//! is a multiple of 16 (those up to 16 of 8). So such requests go to `mi_malloc`,
//! `mi_zalloc` and `mi_realloc`, the way the standard library's `System` allocator sends its
//! own to `malloc`; the rest keep the aligned calls. Freeing is `mi_free` for both.
//! (BENCHMARKS.md, "The allocator's plain path".)

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as ffi;

/// The largest alignment every mimalloc block of at least that size has: `MI_MAX_ALIGN_SIZE`.
const PLAIN_ALIGN: usize = 16;

/// mimalloc as a global allocator (`#[global_allocator] static A: Mimalloc = Mimalloc;`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mimalloc;

/// Whether a block of `size` bytes from the plain calls is aligned to `align`: the alignment is
/// one mimalloc guarantees, and `size` a multiple of it (so its size class is too, and every
/// block of the page starts on it).
#[inline]
fn plain(size: usize, align: usize) -> bool {
    align <= PLAIN_ALIGN && size >= align && size.is_multiple_of(align)
}

#[allow(unsafe_code)]
// SAFETY (for each method): the pointers passed back to mimalloc were allocated by this
// allocator (the `GlobalAlloc` contract), and a block comes from a plain call only when
// `plain` says mimalloc aligns it as the layout asks; any other layout takes the aligned call.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(layout.size(), layout.align()) {
                ffi::mi_malloc(layout.size()).cast()
            } else {
                ffi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(layout.size(), layout.align()) {
                ffi::mi_zalloc(layout.size()).cast()
            } else {
                ffi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: see the impl; `mi_free` frees blocks of either kind of call.
        unsafe { ffi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl. A block from an aligned call may move to a plain one when the
        // new size is plain: `mi_realloc` accepts any block mimalloc made, and the new block
        // is aligned as the layout asks.
        unsafe {
            if plain(new_size, layout.align()) {
                ffi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                ffi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_layouts_take_the_plain_calls() {
        assert!(plain(8, 8));
        assert!(plain(24, 8));
        assert!(plain(48, 16));
        assert!(plain(5_000, 8));
        assert!(plain(3, 1));
        assert!(!plain(24, 16), "a 24-byte class need not be 16-aligned");
        assert!(!plain(4, 8), "smaller than its alignment");
        assert!(!plain(64, 32));
        assert!(!plain(4_096, 4_096));
        assert!(!plain(0, 1), "zero bytes take the aligned call");
    }

    /// Every alignment and a spread of sizes, through each call, as the allocator serves them:
    /// each block aligned as asked, writable to its end, its contents kept by a realloc either
    /// way (shrinking and growing, across the plain and aligned calls).
    #[test]
    #[allow(unsafe_code)]
    fn blocks_are_aligned_and_hold_their_contents() {
        let allocator = Mimalloc;
        let sizes = [1, 7, 8, 15, 16, 17, 24, 40, 48, 100, 1_000, 1_024, 1_100, 5_000, 70_000, 3_000_000];
        for align in [1, 2, 4, 8, 16, 32, 64, 4_096] {
            for &size in &sizes {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero layouts; each block is freed once, by this allocator, with
                // the layout it has at the time.
                unsafe {
                    let zeroed = allocator.alloc_zeroed(layout);
                    assert!(!zeroed.is_null());
                    assert_eq!(zeroed as usize % align, 0, "alloc_zeroed {size} aligned {align}");
                    assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|&byte| byte == 0));
                    allocator.dealloc(zeroed, layout);
                    for new_size in [size / 2 + 1, size * 3 + 5] {
                        let block = allocator.alloc(layout);
                        assert!(!block.is_null());
                        assert_eq!(block as usize % align, 0, "alloc {size} aligned {align}");
                        block.write_bytes(0xa5, size);
                        let kept = size.min(new_size);
                        let moved = allocator.realloc(block, layout, new_size);
                        assert_eq!(moved as usize % align, 0, "realloc {size} to {new_size} aligned {align}");
                        assert!(std::slice::from_raw_parts(moved, kept).iter().all(|&byte| byte == 0xa5));
                        moved.write_bytes(0xa5, new_size);
                        let back = allocator.realloc(moved, Layout::from_size_align(new_size, align).unwrap(), size);
                        assert_eq!(back as usize % align, 0, "realloc {new_size} to {size} aligned {align}");
                        assert!(std::slice::from_raw_parts(back, kept).iter().all(|&byte| byte == 0xa5));
                        allocator.dealloc(back, layout);
                    }
                }
            }
        }
    }
}
