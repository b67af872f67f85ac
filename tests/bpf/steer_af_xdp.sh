#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Integration test of AF_XDP steering the way the daemon uses it: DPDK's
# net_af_xdp PMD loads our steering object (xdp_prog=) on a veth, the
# control module finds it and installs a VIP (af_xdp_probe). From a client
# namespace: ARP and ping to the host address must still work (passed to
# the kernel) while UDP datagrams to the VIP must reach DPDK, and only
# they. When DPDK closes the port, the program must be gone. Only
# addresses inside the test's namespaces; both removed on exit.
#
# usage: steer_af_xdp.sh AF_XDP_PROBE XDP_STEER_OBJ
set -euo pipefail

probe=$1 obj=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: needs root"
  exit 77
fi

tag="mlvstr$$"
ns_cl="$tag-cl"
ns_lb="$tag-lb"
tmp=$(mktemp -d)
probe_pid=

cleanup() {
  [ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null && wait "$probe_pid" 2>/dev/null
  ip netns del "$ns_cl" 2>/dev/null
  ip netns del "$ns_lb" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; cat "$tmp/probe.log" 2>/dev/null; exit 1; }
in_cl() { ip netns exec "$ns_cl" "$@"; }
in_lb() { ip netns exec "$ns_lb" "$@"; }

ip netns add "$ns_cl"
ip netns add "$ns_lb"
ip link add vcl netns "$ns_cl" type veth peer name vlb netns "$ns_lb"
in_cl ip link set lo up
in_cl ip addr add 10.198.0.2/24 dev vcl
in_cl ip link set vcl up
in_cl ip route add 192.0.2.0/24 via 10.198.0.1
in_lb ip link set lo up
in_lb ip addr add 10.198.0.1/24 dev vlb
in_lb ip link set vlb up

n=20
# only matters in sanitizer builds (see the file)
export LSAN_OPTIONS="suppressions=$(dirname "$0")/af_xdp_probe.lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
in_lb "$probe" vlb "$obj" 192.0.2.10 5300 udp "$n" 20 "$tmp/ready" \
  > "$tmp/probe.log" 2>&1 &
probe_pid=$!
for _ in $(seq 300); do
  [ -f "$tmp/ready" ] && break
  kill -0 "$probe_pid" 2>/dev/null || fail "probe exited early"
  sleep 0.05
done
[ -f "$tmp/ready" ] || fail "probe not ready"
in_lb ip link show vlb | grep -q "xdp" || fail "no XDP program on vlb"

# Not for maglevd: ARP for the gateway and ICMP to the host, to the kernel.
in_cl ping -c 2 -i 0.2 -W 2 10.198.0.1 > "$tmp/ping.log" || fail "ping through steering failed: $(cat "$tmp/ping.log")"
# UDP to another port of the VIP address would also go to the kernel
# (unreachable); UDP to the VIP goes to DPDK.
in_cl python3 - "$n" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"to-the-vip %d" % i, ("192.0.2.10", 5300))
PY

if ! wait "$probe_pid"; then
  probe_pid=
  fail "DPDK did not get exactly the VIP datagrams"
fi
probe_pid=
cat "$tmp/probe.log"
grep -q "^vip frames $n of $n, other frames 0" "$tmp/probe.log" || fail "unexpected counts"
redirected=$(awk '$2 == "redirect_vip" { print $3 }' "$tmp/probe.log")
[ "$redirected" -ge "$n" ] || fail "redirect_vip counter is $redirected"
in_lb ip link show vlb | grep -q "xdp" && fail "XDP program still attached after the port closed"
echo "steer af_xdp integration: ok"
