-- wrk script: the SAME valid linkout token on every request, so after the first each is a repeat visit
-- (the update path: lastSeen and hits). The id is BENCH_SAME_ID (default below); tokenCreationDate is
-- the time the script loads.
--   wrk -s bench/same-token.lua http://127.0.0.1:PORT/nl
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local T = require("token")

local id = os.getenv("BENCH_SAME_ID") or "5a3e0000-0000-4000-8000-000000000001"
local path = T.path(wrk.path, T.token(os.time() * 1000, id))
if os.getenv("BENCH_SAMPLE") then io.write("SAMPLE " .. path .. "\n") end

function request()
  return wrk.format("GET", path)
end

done = T.done
