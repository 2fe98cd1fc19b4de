-- tsumo ws -s docs/examples/ws-chat.lua ws://host/chat
-- A chat room: each connection joins with its own name (connect() sets a header and asks
-- for the "chat" subprotocol), says something, and the server
-- acknowledges it with {"ack":seq}. Everyone's messages arrive in between as pushes.
local seq = 0
local name

function connect()
   math.randomseed(wrk.time_us())
   name = string.format("tsumo-%d", math.random(1e9))
   return { ["X-Chat-Name"] = name }, "chat"
end

function message()
   seq = seq + 1
   return string.format('{"seq":%d,"text":"message %d from %s"}', seq, seq, name), seq
end

function reply(data)
   -- {"ack":N} answers message N; {"from":...} is someone talking: a push.
   return tonumber(data:match('^{"ack":(%d+)'))
end
