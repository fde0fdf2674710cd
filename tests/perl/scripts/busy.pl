# Spins in spin() for a known time and says on stderr how long it took, by the wall clock
# (what Devel::Hotline measures) and in CPU time, user and system (times; what sampling sees).
use strict;
use warnings;
use Time::HiRes ();

sub spin {
  my ($seconds) = @_;
  my $start = (times)[0];
  my $x = 0;
  while ((times)[0] - $start < $seconds) {
    $x++ for 1 .. 1000;
  }
  return $x;
}

sub light {
  my $y = 0;
  $y += $_ for 1 .. 20000;
  return $y;
}

my @cpu = times;
my $wall = Time::HiRes::time();
spin(0.5);
my $wall_spun = Time::HiRes::time() - $wall;
my @cpu_spun = times;
my $cpu_spun = $cpu_spun[0] + $cpu_spun[1] - $cpu[0] - $cpu[1];
light() for 1 .. 5;
printf STDERR "spin: %.6f %.6f\n", $wall_spun, $cpu_spun;
