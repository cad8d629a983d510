/*
 * test-escape.c: key escaping of SPEC section 2, both ways, and every
 * kind of malformed name decoding refuses.
 */
#include <string.h>

#include "tests/tap.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/escape.h"

static int enc_is(const void *key, size_t len, const char *want)
{
	struct buf b = BUF_INIT;
	int r = cf_escape(key, len, &b) == CF_OK && b.len == strlen(want) &&
		(b.len == 0 || memcmp(b.p, want, b.len) == 0);
	buf_release(&b);
	return r;
}

static int dec_is(const char *name, const void *want, size_t wlen)
{
	struct buf b = BUF_INIT;
	int r = cf_unescape(name, strlen(name), &b) == CF_OK &&
		b.len == wlen && (wlen == 0 || memcmp(b.p, want, wlen) == 0);
	buf_release(&b);
	return r;
}

static int dec_rc(const char *name)
{
	struct buf b = BUF_INIT;
	int rc = cf_unescape(name, strlen(name), &b);
	buf_release(&b);
	return rc;
}

int main(void)
{
	unsigned char all[256];
	struct buf e = BUF_INIT, d = BUF_INIT;
	int i;

	plan(19);
	ok(enc_is("com.cnn.www", 11, "com.cnn.www"), "plain bytes stay");
	ok(enc_is("AZaz09-_.,=+~", 13, "AZaz09-_.,=+~"), "whole plain set");
	ok(enc_is(".x", 2, "%2Ex"), "leading dot escaped");
	ok(enc_is("@x@", 3, "%40x%40"), "@ always escaped");
	ok(enc_is("a b/%", 5, "a%20b%2F%25"), "space, slash, percent");
	ok(enc_is("\x00\xff", 2, "%00%FF"), "upper-case hex");
	ok(enc_is("", 0, ""), "empty key");
	ok(dec_is("a%20b%2F%25", "a b/%", 5), "decode escapes");
	ok(dec_is("%2E.x", "..x", 3), "decode leading dot");
	ok(dec_is("", "", 0), "decode empty");
	ok(dec_rc("%2f") == CF_EINVAL, "lower-case hex rejected");
	ok(dec_rc("ab%4") == CF_EINVAL, "truncated escape rejected");
	ok(dec_rc("%G0") == CF_EINVAL, "bad hex digit rejected");
	ok(dec_rc("a b") == CF_EINVAL, "raw space rejected");
	ok(dec_rc(".x") == CF_EINVAL, "raw leading dot rejected");
	ok(dec_rc("%41") == CF_EINVAL, "escaped plain byte rejected");
	ok(dec_rc("x@1") == CF_EINVAL, "raw @ rejected");

	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)(255 - i);
	ok(cf_escape(all, 256, &e) == CF_OK &&
	   cf_unescape((char *)e.p, e.len, &d) == CF_OK && d.len == 256 &&
	   memcmp(d.p, all, 256) == 0, "every byte round-trips");
	buf_reset(&d);
	ok(cf_unescape("%2E", 3, &d) == CF_OK && d.len == 1 && d.p[0] == '.',
	   "escaped leading dot decodes");
	buf_release(&e);
	buf_release(&d);
	return done_testing();
}
