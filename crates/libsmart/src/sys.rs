//! Unsafe code behind safe types, each block with the invariant that makes it sound.
//!
//! * [`SharedMap`]: a shared region seen as a [`Header`] and [`Slot`]s. Mapping and unmapping are
//!   memmap2's ([`MmapRaw`]), but turning bytes another process writes into Rust references is ours.
//!   It maps only files sealed against shrinking and at least as long as the mapping, and hands out
//!   references inside the mapping only.
//! * [`with_borrowed_fd`]: `proto`'s public functions take a `RawFd` (callers pass `as_raw_fd()` of a
//!   socket they hold); rustix wants it borrowed.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

use memmap2::{MmapOptions, MmapRaw};
use nix::fcntl::{fcntl, FcntlArg, SealFlag};

use crate::layout::{Header, Slot, HEADER_SIZE, SLOT_SIZE};

// ---------------------------------------------------------------------------------------------
// The shared region.

/// The size of `fd`'s file if it is sealed against shrinking; `Ok(None)` if it is not (a file that
/// cannot be sealed at all, not a memfd, fails `F_GET_SEALS` and is not either).
pub(crate) fn sealed_size(fd: &OwnedFd) -> io::Result<Option<u64>> {
    match fcntl(fd, FcntlArg::F_GET_SEALS) {
        Ok(seals) if SealFlag::from_bits_retain(seals).contains(SealFlag::F_SEAL_SHRINK) => {}
        _ => return Ok(None),
    }
    Ok(Some(nix::sys::stat::fstat(fd)?.st_size as u64))
}

// What `header` and `slot` rely on besides the mapping: the types' alignment divides the page size
// (mappings start on a page) and the offsets of the slots.
const _: () = assert!(std::mem::align_of::<Header>() <= 4096 && std::mem::size_of::<Header>() == HEADER_SIZE);
const _: () = assert!(std::mem::align_of::<Slot>() <= 4096 && std::mem::size_of::<Slot>() == SLOT_SIZE);
const _: () = assert!(HEADER_SIZE % std::mem::align_of::<Slot>() == 0);
const _: () = assert!(SLOT_SIZE % std::mem::align_of::<Slot>() == 0);

/// The first `len` bytes of a region's file, mapped shared and read-write, seen as a [`Header`] and
/// the [`Slot`]s that fit after it. Unmapped when dropped.
pub(crate) struct SharedMap {
    map: MmapRaw,
}

impl SharedMap {
    /// Maps the first `len` bytes of `fd`. Refuses with `EPERM` a file that is not sealed against
    /// shrinking, and with `EINVAL` one shorter than `len` or a `len` shorter than the header. The
    /// callers have checked both already (with their own errors); they are checked again here so
    /// that this type alone guarantees what [`SharedMap::header`] and [`SharedMap::slot`] need: the
    /// file can never become shorter than the mapping, so no access to it can fault.
    pub(crate) fn new(fd: &OwnedFd, len: usize) -> io::Result<SharedMap> {
        let size = sealed_size(fd)?.ok_or_else(|| io::Error::from_raw_os_error(libc::EPERM))?;
        if len < HEADER_SIZE || size < len as u64 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let map = MmapOptions::new().len(len).map_raw(fd)?;
        Ok(SharedMap { map })
    }

    /// The header at the start of the mapping.
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the mapping is at least HEADER_SIZE bytes (checked in `new`) and starts on a page,
        // which satisfies Header's alignment (asserted above). The file is sealed against shrinking
        // and was at least that long, so the bytes stay backed while `self` lives, and the borrow
        // does not outlive `self`, which unmaps only on drop. Every byte of a Header is inside an
        // atomic (its reserved words too), so any bit pattern is a valid value and writes by the
        // other process through its own mapping are concurrent atomic accesses, which the types
        // allow; nothing here creates a `&mut` to the mapping.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    /// Slot `i`; panics unless the whole slot lies inside the mapping.
    pub(crate) fn slot(&self, i: usize) -> &Slot {
        let start = i.checked_mul(SLOT_SIZE).and_then(|o| o.checked_add(HEADER_SIZE));
        let start = start.filter(|s| s.checked_add(SLOT_SIZE).is_some_and(|end| end <= self.map.len()));
        let start =
            start.unwrap_or_else(|| panic!("slot {i} is outside a mapping of {} bytes", self.map.len()));
        // SAFETY: as for `header`: the slot's bytes lie inside the mapping (checked just above), it
        // starts at HEADER_SIZE + i * SLOT_SIZE from a page boundary, a multiple of Slot's alignment
        // (asserted above), the sealed file keeps them backed while `self` lives, and a Slot is
        // atomics only (reserved words included), written by the other process only atomically.
        unsafe { &*self.map.as_ptr().add(start).cast::<Slot>() }
    }
}

// ---------------------------------------------------------------------------------------------
// Descriptors given as numbers.

/// Calls `f` with `fd` borrowed, for the public functions of [`crate::proto`], which take the
/// `RawFd` of a socket the caller holds open during the call. A negative number fails with `EBADF`,
/// as the system call would.
pub(crate) fn with_borrowed_fd<R>(
    fd: RawFd,
    f: impl FnOnce(BorrowedFd<'_>) -> io::Result<R>,
) -> io::Result<R> {
    if fd < 0 {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    // SAFETY: `fd` is not -1 (checked). The borrow lives only while `f` runs, which makes one system
    // call on it and keeps no copy; the caller owns the descriptor and keeps it open for the call
    // (proto documents this). If a caller broke that, the system call would fail with EBADF or act
    // on whatever file has that number, exactly as the raw libc call this replaced did: no memory
    // of this process is at stake, and no descriptor is closed through the borrow.
    f(unsafe { BorrowedFd::borrow_raw(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::memfd::{memfd_create, MFdFlags};
    use nix::unistd::ftruncate;
    use std::sync::atomic::Ordering;

    #[test]
    fn only_sealed_files_long_enough_are_mapped() {
        let fd = memfd_create(c"t", MFdFlags::MFD_ALLOW_SEALING).unwrap();
        ftruncate(&fd, 4096).unwrap();
        let err = |r: io::Result<SharedMap>| r.err().and_then(|e| e.raw_os_error());
        assert_eq!(err(SharedMap::new(&fd, 4096)), Some(libc::EPERM), "not sealed");
        fcntl(&fd, FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK)).unwrap();
        assert_eq!(sealed_size(&fd).unwrap(), Some(4096));
        assert_eq!(err(SharedMap::new(&fd, 8192)), Some(libc::EINVAL), "longer than the file");
        assert_eq!(err(SharedMap::new(&fd, HEADER_SIZE - 1)), Some(libc::EINVAL), "shorter than a header");
        let m = SharedMap::new(&fd, HEADER_SIZE + 2 * SLOT_SIZE).unwrap();
        m.slot(1).deadline.store(5, Ordering::Relaxed);
        let all = SharedMap::new(&fd, 4096).unwrap();
        assert_eq!(all.slot(1).deadline.load(Ordering::Relaxed), 5, "both map the same file");
        assert!(std::panic::catch_unwind(|| m.slot(2).seq.load(Ordering::Relaxed)).is_err());
    }
}
