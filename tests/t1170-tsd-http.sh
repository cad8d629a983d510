#!/bin/sh

test_description='cellfs: OpenTSDB HTTP API (-o tsd_http=): /api/put, /api/query, /api/suggest and the small endpoints, errors, gzip, body cap, shutdown'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400

test_expect_success 'mount with the HTTP API on a free port' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP
'

test_expect_success 'put one point: 204, no body, readable in MNT/tsd/' '
	api /api/put -X POST -d "{\"metric\":\"sys.cpu\",\"timestamp\":$T,\"value\":42,\"tags\":{\"host\":\"web01\"}}" &&
	echo >expect && is 204 &&
	echo "sys.cpu $T 42 host=web01" >expect &&
	test_cmp expect "$MNT/tsd/metrics/sys.cpu"
'

test_expect_success 'put an array: 204; floats, strings and ms timestamps' '
	api /api/put -X POST -d "[{\"metric\":\"sys.cpu\",\"timestamp\":$((T + 60)),\"value\":1.5,\"tags\":{\"host\":\"web01\"}},{\"metric\":\"sys.cpu\",\"timestamp\":\"$((T + 30))\",\"value\":\"7\",\"tags\":{\"host\":\"web02\"}},{\"metric\":\"sys.ms\",\"timestamp\":${T}250,\"value\":3,\"tags\":{\"host\":\"web01\"}}]" &&
	echo >expect && is 204 &&
	cat >expect <<-EOF &&
	sys.cpu $T 42 host=web01
	sys.cpu $((T + 60)) 1.5 host=web01
	sys.cpu $((T + 30)) 7 host=web02
	EOF
	test_cmp expect "$MNT/tsd/metrics/sys.cpu" &&
	echo "sys.ms ${T}250 3 host=web01" >expect &&
	test_cmp expect "$MNT/tsd/metrics/sys.ms"
'

test_expect_success 'a point refused among good ones: 400 with OpenTSDB error body, the good ones stored' '
	api /api/put -X POST -d "[{\"metric\":\"p.m\",\"timestamp\":$T,\"value\":1,\"tags\":{\"a\":\"b\"}},{\"metric\":\"p.m\",\"timestamp\":0,\"value\":2,\"tags\":{\"a\":\"b\"}},{\"metric\":\"p.m\",\"timestamp\":$((T + 1)),\"value\":3,\"tags\":{\"a\":\"b\"}}]" &&
	cat >expect <<-\EOF &&
	{"error":{"code":400,"message":"One or more data points had errors","details":"Please see the TSD logs or append \"details\" to the put request"}}
	EOF
	is 400 &&
	printf "p.m %s 1 a=b\np.m %s 3 a=b\n" $T $((T + 1)) >expect &&
	test_cmp expect "$MNT/tsd/metrics/p.m" &&
	echo "warn tsd http: put: point 2 refused: Invalid timestamp" >expect &&
	last_log >out && test_cmp expect out
'

# fuzz-http found the conversion of a real past long long's range
# (undefined behaviour) before the range check
# Jackson reads the long timestamp with getValueAsLong, which fails the
# whole body for a number out of a long's range (reportOverflowLong)
test_expect_success 'a real timestamp beyond any time (1.691e300): the body refused, nothing stored' '
	api /api/put -X POST -d "{\"metric\":\"r.m\",\"timestamp\":1.691e300,\"value\":1,\"tags\":{\"a\":\"b\"}}" &&
	cat >expect <<-\EOF &&
	{"error":{"code":400,"message":"Unable to parse the given JSON","details":"Numeric value (1.691e+300) out of range of long"}}
	EOF
	is 400 &&
	{ cat "$MNT/tsd/metrics/r.m" >points 2>/dev/null || :; } &&
	test_must_be_empty points
'

test_expect_success '?details: every refusal with its datapoint and OpenTSDB message' '
	cat >in <<-EOF &&
	[{"metric":"d.m","timestamp":$T,"value":1,"tags":{"a":"b"}},
	 {"timestamp":1,"value":1,"tags":{"a":"b"}},
	 {"metric":"d.m","timestamp":-1,"value":1,"tags":{"a":"b"}},
	 {"metric":"d.m","timestamp":1,"value":"","tags":{"a":"b"}},
	 {"metric":"d.m","timestamp":1,"value":"notanumber","tags":{"a":"b"}},
	 {"metric":"d.m","timestamp":1,"value":1},
	 {"metric":"d m","timestamp":1,"value":1,"tags":{"a":"b"}},
	 {"metric":"d.m","timestamp":1,"value":1,"tags":{"a":"b=c"}},
	 {"metric":"d.m","timestamp":1,"value":1,"tags":{"a":"b!"}}]
	EOF
	api "/api/put?details" -X POST --data-binary @in &&
	cat >expect <<-\EOF &&
	{"success":1,"failed":8,"errors":[{"datapoint":{"timestamp":1,"value":"1","tags":{"a":"b"}},"error":"Metric name was empty"},{"datapoint":{"metric":"d.m","timestamp":-1,"value":"1","tags":{"a":"b"}},"error":"Invalid timestamp"},{"datapoint":{"metric":"d.m","timestamp":1,"value":"","tags":{"a":"b"}},"error":"Empty value"},{"datapoint":{"metric":"d.m","timestamp":1,"value":"notanumber","tags":{"a":"b"}},"error":"Unable to parse value to a number"},{"datapoint":{"metric":"d.m","timestamp":1,"value":"1"},"error":"Missing tags"},{"datapoint":{"metric":"d m","timestamp":1,"value":"1","tags":{"a":"b"}},"error":"Invalid metric name (\"d m\"): illegal character:  "},{"datapoint":{"metric":"d.m","timestamp":1,"value":"1","tags":{"a":"b=c"}},"error":"Invalid tag value (\"b=c\"): illegal character: ="},{"datapoint":{"metric":"d.m","timestamp":1,"value":"1","tags":{"a":"b!"}},"error":"invalid tag value: b!"}]}
	EOF
	is 400 &&
	echo "d.m $T 1 a=b" >expect &&
	test_cmp expect "$MNT/tsd/metrics/d.m"
'

test_expect_success '?summary and ?sync: counts, 200 when all stored' '
	api "/api/put?summary" -X POST -d "{\"metric\":\"s.m\",\"timestamp\":$T,\"value\":1,\"tags\":{\"a\":\"b\"}}" &&
	echo "{\"success\":1,\"failed\":0}" >expect && is 200 &&
	api "/api/put?details&sync&sync_timeout=500" -X POST -d "{\"metric\":\"s.m\",\"timestamp\":$T,\"value\":1,\"tags\":{\"a\":\"b\"}}" &&
	echo "{\"success\":1,\"timeouts\":0,\"failed\":0,\"errors\":[]}" >expect &&
	is 200
'

test_expect_success 'bad put requests: method, empty, not JSON, broken JSON, empty array' '
	api /api/put &&
	cat >expect <<-\EOF &&
	{"error":{"code":405,"message":"Method not allowed","details":"The HTTP method [GET] is not permitted for this endpoint"}}
	EOF
	is 405 &&
	api /api/put -X POST -d "" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing request content\"}}" >expect &&
	is 400 &&
	api /api/put -X POST -d "Hello World" &&
	echo "{\"error\":{\"code\":400,\"message\":\"The JSON must start as an object or an array\"}}" >expect &&
	is 400 &&
	api /api/put -X POST -d "{\"metric\":\"x\",\"timestamp:1,\"value\":1}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"'"'"':'"'"' expected near '"'"'value'"'"'\"}}" >expect &&
	is 400 &&
	api /api/put -X POST -d "[]" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No datapoints found in content\"}}" >expect &&
	is 400 &&
	! test -e "$MNT/tsd/metrics/x"
'

test_expect_success 'GET /api/query: OpenTSDB JSON, the same engine as MNT/tsd/q/' '
	api "/api/query?start=$T&m=sum:sys.cpu" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{},"aggregateTags":["host"],"dps":{"$T":42.0,"$((T + 30))":28.75,"$((T + 60))":1.5}}]
	EOF
	is 200 &&
	grep -i "^Content-Type: application/json; charset=UTF-8" hdr &&
	cat "$MNT/tsd/q/start=$T&m=sum:sys.cpu" >out &&
	cat >expect <<-EOF &&
	sys.cpu $T 42.0
	sys.cpu $((T + 30)) 28.75
	sys.cpu $((T + 60)) 1.5
	EOF
	test_cmp expect out &&
	api "/api/query?start=$T&m=sum:sys.cpu{host=*}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"dps":{"$T":42.0,"$((T + 60))":1.5}},{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"dps":{"$((T + 30))":7}}]
	EOF
	is 200 &&
	api "/api/query?start=$T&m=sum:sys.ms&ms" &&
	echo "[{\"metric\":\"sys.ms\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"${T}250\":3}}]" >expect &&
	is 200 &&
	api "/api/query?start=$T&m=sum:sys.ms" &&
	echo "[{\"metric\":\"sys.ms\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$T\":3}}]" >expect &&
	is 200
'

test_expect_success 'POST /api/query: tags, filters, downsampling, rate' '
	api /api/query -X POST -d "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu\",\"tags\":{\"host\":\"web01\"}}]}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"dps":{"$T":42.0,"$((T + 60))":1.5}}]
	EOF
	is 200 &&
	api /api/query -X POST -d "{\"start\":\"2013/01/01-00:00\",\"end\":$((T + 3600)),\"queries\":[{\"aggregator\":\"max\",\"metric\":\"sys.cpu\",\"downsample\":\"1h-count\",\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"web*\",\"groupBy\":true}]}]}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"dps":{"$T":2.0}},{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"dps":{"$T":1.0}}]
	EOF
	is 200 &&
	api /api/query -X POST -d "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu\",\"rate\":true,\"filters\":[{\"type\":\"literal_or\",\"tagk\":\"host\",\"filter\":\"web01\",\"groupBy\":false}]}]}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"dps":{"$((T + 60))":-0.675}}]
	EOF
	is 200
'

test_expect_success 'showQuery (Grafana 2.3 data sources): each result carries its sub query and index' '
	api /api/query -X POST -d "{\"start\":$T,\"showQuery\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu\",\"tags\":{\"host\":\"web01\"}},{\"aggregator\":\"max\",\"metric\":\"sys.cpu\",\"downsample\":\"1h-count\",\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"web*\",\"groupBy\":true},{\"type\":\"regexp\",\"tagk\":\"host\",\"filter\":\"w.b\",\"groupBy\":false}]}]}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"query":{"aggregator":"sum","metric":"sys.cpu","tsuids":null,"downsample":null,"rate":false,"filters":[{"tagk":"host","filter":"web01","group_by":true,"type":"literal_or"}],"explicitTags":false,"index":0,"rateOptions":null,"tags":{"host":"literal_or(web01)"}},"dps":{"$T":42.0,"$((T + 60))":1.5}},{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"query":{"aggregator":"max","metric":"sys.cpu","tsuids":null,"downsample":"1h-count","rate":false,"filters":[{"tagk":"host","filter":"w.b","group_by":false,"type":"regexp"},{"tagk":"host","filter":"web*","group_by":true,"type":"wildcard"}],"explicitTags":false,"index":1,"rateOptions":null,"tags":{"host":"wildcard(web*)"}},"dps":{"$T":2.0}},{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"query":{"aggregator":"max","metric":"sys.cpu","tsuids":null,"downsample":"1h-count","rate":false,"filters":[{"tagk":"host","filter":"w.b","group_by":false,"type":"regexp"},{"tagk":"host","filter":"web*","group_by":true,"type":"wildcard"}],"explicitTags":false,"index":1,"rateOptions":null,"tags":{"host":"wildcard(web*)"}},"dps":{"$T":1.0}}]
	EOF
	is 200 &&
	python3 -c "
import json, sys
# what Grafana does with it: the result of target i is query.index i
r = json.load(open(\"body\"))
assert [x[\"query\"][\"index\"] for x in r] == [0, 1, 1], r
" &&
	api "/api/query?start=$T&show_query&m=sum:rate%7Bdropcounter,100,5%7D:explicit_tags:sys.cpu%7Bhost=web01%7D" &&
	grep -F "\"query\":{\"aggregator\":\"sum\",\"metric\":\"sys.cpu\",\"tsuids\":null,\"downsample\":null,\"rate\":true,\"filters\":[{\"tagk\":\"host\",\"filter\":\"web01\",\"group_by\":true,\"type\":\"literal_or\"}],\"explicitTags\":true,\"index\":0,\"rateOptions\":{\"counter\":true,\"counterMax\":100,\"resetValue\":5,\"dropResets\":true},\"tags\":{\"host\":\"literal_or(web01)\"}}," body &&
	api "/api/query?start=$T&m=sum:sys.cpu" &&
	! grep -F "\"query\"" body
'

test_expect_success 'arrays (Grafana 2.4 data sources): dps as [[TS,VALUE],...], GET and POST' '
	api "/api/query?start=$T&m=sum:sys.cpu%7Bhost=*%7D&arrays" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"dps":[[$T,42.0],[$((T + 60)),1.5]]},{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"dps":[[$((T + 30)),7]]}]
	EOF
	is 200 &&
	api "/api/query?arrays=true" -X POST -d "{\"start\":${T}000,\"end\":$((T + 3600))000,\"queries\":[{\"metric\":\"sys.cpu\",\"aggregator\":\"sum\",\"downsample\":\"1m-avg\",\"tags\":{\"host\":\"web01\"}}]}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"dps":[[$T,42.0],[$((T + 60)),1.5]]}]
	EOF
	is 200 &&
	api "/api/query?start=$T&end=$((T + 180))&m=sum:1m-avg-null:sys.cpu%7Bhost=web02%7D&arrays&ms" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"dps":[[${T}000,7.0],[$((T + 60))000,null],[$((T + 120))000,null],[$((T + 180))000,null]]}]
	EOF
	is 200
'

test_expect_success 'tsuid queries and showTSUIDs: GET numbers tsuid= first, POST keeps its order' '
	api "/api/search/lookup?m=sys.cpu" &&
	t1=$(python3 -c "import json; print([x[\"tsuid\"] for x in json.load(open(\"body\"))[\"results\"] if x[\"tags\"][\"host\"] == \"web01\"][0])") &&
	t2=$(python3 -c "import json; print([x[\"tsuid\"] for x in json.load(open(\"body\"))[\"results\"] if x[\"tags\"][\"host\"] == \"web02\"][0])") &&
	api "/api/query?start=$T&m=max:sys.cpu%7Bhost=web02%7D&tsuid=sum:$t1&show_tsuids" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web01"},"aggregateTags":[],"tsuids":["$t1"],"dps":{"$T":42.0,"$((T + 60))":1.5}},{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"tsuids":["$t2"],"dps":{"$((T + 30))":7}}]
	EOF
	is 200 &&
	api /api/query -X POST -d "{\"start\":$T,\"showTSUIDs\":true,\"showQuery\":true,\"queries\":[{\"aggregator\":\"max\",\"metric\":\"sys.cpu\",\"tags\":{\"host\":\"web02\"}},{\"aggregator\":\"sum\",\"tsuids\":[\"$t2\",\"$t1\"]}]}" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","tags":{"host":"web02"},"aggregateTags":[],"query":{"aggregator":"max","metric":"sys.cpu","tsuids":null,"downsample":null,"rate":false,"filters":[{"tagk":"host","filter":"web02","group_by":true,"type":"literal_or"}],"explicitTags":false,"index":0,"rateOptions":null,"tags":{"host":"literal_or(web02)"}},"tsuids":["$t2"],"dps":{"$((T + 30))":7}},{"metric":"sys.cpu","tags":{},"aggregateTags":["host"],"query":{"aggregator":"sum","metric":null,"tsuids":["$t2","$t1"],"downsample":null,"rate":false,"filters":[],"explicitTags":false,"index":1,"rateOptions":null,"tags":{}},"tsuids":["$t1","$t2"],"dps":{"$T":42.0,"$((T + 30))":28.75,"$((T + 60))":1.5}}]
	EOF
	is 200 &&
	api "/api/query?start=$T&tsuid=sum:$t1,FFFFFF${t1#??????}" &&
	grep -F "One or more TSUIDs did not share the same metric" body &&
	echo 400 >expect.code && test_cmp expect.code code &&
	api "/api/query?start=$T&tsuid=sum:zz" &&
	grep -F "invalid TSUID: zz" body &&
	test_cmp expect.code code &&
	api /api/query -X POST -d "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"tsuids\":[1]}]}" &&
	grep -F "a TSUID is not a string" body &&
	test_cmp expect.code code
'

test_expect_success 'fill policies: NaN prints "NaN", null prints null (MNT/tsd/q/ leaves it out)' '
	printf "fill.m %s 1 h=a\nfill.m %s 3 h=a\n" $T $((T + 120)) >>"$MNT/tsd/put" &&
	api "/api/query?start=$T&end=$((T + 180))&m=sum:1m-avg-nan:fill.m" &&
	echo "[{\"metric\":\"fill.m\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"$T\":1.0,\"$((T + 60))\":\"NaN\",\"$((T + 120))\":3.0,\"$((T + 180))\":\"NaN\"}}]" >expect &&
	is 200 &&
	api "/api/query?start=$T&end=$((T + 180))&m=sum:1m-avg-null:fill.m" &&
	echo "[{\"metric\":\"fill.m\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"$T\":1.0,\"$((T + 60))\":null,\"$((T + 120))\":3.0,\"$((T + 180))\":null}}]" >expect &&
	is 200 &&
	printf "fill.m %s 1.0 h=a\nfill.m %s 3.0 h=a\n" $T $((T + 120)) >expect &&
	test_cmp expect "$MNT/tsd/q/start=$T&end=$((T + 180))&m=sum:1m-avg-null:fill.m"
'

test_expect_success 'query errors: unknown names, bad queries, bad JSON' '
	api "/api/query?start=$T&m=sum:no.such" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No such name for '"'"'metrics'"'"': '"'"'no.such'"'"'\",\"details\":\"No such name for '"'"'metrics'"'"': '"'"'no.such'"'"'\"}}" >expect &&
	is 400 &&
	echo "warn tsd http: query: No such name for '"'"'metrics'"'"': '"'"'no.such'"'"'" >expect &&
	last_log >out && test_cmp expect out &&
	api "/api/query?start=$T&m=sum:sys.cpu{nokey=*}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No such name for '"'"'tagk'"'"': '"'"'nokey'"'"'\",\"details\":\"No such name for '"'"'tagk'"'"': '"'"'nokey'"'"'\"}}" >expect &&
	is 400 &&
	api "/api/query?start=yesterday&m=sum:sys.cpu" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid time: yesterday. Invalid character '"'"'y'"'"' in yesterday\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu\"}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing start time\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{\"start\":1}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing queries\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{\"start\":1,\"queries\":[{\"metric\":\"sys.cpu\"}]}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing the aggregation function\"}}" >expect &&
	is 400 &&
	api /api/query -X POST -d "{\"start\":" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\",\"details\":\"unexpected token near end of file\"}}" >expect &&
	is 400 &&
	api /api/query -X PUT &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [PUT] is not permitted for this endpoint\"}}" >expect &&
	is 405
'

test_expect_success 'every aggregator /api/aggregators lists runs in a query' '
	api /api/aggregators &&
	echo "[\"sum\",\"pfsum\",\"min\",\"max\",\"avg\",\"median\",\"none\",\"mult\",\"dev\",\"diff\",\"zimsum\",\"mimmin\",\"mimmax\",\"squareSum\",\"count\",\"first\",\"last\",\"p999\",\"p99\",\"p95\",\"p90\",\"p75\",\"p50\",\"ep999r3\",\"ep99r3\",\"ep95r3\",\"ep90r3\",\"ep75r3\",\"ep50r3\",\"ep999r7\",\"ep99r7\",\"ep95r7\",\"ep90r7\",\"ep75r7\",\"ep50r7\"]" >expect &&
	is 200 &&
	tr -d "[]\"" <body | tr "," "\n" >aggs &&
	test $(wc -l <aggs) = 35 &&
	while read a; do
		api "/api/query?start=$T&m=$a:sys.cpu" &&
		echo 200 >expect.code && test_cmp expect.code code || return 1
	done <aggs
'

test_expect_success '/api/query/last: the newest point of each series' '
	api "/api/query/last?timeseries=sys.cpu{host=*}&back_scan=500000&resolve" &&
	cat >expect <<-EOF &&
	[{"metric":"sys.cpu","timestamp":$((T + 60))000,"value":"1.5","tags":{"host":"web01"},"tsuid":"000001000001000001"},{"metric":"sys.cpu","timestamp":$((T + 30))000,"value":"7","tags":{"host":"web02"},"tsuid":"000001000001000002"}]
	EOF
	is 200 &&
	api "/api/query/last?timeseries=sys.cpu{host=*}&back_scan=500000" &&
	cat >expect <<-EOF &&
	[{"timestamp":$((T + 60))000,"value":"1.5","tsuid":"000001000001000001"},{"timestamp":$((T + 30))000,"value":"7","tsuid":"000001000001000002"}]
	EOF
	is 200 &&
	api "/api/query/last" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing sub queries\"}}" >expect &&
	is 400
'

test_expect_success '/api/suggest: metrics, tag keys and values, q, max, errors' '
	api "/api/suggest?type=metrics" &&
	echo "[\"d.m\",\"fill.m\",\"p.m\",\"s.m\",\"sys.cpu\",\"sys.ms\"]" >expect && is 200 &&
	api "/api/suggest?type=metrics&q=sys&max=1" &&
	echo "[\"sys.cpu\"]" >expect && is 200 &&
	api "/api/suggest?type=tagk" &&
	echo "[\"a\",\"h\",\"host\"]" >expect && is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"tagv\",\"q\":\"web\"}" &&
	echo "[\"web01\",\"web02\"]" >expect && is 200 &&
	api "/api/suggest" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>type</code>\"}}" >expect &&
	is 400 &&
	api "/api/suggest?type=hosts" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid '"'"'type'"'"' parameter:hosts\"}}" >expect &&
	is 400 &&
	api "/api/suggest?type=tagv&max=ten" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse '"'"'max'"'"' as a number\"}}" >expect &&
	is 400
'

test_expect_success '/api/uid/assign: new names get UIDs, known and bad ones are errors' '
	api "/api/uid/assign?metric=u.b,u.a&tagk=zone" &&
	echo "{\"metric\":{\"u.a\":\"000007\",\"u.b\":\"000008\"},\"tagk\":{\"zone\":\"000004\"}}" >expect &&
	is 200 &&
	api /api/uid/assign -X POST -d "{\"metric\":[\"u.c\",\"u.a\",\"bad name\"],\"tagv\":[\"web01\"]}" &&
	cat >expect <<-\EOF &&
	{"tagv_errors":{"web01":"Name already exists with UID: 000001"},"metric":{"u.c":"000009"},"metric_errors":{"bad name":"Invalid metric (\"bad name\"): illegal character:  ","u.a":"Name already exists with UID: 000007"},"tagv":{}}
	EOF
	is 400 &&
	ls "$MNT/tsd/metrics" >out && grep -x u.c out &&
	api /api/uid/assign &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing values to assign UIDs\"}}" >expect &&
	is 400
'

test_expect_success '/api/version, /api/config/filters, unknown endpoints' '
	api /api/version &&
	echo "{\"short_revision\":\"cellfs\",\"repo\":\"cellfs\",\"host\":\"localhost\",\"version\":\"2.4.0\",\"full_revision\":\"cellfs\",\"repo_status\":\"MODIFIED\",\"user\":\"cellfs\",\"branch\":\"cellfs\",\"timestamp\":\"0\"}" >expect &&
	is 200 &&
	api /api/config/filters &&
	echo 200 >expect.code && test_cmp expect.code code &&
	python3 -c "import json,sys; print(\" \".join(json.load(open(\"body\"))))" >out &&
	echo "literal_or iliteral_or not_literal_or not_iliteral_or wildcard iwildcard regexp not_key" >expect &&
	test_cmp expect out &&
	api /api/nothing &&
	echo "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}}" >expect &&
	is 404
'

test_expect_success 'gzip: answers to Accept-Encoding: gzip, gzip request bodies' '
	api "/api/query?start=$T&m=sum:sys.ms" -H "Accept-Encoding: gzip" &&
	grep -i "^Content-Encoding: gzip" hdr &&
	head -c -1 body | gunzip -c >out && echo >>out &&
	echo "[{\"metric\":\"sys.ms\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$T\":3}}]" >expect &&
	test_cmp expect out &&
	printf "{\"metric\":\"gz.m\",\"timestamp\":%s,\"value\":7,\"tags\":{\"a\":\"b\"}}" $T | gzip >in.gz &&
	api /api/put -X POST -H "Content-Encoding: gzip" --data-binary @in.gz &&
	echo >expect && is 204 &&
	echo "gz.m $T 7 a=b" >expect &&
	test_cmp expect "$MNT/tsd/metrics/gz.m" &&
	echo "not gzip" >bad.gz &&
	api /api/put -X POST -H "Content-Encoding: gzip" --data-binary @bad.gz &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to decompress the request body\"}}" >expect &&
	is 400
'

test_expect_success 'a body over 16 MiB: 413, by Content-Length or while read' '
	printf "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 16777217\r\n\r\n" |
		$CLIENT telnet $HP >out &&
	head -1 out | tr -d "\r" >status &&
	echo "HTTP/1.1 413 Content Too Large" >expect &&
	test_cmp expect status &&
	tail -1 out >body.413 &&
	echo "{\"error\":{\"code\":413,\"message\":\"Request Entity Too Large\",\"details\":\"the request body is over 16 MiB\"}}" >expect &&
	echo >>body.413 && test_cmp expect body.413 &&
	head -c 16777217 /dev/zero | tr "\0" " " >big &&
	api /api/put -X POST -H "Transfer-Encoding: chunked" --data-binary @big &&
	is 413
'

test_expect_success '1000 idle connections: another request is still answered' '
	printf "GET /api/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" |
		$CLIENT crowd $HP 1000 >out &&
	head -1 out | tr -d "\r" >status &&
	echo "HTTP/1.1 200 OK" >expect &&
	test_cmp expect status
'

test_expect_success 'a point written to MNT/tsd/put is answered over HTTP' '
	echo "f.m $T 5 host=x" >>"$MNT/tsd/put" &&
	api "/api/query?start=$T&m=sum:f.m" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"host\":\"x\"},\"aggregateTags\":[],\"dps\":{\"$T\":5}}]" >expect &&
	is 200
'

test_expect_success 'unmount stops the server: open connections closed, the daemon exits' '
	$CLIENT hold $HP 20 >held &
	HOLD=$! &&
	i=0 &&
	while ! grep -q open held; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done &&
	pid=$CELLFS_PID &&
	cellfs_umount &&
	! kill -0 $pid 2>/dev/null &&
	wait $HOLD &&
	printf "open\nclosed\n" >expect &&
	test_cmp expect held &&
	$CLIENT closed $HP
'

test_expect_success 'a bad address is refused before mounting' '
	test_must_fail "$CELLFS" -f -o tsd_http=localhost:http "$DATA" "$MNT" 2>err &&
	echo "cellfs: tsd_http: '"'"'localhost:http'"'"' is not PORT, ADDR:PORT or [ADDR6]:PORT with a numeric address and a port 1-65535" >expect &&
	test_cmp expect err
'

test_done
