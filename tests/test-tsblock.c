/*
 * test-tsblock.c: the TSDB block encoding (util/tsblock.c) under a model:
 * random OpenTSDB columns (built by tsd/codec.c as the daemon builds them,
 * and by hand for what old writers or other tools leave: non-minimal
 * integers, 3-byte integers, floats on 4 bytes, NaN, -0.0, infinities,
 * signalling NaNs, odd meta bytes) and garbage, each encoded and decoded
 * byte-exact; whole blocks of such cells through block_builder, the
 * encoder, block_seal and block_decode; the encoder's own fallbacks; and
 * damaged encodings, which must decode to CF_ECORRUPT or to something,
 * never out of bounds (run it under ASan).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/block.h"
#include "engine/key.h"
#include "tests/tap.h"
#include "tsd/codec.h"
#include "util/buf.h"
#include "util/coding.h"
#include "util/err.h"
#include "util/tsblock.h"

static uint64_t rs = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* --- columns ---------------------------------------------------------- */

enum kind {
	KIND_INT, KIND_DEC2, KIND_FLOAT4, KIND_RANDBITS, KIND_SPECIAL,
	KIND_WIDEINT, KIND_ODDINT, KIND_COUNT,
	/* only through forced_kind, after the tests that draw kinds */
	KIND_HUGEINT = KIND_COUNT, KIND_STEADY
};

/* Appends one point's value of kind k; returns its flags. */
static unsigned value(enum kind k, int64_t *walk, unsigned char *v,
		      size_t *vlen)
{
	unsigned flags;
	double d;
	uint64_t b;

	switch (k) {
	case KIND_INT:		/* a counter or gauge, minimal width */
		*walk += (int64_t)below((uint64_t)1 << below(40)) - (1 << 10);
		*vlen = tsd_value_encode_int(v, *walk, &flags);
		return flags;
	case KIND_DEC2:		/* a two-decimal gauge, as tsd/ stores it */
		*walk += (int64_t)below(501) - 250;
		*vlen = tsd_value_encode_float(v, (double)*walk / 100, &flags);
		return flags;
	case KIND_FLOAT4: {	/* an old writer's float on 4 bytes */
		float f = (float)((double)(int64_t)below(100000) / 10);
		uint32_t u;
		memcpy(&u, &f, 4);
		enc_u32be(v, u);
		*vlen = 4;
		return 0xB;
	}
	case KIND_RANDBITS:	/* any double */
		b = rnd();
		enc_u64be(v, b);
		*vlen = 8;
		return 0xF;
	case KIND_SPECIAL: {
		static const uint64_t sp[] = {
			0x7ff8000000000000u,	/* NaN */
			0x7ff0000000000001u,	/* signalling NaN */
			0x8000000000000000u,	/* -0.0 */
			0x7ff0000000000000u,	/* inf */
			0xfff0000000000000u,	/* -inf */
			0x0000000000000001u,	/* denormal */
		};
		size_t i = below(sizeof sp / sizeof sp[0] + 2);
		if (i >= sizeof sp / sizeof sp[0]) {	/* float NaNs */
			enc_u32be(v, i & 1 ? 0x7fc00000u : 0x7f800001u);
			*vlen = 4;
			return 0xB;
		}
		enc_u64be(v, sp[i]);
		*vlen = 8;
		return 0xF;
	}
	case KIND_WIDEINT:	/* an old writer's 8-byte small integer */
		*walk += (int64_t)below(100);
		enc_u64be(v, (uint64_t)*walk);
		*vlen = 8;
		return 0x7;
	case KIND_ODDINT:	/* a 3-, 5-, 6- or 7-byte integer */
		*vlen = 3 + below(5);
		if (*vlen == 4)
			*vlen = 3;
		for (size_t i = 0; i < *vlen; i++)
			v[i] = (unsigned char)rnd();
		return (unsigned)*vlen - 1;
	case KIND_HUGEINT:	/* any 64-bit integer: ranges past 2^57 */
		*vlen = tsd_value_encode_int(v, (int64_t)rnd(), &flags);
		return flags;
	case KIND_STEADY:	/* mostly one step, now and then another */
		*walk += below(8) ? 7 : (int64_t)below(1000);
		*vlen = tsd_value_encode_int(v, *walk, &flags);
		return flags;
	default:
		break;
	}
	d = 0;
	(void)d;
	return 0;
}

/* When >= 0, the kind of every column (test_groups). */
static int forced_kind = -1;

/* A random column: n points, timestamps in s, ms or both, values of one
 * kind or mixed, with or without the meta byte.  canon: only what tsd/
 * writes (ints, two-decimal floats, s or ms). */
static void column(struct buf *q, struct buf *v, int canon)
{
	size_t n = below(4) == 0 ? 1 : 1 + below(420);
	int units = (int)below(3);	/* 0 s, 1 ms, 2 mixed */
	enum kind k = canon ? (enum kind)below(2) : (enum kind)below(KIND_COUNT);
	int mixed = !canon && below(4) == 0 && forced_kind < 0;
	int64_t walk = (int64_t)below(1u << 30) - (1 << 29);
	uint32_t ms = (uint32_t)below(1000), step = 1 + (uint32_t)below(10000);
	int regular = below(2) == 0;

	buf_reset(q);
	buf_reset(v);
	for (size_t i = 0; i < n; i++) {
		unsigned char val[8], qq[4];
		size_t vlen = 0;
		unsigned flags;
		int is_ms = units == 1 || (units == 2 && below(2));

		if (mixed)
			k = (enum kind)below(KIND_COUNT);
		if (forced_kind >= 0)
			k = (enum kind)forced_kind;
		flags = value(k, &walk, val, &vlen);
		ms += regular ? step : 1 + (uint32_t)below(2 * step);
		if (ms >= 3600000)
			ms = 3599999;
		if (is_ms) {
			enc_u32be(qq, 0xF0000000u | ms << 6 | flags);
			buf_append(q, qq, 4);
		} else {
			uint32_t s = ms / 1000;
			qq[0] = (unsigned char)(s >> 4);
			qq[1] = (unsigned char)(s << 4 | flags);
			buf_append(q, qq, 2);
		}
		buf_append(v, val, vlen);
	}
	if (n > 1 || below(8) == 0) {
		int meta = units == 2 ? 1 : 0;
		if (!canon && below(8) == 0)
			meta = (int)below(256);
		buf_putc(v, meta);
	}
}

static int roundtrip(const struct buf *q, const struct buf *v, int *coded)
{
	struct buf e = BUF_INIT, dq = BUF_INIT, dv = BUF_INIT;
	const unsigned char *p;
	int rc, good = 1;

	rc = tsblock_cell_encode(q->p, q->len, v->p, v->len, &e);
	*coded = rc == CF_OK;
	if (rc == CF_EINVAL) {
		good = e.len == 0;
	} else if (rc == CF_OK) {
		p = e.p;
		good = tsblock_cell_decode(&p, e.p + e.len, q->len / 2, &dq,
					   &dv) == CF_OK &&
		       p == e.p + e.len && dq.len == q->len &&
		       dv.len == v->len && memcmp(dq.p, q->p, q->len) == 0 &&
		       memcmp(dv.p, v->p, v->len) == 0;
	} else {
		good = 0;
	}
	buf_release(&e);
	buf_release(&dq);
	buf_release(&dv);
	return good;
}

static void test_columns(void)
{
	struct buf q = BUF_INIT, v = BUF_INIT;
	int bad = 0, coded = 0, c, canon_refused = 0;

	for (int i = 0; i < 3000; i++) {
		column(&q, &v, 1);
		if (!roundtrip(&q, &v, &c))
			bad++;
		canon_refused += !c;
	}
	is_int(bad, 0, "3000 columns as tsd/ writes them round-trip");
	is_int(canon_refused, 0, "and every one is encoded (none verbatim)");
	bad = 0;
	for (int i = 0; i < 5000; i++) {
		column(&q, &v, 0);
		if (!roundtrip(&q, &v, &c))
			bad++;
		coded += c;
	}
	is_int(bad, 0, "5000 columns of every value kind round-trip");
	is_int(coded, 5000, "and every one is encoded (none verbatim)");
	bad = 0;
	for (int i = 0; i < 5000; i++) {
		size_t ql = below(40), vl = below(60);
		buf_reset(&q);
		buf_reset(&v);
		for (size_t j = 0; j < ql; j++)
			buf_putc(&q, (int)rnd());
		for (size_t j = 0; j < vl; j++)
			buf_putc(&v, (int)rnd());
		if (!roundtrip(&q, &v, &c))
			bad++;
	}
	is_int(bad, 0, "5000 garbage cells: encoded exactly or refused");
	buf_release(&q);
	buf_release(&v);
}

/* Columns compacted by tsd/codec.c from single cells, as the daemon's
 * compaction makes them, mixed s and ms. */
static void test_compacted(void)
{
	struct tsd_rawcell cells[64];
	unsigned char qs[64][4], vs[64][8];
	struct buf q = BUF_INIT, v = BUF_INIT;
	int bad = 0, refused = 0, c;

	for (int r = 0; r < 300; r++) {
		size_t n = 2 + below(60), np;
		for (size_t i = 0; i < n; i++) {
			int64_t ts = below(2) ? 1356998400 + (int64_t)below(3600)
					      : INT64_C(1356998400000) +
							(int64_t)below(3600000);
			unsigned flags;
			size_t vl = below(2) ? tsd_value_encode_int(
						       vs[i], (int64_t)rnd() >> below(64),
						       &flags)
					     : tsd_value_encode_float(
						       vs[i], (double)(int64_t)below(100000) / 100,
						       &flags);
			cells[i].qlen = tsd_qualifier_build(qs[i], ts, flags);
			cells[i].q = qs[i];
			cells[i].v = vs[i];
			cells[i].vlen = vl;
			cells[i].version = (int64_t)i;
		}
		buf_reset(&q);
		buf_reset(&v);
		if (tsd_compact_cells(cells, n, &q, &v, &np))
			bail("tsd_compact_cells");
		if (!roundtrip(&q, &v, &c))
			bad++;
		refused += !c;
	}
	is_int(bad, 0, "300 rows compacted by tsd/ round-trip");
	is_int(refused, 0, "and all are encoded");
	buf_release(&q);
	buf_release(&v);
}

static void hexs(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
}

/* The layout, pinned on docs/tsd_format.md's example and on a regular
 * column (docs/tsblock_format.md works both through). */
static void test_vectors(void)
{
	/* 1 at +0 s, 2 at +1 s, 3 at +2.5 s */
	static const unsigned char q1[] = { 0x00, 0x00, 0x00, 0x10,
					    0xF0, 0x02, 0x71, 0x00 };
	static const unsigned char v1[] = { 1, 2, 3, 1 };
	unsigned char q2[720], v2[361];
	struct buf e = BUF_INIT;
	char h[256];

	is_int(tsblock_cell_encode(q1, sizeof q1, v1, sizeof v1, &e), CF_OK,
	       "the example of docs/tsd_format.md encodes");
	hexs(e.p, e.len, h);
	is_str(h, "27060602000ee8070000d00f0a0202", "as documented");
	/* 360 points every 10 s, all 42 as 1-byte integers (a status) */
	for (int i = 0; i < 360; i++) {
		q2[2 * i] = (unsigned char)((10 * i) >> 4);
		q2[2 * i + 1] = (unsigned char)((10 * i) << 4);
		v2[i] = 42;
	}
	v2[360] = 0;
	buf_reset(&e);
	is_int(tsblock_cell_encode(q2, sizeof q2, v2, sizeof v2, &e), CF_OK,
	       "a regular hour of counters encodes");
	hexs(e.p, e.len, h);
	is_str(h, "23d0050514000954", "in 8 bytes (1081 raw), as documented");
	buf_release(&e);
}

/* A block of the encoding's version 1 (what files written before
 * version 2 hold; docs/tsblock_format.md's example cell, as that version
 * stored it) still decodes to its raw block. */
static void test_version1(void)
{
	static const unsigned char q1[] = { 0x00, 0x00, 0x00, 0x10,
					    0xF0, 0x02, 0x71, 0x00 };
	static const unsigned char v1[] = { 1, 2, 3, 1 };
	static const unsigned char cell1[] = {
		0x03, 0x27, 0x00, 0x01, 0x00, 0x01, 0x04, 0x02, 0x00, 0x00,
		0xd0, 0x0f, 0xe8, 0x07, 0x01, 0x00, 0x02, 0x02
	};
	struct ikey k = { (const unsigned char *)"row", 3,
			  (const unsigned char *)"t", 1, q1, sizeof q1,
			  1700000000000, 42, KT_PUT };
	struct block_builder bb;
	struct buf e = BUF_INIT;
	unsigned char key[64], d[256];
	const unsigned char *raw;
	size_t n, klen = ikey_encode(key, &k);

	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	block_builder_add(&bb, key, klen, v1, sizeof v1);
	block_builder_finish(&bb, &raw, &n);
	/* version 1, rawlen, 1 entry, interval 16; a cell: head (shared 0,
	 * 7 bytes: 00 03 "row" 01 "t"), zz(ts'), zz(seqtype), the cell */
	buf_putc(&e, 1);
	buf_put_varint(&e, n);
	buf_putc(&e, 1);
	buf_putc(&e, 16);
	buf_putc(&e, 1);
	buf_putc(&e, 0);
	buf_putc(&e, 7);
	buf_append(&e, key, 7);
	buf_put_varint(&e, (dec_u64be(key + klen - 16) << 1) ^
			   (0 - (dec_u64be(key + klen - 16) >> 63)));
	buf_put_varint(&e, dec_u64be(key + klen - 8) << 1);
	buf_append(&e, cell1, sizeof cell1);
	ok(n <= sizeof d && tsblock_decode(e.p, e.len, d, n) == CF_OK &&
	   memcmp(d, raw, n) == 0,
	   "a block of version 1 decodes to its raw block");
	block_builder_release(&bb);
	buf_release(&e);
}

/* --- blocks ----------------------------------------------------------- */

/* A block of tsdb-like cells (and delete markers, and keys that are not
 * internal keys when odd): each row key made of a metric, an hour and
 * a tag, family t. */
static void make_block(struct block_builder *bb, int odd)
{
	struct buf q = BUF_INIT, v = BUF_INIT;
	unsigned char key[2048];
	size_t nrows = 1 + below(60);

	block_builder_reset(bb);
	for (size_t r = 0; r < nrows; r++) {
		struct ikey k = { 0 };
		unsigned char row[13];
		size_t n;
		memset(row, 0, sizeof row);
		row[2] = (unsigned char)(r / 20);
		enc_u32be(row + 3, 1356998400u + 3600u * (uint32_t)(r % 3));
		row[9] = (unsigned char)r;
		row[12] = (unsigned char)below(4);
		column(&q, &v, below(2));
		k.row = row;
		k.rowlen = sizeof row;
		k.fam = (const unsigned char *)"t";
		k.famlen = 1;
		k.qual = q.p;
		k.qlen = q.len;
		k.ts = 1700000000000 + (int64_t)below(100000);
		k.seq = 1000 + r;
		k.type = below(10) == 0 ? KT_DELETE : KT_PUT;
		n = ikey_encode(key, &k);
		if (odd && below(5) == 0) {
			/* not an internal key: a bad row length */
			key[0] = 0xFF;
		}
		block_builder_add(bb, key, n, v.p,
				  k.type == KT_PUT ? v.len : 0);
	}
	buf_release(&q);
	buf_release(&v);
}

static void test_blocks(void)
{
	struct block_builder bb;
	struct buf e = BUF_INIT, sealed = BUF_INIT;
	const unsigned char *raw;
	size_t n, stored, smaller = 0;
	int bad = 0, refused = 0, unreadable = 0;

	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	for (int i = 0; i < 200; i++) {
		unsigned char *d;
		size_t rl;
		int rc;

		make_block(&bb, i % 2);
		if (block_builder_finish(&bb, &raw, &n))
			bail("finish");
		buf_reset(&e);
		rc = tsblock_encode(raw, n, &e);
		if (rc != CF_OK) {
			refused++;
			continue;
		}
		smaller += e.len < n;
		d = malloc(n);
		if (!d || tsblock_raw_size(e.p, e.len, &rl) || rl != n ||
		    tsblock_decode(e.p, e.len, d, n) || memcmp(d, raw, n))
			bad++;
		free(d);
		/* and through the engine's seal and decode */
		buf_reset(&sealed);
		if (block_seal(raw, n, BLOCK_ZSTD, BLOCK_ENC_TSDB, &sealed,
			       &stored) == CF_OK) {
			struct block *b;
			if (block_decode(sealed.p, stored, &b) != CF_OK ||
			    b->size != n || memcmp(b->data, raw, n))
				unreadable++;
			else
				block_free(b);
		} else {
			unreadable++;
		}
	}
	is_int(refused, 0, "200 blocks of tsdb cells: every one encodes");
	is_int(bad, 0, "and decodes byte-exact");
	is_int(smaller, 200, "each smaller than the raw block");
	is_int(unreadable, 0, "block_seal(ZSTD, TSDB) then block_decode: "
	       "the same block");

	/* the empty block, a block of single points, and one that
	 * block_builder would not write (a shared prefix shorter than it
	 * could be): refused, not mangled */
	block_builder_reset(&bb);
	block_builder_finish(&bb, &raw, &n);
	buf_reset(&e);
	is_int(tsblock_encode(raw, n, &e), CF_EINVAL,
	       "the empty block is not worth encoding: refused");
	{
		/* 100 single points of one row, as a flush writes them */
		unsigned char key[64], q[2], v = 7;
		struct ikey k = { (const unsigned char *)"row", 3,
				  (const unsigned char *)"t", 1, q, 2, 1, 1,
				  KT_PUT };
		block_builder_reset(&bb);
		for (int i = 0; i < 100; i++) {
			q[0] = (unsigned char)(i >> 4);
			q[1] = (unsigned char)(i << 4);
			block_builder_add(&bb, key, ikey_encode(key, &k), &v, 1);
		}
		block_builder_finish(&bb, &raw, &n);
		buf_reset(&e);
		is_int(tsblock_encode(raw, n, &e), CF_EINVAL,
		       "a block of single points is stored as it is");
	}
	{
		static const unsigned char odd[] = {
			0, 1, 1, 'a', 'x',	/* key "a" */
			0, 2, 1, 'a', 'b', 'y',	/* "ab": shared 0, not 1 */
			0, 0, 0, 0, 1, 0, 0, 0
		};
		buf_reset(&e);
		is_int(tsblock_encode(odd, sizeof odd, &e), CF_EINVAL,
		       "a block not in block_builder's layout is refused");
		is_int(e.len, 0, "leaving nothing behind");
	}
	block_builder_release(&bb);
	buf_release(&e);
	buf_release(&sealed);
}

/* Every truncation and many byte flips of an encoded block decode to
 * CF_ECORRUPT or to some block, within bounds (ASan is the judge). */
static void test_damage(void)
{
	struct block_builder bb;
	struct buf e = BUF_INIT;
	const unsigned char *raw;
	size_t n;
	int weird = 0, corrupt = 0;

	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	make_block(&bb, 0);
	block_builder_finish(&bb, &raw, &n);
	if (tsblock_encode(raw, n, &e))
		bail("encode");
	for (size_t cut = 0; cut < e.len; cut++) {
		size_t rl;
		if (tsblock_raw_size(e.p, cut, &rl) == CF_OK && rl == n) {
			unsigned char *d = malloc(n);
			int rc = tsblock_decode(e.p, cut, d, n);
			corrupt += rc == CF_ECORRUPT;
			weird += rc != CF_ECORRUPT;
			free(d);
		}
	}
	is_int(weird, 0, "every truncation: CF_ECORRUPT (%d seen)", corrupt);
	weird = 0;
	for (int i = 0; i < 3000; i++) {
		struct buf m = BUF_INIT;
		size_t rl;
		buf_append(&m, e.p, e.len);
		for (int f = 0; f < 1 + (int)below(4); f++)
			m.p[below(m.len)] ^= (unsigned char)(1 + below(255));
		if (tsblock_raw_size(m.p, m.len, &rl) == CF_OK &&
		    rl < (1u << 24)) {
			unsigned char *d = malloc(rl ? rl : 1);
			int rc = tsblock_decode(m.p, m.len, d, rl);
			weird += rc != CF_OK && rc != CF_ECORRUPT;
			free(d);
		}
		buf_release(&m);
	}
	is_int(weird, 0, "3000 damaged encodings: CF_OK or CF_ECORRUPT");
	block_builder_release(&bb);
	buf_release(&e);
}

/* Columns whose numbers span more than 2^57 (coded one at a time) and
 * columns of one step with now and then another (kept out of groups),
 * beside the evenly spread ones of the tests above (in groups). */
static void test_groups(void)
{
	struct buf q = BUF_INIT, v = BUF_INIT;
	int bad = 0, coded = 0, c;

	for (int kind = KIND_HUGEINT; kind <= KIND_STEADY; kind++) {
		forced_kind = kind;
		for (int i = 0; i < 1000; i++) {
			column(&q, &v, 0);
			bad += !roundtrip(&q, &v, &c);
			coded += c;
		}
	}
	forced_kind = -1;
	is_int(bad, 0, "2000 columns of 64-bit and of steady integers "
	       "round-trip");
	is_int(coded, 2000, "and every one is encoded");
	buf_release(&q);
	buf_release(&v);
}

/*
 * Version 3 (what the encoder writes) under the model, kind by kind:
 * blocks whose every column is of one value kind (ints of every width,
 * two-decimal and 4-byte floats, any doubles, NaN and the other special
 * values, 3- to 8-byte integers, huge and steady integers; s, ms and
 * mixed qualifiers drawn by column()), and blocks of mixed kinds and
 * mixed rows.  Row keys change in the same two bytes from one row to
 * the next (the changes go in the cells' streams), and the versions
 * step regularly or not, so every predicted field of a cell and of its
 * entry is taken from the one before: such entries go in runs, each
 * cell's stream after the previous one's.  Each block encodes (version
 * 3), decodes byte-exact, and every truncation of it is CF_ECORRUPT.
 *
 * The shapes of make_block3 beside that one (S3_PLAIN): S3_BROKEN, up to
 * 80 rows (runs across restart points) whose runs are broken now and
 * then, after one entry or more, by a row key that changes elsewhere, a
 * second column of the same row, a cell of one point (verbatim) or a
 * delete marker; S3_EMPTY, rows of 0 bytes; S3_LONG, row keys of 200 to
 * 1500 bytes, mostly zero bytes, that change past byte 255.
 */
enum { S3_PLAIN, S3_BROKEN, S3_EMPTY, S3_LONG, S3_COUNT };

static void make_block3(struct block_builder *bb, int canon, int shape)
{
	struct buf q = BUF_INIT, v = BUF_INIT;
	static unsigned char key[8192], row[2048];
	size_t nrows = shape == S3_BROKEN ? 2 + below(80) : 2 + below(30);
	size_t rowlen = shape == S3_EMPTY ? 0
			: shape == S3_LONG ? 200 + below(1301) : 19;
	int steady = below(2) == 0;
	unsigned char hi = 0;

	memset(row, 0, sizeof row);
	for (size_t i = 0; shape == S3_LONG && i < rowlen / 8; i++)
		row[below(rowlen)] = (unsigned char)(1 + below(255));
	block_builder_reset(bb);
	for (size_t r = 0; r < nrows; r++) {
		struct ikey k = { 0 };
		int brk = shape == S3_BROKEN ? (int)below(8) : 0;
		if (rowlen == 19) {
			row[2] = 5;
			enc_u32be(row + 3, 1356998400u);
			row[12] = (unsigned char)(r * 3);
			row[18] = (unsigned char)(r % 4);
			/* a change elsewhere: the run ends, the next
			 * entry starts one (a run of one when it breaks
			 * again) */
			if (brk == 1)
				row[8] = ++hi;
		} else if (shape == S3_LONG) {
			row[rowlen - 1] = (unsigned char)r;
			row[rowlen / 2 + 1] = (unsigned char)(r * 7);
		}
		column(&q, &v, canon);
		if (brk == 2 && q.len > 4) {
			/* a cell of one point: kept verbatim */
			q.len = 2;
			v.len = (q.p[1] & 7) + 1u;
		}
		k.row = row;
		k.rowlen = rowlen;
		k.fam = (const unsigned char *)"t";
		k.famlen = 1;
		k.qual = q.p;
		k.qlen = q.len;
		k.ts = 1700000000000 + (int64_t)(steady ? r / 4
							: below(100000));
		k.seq = 1000 + (steady ? 0x100 * r : below(1u << 30));
		k.type = KT_PUT;
		if (brk == 3) {
			/* a delete marker of the family first */
			struct ikey d = k;
			d.qlen = 0;
			d.type = KT_DELETE_FAMILY;
			block_builder_add(bb, key, ikey_encode(key, &d), NULL,
					  0);
		}
		block_builder_add(bb, key, ikey_encode(key, &k), v.p, v.len);
		if (brk == 4 && q.len >= 2 && q.p[0] < 0xF0 && r + 1 < nrows) {
			/* a second column of the row (the head repeats:
			 * no change) */
			struct ikey c = k;
			unsigned char q2[2] = { 0xEF, 0xF0 };
			c.qual = q2;
			c.qlen = 2;
			block_builder_add(bb, key, ikey_encode(key, &c),
					  (const unsigned char *)"\x01", 1);
		}
	}
	buf_release(&q);
	buf_release(&v);
}

static void test_version3(void)
{
	struct block_builder bb;
	struct buf e = BUF_INIT;
	int bad = 0, refused = 0, notv3 = 0, trunc = 0, blocks = 0;
	size_t raw_dec = 0, enc_dec = 0;

	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	for (int kind = -1; kind <= KIND_STEADY; kind++) {
		forced_kind = kind;
		for (int i = 0; i < 40; i++) {
			const unsigned char *raw;
			unsigned char *d;
			size_t n, rl;

			make_block3(&bb, kind < 0 && i % 2, i % S3_COUNT);
			if (block_builder_finish(&bb, &raw, &n))
				bail("finish");
			buf_reset(&e);
			blocks++;
			if (tsblock_encode(raw, n, &e) != CF_OK) {
				refused++;
				continue;
			}
			notv3 += e.p[0] != 3;
			if (kind == KIND_DEC2 || kind == KIND_WIDEINT ||
			    kind == KIND_STEADY) {
				raw_dec += n;
				enc_dec += e.len;
			}
			d = malloc(n);
			if (!d || tsblock_raw_size(e.p, e.len, &rl) || rl != n ||
			    tsblock_decode(e.p, e.len, d, n) || memcmp(d, raw, n))
				bad++;
			for (size_t cut = 1; d && cut < e.len; cut += 1 + cut / 8)
				trunc += tsblock_decode(e.p, e.len - cut, d, n) !=
					 CF_ECORRUPT;
			free(d);
		}
	}
	forced_kind = -1;
	is_int(refused, 0, "version 3: %d blocks of one value kind each "
	       "(and mixed) all encode", blocks);
	is_int(notv3, 0, "as version 3");
	/* the cells are encoded, not kept verbatim */
	ok(enc_dec * 4 < raw_dec, "decimals, small and steady integers: "
	   "%zu bytes from %zu", enc_dec, raw_dec);
	is_int(bad, 0, "and decode byte-exact");
	is_int(trunc, 0, "and their truncations are CF_ECORRUPT");
	block_builder_release(&bb);
	buf_release(&e);
}

/*
 * Runs: rows whose keys change in the same byte, of the same steady
 * column, cost less than a byte an entry (no kind byte, no padding to a
 * byte: the cell's stream follows the previous cell's) across restart
 * points; and when every other row changes elsewhere (runs of one and
 * two), the block still decodes.
 */
static void test_runs(void)
{
	struct block_builder bb;
	struct buf e = BUF_INIT;
	unsigned char q[120], v[60], key[256], row[19];
	static unsigned char key2[1200];
	const unsigned char *raw;
	unsigned char *d;
	size_t n, nrows, len50 = 0;
	int bad = 0;

	for (int i = 0; i < 60; i++) {
		q[2 * i] = (unsigned char)((i * 60) >> 4);
		q[2 * i + 1] = (unsigned char)((i * 60) << 4);
		v[i] = 42;
	}
	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	for (int broken = -1; broken < 3; broken++) {
		nrows = broken < 0 ? 50 : 100;
		block_builder_reset(&bb);
		memset(row, 0, sizeof row);
		for (size_t r = 0; r < nrows; r++) {
			struct ikey k = { 0 };
			row[12] = (unsigned char)r;
			if (broken > 0 && r % (size_t)(broken + 1) == 0)
				row[15] = (unsigned char)r;
			k.row = row;
			k.rowlen = sizeof row;
			k.fam = (const unsigned char *)"t";
			k.famlen = 1;
			k.qual = q;
			k.qlen = sizeof q;
			k.ts = 1700000000000;
			k.seq = 77;
			k.type = KT_PUT;
			block_builder_add(&bb, key, ikey_encode(key, &k), v,
					  sizeof v);
		}
		block_builder_finish(&bb, &raw, &n);
		buf_reset(&e);
		if (tsblock_encode(raw, n, &e))
			bail("encode");
		d = malloc(n);
		bad += !d || tsblock_decode(e.p, e.len, d, n) ||
		       memcmp(d, raw, n);
		for (size_t cut = 1; d && cut < e.len; cut++)
			bad += tsblock_decode(e.p, e.len - cut, d, n) !=
			       CF_ECORRUPT;
		free(d);
		if (broken < 0)
			len50 = e.len;
		if (!broken)
			ok(e.len - len50 <= 60, "a run of steady rows: 50 "
			   "more take %zu bytes", e.len - len50);
	}
	is_int(bad, 0, "runs, and runs of one and two, decode; their "
	       "truncations are CF_ECORRUPT");
	{
		/* a first row key of 200 bytes, 3 of them not zero: a
		 * bitmap of 25 bytes and those 3 (and a block that is
		 * mostly its columns, or it is not encoded) */
		static unsigned char big[200];
		struct ikey k = { 0 };
		big[0] = 1;
		big[100] = 2;
		big[199] = 3;
		k.row = big;
		k.rowlen = sizeof big;
		k.fam = (const unsigned char *)"t";
		k.famlen = 1;
		k.qual = q;
		k.qlen = sizeof q;
		k.type = KT_PUT;
		block_builder_reset(&bb);
		block_builder_add(&bb, key2, ikey_encode(key2, &k), v,
				  sizeof v);
		block_builder_finish(&bb, &raw, &n);
		buf_reset(&e);
		d = malloc(n);
		bad = tsblock_encode(raw, n, &e);
		ok(!bad && e.len < 100 && d &&
		   !tsblock_decode(e.p, e.len, d, n) && !memcmp(d, raw, n),
		   "a row key of 200 bytes, mostly zeros, as a bitmap: "
		   "%zu bytes", e.len);
		free(d);
	}
	block_builder_release(&bb);
	buf_release(&e);
}

int main(void)
{
	test_vectors();
	test_version1();
	test_columns();
	test_compacted();
	test_blocks();
	test_damage();
	test_groups();
	test_version3();
	test_runs();
	return done_testing();
}
