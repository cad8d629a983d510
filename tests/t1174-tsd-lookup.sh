#!/bin/sh

test_description='cellfs: series lookup (OpenTSDB /api/search/lookup) over HTTP and as MNT/tsd/lookup/'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"
. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# api PATH [CURL-ARGS...]: status code in "code", the body (and a
# newline) in "body", the lookup's "time" (milliseconds it took) as T
api() {
	p=$1 &&
	shift &&
	curl -s -g -o body.raw -w "%{http_code}\n" "$@" \
		"http://127.0.0.1:$HP$p" >code &&
	sed "s/\"time\":[0-9]*\.0,/\"time\":T,/" body.raw >body &&
	echo >>body
}

# is CODE: the last status was CODE and the body is "expect"
is() {
	echo "$1" >expect.code &&
	test_cmp expect.code code &&
	test_cmp expect body
}

T=1356998400
H1=$((T + 3600))
H2=$((T + 7200))

test_expect_success 'mount with the HTTP API; names get known UIDs, series in three hours' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api "/api/search/lookup?m=sys.cpu.user" &&
	cat >expect <<-\EOF &&
	{"error":{"code":404,"message":"Unable to resolve one or more UIDs","details":"No such name for '"'"'metrics'"'"': '"'"'sys.cpu.user'"'"'"}}
	EOF
	is 404 &&
	api "/api/search/lookup?m=*" &&
	echo "{\"type\":\"LOOKUP\",\"metric\":\"*\",\"tags\":[],\"limit\":25,\"time\":T,\"results\":[],\"startIndex\":0,\"totalResults\":0}" >expect &&
	is 200 &&
	api "/api/uid/assign?metric=sys.cpu.user,sys.mem,sys.cpu.sys&tagk=host,dc&tagv=web01,web02,web03,lga,sjc" &&
	echo "{\"metric\":{\"sys.cpu.sys\":\"000001\",\"sys.cpu.user\":\"000002\",\"sys.mem\":\"000003\"},\"tagk\":{\"dc\":\"000001\",\"host\":\"000002\"},\"tagv\":{\"lga\":\"000001\",\"sjc\":\"000002\",\"web01\":\"000003\",\"web02\":\"000004\",\"web03\":\"000005\"}}" >expect &&
	is 200 &&
	cat >in <<-EOF &&
	sys.cpu.user $T 1 host=web01 dc=lga
	sys.cpu.user $((T + 60)) 2 host=web01 dc=lga
	sys.cpu.user $T 3 host=web02 dc=lga
	sys.mem $T 4 host=web01 dc=lga
	sys.cpu.sys $T 5 host=web02 dc=sjc
	sys.cpu.user $H1 6 host=web01 dc=lga
	sys.cpu.user $H1 7 host=web01
	sys.cpu.user $H2 8 host=web01 dc=lga
	sys.cpu.user $H2 9 host=web03 dc=sjc
	EOF
	cat in >>"$MNT/tsd/put"
'

# TSUIDs: metric, then (dc, host) pairs by tagk UID
A=000002000001000001000002000003	# sys.cpu.user dc=lga host=web01, 3 hours
B=000002000001000001000002000004	# sys.cpu.user dc=lga host=web02
C=000002000001000002000002000005	# sys.cpu.user dc=sjc host=web03, newest
D=000002000002000003			# sys.cpu.user host=web01
E=000003000001000001000002000003	# sys.mem dc=lga host=web01
F=000001000001000002000002000004	# sys.cpu.sys dc=sjc host=web02

# r TSUID: the JSON of one result
r() {
	case $1 in
	$A) m=sys.cpu.user t="\"dc\":\"lga\",\"host\":\"web01\"" ;;
	$B) m=sys.cpu.user t="\"dc\":\"lga\",\"host\":\"web02\"" ;;
	$C) m=sys.cpu.user t="\"dc\":\"sjc\",\"host\":\"web03\"" ;;
	$D) m=sys.cpu.user t="\"host\":\"web01\"" ;;
	$E) m=sys.mem t="\"dc\":\"lga\",\"host\":\"web01\"" ;;
	$F) m=sys.cpu.sys t="\"dc\":\"sjc\",\"host\":\"web02\"" ;;
	esac
	printf "{\"tsuid\":\"%s\",\"metric\":\"%s\",\"tags\":{%s}}" $1 $m "$t"
}

# answer HEAD LIMIT TSUID...: the expected answer ("expect")
answer() {
	head=$1 lim=$2 &&
	shift 2 &&
	res= n=0 &&
	for x in "$@"; do
		res="$res${res:+,}$(r $x)" && n=$((n + 1)) || return 1
	done &&
	printf "{\"type\":\"LOOKUP\",%s\"limit\":%s,\"time\":T,\"results\":[%s],\"startIndex\":0,\"totalResults\":%s}\n" \
		"$head" $lim "$res" $n >expect
}

# look M LIMIT TSUID...: GET m=M (limit=LIMIT unless "-"): 200 with
# the series TSUID... (in that order)
look() {
	m=$1 lim=$2 &&
	shift 2 &&
	if test "$lim" = -; then
		api "/api/search/lookup?m=$m" && lim=25
	else
		api "/api/search/lookup?m=$m&limit=$lim"
	fi &&
	answer "$(heads "$m")" $lim "$@" &&
	is 200
}

# heads M: the "metric" and "tags" fields of the answer to m=M
heads() {
	python3 -c "
import json, sys
m = sys.argv[1]
c = m.find('{')
metric = m if c < 0 else (None if c == 0 else m[:c])
tags = []
if c >= 0 and len(m) > c + 2:
    for t in m[c + 1:-1].split(','):
        if t.startswith('='):
            tags.append({'key': None, 'value': t[1:]})
        elif t.endswith('='):
            tags.append({'key': t[:-1], 'value': None})
        else:
            k, v = t.split('=')
            tags.append({'key': k, 'value': v})
out = ''
if metric is not None:
    out += '\"metric\":' + json.dumps(metric) + ','
out += '\"tags\":' + json.dumps(tags, separators=(',', ':')) + ','
print(out, end='')
" "$1"
}

test_expect_success 'a metric alone: each series once, sorted by TSUID' '
	look sys.cpu.user - $A $B $C $D &&
	look sys.mem - $E &&
	look sys.cpu.sys 1000 $F
'

test_expect_success 'the exact answer of Grafana'"'"'s tag_names and tag_values requests' '
	api "/api/search/lookup?m=sys.cpu.user&limit=1000" &&
	cat >expect <<-EOF &&
	{"type":"LOOKUP","metric":"sys.cpu.user","tags":[],"limit":1000,"time":T,"results":[{"tsuid":"$A","metric":"sys.cpu.user","tags":{"dc":"lga","host":"web01"}},{"tsuid":"$B","metric":"sys.cpu.user","tags":{"dc":"lga","host":"web02"}},{"tsuid":"$C","metric":"sys.cpu.user","tags":{"dc":"sjc","host":"web03"}},{"tsuid":"$D","metric":"sys.cpu.user","tags":{"host":"web01"}}],"startIndex":0,"totalResults":4}
	EOF
	is 200 &&
	api "/api/search/lookup?m=sys.cpu.user%7Bdc=*,host=web01%7D&limit=1000" &&
	cat >expect <<-EOF &&
	{"type":"LOOKUP","metric":"sys.cpu.user","tags":[{"key":"dc","value":"*"},{"key":"host","value":"web01"}],"limit":1000,"time":T,"results":[{"tsuid":"$A","metric":"sys.cpu.user","tags":{"dc":"lga","host":"web01"}}],"startIndex":0,"totalResults":1}
	EOF
	is 200 &&
	curl -s -D hdr -o /dev/null "http://127.0.0.1:$HP/api/search/lookup?m=sys.mem" &&
	tr -d "\r" <hdr | grep -x "Content-Type: application/json; charset=UTF-8"
'

test_expect_success 'tag conditions: a value, *, several keys (AND), one key twice (OR), values alone (OR)' '
	look "sys.cpu.user{host=web01}" - $A $D &&
	look "sys.cpu.user{host=*}" - $A $B $C $D &&
	look "sys.cpu.user{dc=*}" - $A $B $C &&
	look "sys.cpu.user{dc=}" - $A $B $C &&
	look "sys.cpu.user{dc=lga,host=web01}" - $A &&
	look "sys.cpu.user{host=web01,host=web03}" - $A $C $D &&
	look "sys.cpu.user{host=web01,host=*}" - $A $B $C $D &&
	look "sys.cpu.user{=web02}" - $B &&
	look "sys.cpu.user{*=web02}" - $B &&
	look "sys.cpu.user{dc=lga,=web02}" - $B &&
	look "sys.cpu.user{dc=sjc,host=web01}" - &&
	look "{host=web02}" - $F $B &&
	look "{=lga,=sjc}" - $F $A $B $C $E &&
	look "*{dc=sjc}" - $F $C &&
	look "*" - $F $A $B $C $D $E
'

test_expect_success 'limit: the newest series first, then sorted; 0 and negative mean all' '
	look sys.cpu.user 1 $A &&
	look sys.cpu.user 2 $A $C &&
	look sys.cpu.user 3 $A $C $D &&
	look sys.cpu.user 0 $A $B $C $D &&
	look sys.cpu.user -5 $A $B $C $D &&
	look "{=lga}" 1 $E
'

# bad CODE MESSAGE [DETAILS]: the last answer was OpenTSDB's error
bad() {
	if test -n "$3"; then
		printf "{\"error\":{\"code\":%s,\"message\":\"%s\",\"details\":\"%s\"}}\n" "$1" "$2" "$3"
	else
		printf "{\"error\":{\"code\":%s,\"message\":\"%s\"}}\n" "$1" "$2"
	fi >expect &&
	is $1
}

test_expect_success 'errors: missing m, bad m, unknown names, bad limit, method' '
	api "/api/search/lookup" &&
	bad 400 "Missing parameter <code>m</code>" &&
	api "/api/search/lookup?m=&limit=3" &&
	bad 400 "Missing parameter <code>m</code>" &&
	api "/api/search/lookup?m=sys.cpu.user%7B" &&
	bad 400 "Unable to parse query" "Missing '"'"'}'"'"' at the end of: sys.cpu.user{" &&
	api "/api/search/lookup?m=sys.cpu.user%7Bhost%7D" &&
	bad 400 "Unable to parse query" "When parsing tag '"'"'host'"'"': invalid tag: host" &&
	api "/api/search/lookup?m=sys.cpu.user%7Ba=b=c%7D" &&
	bad 400 "Unable to parse query" "When parsing tag '"'"'a=b=c'"'"': invalid tag: a=b=c" &&
	api "/api/search/lookup?m=sys.cpu.user%7Bhost=web01,%7D" &&
	bad 400 "Unable to parse query" "When parsing tag '"'"''"'"': Missing tag pair" &&
	api "/api/search/lookup?m=%7B%7D" &&
	bad 400 "Unable to parse query" "Missing metric and tags: {}" &&
	api "/api/search/lookup?m=no.such" &&
	bad 404 "Unable to resolve one or more UIDs" "No such name for '"'"'metrics'"'"': '"'"'no.such'"'"'" &&
	api "/api/search/lookup?m=sys.cpu.user%7Brack=*%7D" &&
	bad 404 "Unable to resolve one or more UIDs" "No such name for '"'"'tagk'"'"': '"'"'rack'"'"'" &&
	api "/api/search/lookup?m=sys.cpu.user%7Bhost=web99%7D" &&
	bad 404 "Unable to resolve one or more UIDs" "No such name for '"'"'tagv'"'"': '"'"'web99'"'"'" &&
	api "/api/search/lookup?m=%7B=web99%7D" &&
	bad 404 "Unable to resolve one or more UIDs" "No such name for '"'"'tagv'"'"': '"'"'web99'"'"'" &&
	last_log >out &&
	echo "warn tsd http: lookup: No such name for '"'"'tagv'"'"': '"'"'web99'"'"'" >expect &&
	test_cmp expect out &&
	api "/api/search/lookup?m=sys.cpu.user&limit=ten" &&
	bad 400 "Unable to convert '"'"'limit'"'"' to a valid number" &&
	api "/api/search/lookup?m=sys.cpu.user&limit=2147483648" &&
	bad 400 "Unable to convert '"'"'limit'"'"' to a valid number" &&
	api "/api/search/lookup?m=sys.cpu.user&limit" &&
	bad 400 "Unable to convert '"'"'limit'"'"' to a valid number" &&
	api "/api/search/lookup?m=sys.cpu.user" -X PUT &&
	bad 405 "Method not allowed" "The HTTP method [PUT] is not permitted for this endpoint" &&
	api "/api/search/tsmeta?query=*" &&
	bad 400 "Searching is not enabled" &&
	api "/api/search/LOOKUP/?m=sys.mem" &&
	answer "\"metric\":\"sys.mem\",\"tags\":[]," 25 $E && is 200
'

test_expect_success 'the other searches, as a TSD without a search plugin answers them (TestSearchRpc: searchPluginNotEnabled, searchMissingType, searchBadTypeType, searchMissingQuery, searchInvalidLimit, searchInvalidStartIndex, searchBadMethod)' '
	for t in tsmeta tsmeta_summary tsuids uidmeta annotation TSMeta; do
		api "/api/search/$t?query=*" &&
		bad 400 "Searching is not enabled" || return 1
	done &&
	api /api/search/annotation -X POST -d "{\"query\":\"*\"}" &&
	bad 400 "Searching is not enabled" &&
	api "/api/search?query=*" &&
	bad 400 "Invalid search query type supplied" &&
	api "/api/search/badtype?query=*" &&
	bad 400 "Invalid search query type supplied" &&
	api "/api/search/tsmeta" &&
	bad 400 "Missing parameter <code>query</code>" &&
	api "/api/search/tsmeta?query=*&limit=nan" &&
	bad 400 "Unable to convert '"'"'limit'"'"' to a valid number" &&
	api "/api/search/tsmeta?query=*&start_index=nan" &&
	bad 400 "Unable to convert '"'"'start_index'"'"' to a valid number" &&
	api /api/search -X PUT &&
	bad 405 "Method not allowed" "The HTTP method [PUT] is not permitted for this endpoint" &&
	last_log >out &&
	grep -q "warn tsd http: /api/search/tsmeta: no search plugin" "$MNT/.log"
'

test_expect_success 'POST: the JSON SearchQuery, or the query string with no body' '
	api /api/search/lookup -X POST -d "{\"metric\":\"sys.cpu.user\",\"tags\":[{\"key\":\"host\",\"value\":\"web01\"}],\"limit\":10,\"useMeta\":false}" &&
	answer "\"metric\":\"sys.cpu.user\",\"tags\":[{\"key\":\"host\",\"value\":\"web01\"}]," 10 $A $D &&
	is 200 &&
	api /api/search/lookup -X POST -d "{\"tags\":[{\"key\":\"dc\",\"value\":null}]}" &&
	answer "\"metric\":\"*\",\"tags\":[{\"key\":\"dc\",\"value\":null}]," 25 $F $A $B $C $E &&
	is 200 &&
	api /api/search/lookup -X POST -d "{\"metric\":\"sys.cpu.user\",\"limit\":\"2\"}" &&
	answer "\"metric\":\"sys.cpu.user\"," 2 $A $C &&
	is 200 &&
	api "/api/search/lookup?m=sys.mem&limit=5" -X POST &&
	answer "\"metric\":\"sys.mem\",\"tags\":[]," 5 $E &&
	is 200 &&
	api /api/search/lookup -X POST -d "{\"metric\":null}" &&
	bad 400 "Missing metric and tags. Please supply at least one value." &&
	api /api/search/lookup -X POST -d "{\"metric\":\"nope\"}" &&
	bad 404 "Unable to resolve one or more UIDs" "No such name for '"'"'metrics'"'"': '"'"'nope'"'"'" &&
	api /api/search/lookup -X POST -d "{\"metric\":" &&
	bad 400 "Unable to parse the given JSON" "unexpected token near end of file" &&
	api /api/search/lookup -X POST -d "{\"tags\":{\"host\":\"web01\"}}" &&
	bad 400 "Unable to parse the given JSON" "tags is not a list"
'

# mbad NAME ERRNO REASON: reading MNT/tsd/lookup/NAME fails with ERRNO,
# .log says REASON
mbad() {
	echo "$2" >expect &&
	errno_of read "$MNT/tsd/lookup/$1" >out && test_cmp expect out &&
	last_log >out &&
	echo "warn lookup tsd/lookup/$1: $3" >expect && test_cmp expect out
}

test_expect_success 'MNT/tsd/lookup/: one line per series, tags sorted by name' '
	ls "$MNT/tsd/lookup" >out && test_must_be_empty out &&
	cat >expect <<-\EOF &&
	sys.cpu.user dc=lga host=web01
	sys.cpu.user dc=lga host=web02
	sys.cpu.user dc=sjc host=web03
	sys.cpu.user host=web01
	EOF
	cat "$MNT/tsd/lookup/sys.cpu.user" >out && test_cmp expect out &&
	cat "$MNT/tsd/lookup/sys.cpu.user{host=*}" >out && test_cmp expect out &&
	cat "$MNT/tsd/lookup/m=sys.cpu.user%7Bhost=*%7D" >out && test_cmp expect out &&
	printf "sys.cpu.user dc=lga host=web01\nsys.cpu.user dc=sjc host=web03\n" >expect &&
	cat "$MNT/tsd/lookup/m=sys.cpu.user&limit=2" >out && test_cmp expect out &&
	printf "sys.cpu.sys dc=sjc host=web02\nsys.cpu.user dc=lga host=web02\n" >expect &&
	cat "$MNT/tsd/lookup/{host=web02}" >out && test_cmp expect out &&
	cat "$MNT/tsd/lookup/{=web02}" >out && test_cmp expect out &&
	printf "sys.cpu.sys dc=sjc host=web02\nsys.cpu.user dc=lga host=web01\nsys.cpu.user dc=lga host=web02\nsys.cpu.user dc=sjc host=web03\nsys.cpu.user host=web01\nsys.mem dc=lga host=web01\n" >expect &&
	cat "$MNT/tsd/lookup/*" >out && test_cmp expect out &&
	cat "$MNT/tsd/lookup/sys.cpu.user{dc=sjc,host=web01}" >out &&
	test_must_be_empty out
'

test_expect_success 'MNT/tsd/lookup/: bad syntax EINVAL, unknown names ENOENT, read-only, each with a .log line' '
	mbad "sys.cpu.user{" EINVAL "Missing '"'"'}'"'"' at the end of: sys.cpu.user{: Invalid argument" &&
	mbad "sys.cpu.user{host}" EINVAL "When parsing tag '"'"'host'"'"': invalid tag: host: Invalid argument" &&
	mbad "{}" EINVAL "Missing metric and tags: {}: Invalid argument" &&
	mbad "m=sys.mem&limit=x" EINVAL "Unable to convert '"'"'limit'"'"' to a valid number: Invalid argument" &&
	mbad "limit=3" EINVAL "Missing parameter m: Invalid argument" &&
	mbad no.such ENOENT "No such name for '"'"'metrics'"'"': '"'"'no.such'"'"': No such file or directory" &&
	mbad "sys.mem{rack=*}" ENOENT "No such name for '"'"'tagk'"'"': '"'"'rack'"'"': No such file or directory" &&
	mbad "sys.mem{host=web99}" ENOENT "No such name for '"'"'tagv'"'"': '"'"'web99'"'"': No such file or directory" &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsd/lookup/sys.mem" x >out && test_cmp expect out
'

test_expect_success 'rows under the metric that are not series (a short key, no tags) are skipped' '
	printf "%x\n" $H2 >out && echo 50e24320 >expect && test_cmp expect out &&
	mkdir "$MNT/tsdb/%00%00%02%FF" "$MNT/tsdb/%00%00%02%01" \
		"$MNT/tsdb/%00%00%02P%E2C%20" &&
	echo 1 >"$MNT/tsdb/%00%00%02%FF/t:ab" &&
	echo 1 >"$MNT/tsdb/%00%00%02P%E2C%20/t:ab" &&
	echo 1 >"$MNT/tsdb/%00%00%02%01/t:ab" &&
	look sys.cpu.user - $A $B $C $D &&
	look sys.cpu.user 2 $A $C &&
	rm -r "$MNT/tsdb/%00%00%02%FF" &&
	look sys.cpu.user - $A $B $C $D &&
	look sys.cpu.user 2 $A $C &&
	rm -r "$MNT/tsdb/%00%00%02%01" "$MNT/tsdb/%00%00%02P%E2C%20"
'

test_expect_success 'a lookup after a remount finds the same series' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	look sys.cpu.user - $A $B $C $D &&
	printf "sys.mem dc=lga host=web01\n" >expect &&
	cat "$MNT/tsd/lookup/sys.mem" >out && test_cmp expect out
'

test_done
