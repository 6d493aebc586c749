-- wrk script of bench/http_control_plane.ts: one request shape per run,
-- configured by the arguments after `--`:
--
--   wrk ... -s bench/wrk/request.lua <url> -- <method> <body-file|-> <mode> [header ...]
--
-- method  GET, PUT, ...
-- body    a file whose bytes are the request body, or "-" for none
-- mode    "static": the same request every time (wrk's fast path, no Lua per
--                   request or response);
--         "same":   the same request every time, and the response statuses
--                   are counted;
--         "unique": every "@@N@@" in the body is replaced with
--                   "<thread>-<counter>", so no two requests carry the same
--                   content; the response statuses are counted.
-- header  "Name: value", any number
--
-- With counting on, done() prints one line
--   status_counts 200=12 201=3456
-- that the driver parses.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_id", #threads)
end

local mode = "static"
local template = nil
local counter = 0
statuses = {}

function init(args)
  wrk.method = args[1] or "GET"
  local bodyFile = args[2] or "-"
  mode = args[3] or "static"
  for i = 4, #args do
    local name, value = string.match(args[i], "^([^:]+):%s*(.*)$")
    if name == nil then error("bad header argument: " .. args[i]) end
    wrk.headers[name] = value
  end
  if bodyFile ~= "-" then
    local f = assert(io.open(bodyFile, "rb"))
    wrk.body = f:read("*a")
    f:close()
  end
  if mode == "unique" then
    template = wrk.body
  else
    -- wrk formats the request once when no request() is defined.
    request = nil
  end
  if mode == "static" then
    -- without response(), wrk does not hand headers and bodies to Lua.
    response = nil
  end
end

function request()
  counter = counter + 1
  local body = string.gsub(template, "@@N@@", thread_id .. "-" .. counter)
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local totals = {}
  local any = false
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    if counts ~= nil then
      for status, n in pairs(counts) do
        totals[status] = (totals[status] or 0) + n
        any = true
      end
    end
  end
  if not any then return end
  local keys = {}
  for status in pairs(totals) do table.insert(keys, status) end
  table.sort(keys)
  local parts = {}
  for _, status in ipairs(keys) do
    table.insert(parts, status .. "=" .. totals[status])
  end
  io.write("status_counts " .. table.concat(parts, " ") .. "\n")
end
