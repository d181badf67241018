-- wrk script for bench/run: requests PREBUILT by bench/make-requests, so wrk's per-request work is
-- handing over a string it already has, and measures its own CPU.
--
--   BENCH_POOL=FILE BENCH_THREADS=T wrk -tT -s bench/prebuilt.lua http://127.0.0.1:PORT/nl
--
-- init() (before wrk's clock starts) reads FILE, complete requests back to back, and keeps thread k's
-- disjoint slice of them (the k-th of T equal parts) as Lua strings; request() returns the next one.
-- When a thread has sent its whole slice it starts it again, and done() reports wraps>0: linkout would
-- then see repeated tokens (updates, not new records), so bench/run fails such a linkout run.
--
-- BENCH_STATIC=1: no pool and no request(), so wrk sends its one static request (the URL, plus -H
-- headers) without calling Lua at all: the cheapest load wrk can make, for the calibration run.
--
-- With several threads (-t2), wrk runs each thread's init() and then starts that thread, but starts its
-- clock only once every thread has started: thread 0 would send, and have counted, requests while thread
-- 1 loads its pool. So the last init() opens a gate (a word of memory the threads share); each thread
-- notes how many requests it had sent before it saw the gate open (`early`), and done() takes them off
-- wrk's count (exact to the requests in flight at that moment, at most one per connection). With one
-- thread the gate is open before the thread starts and early is 0.
--
-- done() prints one line for bench/run:
--   BENCH requests=… duration_us=… status_errors=… … p50_us=… p99_us=… wrk_cpu_us=… pool=… wraps=…
-- wrk_cpu_us is wrk's CPU time (all its threads, user + system, from os.clock(), i.e. clock()) from the
-- end of the last thread's init() to done(): the load phase, without the pool's loading.
local ffi = require("ffi")
local sub, find, format = string.sub, string.find, string.format

local static = os.getenv("BENCH_STATIC") == "1"
local threads, started = {}, 0

function setup(thread)
  if not shared_gate then shared_gate = ffi.new("int32_t[1]") end -- lives in the main Lua state until exit
  thread:set("gate_address", tonumber(ffi.cast("intptr_t", shared_gate)))
  thread:set("index", started)
  started = started + 1
  threads[#threads + 1] = thread
end

local pool, n, i, sent, gate, open = nil, 0, 0, 0, nil, false
wraps = 0
count = 0
early = 0

function init(args)
  if not static then
    local file = assert(os.getenv("BENCH_POOL"), "BENCH_POOL is not set")
    local parts = tonumber(os.getenv("BENCH_THREADS") or "1")
    local f = assert(io.open(file, "rb"))
    local all = f:read("*a")
    f:close()
    -- Every request ends with its blank line; all requests of a pool have the same length.
    local first = assert(find(all, "\r\n\r\n", 1, true), "no request in " .. file)
    local size = first + 3
    local total = math.floor(#all / size)
    assert(total * size == #all, file .. ": requests of different lengths")
    local per = math.floor(total / parts)
    assert(per > 0, file .. ": fewer requests than threads")
    local ok, new = pcall(require, "table.new")
    pool = ok and new(per, 0) or {}
    local base = index * per * size
    for k = 1, per do
      pool[k] = sub(all, base + (k - 1) * size + 1, base + k * size)
    end
    assert(sub(pool[per], -4) == "\r\n\r\n", file .. ": not a pool of requests")
    n, count = per, per
    all = nil
    collectgarbage("collect")
    -- request() allocates nothing; keep the collector from walking the pool during the run.
    collectgarbage("stop")
    gate = ffi.cast("volatile int32_t *", gate_address)
    if index == parts - 1 then gate[0] = 1 end
  end
  init_cpu = os.clock()
end

if not static then
  function request()
    if not open then
      open = gate[0] ~= 0
      if open then early = sent end
    end
    sent = sent + 1
    i = i + 1
    if i > n then
      i = 1
      wraps = wraps + 1
    end
    return pool[i]
  end
end

function done(summary, latency, requests)
  local start, pooled, wrapped, before = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    start = math.max(start, t:get("init_cpu") or 0)
    pooled = pooled + (t:get("count") or 0)
    wrapped = wrapped + (t:get("wraps") or 0)
    before = before + (t:get("early") or 0)
  end
  local e = summary.errors
  io.write(format("BENCH requests=%d duration_us=%d status_errors=%d connect_errors=%d read_errors=%d "
    .. "write_errors=%d timeouts=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d wrk_cpu_us=%d pool=%d wraps=%d\n",
    math.max(0, summary.requests - before), summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    (os.clock() - start) * 1e6, pooled, wrapped))
end
