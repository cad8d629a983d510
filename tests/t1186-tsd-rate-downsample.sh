#!/bin/sh

test_description='cellfs: rates and downsampling as OpenTSDB computes and refuses them (TestRateSpan, RateOptions, TestDownsamplingSpecification, TestFillingDownsampler, TestDownsampler) through GET and POST /api/query and MNT/tsd/q/; tests/test-tsd-agg.c has the cases one by one'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400
MAX=9223372036854775807

# post JSON: POST /api/query with body JSON
post() {
	api /api/query -X POST -H "Content-Type: application/json" -d "$1"
}

# err CODE MESSAGE: the last answer was OpenTSDB's error object
err() {
	printf "{\"error\":{\"code\":%s,\"message\":\"%s\"}}\n" "$1" "$2" >expect &&
	is "$1"
}

# dps JSON: the last answer was 200 with one result of metric M and
# tags TAGS (set before) whose dps are JSON
dps() {
	printf "[{\"metric\":\"%s\",\"tags\":{%s},\"aggregateTags\":[],\"dps\":{%s}}]\n" "$M" "$TAGS" "$1" >expect &&
	is 200
}

# The series of TestRateSpan, at its own times (T is its 1356998400):
#   r.m  T: 40.0  T+2000: 50  T+3600: 40  T+3605: 50.0  T+7200: 40
#        T+9200: 50.0
# b.m    TestRateSpan.testCalculateDelta_bigLongValues
# w.m    testNext_counterLongMax (a counter wrapping at 2^63-1)
# v.m    testNext_counterWithResetValue and testNext_counterDroResets
# ms.m   three points a quarter second apart
test_expect_success 'mount with the HTTP API, write the series' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	cat >in <<-EOF &&
	r.m $T 40.0 h=a
	r.m $((T + 2000)) 50 h=a
	r.m $((T + 3600)) 40 h=a
	r.m $((T + 3605)) 50.0 h=a
	r.m $((T + 7200)) 40 h=a
	r.m $((T + 9200)) 50.0 h=a
	b.m $T $((MAX - 100)) h=a
	b.m $((T + 100)) $((MAX - 20)) h=a
	w.m $((T + 30)) $((MAX - 55)) h=a
	w.m $((T + 60)) $((MAX - 25)) h=a
	w.m $((T + 90)) 5 h=a
	v.m $T 40 h=a
	v.m $((T + 1)) 50 h=a
	v.m $((T + 2)) 40 h=a
	v.m $((T + 3)) 50 h=a
	ms.m ${T}000 1 h=a
	ms.m ${T}250 2 h=a
	ms.m ${T}500 4 h=a
	EOF
	cat in >>"$MNT/tsd/put" &&
	echo "b.m $((T + 100)) $((MAX - 20)) h=a" >expect &&
	cat "$MNT/tsd/q/start=$((T + 100))&end=$((T + 101))&m=sum:b.m" >out &&
	test_cmp expect out
'

# Each series' first rate (against the point (0, 0)) is never printed:
# TestRateSpan's RATE_DATA_POINTS from the second on
test_expect_success 'TestRateSpan.testNext_iterateAll: rates of integers and floats, always floats' '
	M=r.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$T&end=$((T + 9200))&m=sum:rate:r.m" &&
	dps "\"$((T + 2000))\":0.005,\"$((T + 3600))\":-0.00625,\"$((T + 3605))\":2.0,\"$((T + 7200))\":-0.0027816411682892906,\"$((T + 9200))\":0.005" &&
	cat >expect <<-EOF &&
	r.m $((T + 2000)) 0.005 h=a
	r.m $((T + 3600)) -0.00625 h=a
	r.m $((T + 3605)) 2.0 h=a
	r.m $((T + 7200)) -0.0027816411682892906 h=a
	r.m $((T + 9200)) 0.005 h=a
	EOF
	test_cmp expect "$MNT/tsd/q/start=$T&end=$((T + 9200))&m=sum:rate:r.m"
'

test_expect_success 'TestRateSpan.testNext_counter: counterMax 70, GET, POST and MNT/tsd/q/' '
	M=r.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$T&end=$((T + 9200))&m=sum:rate%7Bcounter,70%7D:r.m" &&
	dps "\"$((T + 2000))\":0.005,\"$((T + 3600))\":0.0375,\"$((T + 3605))\":2.0,\"$((T + 7200))\":0.016689847009735744,\"$((T + 9200))\":0.005" &&
	post "{\"start\":$T,\"end\":$((T + 9200)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"r.m\",\"rate\":true,\"rateOptions\":{\"counter\":true,\"counterMax\":70}}]}" &&
	dps "\"$((T + 2000))\":0.005,\"$((T + 3600))\":0.0375,\"$((T + 3605))\":2.0,\"$((T + 7200))\":0.016689847009735744,\"$((T + 9200))\":0.005" &&
	cat >expect <<-EOF &&
	r.m $((T + 2000)) 0.005 h=a
	r.m $((T + 3600)) 0.0375 h=a
	r.m $((T + 3605)) 2.0 h=a
	r.m $((T + 7200)) 0.016689847009735744 h=a
	r.m $((T + 9200)) 0.005 h=a
	EOF
	test_cmp expect "$MNT/tsd/q/start=$T&end=$((T + 9200))&m=sum:rate{counter,70}:r.m"
'

test_expect_success 'TestRateSpan.testCalculateDelta_bigLongValues: the difference of longs, exact' '
	M=b.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$T&end=$((T + 100))&m=sum:rate:b.m" &&
	dps "\"$((T + 100))\":0.8"
'

test_expect_success 'TestRateSpan.testNext_counterLongMax: a counter that wraps at 2^63-1' '
	M=w.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$T&end=$((T + 90))&m=sum:rate%7Bcounter%7D:w.m" &&
	dps "\"$((T + 60))\":1.0,\"$((T + 90))\":1.0" &&
	api "/api/query?start=$T&end=$((T + 90))&m=sum:rate%7Bcounter,$MAX%7D:w.m" &&
	dps "\"$((T + 60))\":1.0,\"$((T + 90))\":1.0" &&
	post "{\"start\":$T,\"end\":$((T + 90)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"w.m\",\"rate\":true,\"rateOptions\":{\"counter\":true}}]}" &&
	dps "\"$((T + 60))\":1.0,\"$((T + 90))\":1.0" &&
	api "/api/query?start=$T&end=$((T + 90))&m=sum:rate:w.m" &&
	dps "\"$((T + 60))\":1.0,\"$((T + 90))\":-3.0744573456182586E17"
'

test_expect_success 'TestRateSpan.testNext_counterWithResetValue and testNext_counterDroResets' '
	M=v.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$T&end=$((T + 2))&m=sum:rate%7Bcounter,70,1%7D:v.m" &&
	dps "\"$((T + 1))\":10.0,\"$((T + 2))\":0.0" &&
	api "/api/query?start=$T&end=$((T + 3))&m=sum:rate%7Bdropcounter,70,1%7D:v.m" &&
	dps "\"$((T + 1))\":10.0,\"$((T + 3))\":10.0" &&
	post "{\"start\":$T,\"end\":$((T + 3)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"v.m\",\"rate\":true,\"rateOptions\":{\"counter\":true,\"counterMax\":70,\"resetValue\":1,\"dropResets\":true}}]}" &&
	dps "\"$((T + 1))\":10.0,\"$((T + 3))\":10.0" &&
	api "/api/query?start=$T&end=$((T + 2))&m=sum:rate%7Bdropcounter,70,1%7D:v.m" &&
	dps "\"$((T + 1))\":10.0" &&
	printf "v.m %s 10.0 h=a\nv.m %s 60.0 h=a\nv.m %s 10.0 h=a\n" $((T + 1)) $((T + 2)) $((T + 3)) >expect &&
	test_cmp expect "$MNT/tsd/q/start=$T&end=$((T + 3))&m=sum:rate{counter,70}:v.m" &&
	printf "v.m %s 10.0 h=a\nv.m %s -10.0 h=a\nv.m %s 10.0 h=a\n" $((T + 1)) $((T + 2)) $((T + 3)) >expect &&
	test_cmp expect "$MNT/tsd/q/start=$T&end=$((T + 3))&m=sum:rate:v.m"
'

test_expect_success 'rates of millisecond points are per second' '
	M=ms.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$T&end=$((T + 1))&m=sum:rate:ms.m&ms" &&
	dps "\"${T}250\":4.0,\"${T}500\":8.0" &&
	printf "ms.m %s 4.0 h=a\nms.m %s 8.0 h=a\n" ${T}250 ${T}500 >expect &&
	test_cmp expect "$MNT/tsd/q/start=$T&end=$((T + 1))&m=sum:rate:ms.m&ms"
'

# z.m at 5 and 65 s past the epoch: its first minute starts at 0, where
# the first rate (against the point (0, 0)) has no time to divide by:
# OpenTSDB throws (its start times cannot be before 1970, cellfs reads
# those from 0); cellfs takes it as NaN, never printed at its own time
test_expect_success 'a first rate at time 0: no rate (OpenTSDB: IllegalStateException)' '
	printf "z.m 5 1 h=a\nz.m 65 3 h=a\n" >>"$MNT/tsd/put" &&
	printf "z.m 5 1 h=a\nz.m 65 3 h=a\n" >expect &&
	test_cmp expect "$MNT/tsd/q/start=1&end=100&m=sum:z.m" &&
	echo "z.m 65 0.03333333333333333 h=a" >expect &&
	test_cmp expect "$MNT/tsd/q/start=1&end=100&m=sum:rate:z.m" &&
	echo "z.m 60 0.03333333333333333 h=a" >expect &&
	test_cmp expect "$MNT/tsd/q/start=0&end=100&m=sum:1m-sum:rate:z.m" &&
	test_cmp expect "$MNT/tsd/q/start=100y-ago&end=100&m=sum:1m-sum:rate:z.m" &&
	M=z.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=0&end=100&m=sum:1m-sum-nan:rate:z.m" &&
	dps "\"60\":0.03333333333333333"
'

test_expect_success 'rate options refused as QueryRpc.parseRateOptions words it (400)' '
	api "/api/query?start=$T&m=sum:rate%7B:r.m" &&
	err 400 "Invalid rate options specification: rate{" &&
	api "/api/query?start=$T&m=sum:rate%7Bcounter,1,2,3%7D:r.m" &&
	err 400 "Incorrect number of values in rate options specification, must be counter[,counter max value,reset value], recieved: 4 parts" &&
	api "/api/query?start=$T&m=sum:rate%7Bcounter,x%7D:r.m" &&
	err 400 "Max value of counter was not a number, received '"'"'x'"'"'" &&
	api "/api/query?start=$T&m=sum:rate%7Bcounter,1,y%7D:r.m" &&
	err 400 "Reset value of counter was not a number, received '"'"'y'"'"'" &&
	test_must_fail cat "$MNT/tsd/q/start=$T&m=sum:rate{counter,x}:r.m" 2>/dev/null &&
	last_log >out &&
	echo "warn query tsd/q/start=$T&m=sum:rate{counter,x}:r.m: Max value of counter was not a number, received '"'"'x'"'"': Invalid argument" >expect &&
	test_cmp expect out
'

test_expect_success 'TestDownsamplingSpecification: refusals in its words (400, GET, POST and MNT/tsd/q/)' '
	api "/api/query?start=$T&m=sum:1m-hurp-lerp:r.m" &&
	err 400 "No such downsampling function: hurp" &&
	api "/api/query?start=$T&m=sum:10m-avg-max:r.m" &&
	err 400 "Unrecognized fill policy: max" &&
	api "/api/query?start=$T&m=sum:1m-none-lerp:r.m" &&
	err 400 "cannot use the NONE aggregator for downsampling" &&
	api "/api/query?start=$T&m=sum:0m-avg-lerp:r.m" &&
	err 400 "Zero or negative duration: 0m" &&
	api "/api/query?start=$T&m=sum:1j-avg-lerp:r.m" &&
	err 400 "Invalid duration (suffix): 1j" &&
	api "/api/query?start=$T&m=sum:1-avg-lerp:r.m" &&
	err 400 "Invalid duration, must have an integer and unit: 1" &&
	api "/api/query?start=$T&m=sum:1m:r.m" &&
	err 400 "Invalid downsampling specifier '"'"'1m'"'"': must provide at least interval and function" &&
	api "/api/query?start=$T&tsuid=sum:1m-hurp:000001000001000001" &&
	err 400 "No such downsampling function: hurp" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"r.m\",\"downsample\":\"blah-avg-lerp\"}]}" &&
	err 400 "Invalid duration (number): blah" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"r.m\",\"downsample\":\"-60m-avg-lerp\"}]}" &&
	err 400 "Invalid downsampling specifier '"'"'-60m-avg-lerp'"'"': must consist of interval, function, and optional fill policy" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"r.m\",\"downsample\":\"1m-avg-scalar\"}]}" &&
	err 400 "unhandled fill policy: scalar" &&
	echo EINVAL >expect &&
	errno_of read "$MNT/tsd/q/start=$T&m=sum:1m-avg-max:r.m" >out &&
	test_cmp expect out &&
	last_log >out &&
	echo "warn query tsd/q/start=$T&m=sum:1m-avg-max:r.m: Unrecognized fill policy: max: Invalid argument" >expect &&
	test_cmp expect out
'

test_expect_success 'an empty POST downsample is none (testStringCtorEmpty); a case-blind fill policy' '
	M=v.m TAGS="\"h\":\"a\"" &&
	post "{\"start\":$T,\"end\":$((T + 3)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"v.m\",\"downsample\":\"\"}]}" &&
	dps "\"$T\":40,\"$((T + 1))\":50,\"$((T + 2))\":40,\"$((T + 3))\":50" &&
	api "/api/query?start=$T&end=$((T + 3))&m=sum:2s-sum-NaN:v.m" &&
	dps "\"$T\":90.0,\"$((T + 2))\":90.0"
'

# f.m: 1 at T, 3 at T+120 (nothing in the minutes T+60 and T+180);
# g.m: 10 at T+60: where f.m is filled, the sum takes g.m alone
test_expect_success 'TestFillingDownsampler through the API: nan, null, zero, none, and how each prints' '
	printf "f.m %s 1 h=a\nf.m %s 3 h=a\ng.m %s 10 h=b\n" $T $((T + 120)) $((T + 60)) >>"$MNT/tsd/put" &&
	M=f.m TAGS="\"h\":\"a\"" &&
	R="start=$T&end=$((T + 180))" &&
	api "/api/query?$R&m=sum:1m-sum-nan:f.m" &&
	dps "\"$T\":1.0,\"$((T + 60))\":\"NaN\",\"$((T + 120))\":3.0,\"$((T + 180))\":\"NaN\"" &&
	api "/api/query?$R&m=sum:1m-sum-null:f.m" &&
	dps "\"$T\":1.0,\"$((T + 60))\":null,\"$((T + 120))\":3.0,\"$((T + 180))\":null" &&
	api "/api/query?$R&m=sum:1m-sum-zero:f.m" &&
	dps "\"$T\":1.0,\"$((T + 60))\":0.0,\"$((T + 120))\":3.0,\"$((T + 180))\":0.0" &&
	api "/api/query?$R&m=sum:1m-sum-none:f.m" &&
	dps "\"$T\":1.0,\"$((T + 120))\":3.0" &&
	api "/api/query?$R&m=sum:1m-sum:f.m" &&
	dps "\"$T\":1.0,\"$((T + 120))\":3.0" &&
	api "/api/query?$R&m=sum:1m-sum-nan:f.m&arrays=true" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":[[$T,1.0],[$((T + 60)),\"NaN\"],[$((T + 120)),3.0],[$((T + 180)),\"NaN\"]]}]" >expect &&
	is 200 &&
	api "/api/query?$R&m=sum:1m-sum-null:f.m&arrays=true" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":[[$T,1.0],[$((T + 60)),null],[$((T + 120)),3.0],[$((T + 180)),null]]}]" >expect &&
	is 200 &&
	post "{\"start\":$T,\"end\":$((T + 180)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"downsample\":\"1m-sum-zero\"}]}" &&
	dps "\"$T\":1.0,\"$((T + 60))\":0.0,\"$((T + 120))\":3.0,\"$((T + 180))\":0.0" &&
	printf "f.m %s 1.0 h=a\nf.m %s NaN h=a\nf.m %s 3.0 h=a\nf.m %s NaN h=a\n" $T $((T + 60)) $((T + 120)) $((T + 180)) >expect &&
	test_cmp expect "$MNT/tsd/q/$R&m=sum:1m-sum-nan:f.m" &&
	printf "f.m %s 1.0 h=a\nf.m %s 3.0 h=a\n" $T $((T + 120)) >expect &&
	test_cmp expect "$MNT/tsd/q/$R&m=sum:1m-sum-null:f.m" &&
	printf "f.m %s 1.0 h=a\nf.m %s 0.0 h=a\nf.m %s 3.0 h=a\nf.m %s 0.0 h=a\n" $T $((T + 60)) $((T + 120)) $((T + 180)) >expect &&
	test_cmp expect "$MNT/tsd/q/$R&m=sum:1m-sum-zero:f.m"
'

test_expect_success 'a rate over filled intervals: NaN from NaN (null with null), a change from zero' '
	M=f.m TAGS="\"h\":\"a\"" &&
	R="start=$T&end=$((T + 180))" &&
	api "/api/query?$R&m=sum:1m-sum-nan:rate:f.m" &&
	dps "\"$((T + 60))\":\"NaN\",\"$((T + 120))\":\"NaN\",\"$((T + 180))\":\"NaN\"" &&
	api "/api/query?$R&m=sum:1m-sum-null:rate:f.m" &&
	dps "\"$((T + 60))\":null,\"$((T + 120))\":null,\"$((T + 180))\":null" &&
	api "/api/query?$R&m=sum:1m-sum-zero:rate:f.m" &&
	dps "\"$((T + 60))\":-0.016666666666666666,\"$((T + 120))\":0.05,\"$((T + 180))\":-0.05"
'

# e.m: h=a 1 at T and 3 at T+120, h=b 10 at T+60: each filled over the
# whole range, the sum leaves NaN out (Aggregators' sum), NaN when all are
test_expect_success 'filled series in a group: NaN is left out of the sum' '
	printf "e.m %s 1 h=a\ne.m %s 3 h=a\ne.m %s 10 h=b\n" $T $((T + 120)) $((T + 60)) >>"$MNT/tsd/put" &&
	R="start=$T&end=$((T + 180))" &&
	api "/api/query?$R&m=sum:1m-sum-nan:e.m" &&
	echo "[{\"metric\":\"e.m\",\"tags\":{},\"aggregateTags\":[\"h\"],\"dps\":{\"$T\":1.0,\"$((T + 60))\":10.0,\"$((T + 120))\":3.0,\"$((T + 180))\":\"NaN\"}}]" >expect &&
	is 200 &&
	api "/api/query?$R&m=sum:1m-sum-null:e.m" &&
	echo "[{\"metric\":\"e.m\",\"tags\":{},\"aggregateTags\":[\"h\"],\"dps\":{\"$T\":1.0,\"$((T + 60))\":10.0,\"$((T + 120))\":3.0,\"$((T + 180))\":null}}]" >expect &&
	is 200 &&
	api "/api/query?$R&m=avg:1m-sum-zero:e.m" &&
	echo "[{\"metric\":\"e.m\",\"tags\":{},\"aggregateTags\":[\"h\"],\"dps\":{\"$T\":0.5,\"$((T + 60))\":5.0,\"$((T + 120))\":1.5,\"$((T + 180))\":0.0}}]" >expect &&
	is 200 &&
	api "/api/query?$R&m=sum:1m-sum:e.m" &&
	echo "[{\"metric\":\"e.m\",\"tags\":{},\"aggregateTags\":[\"h\"],\"dps\":{\"$T\":1.0,\"$((T + 60))\":12.0,\"$((T + 120))\":3.0}}]" >expect &&
	is 200
'

# d.m: TestDownsampler's DATA_POINTS (r.m's times, all integers)
test_expect_success 'TestDownsampler.testDownsampler through the API: 1000s-avg; an interval begun before the start is not shown' '
	printf "d.m %s 40 h=a\nd.m %s 50 h=a\nd.m %s 40 h=a\nd.m %s 50 h=a\nd.m %s 40 h=a\nd.m %s 50 h=a\n" \
		$T $((T + 2000)) $((T + 3600)) $((T + 3605)) $((T + 7200)) $((T + 9200)) >>"$MNT/tsd/put" &&
	M=d.m TAGS="\"h\":\"a\"" &&
	api "/api/query?start=$((T - 400))&end=$((T + 9200))&m=sum:1000s-avg:d.m" &&
	dps "\"$((T - 400))\":40.0,\"$((T + 1600))\":50.0,\"$((T + 3600))\":45.0,\"$((T + 6600))\":40.0,\"$((T + 8600))\":50.0" &&
	api "/api/query?start=$T&end=$((T + 9200))&m=sum:1000s-avg:d.m" &&
	dps "\"$((T + 1600))\":50.0,\"$((T + 3600))\":45.0,\"$((T + 6600))\":40.0,\"$((T + 8600))\":50.0" &&
	# testDownsampler_calendar: 1dc in Denver, its day from 07:00 UTC
	printf "d2.m %s 1 h=a\nd2.m %s 2 h=a\nd2.m %s 4 h=a\nd2.m %s 8 h=a\nd2.m %s 16 h=a\nd2.m %s 32 h=a\n" \
		$((T + 5)) $((T + 15)) $((T + 25)) $((T + 35)) $((T + 45)) $((T + 55)) >>"$MNT/tsd/put" &&
	echo "d2.m 1356937200 63.0 h=a" >expect &&
	test_cmp expect "$MNT/tsd/q/start=1356937200&end=$((T + 60))&m=sum:1dc-sum:d2.m&timezone=America%2FDenver"
'

test_done
