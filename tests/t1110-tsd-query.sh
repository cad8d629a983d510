#!/bin/sh

test_description='cellfs: MNT/tsd/q/ queries: times, aggregators, interpolation, downsampling and fill, rates, tag filters and group-by, ms, errors, .png'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

# q QUERY: the result of QUERY, its lines joined by ";"
q() {
	cat "$MNT/tsd/q/$1" >qout && tr "\n" ";" <qout && echo
}

# The data, all in the hour from T = 1356998400 (2013-01-01 00:00 UTC):
#
#   q.m  host=a   +0: 10  +20: 20  +40: 30  +60: 40
#        host=b   +10: 1  +30: 3   +50: 5
#
# Merged at every time some series has a point; between its points a
# series is interpolated linearly (integer arithmetic when both points
# are integers), before its first and after its last it takes no part:
#
#   time   +0   +10    +20    +30    +40    +50    +60
#   a      10   (15)   20     (25)   30     (35)   40
#   b      -    1      (2)    3      (4)    5      -
T=1356998400

test_expect_success 'mount and write the data' '
	cellfs_mount &&
	cat >in <<-EOF &&
	q.m $T 10 host=a
	q.m $((T + 20)) 20 host=a
	q.m $((T + 40)) 30 host=a
	q.m $((T + 60)) 40 host=a
	q.m $((T + 10)) 1 host=b
	q.m $((T + 30)) 3 host=b
	q.m $((T + 50)) 5 host=b
	d.m $T 1 host=a
	d.m $((T + 30)) 3 host=a
	d.m $((T + 60)) 5 host=a
	d.m $((T + 90)) 7 host=a
	d.m $((T + 180)) 9 host=a
	c.m $T 100 host=a
	c.m $((T + 10)) 200 host=a
	c.m $((T + 20)) 300 host=a
	c.m $((T + 30)) 50 host=a
	c.m $((T + 40)) 150 host=a
	g.m $T 1 host=web01 dc=lga
	g.m $T 2 host=web02 dc=lga
	g.m $T 4 host=db01 dc=sjc
	g.m $T 8 host=web03 dc=sjc
	f.m $T 1.5 host=a
	f.m $((T + 20)) 2.5 host=a
	f.m $((T + 10)) 1 host=b
	EOF
	cat in >>"$MNT/tsd/put"
'

# agg AGG v0 v10 v20 v30 v40 v50 v60: q.m merged by AGG over [T, T+60]
agg() {
	a=$1 && shift &&
	i=0 && for v in "$@"; do
		printf "q.m %d %s;" $((T + i)) $v && i=$((i + 10)) || return 1
	done >expect && echo >>expect &&
	q "start=$T&end=$((T + 60))&m=$a:q.m" >out && test_cmp expect out
}

test_expect_success 'sum avg min max: interpolated (lerp), integer arithmetic' '
	agg sum 10 16 22 28 34 40 40 &&
	agg avg 10 8 11 14 17 20 40 &&
	agg min 10 1 2 3 4 5 40 &&
	agg max 10 15 20 25 30 35 40
'

test_expect_success 'dev is the population deviation; count counts the series in range' '
	# {15,1}: mean 8, sqrt(((15-8)^2 + (1-8)^2) / 2) = 7; {20,2}: 9 ...
	agg dev 0 7 9 11 13 15 0 &&
	agg count 1 2 2 2 2 2 1
'

test_expect_success 'zimsum, mimmin, mimmax do not interpolate' '
	# a missing point is 0 for zimsum, ignored by mimmin and mimmax
	agg zimsum 10 1 20 3 30 5 40 &&
	agg mimmin 10 1 20 3 30 5 40 &&
	agg mimmax 10 1 20 3 30 5 40
'

test_expect_success 'percentiles (commons-math legacy estimate: pos = p(n+1)/100)' '
	# two values {lo, hi}: p50 at pos 1.5 = (lo + hi) / 2; p75 and
	# above at pos >= n = hi
	agg p50 10 8 11 14 17 20 40 &&
	agg p75 10 15 20 25 30 35 40 &&
	agg p90 10 15 20 25 30 35 40 &&
	agg p95 10 15 20 25 30 35 40 &&
	agg p99 10 15 20 25 30 35 40
'

test_expect_success 'floats interpolate as doubles; integers mixed in print as floats' '
	# f.m: a 1.5 @+0, 2.5 @+20; b 1 @+10 => +10: 2.0 + 1 = 3.0
	echo "f.m 1356998400 1.5;f.m 1356998410 3.0;f.m 1356998420 2.5;" >expect &&
	q "start=$T&end=$((T + 60))&m=sum:f.m" >out && test_cmp expect out
'

test_expect_success 'none: every series on its own, with its tags' '
	echo "q.m 1356998400 10 host=a;q.m 1356998420 20 host=a;q.m 1356998440 30 host=a;q.m 1356998460 40 host=a;q.m 1356998410 1 host=b;q.m 1356998430 3 host=b;q.m 1356998450 5 host=b;" >expect &&
	q "start=$T&end=$((T + 60))&m=none:q.m" >out && test_cmp expect out
'

test_expect_success 'start and end: epoch seconds, epoch milliseconds, both ends included' '
	echo "q.m 1356998410 16;q.m 1356998420 22;q.m 1356998430 28;" >expect &&
	q "start=1356998410&end=1356998430&m=sum:q.m" >out &&
	test_cmp expect out &&
	q "start=1356998410000&end=1356998430000&m=sum:q.m" >out &&
	test_cmp expect out &&
	q "start=2013%2F01%2F01-00:00:10&end=2013%2F01%2F01-00:00:30&m=sum:q.m" >out &&
	test_cmp expect out
'

test_expect_success 'ms prints every timestamp in milliseconds' '
	echo "q.m 1356998400000 10;q.m 1356998410000 16;q.m 1356998420000 22;" >expect &&
	q "start=$T&end=$((T + 20))&m=sum:q.m&ms" >out && test_cmp expect out
'

test_expect_success 'relative times: Nh-ago, Nm-ago, end before now' '
	now=$(date +%s) &&
	printf "r.m %d 1 host=a\nr.m %d 2 host=a\nr.m %d 3 host=a\n" \
		$((now - 5400)) $((now - 1800)) $((now - 600)) >r.in &&
	cat r.in >>"$MNT/tsd/put" &&
	printf "r.m %d 2 host=a;r.m %d 3 host=a;\n" $((now - 1800)) $((now - 600)) >expect &&
	q "start=1h-ago&m=sum:r.m" >out && test_cmp expect out &&
	printf "r.m %d 1 host=a;r.m %d 2 host=a;r.m %d 3 host=a;\n" $((now - 5400)) $((now - 1800)) \
		$((now - 600)) >expect &&
	q "start=2h-ago&m=sum:r.m" >out && test_cmp expect out &&
	q "start=120m-ago&end=now&m=sum:r.m" >out && test_cmp expect out &&
	printf "r.m %d 1 host=a;r.m %d 2 host=a;\n" $((now - 5400)) $((now - 1800)) >expect &&
	q "start=2h-ago&end=20m-ago&m=sum:r.m" >out && test_cmp expect out
'

# d.m: +0: 1, +30: 3 | +60: 5, +90: 7 | (nothing in +120..+179) | +180: 9
test_expect_success 'downsampling: 1m-avg, 1m-sum, 2m-max, 0all-sum' '
	E=$((T + 180)) &&
	echo "d.m 1356998400 2.0 host=a;d.m 1356998460 6.0 host=a;d.m 1356998580 9.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:1m-avg:d.m" >out && test_cmp expect out &&
	echo "d.m 1356998400 4.0 host=a;d.m 1356998460 12.0 host=a;d.m 1356998580 9.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:1m-sum:d.m" >out && test_cmp expect out &&
	echo "d.m 1356998400 7.0 host=a;d.m 1356998520 9.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:2m-max:d.m" >out && test_cmp expect out &&
	# OpenTSDB leaves a point at the very end out of 0all (Downsampler)
	echo "d.m 1356998400 16.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:0all-sum:d.m" >out && test_cmp expect out &&
	echo "d.m 1356998400 25.0 host=a;" >expect &&
	q "start=$T&end=$((E + 1))&m=sum:0all-sum:d.m" >out && test_cmp expect out
'

test_expect_success 'fill policies for the empty minute +120: none, null, nan, zero' '
	E=$((T + 180)) &&
	echo "d.m 1356998400 2.0 host=a;d.m 1356998460 6.0 host=a;d.m 1356998580 9.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:1m-avg-none:d.m" >out && test_cmp expect out &&
	q "start=$T&end=$E&m=sum:1m-avg-null:d.m" >out && test_cmp expect out &&
	echo "d.m 1356998400 2.0 host=a;d.m 1356998460 6.0 host=a;d.m 1356998520 NaN host=a;d.m 1356998580 9.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:1m-avg-nan:d.m" >out && test_cmp expect out &&
	echo "d.m 1356998400 2.0 host=a;d.m 1356998460 6.0 host=a;d.m 1356998520 0.0 host=a;d.m 1356998580 9.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:1m-avg-zero:d.m" >out && test_cmp expect out
'

# c.m: 100 200 300 50 150 every 10 s: a counter reset at +30
test_expect_success 'rate and rate{counter,max,reset}, rate{dropcounter}' '
	E=$((T + 40)) &&
	echo "c.m 1356998410 10.0 host=a;c.m 1356998420 10.0 host=a;c.m 1356998430 -25.0 host=a;c.m 1356998440 10.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:rate:c.m" >out && test_cmp expect out &&
	# (2^63-1 - 300 + 50) / 10
	echo "c.m 1356998410 10.0 host=a;c.m 1356998420 10.0 host=a;c.m 1356998430 9.223372036854776E17 host=a;c.m 1356998440 10.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:rate{counter}:c.m" >out && test_cmp expect out &&
	# (1000 - 300 + 50) / 10
	echo "c.m 1356998410 10.0 host=a;c.m 1356998420 10.0 host=a;c.m 1356998430 75.0 host=a;c.m 1356998440 10.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:rate{counter,1000}:c.m" >out && test_cmp expect out &&
	# 75 > reset 50: 0
	echo "c.m 1356998410 10.0 host=a;c.m 1356998420 10.0 host=a;c.m 1356998430 0.0 host=a;c.m 1356998440 10.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:rate{counter,1000,50}:c.m" >out && test_cmp expect out &&
	echo "c.m 1356998410 10.0 host=a;c.m 1356998420 10.0 host=a;c.m 1356998440 10.0 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:rate{dropcounter}:c.m" >out && test_cmp expect out &&
	# downsampled, then rated (OpenTSDB order): 20s-avg gives 150 @+0,
	# 175 @+20, 150 @+40; their rates (175 - 150) / 20 and back
	echo "c.m 1356998420 1.25 host=a;c.m 1356998440 -1.25 host=a;" >expect &&
	q "start=$T&end=$E&m=sum:20s-avg:rate:c.m" >out && test_cmp expect out &&
	# one interval: a single point, whose rate (against 0 at 0) is never
	# shown
	echo >expect &&
	q "start=$T&end=$E&m=sum:1m-avg:rate:c.m" >out && test_cmp expect out
'

# g.m at T: web01 lga 1, web02 lga 2, db01 sjc 4, web03 sjc 8
test_expect_success 'tag filters and group-by' '
	G="start=$T&end=$((T + 60))&m=sum:g.m" &&
	echo "g.m 1356998400 15;" >expect &&
	q "$G" >out && test_cmp expect out &&
	echo "g.m 1356998400 1 dc=lga host=web01;" >expect &&
	q "$G{host=web01}" >out && test_cmp expect out &&
	echo "g.m 1356998400 1 dc=lga host=web01;g.m 1356998400 2 dc=lga host=web02;" >expect &&
	q "$G{host=web01|web02}" >out && test_cmp expect out &&
	q "$G{dc=lga,host=*}" >out && test_cmp expect out &&
	echo "g.m 1356998400 1 dc=lga host=web01;g.m 1356998400 2 dc=lga host=web02;g.m 1356998400 4 dc=sjc host=db01;g.m 1356998400 8 dc=sjc host=web03;" >expect &&
	q "$G{host=*}" >out && test_cmp expect out &&
	echo "g.m 1356998400 3 dc=lga;g.m 1356998400 12 dc=sjc;" >expect &&
	q "$G{dc=*}" >out && test_cmp expect out &&
	echo "g.m 1356998400 1 dc=lga host=web01;g.m 1356998400 2 dc=lga host=web02;g.m 1356998400 8 dc=sjc host=web03;" >expect &&
	q "$G{host=web*}" >out && test_cmp expect out &&
	echo "g.m 1356998400 11;" >expect &&
	q "$G{}{host=web*}" >out && test_cmp expect out &&
	echo "g.m 1356998400 8 dc=sjc host=web03;" >expect &&
	q "$G{}{dc=sjc,host=wildcard(web*)}" >out && test_cmp expect out &&
	echo "g.m 1356998400 3 dc=lga;g.m 1356998400 4 dc=sjc host=db01;" >expect &&
	q "$G{dc=*}{host=not_literal_or(web03)}" >out && test_cmp expect out &&
	echo "g.m 1356998400 12 dc=sjc;" >expect &&
	q "$G{}{host=regexp(^(db|web0[3-9]))}" >out && test_cmp expect out &&
	# PCRE2, as Java: \d, classes, (?i), found anywhere in the value
	echo "g.m 1356998400 1 dc=lga host=web01;g.m 1356998400 2 dc=lga host=web02;g.m 1356998400 8 dc=sjc host=web03;" >expect &&
	q "$G{host=regexp(^web\d+\$)}" >out && test_cmp expect out &&
	q "$G{host=regexp((?i)WEB)}" >out && test_cmp expect out &&
	echo "g.m 1356998400 4 dc=sjc host=db01;" >expect &&
	q "$G{host=regexp(^\w\w\d\d\$)}" >out && test_cmp expect out &&
	echo "g.m 1356998400 1 dc=lga host=web01;" >expect &&
	q "$G{host=literal_or(web01|)}" >out && test_cmp expect out &&
	q "$G{host=literal_or(|web01)}" >out && test_cmp expect out &&
	q "$G{host=web01|}" >out && test_cmp expect out &&
	q "$G{}{host=|web01}" >out && test_cmp expect out
'

# h.m across two hours: a 10 @+3500, 30 @+3700; b 5 @+3600.
# s.m in milliseconds: a 10 @+0, 20 @+1 s; b 7 @+0.5 s, 3 @+1.25 s.
# k.m: series lacking a grouped key are left out of that query.
test_expect_success 'interpolation across rows (hours) and between milliseconds' '
	cat >in2 <<-EOF &&
	h.m $((T + 3500)) 10 host=a
	h.m $((T + 3700)) 30 host=a
	h.m $((T + 3600)) 5 host=b
	s.m ${T}000 10 host=a
	s.m ${T}500 7 host=b
	s.m $((T + 1))000 20 host=a
	s.m $((T + 1)).250 3 host=b
	k.m $T 1 host=a
	k.m $T 2 dc=x
	k.m $T 4 host=b dc=x
	EOF
	cat in2 >>"$MNT/tsd/put" &&
	echo "h.m 1357001900 10;h.m 1357002000 25;h.m 1357002100 30;" >expect &&
	q "start=$((T + 3000))&end=$((T + 4000))&m=sum:h.m" >out &&
	test_cmp expect out &&
	# +0.5: 15 + 7; +1: 20 + (7 + 500 * (3 - 7) / 750 = 5, in integers)
	echo "s.m 1356998400000 10;s.m 1356998400500 22;s.m 1356998401000 25;s.m 1356998401250 3;" >expect &&
	q "start=$T&end=$((T + 2))&m=sum:s.m&ms" >out && test_cmp expect out &&
	# without ms, seconds (HttpJsonSerializer: timestamp / 1000)
	echo "s.m 1356998400 10;s.m 1356998400 22;s.m 1356998401 25;s.m 1356998401 3;" >expect &&
	q "start=$T&end=$((T + 2))&m=sum:s.m" >out && test_cmp expect out &&
	echo "s.m 1356998400 17.0;s.m 1356998401 23.0;" >expect &&
	q "start=$T&end=$((T + 2))&m=sum:1s-avg:s.m" >out && test_cmp expect out &&
	echo "s.m 1356998401000 10.0 host=a;s.m 1356998401250 -5.333333333333333 host=b;" >expect &&
	q "start=$T&end=$((T + 2))&m=sum:rate:s.m{host=*}&ms" >out && test_cmp expect out &&
	echo "s.m 1356998401 10.0 host=a;s.m 1356998401 -5.333333333333333 host=b;" >expect &&
	q "start=$T&end=$((T + 2))&m=sum:rate:s.m{host=*}" >out && test_cmp expect out &&
	echo "k.m 1356998400 4 dc=x host=b;k.m 1356998400 1 host=a;" >expect &&
	q "start=$T&end=$((T + 60))&m=sum:k.m{host=*}" >out && test_cmp expect out &&
	echo "k.m 1356998400 6 dc=x;" >expect &&
	q "start=$T&end=$((T + 60))&m=sum:k.m{dc=*}" >out && test_cmp expect out
'

# bad QUERY ERRNO REASON: the open fails with ERRNO; .log says REASON
bad() {
	echo "$2" >expect &&
	errno_of read "$MNT/tsd/q/$1" >out && test_cmp expect out &&
	last_log >out &&
	echo "warn query tsd/q/$1: $3" >expect && test_cmp expect out
}

# cal.m: 1 @T (2013-01-01 00:00 UTC, 2012-12-31 17:00 in Denver),
# 2 @T+6h, 4 @T+1d+1h, 8 @T+2d+12h (2013-01-03 05:00 in Denver)
test_expect_success 'calendar downsampling: 1dc, 1nc, 1wc, timezone=, dates in the zone' '
	cat >in3 <<-EOF &&
	cal.m $T 1 host=a
	cal.m $((T + 21600)) 2 host=a
	cal.m $((T + 90000)) 4 host=a
	cal.m $((T + 216000)) 8 host=a
	EOF
	cat in3 >>"$MNT/tsd/put" &&
	C="start=$((T - 86400))&end=$((T + 259200))" &&
	echo "cal.m 1356998400 3.0 host=a;cal.m 1357084800 4.0 host=a;cal.m 1357171200 8.0 host=a;" >expect &&
	q "$C&m=sum:1dc-sum:cal.m" >out && test_cmp expect out &&
	echo "cal.m 1356937200 3.0 host=a;cal.m 1357023600 4.0 host=a;cal.m 1357196400 8.0 host=a;" >expect &&
	q "$C&m=sum:1dc-sum:cal.m&timezone=America%2FDenver" >out && test_cmp expect out &&
	echo "cal.m 1356912000 0.0 host=a;cal.m 1356998400 3.0 host=a;cal.m 1357084800 4.0 host=a;cal.m 1357171200 8.0 host=a;cal.m 1357257600 0.0 host=a;" >expect &&
	q "$C&m=sum:1dc-sum-zero:cal.m" >out && test_cmp expect out &&
	echo "cal.m 1356998400 15.0 host=a;" >expect &&
	q "$C&m=sum:1nc-sum:cal.m" >out && test_cmp expect out &&
	# weeks begin on Sunday: 2012-12-30 and 2013-01-06 (after the data)
	echo "cal.m 1356825600 15.0 host=a;" >expect &&
	q "start=$((T - 259200))&end=$((T + 259200))&m=sum:1wc-sum:cal.m" >out &&
	test_cmp expect out &&
	echo "cal.m 1357088400 4 host=a;" >expect &&
	q "start=2013%2F01%2F01-00:00&end=2013%2F01%2F01-23:00&timezone=America%2FDenver&m=sum:cal.m" >out &&
	test_cmp expect out &&
	bad "$C&m=sum:1dc-sum:cal.m&timezone=Mars%2FOlympus" EINVAL \
		"unknown timezone: Mars/Olympus: Invalid argument" &&
	bad "$C&m=sum:1qc-sum:cal.m" EINVAL \
		"Invalid duration (suffix): 1q: Invalid argument"
'

test_expect_success 'several sub queries follow each other' '
	echo "q.m 1356998400 10;q.m 1356998410 16;g.m 1356998400 15;" >expect &&
	q "start=$T&end=$((T + 10))&m=sum:q.m&m=sum:g.m" >out && test_cmp expect out
'

test_expect_success 'tsuid=: series by their UIDs (q.m, host, a and b were named first), in the order written' '
	echo "q.m 1356998400 10 host=a;q.m 1356998420 20 host=a;" >expect &&
	q "start=$T&end=$((T + 20))&tsuid=sum:000001000001000001" >out &&
	test_cmp expect out &&
	echo "q.m 1356998400 10;q.m 1356998410 16;q.m 1356998420 22;" >expect &&
	q "start=$T&end=$((T + 20))&tsuid=sum:000001000001000001,000001000001000002" >out &&
	test_cmp expect out &&
	echo "q.m 1356998400 10 host=a;q.m 1356998410 1 host=b;" >expect &&
	q "start=$T&end=$((T + 10))&m=sum:q.m{host=a}&tsuid=sum:000001000001000002" >out &&
	test_cmp expect out &&
	echo "" >expect &&
	q "start=$T&tsuid=sum:000001000001FFFFFF" >out &&
	test_cmp expect out &&
	bad "start=$T&tsuid=sum:0001" EINVAL "invalid TSUID: 0001: Invalid argument" &&
	bad "start=$T&tsuid=sum:000001000001000001,000002000001000001" EINVAL \
		"One or more TSUIDs did not share the same metric [000001] [000002]: Invalid argument"
'

test_expect_success 'bad queries: EINVAL or ENOENT, and why in .log' '
	bad "m=sum:q.m" EINVAL "Missing parameter <code>start</code>: Invalid argument" &&
	bad "start=x&m=sum:q.m" EINVAL "Invalid time: x. Invalid character '"'"'x'"'"' in x: Invalid argument" &&
	bad "start=$T" EINVAL "Missing sub queries: Invalid argument" &&
	bad "start=$T&m=foo:q.m" EINVAL "No such aggregation function: foo: Invalid argument" &&
	bad "start=$T&m=sum:1x-avg:q.m" EINVAL \
		"Invalid duration (suffix): 1x: Invalid argument" &&
	bad "start=$T&m=sum:1m-avg-bogus:q.m" EINVAL \
		"Unrecognized fill policy: bogus: Invalid argument" &&
	bad "start=$T&m=sum:rate{counter,x}:q.m" EINVAL \
		"Max value of counter was not a number, received '"'"'x'"'"': Invalid argument" &&
	bad "start=$T&m=sum:q.m{host=a" EINVAL \
		"Missing '"'"'}'"'"' at the end of: q.m{host=a: Invalid argument" &&
	bad "start=$T&end=$((T - 100))&m=sum:q.m" EINVAL \
		"End time [1356998300000] must be greater than the start time [1356998400000]: Invalid argument" &&
	bad "start=$T&end=$T&m=sum:q.m" EINVAL \
		"End time [1356998400000] must be greater than the start time [1356998400000]: Invalid argument" &&
	bad "start=$T&m=sum:q.m{host=regexp(()}" EINVAL \
		"When parsing tag '"'"'host=regexp(()'"'"': bad regexp: (: missing closing parenthesis at offset 1: Invalid argument" &&
	bad "start=$T&m=sum:nosuch.m" ENOENT \
		"no such metric: nosuch.m: No such file or directory" &&
	bad "start=$T&m=sum:q.m{nokey=a}" ENOENT \
		"no such tag key: nokey: No such file or directory" &&
	bad "start=$T&m=sum:q.m{host=web99}" ENOENT \
		"no such tag value: web99: No such file or directory" &&
	bad "start=$T&m=sum:q.m{host=a|web99}" ENOENT \
		"no such tag value: web99: No such file or directory" &&
	bad "start=$T&m=sum:q.m{}{host=literal_or(web99)}" ENOENT \
		"no such tag value: web99: No such file or directory" &&
	bad "start=$T&m=sum:q.m{host=|}" EINVAL \
		"When parsing tag '"'"'host=|'"'"': Filter must contain more than just a pipe: Invalid argument" &&
	bad "start=$T&m=sum:q.m{host=bogus(a)}" EINVAL \
		"When parsing tag '"'"'host=bogus(a)'"'"': Could not find a tag value filter of the type: bogus: Invalid argument" &&
	bad "start=$T&m=sum:q.m{host=wildcard(a)}" EINVAL \
		"When parsing tag '"'"'host=wildcard(a)'"'"': Filter must contain an asterisk: Invalid argument" &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsd/q/start=$T&m=sum:q.m" x >out && test_cmp expect out
'

test_expect_success '.png: a PNG image of a sane size' '
	cat "$MNT/tsd/q/start=$T&end=$((T + 60))&m=sum:q.m&m=none:q.m&title=t.png" >g.png &&
	od -An -tx1 -N8 g.png >out &&
	echo " 89 50 4e 47 0d 0a 1a 0a" >expect && test_cmp expect out &&
	size=$(wc -c <g.png) &&
	test $size -gt 2000 && test $size -lt 2000000 &&
	cat "$MNT/tsd/q/start=$T&end=$((T + 60))&m=sum:q.m&wxh=320x200.png" >s.png &&
	od -An -tx1 -j16 -N8 s.png >out &&
	echo " 00 00 01 40 00 00 00 c8" >expect && test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount && ! cellfs_is_mounted
'

test_done
