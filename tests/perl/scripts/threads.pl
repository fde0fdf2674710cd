# Two ithreads besides the main one, each calling its own sub a known number of times.
use strict;
use warnings;
use threads;

sub work {
  my ($n) = @_;
  my $s = 0;
  $s += $_ for 1 .. $n;
  return $s;
}

sub worker {
  my ($calls) = @_;
  my $t = 0;
  $t += work(1000) for 1 .. $calls;
  return $t;
}

my @threads = map { threads->create(\&worker, $_ * 100) } 1 .. 2;
my $main = 0;
$main += work(10) for 1 .. 7;
my @results = map { $_->join } @threads;
print "results: @results $main\n";
