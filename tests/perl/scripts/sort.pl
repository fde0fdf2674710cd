use strict;
use warnings;

sub by_length {
  my $d = length($a) <=> length($b);
  return $d || $a cmp $b;
}

my @words = map { "w" x ($_ % 7) . $_ } 1 .. 200;
my @sorted = sort by_length @words;
my @numeric = sort { $b <=> $a } 1 .. 100;
print "sort: $sorted[0] $sorted[-1] $numeric[0]\n";
