#!/bin/sh

test_description='cellfs: OpenTSDB UID meta data: /api/uid/uidmeta (TestUniqueIdRpc uid*) and MNT/tsd/uidmeta/, stored in tsdb-uid as OpenTSDB stores it'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

U=/api/uid/uidmeta
M="$MNT/tsd/uidmeta"
# meta UID TYPE NAME DESC NOTES DISPLAY [CUSTOM]: the API's JSON
meta() {
	printf '{"uid":"%s","type":"%s","name":"%s","description":"%s","notes":"%s","created":0,"custom":%s,"displayName":"%s"}\n' \
		"$1" "$2" "$3" "$4" "$5" "${7:-null}" "$6"
}

test_expect_success 'mount with the HTTP API; metric sys.cpu.0 is UID 000001 (setupUID)' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api "$U?type=metric&uid=000001" &&
	grep -q "^404" code &&
	echo "sys.cpu.0 1356998400 1 host=web01" >>"$MNT/tsd/put"
'

test_expect_success 'GET: the default meta of a UID with none stored; refusals (uidGet, uidGetNoUID, uidGetNoType, uidGetNSU)' '
	api "$U?type=metric&uid=000001" &&
	meta 000001 METRIC sys.cpu.0 "" "" "" >expect &&
	is 200 &&
	api "$U?type=metric" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>uid</code>\"}}" >expect &&
	is 400 &&
	api "$U?uid=000001" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>type</code>\"}}" >expect &&
	is 400 &&
	api "$U?type=metric&uid=000002" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Could not find the requested UID\"}}" >expect &&
	is 404 &&
	api "$U?type=metrix&uid=000001" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid type requested: metrix\"}}" >expect &&
	is 400
'

test_expect_success 'POST: a change is stored and answered, none is 304; refusals (uidPost, uidPostNotModified, uidPostMissingUID, uidPostMissingType, uidPostNSU)' '
	api $U -X POST -d "{\"uid\":\"000001\",\"type\":\"metric\",\"displayName\":\"Hello!\"}" &&
	meta 000001 METRIC sys.cpu.0 "" "" "Hello!" >expect &&
	is 200 &&
	api $U -X POST -d "{\"uid\":\"000001\",\"type\":\"metric\"}" &&
	echo >expect &&
	is 304 &&
	api $U -X POST -d "{\"type\":\"metric\",\"displayName\":\"Hello!\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing UID\"}}" >expect &&
	is 400 &&
	api $U -X POST -d "{\"uid\":\"000001\",\"displayName\":\"Hello!\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing type\"}}" >expect &&
	is 400 &&
	api $U -X POST -d "{\"uid\":\"000002\",\"type\":\"metric\",\"displayName\":\"Hello!\"}" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Could not find the requested UID\"}}" >expect &&
	is 404 &&
	api "$U?type=metric&uid=000001" &&
	meta 000001 METRIC sys.cpu.0 "" "" "Hello!" >expect &&
	is 200
'

test_expect_success 'POST merges, PUT replaces; the query-string forms (uidPostQS, uidPut, uidPutNotModified, uidPutQS)' '
	api $U -X POST -d "{\"uid\":\"000001\",\"type\":\"metric\",\"description\":\"CPU\",\"custom\":{\"owner\":\"ops\",\"dept\":\"a\"}}" &&
	meta 000001 METRIC sys.cpu.0 CPU "" "Hello!" "{\"dept\":\"a\",\"owner\":\"ops\"}" >expect &&
	is 200 &&
	api "$U?uid=000001&type=metric&notes=n1&method_override=post" &&
	meta 000001 METRIC sys.cpu.0 CPU n1 "Hello!" "{\"dept\":\"a\",\"owner\":\"ops\"}" >expect &&
	is 200 &&
	api $U -X PUT -d "{\"uid\":\"000001\",\"type\":\"metric\",\"displayName\":\"Hello!\"}" &&
	meta 000001 METRIC sys.cpu.0 "" "" "Hello!" >expect &&
	is 200 &&
	api $U -X PUT -d "{\"uid\":\"000001\",\"type\":\"metric\"}" &&
	echo >expect &&
	is 304 &&
	api "$U?uid=000001&type=metric&display_name=Hello&method_override=put" &&
	meta 000001 METRIC sys.cpu.0 "" "" Hello >expect &&
	is 200
'

test_expect_success 'the stored cell: tsdb-uid, row 000001, name:metric_meta, getStorageJSON'"'"'s text' '
	cat "$MNT/tsdb-uid/.scan/column=name:metric_meta" >out &&
	echo "%00%00%01 name:metric_meta" >expect &&
	cut -d" " -f1,2 out >out.prefix &&
	test_cmp expect out.prefix &&
	printf "{\"type\":\"METRIC\",\"displayName\":\"Hello\",\"description\":\"\",\"notes\":\"\",\"created\":0,\"custom\":null}" >expect &&
	test_cmp expect "$MNT/tsdb-uid/%00%00%01/name:metric_meta"
'

test_expect_success 'DELETE: 204, the default again; refusals (uidDelete, uidDeleteMissingUID, uidDeleteMissingType, uidDeleteQS)' '
	api $U -X DELETE -d "{\"uid\":\"000001\",\"type\":\"metric\",\"displayName\":\"Hello!\"}" &&
	echo >expect &&
	is 204 &&
	api "$U?type=metric&uid=000001" &&
	meta 000001 METRIC sys.cpu.0 "" "" "" >expect &&
	is 200 &&
	api $U -X DELETE -d "{\"type\":\"metric\",\"displayName\":\"Hello!\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to delete UIDMeta information\",\"details\":\"Missing UID\"}}" >expect &&
	is 400 &&
	api $U -X DELETE -d "{\"uid\":\"000001\",\"displayName\":\"Hello!\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to delete UIDMeta information\",\"details\":\"Missing type\"}}" >expect &&
	is 400 &&
	api "$U?uid=000001&type=metric&method_override=delete" &&
	echo >expect &&
	is 204 &&
	api "$U?uid=000001&type=metric" -X PATCH &&
	grep -q "^405" code
'

test_expect_success 'MNT/tsd/uidmeta/: read by UID or name, JSON lines appended merge in, rm deletes' '
	cat "$M/type=metric&uid=000001" >out &&
	meta 000001 METRIC sys.cpu.0 "" "" "" >expect &&
	test_cmp expect out &&
	echo "{\"description\":\"CPU\",\"custom\":{\"b\":\"2\",\"a\":\"1\"}}" >>"$M/type=metric&uid=000001" &&
	printf "{\"notes\":\"n\"}\n{\"displayName\":\"web\"}\n" >"$M/type=tagv&name=web01" &&
	cat "$M/type=metric&name=sys.cpu.0" >out &&
	meta 000001 METRIC sys.cpu.0 CPU "" "" "{\"a\":\"1\",\"b\":\"2\"}" >expect &&
	test_cmp expect out &&
	cat "$M/type=tagv&uid=1" >out &&
	meta 000001 TAGV web01 "" n web >expect &&
	test_cmp expect out &&
	api "$U?type=tagv&uid=000001" &&
	is 200 &&
	rm "$M/type=tagv&name=web01" &&
	cat "$M/type=tagv&uid=000001" >out &&
	meta 000001 TAGV web01 "" "" "" >expect &&
	test_cmp expect out &&
	ls "$M" >out &&
	test_must_be_empty out
'

test_expect_success 'MNT/tsd/uidmeta/: a bad line is EINVAL with a .log line, the others kept; bad names' '
	printf "{\"notes\":\"kept\"}\nnot json\n" >lines &&
	test_must_fail sh -c "cat lines >>\"$M/type=tagk&uid=1\"" &&
	last_log >out &&
	grep -q "warn write tsd/uidmeta/type=tagk&uid=1: line 2: Unable to parse the given JSON" out &&
	cat "$M/type=tagk&name=host" >out &&
	meta 000001 TAGK host "" kept "" >expect &&
	test_cmp expect out &&
	echo ENOENT >expect &&
	errno_of read "$M/type=tagv&uid=9" >out &&
	test_cmp expect out &&
	errno_of read "$M/type=tagv&name=nosuch" >out &&
	test_cmp expect out &&
	echo EINVAL >expect &&
	errno_of read "$M/type=bad&uid=1" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "Invalid type requested: bad" out &&
	errno_of read "$M/uid=1" >out &&
	test_cmp expect out &&
	errno_of read "$M/type=metric&uid=1&color=red" >out &&
	test_cmp expect out
'

test_expect_success 'meta survives kill -9 and a remount' '
	echo "{\"description\":\"durable\"}" >>"$M/type=metric&uid=1" &&
	cellfs_kill9 &&
	cellfs_mount "tsd_http=$HP" &&
	cat "$M/type=metric&uid=1" >out &&
	meta 000001 METRIC sys.cpu.0 durable "" "" "{\"a\":\"1\",\"b\":\"2\"}" >expect &&
	test_cmp expect out
'

test_expect_success 'tsd_realtime_uid: each name assigned gets its UIDMeta, created then; names known before keep theirs' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_realtime_uid" &&
	before=$(date +%s) &&
	echo "rt.metric 1356998400 1 host=web01 rtk=rtv" >>"$MNT/tsd/put" &&
	after=$(date +%s) &&
	for t in "metric&name=rt.metric" "tagk&name=rtk" "tagv&name=rtv"; do
		cat "$M/type=$t" >out &&
		created=$(sed -n "s/.*\"created\":\([0-9]*\).*/\1/p" out) &&
		test "$created" -ge $((before - 1)) && test "$created" -le "$after" || return 1
	done &&
	grep -q "\"created\":0" "$M/type=tagv&name=web01" &&
	test -e "$MNT/tsdb-uid/%00%00%02/name:metric_meta" &&
	api /api/config &&
	grep -q "\"tsd.core.meta.enable_realtime_uid\":\"true\"" body &&
	echo "{\"notes\":\"mine\"}" >>"$M/type=metric&name=rt.metric" &&
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_realtime_uid" &&
	echo "rt.metric 1356998401 1 host=web01 rtk=rtv" >>"$MNT/tsd/put" &&
	grep -q "\"notes\":\"mine\"" "$M/type=metric&name=rt.metric"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
