#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/check-layers must catch what it is for: on a copy of the tree with
# one wrong thing planted at a time, it exits 1 and names the file and
# line; on the unchanged copy it exits 0.
# usage: planted.sh CHECK_LAYERS SOURCE_ROOT
set -u
check=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

fresh() {
  rm -rf "$work/t" && mkdir "$work/t"
  for d in control dataplane daemon tools tests docs; do
    cp -r "$src/$d" "$work/t/" || fail "copy $d"
  done
}

# expect_caught FILE TEXT PATTERN: append TEXT to FILE, expect PATTERN
expect_caught() {
  local file=$1 text=$2 pattern=$3 out rc line
  fresh
  printf '%s\n' "$text" >> "$work/t/$file"
  line=$(wc -l < "$work/t/$file")
  out=$("$check" --root "$work/t" 2>&1); rc=$?
  [ $rc -eq 1 ] || fail "$file + '$text': exit $rc, want 1: $out"
  grep -qF "$file:$line: " <<< "$out" || fail "$file:$line not named: $out"
  grep -qE "$pattern" <<< "$out" || fail "no /$pattern/ in: $out"
  echo "caught: $file:$line $text"
}

fresh
"$check" --root "$work/t" > /dev/null || fail "the unchanged tree does not pass"

expect_caught control/base/error.c '#include "daemon/daemon.h"' \
  'control/base may not include daemon \(a higher layer\)'
expect_caught control/generation/stats.c '#include "dataplane/worker/worker.h"' \
  'may not include dataplane/worker \(a higher layer\)'
expect_caught control/health/http.c '#include "control/protocol/spec.h"' \
  'control/health may not include control/protocol \(its own layer\)'
expect_caught control/ctl/server.c '#include "control/health/health_internal.h"' \
  'internal to control/health/'
expect_caught control/ctl/rates.c '#include "server.h"' \
  'path from the root'
expect_caught control/ctl/meson.build "x = files('../base/error.c')" \
  'a source file of another folder'
# expect_table SED PATTERN: edit docs/architecture.md with SED, expect
# PATTERN naming the table's line
expect_table() {
  local script=$1 pattern=$2 out rc
  fresh
  cp "$work/t/docs/architecture.md" "$work/arch.before"
  sed -i "$script" "$work/t/docs/architecture.md"
  ! cmp -s "$work/arch.before" "$work/t/docs/architecture.md" ||
    fail "architecture.md $script: the edit matched nothing"
  out=$("$check" --root "$work/t" 2>&1); rc=$?
  [ $rc -eq 1 ] || fail "architecture.md $script: exit $rc, want 1: $out"
  grep -qE "docs/architecture.md:[0-9]+: $pattern" <<< "$out" ||
    fail "no /$pattern/ in: $out"
  echo "caught: architecture.md $script"
}

# an edge the Uses table leaves out, and one it names that is not there
expect_table 's/| `generation`, `health`, `protocol`, `config`, `tables`, `packet`, `bpf\/check_path`/| `generation`, `health`, `protocol`, `config`, `packet`, `bpf\/check_path`/' \
  'control/ctl uses control/tables \(control/ctl/[a-z_]+\.[ch]:[0-9]+\), not in its Uses cell'
expect_table 's/| `publish`, `view`, `packet`, `ports`, `config`, `tables` |/| `publish`, `view`, `packet`, `ports`, `config`, `tables`, `health` |/' \
  "dataplane/worker's Uses cell names control/health, which none of its files include"
echo "planted: ok"
