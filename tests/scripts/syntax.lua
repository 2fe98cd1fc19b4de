-- a syntax error on line 3
function init(args)
   local = 1
end
