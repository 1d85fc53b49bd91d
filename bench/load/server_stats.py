#!/usr/bin/env python3
"""What the server did during one wrk run, from two snapshots taken by run.sh (each: the
server's /metrics text, then its /proc/<pid>/stat line). Prints the requests it answered on the
route, how many of them were not a success (any outcome label but "ok": an HTTP 200 carrying an
`Error` is "error", 4xx/5xx are "client_error", "overloaded", ...), and the server's CPU time
per request (user + system)."""
import os
import re
import sys

route, before, after = sys.argv[1], sys.argv[2], sys.argv[3]
series = re.compile(
    r'^hamisim_http_request_duration_seconds_count\{route="([^"]*)",outcome="([^"]*)"\} (\S+)$')


def read(path):
    counts, cpu_ticks = {}, 0
    with open(path) as f:
        for line in f:
            m = series.match(line.strip())
            if m and m.group(1) == route:
                counts[m.group(2)] = float(m.group(3))
            elif line.startswith("stat "):
                fields = line[5:].rsplit(")", 1)[1].split()
                cpu_ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return counts, cpu_ticks


(c0, t0), (c1, t1) = read(before), read(after)
by_outcome = {k: c1.get(k, 0) - c0.get(k, 0) for k in set(c0) | set(c1)}
total = sum(by_outcome.values())
errors = {k: int(v) for k, v in by_outcome.items() if k != "ok" and v > 0}
cpu_s = (t1 - t0) / os.sysconf("SC_CLK_TCK")
per_req = f"{cpu_s / total * 1e6:.0f} us" if total else "-"
err_text = ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "0"
print(f"answered {int(total)}  error answers {err_text}  server CPU {cpu_s:.2f} s = {per_req}/request")
