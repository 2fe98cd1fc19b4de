-- prints the arguments init() receives: args[0] is the URL, then the positional arguments

function init(args)
   received = args
   for i = 0, #args do
      print(string.format("args[%d] = %s", i, args[i]))
   end
end
