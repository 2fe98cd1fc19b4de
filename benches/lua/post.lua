-- Static POST (wrk's post.lua): built once by wrk.init, no Lua per request.
wrk.method = "POST"
wrk.body   = "foo=bar&baz=quux"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
