#!/bin/sh

test_description='cellfs: the HTTP layer as OpenTSDB'"'"'s tests expect it (HttpQuery, RpcHandler, HttpJsonSerializer, TestPutRpc): versioned paths, jsonp, CORS, the put answers'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

test_expect_success 'mount with the HTTP API, no CORS domains (the default)' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP
'

B='"metric":"sys.cpu.user","timestamp":1365465600'
T='"tags":{"host":"web01"}'

test_expect_success 'TestPutRpc: the answers of /api/put, summary and details' '
	api "/api/put?summary&details" -X POST -d "{$B,\"value\":42,$T}" &&
	echo "{\"success\":1,\"failed\":0,\"errors\":[]}" >expect &&
	is 200 &&
	api "/api/put?summary" -X POST -d "[{$B,\"value\":42,$T},{$B,\"value\":24,$T}]" &&
	echo "{\"success\":2,\"failed\":0}" >expect &&
	is 200 &&
	api /api/put -X POST -d "{$B,\"value\":42.22e3,$T}" &&
	echo >expect &&
	is 204 &&
	api "/api/put?details" -X POST -d "{$B,\"value\":-4.222E-2,$T}" &&
	echo "{\"success\":1,\"failed\":0,\"errors\":[]}" >expect &&
	is 200 &&
	for c in "\"\"|Empty value" "\"notanumber\"|Unable to parse value to a number" \
		 "\"NaN\"|Unable to parse value to a number" "\"-Infinity\"|Unable to parse value to a number"; do
		v=${c%%|*} && m=${c#*|} &&
		api "/api/put?details" -X POST -d "{$B,\"value\":$v,$T}" &&
		echo "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{$B,\"value\":$v,$T},\"error\":\"$m\"}]}" >expect &&
		is 400 || return 1
	done &&
	api "/api/put?details" -X POST -d "{$B,\"value\":42}" &&
	grep -q "\"error\":\"Missing tags\"" body && grep -q "^400" code &&
	api "/api/put?details" -X POST -d "{\"metric\":null,\"timestamp\":1365465600,\"value\":42,$T}" &&
	grep -q "\"error\":\"Metric name was empty\"" body &&
	api "/api/put?details" -X POST -d "{\"metric\":\"m\",\"value\":42,$T}" &&
	grep -q "\"error\":\"Invalid timestamp\"" body &&
	api /api/put -X POST -d "" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing request content\"}}" >expect &&
	is 400 &&
	api /api/put -X POST -d "[]" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No datapoints found in content\"}}" >expect &&
	is 400 &&
	api /api/put &&
	grep -q "^405" code
'

test_expect_success 'versioned paths: /api/v1/... is /api/...; a later version is 501, a bad one 400 (HttpQuery.getQueryBaseRoute)' '
	api /api/version && cp body expect &&
	api /api/v1/version && is 200 &&
	api /api/V1/version && is 200 &&
	api "/api/v1/put?summary" -X POST -d "{$B,\"value\":43,$T}" &&
	echo "{\"success\":1,\"failed\":0}" >expect &&
	is 200 &&
	api "/api/v1/search/lookup?m=sys.cpu.user" &&
	grep -q "\"tsuid\":\"000001000001000001\"" body &&
	api /api/v2/version &&
	echo "{\"error\":{\"code\":501,\"message\":\"Requested API version is greater than the max implemented\",\"details\":\"API version [2] is greater than the max [1]\"}}" >expect &&
	is 501 &&
	api /api/v1x/version &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid API version format supplied\",\"details\":\"API version [1x] cannot be parsed to an integer\"}}" >expect &&
	is 400 &&
	api /api/v1 &&
	grep -q "^404" code
'

test_expect_success 'TestSuggestRpc: metricsQS, metricsPOST, metricQSMax, metricsPOSTMax, tagkQS, tagkPOST, tagvQS, tagvPOST' '
	api /api/put -X POST -d "[{\"metric\":\"sys.cpu.0.system\",\"timestamp\":1365465600,\"value\":1,\"tags\":{\"host\":\"web01.mysite.com\"}},{\"metric\":\"sys.mem.free\",\"timestamp\":1365465600,\"value\":1,\"tags\":{\"host\":\"web01\"}}]" &&
	api "/api/suggest?type=metrics&q=sys.m" &&
	echo "[\"sys.mem.free\"]" >expect &&
	is 200 &&
	api "/api/suggest?type=metrics&q=s" &&
	echo "[\"sys.cpu.0.system\",\"sys.cpu.user\",\"sys.mem.free\"]" >expect &&
	is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"metrics\",\"q\":\"s\"}" &&
	is 200 &&
	api "/api/suggest?type=metrics&q=s&max=1" &&
	echo "[\"sys.cpu.0.system\"]" >expect &&
	is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"metrics\",\"q\":\"s\",\"max\":1}" &&
	is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"metrics\",\"q\":\"s\",\"max\":\"1\"}" &&
	is 200 &&
	api "/api/suggest?type=tagk&q=h" &&
	echo "[\"host\"]" >expect &&
	is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"tagk\",\"q\":\"h\"}" &&
	is 200 &&
	api "/api/suggest?type=tagv&q=w" &&
	echo "[\"web01\",\"web01.mysite.com\"]" >expect &&
	is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"tagv\",\"q\":\"web01.\"}" &&
	echo "[\"web01.mysite.com\"]" >expect &&
	is 200
'

test_expect_success 'suggest: no q is every name, max 0 or negative is the default (25), the deprecated /suggest' '
	api "/api/suggest?type=tagv&max=0" &&
	echo "[\"web01\",\"web01.mysite.com\"]" >expect &&
	is 200 &&
	api /api/suggest -X POST -d "{\"type\":\"tagv\",\"q\":null,\"max\":-3}" &&
	is 200 &&
	api "/suggest?type=tagv&q=web01." &&
	echo "[\"web01.mysite.com\"]" >expect &&
	is 200 &&
	grep -qi "^content-type: application/json" hdr &&
	api "/suggest?type=tagv&q=web01." -X POST -d "{\"type\":\"metrics\"}" &&
	is 200
'

test_expect_success 'TestSuggestRpc: badMethod, missingType, missingContent, badType, missingTypePOST, badMaxQS, badMaxPOST' '
	api "/api/suggest?type=metrics&q=h" -X PUT &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [PUT] is not permitted for this endpoint\"}}" >expect &&
	is 405 &&
	api "/api/suggest?q=h" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>type</code>\"}}" >expect &&
	is 400 &&
	api "/api/suggest?type=&q=h" &&
	is 400 &&
	api /api/suggest -X POST -H "Content-Type: application/json" -d "" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing message content\",\"details\":\"Supply valid JSON formatted data in the body of your request\"}}" >expect &&
	is 400 &&
	api "/api/suggest?type=doesnotexist&q=h" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid '"'"'type'"'"' parameter:doesnotexist\"}}" >expect &&
	is 400 &&
	api /api/suggest -X POST -d "{\"q\":\"w\"}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Missing '"'"'type'"'"' parameter\"}}" >expect &&
	is 400 &&
	api "/api/suggest?type=tagv&q=w&max=foo" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Unable to parse '"'"'max'"'"' as a number\"}}" >expect &&
	is 400 &&
	api /api/suggest -X POST -d "{\"type\":\"metrics\",\"q\":\"s\",\"max\":\"foo\"}" &&
	is 400 &&
	for m in 1.5 99999999999 %201 0x10; do
		api "/api/suggest?type=tagv&max=$m" &&
		is 400 || return 1
	done &&
	api /api/suggest -X POST -d "{\"type\":\"metrics\",\"q\":[\"s\"]}" &&
	grep -q "Unable to parse the given JSON" body && grep -q "^400" code &&
	api /api/suggest -X POST -d "[\"metrics\"]" &&
	grep -q "Unable to parse the given JSON" body && grep -q "^400" code &&
	api /api/suggest -X POST -d "{\"type\":5}" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid '"'"'type'"'"' parameter:5\"}}" >expect &&
	is 400 &&
	api "/suggest?type=tagv&max=foo&json" &&
	echo "{\"err\":\"Unable to parse '"'"'max'"'"' as a number\"}" >expect &&
	is 400
'

test_expect_success 'jsonp=CALLBACK wraps a JSON answer, not an error (HttpJsonSerializer)' '
	api "/api/suggest?type=metrics&q=sys.cpu.u&jsonp=func" &&
	echo "func([\"sys.cpu.user\"])" >expect &&
	is 200 &&
	api "/api/suggest?type=nope&jsonp=func" &&
	grep -q "^{\"error\"" body && grep -q "^400" code &&
	api "/api/suggest?type=metrics&jsonp=alert(1)//" &&
	grep -q "Invalid jsonp callback" body && grep -q "^400" code
'

test_expect_success 'without CORS domains: OPTIONS is 405, an Origin gets no CORS headers' '
	api /api/query -X OPTIONS -H "Origin: http://grafana.example" &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [OPTIONS] is not permitted\"}}" >expect &&
	is 405 &&
	api /api/version -H "Origin: http://grafana.example" &&
	grep -q "^200" code &&
	! grep -qi "^access-control" hdr &&
	api /api/config &&
	grep -q "\"tsd.http.request.cors_domains\":\"\"" body
'

test_expect_success 'tsd_cors_domains: the allowed origins get the headers, OPTIONS answers alone, others a 200 error (RpcHandler.applyCorsConfig)' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_cors_domains=http://grafana.example:3000\\,https://B.example" &&
	$CLIENT wait $HP &&
	api /api/query -X OPTIONS -H "Origin: http://grafana.example:3000" &&
	echo >expect &&
	is 200 &&
	grep -qi "^access-control-allow-origin: http://grafana.example:3000" hdr &&
	grep -qi "^access-control-allow-methods: GET, POST, PUT, DELETE" hdr &&
	grep -qi "^access-control-allow-headers: Authorization, Content-Type, Accept, Origin, User-Agent, DNT, Cache-Control, X-Mx-ReqToken, Keep-Alive, X-Requested-With, If-Modified-Since" hdr &&
	api "/api/suggest?type=metrics&q=sys.cpu.u" -H "Origin: https://b.EXAMPLE" &&
	echo "[\"sys.cpu.user\"]" >expect &&
	is 200 &&
	grep -qi "^access-control-allow-origin: https://b.EXAMPLE" hdr &&
	api /api/version -H "Origin: http://evil.example" &&
	echo "{\"error\":{\"code\":200,\"message\":\"CORS domain not allowed\",\"details\":\"The domain [http://evil.example] is not permitted access\"}}" >expect &&
	is 200 &&
	! grep -qi "^access-control" hdr &&
	api /api/version && grep -q "^200" code && ! grep -qi "^access-control" hdr &&
	api /api/config &&
	grep -q "\"tsd.http.request.cors_domains\":\"http://grafana.example:3000,https://B.example\"" body &&
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_cors_domains=*" &&
	$CLIENT wait $HP &&
	api /api/version -H "Origin: http://anywhere" &&
	grep -qi "^access-control-allow-origin: http://anywhere" hdr
'

test_expect_success 'a bad tsd_cors_domains is refused at mount' '
	cellfs_umount &&
	test_must_fail "$CELLFS" -f -o "tsd_http=$HP,tsd_cors_domains=*\\,http://a" "$DATA" "$MNT" 2>err &&
	grep -q "bad value for tsd_cors_domains" err
'

test_done
