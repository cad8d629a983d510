#!/bin/sh

test_description='cellfs: POST /api/put as OpenTSDB'"'"'s TestPutRpc expects it: 204, the ?summary and ?details answers, each refusal and its message, Jackson'"'"'s NaN and Infinity, ?sync and ?sync_timeout, storage failures, the counters'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# TestPutRpc's names (BaseTsdbTest: METRIC_STRING, METRIC_B_STRING,
# TAGK_STRING=TAGV_STRING)
M=sys.cpu.user
MB=sys.cpu.system
TS=1365465600
TAGS='"tags":{"host":"web01"}'

# dp METRIC VALUE: a data point object of TestPutRpc
dp() {
	echo "{\"metric\":\"$1\",\"timestamp\":$TS,\"value\":$2,$TAGS}"
}

# counter NAME: the value of /api/stats's counter NAME
counter() {
	curl -s "http://127.0.0.1:$HP/api/stats" |
	python3 -c 'import json, sys
print([d["value"] for d in json.load(sys.stdin) if d["metric"] == sys.argv[1]][0])' "$1"
}

# refused QS VALUE-JSON ERROR: one point whose value is VALUE-JSON is
# refused alone with ERROR (?details), the point echoed with VALUE-ECHO
refused() {
	api "/api/put?details" -X POST -d "$(dp $M "$2")" &&
	echo "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":\"$1\",$TAGS},\"error\":\"$3\"}]}" >expect &&
	is 400
}

test_expect_success 'mount with the HTTP API and the telnet port; a first point makes the tables' '
	HP=$($CLIENT port) &&
	TP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP,tsd_telnet=$TP" &&
	$CLIENT wait $HP &&
	$CLIENT wait $TP &&
	api /api/put -X POST -d "$(dp first.m 1)" &&
	echo >expect &&
	is 204
'

test_expect_success 'putSingle, putTwo: 204 and no body; the points are stored' '
	added=$(counter tsd.datapoints.added) &&
	api /api/put -X POST -d "$(dp $M 42)" &&
	echo >expect &&
	is 204 &&
	! grep -qi "^content-type" hdr &&
	api /api/put -X POST -d "[$(dp $M 42),$(dp $MB 24)]" &&
	is 204 &&
	test $(counter tsd.datapoints.added) -eq $((added + 3)) &&
	cat >expect <<-EOF &&
	$MB $TS 24 host=web01
	EOF
	test_cmp expect "$MNT/tsd/metrics/$MB"
'

test_expect_success 'one request giving a time twice: the later point stored (fix_duplicates), both counted as added' '
	added=$(counter tsd.datapoints.added) &&
	api /api/put -X POST -d "[$(dp dup.m 42),$(dp dup.m 300),$(dp dup.m 7)]" &&
	echo >expect &&
	is 204 &&
	test $(counter tsd.datapoints.added) -eq $((added + 3)) &&
	echo "dup.m $TS 7 host=web01" >expect &&
	test_cmp expect "$MNT/tsd/metrics/dup.m" &&
	api /api/put -X POST -d "[$(dp dup.m 7),$(dp dup.m 3.5)]" &&
	echo >expect &&
	is 204 &&
	echo "dup.m $TS 3.5 host=web01" >expect &&
	test_cmp expect "$MNT/tsd/metrics/dup.m"
'

test_expect_success 'putSingleSummary, putSingleDetails, putSingleSummaryAndDetails, putTwoSummary: 200 and the counts' '
	api "/api/put?summary" -X POST -d "$(dp $M 42)" &&
	echo "{\"success\":1,\"failed\":0}" >expect &&
	is 200 &&
	grep -qi "^content-type: application/json; charset=UTF-8" hdr &&
	api "/api/put?details" -X POST -d "$(dp $M 42)" &&
	echo "{\"success\":1,\"failed\":0,\"errors\":[]}" >expect &&
	is 200 &&
	api "/api/put?summary&details" -X POST -d "$(dp $M 42)" &&
	is 200 &&
	api "/api/put?summary" -X POST -d "[$(dp $M 42),$(dp $MB 24)]" &&
	echo "{\"success\":2,\"failed\":0}" >expect &&
	is 200
'

# each VALUE-JSON|STORED: the value as posted and as a query prints it
test_expect_success 'putNegativeInt, putFloat, put(Negative)DoublePrecisionFloatingPoint, putNegativeFloat, put(Negative)SE(Case)Big and Tiny: stored as written' '
	for c in "-42|-42" "42.2|42.2" "123456.123456789|123456.123456789" \
		 "-123456.123456789|-123456.123456789" "-42.2|-42.2" \
		 "42.22e3|42220.0" "42.22E3|42220.0" "-42.22e3|-42220.0" \
		 "-42.22E3|-42220.0" "42.22e-3|0.04222" "42.22E-3|0.04222" \
		 "-4.2e-3|-0.0042" "-4.2E-3|-0.0042"; do
		v=${c%%|*} && want=${c#*|} &&
		api /api/put -X POST -d "{\"metric\":\"v.m\",\"timestamp\":$TS,\"value\":$v,\"tags\":{\"v\":\"x$v\"}}" &&
		echo >expect && is 204 &&
		api "/api/query?start=$TS&m=sum:v.m%7Bv=x$v%7D" &&
		echo "[{\"metric\":\"v.m\",\"tags\":{\"v\":\"x$v\"},\"aggregateTags\":[],\"dps\":{\"$TS\":$want}}]" >expect &&
		is 200 || return 1
	done
'

test_expect_success 'badMethod: GET is 405' '
	api /api/put &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [GET] is not permitted for this endpoint\"}}" >expect &&
	is 405 &&
	api /api/put -X PUT -d "$(dp $M 42)" &&
	grep -q "^405" code
'

test_expect_success 'badJSON, notJSON, noContent: 400, nothing stored' '
	added=$(counter tsd.datapoints.added) &&
	api /api/put -X POST -d "{\"metric\":\"$M\",\"timestamp:$TS,\"value\":42,$TAGS}" &&
	grep -q "^{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"" body &&
	grep -q "^400" code &&
	api /api/put -X POST -d "Hello World" &&
	echo "{\"error\":{\"code\":400,\"message\":\"The JSON must start as an object or an array\"}}" >expect &&
	is 400 &&
	api /api/put -X POST -d "" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing request content\"}}" >expect &&
	is 400 &&
	api /api/put -X POST -d "[$(dp $M 1),5]" &&
	grep -q "Unable to parse the given JSON" body && grep -q "^400" code &&
	test $(counter tsd.datapoints.added) -eq $added
'

test_expect_success 'missingMetric, nullMetric: "Metric name was empty", the metric left out of the echo' '
	for m in "" "\"metric\":null,"; do
		api "/api/put?details" -X POST -d "{$m\"timestamp\":$TS,\"value\":42,$TAGS}" &&
		echo "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"timestamp\":$TS,\"value\":\"42\",$TAGS},\"error\":\"Metric name was empty\"}]}" >expect &&
		is 400 || return 1
	done &&
	api "/api/put?details" -X POST -d "{\"metric\":\"\",\"timestamp\":$TS,\"value\":42,$TAGS}" &&
	grep -q "\"datapoint\":{\"metric\":\"\",\"timestamp\"" body &&
	grep -q "\"error\":\"Metric name was empty\"" body
'

# each FIELD|ECHOED: the timestamp field as posted and as echoed
test_expect_success 'missingTimestamp, nullTimestamp, invalidTimestamp: "Invalid timestamp"' '
	for c in "|0" "\"timestamp\":null,|0" "\"timestamp\":-1,|-1" "\"timestamp\":0,|0"; do
		t=${c%%|*} && e=${c#*|} &&
		api "/api/put?details" -X POST -d "{\"metric\":\"$M\",$t\"value\":42,$TAGS}" &&
		echo "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$e,\"value\":\"42\",$TAGS},\"error\":\"Invalid timestamp\"}]}" >expect &&
		is 400 || return 1
	done
'

test_expect_success 'missingValue, nullValue, emptyValue: "Empty value"' '
	for v in "" "\"value\":null," "\"value\":\"\","; do
		api "/api/put?details" -X POST -d "{\"metric\":\"$M\",\"timestamp\":$TS,$v$TAGS}" &&
		if test "$v" = "\"value\":\"\","; then e=",\"value\":\"\""; else e=; fi &&
		echo "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$TS$e,$TAGS},\"error\":\"Empty value\"}]}" >expect &&
		is 400 || return 1
	done
'

test_expect_success 'badValue: "Unable to parse value to a number"' '
	refused notanumber "\"notanumber\"" "Unable to parse value to a number" &&
	refused true true "Unable to parse value to a number" &&
	refused 0x10 "\"0x10\"" "Unable to parse value to a number" &&
	refused 12345678901234567890 12345678901234567890 "Unable to parse value to a number"
'

test_expect_success 'ValueNaN, ValueINF, ValueNINF, ValueInfinity, ValueNInfinity, ValueInfinityUnsigned: Jackson reads them, the point is refused alone' '
	for v in NaN +INF -INF +Infinity -Infinity Infinity; do
		refused "$v" "$v" "Unable to parse value to a number" || return 1
	done &&
	api "/api/put?details" -X POST -d "[$(dp $M NaN),$(dp $M 43),$(dp $M "\"NaN\"")]" &&
	grep -q "^{\"success\":1,\"failed\":2,\"errors\":\[" body &&
	grep -q "^400" code
'

test_expect_success 'ValueNaNCase, ValueINFUnsigned, ValueINFCase: not JSON, the whole body refused' '
	added=$(counter tsd.datapoints.added) &&
	for v in Nan INF +inf; do
		api "/api/put?details" -X POST -d "[$(dp $M 44),$(dp $M $v)]" &&
		grep -q "^{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\"" body &&
		grep -q "^400" code || return 1
	done &&
	test $(counter tsd.datapoints.added) -eq $added
'

test_expect_success 'missingTags, nullTags, emptyTags: "Missing tags"' '
	for t in "" ",\"tags\":null" ",\"tags\":{}"; do
		api "/api/put?details" -X POST -d "{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":42$t}" &&
		if test "$t" = ",\"tags\":{}"; then e=$t; else e=; fi &&
		echo "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":\"42\"$e},\"error\":\"Missing tags\"}]}" >expect &&
		is 400 || return 1
	done
'

test_expect_success 'a null element of the array is refused alone ("Unexpected null datapoint encountered in set.")' '
	api "/api/put?details" -X POST -d "[$(dp $M 45),null]" &&
	echo "{\"success\":1,\"failed\":1,\"errors\":[{\"datapoint\":null,\"error\":\"Unexpected null datapoint encountered in set.\"}]}" >expect &&
	is 400
'

test_expect_success 'refused points: 400 without ?details, the good ones stored, all counted' '
	added=$(counter tsd.datapoints.added) &&
	rejected=$(counter tsd.datapoints.rejected) &&
	api /api/put -X POST -d "[$(dp $M 46),$(dp $M NaN),{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":1,\"tags\":{\"host\":\"b!\"}},null]" &&
	echo "{\"error\":{\"code\":400,\"message\":\"One or more data points had errors\",\"details\":\"Please see the TSD logs or append \\\"details\\\" to the put request\"}}" >expect &&
	is 400 &&
	api "/api/put?summary" -X POST -d "[$(dp $M 47),$(dp $M \"x\")]" &&
	echo "{\"success\":1,\"failed\":1}" >expect &&
	is 400 &&
	test $(counter tsd.datapoints.added) -eq $((added + 2)) &&
	test $(counter tsd.datapoints.rejected) -eq $((rejected + 4))
'

test_expect_success 'noSuchUniqueName: not refused, names are created on write (auto_create_metrics)' '
	api "/api/put?details" -X POST -d "$(dp sys.cpu.nice 42)" &&
	echo "{\"success\":1,\"failed\":0,\"errors\":[]}" >expect &&
	is 200
'

# The telnet side of TestPutRpc (PutDataPointRpc.execute on a channel):
# the refusals are tsd's words (docs/api.md, "Telnet")
test_expect_success 'execute, executeBadValue, executeShortArray: the telnet put answers nothing, or one line' '
	added=$(counter tsd.datapoints.added) &&
	printf "put $M $TS 42 host=web01\nexit\n" | $CLIENT telnet $TP >out &&
	test_must_be_empty out &&
	test $(counter tsd.datapoints.added) -eq $((added + 1)) &&
	printf "put $M $TS notanum host=web01\nput $M $TS 42\nexit\n" |
		$CLIENT telnet $TP >out &&
	cat >expect <<-\EOF &&
	put: invalid value: notanum
	put: illegal argument: need at least one tag
	EOF
	test_cmp expect out &&
	test $(counter tsd.datapoints.added) -eq $((added + 1))
'

TWO="[$(dp $M 42),$(dp $MB 24)]"

test_expect_success 'syncOKNoDetails, syncOKSummary, syncOKSummaryDetails, syncOKDetails: as without ?sync' '
	api "/api/put?sync=true" -X POST -d "$TWO" &&
	echo >expect && is 204 &&
	api "/api/put?sync=true&summary" -X POST -d "$TWO" &&
	echo "{\"success\":2,\"failed\":0}" >expect && is 200 &&
	api "/api/put?sync=true&summary&details" -X POST -d "$TWO" &&
	echo "{\"success\":2,\"failed\":0,\"errors\":[]}" >expect && is 200 &&
	api "/api/put?sync=true&details" -X POST -d "$TWO" &&
	is 200
'

test_expect_success 'syncOKTimeoutNoDetails, syncOKTimeoutSummary: the summary carries "timeouts":0' '
	api "/api/put?sync&sync_timeout=30000" -X POST -d "$TWO" &&
	echo >expect && is 204 &&
	api "/api/put?sync&sync_timeout=30000&summary" -X POST -d "$TWO" &&
	echo "{\"success\":2,\"timeouts\":0,\"failed\":0}" >expect && is 200 &&
	api "/api/put?sync&details&sync_timeout=30000" -X POST -d "[$(dp $M 42),$(dp $M \"\")]" &&
	echo "{\"success\":1,\"timeouts\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":\"\",$TAGS},\"error\":\"Empty value\"}]}" >expect &&
	is 400
'

test_expect_success 'a sync_timeout that is not an int: 500, nothing stored (Integer.parseInt)' '
	added=$(counter tsd.datapoints.added) &&
	api "/api/put?sync&sync_timeout=soon" -X POST -d "$TWO" &&
	echo "{\"error\":{\"code\":500,\"message\":\"For input string: \\\"soon\\\"\"}}" >expect &&
	is 500 &&
	test $(counter tsd.datapoints.added) -eq $added
'

test_expect_success 'unmount' '
	cellfs_umount
'

# A data directory on a small tmpfs filled until a put of many points
# fails to be stored (the storage failures of TestPutRpc's mocked HBase).
mkdir -p probe &&
mount -t tmpfs -o size=1m tmpfs probe 2>/dev/null &&
umount probe &&
test_set_prereq TMPFS

# full: mounts a 24 MiB tmpfs on $DATA (unmounted when the test ends),
# the daemon on it, and fills it until BIG (5000 points) fails to be
# stored: the answer of that put in "body", its status in "code".  The
# log's records are not compressed here (wal_compression=none), so a few
# dozen puts fill the disk: compressed, the same 5000 points again take
# a few KB of log, and the loop would need hundreds.
full() {
	rm -rf "$DATA" && mkdir "$DATA" &&
	mount -t tmpfs -o size=24m tmpfs "$DATA" &&
	test_when_finished "cellfs_umount; umount \"$DATA\"" &&
	cellfs_mount "tsd_http=$HP,tsd_telnet=$TP,wal_compression=none" &&
	$CLIENT wait $HP &&
	dd if=/dev/zero of="$DATA/filler" bs=1M count=19 2>/dev/null &&
	i=0 &&
	while bigput summary && grep -q "\"failed\":0" body; do
		i=$((i + 1)) &&
		test $i -lt 100 || return 1
	done
}

# bigput QS: posts BIG to /api/put?QS
bigput() {
	api "/api/put?$1" -X POST --data-binary @big
}

test_expect_success 'BIG: 5000 points' '
	python3 -c "import json
print(json.dumps([{\"metric\": \"$M\", \"timestamp\": $TS + i, \"value\": i,
	\"tags\": {\"host\": \"web%d\" % (i % 50)}} for i in range(5000)]))" >big
'

test_expect_success TMPFS 'a full disk: hbaseError, syncOneFailed(Summary, Details), syncTimeoutOneFailed(Summary): counted failed, 200 with ?summary or ?details; executeHBaseError over telnet' '
	full &&
	echo "{\"success\":0,\"failed\":5000}" >expect &&
	is 200 &&
	bigput details &&
	grep -q "^{\"success\":0,\"failed\":5000,\"errors\":\[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":\"0\",\"tags\":{\"host\":\"web0\"}},\"error\":\"Storage exception: " body &&
	grep -q "^200" code &&
	bigput "sync" &&
	echo "{\"error\":{\"code\":400,\"message\":\"One or more data points had errors\",\"details\":\"Please see the TSD logs or append \\\"details\\\" to the put request\"}}" >expect &&
	is 400 &&
	bigput "sync&summary&sync_timeout=30000" &&
	echo "{\"success\":0,\"timeouts\":0,\"failed\":5000}" >expect &&
	is 200 &&
	grep -q "Storage exception" "$MNT/.log" &&
	python3 -c "
for i in range(5000):
    print(\"put $M %d %d host=web%d\" % ($TS + i, i, i % 50))
print(\"exit\")" | $CLIENT telnet $TP >out &&
	grep -q "^put: HBase error: " out &&
	rm "$DATA/filler" &&
	bigput summary &&
	echo "{\"success\":5000,\"failed\":0}" >expect &&
	is 200
'

test_expect_success TMPFS 'syncTwoFailedDetails, syncTimeoutTwoFailedDetails: a refused point beside storage failures makes a 400' '
	full &&
	sed "s/^\[/[{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":1},/" big >big2 &&
	api "/api/put?sync&details&sync_timeout=30000" -X POST --data-binary @big2 &&
	grep -q "^{\"success\":0,\"timeouts\":0,\"failed\":5001,\"errors\":\[{\"datapoint\":{\"metric\":\"$M\",\"timestamp\":$TS,\"value\":\"1\"},\"error\":\"Missing tags\"},{\"datapoint\":" body &&
	grep -q "^400" code
'

test_done
