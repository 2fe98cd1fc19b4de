-- setup() fails on line 4
function setup(thread)
   local t = nil
   return t.field
end
