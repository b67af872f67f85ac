#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# dp-bench-result report on a results file made up here: the ratio of
# record is of the medians, and the repeat-by-repeat ratios pair each
# maglevd (and floor) run with the 5tswap run of its repeat (min,
# median, max; the JSON lists in run order), and are left out when the
# runs do not pair.
# Usage: report-test.sh DP_BENCH_RESULT
set -euo pipefail
RESULT=$1
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

rec() { echo "$1" >> "$DIR/$2"; }
for f in paired.jsonl unpaired.jsonl; do
	rec '{"tool":"scenario","scenario":"sc","description":"made up","goal":0.5}' $f
	for r in "40 20 30" "20 12 16" "30 12 15"; do
		set -- $r
		rec "{\"tool\":\"testpmd\",\"scenario\":\"sc\",\"mode\":\"io\",\"mpps_cpu\":50}" $f
		rec "{\"tool\":\"testpmd\",\"scenario\":\"sc\",\"mode\":\"5tswap\",\"mpps_cpu\":$1}" $f
		rec "{\"tool\":\"floor\",\"scenario\":\"sc\",\"mpps_cpu\":$3}" $f
		[ "$f" = unpaired.jsonl ] && [ "$1" = 30 ] && continue
		rec "{\"tool\":\"maglevd\",\"scenario\":\"sc\",\"mpps_cpu\":$2}" $f
	done
done

fail() { echo "report-test: $*" >&2; exit 1; }

out=$("$RESULT" report "$DIR/paired.jsonl")
# medians 12 over 30: the ratio of record, below the goal
grep -Eq '^sc +50\.00 +30\.00 +12\.00 +0\.40 .*>= 0\.5: MISSED' <<< "$out" ||
	fail "ratio of the medians: $out"
# repeats 20/40, 12/20, 12/30; floor 30/40, 16/20, 15/30
grep -Eq '^sc +3 +0\.40 +0\.50 +0\.60 +0\.50 +0\.75 +0\.80$' <<< "$out" ||
	fail "repeat-by-repeat line: $out"
json=$("$RESULT" report --json "$DIR/paired.jsonl")
python3 - "$json" <<'PY' || fail "JSON: $json"
import json, sys
s = json.loads(sys.argv[1])["scenarios"][0]
assert [round(x, 6) for x in s["ratio_maglevd_5tswap_by_repeat"]] == [0.5, 0.6, 0.4], s
assert [round(x, 6) for x in s["ratio_floor_5tswap_by_repeat"]] == [0.75, 0.8, 0.5], s
assert abs(s["ratio_maglevd_5tswap"] - 0.4) < 1e-9, s
PY

out=$("$RESULT" report "$DIR/unpaired.jsonl")
grep -q 'repeat by repeat' <<< "$out" && fail "paired a missing run: $out"
json=$("$RESULT" report --json "$DIR/unpaired.jsonl")
python3 - "$json" <<'PY' || fail "JSON pairs a missing run: $json"
import json, sys
s = json.loads(sys.argv[1])["scenarios"][0]
assert "ratio_maglevd_5tswap_by_repeat" not in s, s
assert len(s["ratio_floor_5tswap_by_repeat"]) == 3, s
PY
echo "report-test: ok"
