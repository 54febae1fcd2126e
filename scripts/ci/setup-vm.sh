#!/usr/bin/env bash
# Installs what the guests need (scripts/vm/): the Debian 6.12 kernel source (the sched_ext guest) and the 6.1
# one (CFS before EEVDF, for scripts/vm/run-hourglass's comparison of the fair classes) and their build tools,
# QEMU, a static busybox for the initramfs, clang 19 for the BPF side of sched_ext schedulers (Debian 12 main
# has clang-19 and clang-16; its default clang is 14, too old for sched_ext), libseccomp for scx_rustland_core.
# Idempotent: returns at once when everything is already installed.
set -euo pipefail
pkgs=(
  linux-source-6.12                     # kernel source tarball in /usr/src (the sched_ext guest)
  linux-source-6.1                      # the CFS guest (scripts/vm/build-kernel --source 6.1)
  build-essential bc bison flex libelf-dev libssl-dev dwarves cpio kmod xz-utils zstd rsync python3
  qemu-system-x86 busybox-static        # the guest
  clang-19 llvm-19 libclang1-19 libzstd-dev zlib1g-dev pkg-config   # BPF: tools/sched_ext, bpftool, libbpf
  libseccomp-dev                        # scx_rustland_core (seccomp crate) for user-space schedulers
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
echo "setup-vm: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
