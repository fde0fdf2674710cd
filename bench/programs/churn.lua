-- GC churn for the heap benchmark: short-lived strings and tables, about two million
-- allocations, as a scripting workload makes them.
local keep = {}
local total = 0
for i = 1, 400000 do
  local s = "item" .. i
  local t = {s, i, {i, i + 1}}
  keep[i % 512] = t
  total = total + #s
end
print(total)
