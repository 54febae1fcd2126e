//! A mapped shared-memory region: created by the application (`memfd_create`, sealed against
//! shrinking), mapped by the scheduler from the file descriptor it received.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use crate::layout::{self, Header, Slot};

/// Why the scheduler refuses a region it was sent.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    /// The descriptor is not a memfd sealed against shrinking (the owner could truncate it and make
    /// the scheduler fault on access).
    #[error("the region is not sealed against shrinking (F_SEAL_SHRINK missing)")]
    NotSealed,
    /// The file is smaller than its header says.
    #[error("the region is {size} bytes, its header needs {need}")]
    TooSmall {
        /// Bytes in the file.
        size: u64,
        /// Bytes the header's slot count needs.
        need: u64,
    },
    /// Wrong magic or version, or sizes this build does not know.
    #[error("bad header: {0}")]
    BadHeader(&'static str),
    /// A system call failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl RegionError {
    /// The errno the scheduler answers the application with.
    pub fn errno(&self) -> i32 {
        match self {
            RegionError::NotSealed => libc::EPERM,
            RegionError::TooSmall { .. } => libc::EINVAL,
            RegionError::BadHeader(_) => libc::EPROTO,
            RegionError::Io(e) => e.raw_os_error().unwrap_or(libc::EIO),
        }
    }
}

/// A region mapped in this process.
pub struct Region {
    ptr: NonNull<u8>,
    len: usize,
    nslots: u32,
    fd: OwnedFd,
}

// SAFETY: the mapping is only accessed through atomics (`Header`, `Slot`), which are Sync.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn map(fd: &OwnedFd, len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: plain mmap of a descriptor we own; the result is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(NonNull::new(p as *mut u8).expect("mmap returned null"))
}

impl Region {
    /// Application side: a new anonymous region with `nslots` free slots, sealed so it can neither
    /// shrink nor grow, and its header filled in.
    pub fn create(nslots: u32, signal: u32) -> io::Result<Region> {
        if nslots == 0 || nslots > layout::MAX_SLOTS {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let len = layout::region_size(nslots);
        // SAFETY: the name is a valid C string; the result is checked.
        let raw = cvt(unsafe {
            libc::memfd_create(c"smart".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
        })?;
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate/fcntl on our descriptor.
        cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) })?;
        let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
        // SAFETY: as above.
        cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) })?;
        let ptr = map(&fd, len)?;
        let r = Region { ptr, len, nslots, fd };
        let h = r.header();
        h.version.store(layout::VERSION, Ordering::Relaxed);
        h.header_size.store(layout::HEADER_SIZE as u32, Ordering::Relaxed);
        h.slot_size.store(layout::SLOT_SIZE as u32, Ordering::Relaxed);
        h.nslots.store(nslots, Ordering::Relaxed);
        h.signal.store(signal, Ordering::Relaxed);
        // SAFETY: getpid cannot fail.
        h.pid.store(unsafe { libc::getpid() } as u32, Ordering::Relaxed);
        for i in 0..nslots {
            let s = r.slot(i);
            s.notify_time.store(layout::NEVER, Ordering::Relaxed);
            s.share.store(1, Ordering::Relaxed);
            s.availability.store(layout::NO_AVAILABILITY, Ordering::Relaxed);
        }
        // Magic last: a reader that sees it sees the rest.
        h.magic.store(layout::MAGIC, Ordering::Release);
        Ok(r)
    }

    /// Scheduler side: map a region received from an application, after checking that it is sealed
    /// against shrinking, large enough for what its header claims, and of our layout version. The slot
    /// count is read once here and kept: later changes to the header do not move our bounds.
    pub fn from_fd(fd: OwnedFd) -> Result<Region, RegionError> {
        // SAFETY: fcntl on a descriptor we own; fails with EINVAL for anything but a memfd/shmem file.
        let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
        if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
            return Err(RegionError::NotSealed);
        }
        // SAFETY: fstat into a zeroed struct.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        cvt(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
        let size = st.st_size as u64;
        if size < layout::HEADER_SIZE as u64 {
            return Err(RegionError::TooSmall { size, need: layout::HEADER_SIZE as u64 });
        }
        let hptr = map(&fd, layout::HEADER_SIZE)?;
        // SAFETY: mapped, aligned (page), HEADER_SIZE bytes.
        let h = unsafe { &*(hptr.as_ptr() as *const Header) };
        let magic = h.magic.load(Ordering::Acquire);
        let version = h.version.load(Ordering::Relaxed);
        let hs = h.header_size.load(Ordering::Relaxed);
        let ss = h.slot_size.load(Ordering::Relaxed);
        let nslots = h.nslots.load(Ordering::Relaxed);
        // SAFETY: unmapping what we mapped above; `h` is not used after this.
        unsafe { libc::munmap(hptr.as_ptr() as *mut libc::c_void, layout::HEADER_SIZE) };
        if magic != layout::MAGIC {
            return Err(RegionError::BadHeader("magic is not SMARTSHM"));
        }
        if version != layout::VERSION {
            return Err(RegionError::BadHeader("layout version differs from the scheduler's"));
        }
        if hs as usize != layout::HEADER_SIZE || ss as usize != layout::SLOT_SIZE {
            return Err(RegionError::BadHeader("header or slot size differs from the scheduler's"));
        }
        if nslots == 0 || nslots > layout::MAX_SLOTS {
            return Err(RegionError::BadHeader("slot count is 0 or above MAX_SLOTS"));
        }
        let len = layout::region_size(nslots);
        if size < len as u64 {
            return Err(RegionError::TooSmall { size, need: len as u64 });
        }
        let ptr = map(&fd, len)?;
        Ok(Region { ptr, len, nslots, fd })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        // SAFETY: the mapping is at least HEADER_SIZE bytes, page aligned, and lives as long as self.
        unsafe { &*(self.ptr.as_ptr() as *const Header) }
    }

    /// Slot `i` (panics if `i >= nslots`).
    pub fn slot(&self, i: u32) -> &Slot {
        assert!(i < self.nslots, "slot {i} out of {}", self.nslots);
        // SAFETY: in bounds (checked), 64-byte aligned (page + 128 * k), lives as long as self.
        unsafe {
            &*(self.ptr.as_ptr().add(layout::HEADER_SIZE + i as usize * layout::SLOT_SIZE) as *const Slot)
        }
    }

    /// Number of slots (as validated at creation or mapping).
    pub fn nslots(&self) -> u32 {
        self.nslots
    }

    /// The memfd (the application sends it to the scheduler).
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping; no references outlive self.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(fd: &OwnedFd) -> OwnedFd {
        fd.try_clone().unwrap()
    }

    #[test]
    fn created_region_maps_on_the_other_side_and_is_shared() {
        let a = Region::create(4, 40).unwrap();
        let b = Region::from_fd(dup(a.fd())).unwrap();
        assert_eq!(b.nslots(), 4);
        assert_eq!(b.header().signal.load(Ordering::Relaxed), 40);
        a.slot(3).deadline.store(1234, Ordering::Relaxed);
        assert_eq!(b.slot(3).deadline.load(Ordering::Relaxed), 1234);
        // Sealed: the owner can no longer shrink it.
        let r = unsafe { libc::ftruncate(a.fd().as_raw_fd(), 0) };
        assert_eq!(r, -1);
    }

    #[test]
    fn unsealed_or_lying_regions_are_refused() {
        // An unsealed memfd.
        let raw = unsafe { libc::memfd_create(c"x".as_ptr(), libc::MFD_ALLOW_SEALING) };
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        unsafe { libc::ftruncate(fd.as_raw_fd(), 4096) };
        assert!(matches!(Region::from_fd(dup(&fd)), Err(RegionError::NotSealed)));
        // Sealed but the header claims more slots than the file holds.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) };
        let p = map(&fd, 4096).unwrap();
        let h = unsafe { &*(p.as_ptr() as *const Header) };
        h.magic.store(layout::MAGIC, Ordering::Relaxed);
        h.version.store(layout::VERSION, Ordering::Relaxed);
        h.header_size.store(layout::HEADER_SIZE as u32, Ordering::Relaxed);
        h.slot_size.store(layout::SLOT_SIZE as u32, Ordering::Relaxed);
        h.nslots.store(1000, Ordering::Relaxed);
        let e = Region::from_fd(dup(&fd)).err().unwrap();
        assert!(matches!(e, RegionError::TooSmall { size: 4096, .. }), "{e}");
        h.version.store(99, Ordering::Relaxed);
        assert!(matches!(Region::from_fd(dup(&fd)), Err(RegionError::BadHeader(_))));
        // A regular file (not a memfd) cannot be sealed at all.
        let f = tempfile::tempfile().unwrap();
        assert!(matches!(Region::from_fd(OwnedFd::from(f)), Err(RegionError::NotSealed)));
    }
}
