/*
 * test-escape-fast.c: util/escape_fast.h writes exactly cf_escape()'s
 * bytes, in each of its ways (the dispatched one, plain words, SSE2
 * where built, and its vector way for names with bytes to escape):
 * every length to 80, every byte value at every position of a plain
 * name, leading dots, random names; nothing written past the end (past
 * the 16 bytes after it that the SSE2 ways may write over, within
 * CF_ESCAPE_ROOM), nothing read past the name (it ends at a page that
 * faults).
 */
#include <sys/mman.h>

#include "tests/tap.h"
#include "util/buf.h"
#include "util/escape.h"
#include "util/escape_fast.h"

#define MAXLEN 80
#define GUARD 16

typedef unsigned char *put_fn(unsigned char *d, const unsigned char *k,
			      size_t len);

static unsigned char *put_dispatch(unsigned char *d, const unsigned char *k,
				   size_t len)
{
	return cf_escape_put(d, k, len);
}

#if defined(__SSE2__)
#define SSE_SLACK 16
#else
#define SSE_SLACK 0
#endif

static const struct way {
	const char *name;
	put_fn *fn;
	size_t slack;	/* bytes past the end it may write */
} ways[] = {
	{ "cf_escape_put", put_dispatch, SSE_SLACK },
	{ "words", cf_escape_put_words, 0 },
#if defined(__SSE2__)
	{ "sse2", cf_escape_put_sse2, 16 },
	{ "vec", cf_escape_put_vec, 16 },
	{ "vec-sse2", cf_escape_put_vec_sse2, 16 },
#if defined(__x86_64__) || defined(__i386__)
	{ "vec-ssse3", cf_escape_put_vec_ssse3, 16 },
#endif
#endif
	{ "slow", cf_escape_put_slow, 0 },
};
#define NWAYS (sizeof ways / sizeof ways[0])

static unsigned char *page_end;	/* the end of a page before a fault */

/* 1 if each way writes cf_escape's bytes for key (copied to end at
 * page_end) and nothing past them; *why names the first that did not. */
static int same(const unsigned char *key, size_t len, const char **why)
{
	static unsigned char out[CF_ESCAPE_ROOM(MAXLEN) + GUARD];
	struct buf want = BUF_INIT;
	unsigned char *k = page_end - len, *e;
	size_t i, j;
	int r = 1;

	memcpy(k, key, len);
	if (cf_escape(key, len, &want))
		return 0;
	for (i = 0; i < NWAYS && r; i++) {
		if (!strcmp(ways[i].name, "vec-ssse3") &&
		    !__builtin_cpu_supports("ssse3"))
			continue;
		memset(out, 0xa5, sizeof out);
		e = ways[i].fn(out, k, len);
		r = (size_t)(e - out) == want.len &&
		    (!want.len || !memcmp(out, want.p, want.len));
		for (j = want.len + ways[i].slack; r && j < sizeof out; j++)
			r = out[j] == 0xa5;
		if (!r)
			*why = ways[i].name;
	}
	buf_release(&want);
	return r;
}

static unsigned char plain_byte(unsigned x)
{
	static const char set[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789-_.,=+~";
	return (unsigned char)set[x % (sizeof set - 1)];
}

int main(void)
{
	unsigned char key[MAXLEN], *map;
	const char *why = "";
	size_t len, pos, bad;
	unsigned v, seed = 1;
	long pg = sysconf(_SC_PAGESIZE);
	int i, r;

	plan(8);
	map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + pg, (size_t)pg, PROT_NONE))
		return 1;
	page_end = map + pg;

	for (len = 0, r = 1; len <= MAXLEN && r; len++) {
		for (pos = 0; pos < len; pos++)
			key[pos] = (unsigned char)"abcXYZ019"[pos % 9];
		r = same(key, len, &why);
	}
	ok(r, "letters and digits, every length 0-%d (%s)", MAXLEN, why);

	for (len = 1, r = 1, bad = 0; len <= MAXLEN && r; len++)
		for (pos = 0; pos < len && r; pos++)
			for (v = 0; v < 256 && r; v++) {
				for (i = 0; i < (int)len; i++)
					key[i] = (unsigned char)('a' + i % 26);
				key[pos] = (unsigned char)v;
				r = same(key, len, &why);
				bad = len * 1000 + pos;
			}
	ok(r, "every byte value at every position, lengths 1-%d (%s at "
	   "%zu)", MAXLEN, why, bad);

	for (len = 1, r = 1; len <= MAXLEN && r; len++) {
		for (pos = 0; pos < len; pos++)
			key[pos] = plain_byte((unsigned)pos * 7);
		key[0] = '.';
		r = same(key, len, &why);
		memset(key, '.', len);
		r = r && same(key, len, &why);
		key[0] = 'x';
		r = r && same(key, len, &why);
	}
	ok(r, "a leading dot escaped, dots elsewhere not (%s)", why);

	for (len = 1, r = 1; len <= MAXLEN && r; len++) {
		for (pos = 0; pos < len; pos++)
			key[pos] = plain_byte((unsigned)(pos * 31 + len));
		if (key[0] == '.')
			key[0] = '-';
		r = same(key, len, &why);
	}
	ok(r, "the whole plain set, every length (%s)", why);

	for (i = 0, r = 1; i < 200000 && r; i++) {
		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % (MAXLEN + 1);
		for (pos = 0; pos < len; pos++) {
			seed = seed * 1103515245u + 12345u;
			v = seed >> 16;
			/* mostly plain, some of everything */
			key[pos] = v % 8 ? plain_byte(v >> 3) :
				   (unsigned char)(v >> 3);
		}
		r = same(key, len, &why);
	}
	ok(r, "200000 random names (%s)", why);

	for (i = 0, r = 1; i < 200000 && r; i++) {
		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % (MAXLEN + 1);
		for (pos = 0; pos < len; pos++) {
			seed = seed * 1103515245u + 12345u;
			key[pos] = (unsigned char)(' ' + (seed >> 16) % 95);
		}
		r = same(key, len, &why);
	}
	ok(r, "200000 random printable names, db_bench's values (%s)", why);

	for (v = 0, r = 1; v < 256 && r; v++) {
		for (len = 1; len <= 40 && r; len++) {
			memset(key, (int)v, len);
			r = same(key, len, &why);
		}
	}
	ok(r, "names of one byte value repeated, every value (%s)", why);

	{
		static const unsigned char bin[] = {
			0x00, 0xff, 0x80, 0x7f, 0x20, 0x25, 0x2f, 0x3a,
			0x40, 0x5b, 0x60, 0x7b, 0x2a, 0x3c, 0x3e, 0x5e,
			0x7c, 0x7d, 0x0a, 0x09, 0xc3, 0xa9, 0x2e, 0x2b };
		r = same(bin, sizeof bin, &why);
	}
	ok(r, "binary bytes around every range's ends (%s)", why);
	munmap(map, (size_t)pg * 2);
	return done_testing();
}
