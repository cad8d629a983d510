#!/bin/sh

test_description='cellfs: /api/query with show_stats and show_summary (OpenTSDB'"'"'s QueryStats, TestHttpJsonSerializer formatQueryAsyncV1w*Stats*)'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

# check.py ARGS: the checks of an answer in "body" (see below)
cat >check.py <<'EOF'
import json, sys
a = json.load(open("body"))
want_stats, want_summary, nsubs = sys.argv[1] == "1", sys.argv[2] == "1", int(sys.argv[3])
summary = None
if a and "statsSummary" in a[-1]:
    summary = a.pop()["statsSummary"]
assert (summary is not None) == want_summary, "summary"
emitted = [0] * nsubs
keys = ["aggregationTime", "dpsPostFilter", "emittedDPs", "groupByTime",
        "nanDPs", "queryIndex", "queryScanTime", "serializationTime"]
for r in a:
    assert ("stats" in r) == want_stats, r
    assert list(r)[-1] == ("stats" if want_stats else "dps"), list(r)
    i = r["stats"]["queryIndex"] if want_stats else None
    if want_stats:
        s = r["stats"]
        assert list(s) == keys, list(s)
        emitted[i] += len(r["dps"])
        # the stats so far: this group's points are counted
        assert s["emittedDPs"] == emitted[i], (s, emitted)
        assert all(isinstance(s[k], float) and s[k] >= 0 for k in keys if k.endswith("Time"))
if want_summary:
    k = list(summary)
    assert k == sorted(k), k
    for i in range(nsubs):
        q = summary["queryIdx_%02d" % i]
        assert list(q) == keys and q["queryIndex"] == i, q
    assert summary["emittedDPs"] == sum(len(r["dps"]) for r in a), summary
    assert summary["emittedDPs"] == sum(summary["queryIdx_%02d" % i]["emittedDPs"] for i in range(nsubs))
    assert summary["dpsPostFilter"] == sum(summary["queryIdx_%02d" % i]["dpsPostFilter"] for i in range(nsubs))
    assert summary["processingPreWriteTime"] >= summary["maxSerializationTime"] >= summary["avgSerializationTime"] >= 0
    assert "serializationTime" in json.dumps(summary)
print("ok")
EOF

Q="start=1356998400&end=1356999400&m=sum:sys.cpu%7Bhost=*%7D&m=avg:sys.mem"

test_expect_success 'mount with the HTTP API; two metrics, three series' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	for i in 0 1 2 3 4; do
		echo "sys.cpu $((1356998400 + 60 * i)) $i host=a" &&
		echo "sys.cpu $((1356998400 + 60 * i)) $((2 * i)) host=b" &&
		echo "sys.mem $((1356998400 + 60 * i)) 1.5 host=a" || return 1
	done >>"$MNT/tsd/put"
'

test_expect_success 'without show_stats and show_summary: no statistics' '
	api "/api/query?$Q" &&
	grep -q "^200" code &&
	python3 check.py 0 0 2 &&
	! grep -q "stats" body
'

test_expect_success 'show_stats: each result ends with its sub query'"'"'s statistics (formatQueryAsyncV1wStatsWoSummary)' '
	api "/api/query?$Q&show_stats" &&
	grep -q "^200" code &&
	python3 check.py 1 0 2 &&
	grep -q "\"stats\":{" body &&
	grep -q "\"emittedDPs\":5" body &&
	! grep -q "{\"statsSummary\":{" body
'

test_expect_success 'show_summary: the answer ends with {"statsSummary":{...}} (formatQueryAsyncV1woStatsWSummary)' '
	api "/api/query?$Q&show_summary" &&
	grep -q "^200" code &&
	python3 check.py 0 1 2 &&
	grep -q "{\"statsSummary\":{" body &&
	grep -q "\"serializationTime\":" body &&
	grep -q "\"processingPreWriteTime\":" body &&
	grep -q "\"emittedDPs\":15" body &&
	grep -q "\"queryIdx_00\":" body &&
	grep -q "\"queryIdx_01\":" body
'

test_expect_success 'both, by POST (showStats, showSummary) (formatQueryAsyncV1wStatsSummary)' '
	api /api/query -X POST -d "{\"start\":1356998400,\"end\":1356999400,\"showStats\":true,\"showSummary\":true,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"sys.cpu\",\"tags\":{\"host\":\"*\"}}]}" &&
	grep -q "^200" code &&
	python3 check.py 1 1 1 &&
	grep -q "\"dpsPostFilter\":10" body
'

test_expect_success 'an empty answer has only the summary' '
	api "/api/query?start=1358000000&end=1358000100&m=sum:sys.cpu&show_summary&show_stats" &&
	grep -q "^200" code &&
	python3 check.py 1 1 1 &&
	grep -q "^\[{\"statsSummary\":{" body
'

test_expect_success 'the text of MNT/tsd/q/ is the same with or without them' '
	cat "$MNT/tsd/q/$Q" >plain &&
	cat "$MNT/tsd/q/$Q&show_stats&show_summary" >with &&
	test_cmp plain with &&
	test -s plain
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
