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

# raw REQUEST-LINE: sends it (and a Host header) to the port, the
# status line of the answer in "out"
raw() {
	python3 - "$HP" "$1" >out <<-\EOF
	import socket, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
	s.sendall(sys.argv[2].encode() + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
	d = b""
	while True:
	    c = s.recv(4096)
	    if not c:
	        break
	    d += c
	print(d.split(b"\r\n")[0].decode())
	EOF
}

test_expect_success 'TestHttpQuery getQueryBaseRoute: the first part after /api/ names the RPC, in any case' '
	api /api/version && cp body expect &&
	api /api/version/query && is 200 &&
	api /API/V1/VERSION/ && is 200 &&
	api /API/V1/PUT &&
	grep -q "^405" code &&
	api "/api/v1/put/more?summary" -X POST -d "{$B,\"value\":44,$T}" &&
	echo "{\"success\":1,\"failed\":0}" >expect &&
	is 200 &&
	api "/api/query/anything?start=1365465600&m=sum:sys.cpu.user" &&
	grep -q "^\[{\"metric\":\"sys.cpu.user\"" body &&
	api "/api/config/filters/" &&
	grep -q "^{\"literal_or\":" body && grep -q "\"not_key\":" body &&
	for p in /api/annotation/bulk /api/annotations/bulk /api/annotation/xbulk; do
		api $p -X DELETE &&
		echo "{\"error\":{\"code\":400,\"message\":\"Missing the start time value\"}}" >expect &&
		is 400 || return 1
	done &&
	api "/api/uid/nothing" &&
	echo "{\"error\":{\"code\":501,\"message\":\"Other UID endpoints have not been implemented yet\"}}" >expect &&
	is 501 &&
	for p in /api /api/ /api/v1 /api/error /api/stats/jvm /api/stats/threads; do
		api $p &&
		echo "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}}" >expect &&
		is 404 || return 1
	done &&
	api /api/v3/put &&
	echo "{\"error\":{\"code\":501,\"message\":\"Requested API version is greater than the max implemented\",\"details\":\"API version [3] is greater than the max [1]\"}}" >expect &&
	is 501 &&
	api /api/v2d/query &&
	echo "{\"error\":{\"code\":400,\"message\":\"Invalid API version format supplied\",\"details\":\"API version [2d] cannot be parsed to an integer\"}}" >expect &&
	is 400
'

test_expect_success 'getQueryBaseRouteBad, emptyPathIsBadRequest: a request target that is not a path is a bare 400; other methods (HEAD, PATCH, TRACE) a bare 405' '
	raw "GET notavalidquery HTTP/1.1" &&
	echo "HTTP/1.1 400 Bad Request" >expect &&
	test_cmp expect out &&
	api /api/version -X PATCH &&
	echo >expect &&
	is 405 &&
	api /api/version -X TRACE &&
	is 405 &&
	! grep -qi "^content-type" hdr &&
	api /api/version -I &&
	grep -q "^405" code &&
	grep -q "^Content-Length: 0" hdr
'

test_expect_success 'the deprecated API (api_version 0): notFoundDeprecated(JSON), badRequestDeprecated(JSON, HTMLEscaped)' '
	api /logs &&
	grep -q "^404" code &&
	grep -q "^<!DOCTYPE html><html><head><meta http-equiv=content-type content=\"text/html;charset=utf-8\"><title>Page Not Found</title>" body &&
	grep -qF "<h1>Page Not Found</h1>The requested URL was not found on this server." body &&
	grep -qi "^content-type: text/html; charset=UTF-8" hdr &&
	api "/favicon.ico?json" &&
	echo "{\"err\":\"Page Not Found\"}" >expect &&
	is 404 &&
	grep -qi "^content-type: application/json" hdr &&
	api "/?json" &&
	is 404 &&
	api "/q?start=%3Cscript%3Ealert(document.cookie)%3C/script%3E&m=sum:sys.cpu.user&ascii" &&
	grep -q "^400" code &&
	grep -q "^<!DOCTYPE html>" body &&
	grep -qF "The reason provided was:<blockquote>Invalid absolute date: &lt;script&gt;alert(document.cookie)&lt;/script&gt;</blockquote>" body &&
	api "/q?start=bad&m=sum:sys.cpu.user&json" &&
	grep -q "^{\"err\":\"Invalid time: bad. " body &&
	grep -q "^400" code &&
	api "/q?start=1365465600&m=sum:sys.cpu.user&json" &&
	grep -q "^200" code &&
	grep -qi "^content-type: application/json" hdr
'

test_expect_success 'getAPIMethodOverride*: get, post, put, delete in any case; none or another verb is 405' '
	api /api/annotation -X POST -d "{\"tsuid\":\"000001000001000001\",\"startTime\":1365465600,\"description\":\"d\"}" &&
	grep -q "^200" code &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600&method_override=GeT" &&
	grep -q "^200" code &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600&method_override=DeLeTe" &&
	grep -q "^204" code &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600" &&
	grep -q "^404" code &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600&description=e&method_override=post" &&
	grep -q "^200" code &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600&notes=n&method_override=PUT" &&
	grep -q "\"description\":\"\",\"notes\":\"n\"" body &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600&method_override" &&
	echo "{\"error\":{\"code\":405,\"message\":\"Missing method override value\"}}" >expect &&
	is 405 &&
	api "/api/annotation?tsuid=000001000001000001&start_time=1365465600&method_override=notaverb" &&
	echo "{\"error\":{\"code\":405,\"message\":\"Unknown or unsupported method override value\"}}" >expect &&
	is 405
'

test_expect_success 'setSerializer: ?serializer=json, a Content-Type of no serializer, ?serializer=notfound is 400' '
	api "/api/suggest?type=tagk&serializer=json" &&
	echo "[\"host\"]" >expect &&
	is 200 &&
	api "/api/suggest?type=tagk&formatter=json" -H "Content-Type: invalid/notfoundtype" &&
	is 200 &&
	api "/api/suggest?serializer=notfound" &&
	echo "{\"error\":{\"code\":400,\"message\":\"Requested serializer was not found\",\"details\":\"Could not find a serializer with the name: notfound\"}}" >expect &&
	is 400 &&
	api "/q?serializer=notfound&json" &&
	echo "{\"err\":\"Requested serializer was not found\"}" >expect &&
	is 400
'

test_expect_success 'getCharsetSupplied, getContentEncoding: a body in UTF-16 is read as such; getCharsetInvalid: 500' '
	printf "{\"metric\":\"s\303\255.se\303\261or\",\"timestamp\":1365465600,\"value\":1,\"tags\":{\"host\":\"web01\"}}" |
		iconv -f UTF-8 -t UTF-16 >u16 &&
	api "/api/put?summary" -X POST -H "Content-Type: application/json; charset=UTF-16" --data-binary @u16 &&
	echo "{\"success\":1,\"failed\":0}" >expect &&
	is 200 &&
	api "/api/suggest?type=metrics&q=s%C3%AD" &&
	printf "[\"s\303\255.se\303\261or\"]\n" >expect &&
	is 200 &&
	printf "{\"type\":\"metrics\",\"q\":\"s\355\"}" >l1 &&
	api /api/suggest -X POST -H "Content-Type: application/json; charset=ISO-8859-1" --data-binary @l1 &&
	is 200 &&
	api /api/put -X POST -H "Content-Type: text/plain; charset=foobar" --data-binary @u16 &&
	echo "{\"error\":{\"code\":500,\"message\":\"foobar\",\"details\":\"unsupported charset\"}}" >expect &&
	is 500 &&
	: bytes that are not of the charset: 400 &&
	printf "\377" >odd &&
	api /api/put -X POST -H "Content-Type: application/json; charset=UTF-16" --data-binary @odd &&
	grep -q "^400" code &&
	: 12 MiB of UTF-16 that decode to 18 MiB of UTF-8: past the 16 MiB bound, 413 &&
	python3 -c "import sys; sys.stdout.buffer.write((\"\\u4e2d\" * (6 << 20)).encode(\"utf-16-le\"))" >big16 &&
	api /api/put -X POST -H "Content-Type: application/json; charset=UTF-16LE" --data-binary @big16 &&
	grep -q "^413" code &&
	api /api/version && grep -q "^200" code
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

test_expect_success 'without CORS domains (httpOptionsNoCORS, httpOptionsCORSNotConfigured, httpCORSIgnored): OPTIONS is 405, an Origin gets no CORS headers' '
	api /api/v1/version -X OPTIONS &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [OPTIONS] is not permitted\"}}" >expect &&
	is 405 &&
	api /api/query -X OPTIONS -H "Origin: http://grafana.example" &&
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [OPTIONS] is not permitted\"}}" >expect &&
	is 405 &&
	api /api/version -H "Origin: http://grafana.example" &&
	grep -q "^200" code &&
	! grep -qi "^access-control" hdr &&
	api /api/config &&
	grep -q "\"tsd.http.request.cors_domains\":\"\"" body
'

test_expect_success 'tsd_cors_domains (httpCORSPublicSimple, httpCORSSpecificSimple, httpCORSNotAllowedSimple, httpOptionsCORSPublic, httpOptionsCORSSpecific, httpOptionsCORSNotAllowed): the allowed origins get the headers, OPTIONS answers alone, others a 200 error (RpcHandler.applyCorsConfig)' '
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
	api /api/v1/version -X OPTIONS -H "Origin: http://evil.example" &&
	is 200 &&
	! grep -qi "^access-control" hdr &&
	api /api/v1/version -X OPTIONS &&
	grep -q "^405" code &&
	api /api/version && grep -q "^200" code && ! grep -qi "^access-control" hdr &&
	api /api/config &&
	grep -q "\"tsd.http.request.cors_domains\":\"http://grafana.example:3000,https://B.example\"" body &&
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_cors_domains=*" &&
	$CLIENT wait $HP &&
	api /api/version -H "Origin: http://anywhere" &&
	grep -qi "^access-control-allow-origin: http://anywhere" hdr &&
	api /api/v1/version -X OPTIONS -H "Origin: 42.com" &&
	echo >expect &&
	is 200 &&
	grep -qi "^access-control-allow-origin: 42.com" hdr &&
	! grep -qi "^content-type" hdr
'

test_expect_success 'ctorCORSPublicAndDomains: a bad tsd_cors_domains is refused at mount' '
	cellfs_umount &&
	test_must_fail "$CELLFS" -f -o "tsd_http=$HP,tsd_cors_domains=*\\,http://a" "$DATA" "$MNT" 2>err &&
	grep -q "bad value for tsd_cors_domains" err
'

test_done
