# Shared by the bench scripts (sourced): CPU time of a command and the median of a list.

# cpu WORKDIR COMMAND...: prints user+sys seconds of COMMAND and every process it waited for.
cpu() {
  local work=$1
  shift
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    cat "$work/stderr" >&2
    return 1
  }
  awk '{printf "%.3f\n", $1 + $2}' "$work/time"
}

# median: of the numbers on stdin, one a line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
