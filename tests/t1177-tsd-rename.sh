#!/bin/sh

test_description='cellfs: renaming a metric, tag key or tag value (OpenTSDB UID renames): mv in MNT/tsd/metrics/, tagk/, tagv/ and /api/uid/rename (TestUniqueIdRpc rename*)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400
Q="start=$T&end=$((T + 60))"

test_expect_success 'mount with the HTTP API; TestUniqueIdRpc'"'"'s names' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	printf "sys.cpu.1 %s 1 datacenter=localhost\nsys.cpu.1 %s 2 datacenter=dc2\nsys.cpu.9 %s 5 host=a\n" \
		$T $((T + 30)) $T >>"$MNT/tsd/put" &&
	cat "$MNT/tsd/tagk/datacenter" >uid.before
'

test_expect_success 'mv of a metric file renames the metric: its points read under the new name, the old name is gone' '
	mv "$MNT/tsd/metrics/sys.cpu.1" "$MNT/tsd/metrics/sys.cpu.2" &&
	ls "$MNT/tsd/metrics" >out &&
	printf "sys.cpu.2\nsys.cpu.9\n" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:sys.cpu.2{datacenter=*}" >out &&
	printf "sys.cpu.2 %s 2 datacenter=dc2\nsys.cpu.2 %s 1 datacenter=localhost\n" $((T + 30)) $T >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/metrics/sys.cpu.2" >out &&
	test -s out &&
	test_must_fail cat "$MNT/tsd/metrics/sys.cpu.1" &&
	last_log >out &&
	grep -q "info tsd: renamed metric sys.cpu.1 to sys.cpu.2 (UID 000001)" "$MNT/.log"
'

test_expect_success 'mv of a tag key and a tag value file; the UID stays' '
	mv "$MNT/tsd/tagk/datacenter" "$MNT/tsd/tagk/datacluster" &&
	mv "$MNT/tsd/tagv/localhost" "$MNT/tsd/tagv/127.0.0.1" &&
	cat "$MNT/tsd/tagk/datacluster" >uid.after &&
	test_cmp uid.before uid.after &&
	cat "$MNT/tsd/q/$Q&m=sum:sys.cpu.2{datacluster=*}" >out &&
	printf "sys.cpu.2 %s 1 datacluster=127.0.0.1\nsys.cpu.2 %s 2 datacluster=dc2\n" $T $((T + 30)) >expect &&
	test_cmp expect out
'

test_expect_success 'mv onto a name that has a UID is EEXIST, never a replace; logged with UniqueId'"'"'s message' '
	echo "sys.cpu.1 $T 3 host=a" >>"$MNT/tsd/put" &&
	test_must_fail mv -T "$MNT/tsd/metrics/sys.cpu.1" "$MNT/tsd/metrics/sys.cpu.2" 2>err &&
	grep -q "File exists" err &&
	last_log >out &&
	echo "warn mv sys.cpu.1 sys.cpu.2: When trying rename(\"sys.cpu.1\", \"sys.cpu.2\") on UniqueId(tsdb-uid, metrics): new name already assigned ID=[0, 0, 1]: File exists" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:sys.cpu.1" >out &&
	echo "sys.cpu.1 $T 3 host=a" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:sys.cpu.2" >out &&
	nlines 2 out
'

test_expect_success 'mv of an invalid new name is EINVAL; across kinds is EINVAL; nothing changes' '
	echo EINVAL >expect &&
	errno_of rename "$MNT/tsd/metrics/sys.cpu.9" "$MNT/tsd/metrics/sys%20cpu" >out &&
	test_cmp expect out &&
	last_log >out &&
	grep -q "Invalid metric (\"sys cpu\"): illegal character:  " out &&
	errno_of rename "$MNT/tsd/metrics/sys.cpu.9" "$MNT/tsd/tagk/sys.cpu.9" >out &&
	test_cmp expect out &&
	ls "$MNT/tsd/metrics" >out &&
	printf "sys.cpu.1\nsys.cpu.2\nsys.cpu.9\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a rename survives kill -9' '
	mv "$MNT/tsd/metrics/sys.cpu.9" "$MNT/tsd/metrics/sys.mem" &&
	cellfs_kill9 &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	ls "$MNT/tsd/metrics" >out &&
	printf "sys.cpu.1\nsys.cpu.2\nsys.mem\n" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$Q&m=sum:sys.mem" >out &&
	echo "sys.mem $T 5 host=a" >expect &&
	test_cmp expect out
'

test_expect_success '/api/uid/rename: POST and GET of each kind answer {"result":"true"} (renamePost*, renameQs*)' '
	echo "{\"result\":\"true\"}" >expect &&
	api /api/uid/rename -X POST -d "{\"metric\":\"sys.cpu.2\",\"name\":\"sys.cpu.3\"}" &&
	is 200 &&
	api /api/uid/rename -X POST -d "{\"tagk\":\"datacluster\",\"name\":\"datacenter\"}" &&
	is 200 &&
	api /api/uid/rename -X POST -d "{\"tagv\":\"127.0.0.1\",\"name\":\"localhost\"}" &&
	is 200 &&
	api "/api/uid/rename?metric=sys.cpu.3&name=sys.cpu.4" &&
	is 200 &&
	api "/api/uid/rename?tagk=datacenter&name=dc" &&
	is 200 &&
	api "/api/uid/rename?tagv=localhost&name=127.0.0.1&drop=db" &&
	is 200 &&
	cat "$MNT/tsd/q/$Q&m=sum:sys.cpu.4{dc=*}" >out &&
	printf "sys.cpu.4 %s 1 dc=127.0.0.1\nsys.cpu.4 %s 2 dc=dc2\n" $T $((T + 30)) >expect &&
	test_cmp expect out
'

test_expect_success '/api/uid/rename: refused renames are 400 {"result":"false","error":..} (renameRenameException)' '
	api "/api/uid/rename?tagv=dc2&name=dc2" &&
	echo "{\"result\":\"false\",\"error\":\"When trying rename(\\\"dc2\\\", \\\"dc2\\\") on UniqueId(tsdb-uid, tagv): new name already assigned ID=[0, 0, 2]\"}" >expect &&
	is 400 &&
	api "/api/uid/rename?metric=no.such&name=x" &&
	echo "{\"result\":\"false\",\"error\":\"Name(\\\"no.such\\\") does not exist\"}" >expect &&
	is 400 &&
	api /api/uid/rename -X POST -d "{\"color\":\"red\",\"name\":\"blue\"}" &&
	echo "{\"result\":\"false\",\"error\":\"Unknown type name\"}" >expect &&
	is 400
'

test_expect_success '/api/uid/rename: missing values, bad bodies and other methods (renamePostNoName, ...NoType, ...NotJSON, ...ZeroLengthContent, ...EmptyJSON, renameQsMissing*, renameQsNoParam*, renameBadMethod)' '
	echo "{\"error\":{\"code\":400,\"message\":\"Missing necessary values to rename UID\"}}" >expect &&
	api /api/uid/rename -X POST -d "{\"tagk\":\"localhost\",\"not_name\":\"127.0.0.1\"}" &&
	is 400 &&
	api /api/uid/rename -X POST -d "{\"name\":\"127.0.0.1\"}" &&
	is 400 &&
	api /api/uid/rename -X POST -d "{}" &&
	is 400 &&
	api "/api/uid/rename?name=127.0.0.1" &&
	is 400 &&
	api "/api/uid/rename?metric=sys.cpu.4" &&
	is 400 &&
	api "/api/uid/rename?metric=&name=sys.cpu.2" &&
	is 400 &&
	api "/api/uid/rename?" &&
	is 400 &&
	api /api/uid/rename -X POST -d "Not JSON" &&
	grep -q "\"message\":\"Unable to parse the given JSON\"" body &&
	grep -q "^400" code &&
	api /api/uid/rename -X POST &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing message content\",\"details\":\"Supply valid JSON formatted data in the body of your request\"}}" >expect &&
	is 400 &&
	api /api/uid/rename -X PUT &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [PUT] is not permitted for this endpoint\"}}" >expect &&
	is 405 &&
	ls "$MNT/tsd/metrics" >out &&
	printf "sys.cpu.1\nsys.cpu.4\nsys.mem\n" >expect &&
	test_cmp expect out
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
