#!/bin/sh

test_description='cellfs: /q as OpenTSDB'"'"'s GraphHandler answers it: ascii, png and json'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400
Q="start=$T&end=$((T + 600))&m=sum:g.m%7Bhost=*%7D&m=sum:g.m&m=avg:g.none"

test_expect_success 'mount with the HTTP API; two series of g.m, and one point outside the range' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	for i in 0 1 2 3 4; do
		echo "g.m $((T + 60 * i)) $i host=a dc=x" &&
		echo "g.m $((T + 60 * i)) $((10 * i)) host=b dc=x" || return 1
	done >>"$MNT/tsd/put" &&
	echo "g.m $((T + 3000)) 99 host=a dc=x" >>"$MNT/tsd/put" &&
	echo "g.none $((T + 9000)) 1 host=a" >>"$MNT/tsd/put"
'

test_expect_success '/q?ascii: the lines MNT/tsd/q/ gives, as text/plain' '
	api "/q?$Q&ascii" &&
	grep -q "^200" code &&
	grep -qi "^Content-Type: text/plain" hdr &&
	cat "$MNT/tsd/q/start=$T&end=$((T + 600))&m=sum:g.m{host=*}&m=sum:g.m&m=avg:g.none" >expect &&
	echo >>expect &&
	test_cmp expect body &&
	grep -q "^g.m $((T + 60)) 11 dc=x$" body
'

test_expect_success '/q?json: points drawn and aggregated, the aggregated tags of each sub query' '
	api "/q?$Q&json" &&
	grep -q "^200" code &&
	sed "s/\"timing\":[0-9]*/\"timing\":T/" body >out &&
	echo "{\"plotted\":15,\"points\":15,\"etags\":[[],[\"host\"],null],\"timing\":T}" >expect &&
	test_cmp expect out
'

test_expect_success '/q?png: a PNG image, as image/png' '
	curl -s -g -D hdr -o g.png "http://127.0.0.1:$HP/q?$Q&png&wxh=320x200" &&
	grep -qi "^Content-Type: image/png" hdr &&
	od -An -tx1 -N8 g.png >out &&
	echo " 89 50 4e 47 0d 0a 1a 0a" >expect &&
	test_cmp expect out
'

test_expect_success '/q: tz, as GraphHandler names the time zone' '
	api "/q?start=2013/01/01-01:00:00&end=2013/01/01-01:10:00&m=sum:g.m&tz=Europe/Paris&ascii" &&
	grep -q "^200" code &&
	grep -q "^g.m $((T + 60)) 11 dc=x$" body
'

# /q is OpenTSDB's deprecated API (api_version 0): its refusals are
# HttpQuery.badRequest's, an HTML page, {"err":...} with ?json, nothing
# with ?png, and always 400
test_expect_success '/q refusals: no format, no start, a bad query, other methods (the deprecated API'"'"'s errors)' '
	api "/q?start=$T&m=sum:g.m" &&
	grep -q "^400" code &&
	grep -qi "^content-type: text/html; charset=UTF-8" hdr &&
	grep -q "^<!DOCTYPE html>" body &&
	grep -qF "The reason provided was:<blockquote>Missing one of the parameters &lt;code&gt;ascii&lt;/code&gt;, &lt;code&gt;png&lt;/code&gt; or &lt;code&gt;json&lt;/code&gt;</blockquote>" body &&
	api "/q?m=sum:g.m&json" &&
	echo "{\"err\":\"Missing parameter <code>start</code>\"}" >expect &&
	is 400 &&
	grep -qi "^content-type: application/json" hdr &&
	api "/q?m=sum:g.m&png" &&
	echo >expect &&
	is 400 &&
	api "/q?start=$T&m=sum:no.such&json" &&
	grep -q "^400" code &&
	grep -q "^{\"err\":\"No such name for" body &&
	api "/q?start=$T&m=sum:g.m&json" -X DELETE &&
	echo "{\"err\":\"Method not allowed\"}" >expect &&
	is 400
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
