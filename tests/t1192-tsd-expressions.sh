#!/bin/sh

test_description='cellfs: OpenTSDB graphite-style expressions (exp=, /api/query/gexp: scale, absolute, alias, movingAverage, highestCurrent, highestMax, timeShift, firstDiff, sumSeries, diffSeries, multiplySeries, divideSeries) through HTTP and MNT/tsd/q/, over the data of OpenTSDB BaseTimeSyncedIteratorTest; tests/test-tsd-expr.c has its function tests one by one'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1431561600
R="start=$T&end=$((T + 120))"

# gexp EXPR (with %XX for the shell and URL): GET /api/query/gexp over R
gexp() {
	api "/api/query/gexp?$R&exp=$1"
}

# ok200 JSON: the last answer was 200 with body JSON
ok200() {
	echo "$1" >expect &&
	is 200
}

# err CODE MESSAGE: the last answer was OpenTSDB's error object
err() {
	printf "{\"error\":{\"code\":%s,\"message\":\"%s\"}}\n" "$1" "$2" >expect &&
	is "$1"
}

# bad EXPR REASON: the mount refuses the query file (EINVAL), .log says
# REASON
bad() {
	echo EINVAL >expect &&
	errno_of read "$MNT/tsd/q/$R&exp=$1" >out && test_cmp expect out &&
	last_log >out &&
	echo "warn query tsd/q/$R&exp=$1: $2: Invalid argument" >expect &&
	test_cmp expect out
}

# bad_open EXPR REASON: the query file is found but its open fails
# (EINVAL; a function's refusal), .log says REASON
bad_open() {
	echo EINVAL >expect &&
	errno_of read "$MNT/tsd/q/$R&exp=$1" >out && test_cmp expect out &&
	last_log >out &&
	echo "warn open $R&exp=$1: $2: Invalid argument" >expect &&
	test_cmp expect out
}

# oneExtraSameE: A and B grouped by D, B with a series (D=G) A lacks
test_expect_success 'mount with the HTTP API, write OpenTSDB oneExtraSameE' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	cat >in <<-EOF &&
	N $T -3 h=a
	N $((T + 60)) -2.5 h=a
	N $((T + 120)) 4 h=a
	EOF
	cat "$SHARNESS_TEST_DIRECTORY/data/tsd-one-extra-same-e.txt" in \
		>"$MNT/tsd/put"
'

test_expect_success 'divideSeries: joined by tags, x / 0 is 0, named by the least metric UID (TestDivideSeries)' '
	gexp "divideSeries(sum:B{D=*},sum:A{D=*})" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":11.0,\"1431561660\":6.0,\"1431561720\":4.333333333333333}},{\"metric\":\"A\",\"tags\":{\"D\":\"F\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":3.5,\"1431561660\":3.0,\"1431561720\":2.6666666666666665}},{\"metric\":\"B\",\"tags\":{\"D\":\"G\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":0.0,\"1431561660\":0.0,\"1431561720\":0.0}}]"
'

test_expect_success 'sumSeries, diffSeries, multiplySeries and their short names; the tags are the first argument'"'"'s' '
	gexp "sumSeries(sum:A{D=*},sum:B{D=*})" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":12.0,\"1431561660\":14.0,\"1431561720\":16.0}},{\"metric\":\"A\",\"tags\":{\"D\":\"F\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":18.0,\"1431561660\":20.0,\"1431561720\":22.0}},{\"metric\":\"B\",\"tags\":{},\"aggregateTags\":[],\"dps\":{\"1431561600\":17.0,\"1431561660\":18.0,\"1431561720\":19.0}}]" &&
	cp body sum.json &&
	gexp "sum(sum:A{D=*},sum:B{D=*})" &&
	test_cmp sum.json body &&
	gexp "diffSeries(sum:A{D=*},sum:B{D=*})" &&
	grep -q "\"dps\":{\"1431561600\":-10.0,\"1431561660\":-10.0,\"1431561720\":-10.0}},{" body &&
	gexp "multiply(sum:A,sum:B)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"E\":\"E\"},\"aggregateTags\":[\"D\"],\"dps\":{\"1431561600\":210.0,\"1431561660\":315.0,\"1431561720\":432.0}}]"
'

test_expect_success 'scale: integers stay integers under an integer factor (TestScale)' '
	gexp "scale(sum:A{D=D},2)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":2,\"1431561660\":4,\"1431561720\":6}}]" &&
	gexp "scale(sum:A{D=D},0.5)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":0.5,\"1431561660\":1.0,\"1431561720\":1.5}}]"
'

test_expect_success 'absolute, firstDiff, and alias with @tag (which takes absolute values, as OpenTSDB does)' '
	gexp "absolute(sum:N)" &&
	ok200 "[{\"metric\":\"N\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":3.0,\"1431561660\":2.5,\"1431561720\":4}}]" &&
	gexp "firstDiff(sum:N)" &&
	ok200 "[{\"metric\":\"N\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":0.0,\"1431561660\":0.5,\"1431561720\":6.5}}]" &&
	gexp "alias(sum:N,n.@h)" &&
	ok200 "[{\"metric\":\"n.a\",\"tags\":{},\"aggregateTags\":[],\"dps\":{\"1431561600\":3.0,\"1431561660\":2.5,\"1431561720\":4}}]"
'

test_expect_success 'movingAverage over points and over time (TestMovingAverage)' '
	gexp "movingAverage(sum:A{D=D},2)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":0.0,\"1431561660\":1.5,\"1431561720\":2.5}}]" &&
	gexp "movingAverage(sum:A{D=D},%271min%27)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":0.0,\"1431561660\":2.0,\"1431561720\":3.0}}]"
'

test_expect_success 'highestCurrent and highestMax keep the top n series' '
	gexp "highestCurrent(sum:B{D=*},1)" &&
	ok200 "[{\"metric\":\"B\",\"tags\":{\"D\":\"G\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":17,\"1431561660\":18,\"1431561720\":19}}]" &&
	gexp "highestMax(sum:B{D=*},2)" &&
	grep -o "\"D\":\"[A-Z]\"" body >out &&
	printf "\"D\":\"G\"\n\"D\":\"F\"\n" >expect &&
	test_cmp expect out
'

test_expect_success 'timeShift moves points later; those past the end are not printed' '
	gexp "timeShift(sum:A{D=D},%271min%27)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561660\":1,\"1431561720\":2}}]" &&
	gexp "shift(sum:A{D=D},%271min%27)" &&
	ok200 "[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":[],\"dps\":{\"1431561660\":1,\"1431561720\":2}}]"
'

test_expect_success 'nested expressions, several exp= in order, downsampling in a metric query' '
	gexp "scale(sumSeries(sum:A{D=*},sum:B{D=*}),10)" &&
	grep -q "^\[{\"metric\":\"A\",\"tags\":{\"D\":\"D\",\"E\":\"E\"},\"aggregateTags\":\[\],\"dps\":{\"1431561600\":120.0," body &&
	api "/api/query/gexp?$R&exp=scale(sum:N,2)&exp=absolute(sum:2m-max:N)" &&
	ok200 "[{\"metric\":\"N\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":-6.0,\"1431561660\":-5.0,\"1431561720\":8}},{\"metric\":\"N\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":2.5,\"1431561720\":4.0}}]"
'

test_expect_success 'gexp answers the expressions only; /api/query ignores exp=' '
	api "/api/query/gexp?$R&m=sum:A" &&
	ok200 "[]" &&
	api "/api/query?$R&exp=scale(sum:A,2)" &&
	err 400 "Missing sub queries" &&
	api "/api/query?$R&m=sum:N&exp=scale(sum:A,2)" &&
	ok200 "[{\"metric\":\"N\",\"tags\":{\"h\":\"a\"},\"aggregateTags\":[],\"dps\":{\"1431561600\":-3.0,\"1431561660\":-2.5,\"1431561720\":4}}]" &&
	api "/api/query/gexp?$R&exp=scale(sum:A,2)" -X POST -d "{}" &&
	grep -q "\"code\":405" body
'

test_expect_success 'bad expressions: 400 with OpenTSDB'"'"'s reason' '
	gexp "foo(sum:A)" &&
	err 400 "Function foo has not been implemented" &&
	gexp "scale(sum:A" &&
	err 400 "Failed to parse scale(sum:A" &&
	gexp "scale(sum:A)" &&
	err 400 "Missing scaling factor" &&
	gexp "sumSeries(sum:A)" &&
	err 400 "Must have 2 to 26 series, got 1 instead" &&
	gexp "highestMax(sum:A,0)" &&
	err 400 "Top n value must be greater than zero: 0" &&
	gexp "scale(nosuchagg:A,2)" &&
	err 400 "No such aggregation function: nosuchagg" &&
	gexp "scale(sum:nosuch,2)" &&
	grep -q "^{\"error\":{\"code\":400,\"message\":\"No such name for .metrics.: .nosuch.\"," body
'

test_expect_success 'MNT/tsd/q/ with exp=: the same results as text lines' '
	cat "$MNT/tsd/q/$R&exp=divideSeries(sum:B{D=*},sum:A{D=*})" >out &&
	cat >expect <<-EOF &&
	A 1431561600 11.0 D=D E=E
	A 1431561660 6.0 D=D E=E
	A 1431561720 4.333333333333333 D=D E=E
	A 1431561600 3.5 D=F E=E
	A 1431561660 3.0 D=F E=E
	A 1431561720 2.6666666666666665 D=F E=E
	B 1431561600 0.0 D=G E=E
	B 1431561660 0.0 D=G E=E
	B 1431561720 0.0 D=G E=E
	EOF
	test_cmp expect out &&
	cat "$MNT/tsd/q/$R&exp=alias(sum:N,n.@h)" >out &&
	printf "n.a 1431561600 3.0\nn.a 1431561660 2.5\nn.a 1431561720 4\n" >expect &&
	test_cmp expect out &&
	cat "$MNT/tsd/q/$R&exp=movingAverage(sum:A{D=D},'"'"'2min'"'"')" >out &&
	printf "A 1431561600 0.0 D=D E=E\nA 1431561660 0.0 D=D E=E\nA 1431561720 2.5 D=D E=E\n" >expect &&
	test_cmp expect out
'

test_expect_success 'MNT/tsd/q/ refuses a bad expression: EINVAL, and why in .log' '
	bad "foo(sum:A)" "Function foo has not been implemented" &&
	bad "scale(sum:A,,2)" "Failed to parse scale(sum:A,,2)" &&
	bad_open "sumSeries(sum:A)" "Must have 2 to 26 series, got 1 instead" &&
	bad_open "timeShift(sum:A,1min)" "Invalid timeshift parameter: eg '"'"'10min'"'"'"
'

test_expect_success 'an expression is not drawn: .png refused' '
	echo EINVAL >expect &&
	errno_of read "$MNT/tsd/q/$R&exp=scale(sum:A,2).png" >out &&
	test_cmp expect out
'

test_done
