/*
 * tsblock_bench.c: the TSDB block encoding (util/tsblock.c) on the
 * blocks of real store files.
 *
 *   tsblock_bench [-b BYTES] FILE.sst ...
 *
 * Reads every cell of the files (any encoding, any compression), cuts
 * them into raw blocks of 64 KiB (-b: of BYTES) as a flush would
 * (block_builder), and
 * for each block: encodes it, decodes it 20 times, and zstd-compresses
 * and decompresses both the raw and the encoded block.  Prints sizes in
 * bytes a point (a point: 2 bytes of qualifier of an OpenTSDB column)
 * and speeds in points a second.  A measurement, not a test: a block
 * that does not decode back exactly stops it with exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "engine/block.h"
#include "engine/iter.h"
#include "engine/sst.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/tsblock.h"

#define ROUNDS 20
#define BLOCK 65536

static size_t block = BLOCK;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

struct totals {
	double points, raw, enc, zraw, zenc;
	double t_enc, t_dec, t_zraw, t_zenc;
	int blocks;
};

static void one_block(struct block_builder *bb, struct totals *t,
		      double points)
{
	const unsigned char *raw;
	size_t n, zcap;
	struct buf e = BUF_INIT;
	unsigned char *d, *z;
	double t0;
	size_t zr, ze;

	block_builder_finish(bb, &raw, &n);
	zcap = ZSTD_compressBound(n);
	d = malloc(n);
	z = malloc(zcap);
	if (!d || !z) {
		fprintf(stderr, "tsblock_bench: out of memory\n");
		exit(1);
	}
	t0 = now_s();
	if (tsblock_encode(raw, n, &e) != CF_OK) {
		/* not encodable: stored raw by the engine */
		buf_reset(&e);
		buf_append(&e, raw, n);
	}
	t->t_enc += now_s() - t0;
	t0 = now_s();
	for (int r = 0; r < ROUNDS; r++)
		if (e.len != n && tsblock_decode(e.p, e.len, d, n) != CF_OK) {
			fprintf(stderr, "tsblock_bench: a block does not "
				"decode\n");
			exit(1);
		}
	t->t_dec += now_s() - t0;
	if (e.len != n && memcmp(d, raw, n)) {
		fprintf(stderr, "tsblock_bench: a block decodes wrong\n");
		exit(1);
	}
	zr = ZSTD_compress(z, zcap, raw, n, BLOCK_ZSTD_LEVEL);
	t0 = now_s();
	for (int r = 0; r < ROUNDS; r++)
		ZSTD_decompress(d, n, z, zr);
	t->t_zraw += now_s() - t0;
	ze = ZSTD_compress(z, zcap, e.p, e.len, BLOCK_ZSTD_LEVEL);
	t0 = now_s();
	for (int r = 0; r < ROUNDS; r++)
		ZSTD_decompress(d, n, z, ze);
	t->t_zenc += now_s() - t0;
	t->points += points;
	t->raw += (double)n;
	t->enc += (double)e.len;
	t->zraw += (double)zr;
	t->zenc += (double)ze;
	t->blocks++;
	block_builder_reset(bb);
	buf_release(&e);
	free(d);
	free(z);
}

int main(int argc, char **argv)
{
	struct totals t = { 0 };
	struct block_builder bb;
	double points = 0;
	int first = 1;

	if (argc > 2 && !strcmp(argv[1], "-b")) {
		block = strtoul(argv[2], NULL, 0);
		first = 3;
	}
	if (argc <= first || block == 0) {
		fprintf(stderr, "usage: %s [-b BYTES] FILE.sst ...\n", argv[0]);
		return 2;
	}
	block_builder_init(&bb, BLOCK_RESTART_INTERVAL);
	for (int i = first; i < argc; i++) {
		struct sst *s;
		struct iter *it;
		if (sst_open(argv[i], (uint64_t)i, NULL, 0, &s) != CF_OK) {
			fprintf(stderr, "tsblock_bench: cannot open %s\n",
				argv[i]);
			return 1;
		}
		it = sst_iter(s, 0);
		for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
			size_t kl, vl, rowlen, head;
			const unsigned char *k = iter_key(it, &kl);
			const unsigned char *v = iter_value(it, &vl);
			rowlen = (size_t)k[0] << 8 | k[1];
			head = 3 + rowlen + k[2 + rowlen];
			points += (double)((kl - 16 - head) / 2);
			block_builder_add(&bb, k, kl, v, vl);
			if (block_builder_size(&bb) >= block) {
				one_block(&bb, &t, points);
				points = 0;
			}
		}
		iter_destroy(it);
		sst_unref(s);
	}
	if (!block_builder_empty(&bb))
		one_block(&bb, &t, points);
	block_builder_release(&bb);
	if (t.points == 0) {
		fprintf(stderr, "tsblock_bench: no points\n");
		return 1;
	}
	printf("%d blocks of %zu bytes, %.0f points; encoded %.0f bytes, "
	       "then zstd %.0f\n", t.blocks, block, t.points, t.enc, t.zenc);
	printf("%-24s %10s %14s\n", "form", "bytes/pt", "M points/s");
	printf("%-24s %10.3f %14s\n", "raw block", t.raw / t.points, "-");
	printf("%-24s %10.3f %14.1f\n", "zstd", t.zraw / t.points,
	       t.points * ROUNDS / t.t_zraw / 1e6);
	printf("%-24s %10.3f %14.1f\n", "TSDB-encoded", t.enc / t.points,
	       t.points * ROUNDS / t.t_dec / 1e6);
	printf("%-24s %10.3f %14.1f\n", "TSDB-encoded + zstd",
	       t.zenc / t.points,
	       t.points * ROUNDS / (t.t_dec + t.t_zenc) / 1e6);
	printf("encoding: %.1f M points/s (with its own check)\n",
	       t.points / t.t_enc / 1e6);
	return 0;
}
