# One statement in each of perl's phases, for HOTLINE_PERL_START (NYTProf's start=).
my $run = 0;
BEGIN { my $begin = 1; }
INIT { my $init = 2; }
$run++ for 1 .. 3;
END { my $end = 3; }
print "run: $run\n";
