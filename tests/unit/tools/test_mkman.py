#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/man/mkman: maglevd.yaml(5) carries every key row of
docs/config.md as an entry of its own, scdoc accepts the result, and
Markdown it does not know stops it instead of being dropped.
Usage: test_mkman.py MKMAN CONFIG_MD HEADER_SCD"""
import os
import re
import subprocess
import sys
import tempfile

mkman, config_md, header = sys.argv[1:4]
fails = 0


def check(ok, what):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += not ok


r = subprocess.run([sys.executable, mkman, "markdown", config_md, header],
                   capture_output=True, text=True)
check(r.returncode == 0, f"mkman on config.md: exit {r.returncode} {r.stderr}")
entries = set(r.stdout.splitlines())
keys = re.findall(r"^\| `([a-z_.\[\]]+)` \|", open(config_md).read(), re.M)
check(len(keys) > 50, f"{len(keys)} keys in config.md")
missing = [k for k in keys
           if "*" + re.sub(r"([\\*_])", r"\\\1", k) + "*" not in entries]
check(not missing, f"every key is an entry of the page (missing: {missing[:5]})")
s = subprocess.run(["scdoc"], input=r.stdout, capture_output=True, text=True)
check(s.returncode == 0 and ".SH NAME" in s.stdout,
      f"scdoc accepts it: {s.returncode} {s.stderr}")

with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.md")
    for text, what in (("# t\n\n<table><tr></tr></table>\n", "HTML"),
                       ("# t\n\n| a | b |\n|---|---|\n| 1 |\n", "short row"),
                       ("# t\n\n```\nno end\n", "unclosed fence"),
                       ("# t\n\nan `open code span\n", "open code span")):
        with open(bad, "w") as f:
            f.write(text)
        r = subprocess.run([sys.executable, mkman, "markdown", bad, header],
                           capture_output=True, text=True)
        check(r.returncode != 0 and "mkman:" in r.stderr,
              f"{what} is refused: exit {r.returncode} {r.stderr.strip()}")

print(f"mkman: {fails} failed")
sys.exit(1 if fails else 0)
