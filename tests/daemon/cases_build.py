# SPDX-License-Identifier: BSD-3-Clause
"""The table build threads (control.build_threads, control.build_cpus)
in the real daemon: a start and a reload that rebuild every table give
the same tables whether the control thread builds alone or with helper
threads, and the helpers run on the CPUs configured.
Run by test_daemon.py."""
import os
import random
import signal

from daemon_util import (Daemon, check, config_text, ctl_ok, ctl_wait,
                         port, wait_ctl)

EAL_NULL = ["--in-memory", "--no-pci", "--vdev=net_null0"]
N_VIPS = 40
PER_VIP = 20
POOL = 60
# large enough that the start and the reload defer second choices
# (docs/generations.md): the follow-up path runs with the helpers too
TABLE_SIZE = 65537


def build_config(build, weight_of_first):
    """N_VIPS VIPs, each a different set of PER_VIP backends out of POOL
    (drawn with the VIP's number as the seed: the same every run);
    weight_of_first: the first
    backend's weight in every VIP, so a changed value rebuilds them all."""
    vips = []
    for v in range(N_VIPS):
        lines = [f"  - name: vip-{v:02d}\n",
                 f"    address: 198.18.0.{v + 1}\n",
                 "    port: 80\n    protocol: tcp\n",
                 f"    table_size: {TABLE_SIZE}\n",
                 "    health: {type: none}\n    backends:\n"]
        for k, b in enumerate(random.Random(v).sample(range(POOL),
                                                      PER_VIP)):
            w = weight_of_first if k == 0 else 1 + (b % 3)
            lines.append(f"      - {{name: be-{b:02d}, "
                         f"address: 10.99.1.{b + 1}, weight: {w}}}\n")
        vips.append("".join(lines))
    return config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                       "".join(vips), control=build)


def fingerprints():
    return {v["name"]: v["fingerprint"] for v in ctl_ok("vips")["vips"]}


def helper_threads(pid):
    """{thread name: its allowed CPUs} of the daemon's build helpers."""
    out = {}
    task = f"/proc/{pid}/task"
    for tid in os.listdir(task):
        try:
            with open(f"{task}/{tid}/comm") as f:
                name = f.read().strip()
            if not name.startswith("mlv-build-"):
                continue
            with open(f"{task}/{tid}/status") as f:
                cpus = next(line.split(":", 1)[1].strip() for line in f
                            if line.startswith("Cpus_allowed_list:"))
        except (FileNotFoundError, StopIteration):
            continue
        out[name] = cpus
    return out


def run_daemon(maglevd, work, name, build):
    """Fingerprints after the start and after a reload that changes a
    weight in every VIP, and the helper threads seen meanwhile."""
    cfg = os.path.join(work, f"{name}.yaml")
    with open(cfg, "w") as f:
        f.write(build_config(build, 5))
    d = Daemon(maglevd, work, cfg, interval_ms=3600000, name=name)
    try:
        wait_ctl(d, f"{name}: generation 1")
        started = fingerprints()
        threads = helper_threads(d.proc.pid)
        with open(cfg, "w") as f:
            f.write(build_config(build, 9))
        d.signal(signal.SIGHUP)
        reply = ctl_wait(lambda r: all(v["fingerprint"] != started[v["name"]]
                                       for v in r["vips"]),
                         f"{name}: every table rebuilt by the reload", d,
                         command="vips")
        reloaded = {v["name"]: v["fingerprint"] for v in reply["vips"]}
        log = d.log_text()
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"{name}: exit status {rc}")
    check(len(started) == N_VIPS and len(set(started.values())) == N_VIPS,
          f"{name}: {len(set(started.values()))} distinct tables, "
          f"expected {N_VIPS}")
    return started, reloaded, threads, log


def case_build_threads(maglevd, src, work):
    ncpu = os.cpu_count() or 1
    cpus = f"0-{ncpu - 1}" if ncpu > 1 else "0"

    serial = run_daemon(maglevd, work, "serial", "")
    threaded = run_daemon(maglevd, work, "threaded",
                          f"  build_threads: 3\n  build_cpus: \"{cpus}\"\n")

    check(serial[2] == {}, f"helper threads without build_threads: "
          f"{serial[2]}")
    check("table build: 1 thread(s)" in serial[3],
          "no start-up line for one build thread")
    check(sorted(threaded[2]) == ["mlv-build-1", "mlv-build-2"],
          f"helper threads of build_threads 3: {threaded[2]}")
    check(all(c == cpus for c in threaded[2].values()),
          f"helpers not on CPUs {cpus}: {threaded[2]}")
    check(f"table build: 3 thread(s) on CPUs {cpus}" in threaded[3],
          "no start-up line for three build threads")
    for what, i in (("start", 0), ("reload", 1)):
        diff = [n for n in serial[i] if serial[i][n] != threaded[i].get(n)]
        check(not diff, f"{what}: tables differ with helper threads: "
              f"{diff[:5]}")


CASES = {
    "build-threads": case_build_threads,
}
