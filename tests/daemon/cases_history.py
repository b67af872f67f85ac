# SPDX-License-Identifier: BSD-3-Clause
"""Second chance's slot histories across restarts (daemon/history_glue.c,
docs/second-chance.md "Across restarts"): the history file written
beside the state file whenever a generation changes the histories, read
by the next start, graceful or after a crash.

b4 joins a gue VIP with second chance: each slot b4 takes names its
owner before (read from `table` before the change, an independent
source) as the first hop of its packets. After SIGKILL, the next start
(same config) names the same hops for every slot, and after a graceful
restart too; an instance started without the file does not (so the file
is what keeps them), and the window goes on where it was. A damaged file is refused in one log line and the
daemon starts without it."""
import os

from daemon_util import (CONTROL, Daemon, check, ctl_ok, maglevctl,
                         null_config, run, vip, wait_ctl)


def sc_vip(backends):
    text = vip(backends=backends, forwarding="gue")
    return text.replace("    health: {type: none}\n",
                        "    health: {type: none}\n"
                        "    second_chance: {enabled: true, window: 10m}\n")


def start(maglevd, work, backends, tag):
    cfg = null_config(work, vips=sc_vip(backends))
    d = Daemon(maglevd, work, cfg, name=f"maglevd-{tag}")
    wait_ctl(d)
    return d, cfg


def owners():
    """Each slot's owner by name (table)."""
    r = ctl_ok("table", vip="web", dump=True)
    names = [b["name"] for b in r["backends"]]
    return [names[i] if i >= 0 else None for i in r["slots"]]


def hops():
    """Each slot's [backend, hop, ...] by name (table --hops)."""
    r = ctl_ok("table", vip="web", hops=True)
    names = [b["name"] for b in r["backends"]]
    return [[names[i] for i in row] for row in r["hops"]]


def sc_state():
    """table's second_chance: previous_slots, window_left_ms."""
    return ctl_ok("table", vip="web")["second_chance"]


def check_vips_view():
    """vips shows second chance before it is needed: in JSON and in
    maglevctl's FEATURES column."""
    v = ctl_ok("vips")["vips"][0]
    check(v["second_chance"] is True and v["health_via"] == "none",
          f"vips: {v}")
    r = run([maglevctl(), "-s", CONTROL["socket"], "vips"])
    rows = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines()
            if ln.strip()}
    head = rows.get("VIP", [])
    check(r.returncode == 0 and "FEATURES" in head and
          "second-chance" in rows["web"][head.index("FEATURES")].split(","),
          f"maglevctl vips: {r.stdout} {r.stderr}")


def check_hops_text(hops_by_name):
    """maglevctl table --hops: a summary before the slot list that adds up
    to the JSON's hops, and the window in words, not milliseconds."""
    r = run([maglevctl(), "-s", CONTROL["socket"], "table", "web", "--hops"])
    check(r.returncode == 0, f"maglevctl table --hops: {r.stderr}")
    lines = r.stdout.splitlines()
    want = [sum(1 for row in hops_by_name if len(row) - 1 == k)
            for k in (2, 1, 0)]
    summary = (f"hops of {len(hops_by_name)} slots: {want[0]} with two, "
               f"{want[1]} with one, {want[2]} with none")
    check(summary in lines, f"no '{summary}' in:\n{r.stdout[:1500]}")
    check(lines.index(summary) < lines.index("SLOT\tBACKEND\tHOPS"),
          "the summary does not come before the slot list")
    for name in ("b1", "b2", "b3", "b4"):
        n = sum(1 for row in hops_by_name if name in row[1:])
        check(any(ln.split() == [name, str(n)] for ln in lines),
              f"{name} is a hop in {n} slots; maglevctl says:\n"
              f"{r.stdout[:1500]}")
    check(any(ln.startswith("second chance: ") and "window 10m, open, " in ln
              and ln.endswith(" left") for ln in lines),
          f"the window in words:\n{r.stdout[:800]}")


def case_history_across_restart(maglevd, src, work):
    history = CONTROL["socket"] + ".state.history"
    three, four = ("b1", "b2", "b3"), ("b1", "b2", "b3", "b4")

    d, cfg = start(maglevd, work, three, "a")
    try:
        check_vips_view()
        before = owners()
        check(not os.path.exists(history),
              "a history file with no table change yet")
        with open(cfg, "w") as f:
            f.write(open(null_config(work, vips=sc_vip(four))).read())
        ctl_ok("reload")
        after_change = hops()
        check_hops_text(after_change)
        sc_change = sc_state()
        now = owners()
        check(os.path.exists(history), f"{history} not written at the "
              f"change")
        d.kill()    # a crash: no graceful stop writes anything
    finally:
        d.kill()
    taken = [s for s in range(len(now)) if now[s] == "b4"]
    check(taken, "b4 took no slot: the test is void")
    for s in taken:
        check(after_change[s][:2] == ["b4", before[s]],
              f"slot {s}: hops {after_change[s]}, its owner before b4 "
              f"was {before[s]}")
    print(f"b4 took {len(taken)} of {len(now)} slots; each names its "
          f"owner before as the first hop")

    # after the crash: the same hops for every slot
    d, cfg = start(maglevd, work, four, "b")
    try:
        check("history file" in d.log_text() and
              "former slot owners of 1 VIP(s)" in d.log_text(),
              f"no history read in the log:\n{d.log_text()[-2000:]}")
        after_crash = hops()
        sc_crash = sc_state()
        rc = d.stop()
        check(rc == 0, f"exit status {rc}")
    finally:
        d.kill()
    check(after_crash == after_change, "the hops after a crash differ: " +
          str([(s, after_change[s], after_crash[s])
               for s in range(len(now)) if after_crash[s] != after_change[s]
               ][:5]))

    check(sc_crash["previous_slots"] == sc_change["previous_slots"] > 0,
          f"slots with a previous owner: {sc_change} before the crash, "
          f"{sc_crash} after")
    check(0 < sc_crash["window_left_ms"] <= sc_change["window_left_ms"],
          f"the window after the crash: {sc_crash}, before: {sc_change}")

    # after a graceful restart: the same again
    d, cfg = start(maglevd, work, four, "c")
    try:
        check(hops() == after_change, "the hops after a graceful restart "
              "differ")
        d.kill()
    finally:
        d.kill()

    # without the file: no former owners, so the hops differ (the file
    # is what kept them)
    saved = open(history, "rb").read()
    os.remove(history)
    d, cfg = start(maglevd, work, four, "d")
    try:
        fresh = hops()
        sc_fresh = sc_state()
        d.kill()
    finally:
        d.kill()
    differ = [s for s in taken if fresh[s][:2] != after_change[s][:2]]
    print(f"without the file, {len(differ)} of b4's {len(taken)} slots "
          f"name another first hop")
    check(sc_fresh["previous_slots"] == 0 and sc_fresh["window_left_ms"] == 0,
          f"an instance without the file has a history: {sc_fresh}")

    # a damaged file: one line, started without it
    with open(history, "wb") as f:
        f.write(saved[:len(saved) // 2])
    os.chmod(history, 0o600)
    d, cfg = start(maglevd, work, four, "e")
    try:
        log = d.log_text()
        check("starting without second chance's former slot owners" in log,
              f"damaged history file not refused:\n{log[-2000:]}")
        check(hops() == fresh, "a damaged file changed the hops")
        d.kill()
    finally:
        d.kill()


CASES = {
    "history-across-restart": case_history_across_restart,
}
