#!/bin/sh

test_description='cellfs: /api/stats, /api/dropcaches, /api/config and /api/serializers as OpenTSDB answers them (StatsRpc API version 1, DropCachesRpc, ShowConfig, Serializers)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# counter NAME: the value of counter NAME in "body" (an /api/stats answer)
counter() {
	python3 -c "import json,sys; print([d[\"value\"] for d in json.load(open(\"body\")) if d[\"metric\"] == sys.argv[1]][0])" "$1"
}

test_expect_success 'mount with the HTTP API; before any write every counter is 0' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api /api/stats &&
	grep -q "^200" code &&
	test "$(counter tsd.datapoints.added)" = 0
'

test_expect_success '/api/stats: IncomingDataPoints with the host tag, the counters counting' '
	printf "sys.cpu 1356998400 1 host=a\nsys.cpu 1356998460 2 host=a\nsys.cpu x 3 host=a\n" >>"$MNT/tsd/put" ;
	cat "$MNT/tsd/q/start=1356998400&end=1356998500&m=sum:sys.cpu" >/dev/null &&
	api /api/stats &&
	grep -q "^200" code &&
	test "$(counter tsd.datapoints.added)" = 2 &&
	test "$(counter tsd.datapoints.rejected)" = 1 &&
	test "$(counter tsd.uid.assigned)" = 3 &&
	test "$(counter tsd.query.count)" = 1 &&
	test "$(counter tsd.query.points)" = 2 &&
	python3 -c "
import json, socket
for d in json.load(open(\"body\")):
    assert list(d) == [\"metric\", \"timestamp\", \"value\", \"tags\"], d
    assert d[\"metric\"].startswith(\"tsd.\") and isinstance(d[\"timestamp\"], int), d
    assert d[\"tags\"][\"host\"] == socket.gethostname()[:63], d
    assert isinstance(d[\"value\"], str), d
" &&
	grep -q "\"tags\":{\"host\":\"[^\"]*\",\"type\":\"all\"}" body &&
	api /api/stats -X DELETE &&
	grep -q "^405" code
'

test_expect_success '/api/dropcaches: GET or DELETE, names resolve again from tsdb-uid afterwards' '
	api /api/dropcaches &&
	echo "{\"message\":\"Caches dropped\",\"status\":\"200\"}" >expect &&
	is 200 &&
	api /api/dropcaches -X DELETE &&
	is 200 &&
	last_log >out &&
	grep -q "info tsd: UID caches dropped" out &&
	cat "$MNT/tsd/q/start=1356998400&end=1356998500&m=sum:sys.cpu" >out &&
	printf "sys.cpu 1356998400 1 host=a\nsys.cpu 1356998460 2 host=a\n" >expect &&
	test_cmp expect out &&
	api /api/dropcaches -X POST &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [POST] is not permitted for this endpoint\"}}" >expect &&
	is 405
'

test_expect_success '/api/config: the settings that hold, sorted, the mount options in them (ShowConfig, formatConfigV1)' '
	api /api/config &&
	grep -q "^200" code &&
	python3 -c "import json; d = json.load(open(\"body\")); k = list(d); assert k == sorted(k), k; assert all(isinstance(v, str) for v in d.values())" &&
	grep -q "\"tsd.core.meta.enable_tsuid_tracking\":\"false\"" body &&
	grep -q "\"tsd.http.query.allow_delete\":\"false\"" body &&
	grep -q "\"tsd.network.port\":\"$HP\"" body &&
	grep -q "\"tsd.network.bind\":\"127.0.0.1\"" body &&
	grep -q "\"tsd.storage.hbase.meta_table\":\"tsdb-meta\"" body &&
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_allow_delete,tsd_tsuid_tracking,tsd_realtime_ts" &&
	$CLIENT wait $HP &&
	api /api/config -X POST &&
	grep -q "^200" code &&
	grep -q "\"tsd.core.meta.enable_tsuid_tracking\":\"true\"" body &&
	grep -q "\"tsd.core.meta.enable_realtime_ts\":\"true\"" body &&
	grep -q "\"tsd.core.meta.enable_tsuid_incrementing\":\"false\"" body &&
	grep -q "\"tsd.http.query.allow_delete\":\"true\"" body &&
	api /api/config -X DELETE &&
	grep -q "^405" code
'

test_expect_success '/api/serializers: the JSON serializer, its parsers and formatters (formatSerializersV1)' '
	api /api/serializers &&
	grep -q "^200" code &&
	grep -q "\"request_content_type\":\"application/json\"" body &&
	grep -q "\"formatters\":\[" body &&
	grep -q "\"response_content_type\":\"application/json; charset=UTF-8\"" body &&
	grep -q "\"parsers\":\[" body &&
	grep -q "\"serializer\":\"json\"" body &&
	grep -q "\"class\":\"net.opentsdb.tsd.HttpJsonSerializer\"" body &&
	grep -q "\"TSMetaV1\"" body &&
	api /api/serializers -X PUT &&
	grep -q "^405" code
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
