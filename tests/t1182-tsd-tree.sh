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
	echo "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP method [TRACE] is not permitted for this endpoint\"}}" >expect &&
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
	test "$c" -ge "$before" && test "$c" -le "$after" &&
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

test_done
