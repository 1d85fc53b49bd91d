-- POSTs one JSON body (the file named by $BODY) on every request of every connection.
-- wrk -t2 -c32 -d20s -s post.lua http://127.0.0.1:8080/filter-simulation   (BODY=... in env)
--
-- No response() callback: scanning every body in Lua costs wrk more CPU than the server spends
-- on a request, and client and server share the cores. Answers that carry an `Error` are
-- counted by run.sh from the server's metrics instead.
local path = os.getenv("BODY")
if path == nil then
  error("set BODY to the request body file")
end
local f = assert(io.open(path, "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  io.write(string.format("requests/s %.0f  p50 %.2f ms  p99 %.2f ms  non-2xx %d  socket errors %d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
