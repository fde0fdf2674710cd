# Subs whose memory perl reuses: a BEGIN block freed once it ran, then a sub compiled where it
# was; string evals' anonymous subs dropped after one call each; two BEGIN blocks on one line;
# an XSUB called through its name in a string.
use strict; use warnings;
BEGIN { my $x = 1; $x++ }
sub foo { my $y = 2; return $y }
foo();
my $s = 0;
$s += eval(q{ sub { 1 } })->();
$s += eval(q{ sub { 1 } })->();
$s += eval(q{ sub { 1 } })->();
use List::Util;
my $name = "List::Util::sum";
{ no strict "refs"; $s += &$name(1, 2); }
$s += List::Util::sum(3, 4);
print "$s\n";
