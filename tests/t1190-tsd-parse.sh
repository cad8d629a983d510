#!/bin/sh

test_description='cellfs: -o tsd_allow_specialchars=CHARS, OpenTSDB'"'"'s tsd.core.tag.allow_specialchars (TestTags.setAllowSpecialChars, validateString): the extra characters of names, in puts, queries and /api/config'

. /usr/share/sharness/sharness.sh
. "$SHARNESS_TEST_DIRECTORY/lib-cellfs.sh"

. "$SHARNESS_TEST_DIRECTORY/lib-http.sh"

T=1356998400

test_expect_success 'by default a name with ! is refused (validateBadString), /api/config says none' '
	HP=$($CLIENT port) &&
	cellfs_mount "tsd_http=$HP" &&
	$CLIENT wait $HP &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsd/put" "sp.m! $T 1 host=a" >out &&
	test_cmp expect out &&
	api /api/put -X POST -d "{\"metric\":\"sp.m!\",\"timestamp\":$T,\"value\":1,\"tags\":{\"host\":\"a\"}}" &&
	grep -q "^400" code &&
	api /api/config &&
	grep -q "\"tsd.core.tag.allow_specialchars\":\"\"" body &&
	cellfs_umount
'

test_expect_success 'a value that is not UTF-8: the mount fails with why' '
	test_must_fail "$CELLFS" -f -o "tsd_allow_specialchars=$(printf "\377")" "$DATA" "$MNT" 2>err &&
	grep "cellfs: bad value for tsd_allow_specialchars" err &&
	! cellfs_is_mounted
'

test_expect_success 'with tsd_allow_specialchars=!%: puts take them, queries read them, /api/config shows them' '
	cellfs_mount "tsd_http=$HP,tsd_allow_specialchars=!%" &&
	$CLIENT wait $HP &&
	echo "sp.m! $T 1 host=50%" >>"$MNT/tsd/put" &&
	api /api/put -X POST -d "{\"metric\":\"sp.m!\",\"timestamp\":$((T + 60)),\"value\":2,\"tags\":{\"host\":\"a!\"}}" &&
	grep -q "^204" code &&
	cat >expect <<-EOF &&
	sp.m! $T 1 host=50%
	sp.m! $((T + 60)) 2 host=a!
	EOF
	cat "$MNT/tsd/q/start=$T&m=none:sp.m!{host=*}" >out &&
	sort -k2 out >sorted && test_cmp expect sorted &&
	api "/api/query?start=$T&m=sum:sp.m!%7Bhost=50%25%7D" &&
	echo "[{\"metric\":\"sp.m!\",\"tags\":{\"host\":\"50%\"},\"aggregateTags\":[],\"dps\":{\"$T\":1}}]" >expect &&
	is 200 &&
	api /api/config &&
	grep -q "\"tsd.core.tag.allow_specialchars\":\"!%\"" body &&
	echo EINVAL >expect &&
	errno_of write "$MNT/tsd/put" "sp.m? $T 1 host=a" >out &&
	test_cmp expect out
'

test_expect_success 'a comma written \, in the option' '
	cellfs_umount &&
	cellfs_mount "tsd_http=$HP,tsd_allow_specialchars=!\\,%" &&
	$CLIENT wait $HP &&
	api /api/config &&
	grep -q "\"tsd.core.tag.allow_specialchars\":\"!,%\"" body &&
	echo "sp.c $T 1 host=a,b" >>"$MNT/tsd/put" &&
	echo "sp.c $T 1 host=a,b" >expect &&
	test_cmp expect "$MNT/tsd/metrics/sp.c"
'

test_done
