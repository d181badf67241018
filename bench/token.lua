-- Shared by new-token.lua and same-token.lua (wrk, LuaJIT): builds linkout link-out tokens the way
-- StoreKit hands them over, base64url without padding of
--   {"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":<ms>,"externalPurchaseId":"<uuid>"}
-- and prints one machine-readable line from done() that bench/run parses.
local bit = require("bit")
local band, rshift, tohex = bit.band, bit.rshift, bit.tohex
local byte, sub, format, concat = string.byte, string.sub, string.format, table.concat

local M = {}

M.appAppleId = tonumber(os.getenv("BENCH_APP_APPLE_ID") or "1234567890")
M.bundleId = os.getenv("BENCH_BUNDLE_ID") or "com.example"

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local enc6 = {}
for i = 0, 63 do enc6[i] = sub(alphabet, i + 1, i + 1) end
local enc12 = {} -- two output characters per 12 input bits
for i = 0, 4095 do enc12[i] = enc6[rshift(i, 6)] .. enc6[band(i, 63)] end

-- URL-safe base64 of s, no padding.
function M.b64url(s)
  local out, j, n = {}, 1, #s
  local full = n - n % 3
  for i = 1, full, 3 do
    local a, b, c = byte(s, i, i + 2)
    local v = a * 65536 + b * 256 + c
    out[j] = enc12[rshift(v, 12)]
    out[j + 1] = enc12[band(v, 4095)]
    j = j + 2
  end
  local rest = n - full
  if rest == 1 then
    local a = byte(s, full + 1)
    out[j] = enc6[rshift(a, 2)] .. enc6[band(a, 3) * 16]
  elseif rest == 2 then
    local a, b = byte(s, full + 1, full + 2)
    local v = a * 256 + b
    out[j] = enc6[rshift(v, 10)] .. enc6[band(rshift(v, 4), 63)] .. enc6[band(v, 15) * 4]
  end
  return concat(out)
end

-- The JSON up to (not including) the externalPurchaseId's value.
function M.jsonHead(creationMs)
  return format('{"appAppleId":%d,"bundleId":"%s","tokenCreationDate":%.0f,"externalPurchaseId":"',
    M.appAppleId, M.bundleId, creationMs)
end

function M.token(creationMs, uuid)
  return M.b64url(M.jsonHead(creationMs) .. uuid .. '"}')
end

function M.path(base, token)
  return base .. "?externalPurchaseToken=" .. token .. "&bundleId=" .. M.bundleId
end

-- n random bytes as lowercase hex, from /dev/urandom (falls back to math.random).
function M.randomHex(n)
  local f = io.open("/dev/urandom", "rb")
  local bytes
  if f then bytes = f:read(n); f:close() end
  if not bytes or #bytes ~= n then
    math.randomseed(os.time() + os.clock() * 1e6)
    local t = {}
    for i = 1, n do t[i] = string.char(math.random(0, 255)) end
    bytes = concat(t)
  end
  return (bytes:gsub(".", function(c) return format("%02x", byte(c)) end))
end

M.tohex = tohex

-- One line for bench/run: counts, and latency percentiles in microseconds.
function M.done(summary, latency, requests)
  local e = summary.errors
  io.write(format("BENCH requests=%d duration_us=%d status_errors=%d connect_errors=%d read_errors=%d "
    .. "write_errors=%d timeouts=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end

return M
