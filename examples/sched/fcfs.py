#!/usr/bin/env python3
"""A first-come, first-served, first-fit scheduler for fluxq.

Written from docs/scheduler-protocol.md alone, as the starting point for a
scheduler of your own. Plug it in with

    fluxsched run --sched-cmd 'python3 examples/sched/fcfs.py --mode limited=8'

Options: --mode unlimited | limited=N (else the "mode" key of
FLUXQ_SCHED_PARAMS, else limited=8); --pidfile PATH (write our pid, for
tests and supervisors). FLUXQ_SCHED_PARAMS' "rfc6-keys" = true makes it send
RFC 6's matchtag and flags too. Python 3 standard library only.
"""
import json
import os
import re
import signal
import sys
import time

SUCCESS, ANNOTATE, DENY, CANCEL = 0, 1, 2, 3
ENODATA, EPROTO, STREAMING = 61, 71, 0x40
WAITING = "insufficient resources"


def log(*words):
    # stderr is fluxsched's stderr: the place for our diagnostics.
    print("fcfs.py:", *words, file=sys.stderr, flush=True)


def idset(s):
    """RFC 22 idset "0-3,7" -> set of ints."""
    out = set()
    for part in filter(None, (s or "").split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def idstr(ids):
    ids, parts = sorted(ids), []
    while ids:
        lo = hi = ids.pop(0)
        while ids and ids[0] == hi + 1:
            hi = ids.pop(0)
        parts.append(str(lo) if lo == hi else "%d-%d" % (lo, hi))
    return ",".join(parts)


def hostlist(s):
    """RFC 29 hostlist "node[0-2,5],login" -> list of names."""
    hosts = []
    for m in re.finditer(r"([^,\[]*)(?:\[([^\]]*)\])?([^,]*)", s):
        pre, ranges, post = m.groups()
        if not ranges:
            if pre + post:
                hosts.append(pre + post)
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            hosts += ["%s%0*d%s" % (pre, len(lo), i, post) for i in range(int(lo), int(hi or lo) + 1)]
    return hosts


def named(jobid, text):
    """Whether text names the job, in decimal or as fluxq prints it (F58)."""
    digits, f58, n = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", "", jobid
    while n:
        n, d = divmod(n, 58)
        f58 = digits[d] + f58
    return re.search(r"(?<![\w])(%d|\u0192%s)(?![\w])" % (jobid, f58 or "1"), text) is not None


class Node:
    def __init__(self, rank, host, cores, gpus):
        self.rank, self.host = rank, host
        self.cores, self.gpus = set(cores), set(gpus)
        self.free_cores, self.free_gpus = set(cores), set(gpus)


def parse_r(r):
    """R v1 -> {rank: (host, cores, gpus)}."""
    ex = r["execution"]
    hosts = [h for hl in ex.get("nodelist", []) for h in hostlist(hl)]
    ranks = {}
    for entry in ex["R_lite"]:
        for rank in idset(entry["rank"]):
            ranks[rank] = (idset(entry["children"].get("core")), idset(entry["children"].get("gpu")))
    return {rank: (hosts[i] if i < len(hosts) else "", c, g) for i, (rank, (c, g)) in enumerate(sorted(ranks.items()))}


def request(jobspec):
    """The jobspec's shape: (nodes or 0, exclusive, slots, cores and gpus per slot)."""
    res = jobspec["resources"][0]
    nodes, excl = 0, False
    if res["type"] == "node":
        nodes, excl = res["count"], bool(res.get("exclusive"))
        res = res["with"][0]
    per = {w["type"]: w["count"] for w in res.get("with", [])}
    return nodes, excl, res["count"], per.get("core", 0), per.get("gpu", 0)


def place(nodes, req, free=True):
    """First fit: {rank: (cores, gpus)} for req on nodes, or None."""
    nnodes, excl, slots, cps, gps = req
    got = {}
    for n in sorted(nodes, key=lambda n: n.rank):
        cores = sorted(n.free_cores if free else n.cores)
        gpus = sorted(n.free_gpus if free else n.gpus)
        if excl and (len(cores) < len(n.cores) or len(gpus) < len(n.gpus)):
            continue
        fit = min(len(cores) // cps if cps else slots, len(gpus) // gps if gps else slots)
        want = slots if nnodes else slots - sum(k for k, _, _ in got.values())
        if nnodes and fit < slots or fit == 0:
            continue
        k = min(fit, want)
        got[n.rank] = (k, cores if excl else cores[:k * cps], gpus if excl else gpus[:k * gps])
        if (len(got) == nnodes) if nnodes else (sum(k for k, _, _ in got.values()) == slots):
            return {r: (set(c), set(g)) for r, (_, c, g) in got.items()}
    return None


class Scheduler:
    def __init__(self, mode, rfc6):
        self.mode, self.rfc6, self.tag = mode, rfc6, 0
        self.nodes, self.up, self.reserved, self.outside = {}, set(), {}, set()
        self.pending = {}    # id -> alloc request payload, and "annotated"
        self.held = {}       # id -> {rank: (cores, gpus)}

    def send(self, topic, typ, payload=None, **keys):
        msg = {"topic": topic, "type": typ}
        if self.rfc6 and typ == "request":
            self.tag += 1
            msg["matchtag"] = self.tag
        msg.update(keys)
        if payload is not None:
            msg["payload"] = payload
        sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def respond(self, jobid, typ, **keys):
        self.send("sched.alloc", "response", dict(id=jobid, type=typ, **keys))

    def take(self, alloc, sign):
        for rank, (cores, gpus) in alloc.items():
            n = self.nodes[rank]
            (n.free_cores.difference_update if sign < 0 else n.free_cores.update)(cores)
            (n.free_gpus.difference_update if sign < 0 else n.free_gpus.update)(gpus)

    def usable(self, jobspec):
        """Up nodes in the job's sessions (the default one: in no reservation)."""
        targets = jobspec.get("attributes", {}).get("system", {}).get("targets") or ["default"]
        reserved = set().union(*self.reserved.values())
        ranks = set()
        for t in targets:
            ranks |= set(self.nodes) - reserved if t == "default" else self.reserved.get(t, set())
        return [self.nodes[r] for r in ranks - self.outside if r in self.up]

    def acquire(self, p):
        if p.get("resources"):
            for rank, (host, cores, gpus) in parse_r(p["resources"]).items():
                self.nodes[rank] = Node(rank, host, cores, gpus)
        self.up |= idset(p.get("up"))
        self.up -= idset(p.get("down"))
        if p.get("sessions") is not None:
            self.reserved = {k: idset(v) for k, v in p["sessions"].items()}
        if p.get("outside") is not None:
            self.outside = idset(p["outside"])

    def hello(self, p):
        # A job that holds resources since before we started: mark them taken.
        if "R" not in p:
            log("hello for job", p["id"], "carries no R; its resources stay free here")
            return
        alloc = {rank: (c, g) for rank, (_, c, g) in parse_r(p["R"]).items() if rank in self.nodes}
        self.held[p["id"]] = alloc
        self.take(alloc, -1)

    def alloc(self, p):
        # Jobspecs come from users (guests too): one we cannot read is
        # denied, never a crash that would come back with every restart.
        try:
            req = request(p["jobspec"])
            if min(req[0], req[2], req[3], req[4]) < 0 or req[2] < 1:
                raise ValueError("negative or zero counts")
            duration = float(p["jobspec"].get("attributes", {}).get("system", {}).get("duration", 0) or 0)
        except (KeyError, IndexError, TypeError, ValueError) as e:
            return self.respond(p["id"], DENY, note="fcfs.py cannot read this jobspec: %r" % e)
        if place(list(self.nodes.values()), req, free=False) is None:
            return self.respond(p["id"], DENY, note="unsatisfiable request")
        self.pending[p["id"]] = dict(p, req=req, duration=duration, annotated=False)

    def schedule(self):
        order = sorted(self.pending.values(), key=lambda j: (-j["priority"], j["t_submit"], j["id"]))
        for j in order:
            alloc = place(self.usable(j["jobspec"]), j["req"])
            if alloc is None:
                # First come, first served: the first job that does not fit
                # blocks the rest. They wait, and are told why once.
                for w in order[order.index(j):]:
                    if not w["annotated"]:
                        w["annotated"] = True
                        self.respond(w["id"], ANNOTATE, annotations={"sched": {"reason_pending": WAITING}})
                return
            del self.pending[j["id"]]
            self.take(alloc, -1)
            self.held[j["id"]] = alloc
            now = time.time()
            ranks = sorted(alloc)
            r = {"version": 1, "execution": {
                "R_lite": [{"rank": str(k), "children": dict(
                    {"core": idstr(alloc[k][0])}, **({"gpu": idstr(alloc[k][1])} if alloc[k][1] else {}))} for k in ranks],
                "nodelist": [self.nodes[k].host for k in ranks],
                "starttime": now,
                # fluxq ends the job at R's expiration: its time limit.
                "expiration": now + j["duration"] if j["duration"] > 0 else 0}}
            notes = {"sched": {"reason_pending": None, "resource_summary": ",".join(
                "rank%d/core%s" % (k, idstr(alloc[k][0])) for k in ranks)}}
            self.respond(j["id"], SUCCESS, R=r, annotations=notes)

    def free(self, jobid):
        self.take(self.held.pop(jobid, {}), +1)

    def handle(self, m):
        topic, p = m["topic"], m.get("payload") or {}
        if m["type"] == "response":
            if topic == "job-manager.sched-hello" and m.get("errnum") == ENODATA:
                mode, _, limit = self.mode.partition("=")
                self.send("job-manager.sched-ready", "request",
                          {"mode": mode, **({"limit": int(limit)} if limit else {})})
            elif m.get("errnum"):
                log("error response on %s: %s (%d)" % (topic, m.get("errstr", ""), m["errnum"]))
                if topic in ("job-manager.sched-hello", "job-manager.sched-ready") or m["errnum"] == EPROTO:
                    # RFC 27 (hello, ready): log it and exit. After EPROTO we
                    # are suspended and our state is suspect: a new process
                    # learns the truth from hello.
                    sys.exit(1)
                if topic == "sched.alloc":
                    # A refused SUCCESS: free what we set aside. The job
                    # manager fails the job; nothing more comes for it.
                    for jobid in [j for j in self.held if named(j, m.get("errstr", ""))]:
                        self.free(jobid)
            elif topic == "resource.acquire":
                self.acquire(p)
            elif topic == "job-manager.sched-hello":
                self.hello(p)
            elif topic == "job-manager.sched-ready":
                log("ready, mode %s, %d jobs waiting, %d holding resources" % (
                    self.mode, p.get("count", 0), len(self.held)))
            return
        if topic == "sched.alloc":
            self.alloc(p)
        elif topic == "sched.cancel":
            if self.pending.pop(p["id"], None) is not None:
                self.respond(p["id"], CANCEL)
        elif topic == "sched.free":
            self.free(p["id"])
            self.send("sched.free", "response", {"id": p["id"]}, **({"matchtag": m["matchtag"]} if "matchtag" in m else {}))
        elif topic == "sched.prioritize":
            for jobid, prio in p["jobs"]:
                if jobid in self.pending:
                    self.pending[jobid]["priority"] = prio
        else:
            log("ignoring", topic, m["type"])


def main():
    args = sys.argv[1:]
    try:
        params = json.loads(os.environ.get("FLUXQ_SCHED_PARAMS") or "{}")
        assert isinstance(params, dict)
    except (ValueError, AssertionError):
        sys.exit("fcfs.py: FLUXQ_SCHED_PARAMS is not a JSON object")
    mode, pidfile = str(params.get("mode", "limited=8")), None
    while args:
        opt = args.pop(0)
        if opt in ("--mode", "--pidfile") and args:
            mode, pidfile = (args.pop(0), pidfile) if opt == "--mode" else (mode, args.pop(0))
        else:
            sys.exit("fcfs.py: usage: fcfs.py [--mode unlimited|limited=N] [--pidfile PATH]")
    if not re.fullmatch(r"unlimited|limited=[1-9]\d*", mode):
        sys.exit("fcfs.py: mode must be unlimited or limited=N, not %r" % mode)
    if pidfile:
        with open(pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    # Ctrl-C on fluxsched's terminal reaches us too (same process group):
    # fluxsched stops us itself, by closing our stdin.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    s = Scheduler(mode, bool(params.get("rfc6-keys")))
    # We speak first: the inventory, then hello (RFC 27: before anything else).
    s.send("resource.acquire", "request", **({"flags": STREAMING} if s.rfc6 else {}))
    s.send("job-manager.sched-hello", "request", **({"flags": STREAMING} if s.rfc6 else {}))
    for line in sys.stdin:
        if line.strip():
            s.handle(json.loads(line))
            s.schedule()
    # stdin closed: fluxsched is stopping us. Exit promptly.


if __name__ == "__main__":
    main()
