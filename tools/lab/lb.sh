# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# maglevd inside a lab LB namespace (sourced by tools/lab/lab). State in
# $LAB_STATE/lbN/: maglevd.yaml (written by "lab up"), maglevd.pid,
# maglevd.log, stats.json (--stats-file), maglevd.sock (control socket).

lb_dir() { echo "$LAB_STATE/lb$1"; }

lb_running() { pid_alive "$(lb_dir "$1")/maglevd.pid"; }

# A maglevd killed with SIGKILL leaves its steering program attached, and
# the AF_XDP driver then refuses to attach another. Only ours is removed.
lb_remove_stale_xdp() {
  local ns
  ns=$(ns_lb "$1")
  if in_ns "$ns" ip -d link show lb0 | grep -q "prog/xdp .* name mlv_xdp_steer "; then
    echo "lab: removing a stale steering program from lb0 in $ns" >&2
    in_ns "$ns" ip link set dev lb0 xdp off
  fi
}

# lb_start I CONFIG [MAGLEVD ARGS...]: start maglevd in LB I's
# namespace and wait (up to 60 s) for its first stats file, which it
# writes once start-up is complete (ports up, workers running). CONFIG
# "" is the one "lab up" wrote.
lb_start() {
  local i=$1 cfg=$2 dir ns pid _
  shift 2
  dir=$(lb_dir "$i") ns=$(ns_lb "$i")
  cfg=${cfg:-$dir/maglevd.yaml}
  [ -f "$cfg" ] || die "no config $cfg (lab up writes one)"
  lb_running "$i" && die "maglevd already runs in $ns (pid $(cat "$dir/maglevd.pid")); lab lb stop $i"
  lb_remove_stale_xdp "$i"
  rm -f "$dir/stats.json"
  echo "=== $(date '+%F %T') maglevd -c $cfg" >> "$dir/maglevd.log"
  # ip netns exec directly (it execs maglevd): $! must be maglevd's pid
  ip netns exec "$ns" "$MLV_MAGLEVD" -c "$cfg" --stats-file "$dir/stats.json" \
    --stats-interval 200 "$@" </dev/null >>"$dir/maglevd.log" 2>&1 &
  pid=$!
  echo "$pid" > "$dir/maglevd.pid"
  for _ in $(seq 600); do
    [ -f "$dir/stats.json" ] && break
    if ! proc_alive "$pid"; then
      rm -f "$dir/maglevd.pid"
      echo "lab: maglevd in $ns exited during start-up; its log:" >&2
      tail -n 30 "$dir/maglevd.log" >&2
      return 1
    fi
    sleep 0.1
  done
  if [ ! -f "$dir/stats.json" ]; then
    echo "lab: maglevd in $ns not up after 60 s; stopping it" >&2
    lb_stop "$i"
    return 1
  fi
  echo "lab: maglevd running in $ns (pid $pid), log $dir/maglevd.log"
}

# lb_stop I: SIGTERM (clean stop: ports closed, steering detached) and up
# to 30 s to finish, then SIGKILL and remove what it left attached.
lb_stop() {
  local i=$1 dir pid _
  dir=$(lb_dir "$i")
  [ -f "$dir/maglevd.pid" ] || return 0
  pid=$(cat "$dir/maglevd.pid")
  if kill -TERM "$pid" 2>/dev/null; then
    for _ in $(seq 300); do
      proc_alive "$pid" || break
      sleep 0.1
    done
    if proc_alive "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
      echo "lab: maglevd (pid $pid) ignored SIGTERM for 30 s; killed" >&2
    fi
  fi
  rm -f "$dir/maglevd.pid"
  ns_exists "$(ns_lb "$i")" && lb_remove_stale_xdp "$i"
  return 0
}

lb_reload() {
  local i=$1 dir
  dir=$(lb_dir "$i")
  lb_running "$i" || die "maglevd is not running in $(ns_lb "$i")"
  kill -HUP "$(cat "$dir/maglevd.pid")"
}

lb_status() {
  local i=$1 dir ns st="stopped" xdp
  dir=$(lb_dir "$i") ns=$(ns_lb "$i")
  lb_running "$i" && st="running (pid $(cat "$dir/maglevd.pid"))"
  xdp=$(in_ns "$ns" ip -d link show lb0 | grep -o "prog/xdp id [0-9]* name [^ ]*" || echo "no XDP program")
  echo "  lb$i  $(lb_addr4 "$i") $(lb_addr6 "$i")  mac $(mac_of "$ns" lb0)  maglevd $st; lb0: $xdp"
}
