#!/bin/sh

test_description='cellfs: OpenTSDB series meta data: /api/uid/tsmeta (TestUniqueIdRpc tsuid*, TestTSMeta) and MNT/tsd/tsmeta/, stored in tsdb-meta as OpenTSDB stores it, and the tsd.core.meta tracking of writes'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

U=/api/uid/tsmeta
M="$MNT/tsd/tsmeta"
S1=000001000001000001		# sys.cpu.0{host=web01}
S2=000002000001000001000002000002	# sys.cpu.2{host=web01,datacenter=dc01}
S3=000001000001000003		# sys.cpu.0{host=web02}

# um UID TYPE NAME: a UIDMeta with nothing stored, as the API prints it
um() {
	printf '{"uid":"%s","type":"%s","name":"%s","description":"","notes":"","created":0,"custom":null,"displayName":""}' \
		"$1" "$2" "$3"
}
# ts TSUID TAGS DESC NOTES CREATED UNITS RETENTION MAX MIN DISPLAY DTYPE
#    TOTAL [CUSTOM]: a TSMeta as the API prints it, lastReceived as T
ts() {
	case $1 in
	$S1) metric=$(um 000001 METRIC sys.cpu.0) ;;
	$S2) metric=$(um 000002 METRIC sys.cpu.2) ;;
	*) metric=$(um 000001 METRIC sys.cpu.0) ;;
	esac
	printf '{"tsuid":"%s","metric":%s,"tags":[%s],"description":"%s","notes":"%s","created":%s,%s"units":"%s","retention":%s,"max":%s,"min":%s,"displayName":"%s","dataType":"%s","lastReceived":T,"totalDatapoints":%s}' \
		"$1" "$metric" "$2" "$3" "$4" "$5" "${13:+\"custom\":${13},}" \
		"$6" "$7" "$8" "$9" "${10}" "${11}" "${12}"
}
H1="$(um 000001 TAGK host),$(um 000001 TAGV web01)"
H3="$(um 000001 TAGK host),$(um 000003 TAGV web02)"
H2="$H1,$(um 000002 TAGK datacenter),$(um 000002 TAGV dc01)"
# norm: the body with each lastReceived written as T (checked apart)
norm() {
	sed 's/"lastReceived":[0-9]*/"lastReceived":T/g' body >body.n &&
	mv body.n body
}

test_expect_success 'mount with the HTTP API; three series (setupTSUID: sys.cpu.0 000001, sys.cpu.2 000002; host 1, datacenter 2; web01 1, dc01 2, web02 3)' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api "$U?tsuid=$S1" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Could not find Timeseries meta data\"}}" >expect &&
	is 404 &&
	echo "sys.cpu.0 1356998400 1 host=web01" >>"$MNT/tsd/put" &&
	echo "sys.cpu.2 1356998400 1 host=web01 datacenter=dc01" >>"$MNT/tsd/put" &&
	echo "sys.cpu.0 1356998400 1 host=web02" >>"$MNT/tsd/put" &&
	cat "$MNT/tsd/tagv/dc01" "$MNT/tsd/tagv/web02" >out &&
	printf "000002\n000003\n" >expect &&
	test_cmp expect out
'

test_expect_success 'no meta until one is made: GET 404, POST by tsuid 400, POST by m without create 400 (tsuidGetNotFound, tsuidPostByMNoCreate)' '
	api "$U?tsuid=$S1" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Could not find Timeseries meta data\"}}" >expect &&
	is 404 &&
	api $U -X POST -d "{\"tsuid\":\"$S1\",\"displayName\":\"Hello World\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Requested TSMeta did not exist\"}}" >expect &&
	is 400 &&
	api "$U?m=sys.cpu.0%7Bhost=web02%7D" -X POST -d "{\"displayName\":\"Hello World\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Could not find TSMeta, specify \\\"create=true\\\" to create a new one.\"}}" >expect &&
	is 400 &&
	api "$U?m=sys.cpu.0" &&
	echo "[]" >expect &&
	is 200
'

test_expect_success 'POST by m with create=true makes the meta and a zero counter (tsuidPostByM)' '
	before=$(date +%s) &&
	api "$U?m=sys.cpu.0%7Bhost=web01%7D&create=true" -X POST -d "{\"displayName\":\"Display\",\"description\":\"Description\",\"notes\":\"Notes\",\"dataType\":\"Data\",\"retention\":42,\"max\":1.0}" &&
	after=$(date +%s) &&
	lr=$(sed -n "s/.*\"lastReceived\":\([0-9]*\).*/\1/p" body) &&
	test "$lr" -ge "$before" && test "$lr" -le "$after" &&
	norm &&
	ts $S1 "$H1" Description Notes 0 "" 42 1.0 "\"NaN\"" Display Data 0 >expect &&
	echo >>expect &&
	is 200 &&
	api "$U?tsuid=$S1" &&
	norm &&
	is 200 &&
	od -An -tx1 "$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%01/name:ts_ctr" | tr -d " \n" >out &&
	echo 0000000000000000 >expect &&
	echo >>out &&
	test_cmp expect out
'

test_expect_success 'the stored cell: tsdb-meta, the TSUID'"'"'s row, name:ts_meta, getStorageJSON'"'"'s text' '
	printf "{\"tsuid\":\"$S1\",\"displayName\":\"Display\",\"description\":\"Description\",\"notes\":\"Notes\",\"created\":0,\"custom\":null,\"units\":\"\",\"dataType\":\"Data\",\"retention\":42,\"max\":1.0,\"min\":\"NaN\"}" >expect &&
	test_cmp expect "$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%01/name:ts_meta"
'

test_expect_success 'GET by m: every series of the metric having the pairs, in TSUID order, the pairs in any order (tsuidGetByM, tsuidGetByMMultiTag, tsuidGetByMMultiTagWrongOrder)' '
	api "$U?m=sys.cpu.0%7Bhost=web02%7D&create=true" -X POST -d "{}" &&
	norm &&
	ts $S3 "$H3" "" "" 0 "" 0 "\"NaN\"" "\"NaN\"" "" "" 0 >expect &&
	echo >>expect &&
	is 200 &&
	api "$U?m=sys.cpu.2%7Bhost=web01,datacenter=dc01%7D&create=true" -X POST -d "{\"units\":\"%\"}" &&
	api "$U?m=sys.cpu.0" &&
	norm &&
	{ printf "[" &&
	  ts $S1 "$H1" Description Notes 0 "" 42 1.0 "\"NaN\"" Display Data 0 &&
	  printf "," &&
	  ts $S3 "$H3" "" "" 0 "" 0 "\"NaN\"" "\"NaN\"" "" "" 0 &&
	  echo "]"; } >expect &&
	is 200 &&
	api "$U?m=sys.cpu.0%7Bhost=web02%7D" &&
	norm &&
	{ printf "[" &&
	  ts $S3 "$H3" "" "" 0 "" 0 "\"NaN\"" "\"NaN\"" "" "" 0 &&
	  echo "]"; } >expect &&
	is 200 &&
	api "$U?m=sys.cpu.2%7Bdatacenter=dc01,host=web01%7D" &&
	norm &&
	{ printf "[" &&
	  ts $S2 "$H2" "" "" 0 % 0 "\"NaN\"" "\"NaN\"" "" "" 0 &&
	  echo "]"; } >expect &&
	is 200 &&
	api "$U?m=sys.cpu.2%7Bdatacenter=dc01%7D" &&
	norm &&
	is 200
'

test_expect_success 'GET refusals (tsuidGetByMEmpty, tsuidGetByMBadSyntax, tsuidGetMissingTSUID, unknown names)' '
	api "$U?m=" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>m</code>\"}}" >expect &&
	is 400 &&
	api "$U" &&
	is 400 &&
	api "$U?m=sys.cpu.0%7Bdatacenter=dc" &&
	grep -q "^400" code &&
	grep -q "Missing .}. at the end of" body &&
	api "$U?m=nosuch" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Unable to find one of the UIDs\"}}" >expect &&
	is 404 &&
	api "$U?m=sys.cpu.0%7Bhost=nosuch%7D" &&
	is 404 &&
	api "$U?tsuid=0000010000010000" &&
	echo "{\"error\":{\"code\":400,\"message\":\"invalid TSUID: 0000010000010000\"}}" >expect &&
	is 400 &&
	api "$U?tsuid=000001000001000002" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Could not find Timeseries meta data\"}}" >expect &&
	is 404
'

test_expect_success 'POST merges, none is 304, PUT replaces; the query-string forms, max and min as Float.parseFloat reads them (tsuidPost, tsuidPostNotModified, tsuidPostQS, tsuidPut, tsuidPutNotModified, tsuidPutQS)' '
	api $U -X POST -d "{\"tsuid\":\"$S1\", \"displayName\":\"Hello World\",\"custom\":{\"owner\":\"ops\",\"a\":\"1\"}}" &&
	norm &&
	ts $S1 "$H1" Description Notes 0 "" 42 1.0 "\"NaN\"" "Hello World" Data 0 "{\"a\":\"1\",\"owner\":\"ops\"}" >expect &&
	echo >>expect &&
	is 200 &&
	api $U -X POST -d "{\"tsuid\":\"$S1\"}" &&
	echo >expect &&
	is 304 &&
	api $U -X PUT -d "{\"tsuid\":\"$S1\"}" &&
	is 304 &&
	api "$U?tsuid=$S1&display_name=42&max=1.1&min=-2&retention=7&method_override=post" &&
	norm &&
	ts $S1 "$H1" Description Notes 0 "" 7 1.100000023841858 -2.0 42 Data 0 "{\"a\":\"1\",\"owner\":\"ops\"}" >expect &&
	echo >>expect &&
	is 200 &&
	api "$U?tsuid=$S1&units=ms&method_override=put" &&
	norm &&
	ts $S1 "$H1" "" "" 0 ms 0 "\"NaN\"" "\"NaN\"" "" "" 0 >expect &&
	echo >>expect &&
	is 200 &&
	api $U -X PUT -d "{\"tsuid\":\"$S1\", \"displayName\":\"Hello World\",\"created\":1328140800}" &&
	norm &&
	ts $S1 "$H1" "" "" 1328140800 "" 0 "\"NaN\"" "\"NaN\"" "Hello World" "" 0 >expect &&
	echo >>expect &&
	is 200
'

test_expect_success 'POST and PUT refusals (tsuidPostNoTSUID, tsuidPostQSNoTSUID, tsuidPutNoTSUID, tsuidPutQSNoTSUID, bad values)' '
	api $U -X POST -d "{\"displayName\":\"Hello World\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>m</code>\"}}" >expect &&
	is 400 &&
	api "$U?display_name=42&method_override=post" &&
	is 400 &&
	api $U -X PUT -d "{\"displayName\":\"Hello World\"}" &&
	is 400 &&
	api "$U?display_name=42&method_override=put" &&
	is 400 &&
	api "$U?tsuid=$S1&retention=x&method_override=post" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse '"'"'retention'"'"' value\"}}" >expect &&
	is 400 &&
	api "$U?tsuid=$S1&max=x&method_override=post" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse '"'"'max'"'"' value\"}}" >expect &&
	is 400 &&
	api $U -X POST -d "{\"tsuid\":\"$S1\",\"retention\":\"x\"}" &&
	grep -q "^400" code &&
	api $U -X POST -d "not json" &&
	grep -q "^400" code &&
	api "$U?tsuid=000009000001000001&display_name=x&method_override=post" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Unable to find one or more UIDs\"}}" >expect &&
	is 404
'

test_expect_success 'DELETE: 204 and the meta gone, the counter kept; refusals (tsuidDelete, tsuidDeleteQS)' '
	api $U -X DELETE -d "{\"tsuid\":\"$S3\", \"displayName\":\"Hello World\"}" &&
	echo >expect &&
	is 204 &&
	api "$U?tsuid=$S3" &&
	grep -q "^404" code &&
	test -e "$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%03/name:ts_ctr" &&
	api "$U?tsuid=$S3&method_override=delete" &&
	echo >expect &&
	is 204 &&
	api $U -X DELETE -d "{\"displayName\":\"Hello World\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to delete TSMeta information\",\"details\":\"Missing UID\"}}" >expect &&
	is 400 &&
	api "$U?tsuid=$S1" -X PATCH &&
	grep -q "^405" code
'

test_expect_success 'MNT/tsd/tsmeta/: read by TSUID or m, JSON lines appended merge in (or create), rm deletes' '
	cat "$M/tsuid=$S2" >body &&
	norm &&
	ts $S2 "$H2" "" "" 0 % 0 "\"NaN\"" "\"NaN\"" "" "" 0 >expect &&
	echo >>expect &&
	test_cmp expect body &&
	echo "{\"description\":\"CPU\",\"custom\":{\"b\":\"2\"}}" >>"$M/tsuid=$S2" &&
	printf "{\"notes\":\"n\"}\n{\"units\":\"B\"}\n" >"$M/m=sys.cpu.0{host=web02}&create=true" &&
	cat "$M/m=sys.cpu.2{datacenter=dc01}" >body &&
	norm &&
	{ printf "[" &&
	  ts $S2 "$H2" CPU "" 0 % 0 "\"NaN\"" "\"NaN\"" "" "" 0 "{\"b\":\"2\"}" &&
	  echo "]"; } >expect &&
	test_cmp expect body &&
	cat "$M/tsuid=$S3" >body &&
	norm &&
	ts $S3 "$H3" "" n 0 B 0 "\"NaN\"" "\"NaN\"" "" "" 0 >expect &&
	echo >>expect &&
	test_cmp expect body &&
	rm "$M/m=sys.cpu.0{host=web02}" &&
	echo ENOENT >expect &&
	errno_of read "$M/tsuid=$S3" >out &&
	test_cmp expect out &&
	ls "$M" >out &&
	test_must_be_empty out &&
	ls "$MNT/tsd" >out &&
	grep -qx tsmeta out
'

test_expect_success 'MNT/tsd/tsmeta/: a bad line is EINVAL with a .log line, the others kept; bad names' '
	printf "{\"notes\":\"kept\"}\nnot json\n" >lines &&
	test_must_fail sh -c "cat lines >>\"$M/tsuid=$S2\"" &&
	last_log >out &&
	grep -q "warn write tsd/tsmeta/tsuid=$S2: line 2: Unable to parse the given JSON" out &&
	grep -q "\"notes\":\"kept\"" "$M/tsuid=$S2" &&
	echo ENOENT >expect &&
	errno_of read "$M/tsuid=000001000001000002" >out &&
	test_cmp expect out &&
	errno_of read "$M/m=nosuch" >out &&
	test_cmp expect out &&
	echo EINVAL >expect &&
	errno_of read "$M/tsuid=12" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "invalid TSUID: 12" out &&
	errno_of read "$M/color=red" >out &&
	test_cmp expect out &&
	errno_of read "$M/m=sys.cpu.0{host" >out &&
	test_cmp expect out
'

test_expect_success 'meta survives kill -9 and a remount' '
	echo "{\"description\":\"durable\"}" >>"$M/tsuid=$S2" &&
	cellfs_kill9 &&
	cellfs_mount "tsd_http=$HP" &&
	grep -q "\"description\":\"durable\"" "$M/tsuid=$S2"
'

test_expect_success 'tsd_tsuid_tracking: each write sets the counter to 1, its time the last write; no meta is made' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_tsuid_tracking" &&
	before=$(date +%s) &&
	echo "sys.cpu.0 1356998400 1 host=web03" >>"$MNT/tsd/put" &&
	echo "sys.cpu.0 1356998401 1 host=web03" >>"$MNT/tsd/put" &&
	od -An -tx1 "$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%04/name:ts_ctr" | tr -d " \n" >out &&
	echo 0000000000000001 >expect &&
	echo >>out &&
	test_cmp expect out &&
	test_must_fail test -e "$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%04/name:ts_meta" &&
	api "$U?tsuid=000001000001000004" &&
	grep -q "^404" code &&
	echo "{}" >>"$M/m=sys.cpu.0{host=web03}&create=true" &&
	api "$U?tsuid=000001000001000004" &&
	lr=$(sed -n "s/.*\"lastReceived\":\([0-9]*\).*/\1/p" body) &&
	test "$lr" -ge "$before" &&
	grep -q "\"totalDatapoints\":1}" body
'

test_expect_success 'tsd_realtime_ts: a new series gets its meta at its first write, created then' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_tsuid_tracking,tsd_realtime_ts" &&
	before=$(date +%s) &&
	echo "sys.cpu.0 1356998400 1 host=web05" >>"$MNT/tsd/put" &&
	after=$(date +%s) &&
	api "$U?m=sys.cpu.0%7Bhost=web05%7D" &&
	grep -q "^200" code &&
	created=$(sed -n "s/.*\"created\":\([0-9]*\),\"units.*/\1/p" body) &&
	: time\(2\) reads the coarse clock, up to a tick behind date: a second less &&
	test "$created" -ge $((before - 1)) && test "$created" -le "$after" &&
	grep -q "\"tsuid\":\"000001000001000005\"" body &&
	grep -q "\"totalDatapoints\":0}" body &&
	echo "{\"displayName\":\"kept\"}" >>"$M/tsuid=000001000001000005" &&
	echo "sys.cpu.0 1356998401 2 host=web05" >>"$MNT/tsd/put" &&
	grep -q "\"displayName\":\"kept\"" "$M/tsuid=000001000001000005" &&
	rm "$M/tsuid=000001000001000005" &&
	echo "sys.cpu.0 1356998402 3 host=web05" >>"$MNT/tsd/put" &&
	grep -q "\"displayName\":\"\"" "$M/tsuid=000001000001000005"
'

test_expect_success 'tsd_tsuid_incrementing: the counter counts the points, the meta made at the first' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_tsuid_tracking,tsd_realtime_ts,tsd_tsuid_incrementing" &&
	printf "sys.cpu.0 1356998400 1 host=web06\nsys.cpu.0 1356998401 1 host=web06\nsys.cpu.0 1356998402 1 host=web06\nsys.cpu.2 1356998400 1 host=web06 datacenter=dc01\n" >>"$MNT/tsd/put" &&
	grep -q "\"totalDatapoints\":3}" "$M/tsuid=000001000001000006" &&
	grep -q "\"totalDatapoints\":1}" "$M/m=sys.cpu.2{host=web06}" &&
	echo "{\"notes\":\"mine\"}" >>"$M/tsuid=000001000001000006" &&
	printf "sys.cpu.0 1356999400 1 host=web06\nsys.cpu.0 1356999401 1 host=web06\n" >>"$MNT/tsd/put" &&
	grep -q "\"notes\":\"mine\".*\"totalDatapoints\":5}" "$M/tsuid=000001000001000006"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
