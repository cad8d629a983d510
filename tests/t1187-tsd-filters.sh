#!/bin/sh

test_description='cellfs: tag value filters and query refusals as OpenTSDB has them (TestTagVNotKeyFilter, TestTagVWildcardFilter, TestTagVNotLiteralOrFilter, TestTagVFilter, TestTSQuery, TestTSSubQuery, TestTags, TestDateTime) through GET and POST /api/query and MNT/tsd/q/; tests/test-tsd-parse.c has the parser cases one by one'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400
OGG=ogg-01.ops.ankh.morpork.com

# post JSON: POST /api/query with body JSON
post() {
	api /api/query -X POST -H "Content-Type: application/json" -d "$1"
}

# err CODE MESSAGE: the last answer was OpenTSDB's error object
err() {
	printf "{\"error\":{\"code\":%s,\"message\":\"%s\"}}\n" "$1" "$2" >expect &&
	is "$1"
}

# f.m: four series at T, one of them without the host key
test_expect_success 'mount with the HTTP API, write the series' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	cat >in <<-EOF &&
	f.m $T 1 host=$OGG owner=Hrun
	f.m $T 2 host=web01
	f.m $T 4 colo=lga
	f.m $T 8 host=WEB02 colo=lga
	EOF
	cat in >>"$MNT/tsd/put" &&
	echo "f.m $T 15" >expect &&
	cat "$MNT/tsd/q/start=$T&m=sum:f.m" >out &&
	test_cmp expect out
'

test_expect_success 'not_key: the series without the key (TestTagVNotKeyFilter), through the mount and GET' '
	echo "f.m $T 4 colo=lga" >expect &&
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{}{host=not_key()}" >out &&
	test_cmp expect out &&
	api "/api/query?start=$T&m=sum:f.m%7B%7D%7Bhost=not_key()%7D" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"colo\":\"lga\"},\"aggregateTags\":[],\"dps\":{\"$T\":4}}]" >expect &&
	is 200 &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=NOT_KEY()%7D" &&
	is 200 &&
	api "/api/query?start=$T&m=sum:f.m%7B%7D%7Bowner=not_key()%7D" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{},\"aggregateTags\":[\"host\",\"colo\"],\"dps\":{\"$T\":14}}]" >expect &&
	is 200
'

test_expect_success 'not_key of a key never written: every series; with explicit_tags its key is not one the series must have' '
	echo "f.m $T 15" >expect &&
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{}{nokey=not_key()}" >out &&
	test_cmp expect out &&
	echo "f.m $T 4 colo=lga" >expect &&
	cat "$MNT/tsd/q/start=$T&m=sum:explicit_tags:f.m{colo=*}{host=not_key()}" >out &&
	test_cmp expect out
'

test_expect_success 'not_key through POST: the filter empty or null (ctorNullFilter), the JSON query shows it' '
	post "{\"start\":$T,\"showQuery\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"not_key\",\"tagk\":\"host\",\"filter\":\"\",\"groupBy\":false}]}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"colo\":\"lga\"},\"aggregateTags\":[],\"query\":{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"tsuids\":null,\"downsample\":null,\"rate\":false,\"filters\":[{\"tagk\":\"host\",\"filter\":\"\",\"group_by\":false,\"type\":\"not_key\"}],\"explicitTags\":false,\"index\":0,\"rateOptions\":null,\"tags\":{}},\"dps\":{\"$T\":4}}]" >expect &&
	is 200 &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"not_key\",\"tagk\":\"host\",\"groupBy\":true}]}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"colo\":\"lga\"},\"aggregateTags\":[],\"dps\":{\"$T\":4}}]" >expect &&
	is 200 &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"not_key\",\"tagk\":\"host\",\"filter\":null,\"groupBy\":false}]}]}" &&
	is 200
'

test_expect_success 'not_key with a value: refused (ctorFilterHasValue), GET, POST and the mount' '
	api "/api/query?start=$T&m=sum:f.m%7B%7D%7Bhost=not_key(Evadne)%7D" &&
	err 400 "When parsing filter '"'"'host=not_key(Evadne)'"'"': The filter must be empty for the not_key filter" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"not_key\",\"tagk\":\"host\",\"filter\":\"Evadne\"}]}]}" &&
	err 400 "When parsing filter '"'"'host=not_key(Evadne)'"'"': The filter must be empty for the not_key filter" &&
	echo EINVAL >expect &&
	errno_of read "$MNT/tsd/q/start=$T&m=sum:f.m{host=not_key(Evadne)}" >out &&
	test_cmp expect out &&
	echo "warn query tsd/q/start=$T&m=sum:f.m{host=not_key(Evadne)}: When parsing tag '"'"'host=not_key(Evadne)'"'"': The filter must be empty for the not_key filter: Invalid argument" >expect &&
	last_log >out && test_cmp expect out
'

test_expect_success '/api/config/filters lists not_key with OpenTSDB'"'"'s description and example' '
	api /api/config/filters &&
	python3 -c "import json; f = json.load(open(\"body\"))[\"not_key\"]; print(f[\"examples\"]); print(f[\"description\"])" >out &&
	cat >expect <<-\EOF &&
	host=not_key()  {"type":"not_key","tagk":"host","filter":"","groupBy":false}
	Skips any time series with the given tag key, regardless of the value. This can be useful for situations where a metric has inconsistent tag sets. NOTE: The filter value must be null or an empty string.
	EOF
	test_cmp expect out
'

test_expect_success 'a wildcard without wildcard() ignores case, wildcard() does not, iwildcard() does (TestTagVFilter.getFilterWildcardImplicit)' '
	cat >expect <<-EOF &&
	f.m $T 8 colo=lga host=WEB02
	f.m $T 2 host=web01
	EOF
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{host=web*}" >out &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{host=iwildcard(web*)}" >out &&
	test_cmp expect out &&
	echo "f.m $T 2 host=web01" >expect &&
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{host=wildcard(web*)}" >out &&
	test_cmp expect out &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=*morpork*%7D&show_query" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"host\":\"$OGG\",\"owner\":\"Hrun\"},\"aggregateTags\":[],\"query\":{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"tsuids\":null,\"downsample\":null,\"rate\":false,\"filters\":[{\"tagk\":\"host\",\"filter\":\"*morpork*\",\"group_by\":true,\"type\":\"wildcard\"}],\"explicitTags\":false,\"index\":0,\"rateOptions\":null,\"tags\":{\"host\":\"wildcard(*morpork*)\"}},\"dps\":{\"$T\":1}}]" >expect &&
	is 200
'

test_expect_success 'not_literal_or: the series without the key is not read (TestTagVNotLiteralOrFilter.matchNoSuchTagk, as OpenTSDB'"'"'s scan)' '
	cat >expect <<-EOF &&
	f.m $T 8 colo=lga host=WEB02
	f.m $T 1 host=$OGG owner=Hrun
	EOF
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{host=not_literal_or(web01)}" >out &&
	test_cmp expect out &&
	echo "f.m $T 1 host=$OGG owner=Hrun" >expect &&
	cat "$MNT/tsd/q/start=$T&m=sum:f.m{host=not_iliteral_or(WEB01|web02)}" >out &&
	test_cmp expect out
'

test_expect_success 'GET refusals in OpenTSDB'"'"'s words (QueryRpc, TSQuery, TSSubQuery)' '
	api "/api/query?m=sum:f.m" &&
	err 400 "Missing parameter <code>start</code>" &&
	api "/api/query?start=&m=sum:f.m" &&
	err 400 "Missing parameter <code>start</code>" &&
	api "/api/query?start=$T" &&
	err 400 "Missing sub queries" &&
	api "/api/query?start=$T&end=$((T - 60))&m=sum:f.m" &&
	err 400 "End time [$(((T - 60) * 1000))] must be greater than the start time [${T}000]" &&
	api "/api/query?start=$T&m=Notanagg:f.m" &&
	err 400 "No such aggregation function: Notanagg" &&
	api "/api/query?start=$T&m=:f.m" &&
	err 400 "Missing the aggregation function" &&
	api "/api/query?start=$T&m=sum:%7Bhost=*%7D" &&
	err 400 "Missing the metric or tsuids, provide at least one" &&
	api "/api/query?start=$T&m=" &&
	err 400 "The query string was empty" &&
	api "/api/query?start=$T&m=sum" &&
	err 400 "Invalid parameter m=sum (not enough :-separated parts)"
'

test_expect_success 'an empty end is now (TestTSQuery.validateEmptyEnd)' '
	api "/api/query?start=$T&end=&m=sum:f.m" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{},\"aggregateTags\":[\"host\",\"owner\",\"colo\"],\"dps\":{\"$T\":15}}]" >expect &&
	is 200
'

test_expect_success 'times refused in DateTime.parseDateTimeString'"'"'s words' '
	api "/api/query?start=Not%20a%20timestamp&m=sum:f.m" &&
	err 400 "Invalid time: Not a timestamp. Invalid character '"'"'N'"'"' in Not a timestamp" &&
	api "/api/query?start=1234.56789.123&m=sum:f.m" &&
	err 400 "Invalid time: 1234.56789.123. Millisecond timestamps must be in the format <seconds>.<ms> where the milliseconds are limited to 3 digits" &&
	api "/api/query?start=-135596160&m=sum:f.m" &&
	err 400 "Invalid time: -135596160. Negative timestamps are not supported." &&
	api "/api/query?start=2012/12/&m=sum:f.m" &&
	err 400 "Invalid absolute date: 2012/12/" &&
	api "/api/query?start=60p-ago&m=sum:f.m" &&
	err 400 "Invalid duration (suffix): 60p" &&
	api "/api/query?start=0s-ago&m=sum:f.m" &&
	err 400 "Zero or negative duration: 0s"
'

test_expect_success 'tags refused as Tags.parseWithMetricAndFilters refuses them (TestTags)' '
	api "/api/query?start=$T&m=sum:f.m%7Bhost=web01,%7D" &&
	err 400 "When parsing tag '"'"''"'"': invalid tag: " &&
	api "/api/query?start=$T&m=sum:f.m%7B,host=web01%7D" &&
	err 400 "When parsing tag '"'"''"'"': invalid tag: " &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=web01,dc=%7D" &&
	err 400 "When parsing tag '"'"'dc='"'"': invalid tag: dc=" &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=web01" &&
	err 400 "Missing '"'"'}'"'"' at the end of: f.m{host=web01" &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=dummyfilter(nothere)%7D" &&
	err 400 "When parsing tag '"'"'host=dummyfilter(nothere)'"'"': Could not find a tag value filter of the type: dummyfilter" &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=web01,%7D%7B%7D" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$T\":2}}]" >expect &&
	is 200
'

test_expect_success 'POST refusals in OpenTSDB'"'"'s words (TSQuery, TSSubQuery, TagVFilter.Builder)' '
	post "{\"start\":\"\",\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\"}]}" &&
	err 400 "Missing start time" &&
	post "{\"start\":$T,\"queries\":[]}" &&
	err 400 "Missing queries" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"\",\"metric\":\"f.m\"}]}" &&
	err 400 "Missing the aggregation function" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"nope\",\"metric\":\"f.m\"}]}" &&
	err 400 "No such aggregation function: nope" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\"}]}" &&
	err 400 "Missing the metric or tsuids, provide at least one" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"iwildcard\",\"tagk\":\"\",\"filter\":\"*\"}]}]}" &&
	err 400 "The tagk cannot be null or empty" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"tagk\":\"host\",\"filter\":\"*\"}]}]}" &&
	err 400 "The filter type cannot be null or empty" &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"web01\"}]}]}" &&
	err 400 "When parsing filter '"'"'host=wildcard(web01)'"'"': Filter must contain an asterisk"
'

test_expect_success 'POST: a filter with groupBy groups (TestTSSubQuery.validateWithGroupByFilter)' '
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"*morpork*\",\"groupBy\":true}]}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"host\":\"$OGG\",\"owner\":\"Hrun\"},\"aggregateTags\":[],\"dps\":{\"$T\":1}}]" >expect &&
	is 200 &&
	post "{\"start\":$T,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"iwildcard\",\"tagk\":\"host\",\"filter\":\"WEB*\",\"groupBy\":true}]}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"colo\":\"lga\",\"host\":\"WEB02\"},\"aggregateTags\":[],\"dps\":{\"$T\":8}},{\"metric\":\"f.m\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$T\":2}}]" >expect &&
	is 200
'

test_expect_success 'POST: an empty end is now, unknown fields of a filter are ignored (TestFilter.unknownShouldBeIgnored), tags map to filters (TestTSSubQuery.validateWithFilterViaTags)' '
	post "{\"start\":$T,\"end\":\"\",\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"tags\":{\"host\":\"wildcard(*morpork*)\"},\"filters\":[{\"type\":\"literal_or\",\"tagk\":\"owner\",\"filter\":\"Hrun\",\"unknown\":\"yo\"}]}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"host\":\"$OGG\",\"owner\":\"Hrun\"},\"aggregateTags\":[],\"dps\":{\"$T\":1}}]" >expect &&
	is 200
'

test_expect_success 'POST timezone and useCalendar (TestTSQuery.validateWithTimezone, validateVerifyNoDSOverrideWithCalendar)' '
	post "{\"start\":$((T - 86400)),\"end\":$((T + 60)),\"timezone\":\"America/Denver\",\"useCalendar\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"downsample\":\"1d-sum\"}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{},\"aggregateTags\":[\"host\",\"owner\",\"colo\"],\"dps\":{\"$((T - 61200))\":15.0}}]" >expect &&
	is 200 &&
	post "{\"start\":$((T - 86400)),\"end\":$((T + 60)),\"timezone\":\"America/Denver\",\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"downsample\":\"1d-sum\"}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{},\"aggregateTags\":[\"host\",\"owner\",\"colo\"],\"dps\":{\"$T\":15.0}}]" >expect &&
	is 200 &&
	post "{\"start\":\"2012/12/31-17:00:00\",\"end\":$((T + 60)),\"timezone\":\"America/Denver\",\"useCalendar\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\"}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{},\"aggregateTags\":[\"host\",\"owner\",\"colo\"],\"dps\":{\"$T\":15}}]" >expect &&
	is 200 &&
	post "{\"start\":\"2012/12/31-17:00:01\",\"end\":$((T + 60)),\"timezone\":\"America/Denver\",\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"f.m\"}]}" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{},\"aggregateTags\":[\"host\",\"owner\",\"colo\"],\"dps\":{}}]" >expect &&
	is 200
'

test_expect_success 'names resolved as TagVFilter.resolveTags does (TestTagVFilter.resolveName*)' '
	api "/api/query?start=$T&m=sum:f.m%7Bhost=web01%7Cnosuch%7D" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No such name for '"'"'tagv'"'"': '"'"'nosuch'"'"'\",\"details\":\"No such name for '"'"'tagv'"'"': '"'"'nosuch'"'"'\"}}" >expect &&
	is 400 &&
	api "/api/query?start=$T&m=sum:f.m%7Bnokey=wildcard(*omnia)%7D" &&
	echo "{\"error\":{\"code\":400,\"message\":\"No such name for '"'"'tagk'"'"': '"'"'nokey'"'"'\",\"details\":\"No such name for '"'"'tagk'"'"': '"'"'nokey'"'"'\"}}" >expect &&
	is 400 &&
	api "/api/query?start=$T&m=sum:f.m%7Bhost=iliteral_or(WEB01%7Cnosuch)%7D" &&
	echo "[{\"metric\":\"f.m\",\"tags\":{\"host\":\"web01\"},\"aggregateTags\":[],\"dps\":{\"$T\":2}}]" >expect &&
	is 200
'

test_done
