//! The registration exchange on the Unix socket: one [`Hello`] from the application carrying the
//! region's descriptor (`SCM_RIGHTS`), one [`Reply`] from the scheduler. Nothing else ever crosses the
//! socket; it stays open while the application lives so that the scheduler sees it exit (EOF).
//!
//! The messages' bytes are their `repr(C)` structs' ([`Wire`]). Messages are sent with nix
//! (`sendmsg`, which takes the `RawFd` the public functions have) and received with rustix
//! (`recvmsg`, whose received descriptors are `OwnedFd`s: those of a truncated or malformed message
//! are closed, never leaked into the scheduler).

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd, RawFd};

use nix::sys::socket::sockopt::PeerCredentials;
use nix::sys::socket::{getsockopt, sendmsg, ControlMessage, MsgFlags};
use rustix::net::{recvmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags};

use crate::sys;

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

// The wire bytes are these structs' memory: fields in order, native byte order, no padding.
const _: () = assert!(std::mem::size_of::<Hello>() == 16 && std::mem::offset_of!(Hello, version) == 8);
const _: () = assert!(std::mem::offset_of!(Hello, flags) == 12);
const _: () = assert!(std::mem::size_of::<Reply>() == 8 && std::mem::offset_of!(Reply, privileged) == 4);

/// A message of the exchange and its bytes on the socket: those of the `repr(C)` struct in memory
/// (its fields in order, in the machine's byte order, without padding), as C sees the struct.
pub trait Wire: Sized {
    /// The bytes, `[u8; size_of::<Self>()]`.
    type Bytes: AsRef<[u8]> + AsMut<[u8]> + Default;
    /// The message's bytes.
    fn to_bytes(&self) -> Self::Bytes;
    /// The message in `bytes`.
    fn from_bytes(bytes: &Self::Bytes) -> Self;
}

fn field<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().expect("in bounds")
}

impl Wire for Hello {
    type Bytes = [u8; 16];
    fn to_bytes(&self) -> [u8; 16] {
        let mut b = [0; 16];
        b[0..8].copy_from_slice(&self.magic.to_ne_bytes());
        b[8..12].copy_from_slice(&self.version.to_ne_bytes());
        b[12..16].copy_from_slice(&self.flags.to_ne_bytes());
        b
    }
    fn from_bytes(b: &[u8; 16]) -> Hello {
        Hello {
            magic: u64::from_ne_bytes(field(b, 0)),
            version: u32::from_ne_bytes(field(b, 8)),
            flags: u32::from_ne_bytes(field(b, 12)),
        }
    }
}

impl Wire for Reply {
    type Bytes = [u8; 8];
    fn to_bytes(&self) -> [u8; 8] {
        let mut b = [0; 8];
        b[0..4].copy_from_slice(&self.status.to_ne_bytes());
        b[4..8].copy_from_slice(&self.privileged.to_ne_bytes());
        b
    }
    fn from_bytes(b: &[u8; 8]) -> Reply {
        Reply { status: i32::from_ne_bytes(field(b, 0)), privileged: u32::from_ne_bytes(field(b, 4)) }
    }
}

/// Send `msg` on the socket `sock` (open during the call), with `fd` attached if given
/// (`SCM_RIGHTS`).
pub fn send<T: Wire>(sock: RawFd, msg: &T, fd: Option<RawFd>) -> io::Result<()> {
    let bytes = msg.to_bytes();
    let bytes = bytes.as_ref();
    let fds = fd.map(|fd| [fd]);
    let rights = fds.as_ref().map(|fds| ControlMessage::ScmRights(fds));
    let n = sendmsg::<()>(sock, &[IoSlice::new(bytes)], rights.as_slice(), MsgFlags::MSG_NOSIGNAL, None)?;
    if n != bytes.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "short send"));
    }
    Ok(())
}

/// Receive one `T` from the socket `sock` (open during the call), and a descriptor if one was
/// attached. `flags` are `recvmsg(2)`'s (`MSG_DONTWAIT`, ...). `Ok(None)` at end of file. With a
/// non-blocking socket (or `MSG_DONTWAIT`) and nothing to read, the error is `WouldBlock`. A short
/// message is an error (`InvalidData`); any descriptor that came with it is closed.
pub fn recv<T: Wire>(sock: RawFd, flags: i32) -> io::Result<Option<(T, Option<OwnedFd>)>> {
    sys::with_borrowed_fd(sock, |sock| recv_from(sock, flags))
}

/// Control-message space for the received descriptors, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct ControlSpace([MaybeUninit<u8>; 64]);

/// [`recv`] on a borrowed socket. Descriptors arrive as `OwnedFd`s (with `MSG_CMSG_CLOEXEC`), so
/// that every one not returned is closed, those of a message whose control data was truncated too.
pub(crate) fn recv_from<T: Wire>(sock: impl AsFd, flags: i32) -> io::Result<Option<(T, Option<OwnedFd>)>> {
    let mut bytes = T::Bytes::default();
    let len = bytes.as_ref().len();
    let mut space = ControlSpace([MaybeUninit::uninit(); 64]);
    let mut control = RecvAncillaryBuffer::new(&mut space.0);
    let flags = RecvFlags::from_bits_retain(flags as u32) | RecvFlags::CMSG_CLOEXEC;
    let got = recvmsg(sock, &mut [IoSliceMut::new(bytes.as_mut())], &mut control, flags)?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = m {
            fds.extend(received);
        }
    }
    if got.bytes == 0 && fds.is_empty() {
        return Ok(None);
    }
    if got.bytes != len || fds.len() > 1 || got.flags.contains(ReturnFlags::CTRUNC) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "malformed registration message"));
    }
    Ok(Some((T::from_bytes(&bytes), fds.pop())))
}

/// The peer's credentials as the kernel recorded them at `connect` (`SO_PEERCRED`). The pid is 0 if
/// the peer's process is not in this process's pid namespace.
pub fn peer_cred(sock: &impl AsFd) -> io::Result<libc::ucred> {
    Ok(getsockopt(sock, PeerCredentials)?.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::fcntl::OFlag;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn messages_are_their_structs_bytes() {
        let h = Hello { magic: HELLO_MAGIC, version: 1, flags: 7 };
        let mut want = b"SMARTREG".to_vec();
        want.extend(1u32.to_ne_bytes());
        want.extend(7u32.to_ne_bytes());
        assert_eq!(h.to_bytes().to_vec(), want);
        assert_eq!(Hello::from_bytes(&h.to_bytes()), h);
        let r = Reply { status: -5, privileged: 1 };
        let mut want = (-5i32).to_ne_bytes().to_vec();
        want.extend(1u32.to_ne_bytes());
        assert_eq!(r.to_bytes().to_vec(), want);
        assert_eq!(Reply::from_bytes(&r.to_bytes()), r);
    }

    #[test]
    fn a_message_and_its_descriptor_cross_the_socket() {
        let (a, b) = UnixStream::pair().unwrap();
        let (_r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        let h = Hello { magic: HELLO_MAGIC, version: 1, flags: 0 };
        send(a.as_raw_fd(), &h, Some(w.as_raw_fd())).unwrap();
        let (got, fd) = recv::<Hello>(b.as_raw_fd(), 0).unwrap().unwrap();
        assert_eq!(got, h);
        let fd = fd.expect("a descriptor");
        assert_ne!(fd.as_raw_fd(), w.as_raw_fd());
        send(a.as_raw_fd(), &h, None).unwrap();
        assert!(recv::<Hello>(b.as_raw_fd(), 0).unwrap().unwrap().1.is_none());
        drop(a);
        assert!(recv::<Hello>(b.as_raw_fd(), 0).unwrap().is_none(), "end of file");
        assert_eq!(recv::<Hello>(-1, 0).unwrap_err().raw_os_error(), Some(libc::EBADF));
    }

    /// Descriptors that come with a refused message (too many, or more than the control space holds,
    /// which truncates) are closed, not leaked into the scheduler: once the sender's copy is closed
    /// too, the pipe's read end sees end of file.
    #[test]
    fn descriptors_of_a_refused_message_are_closed() {
        for count in [2, 40] {
            let (a, b) = UnixStream::pair().unwrap();
            let (r, w) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK).unwrap();
            let fds = vec![w.as_raw_fd(); count];
            let h = Hello { magic: HELLO_MAGIC, version: 1, flags: 0 }.to_bytes();
            let rights = [ControlMessage::ScmRights(&fds)];
            sendmsg::<()>(a.as_raw_fd(), &[IoSlice::new(&h)], &rights, MsgFlags::empty(), None).unwrap();
            drop(w);
            let e = recv::<Hello>(b.as_raw_fd(), 0).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{count} descriptors");
            let mut buf = [0u8; 1];
            assert_eq!(nix::unistd::read(&r, &mut buf), Ok(0), "{count} descriptors: one is still open");
        }
    }
}
