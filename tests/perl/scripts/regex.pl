use strict;
use warnings;

my $text = join(" ", map { "item$_=value" . ($_ * 7) } 1 .. 300);
my $matches = 0;
my $total = 0;
while ($text =~ /item(\d+)=value(\d+)/g) {
  $matches++;
  $total += $2 if $1 % 2;
}
(my $copy = $text) =~ s/value/v/g;
print "regex: $matches $total ", length($copy), "\n";
