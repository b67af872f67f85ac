#!/bin/bash
# run.sh CONFIG SECONDS
B=${B:-/work/main/build-daemon/daemon/maglevd}
rm -f /tmp/bench/s.json
$B -c $1 --stats-file /tmp/bench/s.json --stats-interval 500 > /tmp/bench/log 2>&1 &
P=$!
sleep 2; cp /tmp/bench/s.json /tmp/bench/a.json
sleep ${2:-4}; cp /tmp/bench/s.json /tmp/bench/b.json
kill $P; wait $P
python3 - <<'PY'
import json
a=json.load(open('/tmp/bench/a.json')); b=json.load(open('/tmp/bench/b.json'))
dt=b['time']-a['time']
ca=a['totals']['counters']; cb=b['totals']['counters']
rx=cb['rx_packets']-ca['rx_packets']; fw=cb['forwarded']-ca['forwarded']
cyc=cb['busy_cycles']-ca['busy_cycles']
print("rx %.2f Mpps, fwd %.2f Mpps, %.1f cycles/pkt, drops %s" % (rx/dt/1e6, fw/dt/1e6, cyc/max(rx,1), {k:v for k,v in b['totals']['drops'].items() if v}))
PY
