#!/usr/bin/env python3
"""Issue #44's hostile-request battery against a built `hamisim`, each case with its verdict:

1. deadlines: with --max-plan-time 2, a heavy /v1/estimate and a DRA /v1/plan whose allocator
   and CEL work grow with nodes x devices each end with 503 within the deadline + 1 s;
2. probes under a connection flood: 64 idle connections on the metrics listener, then 20
   kubelet-style probes (a new connection each, kept open): all answered within 1 s;
3. probes, the live /filter and 429s under a simulation flood: 50 connections posting 2.5 MB
   /filter-simulation bodies (--max-inflight-simulation-bytes 8 MB) while /healthz and /readyz
   are probed and the live /filter called (--cluster-snapshot) every 50 ms: every probe
   answered within 1 s, the live /filter's p99 under 100 ms, and some posts refused with 429;
4. memory: idle RSS after that flood within 2x of its value before (after one warm-up post);
5. SIGTERM during a long plan with --cluster-snapshot: exit within --shutdown-grace (2 s) + 1 s,
   and a complete --snapshot-out file.

Needs python3-yaml (the body generators). The last line says how many cases passed.

    bench/load/hostile_battery.py [HAMISIM]   (default build/src/cli/hamisim)
    BATTERY_CASES=simulation_flood bench/load/hostile_battery.py   (only the cases named)
"""
import http.client
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..")
hamisim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/src/cli/hamisim")
work = tempfile.mkdtemp(prefix="hamisim-battery-")
results = []


def verdict(name, ok, detail):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate(script, args, name):
    path = os.path.join(work, name)
    with open(path, "wb") as out:
        subprocess.run([sys.executable, os.path.join(here, script), *map(str, args)], stdout=out,
                       check=True)
    return path


class Serve:
    def __init__(self, *flags):
        self.port, self.metrics = free_port(), free_port()
        self.log = open(os.path.join(work, f"serve-{self.port}.log"), "wb")
        self.proc = subprocess.Popen(
            [hamisim, "serve", "--listen", f"127.0.0.1:{self.port}", "--metrics-listen",
             f"127.0.0.1:{self.metrics}", "--max-body-bytes", "40000000",
             "--device-profiles", os.path.join(root, "examples/plan/device-profiles.yaml"),
             *flags], stdout=self.log, stderr=self.log)
        for _ in range(200):
            if get(self.metrics, "/healthz", 1.0)[0] == 200:
                return
            time.sleep(0.05)
        raise RuntimeError("serve did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)
        self.log.close()


def get(port, path, timeout):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        c.close()
        return r.status, None
    except Exception as e:  # refused, reset, timed out
        return None, e


def post(port, path, body, timeout=600):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    start = time.monotonic()
    c.request("POST", path, body, {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, time.monotonic() - start, data


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def case_deadlines():
    estimate = open(generate("hostile_estimate.py", [2000, 3000, 1000], "estimate.json"),
                    "rb").read()
    dra = open(generate("hostile_dra_plan.py", [800, 256, 10000], "dra.json"), "rb").read()
    serve = Serve("--max-plan-time", "2")
    try:
        for name, path, body in (("estimate", "/v1/estimate", estimate),
                                 ("DRA plan", "/v1/plan", dra)):
            status, took, data = post(serve.port, path, body)
            # The deadline counts from the start of the computation: decoding comes first.
            verdict(f"deadline, {name}", status == 503 and took < 2 + 1 + 1,
                    f"{status} after {took:.2f} s: {data[:160].decode(errors='replace')}")
    finally:
        serve.stop()


def case_connection_flood():
    serve = Serve()
    try:
        idle = []
        for i in range(64):
            s = socket.create_connection(("127.0.0.1", serve.metrics))
            if i % 2 == 0:  # keep-alive between requests; the others connected and silent
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                s.recv(4096)
            idle.append(s)
        answered, slowest, probes = 0, 0.0, []
        for _ in range(20):
            start = time.monotonic()
            try:
                c = http.client.HTTPConnection("127.0.0.1", serve.metrics, timeout=1.0)
                c.request("GET", "/healthz")
                r = c.getresponse()
                r.read()
                if r.status == 200:
                    answered += 1
                probes.append(c)  # kept open: each probe needs a place of its own
            except Exception:
                pass
            slowest = max(slowest, time.monotonic() - start)
        verdict("probes under 64 idle connections", answered == 20,
                f"{answered}/20 answered, slowest {slowest * 1000:.1f} ms")
        for s in idle:
            s.close()
        for c in probes:
            c.close()
    finally:
        serve.stop()


def case_simulation_flood():
    gen = os.path.join(work, "gen")
    subprocess.run([hamisim, "gen", "--nodes", "1000", "--out", gen], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([sys.executable, os.path.join(here, "make_bodies.py"), gen, work, "200"],
                   check=True)
    body = open(os.path.join(work, "filter-200.json"), "rb").read()
    subprocess.run([sys.executable, os.path.join(here, "live_bodies.py"), gen, work], check=True,
                   stdout=subprocess.DEVNULL)
    live = [line.encode() for line in open(os.path.join(work, "live-requests.jsonl"))]
    serve = Serve("--max-inflight-simulation-bytes", "8000000", "--cluster-snapshot",
                  os.path.join(gen, "cluster.json"))
    try:
        for _ in range(600):  # the live source loads its snapshot first
            if get(serve.metrics, "/readyz", 1.0)[0] == 200:
                break
            time.sleep(0.05)
        # Before: warmed up by one request (the bounded caches hold what it decoded).
        post(serve.port, "/filter-simulation", body)
        before = rss_kib(serve.proc.pid)
        # The live /filter on a quiet server, for comparison with its latency under the flood.
        quiet = sorted(post(serve.port, "/filter", live[i % len(live)], timeout=30)[1]
                       for i in range(20))
        # The flood runs in a process of its own, so that its threads never hold up the
        # probing client (Python's lock around the interpreter).
        results_queue, stop = multiprocessing.Queue(), multiprocessing.Event()
        flood = multiprocessing.Process(target=flood_simulation,
                                        args=(serve.port, body, 50, stop, results_queue))
        flood.start()
        probes, late, live_times = 0, 0, []
        late_by_path = {"/healthz": 0, "/readyz": 0}
        end = time.monotonic() + 10
        while time.monotonic() < end:
            for path in ("/healthz", "/readyz"):
                start = time.monotonic()
                status, _ = get(serve.metrics, path, 1.0)
                probes += 1
                took = time.monotonic() - start
                if status != 200 or took > 1.0:
                    late += 1
                    late_by_path[path] += 1
                    print(f"  {path}: {status} after {took * 1000:.0f} ms", flush=True)
            try:
                status, took, _ = post(serve.port, "/filter", live[len(live_times) % len(live)],
                                       timeout=30)
                live_times.append(took if status == 200 else float("inf"))
            except Exception:
                live_times.append(float("inf"))
            time.sleep(0.05)
        stop.set()
        statuses = results_queue.get()
        flood.join()
        late_paths = ", ".join(f"{p} {n}" for p, n in late_by_path.items() if n) or "none"
        verdict("probes under a simulation flood", late == 0,
                f"{probes - late}/{probes} answered within 1 s (late: {late_paths}); "
                f"posts {statuses}")
        live_times.sort()
        p50 = live_times[len(live_times) // 2]
        p99 = live_times[min(len(live_times) - 1, (len(live_times) * 99) // 100)]
        verdict("live /filter under a simulation flood", p99 < 0.1,
                f"{len(live_times)} calls, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms "
                f"(goal: p99 under 100 ms; quiet server: p50 {quiet[10] * 1000:.1f} ms, "
                f"max {quiet[-1] * 1000:.1f} ms)")
        verdict("429 under simulation overload", statuses.get(429, 0) > 0,
                f"{statuses.get(429, 0)} refused with 429, {statuses.get(200, 0)} answered")
        time.sleep(3)
        after = rss_kib(serve.proc.pid)
        verdict("memory after the flood", after <= 2 * before,
                f"RSS {before // 1024} MB before, {after // 1024} MB 3 s after")
    finally:
        serve.stop()


def flood_simulation(port, body, connections, stop, results_queue):
    # In a cluster the flooding client (Cluster Autoscaler) runs on a machine of its own; here
    # it shares the server's two cores, so it runs at the lowest priority, to measure the
    # server rather than the CPU the client takes from it. It still saturates the server:
    # most of its posts are refused with 429. (At the client's normal priority the live
    # /filter's p99 is in docs/reliability.md too.)
    if os.environ.get("BATTERY_FLOOD_NICE", "19") != "0":
        os.nice(int(os.environ.get("BATTERY_FLOOD_NICE", "19")))
    statuses, lock = {}, threading.Lock()

    def one():
        while not stop.is_set():
            try:
                status, _, _ = post(port, "/filter-simulation", body, timeout=30)
            except Exception as e:
                status = type(e).__name__
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=one) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results_queue.put(statuses)


def case_sigterm():
    snapshot_out = os.path.join(work, "snapshot-out.json")
    # 1,900 nodes: the plan computes far longer than the grace.
    dra = open(generate("hostile_dra_plan.py", [1900, 256, 10000], "dra-1900.json"), "rb").read()
    serve = Serve("--max-plan-time", "600", "--shutdown-grace", "2", "--cluster-snapshot",
                  os.path.join(work, "gen", "cluster.json"), "--snapshot-out", snapshot_out)
    threading.Thread(target=lambda: _quietly(post, serve.port, "/v1/plan", dra),
                     daemon=True).start()
    time.sleep(4)  # the body is read and decoded (~1 s); the plan computes
    start = time.monotonic()
    serve.proc.send_signal(signal.SIGTERM)
    try:
        serve.proc.wait(60)
    except subprocess.TimeoutExpired:
        serve.proc.kill()
    took = time.monotonic() - start
    serve.log.close()
    complete = False
    try:
        with open(snapshot_out) as f:
            complete = len(json.load(f).get("items", [])) > 0
    except Exception:
        pass
    verdict("SIGTERM during a plan", took < 2 + 1 and complete,
            f"exit {took:.2f} s after SIGTERM (grace 2 s), snapshot complete: {complete}")


def _quietly(f, *args):
    try:
        f(*args)
    except Exception:
        pass


# BATTERY_CASES=simulation_flood,sigterm runs only those cases (while working on one).
chosen = [c for c in os.environ.get("BATTERY_CASES", "").split(",") if c]
for case in (case_deadlines, case_connection_flood, case_simulation_flood, case_sigterm):
    if chosen and case.__name__.removeprefix("case_") not in chosen:
        continue
    try:
        case()
    except Exception as e:
        verdict(case.__name__, False, f"{type(e).__name__}: {e}")
print(f"hostile battery: {sum(results)} passed, {len(results) - sum(results)} failed "
      f"(work files in {work})")
sys.exit(0 if all(results) else 1)
