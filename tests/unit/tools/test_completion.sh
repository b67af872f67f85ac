#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# maglevctl's bash completion against the built maglevctl, without a
# daemon: the command list and each command's arguments come from
# `maglevctl help`; VIP and backend names from a stand-in maglevctl that
# answers `-o json vips` and `backends VIP` as the daemon would and passes
# everything else to the real one.
# Usage: test_completion.sh COMPLETION_FILE MAGLEVCTL
set -euo pipefail
completion=$1 real=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

# complete EXPECTED WORD... : the completions offered for the last word
complete_is() {
  local expected=$1; shift
  local got
  got=$(bash -c 'source "$1"; shift; COMP_WORDS=("$@");
                 COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=();
                 _maglevctl; printf "%s\n" "${COMPREPLY[@]}" | sort | xargs' \
        _ "$completion" "$@")
  if [ "$got" != "$expected" ]; then
    echo "FAIL: [$*] offered \"$got\", expected \"$expected\""
    fails=$((fails + 1))
  else
    echo "ok: [$*] -> $got"
  fi
}

cat > "$work/maglevctl" <<STUB
#!/usr/bin/env bash
# the daemon's replies (docs/control-protocol.md), from the socket it is given
case "\$*" in
  "-s /run/test.sock -t 2 -o json vips")
    echo '{"ok":true,"generation":3,"vips":[{"name":"web","address":"192.0.2.10"},{"name":"dns","address":"2001:db8::53"}]}' ;;
  "-s /run/test.sock -t 2 -o json backends web")
    echo '{"ok":true,"generation":3,"backends":[{"vip":"web","name":"web-1"},{"vip":"web","name":"web-2"}]}' ;;
  *-o\ json*) exit 3 ;;   # any other socket: no daemon
  *) exec "$real" "\$@" ;;
esac
STUB
chmod +x "$work/maglevctl"
stub=$work/maglevctl

# every command of the compiled-in table, and nothing else
commands=$("$real" help | sed -n '/^commands:/,$s/^  \([a-z][a-z-]*\).*/\1/p' | sort -u | xargs)
case " $commands " in *" status "*" vips "*) ;; *) echo "FAIL: help lists no commands: $commands"; exit 1 ;; esac
complete_is "$commands" "$real" ""
complete_is "undrain" "$real" "und"
complete_is "json text" "$real" -o ""
complete_is "--dry-run --force --help" "$real" reload -
complete_is "add remove" "$real" whatif web ""
# names from the daemon, through the socket given with -s
complete_is "dns web" "$stub" -s /run/test.sock drain ""
complete_is "web" "$stub" -s /run/test.sock table w
complete_is "web-1 web-2" "$stub" -s /run/test.sock drain web ""
complete_is "web-1 web-2" "$stub" drain -s /run/test.sock web ""
# no daemon: nothing, and no error
complete_is "" "$stub" -s /run/none.sock drain ""
# past the last argument: nothing
complete_is "" "$stub" -s /run/test.sock undrain web web-1 ""

echo "completion: $fails failed"
[ "$fails" -eq 0 ]
