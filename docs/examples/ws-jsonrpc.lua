-- tsumo ws -s docs/examples/ws-jsonrpc.lua ws://host/rpc
-- JSON-RPC 2.0: each call carries an id, and its result carries the same id back. message()
-- returns the id as the key; reply() finds it in what the server sends. Notifications (no
-- id) are pushes: reply() returns nil for them.
local id = 0

function message()
   id = id + 1
   return string.format('{"jsonrpc":"2.0","id":%d,"method":"sum","params":[%d,2]}', id, id), id
end

function reply(data)
   -- A result or an error answers the call with its id; anything else is a push.
   if data:find('"result"', 1, true) or data:find('"error"', 1, true) then
      return tonumber(data:match('"id"%s*:%s*(%d+)'))
   end
   return nil
end

function done(summary, latency, requests)
   io.write(string.format("json-rpc: %d calls, %d answered, %d notifications, %d late\n",
      summary.sent, summary.answered, summary.pushed, summary.late))
end
