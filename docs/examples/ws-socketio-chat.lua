-- tsumo ws --socketio -s docs/examples/ws-socketio-chat.lua ws://host:3000/
-- A socket.io chat room: each connection emits "chat" events, each acknowledged by the server
-- (the acknowledgement is the reply, matched by its id); everyone's "message" events arrive
-- in between as pushes, which reply(data) sees (data: the event's JSON array text).
local seq = 0
heard = 0

function message()
   seq = seq + 1
   -- The event as a JSON array: its name, then its payload.
   return string.format('["chat",{"seq":%d,"text":"hello %d"}]', seq, seq)
end

function reply(data)
   -- Only pushes come here; their return value is not used.
   if data:find('^%["message"') then
      heard = heard + 1
   end
end
