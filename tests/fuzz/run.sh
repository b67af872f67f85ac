#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fuzz the packet parser (plus encapsulation and ICMP replies) with
# libFuzzer, ASan and UBSan for a bounded time.
#
#   tests/fuzz/run.sh [SECONDS [BUILD_DIR]]     (defaults: 60, build-fuzz)
#
# Builds only the fuzz targets, in a clang build dir of its own. Seeds are
# the stored corpus (tests/fuzz/corpus/parse) plus a fresh copy generated
# by fuzz_gen_corpus; new inputs and crash artifacts go under
# BUILD_DIR/fuzz-work, never into the source tree. Exits non-zero on a
# crash, leak or invariant failure.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-60}
build=${2:-$root/build-fuzz}

if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" "$root" -Dfuzz=true -Dtests=true
fi
ninja -C "$build" tests/fuzz/fuzz_parse tests/fuzz/fuzz_gen_corpus

work=$build/fuzz-work
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
"$build/tests/fuzz/fuzz_gen_corpus" "$work/seeds"

"$build/tests/fuzz/fuzz_parse" \
	-max_total_time="$secs" \
	-max_len=2048 \
	-print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" \
	"$work/corpus" "$work/seeds" "$here/corpus/parse"
