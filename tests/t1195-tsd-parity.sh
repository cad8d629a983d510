#!/bin/sh

test_description='cellfs: small exact scenarios of OpenTSDB 2.4 unit tests (TestTsdbQueryAggregators, TestTsdbQueryDownsample, TestTsdbQueryQueries, TestQueryRpc, TestUniqueIdRpc) run against the mount and the HTTP API, with the expected output of the Java test'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400
E=1357041600

# err CODE MESSAGE: the last answer was OpenTSDB's error object
err() {
	printf "{\"error\":{\"code\":%s,\"message\":\"%s\"}}\n" "$1" "$2" >expect &&
	is "$1"
}

# q QUERY: the lines of MNT/tsd/q/QUERY, as "TIMESTAMP VALUE" in "out"
q() {
	cat "$MNT/tsd/q/$1" >q.out &&
	cut -d" " -f2,3 q.out >out
}

# exp NAME: what OpenTSDB's test NAME expects, "TIMESTAMP VALUE" lines in
# "expect" (integers exact; floats as Java prints them)
exp() {
	python3 parity.py exp "$1" >expect
}

# q_is QUERY NAME: QUERY's points are what OpenTSDB's test NAME expects
q_is() {
	q "$1" && exp "$2" && test_cmp expect out
}

# near NAME: "out" holds the points OpenTSDB's test NAME expects, each
# value within the test's own delta
near() {
	python3 parity.py near "$1" out
}

# The series of OpenTSDB's BaseTsdbTest (sys.cpu.user, host=web01/web02),
# one metric each here:
#   l.s   storeLongTimeSeriesSeconds: web01 i at T+30i, web02 301-i (i 1..300)
#   lo.s  the same with offset: web02 15 s later
#   lm.s  storeLongTimeSeriesMs: every 500 ms
#   md.s  storeLongTimeSeriesWithMissingData: every 10 s, web01 without
#         every third point, web02 without every other one
#   f.s   storeFloatTimeSeriesSeconds: 1.25, 1.5, ... 76 and 75 ... 0.25
#   fo.s  the same with offset
#   im.s  runInterpolationMsDownsampled's two series
# parity.py data: the put lines of the series above; parity.py exp|near
# NAME [FILE]: the expectations of the Java tests (see exp and near)
cat >parity.py <<\EOF
import sys
T = 1356998400
def data():
    out = []
    def put(m, ts, v, h):
        out.append("%s %d %s host=%s" % (m, ts, v, h))
    for m, off in (("l.s", 0), ("lo.s", 15)):
        for i in range(1, 301):
            put(m, T + 30 * i, i, "web01")
        for k, i in enumerate(range(300, 0, -1)):
            put(m, T + off + 30 * (k + 1), i, "web02")
    for i in range(1, 301):
        put("lm.s", (T * 1000) + 500 * i, i, "web01")
    for k, i in enumerate(range(300, 0, -1)):
        put("lm.s", (T * 1000) + 500 * (k + 1), i, "web02")
    for i in range(300):
        if i % 3:
            put("md.s", T + 10 * i, i + 1, "web01")
    for k, i in enumerate(range(300, 0, -1)):
        if i % 2:
            put("md.s", T + 10 * k, i, "web02")
    for m, off in (("f.s", 0), ("fo.s", 15)):
        for k in range(300):
            put(m, T + 30 * (k + 1), repr(1.25 + 0.25 * k), "web01")
        for k in range(300):
            put(m, T + off + 30 * (k + 1), repr(75.0 - 0.25 * k), "web02")
    ts = T * 1000
    for i in range(1, 121):
        ts += 500 if i <= 100 else 5000
        put("im.s", ts, i, "web01")
    for k, i in enumerate(range(300, 0, -1)):
        put("im.s", T * 1000 + 250 + 500 * (k + 1), i, "web02")
    print("\n".join(out))

# Each generator transcribes the assertion loop of the Java test
# it is named after: (timestamp in ms, value) pairs.
def zimsum_missing():       # TestTsdbQueryAggregators.runZimSumWithMissingData
    i, ts = 0, T * 1000
    for _ in range(250):
        off = i % 6
        if off == 0:
            ts += 10000; i += 1; off += 1
        if off in (1, 5): v = 301
        elif off in (2, 4): v = i + 1
        else: v = 300 - i
        yield ts, v
        ts += 10000; i += 1
def zimsum_offset():        # runZimSumOffset, runMimMaxOffset
    v1, v2 = 1, 300
    for c in range(600):
        if c % 2 == 0:
            yield T * 1000 + 30000 + 15000 * c, v1; v1 += 1
        else:
            yield T * 1000 + 30000 + 15000 * c, v2; v2 -= 1
def min_offset():           # runMinOffset
    v, c, dec, ts = 1, 0, False, T * 1000 + 30000
    for _ in range(600):
        yield ts, v
        ts += 15000
        if c % 2 != 0:
            v = v - 1 if dec else v + 1
        elif v == 151:
            v, dec = 150, True; c -= 1
        c += 1
def max_offset():           # runMaxOffset
    v, c, dec, ts = 1, 0, True, T * 1000 + 30000
    for _ in range(600):
        yield ts, v
        if v == 1: v = 300
        elif ts == 1357007400000: v = 1
        elif c % 2 == 0:
            v = v - 1 if dec else v + 1
        if v == 150:
            v, dec = 151, False; c -= 1
        c += 1; ts += 15000
def dev_offset():           # runDevOffset
    v, c, dec, ts = 0, 0, True, T * 1000 + 30000
    for _ in range(600):
        yield ts, v
        if ts == 1356998430000: v = 149
        elif ts == 1357007400000: v = 0
        elif c % 2 == 0:
            v = v - 1 if dec else v + 1
            if v < 0:
                v, dec = 0, False; c += 1
        c += 1; ts += 15000
def count_offset():         # runCountOffset
    for c in range(600):
        yield T * 1000 + 30000 + 15000 * c, 1 if c in (0, 599) else 2
def avg_float_offset():     # runAvgFloatOffset, delta 0.0001
    v = 1.25
    for c in range(600):
        ts = T * 1000 + 30000 + 15000 * c
        yield ts, v
        if v == 1.25: v = 38.1875
        elif ts == 1357007400000: v = .25
def dev_float_offset():     # runDevFloatOffset, delta 0.0001
    v, dec = 0.0, True
    for c in range(600):
        ts = T * 1000 + 30000 + 15000 * c
        yield ts, v
        if ts == 1356998430000: v = 36.8125
        elif ts == 1357007400000: v = 0
        else:
            v = v - 0.125 if dec else v + 0.125
            if v < 0.0625: v, dec = 0.0625, False
def min_float_offset():     # runMinFloatOffset, delta 0.001
    v, dec = 1.25, False
    for c in range(600):
        yield T * 1000 + 30000 + 15000 * c, v
        v = v - 0.125 if dec else v + 0.125
        if v > 38.125: v, dec = 38.125, True
def ds_avg():               # TestTsdbQueryDownsample.runLongSingleTSDownsample
    for i in range(151):
        yield T * 1000 + 60000 * i, 1.0 if i == 0 else 300.0 if i >= 150 else i * 2 + 0.5
def ds_avg_ms():            # runLongSingleTSDownsampleMs
    for i in range(151):
        yield T * 1000 + 1000 * i, 1.0 if i == 0 else 300.0 if i >= 150 else i * 2 + 0.5
def ds_avg_rate():          # runLongSingleTSDownsampleAndRate
    for i in range(150):
        yield T * 1000 + 60000 * (i + 1), 0.025 if i in (0, 149) else 2 / 60
def ds_avg_rate_ms():       # runLongSingleTSDownsampleAndRateMs
    for i in range(150):
        yield T * 1000 + 1000 * (i + 1), 1.5 if i in (0, 149) else 2.0
def ds_count():             # runLongSingleTSDownsampleCount
    for i in range(151):
        yield T * 1000 + 60000 * i, 1.0 if i in (0, 150) else 2.0
def ds_count_rate():        # runFloatSingleTSDownsampleAndRateAndCount
    for i in range(150):
        yield T * 1000 + 60000 * (i + 1), 1 / 60 if i == 0 else -1 / 60 if i == 149 else 0.0
def interp_ms_ds():         # TestTsdbQueryQueries.runInterpolationMsDownsampled, delta 1e-7
    for i in range(151):
        yield T * 1000 + 1000 * i, 301 if i == 0 else 602 if i < 50 else 701 + (i - 50) * 0.2 - i * 4
# runTSDownsampleWithMissingData: the validators of its callers
# for the first 100 intervals, then the fill
def nulls(first):
    g = first()
    for i in range(1441):
        yield T * 1000 + 30000 * i, next(g) if i < 100 else None
def sumavg():
    while True: yield 301.5
def avgsum():
    e = 149.0
    while True:
        e += 3; yield e; yield 301.5
def avgavg():
    while True: yield 150.75
def sumsum():
    e = 298.0
    while True:
        e += 6; yield e; yield 603.0
def minmin():
    ee, ec, oe, oc = -4.0, 6.0, -1.0, 6.0
    while True:
        ee += ec
        if ee == 152.0: ee, ec = 149.0, -6.0
        yield ee
        oe += oc
        if oe == 155.0: oe, oc = 145.0, -6.0
        yield oe
def minsum():
    ee, ec, oe, oc = -7.0, 12.0, -1.0, 12.0
    while True:
        ee += ec
        if ee == 209.0: ee, ec = 197.0, -6.0
        yield ee
        oe += oc
        if oe == 311.0: oe, oc = 292.0, -12.0
        yield oe
def summin():
    while True: yield 301.0; yield 300.0
def fmt(ts, v, ms):
    # repr prints these doubles as Java's Double.toString does
    t = ts if ms else ts // 1000
    if isinstance(v, int): return "%d %d" % (t, v)
    return "%d %r" % (t, float(v))
cmd, name = sys.argv[1], sys.argv[2]
if cmd == "data":
    data(); sys.exit(0)
if name.startswith("nulls_"):
    fill = name.split("_")[2]
    pts = list(nulls(globals()[name.split("_")[1]]))
    got = [l.split() for l in open(sys.argv[3])]
    bad = len(got) != len(pts)
    for (ts, v), g in zip(pts, got):
        if int(g[0]) != ts // 1000: bad = True
        elif v is None: bad |= g[1] != fill
        else: bad |= abs(float(g[1]) - v) > 0.0001
    if bad: print("not as", name, file=sys.stderr)
    sys.exit(1 if bad else 0)
gen = globals()[name]
if cmd == "exp":
    for ts, v in gen():
        print(fmt(ts, v, name.endswith("_ms")))
else:
    delta = {"avg_float_offset": 0.0001, "dev_float_offset": 0.0001,
             "min_float_offset": 0.001, "interp_ms_ds": 1e-7}[name]
    pts = list(gen())
    got = [l.split() for l in open(sys.argv[3])]
    bad = len(got) != len(pts)
    for (ts, v), g in zip(pts, got):
        t = int(g[0])
        bad |= t not in (ts, ts // 1000) or abs(float(g[1]) - v) > delta
    if bad: print("not within delta:", name, file=sys.stderr)
    sys.exit(1 if bad else 0)
EOF

test_expect_success 'mount with the HTTP API, write the series of BaseTsdbTest' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	python3 parity.py data x >in &&
	nlines 3770 in &&
	cat in >>"$MNT/tsd/put" &&
	echo "l.s $((T + 30)) 301" >expect &&
	cat "$MNT/tsd/q/start=$((T + 30))&end=$((T + 31))&m=sum:l.s" >out &&
	test_cmp expect out
'

# Each aggregator over two series whose points interleave: none of them
# may interpolate past a series' end, zimsum and mimmax do not
# interpolate at all
test_expect_success 'TestTsdbQueryAggregators: runZimSumWithMissingData, runZimSumOffset, runMimMaxOffset, runMinOffset, runMaxOffset, runDevOffset, runCountOffset' '
	q_is "start=$T&end=$E&m=zimsum:md.s" zimsum_missing &&
	q_is "start=$T&end=$E&m=zimsum:lo.s" zimsum_offset &&
	q "start=$T&end=$E&m=mimmax:lo.s" &&
	test_cmp expect out &&
	q_is "start=$T&end=$E&m=min:lo.s" min_offset &&
	q_is "start=$T&end=$E&m=max:lo.s" max_offset &&
	q_is "start=$T&end=$E&m=dev:lo.s" dev_offset &&
	q_is "start=$T&end=$E&m=count:lo.s" count_offset
'

test_expect_success 'TestTsdbQueryAggregators: runAvgFloatOffset, runDevFloatOffset, runMinFloatOffset (within their deltas)' '
	q "start=$T&end=$E&m=avg:fo.s" && near avg_float_offset &&
	q "start=$T&end=$E&m=dev:fo.s" && near dev_float_offset &&
	q "start=$T&end=$E&m=min:fo.s" && near min_float_offset
'

test_expect_success 'TestTsdbQueryDownsample: runLongSingleTSDownsample(Ms), ...AndRate(Ms), ...Count, runFloatSingleTSDownsampleAndRateAndCount' '
	q_is "start=$T&end=$E&m=sum:1m-avg:l.s{host=web01}" ds_avg &&
	q_is "start=$T&end=$E&m=sum:1s-avg:lm.s{host=web01}&ms" ds_avg_ms &&
	q_is "start=$T&end=$E&m=sum:1m-avg:rate:l.s{host=web01}" ds_avg_rate &&
	q_is "start=$T&end=$E&m=sum:1s-avg:rate:lm.s{host=web01}&ms" ds_avg_rate_ms &&
	q_is "start=$T&end=$E&m=sum:1m-count:l.s{host=web01}" ds_count &&
	q_is "start=$T&end=$E&m=sum:1m-count:rate:f.s{host=web01}" ds_count_rate
'

test_expect_success 'TestTsdbQueryDownsample: runLongSingleTSDownsampleAll, ...AllSubSet, ...AllNoEnd (0all-sum)' '
	echo "$T 45150.0" >expect &&
	q "start=$T&end=$E&m=sum:0all-sum:l.s{host=web01}" &&
	test_cmp expect out &&
	q "start=$T&m=sum:0all-sum:l.s{host=web01}" &&
	test_cmp expect out &&
	echo "1356998500 15.0" >expect &&
	q "start=1356998500&end=1356998600&m=sum:0all-sum:l.s{host=web01}" &&
	test_cmp expect out
'

# OpenTSDB's raw DataPoints run an hour past the end; its serializer
# (and so the answer) stops at the end: 1441 intervals of 30 s
test_expect_success 'TestTsdbQueryDownsample: run{SumAvg,AvgSum,AvgAvg,SumSum,MinMin,MinSum,SumMin}LongSingleTSDownsampleWNulls' '
	for c in sum:avg:nan:sumavg avg:sum:nan:avgsum avg:avg:zero:avgavg \
		sum:sum:nan:sumsum min:min:zero:minmin min:sum:nan:minsum \
		sum:min:nan:summin
	do
		set -- $(echo $c | tr : " ") &&
		fill=$( (test $3 = nan && echo NaN) || echo 0.0) &&
		q "start=$T&end=$E&m=$1:30s-$2-$3:md.s" &&
		python3 parity.py near "nulls_$4_$fill" out || return 1
	done
'

test_expect_success 'TestTsdbQueryQueries: runRateCounterDefault, ...DefaultNoOp, ...MaxSet, ...Anomally, ...AnomallyDrop' '
	MAX=9223372036854775807 &&
	cat >in <<-EOF &&
	rc.d $((T + 30)) $((MAX - 55)) host=web01
	rc.d $((T + 60)) $((MAX - 25)) host=web01
	rc.d $((T + 90)) 5 host=web01
	rc.n $((T + 30)) 30 host=web01
	rc.n $((T + 60)) 60 host=web01
	rc.n $((T + 90)) 90 host=web01
	rc.m $((T + 30)) 45 host=web01
	rc.m $((T + 60)) 75 host=web01
	rc.m $((T + 90)) 5 host=web01
	rc.a $((T + 30)) 45 host=web01
	rc.a $((T + 60)) 75 host=web01
	rc.a $((T + 90)) 25 host=web01
	rc.x $((T + 30)) 45 host=web01
	rc.x $((T + 60)) 75 host=web01
	rc.x $((T + 90)) 25 host=web01
	rc.x $((T + 120)) 55 host=web01
	EOF
	cat in >>"$MNT/tsd/put" &&
	printf "%s 1.0\n" $((T + 60)) $((T + 90)) >expect &&
	q "start=$T&end=$E&m=sum:rate{counter}:rc.d{host=web01}" &&
	test_cmp expect out &&
	q "start=$T&end=$E&m=sum:rate{counter}:rc.n{host=web01}" &&
	test_cmp expect out &&
	q "start=$T&end=$E&m=sum:rate{counter,100}:rc.m{host=web01}" &&
	test_cmp expect out &&
	printf "%s 1.0\n%s 0.0\n" $((T + 60)) $((T + 90)) >expect &&
	q "start=$T&end=$E&m=sum:rate{counter,10000,35}:rc.a{host=web01}" &&
	test_cmp expect out &&
	printf "%s 1.0\n%s 1.0\n" $((T + 60)) $((T + 120)) >expect &&
	q "start=$T&end=$E&m=sum:rate{dropcounter,10000,35}:rc.x{host=web01}" &&
	test_cmp expect out
'

test_expect_success 'TestTsdbQueryQueries: runInterpolationMsDownsampled (a gap of one series interpolated after downsampling)' '
	q "start=$T&end=$E&m=sum:1s-sum:im.s&ms" &&
	near interp_ms_ds
'

test_expect_success 'TestQueryRpc: executeEmpty, executeURIDuplicates, executeWithBadDSFill, postQueryNoMetricBadRequest, parseQueryStartMissing, parseQueryNoSubQuery' '
	api "/api/query?start=$((T + 20000))&end=$((T + 20060))&m=sum:l.s" &&
	echo "[]" >expect && is 200 &&
	api "/api/query?start=$T&end=$((T + 30))&m=sum:l.s&m=sum:l.s&m=sum:l.s" &&
	r="{\"metric\":\"l.s\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{\"$((T + 30))\":301}}" &&
	echo "[$r,$r,$r]" >expect && is 200 &&
	api "/api/query?start=1h-ago&m=sum:10m-avg-badbadbad:l.s" &&
	err 400 "Unrecognized fill policy: badbadbad" &&
	api /api/query -X POST -d "{\"start\":1425440315306,\"queries\":[{\"metric\":\"nonexistent\",\"aggregator\":\"sum\",\"rate\":true,\"rateOptions\":{\"counter\":false}}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No such name for '\''metrics'\'': '\''nonexistent'\''\",\"details\":\"No such name for '\''metrics'\'': '\''nonexistent'\''\"}}" >expect &&
	is 400 &&
	api "/api/query?end=1h-ago&m=sum:l.s" &&
	err 400 "Missing parameter <code>start</code>" &&
	api "/api/query?start=1h-ago" &&
	err 400 "Missing sub queries"
'

test_expect_success 'TestUniqueIdRpc: assignQsMetricSingle, assignQsMetricSingleBad, assignQsMetric2Good1Bad' '
	api "/api/uid/assign?metric=sys.cpu.0" &&
	echo "{\"metric\":{\"sys.cpu.0\":\"00000D\"}}" >expect && is 200 &&
	api "/api/uid/assign?metric=sys.cpu.1" &&
	echo "{\"metric\":{\"sys.cpu.1\":\"00000E\"}}" >expect && is 200 &&
	api "/api/uid/assign?metric=sys.cpu.1" &&
	echo "{\"metric\":{},\"metric_errors\":{\"sys.cpu.1\":\"Name already exists with UID: 00000E\"}}" >expect &&
	is 400 &&
	api "/api/uid/assign?metric=sys.cpu.0,sys.cpu.1,sys.cpu.2" &&
	echo "{\"metric\":{\"sys.cpu.2\":\"00000F\"},\"metric_errors\":{\"sys.cpu.0\":\"Name already exists with UID: 00000D\",\"sys.cpu.1\":\"Name already exists with UID: 00000E\"}}" >expect &&
	is 400
'

# TSQuery, TSSubQuery and RateOptions are read by Jackson: a boolean may
# be written "true" or 1, a long "1000"; a value of another type refuses
# the query, and so does a field RateOptions does not know (it has no
# @JsonIgnoreProperties, unlike TSQuery and TSSubQuery)
test_expect_success 'TestQueryRpc postQuerySimplePass with Jackson: "rate":"true", rateOptions as strings, msResolution 1, groupBy "true"' '
	q="\"start\":$T,\"end\":$((T + 90))" &&
	r="[{\"metric\":\"rc.n\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$((T + 60))\":1.0,\"$((T + 90))\":1.0}}]" &&
	echo "$r" >expect &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.n\",\"aggregator\":\"sum\",\"rate\":\"true\",\"rateOptions\":{\"counter\":false}}]}" &&
	is 200 &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.n\",\"aggregator\":\"sum\",\"rate\":1}]}" &&
	is 200 &&
	echo "[{\"metric\":\"rc.a\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$((T + 60))\":1.0,\"$((T + 90))\":0.0}}]" >expect &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.a\",\"aggregator\":\"sum\",\"rate\":true,\"rateOptions\":{\"counter\":\"true\",\"counterMax\":\"10000\",\"resetValue\":\" 35 \"}}]}" &&
	is 200 &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.a\",\"aggregator\":\"sum\",\"rate\":true,\"rateOptions\":{\"isCounter\":1,\"counterMax\":10000.7,\"resetValue\":35}}]}" &&
	is 200 &&
	echo "[{\"metric\":\"rc.n\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$((T + 30))000\":30}}]" >expect &&
	api /api/query -X POST -d "{\"start\":$T,\"end\":$((T + 30)),\"msResolution\":1,\"queries\":[{\"metric\":\"rc.n\",\"aggregator\":\"sum\",\"filters\":[{\"type\":\"literal_or\",\"tagk\":\"host\",\"filter\":\"web01\",\"groupBy\":\"true\"}]}]}" &&
	is 200
'

test_expect_success 'TestQueryRpc with Jackson: a field RateOptions does not know, or a value of the wrong type, is 400 Unable to parse the given JSON' '
	q="\"start\":$T,\"end\":$((T + 90))" &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.a\",\"aggregator\":\"sum\",\"rate\":true,\"rateOptions\":{\"counter\":true,\"bogus\":1}}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Unrecognized field \\\"bogus\\\" (class net.opentsdb.core.RateOptions), not marked as ignorable\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.a\",\"aggregator\":\"sum\",\"rate\":true,\"rateOptions\":{\"counter\":true,\"counterMax\":\"x\"}}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Cannot deserialize value of type \`long\` from String \\\"x\\\": not a valid long value\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{$q,\"queries\":[{\"metric\":\"rc.a\",\"aggregator\":\"sum\",\"rate\":\"yes\"}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Cannot deserialize value of type \`boolean\` from String \\\"yes\\\": only \\\"true\\\" or \\\"false\\\" recognized\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{$q,\"showTSUIDs\":[],\"queries\":[{\"metric\":\"rc.a\",\"aggregator\":\"sum\"}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Cannot deserialize instance of \`boolean\` out of START_ARRAY token\"}}" >expect &&
	is 400
'

# QueryRpc's LastPointQuery and LastPointSubQuery are Jackson beans
# without @JsonIgnoreProperties: resolveNames a boolean, backScan an int,
# as Jackson reads them; an unknown field refuses the query
test_expect_success '/api/query/last POST as Jackson reads LastPointQuery: "resolveNames":"true", "backScan":"500000"; unknown fields refused' '
	echo "[{\"metric\":\"rc.n\",\"timestamp\":$((T + 90))000,\"value\":\"90\",\"tags\":{\"host\":\"web01\"},\"tsuid\":\"000009000001000001\"}]" >expect &&
	sub="{\"metric\":\"rc.n\",\"tags\":{\"host\":\"web01\"}}" &&
	api /api/query/last -X POST -d "{\"queries\":[$sub],\"resolveNames\":true,\"backScan\":500000}" &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[$sub],\"resolveNames\":\"true\",\"backScan\":\"500000\"}" &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[$sub],\"resolveNames\":1,\"backScan\":500000.5}" &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[$sub],\"backScan\":500000,\"foo\":1}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Unrecognized field \\\"foo\\\" (class net.opentsdb.tsd.QueryRpc\$LastPointQuery), not marked as ignorable\"}}" >expect &&
	is 400 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"rc.n\",\"bar\":1}],\"backScan\":500000}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Unrecognized field \\\"bar\\\" (class net.opentsdb.tsd.QueryRpc\$LastPointSubQuery), not marked as ignorable\"}}" >expect &&
	is 400 &&
	api /api/query/last -X POST -d "{\"queries\":[$sub],\"backScan\":\"x\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Cannot deserialize value of type \`int\` from String \\\"x\\\": not a valid int value\"}}" >expect &&
	is 400
'

# The names of /api/uid/assign are checked by Tags.validateString, whose
# message names the character
test_expect_success 'TestUniqueIdRpc: an invalid name as Tags.validateString words it (illegal character: C, empty string)' '
	api "/api/uid/assign?metric=a%21b" &&
	echo "{\"metric\":{},\"metric_errors\":{\"a!b\":\"Invalid metric (\\\"a!b\\\"): illegal character: !\"}}" >expect &&
	is 400 &&
	api /api/uid/assign -X POST -d "{\"tagv\":[\"x y\"]}" &&
	echo "{\"tagv_errors\":{\"x y\":\"Invalid tagv (\\\"x y\\\"): illegal character:  \"},\"tagv\":{}}" >expect &&
	is 400 &&
	api "/api/uid/assign?tagk=,ak.1" &&
	echo "{\"tagk\":{\"ak.1\":\"000002\"},\"tagk_errors\":{\"\":\"Invalid tagk: empty string\"}}" >expect &&
	is 400 &&
	api /api/uid/assign -X POST -d "{\"metric\":[\"\"]}" &&
	echo "{\"metric\":{},\"metric_errors\":{\"\":\"Invalid metric: empty string\"}}" >expect &&
	is 400
'

# The query string is split as Java's String.split(",") splits it: empty
# names at the end are dropped
test_expect_success 'TestUniqueIdRpc: the query string split as String.split: "a," is a, "," nothing (assignQsNoParamValue, assignQsEmpty, assignQsTypo)' '
	api "/api/uid/assign?tagk=ak.2," &&
	echo "{\"tagk\":{\"ak.2\":\"000003\"}}" >expect && is 200 &&
	api "/api/uid/assign?tagk=,,," &&
	err 400 "Missing values to assign UIDs" &&
	api "/api/uid/assign?tagv=" &&
	err 400 "Missing values to assign UIDs" &&
	api /api/uid/assign &&
	err 400 "Missing values to assign UIDs" &&
	api /api/uid/assign/metrics=hello &&
	err 400 "Missing values to assign UIDs"
'

test_expect_success 'TestUniqueIdRpc: assignPostBadJSON, assignPostNotJSON, assignPostNoContent, assignPostEmptyJSON' '
	api /api/uid/assign -X POST -d "{\"tagv\":[\"localhost\",myserver\",\"foo\"]}" &&
	grep -q "^{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\"" body &&
	echo 400 >expect && test_cmp expect code &&
	api /api/uid/assign -X POST -d "Hello" &&
	grep -q "^{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\"" body &&
	api /api/uid/assign -X POST &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing message content\",\"details\":\"Supply valid JSON formatted data in the body of your request\"}}" >expect &&
	is 400 &&
	api /api/uid/assign -X POST -d "{}" &&
	err 400 "Missing values to assign UIDs"
'

# TestAggregators feeds an aggregator a list of numbers; here they are
# the values of as many series at one timestamp
test_expect_success 'TestAggregators: testMedian, testFirst, testLast, testSquareSumFewDataInputs, testStdDevNoDeviation, testStdDevFewDataInputs' '
	i=0 && for v in 5 2 -1 400 3; do
		echo "ag.a $T $v k=v$i" && i=$((i + 1)) || return 1
	done >in &&
	i=0 && for v in 5 2 -1 400 3 -42; do
		echo "ag.b $T $v k=v$i" && i=$((i + 1)) || return 1
	done >>in &&
	i=0 && for v in 5.1 2.434 -1.99 400.69487 3.15168; do
		echo "ag.c $T $v k=v$i" && i=$((i + 1)) || return 1
	done >>in &&
	i=0 && for v in 5.1 2.434 -1.99 400.69487 3.15168 -42.0; do
		echo "ag.d $T $v k=v$i" && i=$((i + 1)) || return 1
	done >>in &&
	for i in 0 1 2 3 4 5 6 7 8 9; do
		echo "ag.l $T $i k=v$i" && echo "ag.f $T $i.5 k=v$i" || return 1
	done >>in &&
	printf "ag.s $T 1 k=v0\nag.s $T 2 k=v1\n" >>in &&
	printf "ag.z $T 3 k=v0\nag.z $T 3 k=v1\nag.z $T 3 k=v2\n" >>in &&
	cat in >>"$MNT/tsd/put" &&
	for c in median:ag.a:3 median:ag.b:3 median:ag.c:3.15168 \
		median:ag.d:3.15168 first:ag.l:0 last:ag.l:9 first:ag.f:0.5 \
		last:ag.f:9.5 squareSum:ag.s:5 dev:ag.z:0 dev:ag.s:0
	do
		set -- $(echo $c | tr : " ") &&
		echo "$T $3" >expect &&
		q "start=$T&end=$((T + 1))&m=$1:$2" &&
		test_cmp expect out || return 1
	done
'

# Integers give the legacy estimate (p) or R-3 and R-7 (ep..r3, ep..r7)
# truncated to a long; of floats every one is the legacy estimate, as
# OpenTSDB 2.4 builds them, within the test's delta of 1
test_expect_success 'TestAggregators.testPercentiles: 1000 series of 1 to 1000' '
	for i in $(test_seq 1 1000); do
		echo "pc.l $T $i p=x$i" && echo "pc.f $T $i.0 p=x$i" || return 1
	done >in &&
	cat in >>"$MNT/tsd/put" &&
	for c in 50:500:500.5 75:750:750.75 90:900:900.9 95:950:950.95 \
		99:990:990.99 999:999:999.9990000000001
	do
		set -- $(echo $c | tr : " ") &&
		for a in p$1 ep$1r3 ep$1r7; do
			echo "$T $2" >expect &&
			q "start=$T&end=$((T + 1))&m=$a:pc.l" &&
			test_cmp expect out &&
			echo "$T $3" >expect &&
			q "start=$T&end=$((T + 1))&m=$a:pc.f" &&
			test_cmp expect out || return 1
		done || return 1
	done
'

# TsdbQuery.run() of runEndTime has 119 points: the scan reads the whole
# hour; the serializer's time filter leaves the 116 up to the end
test_expect_success 'TestTsdbQueryQueries: runEndTime (the points up to the end), runFloatTwoAggNoneAgg (none: each series alone)' '
	q "start=$T&end=1357001900&m=sum:l.s{host=web01}" &&
	test_seq 1 116 | awk -v t=$T "{ print t + 30 * \$1, \$1 }" >expect &&
	test_cmp expect out &&
	q "start=$T&end=$E&m=none:f.s" &&
	python3 -c "
for h, v0, d in ((\"web01\", 1.25, 0.25), (\"web02\", 75.0, -0.25)):
    for k in range(300):
        print(\"f.s %d %r host=%s\" % ($T + 30 * (k + 1), v0 + d * k, h))
" >expect &&
	test_cmp expect q.out
'

# HttpJsonSerializer.parsePutV1 reads the body with Jackson into
# IncomingDataPoints: metric, value and the tag values are Strings (a
# number is its text as written, a boolean "true"), timestamp a long; a
# value Jackson cannot put in its field fails the whole body
test_expect_success 'TestPutRpc with Jackson: a number as metric or tag value is its text; a timestamp, value or tags of the wrong type refuse the body' '
	api /api/put -X POST -d "[{\"metric\":42,\"timestamp\":$T,\"value\":1,\"tags\":{\"h\":1.50}},{\"metric\":\"pj.m\",\"timestamp\":\" $T \",\"value\":2,\"tags\":{\"h\":true,\"v\":-7}}]" &&
	echo >expect && is 204 &&
	echo "42 $T 1 h=1.50" >expect &&
	test_cmp expect "$MNT/tsd/metrics/42" &&
	echo "pj.m $T 2 h=true v=-7" >expect &&
	test_cmp expect "$MNT/tsd/metrics/pj.m" &&
	good="{\"metric\":\"pj.m\",\"timestamp\":$((T + 1)),\"value\":3,\"tags\":{\"h\":\"a\"}}" &&
	for bad in "\"timestamp\":\"x\",\"value\":1,\"tags\":{\"h\":\"a\"}:Cannot deserialize value of type \`long\` from String \\\"x\\\": not a valid long value" \
		"\"timestamp\":\"$T.5\",\"value\":1,\"tags\":{\"h\":\"a\"}:Cannot deserialize value of type \`long\` from String \\\"$T.5\\\": not a valid long value" \
		"\"timestamp\":true,\"value\":1,\"tags\":{\"h\":\"a\"}:Cannot deserialize instance of \`long\` out of VALUE_TRUE token" \
		"\"timestamp\":$T,\"value\":{\"a\":1},\"tags\":{\"h\":\"a\"}:Cannot deserialize instance of \`java.lang.String\` out of START_OBJECT token" \
		"\"timestamp\":$T,\"value\":1,\"tags\":\"h=a\":Cannot deserialize instance of \`java.util.HashMap\` out of VALUE_STRING token" \
		"\"timestamp\":$T,\"value\":1,\"tags\":{\"h\":[\"a\"]}:Cannot deserialize instance of \`java.lang.String\` out of START_ARRAY token"
	do
		api /api/put -X POST -d "[$good,{\"metric\":\"pj.m\",${bad%%:Cannot*}}]" &&
		echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"Cannot${bad#*:Cannot}\"}}" >expect &&
		is 400 || return 1
	done &&
	echo "pj.m $T 2 h=true v=-7" >expect &&
	test_cmp expect "$MNT/tsd/metrics/pj.m"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
