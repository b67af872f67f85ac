#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A bad YAML edit is rejected and traffic is unaffected: after a reload of
an invalid file the generation and every table fingerprint stay as they
were, the failure is counted and logged with its file:line:col, long-lived
connections see nothing, and new flows still spread over exactly the old
backends. A copy of the file cut short and written in place (valid YAML
that drops three of four VIPs) is refused by the reload budget the same
way. A good edit afterwards still applies.

usage: test_bad_yaml.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import os
import re
import subprocess

import binomial
import lablib
from lablib import check, log

FLOWS = 900
WEIGHTS = {"be1": 100, "be2": 100, "be3": 100}


def fingerprints(stats):
    return {v["name"]: v["fingerprint"] for v in stats["vips"]}


def test(lab):
    good = lab.config(backends="be1,be2,be3")
    lab.write_config(good)
    lab.start_lb()
    lab.require_steering()
    conns = [lab.longconn(4, 9), lab.longconn(6, 9)]
    marks = [lc.mark() for lc in conns]
    before = lab.stats()

    # A typo in a key (docs/config.md's own example) and, in the same edit, a
    # backend added: a partial apply would let be4 in.
    bad = lab.config(backends="be1,be2,be3,be4").replace(
        "    backends:", "    backnds:", 1)
    check(bad != good, "could not make the bad edit")
    lab.write_config(bad)
    maglevd = os.path.join(lab.build, "daemon", "maglevd")
    p = subprocess.run([maglevd, "--check-config", lab.config_path()],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 1 and "backnds" in p.stderr,
          "--check-config accepted the bad file: %r" % p.stderr)
    lab.reload()
    lablib.wait_until(lambda: lab.stats()["reloads"]["failed"]
                      > before["reloads"]["failed"],
                      "the reload to be rejected (reloads.failed)", 10)
    after = lab.stats()
    check(after["generation"] == before["generation"],
          "generation moved on a rejected reload: %d -> %d"
          % (before["generation"], after["generation"]))
    check(fingerprints(after) == fingerprints(before),
          "tables changed on a rejected reload: %s -> %s"
          % (fingerprints(before), fingerprints(after)))
    logged = re.search(re.escape(lab.config_path()) + r":\d+:\d+: .*backnds",
                       lab.lb_log())
    check(logged, "the maglevd log does not name the error with "
          "file:line:col")
    log("rejected: %s" % logged.group(0))

    # The control socket's reload (if wired) answers with the errors.
    try:
        lab.require_control_socket()
        reply = lab.ctl(1, "reload", check_ok=False)
        check(reply and not reply["ok"] and any(
            "backnds" in e for e in reply.get("errors", [])),
            "maglevctl reload of the bad file: %s" % reply)
        check(reply["generation"] == before["generation"],
              "maglevctl reload: generation %s" % reply["generation"])
        log("maglevctl reload: refused, %s" % reply["errors"][0])
    except lablib.Skip as e:
        log("maglevctl reload not tested: %s" % e)

    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, rounds=10)
    for proto, family in [("http", 4), ("http", 6)]:
        r = lab.burst(proto, family, FLOWS)
        check(r["failed"] == 0, "%s IPv%d after the rejected reload: %s"
              % (proto, family, r["errors"]))
        problems = binomial.check_counts(r["backends"], WEIGHTS, checks=2)
        check(not problems, "IPv%d flows after the rejected reload: %s"
              % (family, problems))
        log("%s IPv%d: %s" % (proto, family,
                             binomial.describe(r["backends"], WEIGHTS)))

    # A copy cut short and written in place: valid YAML that keeps one VIP
    # of four. The reload budget refuses it whole; long-lived connections
    # and new flows see nothing.
    failed = lab.stats()["reloads"]["failed"]
    marks = [lc.mark() for lc in conns]
    first_vip = good.index("  - name:", good.index("\nvips:\n"))
    cut = good[:good.index("  - name:", first_vip + 1)]
    with open(lab.config_path(), "w") as f:
        f.write(cut)
    lab.reload()
    lablib.wait_until(lambda: lab.stats()["reloads"]["failed"] > failed,
                      "the truncated file to be refused", 10)
    after = lab.stats()
    check(after["generation"] == before["generation"] and
          fingerprints(after) == fingerprints(before),
          "the truncated file changed the tables: %s" % fingerprints(after))
    refused = re.search(r"refused: it removes 3 of 4 VIPs .*"
                        r"control\.reload_budget\.vips_removed", lab.lb_log())
    check(refused, "the log does not name the budget the file exceeds")
    log("truncated file: %s" % refused.group(0))
    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, rounds=10)
    for family in (4, 6):
        r = lab.burst("http", family, FLOWS)
        check(r["failed"] == 0, "IPv%d after the truncated file: %s"
              % (family, r["errors"]))

    lab.write_config(lab.config(backends="be1,be2,be3,be4"))
    gen = lab.reload()
    lab.wait_generation_above(gen)
    log("a good edit afterwards applies (generation %d)"
        % lab.stats()["generation"])


if __name__ == "__main__":
    lablib.run(test, backends=4)
