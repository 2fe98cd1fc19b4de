-- response() fails on line 3
function response(status, headers, body)
   error("response failed with status " .. status)
end
