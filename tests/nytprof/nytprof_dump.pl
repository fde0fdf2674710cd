# Prints what NYTProf measured in one profile as JSON, for compare_with_nytprof.py: statements
# per line of every file ({file: {line: count}}), calls per sub ({sub: calls}) and calls per
# caller→callee pair ({"caller\tcallee": calls}, "caller1|caller2" when the calls of one line
# came from several subs: NYTProf does not say how many from each), as Devel::NYTProf::Data
# reads them.
use strict;
use warnings;
use Devel::NYTProf::Data;
use Devel::NYTProf::Constants qw(NYTP_SCi_CALL_COUNT NYTP_SCi_CALLING_SUB);
use JSON::PP;

my ($path) = @ARGV;
my $profile = Devel::NYTProf::Data->new({ filename => $path, quiet => 1 });
my (%lines, %subs, %edges);
for my $fi ($profile->all_fileinfos) {
  my $times = $fi->line_time_data or next;
  for my $line (0 .. $#$times) {
    my $entry = $times->[$line] or next;
    $lines{ $fi->filename }{$line} += $entry->[1] if $entry->[1];
  }
}
my $subinfos = $profile->subname_subinfo_map;
for my $name (keys %$subinfos) {
  my $si = $subinfos->{$name};
  $subs{$name} = $si->calls if $si->calls;
  my $places = $si->caller_fid_line_places || {};
  for my $by_line (values %$places) {
    for my $sc (values %$by_line) {
      my $callers = join '|', sort keys %{ $sc->[NYTP_SCi_CALLING_SUB] || {} };
      $edges{"$callers\t$name"} += $sc->[NYTP_SCi_CALL_COUNT];
    }
  }
}
print JSON::PP->new->canonical->encode({ lines => \%lines, subs => \%subs, edges => \%edges });
