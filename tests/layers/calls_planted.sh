#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/check-calls must catch what it is for: on objects built here, a
# target whose files call one way passes; one where two files call each
# other, or three call round in a ring, fails and names the files and
# the symbols.
# usage: calls_planted.sh CHECK_CALLS
set -u
check=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# target NAME FILE:BODY...: compile each file into $work/NAME/t.p/
target() {
  local name=$1 spec entries=""
  shift
  mkdir -p "$work/$name/t.p"
  for spec in "$@"; do
    printf '%s\n' "${spec#*:}" > "$work/$name/${spec%%:*}"
    cc -c -o "$work/$name/t.p/${spec%%:*}.o" "$work/$name/${spec%%:*}" ||
      fail "cc $name/${spec%%:*}"
    entries+="${entries:+,}{\"directory\": \"$work/$name\", \"file\": \"${spec%%:*}\", \"output\": \"t.p/${spec%%:*}.o\"}"
  done
  echo "[$entries]" > "$work/$name/compile_commands.json"
}

target oneway 'a.c:int fb(void); int fa(void) { return fb() + 1; }' \
  'b.c:int fc(void); int fb(void) { return fc() + 2; }' \
  'c.c:static int local(void) { return 3; } int fc(void) { return local(); }'
# a stale object (not in compile_commands.json), read, would close a
# circle: it defines what a.c calls and calls a.c
printf 'int fa(void); int fb(void) { return fa(); }\n' > "$work/stale.c"
cc -c -o "$work/oneway/t.p/z_stale.c.o" "$work/stale.c" || fail "cc stale"
out=$("$check" "$work/oneway" 2>&1) || fail "one-way calls refused: $out"
echo "passed: a.c -> b.c -> c.c"

# expect_circle NAME TEXT: check-calls on target NAME exits 1, printing TEXT
expect_circle() {
  local name=$1 text=$2 out rc
  out=$("$check" "$work/$name" 2>&1); rc=$?
  [ $rc -eq 1 ] || fail "$name: exit $rc, want 1: $out"
  grep -qF "t.p: files call in a circle: $text" <<< "$out" ||
    fail "$name not named: $out"
  echo "caught: $out"
}

target pair 'a.c:int fb(void); int fa(void) { return fb() + 1; }' \
  'b.c:int fa(void); int fb(void) { return 2; } int fd(void) { return fa(); }'
expect_circle pair 'a.c -> b.c (fb); b.c -> a.c (fa)'

# a ring of four, one step of it through data
target ring 'a.c:int fb(void); int fa(void) { return fb(); }' \
  'b.c:int fc(void); int fb(void) { return fc(); }' \
  'c.c:extern int shared; int fc(void) { return shared; }' \
  'd.c:int fa(void); int shared = 4; int fd(void) { return fa(); }'
expect_circle ring 'a.c -> b.c (fb); b.c -> c.c (fc); c.c -> d.c (shared); d.c -> a.c (fa)'
echo "calls planted: ok"
