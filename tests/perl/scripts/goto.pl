use strict;
use warnings;

sub target {
  my ($n) = @_;
  return $n * 2;
}

sub trampoline {
  my $unused = 1;
  goto &target;
}

my $sum = 0;
for my $i (1 .. 20) {
  $sum += trampoline($i);
}
print "goto: $sum\n";
