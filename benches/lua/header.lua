-- A static script that changes nothing per request: it adds one header, built into the
-- request once by wrk.init. Compared with the same header given by -H and no script, it
-- measures what a static script costs per request (it should cost nothing).
wrk.headers["X-Bench"] = "static"
