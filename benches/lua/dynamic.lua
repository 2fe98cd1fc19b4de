-- A request() hook that builds every request in Lua (a counter in the query string), the
-- usual shape of a dynamic wrk script.
local counter = 0

function request()
   counter = counter + 1
   return wrk.format(nil, wrk.path .. "?n=" .. counter)
end
