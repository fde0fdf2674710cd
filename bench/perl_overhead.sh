#!/usr/bin/env bash
# Devel::Hotline's cost next to NYTProf's, in one run: a CPU-bound Perl script plain, under
# `perl -d:Hotline` (every statement measured), sampling (HOTLINE_PERL_SAMPLE, 1000 samples a
# second of CPU time, as `hotline record --perl-sample` runs it), under `perl -d:NYTProf` (its defaults) and NYTProf with statements off
# (NYTPROF=stmts=0). CPU seconds (user + system of the child) of 3 runs each, and the ratio of
# the medians to the plain run's. Usage: bench/perl_overhead.sh [BUILD]   (default: build)
set -euo pipefail
build=${1:-build}
lib=$(cd "$build/frontends/perl/lib" && pwd)
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
# CPU seconds of one run of "$@" (children included), its output discarded.
cpu() {
  perl -MPOSIX -e '
    open(my $out, ">&", \*STDOUT) or die; open(STDOUT, ">", "/dev/null") or die;
    my @t0 = POSIX::times();
    system(@ARGV) == 0 or die "failed: @ARGV\n";
    my @t1 = POSIX::times();
    printf $out "%.3f\n", ($t1[3] - $t0[3] + $t1[4] - $t0[4]) / POSIX::sysconf(POSIX::_SC_CLK_TCK());
  ' "$@"
}
median() { sort -n | sed -n 2p; }
declare -A runs
names=(plain hotline hotline_sample nytprof nytprof_stmts0)
for rep in 1 2 3; do
  runs[plain]+="$(cpu perl work.pl)"$'\n'
  runs[hotline]+="$(HOTLINE_OUTPUT=$work/p.hotline PERL5LIB=$lib cpu perl -d:Hotline work.pl)"$'\n'
  runs[hotline_sample]+="$(HOTLINE_OUTPUT=$work/s.hotline HOTLINE_PERL_SAMPLE=1000000 PERL5LIB=$lib \
    cpu perl -d:Hotline work.pl)"$'\n'
  runs[nytprof]+="$(NYTPROF=file=$work/n.out cpu perl -d:NYTProf work.pl)"$'\n'
  runs[nytprof_stmts0]+="$(NYTPROF=file=$work/n0.out:stmts=0 cpu perl -d:NYTProf work.pl)"$'\n'
done
plain=$(printf '%s' "${runs[plain]}" | median)
printf '%-16s %-26s %8s %8s\n' run "CPU seconds (3 runs)" median ratio
for n in "${names[@]}"; do
  values=$(printf '%s' "${runs[$n]}" | grep -v '^$' | tr '\n' ' ')
  m=$(printf '%s' "${runs[$n]}" | grep -v '^$' | median)
  printf '%-16s %-26s %8s %8s\n' "$n" "$values" "$m" "$(perl -e "printf '%.2fx', $m / $plain")"
done
