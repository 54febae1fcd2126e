//! A mapped shared-memory region: created by the application (`memfd_create`, sealed against
//! shrinking), mapped by the scheduler from the file descriptor it received.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;

use nix::fcntl::{fcntl, FcntlArg, SealFlag};
use nix::sys::memfd::{memfd_create, MFdFlags};
use nix::unistd::ftruncate;

use crate::layout::{self, Header, Slot};
use crate::sys::{self, SharedMap};

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
    map: SharedMap,
    nslots: u32,
    fd: OwnedFd,
}

impl Region {
    /// Application side: a new anonymous region with `nslots` free slots, sealed so it can neither
    /// shrink nor grow, and its header filled in.
    pub fn create(nslots: u32, signal: u32) -> io::Result<Region> {
        if nslots == 0 || nslots > layout::MAX_SLOTS {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let len = layout::region_size(nslots);
        let fd = memfd_create(c"smart", MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)?;
        ftruncate(&fd, len as libc::off_t)?;
        let seals = SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SEAL;
        fcntl(&fd, FcntlArg::F_ADD_SEALS(seals))?;
        let map = SharedMap::new(&fd, len)?;
        let r = Region { map, nslots, fd };
        let h = r.header();
        h.version.store(layout::VERSION, Ordering::Relaxed);
        h.header_size.store(layout::HEADER_SIZE as u32, Ordering::Relaxed);
        h.slot_size.store(layout::SLOT_SIZE as u32, Ordering::Relaxed);
        h.nslots.store(nslots, Ordering::Relaxed);
        h.signal.store(signal, Ordering::Relaxed);
        h.pid.store(std::process::id(), Ordering::Relaxed);
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
        // F_GET_SEALS fails with EINVAL for anything but a memfd/shmem file.
        let Some(size) = sys::sealed_size(&fd)? else { return Err(RegionError::NotSealed) };
        if size < layout::HEADER_SIZE as u64 {
            return Err(RegionError::TooSmall { size, need: layout::HEADER_SIZE as u64 });
        }
        let (magic, version, hs, ss, nslots) = {
            let head = SharedMap::new(&fd, layout::HEADER_SIZE)?;
            let h = head.header();
            let magic = h.magic.load(Ordering::Acquire);
            (
                magic,
                h.version.load(Ordering::Relaxed),
                h.header_size.load(Ordering::Relaxed),
                h.slot_size.load(Ordering::Relaxed),
                h.nslots.load(Ordering::Relaxed),
            )
        }; // unmapped here
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
        let map = SharedMap::new(&fd, len)?;
        Ok(Region { map, nslots, fd })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        self.map.header()
    }

    /// Slot `i` (panics if `i >= nslots`).
    pub fn slot(&self, i: u32) -> &Slot {
        assert!(i < self.nslots, "slot {i} out of {}", self.nslots);
        self.map.slot(i as usize)
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
        assert!(ftruncate(a.fd(), 0).is_err());
    }

    #[test]
    fn unsealed_or_lying_regions_are_refused() {
        // An unsealed memfd.
        let fd = memfd_create(c"x", MFdFlags::MFD_ALLOW_SEALING).unwrap();
        ftruncate(&fd, 4096).unwrap();
        assert!(matches!(Region::from_fd(dup(&fd)), Err(RegionError::NotSealed)));
        // Sealed but the header claims more slots than the file holds.
        fcntl(&fd, FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK)).unwrap();
        let m = SharedMap::new(&fd, 4096).unwrap();
        let h = m.header();
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
