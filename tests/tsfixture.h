/*
 * tsfixture.h: the deterministic cells of the store files under
 * tests/data/ (written by an older version of the code; test-sstcompat
 * reads them with today's and compares against these).
 *
 * tsfixture_cells(points, emit, arg) calls emit(key, klen, value, vlen,
 * arg) for each cell in key order: 3 metrics x 3 hours x 6 hosts, rows of
 * OpenTSDB's layout (3-byte metric, 4-byte hour, two tags), family t,
 * each one compacted column of `points` points (a counter, a two-decimal
 * gauge, and an integer gauge with a few millisecond points), then a
 * delete marker on a row of its own.  Header-only: each test program is
 * one translation unit.
 */
#ifndef CF_TESTS_TSFIXTURE_H
#define CF_TESTS_TSFIXTURE_H

#include <stdint.h>
#include <string.h>

#include "engine/key.h"
#include "tsd/codec.h"
#include "util/buf.h"
#include "util/coding.h"

typedef void tsfixture_emit(const unsigned char *k, size_t klen,
			    const unsigned char *v, size_t vlen, void *arg);

static uint64_t tsfixture_rs;

static uint64_t tsfixture_rnd(void)
{
	tsfixture_rs ^= tsfixture_rs << 13;
	tsfixture_rs ^= tsfixture_rs >> 7;
	tsfixture_rs ^= tsfixture_rs << 17;
	return tsfixture_rs;
}

static void tsfixture_cells(int points, tsfixture_emit *emit, void *arg)
{
	struct buf q = BUF_INIT, v = BUF_INIT, key = BUF_INIT;
	int64_t walk[3][6];

	tsfixture_rs = 0x2545F4914F6CDD1Dull;
	for (int m = 0; m < 3; m++)
		for (int h = 0; h < 6; h++)
			walk[m][h] = (int64_t)(tsfixture_rnd() % 1000000);
	for (int m = 0; m < 3; m++) {
		for (int hr = 0; hr < 3; hr++) {
			for (int h = 0; h < 6; h++) {
				unsigned char row[19];
				struct ikey k = { 0 };
				buf_reset(&q);
				buf_reset(&v);
				memset(row, 0, sizeof row);
				row[2] = (unsigned char)(m + 1);
				enc_u32be(row + 3, 1356998400u + 3600u * (uint32_t)hr);
				row[9] = 1;
				row[12] = (unsigned char)(h + 1);
				row[15] = 2;
				row[18] = (unsigned char)(h % 2 + 7);
				for (int i = 0; i < points; i++) {
					unsigned char qq[4], vv[8];
					unsigned flags;
					size_t vl, ql;
					int64_t ts = 1356998400 + 3600 * hr +
						     (3600 / points) * i;
					if (m == 0) {
						walk[m][h] += (int64_t)(tsfixture_rnd() % 5000);
						vl = tsd_value_encode_int(vv, walk[m][h], &flags);
					} else if (m == 1) {
						walk[m][h] += (int64_t)(tsfixture_rnd() % 501) - 250;
						vl = tsd_value_encode_float(vv, (double)walk[m][h] / 100, &flags);
					} else {
						vl = tsd_value_encode_int(vv, (int64_t)(tsfixture_rnd() % 300), &flags);
						if (i % 7 == 3)
							ts = ts * 1000 + (int64_t)(tsfixture_rnd() % 999);
					}
					ql = tsd_qualifier_build(qq, ts, flags);
					buf_append(&q, qq, ql);
					buf_append(&v, vv, vl);
				}
				buf_putc(&v, m == 2 ? 1 : 0);
				k.row = row;
				k.rowlen = sizeof row;
				k.fam = (const unsigned char *)"t";
				k.famlen = 1;
				k.qual = q.p;
				k.qlen = q.len;
				k.ts = 1700000000000 + m * 100 + hr * 10 + h;
				k.seq = (uint64_t)(1000 + m * 100 + hr * 10 + h);
				k.type = KT_PUT;
				buf_reset(&key);
				buf_reserve(&key, ikey_size(&k));
				key.len = ikey_encode(key.p, &k);
				emit(key.p, key.len, v.p, v.len, arg);
			}
		}
	}
	{
		unsigned char row[19];
		struct ikey k = { 0 };
		memset(row, 0xEE, sizeof row);
		k.row = row;
		k.rowlen = sizeof row;
		k.fam = (const unsigned char *)"t";
		k.famlen = 1;
		k.qual = (const unsigned char *)"\x00\x10";
		k.qlen = 2;
		k.ts = 1700000000000;
		k.seq = 5000;
		k.type = KT_DELETE;
		buf_reset(&key);
		buf_reserve(&key, ikey_size(&k));
		key.len = ikey_encode(key.p, &k);
		emit(key.p, key.len, NULL, 0, arg);
	}
	buf_release(&q);
	buf_release(&v);
	buf_release(&key);
}

#endif
