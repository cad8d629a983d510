/*
 * test-walrec.c: the payload of WAL records (engine/walrec.c).  Random
 * groups of entries (tables, families and kinds changing or not, rows
 * of 0 to 32767 bytes, empty qualifiers and values, timestamps at both
 * ends of the range, values referenced from outside the record) encoded
 * with and without compression read back exactly, with their sequence
 * numbers; a version 1 payload made by hand by its documented layout
 * reads; every truncation and many damaged bytes of an encoded payload
 * give CF_ECORRUPT or entries, never a crash or a read past the end
 * (ASan); a snappy body claiming more than snappy can make is refused
 * before anything is allocated.  `test-walrec --seeds DIR` writes a few
 * payloads for the fuzz-walrec corpus.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/walrec.h"
#include "tests/tap.h"
#include "tests/xorshift.h"
#include "util/coding.h"
#include "util/err.h"

#define MAXN 300

struct ent {
	int64_t tid;
	struct ikey k;
	unsigned char *val;
	size_t vlen;
	int ref;
};

static const int kinds[] = { KT_PUT, KT_DELETE, KT_DELETE_COLUMN,
			     KT_DELETE_FAMILY };

static unsigned char *bytes(size_t n, int alpha)
{
	unsigned char *p = malloc(n ? n : 1);

	if (!p)
		bail("out of memory");
	for (size_t i = 0; i < n; i++)
		p[i] = alpha ? (unsigned char)('a' + rnd(3)) :
			       (unsigned char)rnd(256);
	return p;
}

static int64_t random_ts(int64_t before)
{
	switch (rnd(6)) {
	case 0: return INT64_MAX;
	case 1: return INT64_MIN;
	case 2: return (int64_t)rnd(2000000000000);
	case 3: return -(int64_t)rnd(1000);
	default: return before < INT64_MAX - 2 ? before + (int64_t)rnd(3) : 0;
	}
}

static size_t random_group(struct ent *e, size_t max, int small)
{
	size_t n = 1 + rnd(max);
	int64_t ts = 1700000000000;

	for (size_t i = 0; i < n; i++) {
		struct ent *x = &e[i];
		int same = i && rnd(3);
		size_t rl = !small && rnd(20) == 0 ? 32767 : rnd(24);

		x->tid = same ? e[i - 1].tid : (int64_t)rnd(5);
		x->k.rowlen = rl;
		x->k.row = bytes(rl, rnd(2));
		if (same && rnd(2)) {
			x->k.famlen = e[i - 1].k.famlen;
			x->k.fam = bytes(x->k.famlen, 0);
			memcpy((void *)x->k.fam, e[i - 1].k.fam, x->k.famlen);
		} else {
			x->k.famlen = rnd(4) == 0 ? 255 : rnd(3);
			x->k.fam = bytes(x->k.famlen, 1);
		}
		x->k.qlen = rnd(3) == 0 ? 0 : rnd(40);
		x->k.qual = bytes(x->k.qlen, rnd(2));
		x->k.ts = ts = random_ts(ts);
		x->k.type = kinds[rnd(4)];
		x->vlen = rnd(4) == 0 ? 0 : !small && rnd(8) == 0 ? 70000 :
							   rnd(200);
		x->val = bytes(x->vlen, rnd(2));
		x->ref = x->vlen >= 65536 && rnd(2);
	}
	return n;
}

static void free_group(struct ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((void *)e[i].k.row);
		free((void *)e[i].k.fam);
		free((void *)e[i].k.qual);
		free(e[i].val);
	}
}

/* The payload of e[0..n) as the WAL holds it (references put back in
 * place, as wal_appendv writes them). */
static int encode(const struct ent *e, size_t n, uint64_t seq, int compress,
		  struct buf *out, int *compressed)
{
	struct buf rec = BUF_INIT, z = BUF_INIT;
	struct walrec_enc enc;
	size_t at[MAXN], ref[MAXN], nref = 0, from = 0, len;
	const void *p;
	int rc = walrec_begin(&enc, &rec, seq, n, compress);

	for (size_t i = 0; i < n && rc == CF_OK; i++) {
		rc = walrec_put(&enc, e[i].tid, &e[i].k, e[i].val, e[i].vlen,
				e[i].ref);
		if (e[i].ref) {
			at[nref] = rec.len;
			ref[nref++] = i;
		}
	}
	if (rc == CF_OK)
		rc = walrec_finish(&enc, &z, &p, &len);
	buf_reset(out);
	*compressed = rc == CF_OK && p != rec.p;
	if (rc == CF_OK && *compressed && nref)
		bail("a payload with references was compressed");
	if (rc == CF_OK && *compressed) {
		buf_append(out, p, len);
	} else if (rc == CF_OK) {
		/* each referenced value goes where the record stood when it
		 * was put, as wal_appendv writes it */
		for (size_t r = 0; r < nref; r++) {
			buf_append(out, rec.p + from, at[r] - from);
			buf_append(out, e[ref[r]].val, e[ref[r]].vlen);
			from = at[r];
		}
		buf_append(out, rec.p + from, rec.len - from);
	}
	buf_release(&rec);
	buf_release(&z);
	return rc;
}

/* Decodes p[0..n) and compares with e; 1 if equal. */
static int same(const void *p, size_t n, const struct ent *e, size_t ne,
		uint64_t seq, int version)
{
	struct walrec_dec d;
	size_t i = 0;
	int more = 1, good = 1;

	if (walrec_open(&d, p, n) != CF_OK)
		return 0;
	for (;;) {
		struct ikey k;
		const void *v;
		size_t vl;
		int64_t tid;

		if (walrec_next(&d, &tid, &k, &v, &vl, &more) != CF_OK) {
			good = 0;
			break;
		}
		if (!more)
			break;
		if (i >= ne || tid != e[i].tid || k.rowlen != e[i].k.rowlen ||
		    memcmp(k.row, e[i].k.row, k.rowlen) ||
		    k.famlen != e[i].k.famlen ||
		    memcmp(k.fam, e[i].k.fam, k.famlen) ||
		    k.qlen != e[i].k.qlen ||
		    memcmp(k.qual, e[i].k.qual, k.qlen) ||
		    k.ts != e[i].k.ts || k.type != e[i].k.type ||
		    (version == 2 && k.seq != seq + i) ||
		    (version == 1 && k.seq != e[i].k.seq) ||
		    vl != e[i].vlen || (vl && memcmp(v, e[i].val, vl))) {
			diag("entry %zu differs", i);
			good = 0;
			break;
		}
		i++;
	}
	walrec_close(&d);
	return good && i == ne;
}

static void roundtrips(void)
{
	static struct ent e[MAXN];
	struct buf out = BUF_INIT;
	int bad = 0, nz = 0, nplain = 0;

	for (int round = 0; round < 400; round++) {
		size_t n = random_group(e, round % 4 ? 10 : MAXN, 0);
		uint64_t seq = 1 + rnd(1000000);
		for (int compress = 0; compress < 2; compress++) {
			int z;
			if (encode(e, n, seq, compress, &out, &z) != CF_OK)
				bail("encode");
			if (z)
				nz++;
			else
				nplain++;
			if (z && !compress)
				bad++;
			if (!same(out.p, out.len, e, n, seq, 2))
				bad++;
		}
		free_group(e, n);
	}
	ok(bad == 0, "400 random groups, with and without compression, read "
	   "back exactly with their sequence numbers");
	ok(nz > 100 && nplain > 400, "%d compressed payloads, %d stored as "
	   "they are", nz, nplain);
	buf_release(&out);
}

/* A version 1 payload written by hand from docs/wal_format.md. */
static void version1(void)
{
	struct ent e[3];
	struct buf p = BUF_INIT;
	unsigned char key[64];

	memset(e, 0, sizeof e);
	e[0] = (struct ent){ 7, { (const unsigned char *)"row", 3,
				  (const unsigned char *)"f", 1,
				  (const unsigned char *)"q", 1, 1234, 10,
				  KT_PUT }, (unsigned char *)"value", 5, 0 };
	e[1] = (struct ent){ 7, { (const unsigned char *)"row", 3,
				  (const unsigned char *)"f", 1,
				  (const unsigned char *)"", 0, -5, 11,
				  KT_DELETE_FAMILY }, (unsigned char *)"", 0,
			     0 };
	e[2] = (struct ent){ 9, { (const unsigned char *)"", 0,
				  (const unsigned char *)"gg", 2,
				  (const unsigned char *)"qq", 2, INT64_MAX,
				  99, KT_DELETE_COLUMN },
			     (unsigned char *)"", 0, 0 };
	buf_putc(&p, 1);
	buf_put_varint(&p, 3);
	for (int i = 0; i < 3; i++) {
		size_t kl = ikey_encode(key, &e[i].k);
		buf_put_varint(&p, (uint64_t)e[i].tid);
		buf_put_varint(&p, kl);
		buf_append(&p, key, kl);
		buf_put_varint(&p, e[i].vlen);
		buf_append(&p, e[i].val, e[i].vlen);
	}
	ok(same(p.p, p.len, e, 3, 0, 1), "a version 1 payload reads, its "
	   "sequence numbers from its keys");
	buf_putc(&p, 0);
	ok(!same(p.p, p.len, e, 3, 0, 1), "a byte after its entries is "
	   "damage");
	buf_release(&p);
}

/* Reads whatever p holds to its end; 0 when refused. */
static int read_all(const void *p, size_t n)
{
	return walrec_check(p, n) == CF_OK;
}

static void damage(void)
{
	static struct ent e[MAXN];
	struct buf out = BUF_INIT;
	int bad = 0, tried = 0, refused = 0;
	unsigned char hdr[32];
	size_t n;

	for (int round = 0; round < 20; round++) {
		int z;
		size_t ne = random_group(e, 20, 1);
		if (encode(e, ne, 5, round % 2, &out, &z) != CF_OK)
			bail("encode");
		for (size_t cut = 0; cut < out.len; cut++) {
			unsigned char *c = malloc(cut ? cut : 1);
			memcpy(c, out.p, cut);
			if (read_all(c, cut))
				bad++;	/* every entry counts: no cut reads */
			free(c);
			tried++;
		}
		for (int k = 0; k < 50; k++) {
			unsigned char *c = malloc(out.len);
			memcpy(c, out.p, out.len);
			c[rnd(out.len)] ^= (unsigned char)(1 + rnd(255));
			refused += !read_all(c, out.len);
			free(c);
		}
		free_group(e, ne);
	}
	ok(bad == 0, "none of %d truncated payloads reads", tried);
	ok(refused > 0, "damaged bytes are refused (%d of 1000) and none "
	   "crashes", refused);

	/* version 2, snappy, 1 entry, a body claiming 1 GiB */
	n = 0;
	hdr[n++] = 2;
	hdr[n++] = 1;
	n += enc_varint(hdr + n, 1);
	n += enc_varint(hdr + n, 1);
	n += enc_varint(hdr + n, (uint64_t)1 << 30);
	hdr[n++] = 0;
	ok(!read_all(hdr, n), "a snappy body claiming 1 GiB from 6 bytes is "
	   "refused");
	hdr[1] = 2;
	ok(!read_all(hdr, n), "unknown flags are refused");
	n = 0;
	hdr[n++] = 2;
	hdr[n++] = 0;
	n += enc_varint(hdr + n, SEQ_MAX);
	n += enc_varint(hdr + n, 2);
	ok(!read_all(hdr, n), "sequence numbers past the largest are "
	   "refused");
	n = 0;
	hdr[n++] = 2;
	hdr[n++] = 0;
	n += enc_varint(hdr + n, 1);
	n += enc_varint(hdr + n, 1);
	hdr[n++] = KT_PUT;	/* no table, no family: nothing before */
	hdr[n++] = 0;
	hdr[n++] = 0;
	hdr[n++] = 0;
	hdr[n++] = 0;
	ok(!read_all(hdr, n), "a first entry that takes its table from the "
	   "entry before is refused");
	hdr[n - 5] = KT_PUT | 0x10 | 0x20 | 0x40;
	ok(!read_all(hdr, n), "unknown head bits are refused");
	buf_release(&out);
}

static void seeds(const char *dir)
{
	static struct ent e[MAXN];
	struct buf out = BUF_INIT;
	char path[4096];

	rng = 4242;
	for (int i = 0; i < 4; i++) {
		int z;
		size_t n = random_group(e, 6, 1);
		FILE *f;
		if (encode(e, n, 1 + i, i % 2, &out, &z) != CF_OK)
			bail("encode");
		snprintf(path, sizeof path, "%s/record-v2-%d", dir, i);
		if (!(f = fopen(path, "wb")) ||
		    fwrite(out.p, 1, out.len, f) != out.len || fclose(f))
			bail("%s", path);
		free_group(e, n);
	}
	buf_release(&out);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--seeds")) {
		seeds(argv[2]);
		return 0;
	}
	rng = 20261129;
	diag("seed 20261129");
	roundtrips();
	version1();
	damage();
	return done_testing();
}
