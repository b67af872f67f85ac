#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Integration test of the backend decapsulator: two network namespaces
# joined by a veth pair. The "backend" namespace has the VIPs on lo and
# maglev-decap attached natively to its veth; the "lb" namespace sends
# real IPIP and GUE frames (built by maglevd's encapsulator, via
# encap_send) carrying UDP datagrams to the VIPs. Every datagram must
# reach a UDP listener bound to the VIP; tunnels to another address or
# GUE port, or from a source outside --from (the "lb" namespace's
# addresses), must not be decapsulated. Only addresses inside the two
# namespaces are used; both are removed on exit.
#
# usage: decap_netns.sh MAGLEV_DECAP ENCAP_SEND UDP_LISTEN_PY
set -euo pipefail

decap=$1 send=$2 listen=$3
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: needs root"
  exit 77
fi

tag="mlvdcp$$"
ns_lb="$tag-lb"
ns_be="$tag-be"
tmp=$(mktemp -d)
listener=

cleanup() {
  [ -n "$listener" ] && kill "$listener" 2>/dev/null
  ip netns del "$ns_lb" 2>/dev/null
  ip netns del "$ns_be" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
in_lb() { ip netns exec "$ns_lb" "$@"; }
in_be() { ip netns exec "$ns_be" "$@"; }

ip netns add "$ns_lb"
ip netns add "$ns_be"
ip link add vlb netns "$ns_lb" type veth peer name vbe netns "$ns_be"

in_lb ip addr add 10.199.0.1/24 dev vlb
in_lb ip addr add fd00:199::1/64 dev vlb nodad
in_lb ip link set vlb up
in_be ip link set lo up
in_be ip addr add 192.0.2.10/32 dev lo
in_be ip addr add 2001:db8::10/128 dev lo
in_be ip addr add 10.199.0.2/24 dev vbe
in_be ip addr add fd00:199::2/64 dev vbe nodad
in_be ip link set vbe up
# decapsulated packets come from clients the backend has no route to
for c in all default vbe; do
  in_be sysctl -qw "net.ipv4.conf.$c.rp_filter=0"
done

if in_be "$decap" attach vbe --gue-port 6080 --mode native 2> "$tmp/refused"; then
  fail "attach without --from succeeded"
fi
grep -q "needs --from" "$tmp/refused" || fail "attach without --from: $(cat "$tmp/refused")"
in_be "$decap" status vbe >/dev/null 2>&1 && fail "a refused attach attached"
in_be "$decap" attach vbe --from 10.199.0.1,fd00:199::/64 --gue-port 6080 --mode native
in_be "$decap" status vbe > "$tmp/status0"
grep -q "native mode" "$tmp/status0" || fail "not attached natively: $(head -1 "$tmp/status0")"
grep -q "^addresses:.*10.199.0.2" "$tmp/status0" || fail "DEV's addresses not taken"
grep -qx "sources: 10.199.0.1/32 fd00:199::/64" "$tmp/status0" ||
  fail "sources: $(grep '^sources' "$tmp/status0")"

be_mac=$(in_be cat /sys/class/net/vbe/address)

# name method outer_src outer_dst inner_src inner_dst
cases=(
  "ipip44 ipip 10.199.0.1 10.199.0.2 198.51.100.1 192.0.2.10"
  "ipip66 ipip fd00:199::1 fd00:199::2 2001:db8:1::1 2001:db8::10"
  "ipip46 ipip fd00:199::1 fd00:199::2 198.51.100.1 192.0.2.10"
  "gue44 gue 10.199.0.1 10.199.0.2 198.51.100.1 192.0.2.10"
  "gue66 gue fd00:199::1 fd00:199::2 2001:db8:1::1 2001:db8::10"
  "gue46 gue fd00:199::1 fd00:199::2 198.51.100.1 192.0.2.10"
  "gue64 gue 10.199.0.1 10.199.0.2 2001:db8:1::1 2001:db8::10"
)
expects=()
for c in "${cases[@]}"; do
  set -- $c
  expects+=(--expect "$1")
done

in_be python3 "$listen" --port 5353 --bind 192.0.2.10 --bind 2001:db8::10 \
  --ready "$tmp/ready" --timeout 10 "${expects[@]}" > "$tmp/received" 2>&1 &
listener=$!
for _ in $(seq 100); do
  [ -f "$tmp/ready" ] && break
  kill -0 "$listener" 2>/dev/null || fail "listener died: $(cat "$tmp/received")"
  sleep 0.05
done
[ -f "$tmp/ready" ] || fail "listener not ready"

# Must not be decapsulated: sent first, so they would arrive first.
in_lb "$send" vlb "$be_mac" ipip 10.199.0.1 10.199.0.3 198.51.100.1 192.0.2.10 5353 neg-notlocal
in_lb "$send" vlb "$be_mac" gue 10.199.0.1 10.199.0.2 198.51.100.1 192.0.2.10 5353 neg-port 6090
in_lb "$send" vlb "$be_mac" ipip 10.199.0.9 10.199.0.2 198.51.100.1 192.0.2.10 5353 neg-src4
in_lb "$send" vlb "$be_mac" gue fd00:198::1 fd00:199::2 2001:db8:1::1 2001:db8::10 5353 neg-src6

for c in "${cases[@]}"; do
  set -- $c
  in_lb "$send" vlb "$be_mac" "$2" "$3" "$4" "$5" "$6" 5353 "$1"
done

if ! wait "$listener"; then
  listener=
  cat "$tmp/received"
  in_be "$decap" status vbe
  fail "not every datagram arrived"
fi
listener=
cat "$tmp/received"
grep -q "received neg-" "$tmp/received" && fail "a tunnel that is not ours was decapsulated"

# Counters: exactly the 3 IPIP + 4 GUE test frames were decapsulated,
# and the 2 from unknown sources passed.
in_be "$decap" status vbe > "$tmp/status1"
ipip=$(awk '$1 == "decap_ipip" { print $2 }' "$tmp/status1")
gue=$(awk '$1 == "decap_gue" { print $2 }' "$tmp/status1")
unknown=$(awk '$1 == "pass_unknown_src" { print $2 }' "$tmp/status1")
[ "$ipip" = 3 ] || fail "decap_ipip is $ipip, expected 3"
[ "$gue" = 4 ] || fail "decap_gue is $gue, expected 4"
[ "$unknown" = 2 ] || fail "pass_unknown_src is $unknown, expected 2"
# The same counters for Prometheus: one sample per counter of the table.
in_be "$decap" status vbe --prometheus > "$tmp/prom"
grep -qx '# TYPE maglev_decap_frames_total counter' "$tmp/prom" || fail "no TYPE line"
grep -qx 'maglev_decap_frames_total{dev="vbe",counter="decap_gue"} 4' "$tmp/prom" ||
  fail "prometheus decap_gue: $(grep decap_gue "$tmp/prom")"
grep -qx 'maglev_decap_frames_total{dev="vbe",counter="sc_malformed"} 0' "$tmp/prom" ||
  fail "prometheus: no sc_malformed sample"
[ "$(grep -c '^maglev_decap_frames_total{' "$tmp/prom")" = \
  "$(awk 'NF >= 2 && $2 ~ /^[0-9]+$/ && $1 ~ /^[a-z_]+$/' "$tmp/status1" | wc -l)" ] ||
  fail "prometheus and status list different counters"

# Second chance's switches through the command line: on by default,
# local drain kept across attach again, --second-chance off, undrain.
grep -qx "second chance: on" "$tmp/status1" ||
  fail "status: $(grep '^second chance' "$tmp/status1")"
in_be "$decap" drain vbe | grep -q "draining" || fail "drain"
in_be "$decap" status vbe | grep -qx "second chance: on, draining (new connections go on to their next hop)" ||
  fail "drain not shown: $(in_be "$decap" status vbe | grep '^second chance')"
in_be "$decap" attach vbe --from 10.199.0.1,fd00:199::/64 --gue-port 6080 \
  --mode native --second-chance off | grep -q reconfigured || fail "attach again"
in_be "$decap" status vbe | grep -qx "second chance: off (nothing handed on), draining (new connections go on to their next hop)" ||
  fail "off and draining not shown: $(in_be "$decap" status vbe | grep '^second chance')"
in_be "$decap" undrain vbe | grep -q "not draining" || fail "undrain"
in_be "$decap" status vbe | grep -qx "second chance: off (nothing handed on)" ||
  fail "undrain not shown: $(in_be "$decap" status vbe | grep '^second chance')"
in_be "$decap" attach vbe --from any --second-chance maybe > "$tmp/refused2" 2>&1 &&
  fail "--second-chance maybe accepted"
grep -q -- "--second-chance maybe: on or off" "$tmp/refused2" ||
  fail "--second-chance maybe: $(cat "$tmp/refused2")"

in_be "$decap" detach vbe | grep -q "detached" || fail "detach"
in_be "$decap" drain vbe >/dev/null 2>&1 && fail "drain after detach succeeded"
in_be "$decap" status vbe >/dev/null 2>&1 && fail "status after detach succeeded"
echo "decap integration: ok"
