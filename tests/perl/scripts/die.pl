use strict;
use warnings;

sub inner {
  my ($n) = @_;
  die "too deep at $n\n" if $n % 3 == 0;
  return $n;
}

sub middle {
  my ($n) = @_;
  my $r = inner($n);
  return $r + 1;
}

sub outer {
  my ($n) = @_;
  my $v = eval { middle($n) };
  return defined $v ? $v : -1;
}

my $sum = 0;
for my $i (1 .. 30) {
  $sum += outer($i);
}
print "die: $sum\n";
