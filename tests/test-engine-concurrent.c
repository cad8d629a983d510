/*
 * test-engine-concurrent: writers, readers, increments, background
 * flushes and compactions, and splits at once.  Checks row atomicity (two
 * columns written in one batch are always read equal, by Gets of the row
 * and of the two named columns, and a row never goes back to an older
 * round), that increments
 * add up exactly, and that every final write is there.  Meant to run
 * under -fsanitize=thread as well (make check SANITIZE=thread).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/log.h"
#include "tests/tap.h"

#define WRITERS 4
#define KEYS 300
#define ROUNDS 6

static cf_db *db;
static cf_table *t;
static atomic_int stop, failures, incs;

static void *writer(void *arg)
{
	int id = (int)(intptr_t)arg;
	cf_batch *b;
	char k[32], v[64];

	cf_batch_new(&b);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < KEYS; i++) {
			int n = snprintf(k, sizeof k, "w%d-%04d", id, i);
			int vl = snprintf(v, sizeof v, "round%d-%d-%d", r, id,
					  i);
			cf_batch_clear(b);
			cf_batch_put(b, k, (size_t)n, "f", 1, "a", 1, CF_TS_NOW,
				     v, (size_t)vl);
			cf_batch_put(b, k, (size_t)n, "f", 1, "b", 1, CF_TS_NOW,
				     v, (size_t)vl);
			if (cf_table_apply(t, b) != CF_OK)
				atomic_fetch_add(&failures, 1);
			if (i % 10 == 0) {
				int64_t res;
				if (cf_table_increment(t, "counter", 7, "f", 1,
						       "n", 1, 1, &res))
					atomic_fetch_add(&failures, 1);
				else
					atomic_fetch_add(&incs, 1);
			}
		}
	cf_batch_free(b);
	return NULL;
}

static int check_row(const cf_row *r)
{
	const struct cf_cell *a, *b;

	if (cf_row_count(r) == 0)
		return 1;
	if (cf_row_count(r) != 2)
		return 0;
	a = cf_row_cell(r, 0);
	b = cf_row_cell(r, 1);
	return a->vlen == b->vlen && memcmp(a->val, b->val, a->vlen) == 0;
}

/* The round a row's first cell was written in (-1: none). */
static int round_of(const cf_row *r)
{
	const struct cf_cell *c = cf_row_count(r) ? cf_row_cell(r, 0) : NULL;

	return c && c->vlen > 5 ? c->val[5] - '0' : -1;
}

static void *reader(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	static const struct cf_column cols[2] = { { "f", 1, "a", 1 },
						  { "f", 1, "b", 1 } };
	struct cf_read_opts named = CF_READ_OPTS_INIT;
	int seen[WRITERS][KEYS];

	/* every other Get names both columns: the newest-first path that
	 * leaves older files out, under flushes, compactions and splits */
	named.columns = cols;
	named.ncolumns = 2;
	memset(seen, 0xff, sizeof seen);
	while (!atomic_load(&stop)) {
		char k[32];
		int wi = (int)(rand_r(&seed) % WRITERS);
		int ki = (int)(rand_r(&seed) % KEYS);
		int n = snprintf(k, sizeof k, "w%d-%04d", wi, ki);
		cf_row *r;
		if (cf_table_get(t, k, (size_t)n, rand_r(&seed) % 2 ? &named
				 : NULL, &r) != CF_OK) {
			atomic_fetch_add(&failures, 1);
			continue;
		}
		if (!check_row(r)) {
			diag("torn row %s", k);
			atomic_fetch_add(&failures, 1);
		}
		if (round_of(r) < seen[wi][ki]) {
			diag("row %s went back from round %d to %d", k,
			     seen[wi][ki], round_of(r));
			atomic_fetch_add(&failures, 1);
		}
		seen[wi][ki] = round_of(r);
		cf_row_free(r);
		if (rand_r(&seed) % 50 == 0) {
			struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
			cf_scanner *s;
			const cf_row *row;
			char last[32] = "";
			size_t lastlen = 0, kl;
			const unsigned char *key;
			/* w2- rows lie on both sides of a split; a reversed
			 * scan crosses it downward */
			so.prefix = rand_r(&seed) % 2 ? "w1-" : "w2-";
			so.prefixlen = 3;
			so.reversed = (int)(rand_r(&seed) % 2);
			if (cf_scan_open(t, &so, &s) == CF_OK) {
				while (cf_scan_next(s, &row) == CF_OK && row) {
					int c;
					if (!check_row(row))
						atomic_fetch_add(&failures, 1);
					key = cf_row_key(row, &kl);
					c = memcmp(key, last, kl < lastlen ? kl
						   : lastlen);
					c = c ? c : (kl > lastlen) -
						    (kl < lastlen);
					if (lastlen && (so.reversed ? c >= 0
								    : c <= 0)) {
						diag("scan rows out of order");
						atomic_fetch_add(&failures, 1);
					}
					if (kl < sizeof last) {
						memcpy(last, key, kl);
						lastlen = kl;
					}
				}
				cf_scan_close(s);
			}
		}
	}
	return NULL;
}

static void *splitter(void *arg)
{
	const char *keys[] = { "w1", "w2-0100", "w3", "w0-0150" };

	(void)arg;
	for (int i = 0; i < 4 && !atomic_load(&stop); i++) {
		int rc = cf_table_split(t, keys[i], strlen(keys[i]));
		if (rc && rc != CF_EEXIST)
			atomic_fetch_add(&failures, 1);
		cf_table_compact(t, i % 2);
	}
	return NULL;
}

/* --- schema changes while reading ----------------------------------- */

#define SROWS 200

static cf_table *st;
static atomic_int alters_done;

/* Gets and scans of table s: every row shows f:a = its key and g:b. */
static void *schema_reader(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (!atomic_load(&alters_done)) {
		char k[16];
		int n = snprintf(k, sizeof k, "r%04u", rand_r(&seed) % SROWS);
		cf_row *r;
		struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
		cf_scanner *s;
		const cf_row *row;
		int rows = 0;

		if (cf_table_get(st, k, (size_t)n, NULL, &r) != CF_OK ||
		    cf_row_count(r) != 2 ||
		    cf_row_cell(r, 0)->vlen != (size_t)n ||
		    memcmp(cf_row_cell(r, 0)->val, k, (size_t)n)) {
			diag("row %s wrong under schema changes", k);
			atomic_fetch_add(&failures, 1);
		}
		cf_row_free(r);
		if (cf_scan_open(st, &so, &s) != CF_OK) {
			atomic_fetch_add(&failures, 1);
			continue;
		}
		while (cf_scan_next(s, &row) == CF_OK && row)
			rows += cf_row_count(row) == 2;
		cf_scan_close(s);
		if (rows != SROWS) {
			diag("a scan under schema changes saw %d rows", rows);
			atomic_fetch_add(&failures, 1);
		}
	}
	return NULL;
}

/* Reads of table s while its schema changes again and again (g's
 * VERSIONS, a family h added and dropped): each read looks its families
 * up in the table's schema, which an alter replaces. */
static void schema_while_reading(void)
{
	struct cf_family fams[3];
	pthread_t rd[2];
	cf_batch *b;
	int fails;

	cf_family_default(&fams[0], "f");
	cf_family_default(&fams[1], "g");
	cf_family_default(&fams[2], "h");
	if (cf_table_create(db, "s", fams, 2) || cf_table_open(db, "s", &st))
		bail("schema table");
	cf_batch_new(&b);
	for (int i = 0; i < SROWS; i++) {
		char k[16];
		int n = snprintf(k, sizeof k, "r%04d", i);
		cf_batch_put(b, k, (size_t)n, "f", 1, "a", 1, CF_TS_NOW, k,
			     (size_t)n);
		cf_batch_put(b, k, (size_t)n, "g", 1, "b", 1, CF_TS_NOW, "x",
			     1);
	}
	if (cf_table_apply(st, b))
		bail("schema table rows");
	cf_batch_free(b);
	fails = atomic_load(&failures);
	for (int i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, schema_reader,
			       (void *)(uintptr_t)(i + 3));
	for (int i = 0; i < 40; i++) {
		fams[1].versions = 1 + i % 3;
		if (cf_table_alter(st, fams, 2 + (size_t)(i % 2)))
			atomic_fetch_add(&failures, 1);
	}
	atomic_store(&alters_done, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	is_int(atomic_load(&failures) - fails, 0,
	       "gets and scans while the schema changes 40 times");
	cf_table_close(st);
}

/* --- compare-and-set by CheckAndMutate ------------------------------- */

#define CAS_THREADS 3
#define CAS_TRIES 300

static atomic_int cas_won;

/* Reads the counter "cas" (decimal text) and sets it one higher iff it
 * still holds what was read: every win adds exactly one. */
static void *cas_worker(void *arg)
{
	cf_batch *b;

	(void)arg;
	cf_batch_new(&b);
	for (int i = 0; i < CAS_TRIES; i++) {
		struct cf_column col = { "f", 1, "n", 1 };
		struct cf_read_opts ro = CF_READ_OPTS_INIT;
		struct cf_check c = { "f", 1, "n", 1, CF_CMP_EQUAL, NULL, 0,
				      0, INT64_MAX, NULL, NULL };
		char cur[24], next[24];
		cf_row *r = NULL;
		int applied, n;

		ro.columns = &col;
		ro.ncolumns = 1;
		if (cf_table_get(t, "cas", 3, &ro, &r) || cf_row_count(r) != 1) {
			atomic_fetch_add(&failures, 1);
			cf_row_free(r);
			continue;
		}
		n = (int)cf_row_cell(r, 0)->vlen;
		memcpy(cur, cf_row_cell(r, 0)->val, (size_t)n);
		cur[n] = 0;
		cf_row_free(r);
		c.value = cur;
		c.vlen = (size_t)n;
		n = snprintf(next, sizeof next, "%ld", atol(cur) + 1);
		cf_batch_clear(b);
		cf_batch_put(b, "cas", 3, "f", 1, "n", 1, CF_TS_NOW, next,
			     (size_t)n);
		if (cf_table_check_mutate(t, "cas", 3, &c, b, &applied))
			atomic_fetch_add(&failures, 1);
		else if (applied)
			atomic_fetch_add(&cas_won, 1);
	}
	cf_batch_free(b);
	return NULL;
}

/* Threads racing to add one by compare-and-set lose no update and make
 * none twice: the check and the put are one step under the row. */
static void cas_race(void)
{
	pthread_t th[CAS_THREADS];
	cf_batch *b;
	cf_row *r = NULL;
	long v = -1;
	int fails = atomic_load(&failures);

	cf_batch_new(&b);
	cf_batch_put(b, "cas", 3, "f", 1, "n", 1, CF_TS_NOW, "0", 1);
	if (cf_table_apply(t, b))
		bail("cas row");
	cf_batch_free(b);
	for (int i = 0; i < CAS_THREADS; i++)
		pthread_create(&th[i], NULL, cas_worker, NULL);
	for (int i = 0; i < CAS_THREADS; i++)
		pthread_join(th[i], NULL);
	if (cf_table_get(t, "cas", 3, NULL, &r) == CF_OK &&
	    cf_row_count(r) == 1) {
		char buf[24];
		size_t n = cf_row_cell(r, 0)->vlen;
		memcpy(buf, cf_row_cell(r, 0)->val, n < 23 ? n : 23);
		buf[n < 23 ? n : 23] = 0;
		v = atol(buf);
	}
	cf_row_free(r);
	ok(v == atomic_load(&cas_won) && v > 0 &&
	   atomic_load(&failures) == fails,
	   "compare-and-set by check_mutate from %d threads: the counter "
	   "(%ld) is the number of wins (%d)", CAS_THREADS, v,
	   atomic_load(&cas_won));
}

int main(void)
{
	const char *dir = tap_tmpdir("concurrent");
	struct cf_options o;
	struct cf_family f;
	pthread_t w[WRITERS], rd[2], sp;
	int bad = 0;

	plan(7);
	cf_options_default(&o);
	o.flush_size = 128 << 10;
	o.sync_ms = 20;
	cf_family_default(&f, "f");
	if (cf_db_open(dir, &o, &db) || cf_table_create(db, "t", &f, 1) ||
	    cf_table_open(db, "t", &t))
		bail("setup");
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, reader, (void *)(uintptr_t)(i + 7));
	pthread_create(&sp, NULL, splitter, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(sp, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	is_int(atomic_load(&failures), 0, "no operation failed, no torn row");
	cas_race();

	{
		cf_row *r;
		int64_t v = -1;
		if (cf_table_get(t, "counter", 7, NULL, &r) == CF_OK &&
		    cf_row_count(r) == 1) {
			const unsigned char *p = cf_row_cell(r, 0)->val;
			v = 0;
			for (int i = 0; i < 8; i++)
				v = (v << 8) | p[i];
		}
		if (r)
			cf_row_free(r);
		is_int(v, atomic_load(&incs), "increments add up exactly");
	}
	{
		/* the memstore bytes the stall counts: writes moved into
		 * the daughters' memstores at a split used to leave it off
		 * by the difference, and once below zero it wrapped and
		 * every write stalled 10 s (the test hung now and then) */
		struct cf_stats st;
		cf_db_flush(db);
		cf_db_stats(db, &st);
		ok(st.mem_counted == st.mem_bytes,
		   "after a flush the counted memstore bytes are the "
		   "memstores' (%" PRIu64 ", %" PRIu64 ")", st.mem_counted,
		   st.mem_bytes);
	}
	cf_table_close(t);
	cf_db_close(db);
	o.background = 0;
	if (cf_db_open(dir, &o, &db) || cf_table_open(db, "t", &t))
		bail("reopen");
	for (int id = 0; id < WRITERS && !bad; id++)
		for (int i = 0; i < KEYS && !bad; i++) {
			char k[32], v[64];
			int n = snprintf(k, sizeof k, "w%d-%04d", id, i);
			int vl = snprintf(v, sizeof v, "round%d-%d-%d",
					  ROUNDS - 1, id, i);
			cf_row *r;
			if (cf_table_get(t, k, (size_t)n, NULL, &r) ||
			    cf_row_count(r) != 2 ||
			    cf_row_cell(r, 0)->vlen != (size_t)vl ||
			    memcmp(cf_row_cell(r, 0)->val, v, (size_t)vl)) {
				diag("key %s lacks its last write", k);
				bad = 1;
			}
			cf_row_free(r);
		}
	ok(!bad, "every last write is there after reopen");
	{
		struct cf_region_info *ri;
		size_t n;
		cf_table_regions(t, &ri, &n);
		ok(n >= 4, "the table was split into %zu regions", n);
		cf_regions_free(ri, n);
	}
	schema_while_reading();
	cf_table_close(t);
	cf_db_close(db);
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
