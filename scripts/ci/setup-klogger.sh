#!/usr/bin/env bash
# Build and run dependencies of crates/klogger (idempotent; quick when already installed):
#   clang-19            compile the BPF C (Debian 12's default clang is 14; the BPF code wants >= 16)
#   bpftool             generates vmlinux.h from /sys/kernel/btf/vmlinux at build time
#   libelf-dev, zlib1g-dev, pkg-config   needed to build the vendored libbpf (libbpf-sys)
set -euo pipefail
pkgs=(clang-19 bpftool libelf-dev zlib1g-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-klogger: all installed (${pkgs[*]})"
  exit 0
fi
echo "setup-klogger: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
