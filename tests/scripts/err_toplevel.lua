-- top-level code fails on line 3
wrk.method = "GET"
undefined_function()
