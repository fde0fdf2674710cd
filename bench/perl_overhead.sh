#!/usr/bin/env bash
# Devel::Hotline's cost next to NYTProf's, in one run: a CPU-bound Perl script and two real
# programs (Debian's perltidy on Perl::Tidy's Tokenizer.pm, pod2man on perl's perldiag.pod),
# each plain, under `perl -d:Hotline` (every statement measured), sampling (HOTLINE_PERL_SAMPLE,
# 1000 samples a second of CPU time, as `hotline record --perl-sample` runs it), under
# `perl -d:NYTProf` (its defaults) and NYTProf with statements off (NYTPROF=stmts=0). CPU seconds
# (user + system of the child) of REPS runs each (default 3), and the ratio of the medians to
# the plain run's. Usage: bench/perl_overhead.sh [BUILD] [REPS]   (default: build 3)
set -euo pipefail
build=${1:-build}
reps=${2:-3}
lib=$(cd "$build/frontends/perl/lib" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
eval "bench_$(declare -f cpu)"  # lib.sh's cpu WORKDIR COMMAND..., kept under another name
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/work.pl" <<'PERL'
use strict;
use warnings;

sub score {
  my ($word) = @_;
  my $s = 0;
  for my $c (split //, $word) {
    $s = ($s * 31 + ord($c)) % 1000003;
  }
  return $s;
}

my %seen;
my $total = 0;
for my $i (1 .. 1200000) {
  my $w = "key" . ($i * 7919 % 100003);
  my $v = score($w);
  $seen{$v % 1000}++;
  $total += $v;
}
my @top = (sort { $seen{$b} <=> $seen{$a} || $a <=> $b } keys %seen)[0 .. 4];
print "total $total top @top\n";
PERL
cd "$work"
# CPU seconds of one run (bench/lib.sh's, to the microsecond; the run's output discarded).
cpu() { bench_cpu "$work" "$@"; }
names=(plain hotline hotline_sample nytprof nytprof_stmts0)
declare -A programs=(
  [work.pl]="work.pl"
  [perltidy]="/usr/bin/perltidy -st -se -npro /usr/share/perl5/Perl/Tidy/Tokenizer.pm"
  [pod2man]="/usr/bin/pod2man /usr/share/perl/5.36/pod/perldiag.pod"
)
for program in work.pl perltidy pod2man; do
  read -r -a cmd <<<"${programs[$program]}"
  if [ ! -e "${cmd[0]}" ] || [ ! -e "${cmd[-1]}" ]; then
    echo "$program: not installed, skipped"
    continue
  fi
  declare -A runs=()
  for _ in $(seq "$reps"); do
    runs[plain]+="$(cpu perl "${cmd[@]}")"$'\n'
    runs[hotline]+="$(HOTLINE_OUTPUT=$work/p.hotline PERL5LIB=$lib cpu perl -d:Hotline "${cmd[@]}")"$'\n'
    runs[hotline_sample]+="$(HOTLINE_OUTPUT=$work/s.hotline HOTLINE_PERL_SAMPLE=1000000 PERL5LIB=$lib \
      cpu perl -d:Hotline "${cmd[@]}")"$'\n'
    runs[nytprof]+="$(NYTPROF=file=$work/n.out cpu perl -d:NYTProf "${cmd[@]}")"$'\n'
    runs[nytprof_stmts0]+="$(NYTPROF=file=$work/n0.out:stmts=0 cpu perl -d:NYTProf "${cmd[@]}")"$'\n'
  done
  plain=$(printf '%s' "${runs[plain]}" | grep -v '^$' | median)
  echo "== $program"
  printf '%-16s %-32s %8s %8s\n' run "CPU seconds ($reps runs)" median ratio
  for n in "${names[@]}"; do
    values=$(printf '%s' "${runs[$n]}" | grep -v '^$' | tr '\n' ' ')
    m=$(printf '%s' "${runs[$n]}" | grep -v '^$' | median)
    printf '%-16s %-32s %8s %8s\n' "$n" "$values" "$m" "$(perl -e "printf '%.2fx', $m / $plain")"
  done
  unset runs
done
