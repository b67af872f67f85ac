#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One packet test through the real daemon:
#   generate the scenario's input pcap and config (pkt-gen), run maglevd on a
#   net_pcap port reading it, wait until the daemon's stats file shows every
#   frame received, stop it with SIGTERM (so the tx pcap is complete), and
#   verify the output and the counters (pkt-check).
# The "storm" scenario instead feeds frames through a FIFO while the daemon
# reloads RELOADS times (pkt-storm), then checks the same way; a paced
# scenario (pkt-gen says so) is fed through a FIFO at each frame's time
# (pkt-pace), and checked with the window the feeder measured.
#
# Usage: run-packet-test.sh SCENARIO WORKDIR MAGLEVD TOOLDIR [RELOADS]
#   TOOLDIR holds pkt-gen, pkt-check, pkt-stat, pkt-storm, pkt-pace.
# Environment: PKT_TIMEOUT (seconds per wait, default 60).
set -euo pipefail

scenario=$1 work=$2 maglevd=$3 tools=$4 reloads=${5:-100}
timeout_s=${PKT_TIMEOUT:-60}
pid="" sockdir=""

say() { printf 'packet-%s: %s\n' "$scenario" "$*"; }
fail() {
  say "FAIL: $*"
  if [ -f "$work/maglevd.log" ]; then
    say "last lines of $work/maglevd.log:"
    tail -n 30 "$work/maglevd.log" | sed 's/^/    /'
  fi
  exit 1
}
cleanup() {
  # only the processes this script started, by pid
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
  if [ -n "$sockdir" ]; then rm -rf "$sockdir"; fi
}
trap cleanup EXIT

[ -x "$maglevd" ] || fail "maglevd not found at $maglevd"
rm -rf "$work"
mkdir -p "$work"
# the control socket path must fit sun_path (107 bytes): keep it short
sockdir=$(mktemp -d /tmp/mlv-pkt.XXXXXX)

gen=$("$tools/pkt-gen" "$scenario" "$work" "$sockdir/maglevd.sock") \
  || fail "pkt-gen failed"
frames=${gen%% *}

start_daemon() {
  "$maglevd" -c "$work/config.yaml" --stats-file "$work/stats.json" \
    --stats-interval 10 >"$work/maglevd.log" 2>&1 &
  pid=$!
  say "maglevd started (pid $pid)"
}

# SIGTERM, then wait (bounded) for the exit and collect the status.
stop_daemon() {
  kill -TERM "$pid" 2>/dev/null || fail "maglevd exited before SIGTERM"
  "$tools/pkt-stat" wait-exit "$pid" "$timeout_s" \
    || fail "maglevd did not exit within ${timeout_s}s of SIGTERM"
  local rc=0
  wait "$pid" || rc=$?
  pid=""
  [ "$rc" -eq 0 ] || fail "maglevd exited with status $rc after SIGTERM"
  say "maglevd stopped cleanly"
}

if [ "$scenario" = storm ]; then
  mkfifo "$work/in.fifo"
  cp "$work/config-a.yaml" "$work/config.yaml"
  start_daemon
  fed=$("$tools/pkt-storm" "$work" "$pid" "$reloads" "$((timeout_s * 4))") \
    || fail "feeding frames while reloading failed"
  say "$fed frames fed across $reloads reloads"
  "$tools/pkt-stat" wait "$work/stats.json" rx_packets "$fed" "$timeout_s" "$pid" \
    || fail "maglevd did not receive all $fed frames"
  stop_daemon
  "$tools/pkt-check" storm "$work" --fed "$fed" || fail "output check failed"
elif [ "$gen" = "$frames paced" ]; then
  mkfifo "$work/in.fifo"
  start_daemon
  window=$("$tools/pkt-pace" "$scenario" "$work" "$pid" "$timeout_s") \
    || fail "feeding frames in real time failed"
  say "$frames frames fed in real time (limited flows over ${window} ms)"
  "$tools/pkt-stat" wait "$work/stats.json" rx_packets "$frames" "$timeout_s" "$pid" \
    || fail "maglevd did not receive all $frames frames"
  stop_daemon
  "$tools/pkt-check" "$scenario" "$work" --window-ms "$window" \
    || fail "output check failed"
else
  say "$frames input frames generated"
  start_daemon
  "$tools/pkt-stat" wait "$work/stats.json" rx_packets "$frames" "$timeout_s" "$pid" \
    || fail "maglevd did not receive all $frames frames"
  stop_daemon
  "$tools/pkt-check" "$scenario" "$work" || fail "output check failed"
fi
say "PASS"
