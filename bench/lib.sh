# Shared by the bench scripts (sourced): CPU time of a command and the median of a list.

# cpu WORKDIR COMMAND...: prints user+sys seconds of COMMAND and every process it waited for, to
# the microsecond the kernel's rusage gives (GNU time rounds to 10 ms: 5% of a 0.2 s run).
cpu() {
  local work=$1
  shift
  python3 -c '
import os, subprocess, sys
with open(sys.argv[1], "w") as err:
    child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, used = os.wait4(child.pid, 0)  # this child and what it waited for, nothing else
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(1)
print("%.4f" % (used.ru_utime + used.ru_stime))' "$work/stderr" "$@" || {
    cat "$work/stderr" >&2
    return 1
  }
}

# median: of the numbers on stdin, one a line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# sampling_programs WORK HERE: builds the programs the kernel sampler is measured on (a 30-deep C
# stack without frame pointers, Lua from Debian's source) and sets `names` and `programs` (name →
# command line).
sampling_programs() {
  local work=$1 here=$2
  gcc -O2 -g -fomit-frame-pointer -o "$work/deep30" "$here/programs/deep30.c"
  bash "$here/lua-source.sh" "$work/lua-build"
  names=(deep30 lua python-zlib)
  declare -gA programs=(
    [deep30]="$work/deep30 1000"
    [lua]="$work/lua-build/lua $here/programs/fib.lua 36"
    [python-zlib]="/usr/bin/python3 $here/programs/zlib_work.py"
  )
}
