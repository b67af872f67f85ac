#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dp-bench: the data-plane benchmark, side by side in one run.
#
# For every scenario, on the same generated pcap and the same single
# forwarding core: dpdk-testpmd in io mode, dpdk-testpmd in 5tswap mode,
# then maglevd (two-arm: net_pcap rx with infinite_rx -> net_null no-rx,
# one worker, idle: poll), then dp-bench-floor (floor.c: only the work
# any conntrack load balancer must do; IPv4 ipip scenarios). Prints a
# table (or --json) of Mpps, the ratio maglevd / 5tswap against its
# goals (docs/benchmarks.md, "Data-plane set-up"), and maglevd's cycles
# per packet; a second table sets the floor beside them (floor / 5tswap,
# maglevd / floor). Rates are per second of the forwarding thread's CPU
# time (the JSON has them per wall-clock second too), so that other work
# on the machine's cores does not pass for a slow forwarder.
# docs/benchmarks.md ("Data plane") explains the setup and the figures.
#
#   dp-bench [--quick] [--json] [--only REGEX] [--cores MAIN,FWD]
#            [--duration S] [--warmup S] [--repeat N] [--work DIR] [--keep]
#            [--save FILE] [--maglevd PATH] [--testpmd PATH] [--floor PATH]
#            [--against PATH]
#
# --repeat N runs the measurements of a scenario N times in turn
# (io, 5tswap, maglevd, floor, io, ...) and reports each one's median run: on a
# shared machine a neighbour's burst of work then spoils one sample, not
# the figure.
#
# --against PATH compares two builds instead: maglevd (--maglevd, A)
# and PATH (B), alone, in alternating order (A B, then B A, ...) --repeat
# times per scenario, nothing else run. It prints each pair's Mpps per
# worker CPU-second and B/A, then per scenario the median B/A and how
# many pairs B won; and, when both are measurement builds (meson
# -Dpass_cycles=true: dataplane/packet/pass_cycles.h), each run's TSC cycles per
# packet in maglevd's own passes and in the transmit flush (PMD code),
# and the median of B's own cycles over A's (lower is faster); and that
# ratio per cycle of the flush, the PMD's code, the same in both builds,
# whose cost follows the host's speed of the moment: own cycles per flush
# cycle compare the two builds without the host's drift between the runs
# of a pair. On a shared host whole-run rates move by ±15-40 % between
# runs; with the same build on both sides, single pairs' own cycles
# spread over 0.86-1.17, their own cycles per flush cycle over 0.95-1.07
# (docs/benchmarks.md, "Data-plane commands").
#
# --quick is the CI smoke: tiny pcaps, about a second per run; it fails
# (exit 1) if any run forwarded nothing, and asserts no speed. A full run
# reports a run that cannot be made as n/a with the reason, and still
# exits 0.
#
# Hugepages: each forwarder's mbuf pool holds the whole replayed file
# (net_pcap's infinite_rx keeps it there), so est1m needs about 1 GB of
# them for testpmd and 1.3 GB for maglevd (its conntrack table too).
# When fewer are free and dp-bench runs as root, it raises
# /proc/sys/vm/nr_hugepages (default-size pages) by what is missing for
# the run and restores the old value when it exits; when it cannot, the
# run is n/a with the reason.
#
# meson configures this file into the build directory with the paths of
# the programs it drives; run that copy (build-*/tools/bench/dp-bench/dp-bench).
set -u -o pipefail

MAGLEVD='@MAGLEVD@'
GEN='@GEN@'
RESULT='@RESULT@'
FLOOR='@FLOOR@'
TESTPMD=$(command -v dpdk-testpmd || echo /usr/bin/dpdk-testpmd)

QUICK=0 JSON=0 ONLY='' CORES=0,1 DURATION='' WARMUP='' REPEAT=1 WORK='' KEEP=0
SAVE='' AGAINST=''
# Longest wait for a process to start forwarding (EAL start-up, loading
# a pcap of a million frames into mbufs).
START_LIMIT_S=60

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
}

die() { echo "dp-bench: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK=1 ;;
	--json) JSON=1 ;;
	--only) ONLY=${2:?--only needs a regex}; shift ;;
	--cores) CORES=${2:?--cores needs MAIN,FWD}; shift ;;
	--duration) DURATION=${2:?}; shift ;;
	--warmup) WARMUP=${2:?}; shift ;;
	--repeat) REPEAT=${2:?}; shift ;;
	--work) WORK=${2:?}; shift ;;
	--keep) KEEP=1 ;;
	--save) SAVE=${2:?}; shift ;;
	--maglevd) MAGLEVD=${2:?}; shift ;;
	--testpmd) TESTPMD=${2:?}; shift ;;
	--floor) FLOOR=${2:?}; shift ;;
	--against) AGAINST=${2:?}; shift ;;
	-h|--help) usage; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done

[[ $CORES =~ ^([0-9]+),([0-9]+)$ ]] ||
	die "--cores: '$CORES' is not MAIN,FWD (two CPU numbers)"
MAIN_CPU=${BASH_REMATCH[1]} FWD_CPU=${BASH_REMATCH[2]}
[ "$MAIN_CPU" != "$FWD_CPU" ] || die "--cores: MAIN and FWD must differ"
if [ $QUICK = 1 ]; then
	DURATION=${DURATION:-1} WARMUP=${WARMUP:-0.5} SKIP=1
else
	DURATION=${DURATION:-5} WARMUP=${WARMUP:-1} SKIP=2
fi
[[ $DURATION =~ ^[0-9]+(\.[0-9]+)?$ && $WARMUP =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
	die "--duration/--warmup take seconds"
[[ $REPEAT =~ ^[1-9][0-9]?$ ]] || die "--repeat takes 1..99"
for p in "$MAGLEVD" "$GEN" "$RESULT" "$TESTPMD" "$FLOOR" ${AGAINST:+"$AGAINST"}; do
	[ -x "$p" ] || die "$p: not found or not executable"
done

if [ -z "$WORK" ]; then
	WORK=$(mktemp -d /tmp/dp-bench.XXXXXX) || die "cannot create a work dir"
	OWN_WORK=1
else
	mkdir -p "$WORK" || die "cannot create $WORK"
	OWN_WORK=0
fi
RESULTS=$WORK/results.jsonl
: > "$RESULTS"
CHILD=''

# vm.nr_hugepages before dp-bench raised it (see ensure_hugepages)
HUGE_ORIG=''

cleanup() {
	if [ -n "$CHILD" ]; then
		kill -KILL "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	if [ -n "$HUGE_ORIG" ]; then
		echo "$HUGE_ORIG" > /proc/sys/vm/nr_hugepages ||
			echo "dp-bench: cannot restore vm.nr_hugepages to $HUGE_ORIG" >&2
	fi
	if [ $KEEP = 0 ]; then
		rm -f "$WORK"/*.pcap "$WORK"/*.json "$WORK"/*.json.tmp.*
		[ $OWN_WORK = 1 ] && rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "dp-bench: $*" >&2; }

# ---- scenarios ---------------------------------------------------------
# name | description | goal (maglevd/5tswap; 0 none) | flows | frames |
# family | ip_len (0 smallest) | tcp flags | conntrack entries | forwarding |
# port MTU (maglevd) | mbuf data room (both forwarders)
# (forwarding ipip+src: ipip with the VIPs' ipip_source / ipip_source6)
#
# Both forwarders get a pool of FRAMES+16384 mbufs of the scenario's data
# room (2176 = DPDK's default). est1m's million frames take 768-byte mbufs
# (128 of headroom + maglevd's smallest MTU, 576, + 26 for Ethernet, VLAN
# and FCS), about 1 GB of hugepages instead of 2.4 GB.
# Established scenarios size the table at 16x their flows or more: 4-way
# buckets at higher loads overflow, and a flow in an overflowing bucket
# misses on every pass of the replayed file (new/pkt shows it). New-flow
# and full-table scenarios replay 4x more flows than entries, so a flow
# has been evicted (P > 0.9999) by the time the file repeats.
if [ $QUICK = 1 ]; then
	K=2000 BIG=65536 SMALL=1024
else
	K=64000 BIG=1048576 SMALL=16384
fi
EST="established TCP (ACK), $K flows tracked in $BIG entries"
SCENARIOS=(
"est-64B-ipip|$EST, 64-byte IPv4 frames, ipip|0.8|$K|$K|4|0|ack|$BIG|ipip|1600|2176"
"est-64B-gue|$EST, 64-byte IPv4 frames, gue|0.8|$K|$K|4|0|ack|$BIG|gue|1600|2176"
"est-64B-l2dsr|$EST, 64-byte IPv4 frames, l2dsr|0.8|$K|$K|4|0|ack|$BIG|l2dsr|1600|2176"
"est-64B-ipipsrc|$EST, 64-byte IPv4 frames, ipip with outer sources from a /28 (ipip_source)|0.8|$K|$K|4|0|ack|$BIG|ipip+src|1600|2176"
"est-1500B-ipip|$EST, 1500-byte IPv4 packets (1514-byte frames), ipip|0.8|$K|$K|4|1500|ack|$BIG|ipip|1600|2176"
"est-mixed-ipip|$EST, IPv4 and IPv6 alternating (60/74-byte frames), ipip|0.8|$K|$K|mixed|0|ack|$BIG|ipip|1600|2176"
"new-64B-ipip|new flows: every frame a new 5-tuple (SYN), $K tuples through $SMALL entries (miss + insert + eviction), 64-byte IPv4 frames, ipip|0.5|$K|$K|4|0|syn|$SMALL|ipip|1600|2176"
"ctfull-64B-ipip|conntrack full: $K established flows cycling through $SMALL entries, each frame evicts a live established entry, 64-byte IPv4 frames, ipip|0|$K|$K|4|0|ack|$SMALL|ipip|1600|2176"
)
if [ $QUICK = 0 ]; then
	SCENARIOS+=("est1m-64B-ipip|established TCP (ACK), 1M flows tracked in 4194304 entries, 64-byte IPv4 frames in 768-byte mbufs, ipip|0.8|1000000|1000000|4|0|ack|4194304|ipip|576|768")
fi

# ---- helpers -----------------------------------------------------------
# Stop the background process $CHILD: SIGINT, then SIGKILL after 15 s.
stop_child() {
	local i
	kill -INT "$CHILD" 2>/dev/null
	for ((i = 0; i < 150; i++)); do
		kill -0 "$CHILD" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$CHILD" 2>/dev/null
	wait "$CHILD" 2>/dev/null
	CHILD=''
}

# failure_reason LOG [ERR]: why a run failed, from the process's log
# (or from the snapshot tool's messages in ERR).
failure_reason() {
	local r
	r=$(grep -m1 -E 'Not enough mbufs|Creation of mbuf pool|Cannot allocate|cannot create a pool' "$1") ||
		r=$(tail -n1 "${2:-/dev/null}" 2>/dev/null | grep .) ||
		r=$(grep -iE 'error|fail|cannot' "$1" | grep -vE '[RT]X-errors' | tail -n1) ||
		r="exited without forwarding (log: $1)"
	echo "${r:0:300}"
}

na() { "$RESULT" na --scenario "$1" --run "$2" --reason "$3" >> "$RESULTS"; }

FAILED=0
# Runs of the current scenario that failed once: not tried again.
declare -A BROKEN

# Free hugepage memory in MiB (all sizes the kernel reports in
# /proc/meminfo: the default size).
free_huge_mib() {
	awk '/^HugePages_Free:/ {f = $2} /^Hugepagesize:/ {s = $2}
	     END {print int(f * s / 1024)}' /proc/meminfo
}

# pool_mib MBUFS DATA_ROOM: hugepage MiB of an mbuf pool. An object is
# the mempool's 64-byte header, the 128-byte struct rte_mbuf and the data
# room, in whole cache lines.
pool_mib() {
	echo $(( $1 * ((($2 + 128 + 63) / 64) * 64 + 64) / 1048576 ))
}

# ensure_hugepages MIB: make MIB MiB of hugepages free, raising
# vm.nr_hugepages (root only) if fewer are, by what is missing and only
# while 4 GiB of the machine's available memory stay outside hugepages;
# the old value is restored on exit. On failure sets HUGE_WHY and returns
# 1. Pools that cannot fit are refused here rather than by DPDK after it
# has taken every free hugepage for a moment, which would starve other
# DPDK processes. Not in a subshell: it records HUGE_ORIG for cleanup.
HUGE_WHY=''
ensure_hugepages() {
	local need=$1 free page_kb total avail_mib want
	HUGE_WHY=''
	free=$(free_huge_mib)
	[ "$need" -le "$free" ] && return 0
	page_kb=$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo)
	avail_mib=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
	total=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)
	if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/vm/nr_hugepages ] ||
	   [ -z "$page_kb" ] || [ -z "$total" ] || [ -z "$avail_mib" ]; then
		HUGE_WHY="needs about $need MiB of hugepages; $free MiB are free (run as root to let dp-bench raise vm.nr_hugepages)"
		return 1
	fi
	if [ $((need - free + 4096)) -gt "$avail_mib" ]; then
		HUGE_WHY="needs about $need MiB of hugepages; $free MiB are free, and $((need - free)) MiB more would leave less than 4 GiB of the $avail_mib MiB of available memory"
		return 1
	fi
	want=$((total + ((need - free) * 1024 + page_kb - 1) / page_kb))
	[ -n "$HUGE_ORIG" ] || HUGE_ORIG=$total
	say "raising vm.nr_hugepages from $total to $want for about $need MiB (restored on exit)"
	echo "$want" > /proc/sys/vm/nr_hugepages 2>/dev/null
	free=$(free_huge_mib)
	if [ "$need" -gt "$free" ]; then
		HUGE_WHY="needs about $need MiB of hugepages; only $free MiB are free after asking for $want pages (the kernel found $(cat /proc/sys/vm/nr_hugepages))"
		echo "$total" > /proc/sys/vm/nr_hugepages
		return 1
	fi
}

# The forwarding thread of testpmd, maglevd and the floor alike: EAL
# names the thread of lcore N "rte-worker-N", and all run theirs on
# lcore 1.
FWD_THREAD=rte-worker-1

# snap KIND INPUT OUT: wait for the running forwarder's next counter
# reading and save it with its forwarding thread's CPU time (snapshot.c).
snap() {
	"$RESULT" "snapshot-$1" --input "$2" --pid "$CHILD" --thread "$FWD_THREAD" \
		--out "$3" --timeout "$START_LIMIT_S"
}

# The window length between two testpmd snapshots, which come at its
# one-second statistics period: sleep half a period less than DURATION,
# then the second snapshot waits for the next block.
testpmd_sleep() { awk -v d="$DURATION" 'BEGIN {print (d > 0.5) ? d - 0.5 : 0}'; }

# run_testpmd SCENARIO MODE PCAP FRAMES MBUF_SIZE
run_testpmd() {
	local sc=$1 mode=$2 pcap=$3 frames=$4 room=$5 log=$WORK/$1.testpmd-$2.log
	local pre=$WORK/$1.testpmd-$2 mbufs=$(($4 + 16384)) i
	rm -f "$pre".*.json
	if ! ensure_hugepages $(($(pool_mib $mbufs "$room") + 64)); then
		na "$sc" "testpmd-$mode" "a pool of $mbufs mbufs of $room bytes $HUGE_WHY"
		FAILED=1 BROKEN[testpmd-$mode]=1
		return
	fi
	# io/5tswap forward port 0 -> port 1 with the chained topology; port
	# 1 (net_null, no-rx) receives nothing. The pool holds the whole
	# replayed file plus working room, in mbufs of maglevd's size.
	# Line-buffered, so every statistics block reaches the log when it
	# is printed.
	stdbuf -oL "$TESTPMD" --in-memory --no-pci --no-telemetry \
		--lcores="0@$MAIN_CPU,1@$FWD_CPU" \
		--vdev="net_pcap0,rx_pcap=$pcap,infinite_rx=1" \
		--vdev=net_null0,no-rx=1 -- \
		--forward-mode="$mode" --port-topology=chained --nb-cores=1 \
		--rxq=1 --txq=1 --burst=32 --total-num-mbufs=$mbufs \
		--mbuf-size="$room" \
		--no-flush-rx --no-lsc-interrupt --no-rmv-interrupt \
		--stats-period=1 < /dev/null > "$log" 2>&1 &
	CHILD=$!
	# The first SKIP blocks cover start-up; then the window.
	for ((i = 0; i < SKIP; i++)); do
		snap testpmd "$log" "$pre.start.json" 2> "$log.err" || break
	done
	if [ $i -eq $SKIP ] && snap testpmd "$log" "$pre.before.json" 2> "$log.err"; then
		sleep "$(testpmd_sleep)"
		snap testpmd "$log" "$pre.after.json" 2> "$log.err"
	fi
	if ! kill -0 "$CHILD" 2>/dev/null || [ ! -s "$pre.after.json" ]; then
		stop_child
		na "$sc" "testpmd-$mode" "$(failure_reason "$log" "$log.err")"
		FAILED=1 BROKEN[testpmd-$mode]=1
		return
	fi
	stop_child
	if ! "$RESULT" testpmd --scenario "$sc" --mode "$mode" --tsc-hz "$TSC_HZ" \
			--before "$pre.before.json" --after "$pre.after.json" \
			>> "$RESULTS" 2> "$log.err"; then
		na "$sc" "testpmd-$mode" "$(cat "$log.err")"
		FAILED=1 BROKEN[testpmd-$mode]=1
	fi
}

# The maglevd configuration of a scenario: two arms, one worker, busy
# polling, the VIPs of dp-bench-gen (tools/bench/dp-bench/flows.h) with 8
# backends each, and the same pool as testpmd's (dataplane.mbufs,
# dataplane.mbuf_size): net_pcap's infinite_rx holds every frame of the
# file in it. --lcores maps lcore 0 (control) and 1 (the worker) to the
# chosen CPUs.
# write_config CFG PCAP CT_ENTRIES FORWARDING MTU MBUFS MBUF_SIZE
write_config() {
	local cfg=$1 pcap=$2 ct=$3 fwd=${4%+src} mtu=$5 mbufs=$6 room=$7 i src4="" src6=""
	if [ "$4" = ipip+src ]; then
		src4=$'\n    ipip_source: 10.99.77.16/28'
		src6=$'\n    ipip_source6: "fd00:99:77::100/120"'
	fi
	cat > "$cfg" <<EOF
dataplane:
  eal_args: [--in-memory, --no-pci, --no-telemetry,
             "--lcores=0@$MAIN_CPU,1@$FWD_CPU",
             "--vdev=net_pcap0,rx_pcap=$pcap,infinite_rx=1",
             "--vdev=net_null0,no-rx=1"]
  workers: 1
  idle: poll
  mbufs: $mbufs
  mbuf_size: $room
  ports:
    - {name: ext, device: net_pcap0, address: 10.99.0.1, address6: "fd00:99::1",
       next_hop: "02:00:00:00:00:03", tx_port: int, mtu: $mtu}
    - {name: int, device: net_null0, address: 10.99.0.2, address6: "fd00:99::2",
       next_hop: "02:00:00:00:00:03", mtu: $mtu}
  conntrack: {entries_per_worker: $ct}
control:
  socket: $WORK/maglevd.sock
  metrics_listen: ""
vips:
  - name: web4
    address: 192.0.2.10
    port: 80
    protocol: tcp
    forwarding: $fwd$src4
    health: {type: none}
    backends:
EOF
	for i in 1 2 3 4 5 6 7 8; do
		echo "      - {name: b4-$i, address: 10.99.1.1$i, mac: \"02:00:00:00:01:1$i\"}"
	done >> "$cfg"
	cat >> "$cfg" <<EOF
  - name: web6
    address: "2001:db8::10"
    port: 80
    protocol: tcp
    forwarding: $fwd$src6
    health: {type: none}
    backends:
EOF
	for i in 1 2 3 4 5 6 7 8; do
		echo "      - {name: b6-$i, address: \"fd00:99:1::1$i\", mac: \"02:00:00:00:01:2$i\"}"
	done >> "$cfg"
}

# measure_child RUN SCENARIO STATS READY_FIELD PREFIX LOG: the child just
# started (maglevd or dp-bench-floor, both rewriting a stats file every
# 100 ms) measured between two snapshots, PREFIX.before.json and
# PREFIX.after.json, once READY_FIELD of its stats shows forwarded
# packets; the figures (dp-bench-result RUN) go to the results. The
# window is the child's own uptime between the two snapshots; the sleeps
# only set its length.
measure_child() {
	local run=$1 sc=$2 stats=$3 ready=$4 pre=$5 log=$6 deadline fwd
	deadline=$((SECONDS + START_LIMIT_S))
	while kill -0 "$CHILD" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
		fwd=$("$RESULT" number "$stats" "$ready" 2>/dev/null)
		[ "${fwd:-0}" -gt 0 ] && break
		sleep 0.1
	done
	if ! kill -0 "$CHILD" 2>/dev/null || [ "${fwd:-0}" -le 0 ]; then
		stop_child
		na "$sc" "$run" "$(failure_reason "$log")"
		FAILED=1 BROKEN[$run]=1
		return
	fi
	sleep "$WARMUP"
	if snap "$run" "$stats" "$pre.before.json" 2> "$log.err"; then
		sleep "$DURATION"
		snap "$run" "$stats" "$pre.after.json" 2> "$log.err"
	fi
	if ! kill -0 "$CHILD" 2>/dev/null || [ ! -s "$pre.after.json" ]; then
		stop_child
		na "$sc" "$run" "$(failure_reason "$log" "$log.err")"
		FAILED=1 BROKEN[$run]=1
		return
	fi
	stop_child
	if ! "$RESULT" "$run" --scenario "$sc" --tsc-hz "$TSC_HZ" \
			--before "$pre.before.json" --after "$pre.after.json" \
			>> "$RESULTS" 2> "$log.err"; then
		na "$sc" "$run" "$(cat "$log.err")"
		FAILED=1 BROKEN[$run]=1
	fi
}

# run_maglevd SCENARIO PCAP CT_ENTRIES FORWARDING MTU FRAMES MBUF_SIZE
run_maglevd() {
	local sc=$1 cfg=$WORK/$1.yaml log=$WORK/$1.maglevd.log
	local stats=$WORK/$1.stats.json mbufs=$(($6 + 16384))
	# the pool, the conntrack table (32-byte entries) and room for the
	# rest
	if ! ensure_hugepages $(($(pool_mib $mbufs "$7") + $3 * 32 / 1048576 + 64)); then
		na "$sc" maglevd "a pool of $mbufs mbufs of $7 bytes and $3 conntrack entries $HUGE_WHY"
		FAILED=1 BROKEN[maglevd]=1
		return
	fi
	write_config "$cfg" "$2" "$3" "$4" "$5" "$mbufs" "$7"
	rm -f "$stats" "$WORK/$sc.before.json" "$WORK/$sc.after.json"
	"$MAGLEVD" -c "$cfg" --stats-file "$stats" --stats-interval 100 \
		< /dev/null > "$log" 2>&1 &
	CHILD=$!
	measure_child maglevd "$sc" "$stats" totals.counters.forwarded \
		"$WORK/$sc" "$log"
}

# run_floor SCENARIO PCAP CT_ENTRIES MTU FRAMES MBUF_SIZE: dp-bench-floor
# with testpmd's ports, pinning and pool, and maglevd's conntrack size
# and MTU; measured like maglevd, from its stats file.
run_floor() {
	local sc=$1 log=$WORK/$1.floor.log stats=$WORK/$1.floor.json
	local pre=$WORK/$1.floor mbufs=$(($5 + 16384))
	if ! ensure_hugepages $(($(pool_mib $mbufs "$6") + $3 * 32 / 1048576 + 64)); then
		na "$sc" floor "a pool of $mbufs mbufs of $6 bytes and $3 conntrack entries $HUGE_WHY"
		FAILED=1 BROKEN[floor]=1
		return
	fi
	rm -f "$stats" "$pre.before.json" "$pre.after.json"
	"$FLOOR" --in-memory --no-pci --no-telemetry \
		--lcores="0@$MAIN_CPU,1@$FWD_CPU" \
		--vdev="net_pcap0,rx_pcap=$2,infinite_rx=1" \
		--vdev=net_null0,no-rx=1 -- \
		--ct-entries "$3" --mtu "$4" --mbufs "$mbufs" --mbuf-size "$6" \
		--stats-file "$stats" --stats-interval-ms 100 \
		< /dev/null > "$log" 2>&1 &
	CHILD=$!
	measure_child floor "$sc" "$stats" tx_packets "$pre" "$log"
}

# ---- --against: two maglevd builds, alternating ------------------------
AB=$WORK/ab.txt
: > "$AB"

# ab_record SCENARIO SIDE PAIR: the run just made (the last result line,
# and the pass cycles the worker logged, if any) as one line of $AB:
# scenario side pair mpps own flush ("-" when absent).
ab_record() {
	local last mpps pc
	last=$(tail -n 1 "$RESULTS")
	mpps=$(sed -n 's/.*"tool":"maglevd".*"mpps_cpu":\([0-9.e+-]*\).*/\1/p' <<< "$last")
	pc=$(sed -n 's/.*pass cycles per packet: .* flush \([0-9.]*\) own \([0-9.]*\) .*/\2 \1/p' \
		"$WORK/$1.maglevd.log" | tail -n 1)
	echo "$1 $2 $3 ${mpps:--} ${pc:-- -}" >> "$AB"
}

# ab_report: the pairs of $AB and their medians, per scenario.
ab_report() {
	awk '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? b / a : 0 }
	{ key = $1 SUBSEP $3; mpps[key, $2] = $4; own[key, $2] = $5; fl[key, $2] = $6
	  if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 }
	  if ($3 > np[$1]) np[$1] = $3 }
	END {
		print "scenario        pair   A Mpps   B Mpps    B/A   A own   B own    B/A A flush B flush  B/A per flush"
		for (k = 1; k <= ns; k++) {
			s = order[k]; nr = nw = no = nf = 0
			for (p = 1; p <= np[s]; p++) {
				K = s SUBSEP p
				r = ratio(mpps[K, "A"], mpps[K, "B"])
				o = ratio(own[K, "A"], own[K, "B"])
				f = ratio(fl[K, "B"], fl[K, "A"])   # flush A / flush B
				printf "%-15s %4d %8s %8s %6.3f %7s %7s %6.3f %7s %7s %14.3f\n", s, p,
					mpps[K, "A"], mpps[K, "B"], r, own[K, "A"], own[K, "B"], o,
					fl[K, "A"], fl[K, "B"], o * f
				if (r > 0) { rr[++nr] = r; if (r > 1) nw++ }
				if (o > 0) oo[++no] = o
				if (o > 0 && f > 0) of[++nf] = o * f
			}
			printf "%-15s median B/A %.3f (B faster in %d of %d pairs)", s, nr ? median(rr, nr) : 0, nw, nr
			if (no) printf "; own cycles B/A %.3f (lower: B faster)", median(oo, no)
			if (nf) printf "; per flush cycle %.3f", median(of, nf)
			printf "\n"
			delete rr; delete oo; delete of
		}
	}' "$AB"
}

# ---- main --------------------------------------------------------------
# This script and the snapshot polls stay off the forwarding CPU.
taskset -pc "$MAIN_CPU" $$ > /dev/null || die "cannot pin to CPU $MAIN_CPU"
TSC_HZ=$("$RESULT" tsc-hz) || die "cannot measure the TSC frequency"
say "work dir $WORK; forwarding CPU $FWD_CPU, main CPU $MAIN_CPU;" \
	"window ${DURATION}s after ${WARMUP}s warm-up; TSC $TSC_HZ Hz"
ran=0
MAGLEVD_A=$MAGLEVD
for s in "${SCENARIOS[@]}"; do
	IFS='|' read -r name desc goal flows frames family iplen flags ct fwd mtu room <<< "$s"
	[ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]] && continue
	ran=$((ran + 1))
	pcap=$WORK/$name.pcap
	"$RESULT" scenario --name "$name" --desc "$desc" --goal "$goal" \
		--flows "$flows" --frames "$frames" --ct-entries "$ct" \
		--forwarding "$fwd" >> "$RESULTS" || exit 1
	"$GEN" -o "$pcap" --flows "$flows" --packets "$frames" \
		--family "$family" --ip-len "$iplen" --flags "$flags" > /dev/null ||
		die "$name: cannot write $pcap"
	BROKEN=()
	if [ -n "$AGAINST" ]; then
		for ((r = 1; r <= REPEAT; r++)); do
			order="A B"
			[ $((r % 2)) = 0 ] && order="B A"
			for side in $order; do
				bin=$MAGLEVD_A
				[ "$side" = B ] && bin=$AGAINST
				say "$name: maglevd $side ($r/$REPEAT)"
				MAGLEVD=$bin run_maglevd "$name" "$pcap" "$ct" "$fwd" "$mtu" "$frames" "$room"
				ab_record "$name" "$side" "$r"
			done
		done
		[ $KEEP = 1 ] || rm -f "$pcap"
		continue
	fi
	# The floor forwards IPv4 over ipip only (floor_path.h).
	runs="testpmd-io testpmd-5tswap maglevd"
	[ "$family" = 4 ] && [ "${fwd%+src}" = ipip ] && runs="$runs floor"
	for ((r = 1; r <= REPEAT; r++)); do
		for run in $runs; do
			[ -n "${BROKEN[$run]:-}" ] && continue
			say "$name: $run ($r/$REPEAT)"
			case $run in
			testpmd-*) run_testpmd "$name" "${run#testpmd-}" "$pcap" "$frames" "$room" ;;
			maglevd) run_maglevd "$name" "$pcap" "$ct" "$fwd" "$mtu" "$frames" "$room" ;;
			floor) run_floor "$name" "$pcap" "$ct" "$mtu" "$frames" "$room" ;;
			esac
		done
	done
	[ $KEEP = 1 ] || rm -f "$pcap"
done
[ $ran -gt 0 ] || die "no scenario matches --only '$ONLY'"

[ -n "$SAVE" ] && { cp "$RESULTS" "$SAVE" || die "cannot write $SAVE"; }
if [ -n "$AGAINST" ]; then
	ab_report
	[ $QUICK = 1 ] && [ $FAILED = 1 ] && { KEEP=1; exit 1; }
	exit 0
fi
if [ $JSON = 1 ]; then
	"$RESULT" report --json "$RESULTS" || exit 1
else
	"$RESULT" report "$RESULTS" || exit 1
fi
if [ $QUICK = 1 ] && [ $FAILED = 1 ]; then
	say "smoke failed: a run forwarded no packets (see n/a above; logs in $WORK)"
	KEEP=1
	exit 1
fi
exit 0
