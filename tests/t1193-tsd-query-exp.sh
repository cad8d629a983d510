#!/bin/sh

test_description='cellfs: /api/query/exp, OpenTSDB 2.3 JSON expressions (metrics, filters, JEXL expressions joined by tags, outputs), over the data of OpenTSDB BaseTimeSyncedIteratorTest, with the cases of TestQueryExecutor; tests/test-tsd-jexl.c has the arithmetic'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1431561600
TIME='"time":{"start":"1431561600","end":"1431561720","aggregator":"sum"}'
F1='"filters":[{"id":"f1","tags":[{"type":"wildcard","tagk":"D","filter":"*","groupBy":true}]}]'
AB='"metrics":[{"id":"a","metric":"A","filter":"f1"},{"id":"b","metric":"B","filter":"f1"}]'
ISECT='"join":{"operator":"intersection"}'

# exp JSON: POST /api/query/exp with body {JSON}
exp() {
	api /api/query/exp -X POST -d "{$1}"
}

# has TEXT...: the last answer was 200 and holds every TEXT
has() {
	echo 200 >expect.code &&
	test_cmp expect.code code &&
	for t in "$@"; do
		grep -qF -- "$t" body || { echo "missing: $t"; cat body; return 1; }
	done
}

# err CODE MESSAGE: the last answer was OpenTSDB's error object
err() {
	printf "{\"error\":{\"code\":%s,\"message\":\"%s\"}}\n" "$1" "$2" >expect &&
	is "$1"
}

# chain N: E is the expressions eN = e(N-1) + 1, ..., e1 = e0 + 1,
# e0 = a + b + 1, in that order
chain() {
	E= &&
	i=$1 && while test $i -ge 1; do
		E="$E{\"id\":\"e$i\",\"expr\":\"e$((i - 1)) + 1\"}," && i=$((i - 1))
	done &&
	E="$E{\"id\":\"e0\",\"expr\":\"a + b + 1\"}"
}

# oneExtraSameE (A and B; B has the series D=G A lacks) and
# threeSameEGaps (GA and GB, every series with gaps); Z has a point an
# hour before, none in the range
test_expect_success 'mount with the HTTP API, write oneExtraSameE and threeSameEGaps' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	cat >in <<-EOF &&
	GA $T 1 D=D E=E
	GA $((T + 120)) 3 D=D E=E
	GA $T 4 D=F E=E
	GA $((T + 60)) 5 D=F E=E
	GA $((T + 60)) 8 D=G E=E
	GA $((T + 120)) 9 D=G E=E
	GB $((T + 120)) 13 D=D E=E
	GB $((T + 60)) 15 D=F E=E
	GB $((T + 120)) 19 D=G E=E
	Z $((T - 3600)) 1 D=D E=E
	C $T 2 H=x
	AE $T 5 E=E
	AE $((T + 60)) 6 E=E
	AE $((T + 120)) 7 E=E
	AE $((T + 180)) 8 E=E
	OA $T 1 D=D E=E
	OA $((T + 60)) 2 D=D E=E
	OA $T 4 D=F E=E
	OA $((T + 60)) 5 D=F E=E
	OB $((T + 120)) 13 D=D E=E
	OB $((T + 180)) 14 D=D E=E
	OB $((T + 120)) 16 D=F E=E
	OB $((T + 180)) 17 D=F E=E
	QA $T 1 D=D E=E
	QA $((T + 60)) 2 D=D E=E
	QA $((T + 120)) 3 D=D E=E
	QA $T 1 D=E E=F
	QA $((T + 60)) 2 D=E E=F
	QA $((T + 120)) 3 D=E E=F
	QB $T 11 D=D E=E
	QB $((T + 60)) 12 D=D E=E
	QB $((T + 120)) 13 D=D E=E
	EOF
	cat "$SHARNESS_TEST_DIRECTORY/data/tsd-one-extra-same-e.txt" in \
		>"$MNT/tsd/put"
'

test_expect_success 'oneExpressionWithOutputAlias: the whole answer' '
	Q="$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}],\"outputs\":[{\"id\":\"e\",\"alias\":\"A plus B\"}]" &&
	exp "$Q" &&
	echo "{\"outputs\":[{\"id\":\"e\",\"alias\":\"A plus B\",\"dps\":[[1431561600000,12.0,18.0],[1431561660000,14.0,20.0],[1431561720000,16.0,22.0]],\"dpsMeta\":{\"firstTimestamp\":1431561600000,\"lastTimestamp\":1431561720000,\"setCount\":3,\"series\":2},\"meta\":[{\"index\":0,\"metrics\":[\"timestamp\"]},{\"index\":1,\"metrics\":[\"A\",\"B\"],\"commonTags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregatedTags\":[]},{\"index\":2,\"metrics\":[\"A\",\"B\"],\"commonTags\":{\"D\":\"F\",\"E\":\"E\"},\"aggregatedTags\":[]}]}],\"query\":{$Q}}" >expect &&
	is 200
'

test_expect_success 'oneExpressionDefaultOutput, oneExpressionOutputAndBAlso' '
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "{\"outputs\":[{\"id\":\"e\",\"dps\":[[1431561600000,12.0,18.0]" \
		"\"firstTimestamp\":1431561600000" "\"metrics\":[\"A\",\"B\"]" \
		"\"index\":2" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}],\"outputs\":[{\"id\":\"e\",\"alias\":\"A plus B\"},{\"id\":\"a\"},{\"id\":\"b\"}]" &&
	has "\"alias\":\"A plus B\"" "\"id\":\"a\",\"dps\":[[1431561600000,1.0,4.0]" \
		"\"metrics\":[\"A\"]" \
		"\"id\":\"b\",\"dps\":[[1431561600000,11.0,14.0,17.0]" \
		"\"metrics\":[\"B\"]"
'

test_expect_success 'oneExpressionDefaultFill: a missing point is the fill, 0' '
	exp "$TIME,$F1,\"metrics\":[{\"id\":\"a\",\"metric\":\"GA\",\"filter\":\"f1\"},{\"id\":\"b\",\"metric\":\"GB\",\"filter\":\"f1\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "\"dps\":[[1431561600000,1.0,4.0,0.0],[1431561660000,0.0,20.0,8.0],[1431561720000,16.0,0.0,28.0]]" \
		"\"index\":3"
'

test_expect_success 'a metric fill policy (scalar) and a NaN fill' '
	exp "$TIME,$F1,\"metrics\":[{\"id\":\"a\",\"metric\":\"GA\",\"filter\":\"f1\"},{\"id\":\"b\",\"metric\":\"GB\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"scalar\",\"value\":100}}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "\"dps\":[[1431561600000,101.0,104.0,100.0],[1431561660000,100.0,20.0,108.0],[1431561720000,16.0,100.0,28.0]]" &&
	exp "$TIME,$F1,\"metrics\":[{\"id\":\"a\",\"metric\":\"GA\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"nan\"}},{\"id\":\"b\",\"metric\":\"GB\",\"filter\":\"f1\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "\"dps\":[[1431561600000,1.0,4.0,\"NaN\"],[1431561660000,\"NaN\",20.0,8.0]" &&
	# a union: a variable with no series of the tags is 0, not its fill
	exp "$TIME,$F1,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"scalar\",\"value\":100}},{\"id\":\"b\",\"metric\":\"B\",\"filter\":\"f1\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\"}]" &&
	has "\"dps\":[[1431561600000,12.0,18.0,17.0]"
'

test_expect_success 'aPlusBResultsOffsetDefaultFill and ...FillInfectiousNaN (TestExpressionIterator)' '
	M="\"metrics\":[{\"id\":\"a\",\"metric\":\"OA\",\"filter\":\"f1\"},{\"id\":\"b\",\"metric\":\"OB\",\"filter\":\"f1\"}]" &&
	exp "\"time\":{\"start\":\"1431561600\",\"end\":\"1431561780\",\"aggregator\":\"sum\"},$F1,$M,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "\"dps\":[[1431561600000,1.0,4.0],[1431561660000,2.0,5.0],[1431561720000,13.0,16.0],[1431561780000,14.0,17.0]]" &&
	exp "$TIME,$F1,\"metrics\":[{\"id\":\"a\",\"metric\":\"GA\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"nan\"}},{\"id\":\"b\",\"metric\":\"GB\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"nan\"}}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "\"dps\":[[1431561600000,\"NaN\",\"NaN\",\"NaN\"],[1431561660000,\"NaN\",20.0,\"NaN\"],[1431561720000,16.0,\"NaN\",28.0]]"
'

test_expect_success 'oneExpressionNoFilter: every series summed' '
	exp "$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\"},{\"id\":\"b\",\"metric\":\"B\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT}]" &&
	has "\"dps\":[[1431561600000,47.0],[1431561660000,52.0],[1431561720000,57.0]]" \
		"\"aggregatedTags\":[\"D\"]"
'

test_expect_success 'twoExpressionsDefaultOutput, nested expressions, default union join' '
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT},{\"id\":\"e2\",\"expr\":\"a * b\",$ISECT}]" &&
	has "\"id\":\"e\",\"dps\":[[1431561600000,12.0,18.0]" \
		"\"id\":\"e2\",\"dps\":[[1431561600000,11.0,56.0],[1431561660000,24.0,75.0],[1431561720000,39.0,96.0]]" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e4\",\"expr\":\"e2 + e3\",$ISECT},{\"id\":\"e\",\"expr\":\"a + b\",$ISECT},{\"id\":\"e2\",\"expr\":\"e * 2\",$ISECT},{\"id\":\"e3\",\"expr\":\"e * 2\",$ISECT}]" &&
	has "\"id\":\"e2\",\"dps\":[[1431561600000,24.0,36.0],[1431561660000,28.0,40.0],[1431561720000,32.0,44.0]]" \
		"\"id\":\"e4\",\"dps\":[[1431561600000,48.0,72.0]" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\"}]" &&
	has "\"dps\":[[1431561600000,12.0,18.0,17.0],[1431561660000,14.0,20.0,18.0],[1431561720000,16.0,22.0,19.0]]" \
		"\"index\":1,\"metrics\":[\"A\",\"B\"],\"commonTags\":{\"D\":\"D\",\"E\":\"E\"}" \
		"\"index\":3,\"metrics\":[\"A\",\"B\"],\"commonTags\":{},\"aggregatedTags\":[]}"
'

test_expect_success 'JEXL: comparisons, the ternary, x / 0' '
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"b > 12 ? b : -1\",$ISECT},{\"id\":\"f\",\"expr\":\"a / (b - 11)\",$ISECT}]" &&
	has "\"id\":\"e\",\"dps\":[[1431561600000,-1.0,14.0,17.0],[1431561660000,-1.0,15.0,18.0],[1431561720000,13.0,16.0,19.0]]" \
		"\"id\":\"f\",\"dps\":[[1431561600000,0.0,1.3333333333333333],[1431561660000,2.0,1.25]"
'

test_expect_success 'twoExpressionsOneWithoutResults: no series, an empty output' '
	exp "$TIME,$F1,$AB,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\",\"filter\":\"f1\"},{\"id\":\"b\",\"metric\":\"B\",\"filter\":\"f1\"},{\"id\":\"z\",\"metric\":\"Z\",\"filter\":\"f1\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",$ISECT},{\"id\":\"x\",\"expr\":\"z * 2\",$ISECT}]" &&
	has "{\"id\":\"x\",\"dps\":[],\"dpsMeta\":{\"firstTimestamp\":0,\"lastTimestamp\":0,\"setCount\":0,\"series\":0}}"
'

test_expect_success 'useQueryTags joins on the filters'"'"' tag keys only' '
	exp "$TIME,\"filters\":[{\"id\":\"f1\",\"tags\":[{\"type\":\"wildcard\",\"tagk\":\"D\",\"filter\":\"*\",\"groupBy\":true}]},{\"id\":\"f2\",\"tags\":[{\"type\":\"wildcard\",\"tagk\":\"H\",\"filter\":\"*\",\"groupBy\":true}]}],\"metrics\":[{\"id\":\"a\",\"metric\":\"A\",\"filter\":\"f1\"},{\"id\":\"c\",\"metric\":\"C\",\"filter\":\"f2\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + c\",\"join\":{\"operator\":\"intersection\",\"useQueryTags\":true,\"includeAggTags\":false}}]" &&
	err 400 "No intersections found: e"
'

test_expect_success 'includeAggTags: an aggregated key is part of the join key' '
	Q="$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\"},{\"id\":\"x\",\"metric\":\"AE\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + x\"," &&
	exp "$Q\"join\":{\"operator\":\"intersection\",\"includeAggTags\":false}}]" &&
	has "\"dps\":[[1431561600000,10.0],[1431561660000,13.0],[1431561720000,16.0]]," \
		"\"commonTags\":{\"E\":\"E\"},\"aggregatedTags\":[\"D\"]" &&
	exp "$Q$ISECT}]" &&
	err 400 "No intersections found: e"
'

test_expect_success 'an output holds the times of the range' '
	exp "\"time\":{\"start\":\"1431561600\",\"end\":\"1431561700\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"x\",\"metric\":\"AE\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"x * 10\"}],\"outputs\":[{\"id\":\"e\"},{\"id\":\"x\"}]" &&
	has "\"id\":\"x\",\"dps\":[[1431561600000,5.0],[1431561660000,6.0]]," \
		"\"id\":\"e\",\"dps\":[[1431561600000,50.0],[1431561660000,60.0]],\"dpsMeta\":{\"firstTimestamp\":1431561600000,\"lastTimestamp\":1431561660000,\"setCount\":2,\"series\":1}"
'

test_expect_success 'aPlusBOneAggedOneTaggedUseQueryTagsWoutQueryTags: no filter, no key, one row' '
	exp "$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"QA\"},{\"id\":\"b\",\"metric\":\"QB\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + b\",\"join\":{\"operator\":\"intersection\",\"useQueryTags\":true,\"includeAggTags\":false}}]" &&
	has "\"dps\":[[1431561600000,13.0],[1431561660000,16.0],[1431561720000,19.0]]" \
		"\"aggregatedTags\":[\"D\",\"E\"]"
'

test_expect_success 'bad queries: 400 with the pojos'"'"' reasons' '
	exp "\"metrics\":[]" &&
	err 400 "missing time" &&
	exp "\"time\":{\"aggregator\":\"sum\"},$AB" &&
	err 400 "Invalid time: missing or empty start" &&
	exp "\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"nosuch\"},$AB" &&
	err 400 "Invalid time: Invalid aggregator" &&
	exp "$TIME" &&
	err 400 "missing or empty metrics" &&
	exp "$TIME,\"metrics\":[{\"id\":\"a-b\",\"metric\":\"A\"}]" &&
	err 400 "Invalid metric at index 0: Invalid id (\\\"a-b\\\"): illegal character: -" &&
	exp "$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\"},{\"id\":\"a\",\"metric\":\"B\"}]" &&
	err 400 "duplicated metric id: a" &&
	exp "$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\",\"filter\":\"nope\"}]" &&
	err 400 "unrecognized filter id nope in metric a" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + q\"}]" &&
	err 400 "Expression [a + q] was missing input q" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + e\"}]" &&
	err 400 "Self referencing expression found: e" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a + f\"},{\"id\":\"f\",\"expr\":\"e * 2\"}]" &&
	err 400 "Circular reference found: e" &&
	exp "$TIME,$F1,$AB,\"expressions\":[{\"id\":\"e\",\"expr\":\"a +\"}]" &&
	err 400 "Invalid expression at index 0: Failed to parse the expression at position 4: a +" &&
	exp "$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"A\",\"fillPolicy\":{\"policy\":\"zero\",\"value\":3}}]" &&
	err 400 "Invalid metric at index 0: The value for ZERO must be 0" &&
	exp "$TIME,\"metrics\":[{\"id\":\"a\",\"metric\":\"nosuch\"}]" &&
	grep -q "\"message\":\"No such name for .metrics.: .nosuch.\"" body &&
	# bounds: expressions naming expressions 64 deep (listed last
	# first, so that each evaluation starts the next), 1024 of a kind
	chain 70 &&
	exp "$TIME,$F1,$AB,\"expressions\":[$E]" &&
	err 400 "expressions nested over 64 deep at e6" &&
	chain 60 &&
	exp "$TIME,$F1,$AB,\"expressions\":[$E],\"outputs\":[{\"id\":\"e60\"}]" &&
	has "\"id\":\"e60\",\"dps\":[[1431561600000,78.0,73.0,79.0]" &&
	M="{\"id\":\"m0\",\"metric\":\"A\"}" &&
	i=1 && while test $i -le 1024; do
		M="$M,{\"id\":\"m$i\",\"metric\":\"A\"}" && i=$((i + 1))
	done &&
	exp "$TIME,\"metrics\":[$M]" &&
	err 400 "more than 1024 metrics, filters, expressions or outputs" &&
	api /api/query/exp -X PUT -d "{}" &&
	grep -q "\"code\":405" body &&
	api /api/query/exp &&
	grep -q "\"code\":400" body
'

test_done
