#!/usr/bin/env python3
"""bench/liquid/report.py - the figures of bench/liquid.sh from its work
directory: the reports of `vmrun stencil --json`, the events file the script
wrote (when each quota changed, when each job started and ended, the CPU time
each host's cgroup used) and the time-stamped progress lines of each job.

The ideal time of a job solves  rate * integral_0^T C(t) dt = updates,  where
C(t) = min(sum over hosts of min(quota_h(t), workers_h), CPUs) is the capacity
the quotas allowed, t counts from the start of the job's iterations, and rate
is the single-core rate measured in the same run.  The same integral with a
fixed placement (each host's share of the quanta held at its capacity) gives
the best a fixed placement could do under the same schedule, hence the most
that balancing can gain in this scenario.

Reports written before vmrun had run_started_unix, epochs[].t_s,
epochs[].host_quanta or balance.events are read too: the start is then the
moment the script saw vmrun's "placing" line plus the report's setup time,
and the epochs' end times are estimated from their predicted times (said so
in the output).
"""
import argparse
import glob
import json
import math
import os
import statistics
import sys

BE_GOAL = 0.85
RECOVER_EPOCHS = 2
HOLD = 3          # epochs in a row above BE_GOAL that count as "back above"
IDEAL_GOAL = 1.2
SPEEDUP_GOAL = 1.5


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_events(path):
    ev = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 2:
                continue
            r = ev.setdefault(w[0], {"changes": []})
            if w[1] == "start":
                r["start"] = float(w[2])
            elif w[1] == "end":
                r["end"] = float(w[2])
            elif w[1] == "set":
                r["set"] = float(w[2])
            elif w[1] == "change":
                r["changes"].append((float(w[2]), int(w[3]) - 1, float(w[4]) / 100))
            elif w[1] == "acct":
                v = [float(x) for x in w[2:]]
                r["acct"] = (v[:len(v) // 2], v[len(v) // 2:])
            elif w[1] == "daemon":
                tck, v = float(w[2]), [float(x) for x in w[3:]]
                r["daemon"] = [(b - x) / tck for x, b in zip(v[:len(v) // 2], v[len(v) // 2:])]
    return ev


def read_progress(path, per):
    """From vmrun's stderr, each line time-stamped by the script: (wall time,
    iterations done) from the progress lines, and the reclaim events
    ("vmrun: epoch N: host H is needed by its owner..." / "...rejoins"),
    which also tell when epoch N ended."""
    pts, events = [], []
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                try:
                    if len(w) >= 3 and w[1] == "iteration" and "/" in w[2]:
                        pts.append((float(w[0]), int(w[2].split("/")[0])))
                    elif len(w) >= 6 and w[1] == "vmrun:" and w[2] == "epoch" and w[4] == "host":
                        ep = int(w[3].rstrip(":"))
                        what = "rejoin" if "rejoin" in line else "evacuate" if "leave" in line else None
                        if what:
                            events.append({"epoch": ep, "unix": float(w[0]), "host": w[5], "what": what})
                            pts.append((float(w[0]), ep * per))
                except ValueError:
                    pass
    except OSError:
        pass
    return sorted(pts), events


class Schedule:
    """Each host's quota (fraction of one CPU) as a step function of time
    since the start of the iterations."""

    def __init__(self, quotas, changes, origin, workers, ncpu):
        self.q0 = list(quotas)
        self.steps = sorted((t - origin, h, q) for t, h, q in changes)
        self.workers = workers
        self.ncpu = ncpu

    def quotas_at(self, t):
        q = list(self.q0)
        for ts, h, v in self.steps:
            if ts <= t:
                q[h] = v
        return q

    def host_caps(self, t):
        return [min(q, w) for q, w in zip(self.quotas_at(t), self.workers)]

    def capacity(self, t):
        return min(sum(self.host_caps(t)), self.ncpu)

    def pieces(self):
        """Boundaries of the constant pieces: 0, the changes after 0, inf."""
        b = [0.0] + [ts for ts, _, _ in self.steps if ts > 0] + [math.inf]
        return [(b[i], b[i + 1]) for i in range(len(b) - 1)]

    def solve(self, work, speed_of):
        """The T with integral_0^T speed_of(t) dt = work (speed constant on pieces)."""
        done = 0.0
        for a, b in self.pieces():
            s = speed_of((a + b) / 2 if b < math.inf else a + 1)
            if s <= 0:
                continue
            if b == math.inf or done + s * (b - a) >= work:
                return a + (work - done) / s
            done += s * (b - a)
        return math.inf

    def host_integral(self, h, t0, t1):
        """CPU seconds host h's quota allowed in [t0, t1] (t0 may be before 0)."""
        b = sorted({t0, t1} | {ts for ts, _, _ in self.steps if t0 < ts < t1})
        return sum(self.host_caps((x + y) / 2)[h] * (y - x) for x, y in zip(b, b[1:]))

    def cap_integral(self, t0, t1):
        tot = 0.0
        for a, b in self.pieces():
            lo, hi = max(a, t0), min(b, t1)
            if hi > lo:
                tot += self.capacity((lo + hi) / 2) * (hi - lo)
        return tot


def epochs_timeline(rep, prog, origin):
    """Epoch records with their end time since the run's start, and how the
    times were found: measured (t_s), interpolated from vmrun's progress
    lines (every 2 s when stderr is not a terminal), or estimated from the
    epochs' predicted times."""
    eps = rep.get("balance", {}).get("epochs", [])
    per = rep.get("balance", {}).get("epoch", 10)
    iters = rep["job"]["iters"]
    tot = rep["phases"]["iterations_s"]
    if eps and all("t_s" in e for e in eps):
        return [dict(e, t_end=e["t_s"]) for e in eps], "measured (t_s)"
    if len(prog) >= 2:
        pts = [(0.0, 0)] + [(t - origin, it) for t, it in prog if 0 < t - origin < tot] + [(tot, iters)]
        out = []
        for e in eps:
            want = e["epoch"] * per
            for (t0, i0), (t1, i1) in zip(pts, pts[1:]):
                if i1 >= want:
                    f = (want - i0) / (i1 - i0) if i1 > i0 else 1
                    out.append(dict(e, t_end=t0 + f * (t1 - t0)))
                    break
            else:
                out.append(dict(e, t_end=tot))
        return out, "interpolated from the progress lines (one every 2 s; the report has no t_s)"
    acc, out = 0.0, []
    for e in eps:
        acc += max(e.get("predicted_s", 0), 0) * per
        out.append(dict(e, t_end=acc))
    # Scale to the measured loop time: the predictions leave out waiting.
    if acc > 0 and eps:
        k = tot * (eps[-1]["epoch"] * per / iters) / acc
        for e in out:
            e["t_end"] *= k
    return out, "estimated from predicted_s (the report has no t_s)"


def be_of(loads):
    busy = [x for x in loads if x is not None]
    if not busy or max(busy) <= 0:
        return 1.0
    return sum(busy) / len(busy) / max(busy)


def recovery(be, k0, k1):
    """Epochs after k0 (the change's) until BE > BE_GOAL first, and until it
    stays there HOLD epochs in a row (fewer if the phase [k0, k1) ends
    first); None: never."""
    first = next((j - k0 for j in range(k0 + 1, k1) if be[j] > BE_GOAL), None)
    for j in range(k0 + 1, k1):
        run = be[j:min(j + HOLD, k1)]
        if run and all(x > BE_GOAL for x in run):
            return first, j - k0
    return first, None


def analyse(name, rep, ev, prog, rev, a):
    hosts = [h["name"] for h in rep["hosts"]]
    tph = rep["job"].get("tasks_per_host", 1)
    n = rep["job"]["grid"]
    iters = rep["job"]["iters"]
    updates = n[0] * n[1] * n[2] * iters
    ph = rep["phases"]
    if "run_started_unix" in rep:
        origin, origin_src = float(rep["run_started_unix"]), "run_started_unix"
    else:
        origin = ev["start"] + ph.get("setup_s", 0)
        origin_src = "the 'placing' line + setup_s"
    quotas = [float(x) / 100 for x in a.quotas.split(",")]
    sched = Schedule(quotas, ev["changes"], origin, [tph] * len(hosts), a.ncpu)
    T = ph["iterations_s"]
    rate = a.rate
    ideal = sched.solve(updates / rate, sched.capacity)

    # The fixed placement's bound: iterations/s = min over hosts of cap_h * rate / points_h.
    hq = [0] * len(hosts)
    for w in rep["workers"]:
        hq[hosts.index(w["host"])] += w["quanta"]
    nq = sum(hq)
    pts_per_q = n[0] * n[1] * n[2] / nq

    def fixed_speed(t, hq=hq):
        c = sched.host_caps(t)
        its = min(c[h] * rate / (hq[h] * pts_per_q) for h in range(len(hosts)) if hq[h] > 0)
        return its * n[0] * n[1] * n[2]

    fixed_ideal = sched.solve(updates, fixed_speed)

    # What a fixed placement's BE is against the quotas, in each phase of the schedule.
    fixed_be = {}
    if not rep["balance"].get("on", True):
        for a0, b0 in sched.pieces():
            c = sched.host_caps(a0 + 1e-9)
            key = "quotas " + "/".join(f"{100 * x:.0f}" for x in c)
            fixed_be.setdefault(key, be_of([hq[h] / c[h] if hq[h] > 0 else None
                                            for h in range(len(hosts))]))

    eps, ep_src = epochs_timeline(rep, prog, origin)
    per = rep["balance"].get("epoch", a.epoch)
    for e in eps:
        q = e.get("host_quanta")
        if q is None and not rep["balance"].get("on", True):
            q = hq
        if q is not None and len(q) == len(hosts):
            t_prev = e["t_end"] - per * T / iters
            caps = sched.host_caps((t_prev + e["t_end"]) / 2)
            e["be_quota"] = be_of([q[h] / caps[h] if q[h] > 0 and caps[h] > 0 else
                                   (math.inf if q[h] > 0 else None) for h in range(len(hosts))])

    changes = []
    for tc_abs, h, v in sorted(ev["changes"]):
        tc = tc_abs - origin
        k0 = next((i for i, e in enumerate(eps) if e["t_end"] > tc), None)
        rec = first = rec_cpu = None
        if k0 is not None:
            # The epochs until the next change (or the end) are this change's.
            nxt = next((tn - origin for tn, _, _ in sorted(ev["changes"]) if tn - origin > tc), math.inf)
            k1 = next((i for i, e in enumerate(eps) if e["t_end"] > nxt), len(eps))
            first, rec = recovery([e["be"] for e in eps], k0, k1)
            if all("be_cpu" in e for e in eps):
                rec_cpu = recovery([e["be_cpu"] for e in eps], k0, k1)[1]
        window = [round(e["be"], 2) for e in eps[k0:k0 + 6]] if k0 is not None else []
        changes.append({"t_s": round(tc, 3), "unix": tc_abs, "host": hosts[h], "quota": v,
                        "epoch": eps[k0]["epoch"] if k0 is not None else None,
                        "epochs_to_be_above": rec, "epochs_to_first_be_above": first,
                        "epochs_to_be_cpu_above": rec_cpu,
                        "be_after": window})

    # Phases of the schedule: the updates done in each against what the quotas
    # allowed, from the epochs' measured ends or else the progress lines.
    phases = []
    if ep_src.startswith("measured"):
        pts, ph_src = [(e["t_end"], e["epoch"] * per) for e in eps], "epoch ends"
    else:
        pts, ph_src = [(t - origin, it) for t, it in prog], "progress lines"
    if len(pts) >= 2:
        cuts = [0.0] + [c["t_s"] for c in changes] + [T]

        def iters_at(t):
            if t <= 0:
                return 0.0
            prev = (0.0, 0)
            for p in pts:
                if p[0] >= t:
                    f = (t - prev[0]) / (p[0] - prev[0]) if p[0] > prev[0] else 1
                    return prev[1] + f * (p[1] - prev[1])
                prev = p
            return float(prev[1] if t < T else iters)

        for i in range(len(cuts) - 1):
            t0, t1 = cuts[i], min(cuts[i + 1], T)
            if t1 <= t0:
                continue
            did = (iters_at(t1) - iters_at(t0)) * n[0] * n[1] * n[2]
            cap = sched.cap_integral(t0, t1)
            bes = [e["be"] for e in eps if t0 < e["t_end"] <= t1]
            phases.append({"from_s": round(t0, 2), "to_s": round(t1, 2), "from": ph_src,
                           "median_be": statistics.median(bes) if bes else None,
                           "quotas": [round(x, 2) for x in sched.quotas_at((t0 + t1) / 2)],
                           "efficiency": did / (cap * rate) if cap > 0 else None})

    events = rep["balance"].get("events")
    ev_src = "report"
    if events is None:
        events, ev_src = rev, "vmrun's stderr"
        for e in events:
            e["t_s"] = e["unix"] - origin
    # How long after each quota change the balancer evacuated or rejoined that host.
    for e in events:
        before = [tc - origin for tc, h, _ in sorted(ev["changes"]) if hosts[h] == e.get("host")
                  and tc - origin <= e.get("t_s", -math.inf)]
        e["after_change_s"] = round(e["t_s"] - before[-1], 2) if before and "t_s" in e else None

    acct = None
    if "acct" in ev and ev["acct"][0][0] >= 0 and "start" in ev and "end" in ev:
        # From the 'placing' line to vmrun's exit, as the script read the counters.
        s0, s1 = ev["start"] - origin, ev["end"] - origin
        used = [(b - x) / 1e9 for x, b in zip(*ev["acct"])]
        allowed = [sched.host_integral(h, s0, s1) for h in range(len(hosts))]
        acct = {"wall_s": s1 - s0, "cpu_s": used, "allowed_cpu_s": allowed,
                "daemon_cpu_s": ev.get("daemon")}

    return {"mode": name, "time_s": T, "run_s": rep.get("run_s"), "total_s": rep.get("time_s"),
            "updates": updates, "ideal_s": ideal, "time_over_ideal": T / ideal,
            "fixed_ideal_s": fixed_ideal, "origin_unix": origin, "origin_from": origin_src,
            "method": rep.get("method"), "probed_updates_per_s": [h["updates_per_s"] for h in rep["hosts"]],
            "hosts": hosts, "final_host_quanta": hq, "quanta_moved": rep["balance"].get("quanta_moved"),
            "bytes_moved": rep["balance"].get("bytes_moved"), "epoch_times": ep_src,
            "epochs": [{k: e[k] for k in ("epoch", "be", "be_cpu", "be_quota", "t_end", "moved", "applied",
                                          "host_quanta", "publish_s", "move_s", "decide_s")
                        if k in e} for e in eps],
            "events": events, "events_from": ev_src, "changes": changes,
            "comm_share": rep.get("comm_share"), "lambda_s": rep.get("ring", {}).get("lambda_s"),
            "tau_s_per_byte": rep.get("ring", {}).get("tau_s_per_byte"), "phases": phases,
            "acct": acct, "fixed_be_quota": fixed_be,
            # The workers that finished: CPU in the kernels and in the whole
            # process (messages, TLS, packing, setup); the halo's share of
            # the kernels' points.
            "worker_kernel_cpu_s": sum(w.get("compute_cpu_s", 0) for w in rep["workers"]),
            "worker_cpu_s": sum(w.get("cpu_s", 0) for w in rep["workers"]),
            "worker_overlap_cpu_s": sum(w.get("overlap_cpu_s", 0) for w in rep["workers"]),
            # Per worker still there at the end: host, quanta, wall s blocked for ghosts.
            "ghost_waits": [(w["host"], w["quanta"], w["ghost_wait_s"]) for w in rep["workers"]
                            if "ghost_wait_s" in w],
            "halo_work": rep.get("halo", {}).get("work")}


def bound_epochs(be):
    """The bound's BE per epoch, and how often the goal's test would pass
    there: for a change at epoch k0, BE above BE_GOAL for HOLD epochs in a
    row starting within RECOVER_EPOCHS epochs (recovery())."""
    if len(be) < RECOVER_EPOCHS + HOLD + 1:
        return {}
    k0s = range(len(be) - RECOVER_EPOCHS - HOLD)
    recs = [recovery(be, k0, len(be))[1] for k0 in k0s]
    ok = sum(1 for r in recs if r is not None and r <= RECOVER_EPOCHS)
    return {"epoch_be": be, "epoch_be_median": statistics.median(be),
            "epochs_above": sum(1 for x in be if x > BE_GOAL) / len(be),
            "goal_pass": ok / len(k0s)}


def tls_floor(d, a, quotas, bounds, reps):
    """The CPU the cluster's TLS costs per byte at both ends (floor.json,
    bench/pvm_timing_floor's 1 MB round trips), priced on the ghosts the
    bound's slabs would exchange and on those each job did exchange."""
    fl = load(f"{d}/floor.json")
    res = [r for r in (fl or {}).get("results", []) if r.get("bytes") == 1000000]
    if not res or not res[0].get("send_cpu_us") or not res[0].get("recv_cpu_us"):
        print(f"liquid: no TLS floor in {d}/floor.json", file=sys.stderr)
        return None
    snd, rcv = res[0]["send_cpu_us"] * 1e-6, res[0]["recv_cpu_us"] * 1e-6  # s per 1e6 bytes
    per_byte = (snd + rcv) / 1e6
    kernel = a.grid ** 3 * a.iters / a.rate
    slab = (len(quotas) - 1) * 2 * a.grid ** 2 * 8 * a.iters
    share = slab * per_byte / kernel
    job = {}
    for m, rep in reps.items():
        ws = (rep or {}).get("workers", [])
        if ws and all("ghost_bytes" in w for w in ws):
            b = sum(w["ghost_bytes"] for w in ws)
            job[m] = {"bytes": b, "floor_cpu_s": b * per_byte,
                      "outside_cpu_s": sum(w["cpu_s"] - w["compute_cpu_s"] for w in ws)}
    return {"send_cpu_ms_per_mb": snd * 1e3, "recv_cpu_ms_per_mb": rcv * 1e3,
            "kernel_cpu_s": kernel, "slab_bytes": slab, "slab_cpu_s": slab * per_byte,
            "slab_share": share,
            "bound_with_ghosts": {k: b["time_over_ideal"] + share for k, b in bounds.items()},
            "job": job}


def probe_check(d, quotas):
    """How well the speed probe sees the quotas: each host's share of the
    probed speed over its share of the quotas (1 is exact; the shares take
    out what the probes lose together, to the shared caches and memory)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(d, "pc.*.json"))):
        period = int(os.path.basename(f).split(".")[1])
        r = load(f)
        if r is None:
            continue
        sp = [h["updates_per_s"] for h in r["hosts"]]
        out.setdefault(period, []).append([x / sum(sp) / (q / sum(quotas)) for x, q in zip(sp, quotas)])
    res = {}
    for p, runs in out.items():
        per_host = list(zip(*runs))
        res[p] = {"share_over_quota_share": [[round(x, 3) for x in h] for h in per_host],
                  "mean_abs_error": statistics.mean(abs(x - 1) for h in per_host for x in h)}
    return res


def finite(x):
    """x with every infinite or NaN float as None: JSON has no Infinity."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    return x


def fmt_s(x):
    return "inf" if x == math.inf else f"{x:.2f} s"


def main():
    ap = argparse.ArgumentParser()
    for k in ("dir", "hosts", "quotas", "load-before", "load-after", "load-interval"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--halo", help="the balanced run's halo (default: from its report)")
    for k in ("period-us", "shares", "drop-host", "drop-to", "ncpu", "grid", "iters", "epoch", "quanta"):
        ap.add_argument("--" + k, type=int, required=True)
    for k in ("drop-at", "restore-at"):
        ap.add_argument("--" + k, type=float, required=True)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    d = a.dir
    r1, p1, r2 = load(f"{d}/rate1.json"), load(f"{d}/probe1.json"), load(f"{d}/rate2.json")
    a.rate = r1["updates_per_s"]
    try:
        with open(f"{d}/rate1.all") as f:
            rates = [float(x) for x in f.read().split()]
    except (OSError, ValueError):
        rates = []
    probe1 = p1["hosts"][0]["updates_per_s"] if p1 else None
    ev = read_events(f"{d}/events")
    runs, reps = {}, {}
    on_rep = load(f"{d}/run.on.json")
    for m in ("off", "on"):
        rep = reps[m] = load(f"{d}/run.{m}.json")
        if rep is None:
            print(f"liquid: no report of the --balance {m} run", file=sys.stderr)
            return 1
        prog, rev = read_progress(f"{d}/run.{m}.err", rep["balance"].get("epoch", a.epoch))
        runs[m] = analyse(m, rep, ev[m], prog, rev, a)
    on, off = runs["on"], runs["off"]
    speedup = off["time_s"] / on["time_s"]
    bound = off["fixed_ideal_s"] / on["ideal_s"]
    quotas = [float(x) / 100 for x in a.quotas.split(",")]
    pc = probe_check(d, quotas)
    two = r2["updates_per_s"] / (2 * a.rate) if r2 else None
    recs = [c["epochs_to_be_above"] for c in on["changes"]]
    recs_cpu = [c.get("epochs_to_be_cpu_above") for c in on["changes"]]
    # The machine's bound (bench/liquid_bound): the job's kernel in a slab
    # per host by its quota, in the hosts' cgroups, messages free.
    cap0 = Schedule(quotas, [], 0, [1] * len(quotas), a.ncpu).capacity(0)  # one worker a host
    if a.halo is None:
        a.halo = str(((on_rep or {}).get("halo") or {}).get("iterations", 1))
    bounds = {}
    for s in (a.halo, "0"):
        b = load(f"{d}/bound.{s}.json")
        if not (b and b.get("ok") and b.get("time_s", 0) > 0):
            print(f"liquid: no machine's bound in {d}/bound.{s}.json", file=sys.stderr)
        else:
            ideal = b["updates"] / (cap0 * a.rate)
            bounds[int(s)] = {"sync": int(s), "iters": b["iters"], "time_s": b["time_s"],
                              "ideal_s": ideal, "time_over_ideal": b["time_s"] / ideal,
                              "be": b.get("be"), **bound_epochs(b.get("epoch_be") or []),
                              "cpu_s": [x["cpu_s"] for x in b["parts"]],
                              "allowed_cpu_s": [min(q, 1) * b["time_s"] for q in quotas]}
    floor = tls_floor(d, a, quotas, bounds, reps)
    same = [p["efficiency"] for p in on["phases"]
            if p["efficiency"] and [round(x, 4) for x in p["quotas"]] == [round(x, 4) for x in quotas]]
    goals = [
        {"goal": f"balanced time within {IDEAL_GOAL}x of ideal", "value": round(on["time_over_ideal"], 3),
         "met": on["time_over_ideal"] <= IDEAL_GOAL},
        {"goal": f"balanced at least {SPEEDUP_GOAL}x faster than fixed", "value": round(speedup, 3),
         "met": speedup >= SPEEDUP_GOAL},
        {"goal": f"BE > {BE_GOAL} within {RECOVER_EPOCHS} epochs of each change (held {HOLD})",
         "value": recs,
         "met": bool(recs) and all(r is not None and r <= RECOVER_EPOCHS for r in recs)},
    ]
    result = {
        "benchmark": "liquid", "hosts": a.hosts.split(","), "quotas": quotas,
        "cfs_period_us": a.period_us, "shares": a.shares, "ncpu": a.ncpu,
        "load_interval": a.load_interval,
        "job": {"grid": a.grid, "iters": a.iters, "epoch": a.epoch, "quanta_per_host": a.quanta},
        "schedule": {"host": a.drop_host, "drop_to": a.drop_to / 100, "drop_at_s": a.drop_at,
                     "restore_at_s": a.restore_at},
        "load_before": a.load_before, "load_after": a.load_after,
        "single_core_updates_per_s": a.rate,
        "single_core_from": "vmrun stencil, 1 host, quota lifted, 1 worker holding every quantum"
                            + (f", the fastest of {len(rates)}" if len(rates) > 1 else ""),
        "single_core_runs_updates_per_s": rates,
        "probe_updates_per_s": probe1, "two_workers_scaling": two, "probe_check": pc,
        "runs": runs, "speedup": speedup, "speedup_bound": bound, "machine_bound": bounds,
        "tls_floor": floor,
        "goals": goals, "be_cpu_recovery": recs_cpu,
    }
    if a.json:
        json.dump(finite(result), sys.stdout)
        print()
        return 0

    P = print
    P(f"LiquidVM liquid balancing, issue 8's multi-user scenario ({a.ncpu} CPUs, load "
      f"{a.load_before} before, {a.load_after} after)")
    P(f"4 hosts in network namespaces, cgroup quotas {a.quotas} % of a CPU, CFS period "
      f"{a.period_us / 1000:g} ms, shares {a.shares}, daemons' load_interval {a.load_interval}")
    P(f"job: jacobi {a.grid}^3, {a.iters} iterations, epoch {a.epoch}, {a.quanta} quanta per host")
    P(f"owner of host {a.drop_host}: quota -> {a.drop_to} % at +{a.drop_at:g} s, back at "
      f"+{a.restore_at:g} s after the iterations start")
    P()
    P(f"single-core rate (vmrun stencil on one host, quota lifted): {a.rate / 1e6:8.1f} Mupdates/s" +
      (f" (the fastest of {', '.join(f'{x / 1e6:.1f}' for x in rates)})" if len(rates) > 1 else ""))
    if probe1:
        P(f"  the speed probe of one quantum (vmrun bench), for comparison: {probe1 / 1e6:8.1f} Mupdates/s"
          f" ({probe1 / a.rate:.2f}x)")
    if two:
        P(f"  two workers on two unlimited hosts: {two:.2f} of twice the single-core rate")
    for p, c in sorted(pc.items()):
        P(f"  probe under the quotas, CFS period {p / 1000:g} ms: share probed / share of quota, "
          "per host and probe: "
          + "  ".join("/".join(f"{x:.2f}" for x in h) for h in c["share_over_quota_share"])
          + f"   mean error {100 * c['mean_abs_error']:.0f} %")
    P()
    P(f"{'':18} {'balance off':>14} {'balance on':>14}")
    P(f"{'time (iterations)':18} {fmt_s(off['time_s']):>14} {fmt_s(on['time_s']):>14}")
    P(f"{'ideal':18} {fmt_s(off['ideal_s']):>14} {fmt_s(on['ideal_s']):>14}")
    P(f"{'time / ideal':18} {off['time_over_ideal']:14.2f} {on['time_over_ideal']:14.2f}")
    if two:
        P(f"{'time / (ideal/eff)':18} {off['time_over_ideal'] * two:14.2f} {on['time_over_ideal'] * two:14.2f}"
          f"   (eff = the two-worker efficiency {two:.2f}: the cost of running on several hosts at all)")
    bk = bounds.get(int(a.halo))
    if bk:
        P(f"{'time / bound':18} {off['time_over_ideal'] / bk['time_over_ideal']:14.2f} "
          f"{on['time_over_ideal'] / bk['time_over_ideal']:14.2f}   (bound = {bk['time_over_ideal']:.2f}x "
          "ideal: the machine's, below; the rest is the runtime's or the placement's)")
    P(f"{'quanta moved':18} {off['quanta_moved']!s:>14} {on['quanta_moved']!s:>14}")
    P(f"balanced vs fixed: {speedup:.2f}x faster; this schedule allows at most {bound:.2f}x "
      f"(ideal fixed placement {fmt_s(off['fixed_ideal_s'])} / ideal balanced {fmt_s(on['ideal_s'])})")
    for r in (off, on):
        P()
        P(f"--balance {r['mode']}: method {r['method']}, probed Mupdates/s "
          + " ".join(f"{x / 1e6:.0f}" for x in r["probed_updates_per_s"])
          + f"; start from {r['origin_from']}"
          + (f"; epoch ends {r['epoch_times']}" if r["epochs"] else ""))
        if not r["epochs"]:
            P("  no epochs: with --balance off the workers send no epoch reports")
        if r["fixed_be_quota"]:
            P("  BE of the fixed placement against the quotas: "
              + ", ".join(f"{k} {v:.2f}" for k, v in r["fixed_be_quota"].items()))
        for c in r["changes"] if r["epochs"] else []:
            rec = c["epochs_to_be_above"]
            first = c["epochs_to_first_be_above"]
            P(f"  +{c['t_s']:.2f} s {c['host']} -> {100 * c['quota']:.0f} %: in epoch {c['epoch']}; BE > "
              f"{BE_GOAL} first {first if first is not None else 'never'}, and for {HOLD} epochs in a "
              f"row {rec if rec is not None else 'never'}, epoch(s) later; BE from then: "
              + " ".join(f"{x:.2f}" for x in c["be_after"])
              + ("" if c.get("epochs_to_be_cpu_above") is None else
                 f"; by CPU at the shares (be_cpu) {c['epochs_to_be_cpu_above']} later"))
        for p in r["phases"]:
            eff = p["efficiency"]
            P(f"  {p['from_s']:7.2f}-{p['to_s']:7.2f} s quotas {p['quotas']}: "
              f"{'?' if eff is None else f'{100 * eff:.0f} %'} of the quotas' capacity "
              f"(from the {p['from']})"
              + (f", median BE {p['median_be']:.2f}" if p["median_be"] is not None else ""))
        if r["acct"]:
            ac = r["acct"]
            P("  CPU used / allowed by the quota, per host: "
              + "  ".join(f"{u:.1f}/{al:.1f} s" for u, al in zip(ac["cpu_s"], ac["allowed_cpu_s"])))
            if ac.get("daemon_cpu_s"):
                P("    of which the host's daemon (TLS, routing the workers' messages): "
                  + "  ".join(f"{x:.1f} s" for x in ac["daemon_cpu_s"]))
        if r.get("worker_cpu_s"):
            P(f"  the workers' CPU: {r['worker_cpu_s']:.1f} s, {r['worker_kernel_cpu_s']:.1f} s of it in "
              f"the kernels ({100 * r['worker_kernel_cpu_s'] / r['worker_cpu_s']:.0f} %, "
              f"{100 * r['worker_overlap_cpu_s'] / max(r['worker_kernel_cpu_s'], 1e-9):.0f} % of that "
              f"while ghosts were on the way), who sweep "
              f"{r['halo_work'] or 1:.3f} points per point owned (deep halos); workers that left "
              "are not counted")
        if r.get("ghost_waits"):
            P("  blocked for ghosts (wall s; a worker waits for the slowest of its neighbours): " +
              ", ".join(f"{h} ({q} quanta) {t:.2f}" for h, q, t in r["ghost_waits"]))
        P(f"  communication {100 * (r['comm_share'] or 0):.0f} % of the workers' time; ring lambda "
          f"{1e3 * (r['lambda_s'] or 0):.2f} ms/message, tau {1e9 * (r['tau_s_per_byte'] or 0):.1f} ns/B "
          f"({1e-6 / r['tau_s_per_byte'] if r['tau_s_per_byte'] else 0:.0f} MB/s)")
        over = {k: sum(e.get(k, 0) for e in r["epochs"]) for k in ("publish_s", "decide_s", "move_s")}
        if any(k in e for e in r["epochs"] for k in over):
            P(f"  balancer time over the run: publish {over['publish_s']:.2f} s (the spread of each "
              f"epoch's reports; nobody waits for it), decide {over['decide_s']:.3f} s, move "
              f"{over['move_s']:.2f} s")
        mv = [e.get("moved", 0) for e in r["epochs"]]
        if mv and r["bytes_moved"]:
            tau = r["tau_s_per_byte"] or 0
            P(f"  moves: {r['quanta_moved']} quanta ({r['bytes_moved'] / 1e6:.0f} MB) in "
              f"{sum(1 for x in mv if x)} of {len(mv)} epochs, at most {max(mv)} in one; "
              f"{r['bytes_moved'] * tau:.1f} s of transfer at the ring's tau")
        for e in r["events"]:
            ac = e.get("after_change_s")
            P(f"  reclaim: epoch {e.get('epoch')} (+{e.get('t_s', 0):.2f} s) {e.get('host')} {e.get('what')}"
              + (f", {ac:.2f} s after its quota changed" if ac is not None else
                 ", no quota change of that host before (its quota is what it always was)")
              + f" [{r['events_from']}]")
        be = [e["be"] for e in r["epochs"]]
        if be:
            P(f"  BE per epoch ({len(be)}; min {min(be):.2f}, median {statistics.median(be):.2f}):")
            for i in range(0, len(be), 20):
                P("   " + " ".join(f"{x:.2f}" for x in be[i:i + 20]))
        bc = [e["be_cpu"] for e in r["epochs"] if "be_cpu" in e]
        if bc:
            P(f"  BE of the kernels' CPU times at the workers' shares (be_cpu; min {min(bc):.2f}, "
              f"median {statistics.median(bc):.2f}):")
            for i in range(0, len(bc), 20):
                P("   " + " ".join(f"{x:.2f}" for x in bc[i:i + 20]))
        bq = [e.get("be_quota") for e in r["epochs"] if e.get("be_quota") is not None]
        if bq:
            P(f"  BE of the placement against the quotas (min {min(bq):.2f}, median "
              f"{statistics.median(bq):.2f}):")
            for i in range(0, len(bq), 20):
                P("   " + " ".join(f"{x:.2f}" for x in bq[i:i + 20]))
    if bounds:
        P()
        P(f"the machine's bound at quotas {a.quotas} (bench/liquid_bound: the kernel in a slab per host "
          "by its quota, in its cgroup, no messages, none of the job's points swept twice):")
        for k in sorted(bounds, reverse=True):
            b = bounds[k]
            P(f"  {'meeting every %d iterations' % k if k else 'never meeting':28} {b['iters']} iterations "
              f"{fmt_s(b['time_s'])}, {b['time_over_ideal']:.2f}x its ideal "
              f"({100 / b['time_over_ideal']:.0f} % of the quotas' capacity); CPU used / allowed: "
              + "  ".join(f"{u:.1f}/{al:.1f} s" for u, al in zip(b["cpu_s"], b["allowed_cpu_s"]))
              + ("" if b["be"] is None else f"; BE {b['be']:.2f}"))
        if bk and bk["be"] is not None:
            P(f"  BE there is the job's: the mean over the max of the parts' compute wall times.  A "
              f"placement exact to the quotas reads {bk['be']:.2f} when its parts meet every "
              f"{a.halo} iterations: a part with a small quota sleeps at the meeting with its CFS "
              "period's quota unspent and then computes at a whole CPU, so its compute time is "
              "shorter than its share says.  be_cpu (the kernels' CPU at the shares) does not "
              "read that.")
        for k in sorted(bounds, reverse=True):
            b = bounds[k]
            if k and "goal_pass" in b:
                P(f"  its BE per epoch of {a.epoch} iterations, meeting every {k}: median "
                  f"{b['epoch_be_median']:.2f}, {100 * b['epochs_above']:.0f} % of {len(b['epoch_be'])} epochs above "
                  f"{BE_GOAL}; a change at any one of its epochs would pass the goal's test (above {BE_GOAL} "
                  f"{HOLD} epochs in a row, from within {RECOVER_EPOCHS}) in {100 * b['goal_pass']:.0f} % of them, "
                  f"two changes (as independent chances) in {100 * b['goal_pass'] ** 2:.0f} %")
        if floor:
            f = floor
            P(f"  the TLS floor (bench/pvm_timing_floor, 1 MB messages between two hosts, the cluster's "
              f"TLS 1.3): {f['send_cpu_ms_per_mb']:.2f} ms of CPU per MB to send, "
              f"{f['recv_cpu_ms_per_mb']:.2f} ms to receive")
            P(f"  the bound's slabs, had they sent their ghosts ({len(quotas) - 1} planes of {a.grid}^2, "
              f"both ways, every iteration): {f['slab_bytes'] / 1e9:.2f} GB over {a.iters} iterations, "
              f"{f['slab_cpu_s']:.1f} s of CPU at the floor = {100 * f['slab_share']:.0f} % of the kernels' "
              f"{f['kernel_cpu_s']:.1f} s at the single-core rate; with it, the bound (measured in its own window, "
              "after the jobs, so it moves with the machine's other work as they do) reads")
            for k in sorted(f["bound_with_ghosts"], reverse=True):
                g = f["bound_with_ghosts"][k]
                P(f"    {'meeting every %d iterations' % k if k else 'never meeting':28} "
                  f"{g:.2f}x ideal (the goal is {IDEAL_GOAL}x): at that, the balanced "
                  f"run would take {fmt_s(g * on['ideal_s'])}, {off['time_s'] / (g * on['ideal_s']):.2f}x faster "
                  f"than this fixed run (the goal is {SPEEDUP_GOAL}x)")
            for m in ("off", "on"):
                j = f["job"].get(m)
                if j and j["floor_cpu_s"] > 0:
                    P(f"  the {'fixed' if m == 'off' else 'balanced'} job's ghosts: {j['bytes'] / 1e9:.2f} GB, "
                      f"{j['floor_cpu_s']:.1f} s of CPU at the floor; its workers spent "
                      f"{j['outside_cpu_s']:.1f} s outside their kernels "
                      f"({j['outside_cpu_s'] / j['floor_cpu_s']:.1f}x that)")
        if same:
            P(f"  the balanced job at these quotas: {', '.join(f'{100 * e:.0f} %' for e in same)} of the "
              "capacity (its phases above); the rest of the gap is the runtime's -- ghost messages, "
              "halo points swept twice, waiting for them")
    P()
    P("goals (issue 8):")
    for g in goals:
        v = g["value"]
        P(f"  {g['goal']:50} {str(v):>14}  {'met' if g['met'] else 'not met'}")
    if any(r is not None for r in recs_cpu):
        ok = all(r is not None and r <= RECOVER_EPOCHS for r in recs_cpu)
        P(f"  {'  the same, read by be_cpu (not the goal)':50} {str(recs_cpu):>14}  "
          f"{'within' if ok else 'not within'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
