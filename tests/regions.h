/*
 * regions.h: what the region tests share (test-engine-regions,
 * test-engine-merge): fsck's report gathered into said[], and values
 * that do not compress, so that stores grow past their sizes.
 */
#ifndef CF_TESTS_REGIONS_H
#define CF_TESTS_REGIONS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/cellfs.h"

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

#endif
