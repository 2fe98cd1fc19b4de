-- The Lua side of the wrk scripting API, as wrk's own wrk.lua: the `wrk` table's defaults,
-- wrk.format, wrk.setup and wrk.init. Rust adds wrk.lookup, wrk.connect, wrk.time_us,
-- wrk.addrs (main state) and wrk.thread (thread states).
--
-- Differences from wrk's wrk.lua, all deliberate:
--   * headers are written in a fixed order (Host, then the -H order, then any other header
--     by name, Content-Length last) instead of `pairs` order, so requests are reproducible;
--   * Host and Content-Length are recognised whatever their case, so `-H "host: x"` does not
--     produce two Host headers.

local config = ...

local wrk = {
   scheme  = config.scheme,
   host    = config.host,
   port    = config.port,
   method  = "GET",
   path    = config.path,
   headers = {},
   body    = nil,
   thread  = nil,
}

-- The -H header names in command-line order.
local header_order = {}
for _, header in ipairs(config.headers) do
   local name, value = header[1], header[2]
   if wrk.headers[name] == nil then
      header_order[#header_order + 1] = name
   end
   wrk.headers[name] = value
end

-- The key of `headers` naming `lowercase` (e.g. "host"), whatever its case, or nil.
local function header_key(headers, lowercase)
   if headers[lowercase] ~= nil then
      return lowercase
   end
   for name in pairs(headers) do
      if type(name) == "string" and name:lower() == lowercase then
         return name
      end
   end
   return nil
end

function wrk.setup(thread)
   thread.addr = wrk.addrs[1]
   if type(setup) == "function" then
      setup(thread)
   end
end

function wrk.init(args)
   if not header_key(wrk.headers, "host") then
      local host = wrk.host
      local port = wrk.port

      host = host:find(":") and ("[" .. host .. "]") or host
      host = port and (host .. ":" .. port) or host

      wrk.headers["Host"] = host
   end

   if type(init) == "function" then
      init(args)
   end

   local req = wrk.format()
   wrk.request = function() return req end
end

function wrk.format(method, path, headers, body)
   local method  = method  or wrk.method
   local path    = path    or wrk.path
   local headers = headers or wrk.headers
   local body    = body    or wrk.body
   local s       = {}

   local host = header_key(headers, "host")
   if not host then
      local default = header_key(wrk.headers, "host")
      if default then
         host = "Host"
         headers[host] = wrk.headers[default]
      end
   end

   -- Like wrk, the table is mutated: Content-Length follows the body, or goes away without one.
   local length = header_key(headers, "content-length")
   while length do
      headers[length] = nil
      length = header_key(headers, "content-length")
   end
   headers["Content-Length"] = body and string.len(body)

   s[1] = string.format("%s %s HTTP/1.1", method, path)

   local written = { ["Content-Length"] = true }
   local function add(name)
      if not written[name] and headers[name] ~= nil then
         written[name] = true
         s[#s + 1] = string.format("%s: %s", name, tostring(headers[name]))
      end
   end

   if host then
      add(host)
   end
   for _, name in ipairs(header_order) do
      add(name)
   end
   local rest = {}
   for name in pairs(headers) do
      if not written[name] then
         rest[#rest + 1] = name
      end
   end
   table.sort(rest, function(a, b) return tostring(a) < tostring(b) end)
   for _, name in ipairs(rest) do
      add(name)
   end
   -- `written` held Content-Length back so that it comes last.
   if headers["Content-Length"] ~= nil then
      s[#s + 1] = string.format("Content-Length: %s", headers["Content-Length"])
   end

   s[#s + 1] = ""
   s[#s + 1] = body or ""

   return table.concat(s, "\r\n")
end

return wrk
