use strict;
use warnings;

sub fib {
  my ($n) = @_;
  return $n if $n < 2;
  return fib($n - 1) + fib($n - 2);
}

my $total = 0;
for my $i (1 .. 3) {
  $total += fib(15);
}
print "fib: $total\n";
