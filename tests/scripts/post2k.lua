-- a static POST of a 2048-byte binary body (the HTTPS POST scenario)

wrk.method = "POST"
wrk.body   = string.rep("\0\1\2\3\4\5\6\7", 256)
wrk.headers["Content-Type"] = "application/octet-stream"
