# Devel::Hotline::stop() and start(): the loop of line 7 runs while stopped, those of lines 5 and
# 9 are measured; `defined &...` keeps the script running without the profiler.
sub twice { return 2 * shift }
my $sum = 0;
for my $i (1 .. 10) { $sum += twice($i) }
Devel::Hotline::stop() if defined &Devel::Hotline::stop;
for my $i (1 .. 20) { $sum += twice($i) }
Devel::Hotline::start() if defined &Devel::Hotline::start;
for my $i (1 .. 5) { $sum += twice($i) }
print "sum: $sum\n";
