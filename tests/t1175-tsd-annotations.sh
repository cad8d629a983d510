#!/bin/sh

test_description='cellfs: OpenTSDB annotations over HTTP (/api/annotation, /api/annotations, /api/annotation/bulk) and in /api/query answers, after TestAnnotationRpc'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# TestAnnotationRpc's times: a series note at 1388450562 (2013-12-31),
# global notes at 1328140800 and 1328140801 (2012-02-02)
T=1388450562
G=1328140800

test_expect_success 'mount with the HTTP API; reads and deletes before any write make no table; one series (its TSUID from lookup)' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api "/api/annotation?start_time=$G" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Unable to locate annotation in storage\"}}" >expect &&
	is 404 &&
	api "/api/annotations?start_time=$G" &&
	echo "[]" >expect && is 200 &&
	api "/api/annotation/bulk?start_time=$G&global&method_override=delete" &&
	grep -q "\"totalDeleted\":0" body &&
	api "/api/annotation?start_time=$G" -X DELETE &&
	echo >expect && is 204 &&
	ls "$MNT" >out && ! grep -q tsdb out &&
	printf "sys.cpu.user %s 1 host=web01\nsys.cpu.user %s 2 host=web01\nsys.cpu.user %s 3 host=web02\nsys.cpu.user %s 4 host=web01\n" \
		$((T - 2)) $((T + 8)) $((T - 2)) $G >>"$MNT/tsd/put" &&
	api "/api/search/lookup?m=sys.cpu.user%7Bhost=web01%7D" &&
	TS=$(python3 -c "import json; print(json.load(open(\"body\"))[\"results\"][0][\"tsuid\"])") &&
	api "/api/search/lookup?m=sys.cpu.user%7Bhost=web02%7D" &&
	TS2=$(python3 -c "import json; print(json.load(open(\"body\"))[\"results\"][0][\"tsuid\"])") &&
	test ${#TS} = 18 && test ${#TS2} = 18 &&
	echo "TS=$TS TS2=$TS2" >tsuids
'
# the variables above, for the tests below (each runs in its own shell)
TS=$(sed -n "s/^TS=\([^ ]*\) .*/\1/p" "$SHARNESS_TRASH_DIRECTORY/tsuids")
TS2=$(sed -n "s/.* TS2=//p" "$SHARNESS_TRASH_DIRECTORY/tsuids")

test_expect_success 'POST a new note: 200 with the stored note (postNew)' '
	api /api/annotation -X POST -d "{\"tsuid\":\"$TS\",\"startTime\":$T,\"endTime\":1419984000,\"description\":\"Hello!\",\"notes\":\"My Notes\",\"custom\":{\"site\":\"x\",\"owner\":\"ops\"}}" &&
	echo "{\"tsuid\":\"$TS\",\"startTime\":$T,\"endTime\":1419984000,\"description\":\"Hello!\",\"notes\":\"My Notes\",\"custom\":{\"owner\":\"ops\",\"site\":\"x\"}}" >expect &&
	is 200 &&
	api "/api/annotation?tsuid=$TS&start_time=$T" &&
	is 200
'

test_expect_success 'GET: not found is 404, a missing start 400 (getNotFound, getMissingStart)' '
	api "/api/annotation?tsuid=$TS&start_time=$((T + 6))" &&
	echo "{\"error\":{\"code\":404,\"message\":\"Unable to locate annotation in storage\"}}" >expect &&
	is 404 &&
	api "/api/annotation?tsuid=$TS" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing start time\"}}" >expect &&
	is 400
'

test_expect_success 'POST changes the fields given, PUT replaces them all; no change is 304 (modify, modifyPut, modifyNoChange)' '
	api "/api/annotation?tsuid=$TS&start_time=$T&description=Boo&method_override=post" &&
	echo "{\"tsuid\":\"$TS\",\"startTime\":$T,\"endTime\":1419984000,\"description\":\"Boo\",\"notes\":\"My Notes\",\"custom\":{\"owner\":\"ops\",\"site\":\"x\"}}" >expect &&
	is 200 &&
	api "/api/annotation?tsuid=$TS&start_time=$T&method_override=post" &&
	echo >expect && is 304 &&
	api /api/annotation -X PUT -d "{\"tsuid\":\"$TS\",\"startTime\":$T,\"description\":\"Boo\"}" &&
	echo "{\"tsuid\":\"$TS\",\"startTime\":$T,\"endTime\":0,\"description\":\"Boo\",\"notes\":\"\"}" >expect &&
	is 200
'

test_expect_success 'global notes: TSUID "", listed by /api/annotations (postNewGlobal, getGlobals)' '
	api /api/annotation -X POST -d "{\"startTime\":$G,\"endTime\":$((G + 1)),\"description\":\"Description\",\"notes\":\"Notes\",\"custom\":{\"owner\":\"ops\"}}" &&
	echo "{\"tsuid\":\"\",\"startTime\":$G,\"endTime\":$((G + 1)),\"description\":\"Description\",\"notes\":\"Notes\",\"custom\":{\"owner\":\"ops\"}}" >expect &&
	is 200 &&
	api "/api/annotation?start_time=$G" &&
	is 200 &&
	api /api/annotation -X POST -d "{\"startTime\":$((G + 1)),\"endTime\":$((G + 3)),\"description\":\"Global 2\",\"notes\":\"Nothing\"}" &&
	api "/api/annotations?start_time=$G&end_time=$((G + 100))" &&
	echo "[{\"tsuid\":\"\",\"startTime\":$G,\"endTime\":$((G + 1)),\"description\":\"Description\",\"notes\":\"Notes\",\"custom\":{\"owner\":\"ops\"}},{\"tsuid\":\"\",\"startTime\":$((G + 1)),\"endTime\":$((G + 3)),\"description\":\"Global 2\",\"notes\":\"Nothing\"}]" >expect &&
	is 200 &&
	api "/api/annotations?start_time=$((T - 60))" &&
	echo "[]" >expect &&
	is 200
'

test_expect_success 'bulk POST and PUT: an array in, the changed notes out (bulkModifyPOST, bulkModifyPut)' '
	api /api/annotation/bulk -X POST -d "[{\"tsuid\":\"$TS\",\"startTime\":$T,\"notes\":\"My Notes\"},{\"tsuid\":\"$TS2\",\"startTime\":$((T + 1)),\"description\":\"Gum\"},{\"tsuid\":\"$TS\",\"startTime\":$T}]" &&
	echo "[{\"tsuid\":\"$TS\",\"startTime\":$T,\"endTime\":0,\"description\":\"Boo\",\"notes\":\"My Notes\"},{\"tsuid\":\"$TS2\",\"startTime\":$((T + 1)),\"endTime\":0,\"description\":\"Gum\",\"notes\":\"\"}]" >expect &&
	is 200 &&
	api /api/annotation/bulk -X PUT -d "[{\"tsuid\":\"$TS2\",\"startTime\":$((T + 1)),\"notes\":\"n\"}]" &&
	echo "[{\"tsuid\":\"$TS2\",\"startTime\":$((T + 1)),\"endTime\":0,\"description\":\"\",\"notes\":\"n\"}]" >expect &&
	is 200
'

test_expect_success 'queries carry their series notes; globalAnnotations on request; noAnnotations none (Grafana annotation queries)' '
	api /api/query -X POST -d "{\"start\":$((T - 60)),\"end\":$((T + 60)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"*\"}}]}" &&
	echo "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"annotations\":[{\"tsuid\":\"$TS\",\"startTime\":$T,\"endTime\":0,\"description\":\"Boo\",\"notes\":\"My Notes\"}],\"dps\":{\"$((T - 2))\":1,\"$((T + 8))\":2}},{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web02\"},\"aggregateTags\":[],\"annotations\":[{\"tsuid\":\"$TS2\",\"startTime\":$((T + 1)),\"endTime\":0,\"description\":\"\",\"notes\":\"n\"}],\"dps\":{\"$((T - 2))\":3}}]" >expect &&
	is 200 &&
	api "/api/query?start=$((T - 60))&end=$((T + 60))&m=sum:sys.cpu.user" &&
	python3 -c "
import json
r = json.load(open(\"body\"))
assert [a[\"startTime\"] for a in r[0][\"annotations\"]] == [$T, $((T + 1))], r
assert r[0][\"aggregateTags\"] == [\"host\"], r
" &&
	api "/api/query?start=$((T - 60))&end=$((T + 60))&m=sum:sys.cpu.user&no_annotations" &&
	! grep -q annotations body &&
	api "/api/query?start=$T&end=$((T + 60))&m=sum:sys.cpu.user%7Bhost=web01%7D" &&
	python3 -c "
import json
r = json.load(open(\"body\"))
assert [a[\"tsuid\"] for a in r[0][\"annotations\"]] == [\"$TS\"], r
" &&
	api /api/query -X POST -d "{\"start\":$((G - 60)),\"end\":$((G + 2)),\"globalAnnotations\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu.user\"}]}" &&
	echo "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"globalAnnotations\":[{\"tsuid\":\"\",\"startTime\":$G,\"endTime\":$((G + 1)),\"description\":\"Description\",\"notes\":\"Notes\",\"custom\":{\"owner\":\"ops\"}}],\"dps\":{\"$G\":4}}]" >expect &&
	is 200 &&
	echo "sys.cpu.user $G 4 host=web01" >expect &&
	cat "$MNT/tsd/q/start=$((G - 60))&end=$((G + 2))&m=sum:sys.cpu.user&global_annotations" >out &&
	test_cmp expect out
'

test_expect_success 'notes survive a remount' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api "/api/annotation?tsuid=$TS2&start_time=$((T + 1))" &&
	echo "{\"tsuid\":\"$TS2\",\"startTime\":$((T + 1)),\"endTime\":0,\"description\":\"\",\"notes\":\"n\"}" >expect &&
	is 200
'

test_expect_success 'bulk delete by TSUIDs and time range, and of global notes (bulkDelete, bulkDeleteGlobal)' '
	api "/api/annotation/bulk?tsuids=$TS,$TS2&start_time=$((T - 12))000&end_time=${T}000&method_override=delete" &&
	echo "{\"startTime\":$((T - 12))000,\"endTime\":${T}000,\"tsuids\":[\"$TS\",\"$TS2\"],\"global\":false,\"totalDeleted\":1}" >expect &&
	is 200 &&
	api "/api/annotation?tsuid=$TS&start_time=$T" &&
	echo 404 >expect.code && test_cmp expect.code code &&
	api /api/annotation/bulk -X DELETE -d "{\"startTime\":\"$((G - 1))000\",\"endTime\":\"${G}000\",\"global\":true}" &&
	echo "{\"startTime\":$((G - 1))000,\"endTime\":${G}000,\"tsuids\":null,\"global\":true,\"totalDeleted\":1}" >expect &&
	is 200 &&
	api "/api/annotations?start_time=$G&end_time=$((G + 100))" &&
	python3 -c "
import json
r = json.load(open(\"body\"))
assert [a[\"description\"] for a in r] == [\"Global 2\"], r
"
'

test_expect_success 'DELETE one note: 204, then 404' '
	api "/api/annotation?tsuid=$TS2&start_time=$((T + 1))" -X DELETE &&
	echo >expect && is 204 &&
	api "/api/annotation?tsuid=$TS2&start_time=$((T + 1))" &&
	echo 404 >expect.code && test_cmp expect.code code
'

test_expect_success 'refusals: start, TSUID, JSON, methods, bulk without content or targets' '
	api /api/annotation -X POST -d "{\"tsuid\":\"$TS\",\"description\":\"x\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"The start timestamp has not been set\"}}" >expect &&
	is 400 &&
	api /api/annotation -X POST -d "{\"tsuid\":\"00000G\",\"startTime\":$T,\"description\":\"x\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"invalid TSUID: 00000G\"}}" >expect &&
	is 400 &&
	api /api/annotation -X POST -d "{\"startTime\":" &&
	grep -q "Unable to parse the given JSON" body &&
	echo 400 >expect.code && test_cmp expect.code code &&
	api /api/annotation -X POST -d "{\"startTime\":$T,\"description\":7}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"annotation field description is not a string\"}}" >expect &&
	is 400 &&
	api /api/annotation -X PATCH -d "{}" &&
	echo 405 >expect.code && test_cmp expect.code code &&
	api "/api/annotation?start_time=$T&method_override=trace" &&
	echo 405 >expect.code && test_cmp expect.code code &&
	api /api/annotation/bulk &&
	echo 405 >expect.code && test_cmp expect.code code &&
	api /api/annotation/bulk -X POST &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing message content\",\"details\":\"Supply valid JSON formatted data in the body of your request\"}}" >expect &&
	is 400 &&
	api /api/annotation/bulk -X POST -d "{\"startTime\":$T}" &&
	grep -q "not an array of annotations" body &&
	echo 400 >expect.code && test_cmp expect.code code &&
	api "/api/annotation/bulk?start_time=${T}000&method_override=delete" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing the TSUIDs or global annotations flag\"}}" >expect &&
	is 400 &&
	api "/api/annotation/bulk?tsuids=$TS&end_time=${T}000&method_override=delete" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing the start time value\"}}" >expect &&
	is 400
'

test_expect_success 'through the mount: tsd/annotation takes JSON lines, tsd/annotations/RANGE lists them, rm deletes them' '
	ls "$MNT/tsd" >out &&
	grep -qx annotation out && grep -qx annotations out &&
	test -d "$MNT/tsd/annotations" && test -f "$MNT/tsd/annotation" &&
	printf "{\"tsuid\":\"%s\",\"startTime\":%s,\"description\":\"deploy\"}\n\n[{\"startTime\":%s,\"description\":\"g1\"},{\"startTime\":%s,\"description\":\"g2\",\"custom\":{\"b\":\"2\",\"a\":\"1\"}}]\n" \
		$TS $((T + 100)) $((T + 200)) $((T + 300)) >>"$MNT/tsd/annotation" &&
	echo "[{\"tsuid\":\"$TS\",\"startTime\":$((T + 100)),\"endTime\":0,\"description\":\"deploy\",\"notes\":\"\"}]" >expect &&
	cat "$MNT/tsd/annotations/start_time=$T&end_time=$((T + 3600))&tsuid=$TS" >out &&
	test_cmp expect out &&
	echo "[{\"tsuid\":\"\",\"startTime\":$((T + 200)),\"endTime\":0,\"description\":\"g1\",\"notes\":\"\"},{\"tsuid\":\"\",\"startTime\":$((T + 300)),\"endTime\":0,\"description\":\"g2\",\"notes\":\"\",\"custom\":{\"a\":\"1\",\"b\":\"2\"}}]" >expect &&
	cat "$MNT/tsd/annotations/start_time=$T&end_time=$((T + 3600))" >out &&
	test_cmp expect out &&
	api "/api/annotation?start_time=$((T + 300))" &&
	grep -q "\"description\":\"g2\"" body &&
	api /api/query -X POST -d "{\"start\":$T,\"end\":$((T + 3600)),\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu.user\",\"tags\":{\"host\":\"web01\"}}]}" &&
	grep -q "\"annotations\":\[{\"tsuid\":\"$TS\",\"startTime\":$((T + 100)),\"endTime\":0,\"description\":\"deploy\"" body &&
	rm "$MNT/tsd/annotations/start_time=$T&end_time=$((T + 250))" &&
	echo "[{\"tsuid\":\"\",\"startTime\":$((T + 300)),\"endTime\":0,\"description\":\"g2\",\"notes\":\"\",\"custom\":{\"a\":\"1\",\"b\":\"2\"}}]" >expect &&
	cat "$MNT/tsd/annotations/start_time=$T&end_time=$((T + 3600))" >out &&
	test_cmp expect out &&
	rm "$MNT/tsd/annotations/start_time=$T&tsuid=$TS" &&
	echo "[]" >expect &&
	cat "$MNT/tsd/annotations/start_time=$T&end_time=$((T + 3600))&tsuid=$TS" >out &&
	test_cmp expect out
'

test_expect_success 'through the mount: a refused line is EINVAL with a .log line, the others of the write kept; bad ranges EINVAL' '
	printf "{\"startTime\":%s,\"description\":\"kept\"}\n{\"description\":\"no start\"}\n" $((T + 400)) >in &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsd/annotation" "$(cat in)" >out && test_cmp expect out &&
	last_log >out &&
	grep -q "write tsd/annotation: line 2.*The start timestamp has not been set" out &&
	errno_of write "$MNT/tsd/annotation" "{\"startTime\":$T,\"description\":\"\\ud800\"}" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "Unable to parse the given JSON: invalid Unicode" out &&
	cat "$MNT/tsd/annotations/start_time=$((T + 400))&end_time=$((T + 400))" >out &&
	grep -q "\"description\":\"kept\"" out &&
	errno_of read "$MNT/tsd/annotations/end_time=$T" >out && test_cmp expect out &&
	last_log >out &&
	grep -q "Missing start time" out &&
	errno_of read "$MNT/tsd/annotations/start_time=$T&color=red" >out && test_cmp expect out &&
	errno_of read "$MNT/tsd/annotation" >out && test_cmp expect out &&
	echo EPERM >expect &&
	errno_of unlink "$MNT/tsd/annotation" >out && test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
