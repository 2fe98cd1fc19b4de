-- done() fails on line 3
function done(summary, latency, requests)
   local x = summary.missing.field
end
