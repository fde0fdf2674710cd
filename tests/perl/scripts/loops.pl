use strict;
use warnings;

my $sum = 0;
for my $i (1 .. 1000) {
  $sum += $i;
  if ($i % 3 == 0) {
    $sum -= 1;
  }
}
my $j = 0;
while ($j < 250) {
  $j++;
  next if $j % 2;
  $sum += $j;
}
my @list = map { $_ * 2 } 1 .. 100;
$sum += $_ for @list;
print "loops: $sum\n";
