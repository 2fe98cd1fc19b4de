-- init() fails on line 3
function init(args)
   error("init failed")
end
