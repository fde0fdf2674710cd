use strict;
my $x = 1;
print "never\n";
sub broken {
  my $y = ;
}
