#!/usr/bin/env python3
"""A burst of /filter-simulation requests against a running `hamisim serve` (issue #44): CLIENTS
connections each post BODY REQUESTS times, then the server idles; prints the server's resident
memory (VmRSS) before, its peak (VmHWM), and after 1, 5 and 10 s of idle, with the answers by
status. Memory must go back after a burst: idle RSS within 2x of its pre-burst value.

    bench/load/simulation_burst.py PID PORT BODY [CLIENTS [REQUESTS]]
"""
import http.client
import sys
import threading
import time
from collections import Counter

pid, port, body_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
clients = int(sys.argv[4]) if len(sys.argv) > 4 else 50
requests = int(sys.argv[5]) if len(sys.argv) > 5 else 4
with open(body_path, "rb") as f:
    body = f.read()


def status_kib(field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


statuses = Counter()
lock = threading.Lock()


def client():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for _ in range(requests):
        try:
            conn.request("POST", "/filter-simulation", body,
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            code = r.status
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        except Exception as e:  # a closed connection after a 429, a timeout
            code = type(e).__name__
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        with lock:
            statuses[code] += 1
    conn.close()


before = status_kib("VmRSS")
start = time.monotonic()
threads = [threading.Thread(target=client) for _ in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
took = time.monotonic() - start
after = {}
for wait in (1, 5, 10):
    time.sleep(wait - (time.monotonic() - start - took))
    after[wait] = status_kib("VmRSS")
print(f"{clients} clients x {requests} requests of {len(body)} bytes in {took:.1f} s: "
      f"{dict(statuses)}")
print(f"RSS before {before // 1024} MB, peak {status_kib('VmHWM') // 1024} MB, "
      f"after 1 s {after[1] // 1024} MB, 5 s {after[5] // 1024} MB, 10 s {after[10] // 1024} MB")
