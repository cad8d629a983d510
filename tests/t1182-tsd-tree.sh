#!/bin/sh

test_description='cellfs: OpenTSDB trees: /api/tree, /api/tree/branch, rule, rules, test, collisions, notmatched (TestTreeRpc), stored in tsdb-tree as OpenTSDB stores them, and series run through enabled trees when their meta is made'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=/api/tree
S1=000001000001000001			# sys.cpu.0{host=web01}
S2=000001000001000001000002000002	# sys.cpu.0{host=web01,datacenter=dc01}
S3=000001000001000003			# sys.cpu.0{host=web02}
R1="$MNT/tsdb-tree/%00%01"		# the row of tree 1

# rule TYPE FIELD DESC NOTES LEVEL ORDER [TREE]: a TreeRule as Jackson
# writes it (no regex, separator, custom field or display format)
rule() {
	printf '{"type":"%s","field":"%s","regex":"","separator":"","description":"%s","notes":"%s","level":%s,"order":%s,"customField":"","regexGroupIdx":0,"displayFormat":"","treeId":%s}' \
		"$1" "$2" "$3" "$4" "$5" "$6" "${7:-1}"
}
# tree ID NAME DESC NOTES ENABLED RULES [STRICT [FAILS]]: a Tree as
# Jackson writes it, created 1356998400
tree() {
	printf '{"name":"%s","description":"%s","notes":"%s","enabled":%s,"rules":%s,"created":1356998400,"treeId":%s,"strictMatch":%s,"storeFailures":%s}' \
		"$2" "$3" "$4" "$5" "$6" "$1" "${7:-false}" "${8:-false}"
}
# err CODE MESSAGE: OpenTSDB's error answer
err() {
	printf '{"error":{"code":%s,"message":"%s"}}\n' "$1" "$2"
}
# ncols ROWDIR: the number of columns of a row (storage.numColumns)
ncols() {
	ls "$1" 2>/dev/null | wc -l
}
RULES1="{\"0\":{\"0\":$(rule TAGK host "Host Name" "" 0 0)},\"1\":{\"0\":$(rule METRIC "" "" "Metric rule" 1 0)}}"
RULES2="{\"0\":{\"0\":$(rule TAGK host "" "" 0 0 2)},\"1\":{\"0\":$(rule METRIC "" "" "" 1 0 2)}}"

test_expect_success 'mount with the HTTP API; three series (sys.cpu.0 000001; host 1, datacenter 2; web01 1, dc01 2, web02 3); no tree yet' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	api $T &&
	echo "[]" >expect &&
	is 200 &&
	api "$T?treeid=1" &&
	err 404 "Unable to locate tree: 1" >expect &&
	is 404 &&
	echo "sys.cpu.0 1356998400 1 host=web01" >>"$MNT/tsd/put" &&
	echo "sys.cpu.0 1356998400 1 host=web01 datacenter=dc01" >>"$MNT/tsd/put" &&
	echo "sys.cpu.0 1356998400 1 host=web02" >>"$MNT/tsd/put" &&
	cat "$MNT/tsd/tagk/datacenter" "$MNT/tsd/tagv/dc01" "$MNT/tsd/tagv/web02" >out &&
	printf "000002\n000002\n000003\n" >expect &&
	test_cmp expect out
'

test_expect_success 'setupStorage: two trees made by POST, their rules by /api/tree/rule (handleTreePOSTCreate, handleRulePOSTNew)' '
	api $T -X POST -d "{\"name\":\"Test Tree\",\"description\":\"My Description\",\"notes\":\"Details\",\"created\":1356998400}" &&
	tree 1 "Test Tree" "My Description" Details false null >expect &&
	echo >>expect &&
	is 200 &&
	api "$T/rule?treeid=1&level=0&order=0&type=tagk&field=host&description=Host%20Name" -X POST &&
	rule TAGK host "Host Name" "" 0 0 >expect &&
	echo >>expect &&
	is 200 &&
	api $T/rule -X POST -d "{\"treeId\":1,\"level\":1,\"order\":0,\"type\":\"METRIC\",\"notes\":\"Metric rule\"}" &&
	rule METRIC "" "" "Metric rule" 1 0 >expect &&
	echo >>expect &&
	is 200 &&
	api $T -X POST -d "{\"name\":\"2nd Tree\",\"description\":\"Other Tree\",\"created\":1356998400}" &&
	tree 2 "2nd Tree" "Other Tree" "" false null >expect &&
	echo >>expect &&
	is 200 &&
	api $T/rules -X POST -d "[{\"treeId\":2,\"level\":0,\"order\":0,\"type\":\"TAGK\",\"field\":\"host\"},{\"treeId\":2,\"level\":1,\"order\":0,\"type\":\"METRIC\"}]" &&
	echo >expect &&
	is 204
'

test_expect_success 'the stored cells: tsdb-tree, row = the 2-byte tree ID, t:tree (toStorageJson) and t:tree_rule:LEVEL:ORDER' '
	printf "t:tree\nt:tree_rule%%3A0%%3A0\nt:tree_rule%%3A1%%3A0\n" >expect &&
	ls "$R1" >out &&
	test_cmp expect out &&
	printf "{\"name\":\"Test Tree\",\"description\":\"My Description\",\"notes\":\"Details\",\"strictMatch\":false,\"created\":1356998400,\"enabled\":false,\"storeFailures\":false}" >expect &&
	test_cmp expect "$R1/t:tree" &&
	rule TAGK host "Host Name" "" 0 0 >expect &&
	test_cmp expect "$R1/t:tree_rule%3A0%3A0"
'

test_expect_success 'noRoute, handleTreeBadMethod' '
	api $T/noroute &&
	err 404 "This endpoint is not supported" >expect &&
	is 404 &&
	api $T -X TRACE &&
	# over HTTP RpcHandler refuses TRACE before TreeRpc sees it: the
	# status alone
	echo >expect &&
	is 405
'

test_expect_success 'handleTreeGetAll, handleTreeGetSingle' '
	api $T &&
	echo "[$(tree 1 "Test Tree" "My Description" Details false "$RULES1"),$(tree 2 "2nd Tree" "Other Tree" "" false "$RULES2")]" >expect &&
	is 200 &&
	api "$T?treeid=2" &&
	tree 2 "2nd Tree" "Other Tree" "" false "$RULES2" >expect &&
	echo >>expect &&
	is 200
'

test_expect_success 'handleTreeGetNotFound, handleTreeGetBadID655536, a tree ID not a number' '
	api "$T?treeid=3" &&
	err 404 "Unable to locate tree: 3" >expect &&
	is 404 &&
	api "$T?treeid=655536" &&
	err 400 "Invalid Tree ID" >expect &&
	is 400 &&
	api "$T?treeid=one" &&
	err 400 "Unable to parse '"'"'tree'"'"' value" >expect &&
	is 400
'

test_expect_success 'handleTreeQSCreate: the next ID, one column in its row; handleTreeQSCreateNoName' '
	before=$(date +%s) &&
	api "$T?name=NewTree&method_override=post" &&
	after=$(date +%s) &&
	grep "\"name\":\"NewTree\"" body &&
	grep "\"treeId\":3" body &&
	c=$(sed -n "s/.*\"created\":\([0-9]*\).*/\1/p" body) &&
	test "$c" -ge $((before - 1)) && test "$c" -le "$after" &&
	test "$(ncols "$MNT/tsdb-tree/%00%03")" = 1 &&
	api "$T?method_override=post&description=HelloWorld" &&
	err 400 "Tree was missing the name" >expect &&
	is 400 &&
	api $T -X POST -d "{\"description\":\"HelloWorld\"}" &&
	is 400
'

test_expect_success 'handleTreeQSModify, handleTreeQSModifyNotFound, handleTreeQSModifyNotModified, handleTreePOSTModify' '
	api "$T?treeid=3&method_override=post&description=HelloWorld" &&
	grep "\"description\":\"HelloWorld\"" body &&
	grep "\"name\":\"NewTree\"" body &&
	api "$T?treeid=4&method_override=post&description=HelloWorld" &&
	err 404 "Unable to locate tree: 4" >expect &&
	is 404 &&
	api "$T?treeid=3&method_override=post" &&
	echo >expect &&
	is 304 &&
	api $T -X POST -d "{\"treeId\":3,\"description\":\"Hello World\"}" &&
	grep "\"description\":\"Hello World\"" body &&
	grep "\"name\":\"NewTree\"" body
'

test_expect_success 'handleTreeQSPut, handleTreeQSPutNotFound, handleTreeQSPutNotModified, handleTreePOSTPut: PUT replaces every field' '
	api "$T?treeid=3&method_override=put&description=HelloWorld" &&
	grep "\"description\":\"HelloWorld\"" body &&
	grep "\"name\":\"\"" body &&
	api "$T?treeid=4&method_override=put&description=HelloWorld" &&
	err 404 "Unable to locate tree: 4" >expect &&
	is 404 &&
	api "$T?treeid=3&method_override=put" &&
	echo >expect &&
	is 304 &&
	api $T -X PUT -d "{\"treeId\":3,\"description\":\"Hello World\",\"enabled\":true}" &&
	grep "\"description\":\"Hello World\"" body &&
	grep "\"name\":\"\"" body &&
	grep "\"enabled\":true" body
'

test_expect_success 'handleTreeQSDeleteNotFound, handleTreeQSDeleteDefinition: the tree and its row go' '
	api "$T?treeid=4&method_override=delete" &&
	err 404 "Unable to locate tree: 4" >expect &&
	is 404 &&
	api "$T?treeid=3&method_override=delete&definition=true" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$MNT/tsdb-tree/%00%03")" = 0 &&
	api "$T?treeid=3" &&
	err 404 "Unable to locate tree: 3" >expect &&
	is 404
'

test_expect_success 'handleRuleGetQS, handleRuleGetQSNotFound, handleRuleGetQSTreeNotFound, handleRuleGetQSMissingTree, handleRuleGetQSMissingLevel, handleRuleGetQSMissingOrder' '
	api "$T/rule?treeid=1&level=1&order=0" &&
	rule METRIC "" "" "Metric rule" 1 0 >expect &&
	echo >>expect &&
	is 200 &&
	api "$T/rule?treeid=1&level=2&order=2" &&
	err 404 "Unable to locate rule: [1:2:2:null]" >expect &&
	is 404 &&
	api "$T/rule?treeid=4&level=1&order=0" &&
	err 404 "Unable to locate tree: 4" >expect &&
	is 404 &&
	api "$T/rule?level=1&order=0" &&
	err 400 "Missing parameter <code>treeid</code>" >expect &&
	is 400 &&
	api "$T/rule?treeid=1&order=0" &&
	err 400 "Missing parameter <code>level</code>" >expect &&
	is 400 &&
	api "$T/rule?treeid=1&level=1" &&
	err 400 "Missing parameter <code>order</code>" >expect &&
	is 400
'

test_expect_success 'handleRuleQSNew, handleRuleQSNewFailValidation, handleRuleQSNewMissingType, a bad regex, a negative level' '
	api "$T/rule?treeid=1&level=2&order=1&description=Testing&method_override=post&type=metric" &&
	rule METRIC "" Testing "" 2 1 >expect &&
	echo >>expect &&
	is 200 &&
	api "$T/rule?treeid=1&level=3&order=1&description=Testing&method_override=post&type=tagk" &&
	err 400 "Missing field name required for TAGK rule" >expect &&
	is 400 &&
	api "$T/rule?treeid=1&level=3&order=1&description=Testing&method_override=post&type=tagk_custom&field=host" &&
	err 400 "Missing custom field name required for TAGK_CUSTOM rule" >expect &&
	is 400 &&
	api "$T/rule?treeid=1&level=3&order=1&description=Testing&method_override=post" &&
	err 400 "Missing rule type" >expect &&
	is 400 &&
	api "$T/rule?treeid=1&level=3&order=1&method_override=post&type=bogus" &&
	err 400 "Unable to parse the '"'"'type'"'"' parameter: Unrecognized rule type" >expect &&
	is 400 &&
	api "$T/rule?treeid=1&level=3&order=1&method_override=post&type=metric&regex=%28ok" &&
	test "$(cat code)" = 400 &&
	grep "Unable to parse the '"'"'regex'"'"' parameter" body &&
	api "$T/rule?treeid=1&level=-1&order=1&method_override=post&type=metric" &&
	err 400 "Negative levels are not allowed" >expect &&
	is 400 &&
	test_must_fail test -e "$R1/t:tree_rule%3A3%3A1"
'

test_expect_success 'handleRuleQSNotModified, handleRuleQSModify, handleRulePOSTNew, handleRulePOSTModify: POST merges' '
	api "$T/rule?treeid=1&level=1&order=0&method_override=post" &&
	echo >expect &&
	is 304 &&
	api "$T/rule?treeid=1&level=1&order=0&description=Testing&method_override=post" &&
	rule METRIC "" Testing "Metric rule" 1 0 >expect &&
	echo >>expect &&
	is 200 &&
	api $T/rule -X POST -d "{\"treeId\":1,\"level\":2,\"order\":2,\"description\":\"Testing\",\"type\":\"metric\"}" &&
	rule METRIC "" Testing "" 2 2 >expect &&
	echo >>expect &&
	is 200 &&
	api $T/rule -X POST -d "{\"treeId\":1,\"level\":1,\"order\":0,\"description\":\"Testing POST\"}" &&
	rule METRIC "" "Testing POST" "Metric rule" 1 0 >expect &&
	echo >>expect &&
	is 200
'

test_expect_success 'handleRuleQSPut, handleRuleQSPutMissingType, handleRulePUT: PUT replaces every field' '
	api "$T/rule?treeid=1&level=1&order=0&description=Testing&method_override=put&type=metric" &&
	rule METRIC "" Testing "" 1 0 >expect &&
	echo >>expect &&
	is 200 &&
	api "$T/rule?treeid=1&level=1&order=0&description=Testing&method_override=put" &&
	err 400 "Missing rule type" >expect &&
	is 400 &&
	api $T/rule -X PUT -d "{\"treeId\":1,\"level\":1,\"order\":0,\"description\":\"Testing PUT\",\"type\":\"metric\"}" &&
	rule METRIC "" "Testing PUT" "" 1 0 >expect &&
	echo >>expect &&
	is 200
'

test_expect_success 'handleRuleQSDelete, handleRuleQSDeleteNotFound, handleRuleDELETE, handleRuleBadMethod' '
	test "$(ncols "$R1")" = 5 &&
	api "$T/rule?treeid=1&level=2&order=1&method_override=delete" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$R1")" = 4 &&
	api "$T/rule?treeid=1&level=2&order=0&method_override=delete" &&
	err 404 "Unable to locate rule: [1:2:0:null]" >expect &&
	is 404 &&
	api $T/rule -X DELETE -d "{\"treeId\":1,\"level\":2,\"order\":2}" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$R1")" = 3 &&
	api $T/rule -X TRACE &&
	test "$(cat code)" = 405
'

test_expect_success 'handleRulesGetQS, handleRulesPOST: merged into the stored rules, handleRulesPOSTEmpty, handleRulesPOSTNoRules' '
	api "$T/rules?treeid=1" &&
	err 400 "Unsupported HTTP request method" >expect &&
	is 400 &&
	api $T/rules -X POST -d "[{\"treeId\":1,\"level\":0,\"order\":0,\"type\":\"METRIC\"},{\"treeId\":1,\"level\":0,\"order\":1,\"type\":\"tagk\",\"field\":\"fqdn\"},{\"treeId\":1,\"level\":1,\"order\":0,\"type\":\"tagk\",\"field\":\"host\"}]" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$R1")" = 4 &&
	rule METRIC host "Host Name" "" 0 0 >expect &&
	test_cmp expect "$R1/t:tree_rule%3A0%3A0" &&
	api $T/rules -X POST -d "[]]" &&
	test "$(cat code)" = 400 &&
	api $T/rules -X POST -d "[]" &&
	err 400 "Missing tree rules" >expect &&
	is 400 &&
	api $T/rules -X POST &&
	err 400 "Invalid Tree ID" >expect &&
	is 400
'

test_expect_success 'handleRulesPUT: the rules replaced; handleRulesPOSTTreeMissmatch; a bad rule of a set loses nothing' '
	api $T/rules -X PUT -d "[{\"treeId\":1,\"level\":0,\"order\":0,\"type\":\"METRIC\"},{\"treeId\":1,\"level\":0,\"order\":1,\"type\":\"tagk\",\"field\":\"fqdn\"},{\"treeId\":1,\"level\":1,\"order\":0,\"type\":\"tagk\",\"field\":\"host\"}]" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$R1")" = 4 &&
	rule METRIC "" "" "" 0 0 >expect &&
	test_cmp expect "$R1/t:tree_rule%3A0%3A0" &&
	api $T/rules -X POST -d "[{\"treeId\":2,\"level\":0,\"order\":0,\"type\":\"METRIC\"},{\"treeId\":1,\"level\":0,\"order\":1,\"type\":\"tagk\",\"field\":\"fqdn\"}]" &&
	err 400 "All rules must belong to the same tree" >expect &&
	is 400 &&
	api $T/rules -X PUT -d "[{\"treeId\":1,\"level\":5,\"order\":0,\"type\":\"METRIC\"},{\"treeId\":1,\"level\":6,\"order\":0,\"type\":\"tagk\"}]" &&
	err 400 "Missing field name required for TAGK rule" >expect &&
	is 400 &&
	test "$(ncols "$R1")" = 4 &&
	test_must_fail test -e "$R1/t:tree_rule%3A5%3A0"
'

test_expect_success 'handleRulesDeleteQS, handleRulesDelete, handleRulesDeleteTreeNotFound' '
	api "$T/rules?treeid=1&method_override=delete" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$R1")" = 1 &&
	api "$T/rules?treeid=1" -X DELETE &&
	is 204 &&
	api "$T/rules?treeid=5" -X DELETE &&
	err 404 "Unable to locate tree: 5" >expect &&
	is 404
'

test_expect_success 'setupTSMeta: tree 1 gets the rules TAGK host then METRIC; a meta for S2 (the tree still disabled: nothing built)' '
	api $T/rules -X POST -d "[{\"treeId\":1,\"level\":0,\"order\":0,\"type\":\"TAGK\",\"field\":\"host\"},{\"treeId\":1,\"level\":1,\"order\":0,\"type\":\"METRIC\"}]" &&
	api "/api/uid/tsmeta?m=sys.cpu.0%7Bhost=web01,datacenter=dc01%7D&create=true" -X POST -d "{\"displayName\":\"S2\"}" &&
	test "$(cat code)" = 200 &&
	test "$(ncols "$R1")" = 3
'

test_expect_success 'handleTestQS, handleTestQSMulti (a series with no meta), handleTestPOST, handleTestPUT, handleTestPOSTMulti' '
	api "$T/test?treeid=1&tsuids=$S2" &&
	test "$(cat code)" = 200 &&
	grep "Adding leaf" body &&
	grep "\"$S2\":{\"branch\":{\"leaves\":null,\"branches\":\[{\"leaves\":\[{\"metric\":null,\"tags\":null,\"tsuid\":\"$S2\",\"displayName\":\"sys.cpu.0\"}\],\"branches\":null,\"path\":{\"0\":\"ROOT\",\"1\":\"web01\"},\"treeId\":1,\"branchId\":\"000106BC4C55\",\"depth\":1,\"displayName\":\"web01\"}\],\"path\":{\"0\":\"ROOT\"},\"treeId\":1,\"branchId\":\"0001\",\"depth\":0,\"displayName\":\"ROOT\"},\"meta\":{\"tsuid\":\"$S2\"" body &&
	grep "\"messages\":\[\"Processing rule: \[1:0:0:TAGK\]\",\"Matched tagk \[host\] for rule: \[1:0:0:TAGK\]\",\"Processing rule: \[1:1:0:METRIC\]\",\"Depth \[3\] Adding leaf \[name: sys.cpu.0 tsuid: $S2\] to parent branch\"\]" body &&
	api "$T/test?treeid=1&tsuids=$S2,$S3" &&
	grep "Adding leaf" body &&
	grep "\"$S3\":{\"branch\":null,\"meta\":null,\"messages\":\[\"Unable to locate TSUID meta data\"\]}" body &&
	api $T/test -X POST -d "{\"treeId\":1,\"tsuids\":[\"$S2\"]}" &&
	test "$(cat code)" = 200 &&
	grep "Adding leaf" body &&
	api $T/test -X PUT -d "{\"treeId\":1,\"tsuids\":[\"$S2\"]}" &&
	grep "Adding leaf" body &&
	api $T/test -X POST -d "{\"treeId\":1,\"tsuids\":[\"$S2\",\"$S3\"]}" &&
	grep "Adding leaf" body &&
	grep "Unable to locate TSUID meta data" body &&
	test_must_fail test -e "$MNT/tsdb-tree/%00%01%06%BCLU" &&
	test_must_fail test -e "$R1/t:branch"
'

test_expect_success 'handleTestTSUIDNotFound, handleTestNSU (a meta of a series whose tag value has no name)' '
	api "$T/test?treeid=1&tsuids=$S3" &&
	echo "{\"$S3\":{\"branch\":null,\"meta\":null,\"messages\":[\"Unable to locate TSUID meta data\"]}}" >expect &&
	is 200 &&
	mkdir "$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%09" &&
	printf "{\"tsuid\":\"000001000001000009\",\"displayName\":\"\",\"description\":\"\",\"notes\":\"\",\"created\":0,\"custom\":null,\"units\":\"\",\"dataType\":\"\",\"retention\":0,\"max\":\"NaN\",\"min\":\"NaN\"}" >"$MNT/tsdb-meta/%00%00%01%00%00%01%00%00%09/name:ts_meta" &&
	api "$T/test?treeid=1&tsuids=000001000001000009" &&
	echo "{\"000001000001000009\":{\"branch\":null,\"meta\":null,\"messages\":[\"TSUID was missing a UID name: No such unique ID\"]}}" >expect &&
	is 200
'

test_expect_success 'handleTestTreeNotFound, handleTestMissingTreeId, handleTestQSMissingTSUIDs, handleTestPOSTMissingTSUIDs, handleTestBadMethod' '
	api "$T/test?treeid=3&tsuids=$S2" &&
	err 404 "Unable to locate tree: 3" >expect &&
	is 404 &&
	api "$T/test?tsuids=$S2" &&
	err 400 "Missing parameter <code>treeid</code>" >expect &&
	is 400 &&
	api $T/test -X POST -d "{\"tsuids\":[\"$S2\"]}" &&
	err 400 "Missing or invalid Tree ID" >expect &&
	is 400 &&
	api "$T/test?treeid=1" &&
	err 400 "Missing or empty TSUID list" >expect &&
	is 400 &&
	api $T/test -X POST -d "{\"treeId\":1}" &&
	is 400 &&
	api $T/test -X TRACE &&
	test "$(cat code)" = 405
'

test_expect_success 'a tree enabled (storeFailures): a meta made runs through it; branches and leaves stored as OpenTSDB stores them' '
	api "$T?treeid=1&enabled=true&store_failures=true&method_override=post" &&
	grep "\"enabled\":true" body &&
	api "/api/uid/tsmeta?m=sys.cpu.0%7Bhost=web01%7D&create=true" -X POST -d "{\"displayName\":\"S1\"}" &&
	test "$(cat code)" = 200 &&
	printf "t:branch\nt:tree\nt:tree_rule%%3A0%%3A0\nt:tree_rule%%3A1%%3A0\n" >expect &&
	ls "$R1" >out &&
	test_cmp expect out &&
	printf "{\"path\":{\"0\":\"ROOT\"},\"displayName\":\"ROOT\"}" >expect &&
	test_cmp expect "$R1/t:branch" &&
	B="$MNT/tsdb-tree/%00%01%06%BCLU" &&
	printf "t:branch\nt:leaf%%3A%%CB%%BF%%5B%%09\n" >expect &&
	ls "$B" >out &&
	test_cmp expect out &&
	printf "{\"path\":{\"0\":\"ROOT\",\"1\":\"web01\"},\"displayName\":\"web01\"}" >expect &&
	test_cmp expect "$B/t:branch" &&
	printf "{\"displayName\":\"sys.cpu.0\",\"tsuid\":\"$S1\"}" >expect &&
	test_cmp expect "$B/t:leaf%3A%CB%BF%5B%09"
'

test_expect_success 'handleBranchRoot, handleBranchChild (leaves with their names), handleBranchNotFound, handleBranchNoTree, handleBranchBadMethod' '
	api "$T/branch?treeid=1" &&
	echo "{\"leaves\":null,\"branches\":[{\"leaves\":null,\"branches\":null,\"path\":{\"0\":\"ROOT\",\"1\":\"web01\"},\"treeId\":1,\"branchId\":\"000106BC4C55\",\"depth\":1,\"displayName\":\"web01\"}],\"path\":{\"0\":\"ROOT\"},\"treeId\":1,\"branchId\":\"0001\",\"depth\":0,\"displayName\":\"ROOT\"}" >expect &&
	is 200 &&
	api "$T/branch?branch=000106BC4C55" &&
	echo "{\"leaves\":[{\"metric\":\"sys.cpu.0\",\"tags\":{\"host\":\"web01\"},\"tsuid\":\"$S1\",\"displayName\":\"sys.cpu.0\"}],\"branches\":null,\"path\":{\"0\":\"ROOT\",\"1\":\"web01\"},\"treeId\":1,\"branchId\":\"000106BC4C55\",\"depth\":1,\"displayName\":\"web01\"}" >expect &&
	is 200 &&
	api "$T/branch?branch=000106BC4C55BBBBB" &&
	err 404 "Unable to locate branch '"'"'0000106BC4C55BBBBB'"'"' for tree '"'"'0'"'"'" >expect &&
	is 404 &&
	api "$T/branch" &&
	err 400 "Missing or invalid branch and tree IDs" >expect &&
	is 400 &&
	api "$T/branch?branch=0001" -X TRACE &&
	test "$(cat code)" = 405
'

test_expect_success 'MNT/tsd/tree/: a tree, a rule and a branch read as the API answers them; bad names refused; read-only' '
	TR="$MNT/tsd/tree" &&
	api "$T?treeid=1" &&
	test_cmp body "$TR/treeid=1" &&
	api "$T/rule?treeid=1&level=1&order=0" &&
	test_cmp body "$TR/treeid=1&level=1&order=0" &&
	api "$T/branch?branch=000106BC4C55" &&
	test_cmp body "$TR/branch=000106BC4C55" &&
	api "$T/branch?treeid=1" &&
	test_cmp body "$TR/branch=0001" &&
	test_must_fail test -e "$TR/treeid=9" &&
	test_must_fail test -e "$TR/treeid=1&level=7&order=0" &&
	test_must_fail test -e "$TR/branch=000106BC4C56" &&
	test_must_fail test -e "$TR/treeid=x" &&
	test_must_fail test -e "$TR/treeid=1&level=1" &&
	test_must_fail test -e "$TR/bogus=1" &&
	ls "$TR" >out &&
	test_must_be_empty out &&
	test_must_fail sh -c "echo {} >>\"$TR/treeid=1\"" &&
	test_must_fail rm "$TR/treeid=1" &&
	test -e "$TR/treeid=1"
'

test_expect_success 'trees, rules, branches and leaves survive kill -9 and a remount' '
	TR="$MNT/tsd/tree" &&
	cat "$TR/treeid=1" "$TR/treeid=1&level=1&order=0" \
		"$TR/branch=0001" "$TR/branch=000106BC4C55" >before &&
	cellfs_kill9 &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	cat "$TR/treeid=1" "$TR/treeid=1&level=1&order=0" \
		"$TR/branch=0001" "$TR/branch=000106BC4C55" >after &&
	test_cmp before after &&
	grep -q "\"leaves\"" after
'

test_expect_success 'a second series on the same leaf is a collision (storeFailures: kept in the row ID 0x01); /api/tree/collisions' '
	api "/api/uid/tsmeta?tsuid=$S2" -X DELETE &&
	api "/api/uid/tsmeta?m=sys.cpu.0%7Bhost=web01,datacenter=dc01%7D&create=true" -X POST -d "{\"displayName\":\"S2\"}" &&
	test "$(cat code)" = 200 &&
	api "$T/collisions?treeid=1" &&
	echo "{\"$S2\":\"$S1\"}" >expect &&
	is 200 &&
	api "$T/branch?branch=000106BC4C55" &&
	grep "\"leaves\":\[{\"metric\":\"sys.cpu.0\",\"tags\":{\"host\":\"web01\"},\"tsuid\":\"$S1\"" body
'

test_expect_success 'setupCollisions, setupNotMatched: cells written into tsdb-tree as OpenTSDB writes them' '
	C="$MNT/tsdb-tree/%00%01%01" &&
	N="$MNT/tsdb-tree/%00%01%02" &&
	mkdir -p "$C" "$N" &&
	printf AAAAAA >"$C/t:tree_collision%3A%01%01%01" &&
	printf BBBBBB >"$C/t:tree_collision%3A%02%02%02" &&
	printf "Failed rule 0:0" >"$N/t:tree_not_matched%3A%01%01%01" &&
	printf "Failed rule 1:1" >"$N/t:tree_not_matched%3A%02%02%02"
'

test_expect_success 'handleCollissionsQS, handleCollissionsQSSingleTSUID, handleCollissionsQSTSUIDs, handleCollissionsQSTSUIDNotFound' '
	api "$T/collisions?treeid=1" &&
	echo "{\"$S2\":\"$S1\",\"010101\":\"AAAAAA\",\"020202\":\"BBBBBB\"}" >expect &&
	is 200 &&
	api "$T/collisions?treeid=1&tsuids=010101" &&
	echo "{\"010101\":\"AAAAAA\"}" >expect &&
	is 200 &&
	api "$T/collisions?treeid=1&tsuids=010101,020202" &&
	echo "{\"010101\":\"AAAAAA\",\"020202\":\"BBBBBB\"}" >expect &&
	is 200 &&
	api "$T/collisions?treeid=1&tsuids=030101" &&
	echo "{}" >expect &&
	is 200
'

test_expect_success 'handleCollissionsPOST, handleCollissionsPOSTSingleTSUID, handleCollissionsPOSTTSUIDs, handleCollissionsTreeNotFound, handleCollissionsMissingTreeId, handleCollissionsBadMethod' '
	api $T/collisions -X POST -d "{\"treeId\":1}" &&
	echo "{\"$S2\":\"$S1\",\"010101\":\"AAAAAA\",\"020202\":\"BBBBBB\"}" >expect &&
	is 200 &&
	api $T/collisions -X POST -d "{\"treeId\":1,\"tsuids\":[\"020202\"]}" &&
	echo "{\"020202\":\"BBBBBB\"}" >expect &&
	is 200 &&
	api $T/collisions -X POST -d "{\"treeId\":1,\"tsuids\":[\"010101\",\"020202\"]}" &&
	echo "{\"010101\":\"AAAAAA\",\"020202\":\"BBBBBB\"}" >expect &&
	is 200 &&
	api "$T/collisions?treeid=5" &&
	err 404 "Unable to locate tree: 5" >expect &&
	is 404 &&
	api "$T/collisions" &&
	err 400 "Missing parameter <code>treeid</code>" >expect &&
	is 400 &&
	api $T/collisions -X POST -d "{\"treeId\":1,\"tsuids\":\"010101\"}" &&
	err 400 "Unable to convert the given data to a list" >expect &&
	is 400 &&
	api "$T/collisions?treeid=1" -X TRACE &&
	test "$(cat code)" = 405
'

test_expect_success 'handleNotMatchedQS, handleNotMatchedQSSingleTSUID, handleNotMatchedQSTSUIDs, handleNotMatchedQSTSUIDNotFound' '
	api "$T/notmatched?treeid=1" &&
	echo "{\"010101\":\"Failed rule 0:0\",\"020202\":\"Failed rule 1:1\"}" >expect &&
	is 200 &&
	api "$T/notmatched?treeid=1&tsuids=010101" &&
	echo "{\"010101\":\"Failed rule 0:0\"}" >expect &&
	is 200 &&
	api "$T/notmatched?treeid=1&tsuids=010101,020202" &&
	echo "{\"010101\":\"Failed rule 0:0\",\"020202\":\"Failed rule 1:1\"}" >expect &&
	is 200 &&
	api "$T/notmatched?treeid=1&tsuids=030101" &&
	echo "{}" >expect &&
	is 200
'

test_expect_success 'handleNotMatchedPOST, handleNotMatchedPOSTSingleTSUID, handleNotMatchedPOSTTSUIDs, handleNotMatchedNotFound, handleNotMatchedMissingTreeId, handleNotMatchedBadMethod' '
	api $T/notmatched -X POST -d "{\"treeId\":1}" &&
	echo "{\"010101\":\"Failed rule 0:0\",\"020202\":\"Failed rule 1:1\"}" >expect &&
	is 200 &&
	api $T/notmatched -X POST -d "{\"treeId\":1,\"tsuids\":[\"020202\"]}" &&
	echo "{\"020202\":\"Failed rule 1:1\"}" >expect &&
	is 200 &&
	api $T/notmatched -X POST -d "{\"treeId\":1,\"tsuids\":[\"010101\",\"020202\"]}" &&
	echo "{\"010101\":\"Failed rule 0:0\",\"020202\":\"Failed rule 1:1\"}" >expect &&
	is 200 &&
	api "$T/notmatched?treeid=5" &&
	err 404 "Unable to locate tree: 5" >expect &&
	is 404 &&
	api $T/notmatched -X POST -d "{\"tsuids\":[\"010101\"]}" &&
	err 400 "Missing or invalid Tree ID" >expect &&
	is 400 &&
	api "$T/notmatched?treeid=1" -X TRACE &&
	test "$(cat code)" = 405
'

test_expect_success 'a strict tree (storeFailures): a series matching no rule of a level is kept out and recorded in the row ID 0x02' '
	api $T -X POST -d "{\"name\":\"Strict\",\"strictMatch\":true,\"enabled\":true,\"storeFailures\":true,\"created\":1356998400}" &&
	grep "\"treeId\":3" body &&
	api $T/rules -X POST -d "[{\"treeId\":3,\"level\":0,\"order\":0,\"type\":\"METRIC\"},{\"treeId\":3,\"level\":1,\"order\":0,\"type\":\"TAGK\",\"field\":\"dc\"}]" &&
	api "/api/uid/tsmeta?m=sys.cpu.0%7Bhost=web02%7D&create=true" -X POST -d "{\"displayName\":\"S3\"}" &&
	test "$(cat code)" = 200 &&
	api "$T/notmatched?treeid=3" &&
	echo "{\"$S3\":\"[3:1:0:TAGK]\"}" >expect &&
	is 200 &&
	test "$(ncols "$MNT/tsdb-tree/%00%03")" = 3 &&
	api "$T/test?treeid=3&tsuids=$S3" &&
	grep "\"branch\":null" body &&
	grep "TSUID failed to match one or more rule levels, will not add: $S3" body
'

test_expect_success 'handleTreeQSDeleteDefault, handleTreePOSTDeleteDefinition: branches, leaves, collisions, not matched go; the definition stays unless asked' '
	api "$T?treeid=1&method_override=delete" &&
	echo >expect &&
	is 204 &&
	printf "t:tree\nt:tree_rule%%3A0%%3A0\nt:tree_rule%%3A1%%3A0\n" >expect &&
	ls "$R1" >out &&
	test_cmp expect out &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%06%BCLU")" = 0 &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%01")" = 0 &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%02")" = 0 &&
	api "$T/branch?treeid=1" &&
	err 404 "Unable to locate branch '"'"'0001'"'"' for tree '"'"'1'"'"'" >expect &&
	is 404 &&
	api $T -X DELETE -d "{\"treeId\":3,\"definition\":true}" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$MNT/tsdb-tree/%00%03")" = 0 &&
	test "$(ncols "$R1")" = 3
'

test_expect_success 'a row of tsdb-tree with a 1-byte key (not one OpenTSDB writes) is passed over by the list of trees' '
	mkdir "$MNT/tsdb-tree/%05" &&
	printf "{}" >"$MNT/tsdb-tree/%05/t:tree" &&
	api $T &&
	test "$(cat code)" = 200 &&
	grep "\"treeId\":1," body &&
	grep "\"treeId\":2," body
'

test_expect_success 'tsd_realtime_ts: the first write of a new series makes its meta and runs it through the enabled trees' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_tsuid_tracking,tsd_realtime_ts" &&
	echo "sys.cpu.0 1356998400 1 host=web07" >>"$MNT/tsd/put" &&
	api "$T/branch?treeid=1" &&
	echo "{\"leaves\":null,\"branches\":[{\"leaves\":null,\"branches\":null,\"path\":{\"0\":\"ROOT\",\"1\":\"web07\"},\"treeId\":1,\"branchId\":\"000106BC4C5B\",\"depth\":1,\"displayName\":\"web07\"}],\"path\":{\"0\":\"ROOT\"},\"treeId\":1,\"branchId\":\"0001\",\"depth\":0,\"displayName\":\"ROOT\"}" >expect &&
	is 200 &&
	api "$T/branch?branch=000106BC4C5B" &&
	grep "\"leaves\":\[{\"metric\":\"sys.cpu.0\",\"tags\":{\"host\":\"web07\"},\"tsuid\":\"000001000001000004\",\"displayName\":\"sys.cpu.0\"}\]" body
'

test_expect_success 'tsd_tsuid_incrementing: the same at the first point of a new series' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_tsuid_tracking,tsd_realtime_ts,tsd_tsuid_incrementing" &&
	printf "sys.cpu.0 1356998400 1 host=web08\nsys.cpu.0 1356998401 1 host=web08\n" >>"$MNT/tsd/put" &&
	api "$T/branch?branch=000106BC4C5C" &&
	grep "\"tsuid\":\"000001000001000005\",\"displayName\":\"sys.cpu.0\"" body &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%06%BCL%5B")" = 2 &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%06%BCL%5C")" = 2
'

test_expect_success 'handleTreePOSTDeleteDefault: a DELETE body without definition removes the branches and leaves, the definition stays' '
	api $T -X DELETE -d "{\"treeId\":1}" &&
	echo >expect &&
	is 204 &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%06%BCL%5B")" = 0 &&
	test "$(ncols "$MNT/tsdb-tree/%00%01%06%BCL%5C")" = 0 &&
	printf "t:tree\nt:tree_rule%%3A0%%3A0\nt:tree_rule%%3A1%%3A0\n" >expect &&
	ls "$R1" >out &&
	test_cmp expect out
'

test_expect_success 'handleTreeQSCreateOutOfIDs: with tree 65535 stored, no tree can be made' '
	mkdir "$MNT/tsdb-tree/%FF%FF" &&
	printf "{}" >"$MNT/tsdb-tree/%FF%FF/t:tree" &&
	api "$T?method_override=post" &&
	err 400 "Tree was missing the name" >expect &&
	is 400 &&
	api "$T?name=Last&method_override=post" &&
	err 400 "Exhausted all Tree IDs" >expect &&
	is 400 &&
	api "$T?treeid=65535" &&
	tree 65535 "" "" "" false null >expect.t &&
	sed "s/1356998400/0/" expect.t >expect &&
	echo >>expect &&
	is 200
'

test_expect_success 'unmount' '
	cellfs_umount
'

test_done
