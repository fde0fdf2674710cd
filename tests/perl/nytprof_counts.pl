# Prints NYTProf's per-line statement counts of one profile: "FILE<TAB>LINE<TAB>COUNT" lines,
# for every source file outside /usr (the test's scripts and their evals, not
# the modules perl loads from its library).
use strict;
use warnings;
use Devel::NYTProf::Data;

my ($profile_path) = @ARGV;
my $profile = Devel::NYTProf::Data->new({ filename => $profile_path, quiet => 1 });
for my $fi ($profile->all_fileinfos) {
  my $name = $fi->filename;
  next if $name =~ m{^/usr/} || $name =~ m{^\(eval \d+\)\[/usr/};
  my $lines = $fi->line_time_data or next;
  for my $line (0 .. $#$lines) {
    my $entry = $lines->[$line] or next;
    next unless $entry->[1];
    print "$name\t$line\t$entry->[1]\n";
  }
}
