#!/usr/bin/perl
# Normalise the output of PVM example programs so that a run on real PVM
# 3.4.6 and a run on LiquidVM compare line for line
# (test_pvm_examples_vs_pvm.sh):
#   - task ids become T1, T2, ... in order of first appearance (t0, "no
#     task", stays); the decimal echo of a tid after "tX = " is dropped;
#   - figures of the timing example (lines of numbers only, "RTT Avg uSec N")
#     become '#';
#   - pvmdisplaymhfinfo's dump of the library's handler tables is dropped:
#     it prints PVM's internal arrays (its 9 system handlers, free list),
#     which are not an interface (the "who tid: message" line is kept);
#   - real PVM's pvm_exit reports "pvm_delmhf(): Not Found" for its own
#     table once a program has deleted any handler (it frees the slots in
#     reverse and trips on the free list): such a line is dropped unless the
#     program's own report of a failed pvm_delmhf follows it;
#   - blank lines are dropped.
# Host names, contexts, mailbox indices, handler output and every other
# word are kept as they are.
use strict;
use warnings;

my %map;
my $next = 1;

sub tid {
    my ($hex) = @_;
    return "t0" if $hex =~ /^0+$/;
    $map{$hex} //= "T" . $next++;
    return $map{$hex};
}

my @lines = <>;
chomp @lines;
for my $i (0 .. $#lines) {
    my $line = $lines[$i];
    next if $line =~ /^libpvm \[t[0-9a-f]+\]: pvm_delmhf\(\): Not Found$/
        && !($i < $#lines && $lines[$i + 1] =~ /pvm_delmhf failed/);
    next if $line =~ /Display Message Handler Information/;
    next if $line =~ /^pvmdisplaymhfinfo: free list/;
    next if $line =~ /dhandles\[\s*\d+\]\.mhid/;
    next if $line =~ /: mhid = +\d+ +src = t/;
    $line =~ s/\s+$//;
    next if $line eq '';
    if ($line =~ /^[\s\d.]+$/) {
        $line = '#';
    }
    $line =~ s/^(RTT Avg uSec) \d+/$1 #/;
    $line =~ s/(?<![A-Za-z0-9_])(t[0-9a-f]*\d[0-9a-f]*) = -?\d+,/$1,/g;
    $line =~ s/(?<![A-Za-z0-9_])t([0-9a-f]*\d[0-9a-f]*)(?![0-9a-f])/tid($1)/ge;
    print "$line\n";
}
