use strict;
use warnings;

my $code = <<'CODE';
my $x = 0;
for my $i (1 .. 10) {
  $x += $i;
}
$x;
CODE
my $sum = 0;
for (1 .. 4) {
  $sum += eval $code;
}
my $double = eval "sub { return 2 * shift }";
$sum += $double->($_) for 1 .. 5;
print "eval: $sum\n";
