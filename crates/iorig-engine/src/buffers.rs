//! Page-aligned I/O buffers: one allocation split into equal slots.
//!
//! Every slot starts on a 4096-byte boundary and its length is a multiple of
//! 4096, so a slot can be used for `O_DIRECT` I/O on any device and registered
//! with io_uring as a fixed buffer.

use crate::EngineError;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Alignment of the allocation and of every slot.
pub const BUFFER_ALIGN: usize = 4096;

/// `slots` buffers of `slot_bytes` each, in one zero-initialised, 4096-aligned
/// allocation that is freed on drop.
///
/// The memory is reached through a raw pointer, so anyone holding a pointer from
/// [`AlignedBuffers::slot_ptr`] or [`AlignedBuffers::as_iovecs`] (the kernel, for
/// io_uring) must be done with it before the buffers are dropped.
pub struct AlignedBuffers {
    ptr: NonNull<u8>,
    layout: Layout,
    slots: u32,
    slot_bytes: usize,
}

// SAFETY: AlignedBuffers owns its allocation exclusively (like a Box<[u8]>); the
// raw pointer is never shared with other threads by this type, so moving it to
// another thread is sound.
unsafe impl Send for AlignedBuffers {}
// SAFETY: shared references only hand out `&[u8]` or raw pointers; mutation
// needs `&mut self` (or unsafe code with its own justification).
unsafe impl Sync for AlignedBuffers {}

impl AlignedBuffers {
    /// Allocates `slots` slots of at least `slot_bytes` bytes each (rounded up to
    /// a multiple of 4096; 0 becomes 4096).
    pub fn new(slots: u32, slot_bytes: usize) -> Result<Self, EngineError> {
        if slots == 0 {
            return Err(EngineError::Usage(
                "the I/O buffers need at least one slot (queue depth 0?)".to_string(),
            ));
        }
        let too_big = || {
            EngineError::Usage(format!(
                "I/O buffers of {slots} x {slot_bytes} bytes are too large"
            ))
        };
        let slot_bytes = slot_bytes
            .max(1)
            .checked_next_multiple_of(BUFFER_ALIGN)
            .ok_or_else(too_big)?;
        let total = slot_bytes.checked_mul(slots as usize).ok_or_else(too_big)?;
        let layout = Layout::from_size_align(total, BUFFER_ALIGN).map_err(|_| too_big())?;
        // SAFETY: `layout` has a non-zero size (slots >= 1, slot_bytes >= 4096)
        // and a valid power-of-two alignment.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| EngineError::Io {
            what: format!("allocating {total} bytes of I/O buffers"),
            source: std::io::Error::from(std::io::ErrorKind::OutOfMemory),
        })?;
        Ok(AlignedBuffers {
            ptr,
            layout,
            slots,
            slot_bytes,
        })
    }

    /// Bytes per slot (a multiple of 4096).
    #[inline]
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// Number of slots.
    #[inline]
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The buffer of `slot`; empty when `slot` is out of range.
    #[inline]
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        if slot >= self.slots {
            return &mut [];
        }
        // SAFETY: slot < slots, so the range [slot * slot_bytes, +slot_bytes)
        // lies inside the live allocation; `&mut self` guarantees no other
        // reference into it exists (raw-pointer users must respect the ownership
        // rules documented on the type).
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ptr.as_ptr().add(slot as usize * self.slot_bytes),
                self.slot_bytes,
            )
        }
    }

    /// The buffer of `slot`, read-only; empty when `slot` is out of range.
    #[inline]
    pub fn slot(&self, slot: u32) -> &[u8] {
        if slot >= self.slots {
            return &[];
        }
        // SAFETY: the range is inside the live allocation (slot < slots) and
        // `&self` excludes any `&mut` slice handed out by `slot_mut`.
        unsafe {
            std::slice::from_raw_parts(
                self.ptr.as_ptr().add(slot as usize * self.slot_bytes),
                self.slot_bytes,
            )
        }
    }

    /// Raw pointer to the start of `slot`; null when `slot` is out of range.
    /// Valid for `slot_bytes()` bytes while `self` lives.
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        if slot >= self.slots {
            return std::ptr::null_mut();
        }
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(slot as usize * self.slot_bytes) }
    }

    /// True when `slot` exists and `[buf_offset, buf_offset + len)` lies inside it.
    #[inline]
    pub fn contains(&self, slot: u32, buf_offset: u32, len: u32) -> bool {
        slot < self.slots && buf_offset as u64 + len as u64 <= self.slot_bytes as u64
    }

    /// One iovec per slot, in slot order (for io_uring `register_buffers`).
    pub fn as_iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|s| libc::iovec {
                iov_base: self.slot_ptr(s).cast::<libc::c_void>(),
                iov_len: self.slot_bytes,
            })
            .collect()
    }
}

impl Drop for AlignedBuffers {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc_zeroed(self.layout)` and is freed only
        // here, once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for AlignedBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuffers")
            .field("slots", &self.slots)
            .field("slot_bytes", &self.slot_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_rounded() {
        let b = AlignedBuffers::new(5, 5000).unwrap();
        assert_eq!(b.slot_bytes(), 8192);
        assert_eq!(b.slots(), 5);
        for s in 0..5 {
            assert_eq!(b.slot_ptr(s) as usize % BUFFER_ALIGN, 0);
        }
        let b = AlignedBuffers::new(1, 0).unwrap();
        assert_eq!(b.slot_bytes(), 4096);
    }

    #[test]
    fn zeroed_and_disjoint() {
        let mut b = AlignedBuffers::new(4, 4096).unwrap();
        for s in 0..4 {
            assert!(b.slot(s).iter().all(|&x| x == 0));
        }
        for s in 0..4u32 {
            b.slot_mut(s).fill(s as u8 + 1);
        }
        for s in 0..4u32 {
            assert_eq!(b.slot(s).len(), 4096);
            assert!(b.slot(s).iter().all(|&x| x == s as u8 + 1));
        }
        let iov = b.as_iovecs();
        assert_eq!(iov.len(), 4);
        for w in iov.windows(2) {
            assert_eq!(
                w[0].iov_base as usize + w[0].iov_len,
                w[1].iov_base as usize
            );
        }
    }

    #[test]
    fn out_of_range_and_bad_sizes() {
        let mut b = AlignedBuffers::new(2, 4096).unwrap();
        assert!(b.slot_mut(2).is_empty());
        assert!(b.slot_ptr(7).is_null());
        assert!(AlignedBuffers::new(0, 4096).unwrap_err().is_usage());
        assert!(AlignedBuffers::new(u32::MAX, usize::MAX / 2).is_err());
    }
}
