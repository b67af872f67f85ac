#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prepare a fresh Debian 12 machine (as root) to build, run and test maglevd:
# install every package from Debian, reserve hugepages. Idempotent: a second
# run installs nothing and changes nothing that is already right.
set -euo pipefail

# The build dependencies are debian/control's Build-Depends, read from
# there so that the package and this machine cannot differ. Below them,
# the one list of what only the tests, the lab, the fuzzer and the
# package test use.
here=$(cd "$(dirname "$0")/.." && pwd)
build_depends() {
  # the Build-Depends field with its continuation lines, without versions,
  # architectures and build profiles; debhelper-compat is debhelper's
  sed -n '/^Build-Depends:/,/^[^ #]/{/^Build-Depends:/{s/^Build-Depends://;p;d};/^ /p}' \
      "$here/debian/control" |
    tr ',' '\n' | sed 's/[(<[].*//; s/^ *//; s/ *$//' | grep -v '^$' |
    sed 's/^debhelper-compat$/debhelper/'
}
mapfile -t BUILD_DEPENDS < <(build_depends)
if [ ${#BUILD_DEPENDS[@]} -lt 5 ]; then
  echo "setup: cannot read Build-Depends from $here/debian/control" >&2
  exit 1
fi
PACKAGES=(
  "${BUILD_DEPENDS[@]}"
  build-essential dpkg-dev fakeroot lintian man-db bash-completion
  libcmocka-dev libpcap-dev libclang-rt-14-dev lld
  dpdk ethtool iproute2 iputils-ping curl procps nginx-light socat tcpdump
  systemd strace prometheus bird2
)
HUGEPAGES=${MAGLEVD_HUGEPAGES:-1024}   # 2 MB pages: 2 GB for DPDK

log() { printf 'setup: %s\n' "$*" >&2; }

usage() {
  cat <<EOF
usage: tools/setup.sh [-h|--help]

Prepares a fresh Debian 12 machine, as root, to build, run and test
maglevd: installs debian/control's Build-Depends and the packages the
tests, the lab, the fuzzers and the package test use (apt-get), and
reserves hugepages (MAGLEVD_HUGEPAGES 2 MB pages, default 1024; until the
next boot). Idempotent: a second run installs nothing and changes nothing
that is already right. Takes no other arguments.
EOF
}

case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) usage >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
  log "must run as root (installs packages, reserves hugepages)"
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
  # We install prometheus only for promtool, nginx only for the lab's
  # backends and bird2 only for the lab's routers (all started in
  # namespaces): keep their system services off.
  for svc in prometheus nginx bird; do
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
      systemctl disable --now "$svc" >/dev/null 2>&1 || true
    fi
  done
else
  log "all packages present"
fi

current=$(cat /proc/sys/vm/nr_hugepages)
if [ "$current" -lt "$HUGEPAGES" ]; then
  log "reserving $HUGEPAGES hugepages (had $current)"
  echo "$HUGEPAGES" > /proc/sys/vm/nr_hugepages
  got=$(cat /proc/sys/vm/nr_hugepages)
  if [ "$got" -lt "$HUGEPAGES" ]; then
    log "warning: only $got hugepages could be reserved"
  fi
fi
log "ready"
