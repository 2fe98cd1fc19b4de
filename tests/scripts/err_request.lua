-- request() works for the start-up check, then fails on line 7
local calls = 0

function request()
   calls = calls + 1
   if calls > 1 then
      error("request failed")
   end
   return wrk.format()
end
