-- Table sorts, recursion, string formatting and pattern matching, scaled by arg[1] (the number
-- of values sorted; formats are a tenth of it) and arg[2] (fib's argument): the workload of
-- instructions_test (counted instructions against callgrind) and bench/instructions.sh.
local n = tonumber(arg[1]) or 20000
local depth = tonumber(arg[2]) or 20
local t = {}
for i = 1, n do t[i] = (i * 7919) % 100003 end
table.sort(t)
local s = 0
for i = 1, #t do s = s + t[i] end
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
local parts = {}
for i = 1, n // 10 do parts[#parts + 1] = string.format("%d:%s", i, tostring(i * 3)) end
local text = table.concat(parts, ",")
local words = 0
for w in text:gmatch("%d+") do words = words + 1 end
print(s, fib(depth), words, #text)
