#!/bin/sh

test_description='cellfs: /api/query/last as OpenTSDB answers it (TestQueryRpcLastDataPoint): timeseries= and tsuids= sub queries, back_scan, resolve, POST'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# The points go in this hour (what a back_scan of 1 reads first) and five
# hours before; OpenTSDB's tests mock the clock, these use the real one.
NOW=$(date +%s)
H=$((NOW - NOW % 3600))
OLD=$((H - 5 * 3600))
U1=000001000001000001
U2=000001000001000002
P1="{\"timestamp\":${H}000,\"value\":\"42\",\"tsuid\":\"$U1\"}"
P2="{\"timestamp\":${H}000,\"value\":\"24\",\"tsuid\":\"$U2\"}"
R1="{\"metric\":\"sys.cpu.user\",\"timestamp\":${H}000,\"value\":\"42\",\"tags\":{\"host\":\"web01\"},\"tsuid\":\"$U1\"}"
R2="{\"metric\":\"sys.cpu.user\",\"timestamp\":${H}000,\"value\":\"24\",\"tags\":{\"host\":\"web02\"},\"tsuid\":\"$U2\"}"

test_expect_success 'mount with the HTTP API; TestTSUIDQuery'"'"'s two series (UIDs 1 and 2), one older metric' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	printf "sys.cpu.user %s 42 host=web01\nsys.cpu.user %s 24 host=web02\nsys.old %s 7 host=web01\nsys.old %s 0.25 host=web02\n" \
		$H $H $OLD $((OLD + 1)) >>"$MNT/tsd/put"
'

test_expect_success 'timeseries= with back_scan: the named series, no names unless resolve (qsMetricBackscan, ...Resolved)' '
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&back_scan=1" &&
	echo "[$P1]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&back_scan=1&resolve=true" &&
	echo "[$R1]" >expect &&
	is 200
'

test_expect_success 'two timeseries=, one missing; back_scan bounds the hours read (qsMetricTwoQueries*, qsMetricBackscanNoResult)' '
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&timeseries=sys.cpu.user%7Bhost=web02%7D&back_scan=1" &&
	echo "[$P1,$P2]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&timeseries=sys.cpu.user%7Bhost=web02%7D&back_scan=1&resolve" &&
	echo "[$R1,$R2]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.old%7Bhost=web01%7D&timeseries=sys.cpu.user%7Bhost=web02%7D&back_scan=1" &&
	echo "[$P2]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.old%7Bhost=web01%7D&back_scan=1" &&
	echo "[]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.old%7Bhost=web02%7D&back_scan=6" &&
	echo "[{\"timestamp\":$((OLD + 1))000,\"value\":\"0.25\",\"tsuid\":\"000002000001000002\"}]" >expect &&
	is 200
'

test_expect_success 'timeseries= without back_scan finds every series with the tags (the meta table'"'"'s answer, over 24 hours) (qsMetricMeta*)' '
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D" &&
	echo "[$P1]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user&resolve" &&
	echo "[$R1,$R2]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user&back_scan=0" &&
	echo "[$P1,$P2]" >expect &&
	is 200
'

test_expect_success 'refusals: no tags with back_scan, unknown names, a bad back_scan, no sub query (qsMetricBackscanMissingTags, qsMetricNSUN*, qsEmpty)' '
	api "/api/query/last?timeseries=sys.cpu.user&back_scan=1" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Tags cannot be null or empty when getting a TSUID\"}}" >expect &&
	is 400 &&
	api "/api/query/last?timeseries=sys.cpu.nice%7Bhost=web01%7D" &&
	grep -q "No such name for '"'"'metrics'"'"': '"'"'sys.cpu.nice'"'"'" body &&
	grep -q "^400" code &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bdc=web01%7D" &&
	grep -q "No such name for '"'"'tagk'"'"'" body &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web03%7D" &&
	grep -q "No such name for '"'"'tagv'"'"'" body &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&back_scan=x" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse back_scan parameter\"}}" >expect &&
	is 400 &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&back_scan=-1" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Backscan must be zero or a positive number\"}}" >expect &&
	is 400 &&
	api "/api/query/last" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing sub queries\"}}" >expect &&
	is 400 &&
	api "/api/query/last?timeseries=sys.cpu.user" -X PUT &&
	grep -q "^405" code
'

test_expect_success 'tsuids=: one, comma-separated, twice, one missing, with timeseries= (qsTSUID*, qsDual*)' '
	api "/api/query/last?tsuids=$U1&back_scan=1" &&
	echo "[$P1]" >expect &&
	is 200 &&
	api "/api/query/last?tsuids=$U1,$U2&back_scan=1" &&
	echo "[$P1,$P2]" >expect &&
	is 200 &&
	api "/api/query/last?tsuids=$U1&tsuids=$U2" &&
	echo "[$P1,$P2]" >expect &&
	is 200 &&
	api "/api/query/last?tsuids=$U1,000001000001000003&back_scan=1" &&
	echo "[$P1]" >expect &&
	is 200 &&
	api "/api/query/last?tsuids=000001000001000003" &&
	echo "[]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&tsuids=$U2&back_scan=1&resolve" &&
	echo "[$R1,$R2]" >expect &&
	is 200
'

test_expect_success 'POST: metric with and without tags, resolveNames, backScan, tsuids, both kinds (post*)' '
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web01\"}}]}" &&
	echo "[$P1]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\"}]}" &&
	echo "[$P1,$P2]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\"}],\"resolveNames\":true}" &&
	echo "[$R1,$R2]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web01\"}},{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web02\"}}],\"backScan\":1}" &&
	echo "[$P1,$P2]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"tsuids\":[\"$U1\",\"$U2\"]}],\"resolveNames\":true}" &&
	echo "[$R1,$R2]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web01\"}},{\"tsuids\":[\"$U2\"]}]}" &&
	echo "[$P1,$P2]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\"}],\"backScan\":1}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Tags cannot be null or empty when getting a TSUID\"}}" >expect &&
	is 400 &&
	api /api/query/last -X POST -d "{\"queries\":[]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing sub queries\"}}" >expect &&
	is 400 &&
	api /api/query/last -X POST -d "[1]" &&
	grep -q "Unable to parse the given JSON" body
'

test_expect_success 'with tsuid tracking, no back_scan: the series'"'"'s counters decide (qsMetricMeta, qsTSUIDMeta, with enable_tsuid_tracking)' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_tsuid_tracking" &&
	$CLIENT wait $HP &&
	: the series written before tracking have no counter: nothing, as OpenTSDB finds nothing in its meta table &&
	api "/api/query/last?timeseries=sys.cpu.user" &&
	echo "[]" >expect &&
	is 200 &&
	api "/api/query/last?tsuids=$U1" &&
	is 200 &&
	: back_scan still reads the hours &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&back_scan=1" &&
	echo "[$P1]" >expect &&
	is 200 &&
	: a write sets web01 counter: its newest point, from the counter hour &&
	printf "sys.cpu.user %s 43 host=web01\n" $((H + 1)) >>"$MNT/tsd/put" &&
	P1B="{\"timestamp\":$((H + 1))000,\"value\":\"43\",\"tsuid\":\"$U1\"}" &&
	api "/api/query/last?timeseries=sys.cpu.user" &&
	echo "[$P1B]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web01%7D&resolve" &&
	echo "[{\"metric\":\"sys.cpu.user\",\"timestamp\":$((H + 1))000,\"value\":\"43\",\"tags\":{\"host\":\"web01\"},\"tsuid\":\"$U1\"}]" >expect &&
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu.user%7Bhost=web02%7D" &&
	echo "[]" >expect &&
	is 200 &&
	api "/api/query/last?tsuids=$U1,$U2" &&
	echo "[$P1B]" >expect &&
	is 200 &&
	api /api/query/last -X POST -d "{\"queries\":[{\"metric\":\"sys.cpu.user\",\"tags\":{}},{\"tsuids\":[\"$U1\"]}]}" &&
	echo "[$P1B,$P1B]" >expect &&
	is 200 &&
	: both written: TSUID order &&
	printf "sys.cpu.user %s 25 host=web02\n" $((H + 2)) >>"$MNT/tsd/put" &&
	api "/api/query/last?timeseries=sys.cpu.user" &&
	echo "[$P1B,{\"timestamp\":$((H + 2))000,\"value\":\"25\",\"tsuid\":\"$U2\"}]" >expect &&
	is 200 &&
	: a point written now for an hour long past: the counter hour holds none, so nothing, as in OpenTSDB &&
	printf "sys.old %s 8 host=web01\n" $((OLD - 30 * 3600)) >>"$MNT/tsd/put" &&
	api "/api/query/last?timeseries=sys.old%7Bhost=web01%7D" &&
	echo "[]" >expect &&
	is 200 &&
	: unknown names and bad TSUIDs are refused as before &&
	api "/api/query/last?timeseries=sys.cpu.nice" &&
	grep -q "^400" code &&
	grep -q "No such name for" body &&
	api "/api/query/last?tsuids=00000Z" &&
	grep -q "^400" code
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
