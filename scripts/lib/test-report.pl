#!/usr/bin/perl
# Summarizes Surefire/Failsafe XML reports (the file names are the arguments): one totals line per
# module, then the skipped tests grouped by reason, with one line for every test skipped because
# Docker is unavailable. A skipped test has not passed, so each reason stays visible.
use strict;
use warnings;

my (%modules, %skips);
for my $file (@ARGV) {
    my ($module) = $file =~ m{(?:^|/)([^/]+)/target/(?:surefire|failsafe)-reports/};
    $module //= '?';
    open my $in, '<', $file or next;
    local $/;
    my $xml = <$in>;
    close $in;
    my $m = $modules{$module} //= { run => 0, failed => 0, skipped => 0 };
    if ($xml =~ /<testsuite\b([^>]*)>/) {
        my %a = $1 =~ /(\w+)="([^"]*)"/g;
        $m->{run} += $a{tests} // 0;
        $m->{failed} += ($a{failures} // 0) + ($a{errors} // 0);
        $m->{skipped} += $a{skipped} // 0;
    }
    while ($xml =~ /<testcase\b([^>]*)>\s*<skipped((?:\s+\w+="[^"]*")*)\s*(?:\/>|>(?:<!\[CDATA\[)?([^\n<]*))/g) {
        my ($attrs, $skipAttrs, $body) = ($1, $2, $3);
        my ($why) = $skipAttrs =~ /\bmessage="([^"]*)"/;
        if (!defined $why && defined $body) { ($why = $body) =~ s/^[\w.]+Exception: //; }
        $why = 'no reason given' if !defined $why || $why eq '';
        for ($why) { s/&quot;/"/g; s/&apos;/'/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/&/g; s/\s+$//; }
        $why = 'Docker is not available (Testcontainers tests; they run where Docker runs)' if $why =~ /disabledWithoutDocker|Docker is not available|Docker not available|no Docker/i;
        my ($name) = $attrs =~ /\bname="([^"]*)"/;
        my ($class) = $attrs =~ /\bclassname="([^"]*)"/;
        (my $short = $class // '?') =~ s/.*\.//;
        push @{ $skips{$why} }, "$short.$name";
    }
}

my $width = 0;
for (keys %modules) { $width = length if length > $width; }
my %total = (run => 0, failed => 0, skipped => 0);
print "tests per module (Surefire and Failsafe):\n";
for my $module (sort keys %modules) {
    my $m = $modules{$module};
    printf "  %-*s %6d run, %d failed, %d skipped\n", $width, $module, $m->{run}, $m->{failed}, $m->{skipped};
    $total{$_} += $m->{$_} for keys %total;
}
printf "  %-*s %6d run, %d failed, %d skipped\n", $width, 'total', $total{run}, $total{failed}, $total{skipped};
if (%skips) {
    print "skipped tests (not passed), by reason:\n";
    for my $why (sort { @{ $skips{$b} } <=> @{ $skips{$a} } || $a cmp $b } keys %skips) {
        my @tests = @{ $skips{$why} };
        my %classes;
        for (@tests) { my ($c) = /^([^.]+)/; $classes{$c}++; }
        my $where = @tests == 1 ? $tests[0]
            : join(', ', map { "$_ ($classes{$_})" } sort keys %classes);
        printf "  %4d %s: %s\n", scalar @tests, $why, $where;
    }
}
