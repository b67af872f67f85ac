#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The shipped alert rules (conf/prometheus/maglevd-rules.yml): promtool
# checks them and runs their unit tests (maglevd-rules.test.yml).
# Usage: rules.sh SOURCE_ROOT. Exits 77 (skipped) only when promtool
# (Debian package prometheus) is not installed.
set -eu
root=$1
if ! command -v promtool >/dev/null 2>&1; then
	echo "promtool not installed: skipped"
	exit 77
fi
promtool check rules "$root/conf/prometheus/maglevd-rules.yml"
promtool test rules "$root/conf/prometheus/maglevd-rules.test.yml"
# Every runbook_url names a section of docs/troubleshooting.md (GitHub's
# anchors: lower case, punctuation but - and _ dropped, spaces as -).
python3 - "$root" <<'PY'
import re, sys
root = sys.argv[1]
doc = open(f"{root}/docs/troubleshooting.md").read()
anchors = {re.sub(r"[^a-z0-9_ -]", "", h.strip().lower()).replace(" ", "-")
           for h in re.findall(r"^#+ (.*)$", doc, re.M)}
rules = open(f"{root}/conf/prometheus/maglevd-rules.yml").read()
alerts = re.findall(r"^\s+- alert: (\S+)", rules, re.M)
links = re.findall(r'runbook_url: "docs/troubleshooting\.md#([^"]+)"', rules)
if len(links) != len(alerts):
    sys.exit(f"{len(alerts)} alerts but {len(links)} runbook links")
missing = [a for a in links if a not in anchors]
if missing:
    sys.exit(f"runbook anchors with no section: {missing}")
print(f"{len(links)} runbook links resolve")
PY
