//! The registration exchange on the Unix socket: one [`Hello`] from the application carrying the
//! region's descriptor (`SCM_RIGHTS`), one [`Reply`] from the scheduler. Nothing else ever crosses the
//! socket; it stays open while the application lives so that the scheduler sees it exit (EOF).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `Hello::magic`: `SMARTREG` as a little-endian `u64`.
pub const HELLO_MAGIC: u64 = u64::from_le_bytes(*b"SMARTREG");

/// The application's registration message.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// [`HELLO_MAGIC`].
    pub magic: u64,
    /// [`crate::layout::VERSION`].
    pub version: u32,
    /// Reserved, 0.
    pub flags: u32,
}

/// The scheduler's answer.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// 0, or the errno explaining the refusal.
    pub status: i32,
    /// 1 if the process may raise priority or share above the defaults (it holds `CAP_SYS_NICE`).
    pub privileged: u32,
}

fn as_bytes<T: Copy>(v: &T) -> &[u8] {
    // SAFETY: T is a repr(C) struct of integers without padding.
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}

/// Send `msg`, with `fd` attached if given.
pub fn send<T: Copy>(sock: RawFd, msg: &T, fd: Option<RawFd>) -> io::Result<()> {
    let bytes = as_bytes(msg);
    let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
    // u64 storage keeps the control buffer aligned for cmsghdr.
    let mut cbuf = [0u64; 4];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
    mh.msg_iov = &mut iov;
    mh.msg_iovlen = 1;
    if let Some(fd) = fd {
        // SAFETY: the control buffer is large enough for one descriptor (checked by the assert) and
        // aligned; the CMSG macros only compute addresses inside it.
        unsafe {
            let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
            assert!(space <= std::mem::size_of_val(&cbuf));
            mh.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
            mh.msg_controllen = space as _;
            let c = libc::CMSG_FIRSTHDR(&mh);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut RawFd, fd);
        }
    }
    // SAFETY: all pointers in `mh` point to live buffers.
    let n = unsafe { libc::sendmsg(sock, &mh, libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != bytes.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "short send"));
    }
    Ok(())
}

/// Receive one `T`, and a descriptor if one was attached. `Ok(None)` at end of file. With a
/// non-blocking socket and nothing to read, the error is `WouldBlock`. A short message is an error
/// (`InvalidData`); any descriptor that came with it is closed.
pub fn recv<T: Copy + Default>(sock: RawFd, flags: i32) -> io::Result<Option<(T, Option<OwnedFd>)>> {
    let mut msg = T::default();
    let len = std::mem::size_of::<T>();
    let mut iov = libc::iovec { iov_base: &mut msg as *mut T as *mut libc::c_void, iov_len: len };
    let mut cbuf = [0u64; 8];
    // SAFETY: as in `send`.
    let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
    mh.msg_iov = &mut iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    mh.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    // SAFETY: all pointers in `mh` point to live buffers of the stated sizes.
    let n = unsafe { libc::recvmsg(sock, &mut mh, flags | libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut fds = Vec::new();
    // SAFETY: walking the control messages the kernel wrote into `cbuf`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&mh);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c) as *const RawFd;
                let count =
                    ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            c = libc::CMSG_NXTHDR(&mh, c);
        }
    }
    if n == 0 && fds.is_empty() {
        return Ok(None);
    }
    if n as usize != len || fds.len() > 1 || mh.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "malformed registration message"));
    }
    Ok(Some((msg, fds.pop())))
}

/// The peer's credentials as the kernel recorded them at `connect` (`SO_PEERCRED`).
pub fn peer_cred(sock: &impl AsRawFd) -> io::Result<libc::ucred> {
    // SAFETY: getsockopt into a correctly sized struct.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred)
}
