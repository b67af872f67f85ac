#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Add a backend by editing the YAML and reloading (SIGHUP): long-lived
TCP connections opened before the reload stay up with zero resets on the
backend they had, and new flows reach the new backend, in the proportion
its weight gives it. Then lab up keeps the running lab's edits, and lab
config writes second chance and data-path checks as maglevd reads them.

usage: test_reload.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import os
import subprocess

import binomial
import lablib
from lablib import check, log

FLOWS = 1200
CASES = [("http", 4), ("http", 6), ("udp", 4), ("udp", 6)]


def test(lab):
    lab.write_config(lab.config(backends="be1,be2,be3"))
    lab.start_lb()
    lab.require_steering()
    conns = [lab.longconn(4, 12), lab.longconn(6, 12)]
    r = lab.burst("http", 4, 100)
    check(r["failed"] == 0 and "be4" not in r["backends"],
          "before the reload: %s" % r)

    marks = [lc.mark() for lc in conns]
    before = lab.stats()
    lab.write_config(lab.config(backends="be1,be2,be3,be4"))
    gen = lab.reload()
    lab.wait_generation_above(gen)
    after = lab.stats()
    check(after["reloads"]["ok"] > before["reloads"]["ok"],
          "reloads.ok did not move: %s" % after["reloads"])
    for name in lablib.VIP_NAMES.values():
        names = [b["name"] for b in lab.stats_vip(name, stats=after)["backends"]]
        check("be4" in names, "be4 missing from %s after the reload: %s"
              % (name, names))
    log("reloaded: generation %d -> %d" % (gen, after["generation"]))

    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, rounds=10)
    log("long-lived connections: zero resets, none moved")

    weights = {"be%d" % i: 100 for i in range(1, 5)}
    problems = []
    for proto, family in CASES:
        r = lab.burst(proto, family, FLOWS)
        check(r["failed"] == 0, "%s IPv%d after the reload: %d failed: %s"
              % (proto, family, r["failed"], r["errors"]))
        log("%s IPv%d: %s" % (proto, family,
                             binomial.describe(r["backends"], weights)))
        problems += ["%s IPv%d: %s" % (proto, family, p) for p in
                     binomial.check_counts(r["backends"], weights,
                                           checks=len(CASES))]
    check(not problems, "new flows after adding be4:\n  "
          + "\n  ".join(problems))
    # and the old connections still stand after all that
    for lc, mark in zip(conns, [lc.mark() for lc in conns]):
        lc.wait_progress(mark, rounds=3)
    check_lab_keeps_edits(lab)


def up_args(lab, backends):
    return ["up", "--forwarding", lab.forwarding, "--vdev", lab.vdev,
            "--backends", backends, "--clients", lab.n_clients]


def lab_run(lab, *args):
    return subprocess.run([lablib.LAB] + [str(a) for a in args],
                          env=lab.env, capture_output=True, text=True,
                          timeout=60)


def check_lab_keeps_edits(lab):
    """lab up on the running lab keeps what was done to it: over a config
    edited since up wrote it, or with another shape (which would stop
    maglevd and rebuild the namespaces), it refuses, saying why, and
    changes nothing; lab config writes second chance and data-path checks
    as maglevd reads them."""
    path = lab.config_path(1)
    with open(path) as f:
        edited = f.read() + "# an operator's note\n"
    lab.write_config(edited)
    pid = lab.pid(1)
    p = lab_run(lab, *up_args(lab, lab.n_backends))
    check(p.returncode != 0 and "edited since up wrote them" in p.stderr,
          "lab up over an edited config: %d %s %s" % (
              p.returncode, p.stdout, p.stderr))
    p = lab_run(lab, *up_args(lab, lab.n_backends - 1))
    check(p.returncode != 0 and "another shape" in p.stderr and
          "running on lb1" in p.stderr,
          "lab up with one backend less: %d %s %s" % (
              p.returncode, p.stdout, p.stderr))
    with open(path) as f:
        check(f.read() == edited, "a refused lab up changed the config")
    check(lab.pid(1) == pid, "a refused lab up restarted maglevd")
    log("lab up refused over an edited config and on another shape: %s"
        % p.stderr.strip().splitlines()[-1])

    p = lab_run(lab, "config", "--help")
    check(p.returncode == 0 and "--second-chance" in p.stdout and
          "--health-via" in p.stdout, "lab config --help: %d %s %s" % (
              p.returncode, p.stdout, p.stderr))
    text = lab.config(1, second_chance="30s", health_via="data_path")
    check("  second_chance: {enabled: true, window: 30s}\n" in text and
          "via: data_path}" in text, "lab config --second-chance 30s "
          "--health-via data_path:\n%s" % text)
    cand = os.path.join(lab.lb_dir(1), "candidate.yaml")
    with open(cand, "w") as f:
        f.write(text)
    p = subprocess.run([os.path.join(lab.build, "daemon", "maglevd"),
                        "--check-config", cand], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0, "maglevd --check-config on lab config's "
          "output: %s %s" % (p.stdout, p.stderr))
    log("lab config --second-chance 30s --health-via data_path: accepted "
        "by maglevd --check-config")


if __name__ == "__main__":
    lablib.run(test, backends=4)
