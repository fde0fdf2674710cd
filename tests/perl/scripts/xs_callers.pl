# Callers as NYTProf has them where the call does not come from a Perl sub's own code: blocks an
# XSUB runs (List::Util's first and reduce), a sort block (inside CORE:sort), a sub that does not
# exist (counted as called, then perl dies), an overloaded operator perl calls itself, and a call
# right after an XSUB died.
use List::Util qw(first reduce);
sub pred { $_[0] > 2 }
my $f = first { pred($_) } 1 .. 4;
my $r = reduce { $a + pred($b) } 1 .. 4;
my @s = sort { pred($a) <=> pred($b) } 3, 1, 2;
eval { nosuch() };
sub id { $_[0] }
use Scalar::Util ();
my $n = id eval { my $x = 1; Scalar::Util::weaken($x) };
package Obj; use overload '""' => sub { "obj" }; sub new { bless {}, shift } package main;
my $o = Obj->new;
print "$f $r @s $o\n";
