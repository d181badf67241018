-- wrk script: a NEW valid linkout token on EVERY request, so every 302 is a newly written record.
--   wrk -s bench/new-token.lua http://127.0.0.1:PORT/nl
-- externalPurchaseId = <20 random hex digits per wrk thread>-<48-bit per-thread counter>, formatted
-- 8-4-4-4-12 lowercase (version-4 nibble): unique across threads, connections, rounds and runs.
-- tokenCreationDate = os.time()*1000. BENCH_SAMPLE=1 prints the first request's path ("SAMPLE /nl?...").
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local T = require("token")
local tohex, sub = T.tohex, string.sub

local r = T.randomHex(10)
local prefix = sub(r, 1, 8) .. "-" .. sub(r, 9, 12) .. "-4" .. sub(r, 14, 16) .. "-" .. sub(r, 17, 20) .. "-"
local counter = 0
local lastSecond, headEncoded, headRest = nil, nil, nil
local sample = os.getenv("BENCH_SAMPLE") ~= nil

function request()
  local now = os.time()
  if now ~= lastSecond then
    -- Everything up to the counter is fixed within a second: encode its whole 3-byte groups once.
    lastSecond = now
    local head = T.jsonHead(now * 1000) .. prefix
    local cut = #head - #head % 3
    headEncoded, headRest = T.b64url(sub(head, 1, cut)), sub(head, cut + 1)
  end
  counter = counter + 1
  local hi = math.floor(counter / 4294967296)
  local token = headEncoded .. T.b64url(headRest .. tohex(hi, 4) .. tohex(counter % 4294967296, 8) .. '"}')
  local path = T.path(wrk.path, token)
  if sample then sample = false; io.write("SAMPLE " .. path .. "\n"); io.flush() end
  return wrk.format("GET", path)
end

done = T.done
