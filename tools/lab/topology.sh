# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The lab's namespaces, links and addresses (sourced by tools/lab/lab).
#
# One layer-2 segment, a bridge in its own namespace, every other
# namespace joined to it by a veth pair:
#
#   PFX-c1..     clients      eth0 10.99.0.101.. fd00:99::101..  VIP routes via the LB
#   PFX-lb1, 2   load balancers lb0 10.99.0.1, .2 fd00:99::1, ::2  maglevd (AF_XDP / AF_PACKET)
#   PFX-be1..    backends     eth0 10.99.0.11..  fd00:99::11..   VIPs on lo, nginx, UDP echo
#   PFX-br       br0          10.99.0.254 fd00:99::fe            bridge + router
#
# br0 also routes (forwarding on, redirects off): the LBs route the
# backends' addresses via br0, so maglevd's next hop (next_hop: auto, or
# br0's fixed MAC) is br0 for every ipip/gue packet, and br0 routes it by
# its outer destination to the backend, the way a real next-hop router
# would. l2dsr frames go straight to the backends' MACs over the bridge.
# Only private test addresses, only inside these namespaces.

# shellcheck disable=SC2034  # constants used by the other lab files
LAB_NET4=10.99.0
LAB_NET6=fd00:99:
LAB_GW4=$LAB_NET4.254
LAB_GW6=${LAB_NET6}:fe
LAB_GW_MAC=02:99:00:00:00:fe   # fixed: a bridge's own MAC would follow its ports
LAB_VIP4=10.99.100.10
LAB_VIP6=fd00:99:100::10
LAB_HTTP_PORT=80
LAB_UDP_PORT=7
LAB_GUE_PORT=6080
LAB_MAX_BACKENDS=9
LAB_MAX_CLIENTS=9
LAB_LBS=2
# ipip outer source prefixes (lab config --ipip-source on): routed nowhere,
# only in the backends' --from (docs/forwarding.md, "Outer sources")
LAB_IPIP_SOURCE4=10.99.77.16/28
LAB_IPIP_SOURCE6=fd00:99:77::100/120

ns_br()      { echo "$LAB_PREFIX-br"; }
ns_lb()      { echo "$LAB_PREFIX-lb$1"; }
ns_backend() { echo "$LAB_PREFIX-be$1"; }
ns_client()  { echo "$LAB_PREFIX-c$1"; }
lb_addr4()   { echo "$LAB_NET4.$1"; }
lb_addr6()   { echo "${LAB_NET6}:$1"; }
be_addr4()   { echo "$LAB_NET4.$((10 + $1))"; }
be_addr6()   { echo "${LAB_NET6}:$((10 + $1))"; }
cl_addr4()   { echo "$LAB_NET4.$((100 + $1))"; }
cl_addr6()   { echo "${LAB_NET6}:$((100 + $1))"; }

# Every namespace of this lab prefix, whatever state it is in.
lab_namespaces() {
  ip netns list | awk -v p="$LAB_PREFIX-" 'index($1, p) == 1 { print $1 }'
}

ns_exists() { ip netns list | awk '{ print $1 }' | grep -qx "$1"; }

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

ns_sysctl() {
  local ns=$1; shift
  in_ns "$ns" sysctl -q -w "$@" >/dev/null
}

# A namespace with lo up and IPv6 duplicate address detection off (the
# addresses are ours alone; DAD would only delay the lab by seconds).
make_ns() {
  local ns=$1
  ip netns add "$ns"
  in_ns "$ns" ip link set lo up
  ns_sysctl "$ns" net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
}

# veth pair: DEV in namespace NS, PEER on the bridge, QUEUES queues each
# way (maglevd gives each worker its own RX queue).
link_to_bridge() {
  local ns=$1 dev=$2 peer=$3 queues=$4 br
  br=$(ns_br)
  ip link add name "$dev" netns "$ns" numtxqueues "$queues" numrxqueues "$queues" \
    type veth peer name "$peer" netns "$br" numtxqueues "$queues" numrxqueues "$queues"
  in_ns "$br" ip link set "$peer" master br0 up
  in_ns "$ns" ip link set "$dev" up
}

add_addrs() {
  local ns=$1 dev=$2 a4=$3 a6=$4
  in_ns "$ns" ip addr add "$a4/24" dev "$dev"
  in_ns "$ns" ip addr add "$a6/64" dev "$dev" nodad
}

make_bridge() {
  local br
  br=$(ns_br)
  make_ns "$br"
  in_ns "$br" ip link add name br0 address "$LAB_GW_MAC" type bridge mcast_snooping 0
  in_ns "$br" ip link set br0 up
  add_addrs "$br" br0 "$LAB_GW4" "$LAB_GW6"
  ns_sysctl "$br" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
    net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.br0.send_redirects=0 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.br0.rp_filter=0
}

# LB i: the kernel keeps lb0 and its address (ARP, NDP, health checks);
# maglevd reads the VIP traffic from it.
# - The backends are routed via br0, as a real LB reaches them via its
#   router: maglevd's `next_hop: auto` takes the MAC of the kernel's next
#   hop toward them, one per port, and that must be the router, not
#   whichever backend happens to be looked up first. Redirects are
#   ignored, so br0's ICMPv6 redirects ("go direct") cannot change that.
# - With the AF_PACKET vdev the kernel sees every VIP packet too (a copy):
#   no forwarding, and blackhole routes for the VIPs, so it drops them
#   silently instead of answering the client with ICMPv6 no-route (which
#   aborts the client's connect).
make_lb() {
  local i=$1 ns b
  ns=$(ns_lb "$i")
  make_ns "$ns"
  ns_sysctl "$ns" net.ipv4.conf.all.accept_redirects=0 \
    net.ipv4.conf.default.accept_redirects=0 \
    net.ipv6.conf.all.accept_redirects=0 net.ipv6.conf.default.accept_redirects=0
  link_to_bridge "$ns" lb0 "p-lb$i" "$LAB_WORKERS"
  add_addrs "$ns" lb0 "$(lb_addr4 "$i")" "$(lb_addr6 "$i")"
  for b in $(seq "$LAB_BACKENDS"); do
    in_ns "$ns" ip route add "$(be_addr4 "$b")/32" via "$LAB_GW4"
    in_ns "$ns" ip -6 route add "$(be_addr6 "$b")/128" via "$LAB_GW6"
  done
  in_ns "$ns" ip route add blackhole "$LAB_VIP4/32"
  in_ns "$ns" ip -6 route add blackhole "$LAB_VIP6/128"
}

# Client i: the VIPs are routed via LB 1 (lab route switches it). TX
# checksum offload off: a veth passes CHECKSUM_PARTIAL packets with the
# checksum unfilled, fine between kernels but wrong once maglevd (through
# AF_XDP/AF_PACKET) forwards the bytes to a backend.
make_client() {
  local i=$1 ns
  ns=$(ns_client "$i")
  make_ns "$ns"
  link_to_bridge "$ns" eth0 "p-c$i" 1
  add_addrs "$ns" eth0 "$(cl_addr4 "$i")" "$(cl_addr6 "$i")"
  in_ns "$ns" ethtool -K eth0 tx off >/dev/null
  in_ns "$ns" ip route add "$LAB_VIP4/32" via "$(lb_addr4 1)"
  in_ns "$ns" ip -6 route add "$LAB_VIP6/128" via "$(lb_addr6 1)"
}

# Backend i: VIPs on lo, no ARP for them on eth0, no reverse-path filter
# (decapsulated packets arrive from the client's address), forwarding on
# eth0 (second chance's route look-up, docs/second-chance.md), a TCP MSS that
# fits the largest encapsulation (gue over IPv6: mtu_room 1448, minus 60),
# and the BPF decapsulator for ipip and gue (this kernel has no tunnel
# modules), for tunnels from the LBs only (lab_lb_sources). The
# decapsulator passes everything else, so l2dsr frames and health checks
# reach the stack untouched.
make_backend() {
  local i=$1 ns a4 a6
  ns=$(ns_backend "$i")
  a4=$(be_addr4 "$i") a6=$(be_addr6 "$i")
  make_ns "$ns"
  link_to_bridge "$ns" eth0 "p-be$i" 1
  # A veth takes XDP_TX frames from its peer only while it runs a native
  # XDP program itself (second chance sends frames back out of eth0 with
  # XDP_TX): the bridge side runs the decapsulator for a tunnel nobody
  # sends (192.0.2.254 from itself), which passes every frame.
  in_ns "$(ns_br)" "$MLV_DECAP" attach "p-be$i" --address 192.0.2.254 \
    --from 192.0.2.254/32 --mss-clamp off >/dev/null
  add_addrs "$ns" eth0 "$a4" "$a6"
  in_ns "$ns" ip addr add "$LAB_VIP4/32" dev lo
  in_ns "$ns" ip addr add "$LAB_VIP6/128" dev lo
  ns_sysctl "$ns" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
    net.ipv4.conf.eth0.arp_ignore=1 net.ipv4.conf.eth0.arp_announce=2 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
    net.ipv4.conf.eth0.rp_filter=0 net.ipv4.conf.lo.rp_filter=0 \
    net.ipv4.conf.eth0.forwarding=1 net.ipv6.conf.all.forwarding=1 \
    net.ipv6.conf.eth0.forwarding=1 net.ipv4.conf.all.send_redirects=0 \
    net.ipv4.conf.eth0.send_redirects=0
  in_ns "$ns" ip route change "$LAB_NET4.0/24" dev eth0 proto kernel scope link src "$a4" advmss 1380
  in_ns "$ns" ip -6 route change "${LAB_NET6}:/64" dev eth0 proto kernel metric 256 advmss 1380
  in_ns "$ns" "$MLV_DECAP" attach eth0 --address "$a4" --address "$a6" \
    --gue-port "$LAB_GUE_PORT" --from "$(lab_lb_sources)" >/dev/null
}

# The outer sources of the LBs' tunnels, for maglev-decap --from: each
# LB's port addresses (its `address` and `address6`) and the ipip source
# prefixes; br0 routes the tunnels to the backends without rewriting them.
lab_lb_sources() {
  local i list=""
  for i in $(seq "$LAB_LBS"); do
    list+="$(lb_addr4 "$i"),$(lb_addr6 "$i"),"
  done
  echo "${list}$LAB_IPIP_SOURCE4,$LAB_IPIP_SOURCE6"
}

mac_of() { in_ns "$1" cat "/sys/class/net/$2/address"; }

# Kill every process left in namespace NS (ours: the lab started them):
# TERM, up to 5 s, then KILL.
kill_ns_pids() {
  local ns=$1 pids _
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -z "$pids" ] && return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 50); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] && return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

topology_down() {
  local ns
  for ns in $(lab_namespaces); do
    kill_ns_pids "$ns"
  done
  for ns in $(lab_namespaces); do
    ip netns del "$ns" 2>/dev/null || true
  done
}

topology_up() {
  local i
  make_bridge
  for i in $(seq "$LAB_LBS"); do make_lb "$i"; done
  for i in $(seq "$LAB_BACKENDS"); do make_backend "$i"; done
  for i in $(seq "$LAB_CLIENTS"); do make_client "$i"; done
}
