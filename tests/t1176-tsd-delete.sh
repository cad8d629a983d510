#!/bin/sh

test_description='cellfs: deleting what a query reads (OpenTSDB delete queries): rm MNT/tsd/q/QUERY, DELETE /api/query with tsd_allow_delete, refused without it (TestQueryRpc.deleteDatapointsBadRequest)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# 2013-01-01 00:00 UTC: three finished hours of data
T=1356998400
E=$((T + 3 * 3600))
NOTE='{"error":{"code":400,"message":"Bad request","details":"Deleting data is not enabled (tsd.http.query.allow_delete=false)"}}'

# q QUERY: the text answer of MNT/tsd/q/QUERY into "out"
q() {
	cat "$MNT/tsd/q/$1" >out
}

test_expect_success 'mount with the HTTP API (no tsd_allow_delete); three hours of two series and another metric' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	for h in 0 1 2; do
		b=$((T + 3600 * h)) &&
		printf "del.m %s 1 host=a\ndel.m %s 2 host=a\ndel.m %s 10 host=b\ndel.o %s 5 host=a\n" \
			$b $((b + 1800)) $b $b >>"$MNT/tsd/put" || return 1
	done &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	nlines 9 out
'

test_expect_success 'HTTP: a delete query is 400 without tsd_allow_delete; the data stays (deleteDatapointsBadRequest)' '
	echo "$NOTE" >expect &&
	api "/api/query?start=$T&m=sum:del.m" -X DELETE &&
	is 400 &&
	api "/api/query?start=$T&m=sum:del.m&method_override=delete" &&
	is 400 &&
	api /api/query -X POST -d "{\"start\":$T,\"delete\":true,\"queries\":[{\"metric\":\"del.m\",\"aggregator\":\"sum\"}]}" &&
	is 400 &&
	last_log >out &&
	grep -q "a delete refused (tsd_allow_delete is off)" out &&
	api "/api/query?start=$T&m=sum:del.m" -X PUT &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [PUT] is not permitted for this endpoint\"}}" >expect &&
	is 405 &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	nlines 9 out
'

test_expect_success 'rm MNT/tsd/q/QUERY deletes the rows it reads, whole hours: hour 1 of host=a' '
	rm "$MNT/tsd/q/start=$((T + 3600 + 1700))&end=$((T + 3600 + 1750))&m=sum:del.m{host=a}" &&
	last_log >out &&
	echo "info tsd: query delete: 1 rows of start=$((T + 3600 + 1700))&end=$((T + 3600 + 1750))&m=sum:del.m{host=a}" >expect &&
	test_cmp expect out &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	cat >expect <<-EOF &&
	del.m 1356998400 1 host=a
	del.m 1357000200 2 host=a
	del.m 1357005600 1 host=a
	del.m 1357007400 2 host=a
	del.m 1356998400 10 host=b
	del.m 1357002000 10 host=b
	del.m 1357005600 10 host=b
	EOF
	test_cmp expect out &&
	q "start=$T&end=$E&m=sum:del.o" &&
	nlines 3 out
'

test_expect_success 'rm of a bad query is EINVAL, of an unknown metric ENOENT, of a graph EPERM; each logged, nothing deleted' '
	echo EINVAL >expect &&
	errno_of unlink "$MNT/tsd/q/start=yesterday&m=sum:del.m" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "yesterday" out &&
	echo ENOENT >expect &&
	errno_of unlink "$MNT/tsd/q/start=$T&m=sum:del.none" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "no such metric: del.none" out &&
	echo EPERM >expect &&
	errno_of unlink "$MNT/tsd/q/start=$T&m=sum:del.m.png" >out &&
	test_cmp expect out &&
	errno_of unlink "$MNT/tsd/q/start=$T&m=sum:del.o.png" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "a graph cannot be removed" out &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	nlines 7 out &&
	q "start=$T&end=$E&m=sum:del.o" &&
	nlines 3 out
'

test_expect_success 'an acknowledged delete survives kill -9' '
	rm "$MNT/tsd/q/start=$T&end=$((T + 60))&m=sum:del.o" &&
	cellfs_kill9 &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	q "start=$T&end=$E&m=none:del.o{host=*}" &&
	cat >expect <<-EOF &&
	del.o 1357002000 5 host=a
	del.o 1357005600 5 host=a
	EOF
	test_cmp expect out &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	nlines 7 out
'

test_expect_success 'the recent points (this hour): a delete is seen by the next query, a later put is kept' '
	now=$(date +%s) &&
	printf "del.r %s 1 host=a\ndel.r %s 2 host=b\n" $((now - 5)) $((now - 5)) >>"$MNT/tsd/put" &&
	q "start=1h-ago&m=none:del.r{host=*}" &&
	nlines 2 out &&
	rm "$MNT/tsd/q/start=1h-ago&m=sum:del.r{host=a}" &&
	q "start=1h-ago&m=none:del.r{host=*}" &&
	echo "del.r $((now - 5)) 2 host=b" >expect &&
	test_cmp expect out &&
	printf "del.r %s 3 host=a\n" $((now - 4)) >>"$MNT/tsd/put" &&
	q "start=1h-ago&m=none:del.r{host=*}" &&
	printf "del.r %s 3 host=a\ndel.r %s 2 host=b\n" $((now - 4)) $((now - 5)) >expect &&
	test_cmp expect out
'

test_expect_success 'with tsd_allow_delete: DELETE answers what the query read, then it is gone' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_allow_delete" &&
	$CLIENT wait $HP &&
	api "/api/query?start=$T&end=$E&m=sum:del.m%7Bhost=b%7D" &&
	cp body expect &&
	grep -q "\"dps\":{\"1356998400\":10,\"1357002000\":10,\"1357005600\":10}" expect &&
	is 200 &&
	api "/api/query?start=$T&end=$E&m=sum:del.m%7Bhost=b%7D" -X DELETE &&
	is 200 &&
	last_log >out &&
	grep -q "query delete: 3 rows" out &&
	api "/api/query?start=$T&end=$E&m=sum:del.m%7Bhost=b%7D" &&
	echo "[]" >expect &&
	is 200 &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	nlines 4 out
'

test_expect_success 'with tsd_allow_delete: a POST with "delete":true, a GET with method_override=delete by TSUID' '
	api /api/query -X POST -d "{\"start\":$T,\"end\":$E,\"delete\":true,\"queries\":[{\"metric\":\"del.o\",\"aggregator\":\"sum\"}]}" &&
	grep -q "\"dps\":{\"1357002000\":5,\"1357005600\":5}" body &&
	grep -q "^200" code &&
	q "start=$T&end=$E&m=sum:del.o" &&
	test_must_be_empty out &&
	api "/api/search/lookup?m=del.m%7Bhost=a%7D" &&
	TS=$(python3 -c "import json; print(json.load(open(\"body\"))[\"results\"][0][\"tsuid\"])") &&
	api "/api/query?start=$((T + 2 * 3600))&end=$E&tsuid=sum:$TS&method_override=delete" &&
	grep -q "\"dps\":{\"1357005600\":1,\"1357007400\":2}" body &&
	q "start=$T&end=$E&m=none:del.m{host=*}" &&
	cat >expect <<-EOF &&
	del.m 1356998400 1 host=a
	del.m 1357000200 2 host=a
	EOF
	test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
