-- tsumo ws -s docs/examples/ws-echo.lua ws://host/echo
-- An echo server: each message is answered by the next message the server sends, so the
-- script gives no key and needs no reply(). Globals are this connection's own.
local n = 0

function message()
   n = n + 1
   return string.format("hello %d from tsumo", n)
end

function done(summary, latency, requests)
   io.write(string.format("echo: %d sent, %d answered, p99 %.0f us\n",
      summary.sent, summary.answered, latency:percentile(99)))
end
