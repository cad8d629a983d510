#!/bin/sh

test_description='cellfs: the HTTP API and the telnet port let a local user do what MNT/tsd lets them (its mode and owner), as the mount does; -o tsd_net_trust lets every client do everything, as OpenTSDB does'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# the system's python3 (another user may not run a per-user one)
PY=/usr/bin/python3
test -x $PY || PY=python3
test "$(id -u)" = 0 && id nobody >/dev/null 2>&1 &&
command -v setpriv >/dev/null && test_set_prereq ROOT

# as_nobody CMD ARG...: runs CMD as nobody:nogroup, no other groups
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# api_nobody PATH [CURL-ARGS...]: api, as nobody
api_nobody() {
	p=$1 &&
	shift &&
	rm -f body &&
	as_nobody curl -s -g -o - -w "\n%{http_code}\n" "$@" \
		"http://127.0.0.1:$HP$p" >resp &&
	tail -1 resp >code &&
	sed "\$d" resp >body
}

# points M: the points of metric M, as the mount lists them
points() {
	cat "$MNT/tsd/q/start=1356998400&end=1357000000&m=sum:$1" 2>/dev/null
}

NOBODY=$(id -u nobody 2>/dev/null)
DENIED="{\"error\":{\"code\":403,\"message\":\"Permission denied\",\"details\":\"uid $NOBODY may not write MNT/tsd (mode 0755, owner 0:0)\"}}"

test_expect_success ROOT 'mount with both ports, run by root: MNT/tsd is 0755 root' '
	HP=$($CLIENT port) &&
	TP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP,tsd_telnet=$TP" &&
	$CLIENT wait $HP &&
	$CLIENT wait $TP &&
	api /api/put -X POST -d "{\"metric\":\"p.root\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}}" &&
	grep -q "^204" code &&
	test "$(points p.root)" = "p.root 1356998400 1 host=a"
'

test_expect_success ROOT 'another local user reads, as the mode lets others read' '
	api_nobody "/api/query?start=1356998400&end=1357000000&m=sum:p.root" &&
	grep -q "^200" code &&
	grep -q "\"1356998400\":1" body &&
	api_nobody "/api/suggest?type=metrics&q=p" &&
	grep -q "^200" code &&
	api_nobody /api/query -X POST -d "{\"start\":1356998400,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"p.root\"}]}" &&
	grep -q "^200" code
'

test_expect_success ROOT 'but writes nothing over HTTP: 403 and a .log line, nothing stored' '
	api_nobody /api/put -X POST -d "{\"metric\":\"p.nobody\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}}" &&
	echo "$DENIED" >expect &&
	is 403 &&
	last_log >out &&
	grep -q "warn tsd http: POST /api/put refused: uid $NOBODY may not write MNT/tsd" out &&
	api_nobody "/api/uid/assign?metric=p.assigned" &&
	is 403 &&
	api_nobody "/api/uid/uidmeta?type=metric&uid=000001&notes=x&method_override=post" &&
	is 403 &&
	api_nobody /api/query -X POST -d "{\"start\":1356998400,\"delete\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"p.root\"}]}" &&
	is 403 &&
	api_nobody /api/annotation -X POST -d "{\"startTime\":1356998400,\"description\":\"x\"}" &&
	is 403 &&
	api_nobody /api/tree -X POST -d "{\"name\":\"t\"}" &&
	is 403 &&
	api_nobody /api/tree &&
	grep -q "^200" code &&
	test -z "$(points p.nobody)" &&
	test ! -e "$MNT/tsd/metrics/p.assigned" &&
	test "$(points p.root)" = "p.root 1356998400 1 host=a"
'

test_expect_success ROOT 'nor over the telnet port: put: permission denied' '
	printf "put p.nobody 1356998400 1 host=a\nversion\nexit\n" >in &&
	as_nobody $PY "$SHARNESS_TEST_DIRECTORY/tsd_client.py" telnet $TP <in >out &&
	head -1 out >first &&
	echo "put: permission denied" >expect &&
	test_cmp expect first &&
	grep -q "put refused: uid $NOBODY may not write MNT/tsd" "$MNT/.log" &&
	test -z "$(points p.nobody)" &&
	printf "put p.root 1356998460 2 host=a\nexit\n" | $CLIENT telnet $TP >out &&
	test_must_be_empty out &&
	points p.root >out &&
	test "$(wc -l <out)" -eq 2
'

test_expect_success ROOT 'chown of MNT/tsd lets the new owner write through both ports' '
	chown nobody "$MNT/tsd" &&
	api_nobody /api/put -X POST -d "{\"metric\":\"p.nobody\",\"timestamp\":1356998400,\"value\":3,\"tags\":{\"host\":\"a\"}}" &&
	grep -q "^204" code &&
	printf "put p.nobody 1356998460 4 host=a\nexit\n" >in &&
	as_nobody $PY "$SHARNESS_TEST_DIRECTORY/tsd_client.py" telnet $TP <in >out &&
	test_must_be_empty out &&
	points p.nobody >out &&
	test "$(wc -l <out)" -eq 2
'

test_expect_success ROOT 'a mode without the others'"'"' r keeps other users from reading' '
	chown 0 "$MNT/tsd" &&
	chmod 0750 "$MNT/tsd" &&
	api_nobody "/api/query?start=1356998400&end=1357000000&m=sum:p.root" &&
	echo "{\"error\":{\"code\":403,\"message\":\"Permission denied\",\"details\":\"uid $NOBODY may not read MNT/tsd (mode 0750, owner 0:0)\"}}" >expect &&
	is 403 &&
	api "/api/query?start=1356998400&end=1357000000&m=sum:p.root" &&
	grep -q "^200" code &&
	chmod 0755 "$MNT/tsd"
'

test_expect_success ROOT '-o tsd_net_trust: every client may do everything, as OpenTSDB'"'"'s ports' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_telnet=$TP,tsd_net_trust" &&
	$CLIENT wait $HP &&
	api_nobody /api/put -X POST -d "{\"metric\":\"p.trusted\",\"timestamp\":1356998400,\"value\":5,\"tags\":{\"host\":\"a\"}}" &&
	grep -q "^204" code &&
	test "$(points p.trusted)" = "p.trusted 1356998400 5 host=a"
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
