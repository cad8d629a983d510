# lib-http.sh: helpers of the HTTP API tests, sourced after lib-cellfs.sh
# (a test without curl is skipped here).  HP is the port the daemon
# serves; $CLIENT port picks a free one, $CLIENT wait HP waits for it.

CLIENT="python3 $SHARNESS_TEST_DIRECTORY/tsd_client.py"
command -v curl >/dev/null || {
	skip_all="no curl"
	test_done
}

# api PATH [CURL-ARGS...]: status code in "code", the body (and a
# newline) in "body" (an answer without a body leaves just the newline),
# the headers in "hdr"
api() {
	p=$1 &&
	rm -f body &&
	shift &&
	curl -s -g -D hdr -o body -w "%{http_code}\n" "$@" \
		"http://127.0.0.1:$HP$p" >code &&
	echo >>body
}

# is CODE: the last status was CODE and the body is "expect"
is() {
	echo "$1" >expect.code &&
	test_cmp expect.code code &&
	test_cmp expect body
}

# nlines N FILE: FILE has N lines
nlines() {
	test "$(wc -l <"$2")" -eq "$1"
}
