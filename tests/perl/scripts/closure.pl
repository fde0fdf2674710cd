use strict;
use warnings;

sub make_counter {
  my ($step) = @_;
  my $n = 0;
  return sub {
    $n += $step;
    return $n;
  };
}

my $by_one = make_counter(1);
my $by_two = make_counter(2);
my $last = 0;
for (1 .. 50) {
  $last = $by_one->();
  $last += $by_two->();
}
print "closure: $last\n";
