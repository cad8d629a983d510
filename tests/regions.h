/*
 * regions.h: what the region tests share (test-engine-regions,
 * test-engine-merge): fsck's report gathered into said[], values that
 * do not compress, so that stores grow past their sizes, and the check
 * that every row written reads back.
 */
#ifndef CF_TESTS_REGIONS_H
#define CF_TESTS_REGIONS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/cellfs.h"
#include "tests/tap.h"

static char said[65536];

/* cf_check's report callback: each problem a line of said[] */
static void say(void *arg, enum cf_check_kind kind, const char *path,
		const char *what)
{
	size_t n = strlen(said);
	(void)arg;
	snprintf(said + n, sizeof said - n, "%s: %s%s\n", path,
		 kind == CF_CHECK_DEBRIS ? "debris: " : "", what);
}

/* Row i's value: 100 bytes no codec shrinks, its number first. */
static void value_of(int i, char *v, size_t *n)
{
	uint32_t x = (uint32_t)i * 2654435761u + 1;
	int len = snprintf(v, 160, "value-%06d-", i);

	while (len < 100) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		v[len++] = (char)('!' + x % 90);
	}
	*n = (size_t)len;
}

/* Rows row000000.. of [0, rows), each once and in order with its value
 * (a scan), and every 97th by a get; 0 with a diag naming why. */
static int check_all(cf_table *t, int rows, const char *why)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
	cf_scanner *s;
	const cf_row *r;
	int n = 0, bad = 0;
	char prev[32] = "";

	if (cf_scan_open(t, &so, &s))
		return 0;
	while (!bad && cf_scan_next(s, &r) == CF_OK && r) {
		size_t kl, vl;
		const unsigned char *k = cf_row_key(r, &kl);
		char key[32], v[160];
		snprintf(key, sizeof key, "row%06d", n);
		value_of(n, v, &vl);
		if (kl != strlen(key) || memcmp(k, key, kl) ||
		    cf_row_count(r) != 1 || cf_row_cell(r, 0)->vlen != vl ||
		    memcmp(cf_row_cell(r, 0)->val, v, vl)) {
			diag("%s: row %d is %.*s (after %s)", why, n, (int)kl,
			     k, prev);
			bad = 1;
		}
		snprintf(prev, sizeof prev, "%.*s", (int)kl, k);
		n++;
	}
	cf_scan_close(s);
	if (!bad && n != rows) {
		diag("%s: %d rows scanned, want %d", why, n, rows);
		bad = 1;
	}
	/* and each row by a get */
	for (int i = 0; i < rows && !bad; i += 97) {
		char key[32], v[160];
		size_t vl;
		cf_row *row;
		snprintf(key, sizeof key, "row%06d", i);
		value_of(i, v, &vl);
		if (cf_table_get(t, key, strlen(key), NULL, &row) ||
		    cf_row_count(row) != 1 ||
		    memcmp(cf_row_cell(row, 0)->val, v, vl)) {
			diag("%s: get row %d", why, i);
			bad = 1;
		}
		cf_row_free(row);
	}
	return !bad;
}

#endif
