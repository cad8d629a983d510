/*
 * test-engine-model: thousands of random operations (puts, the delete
 * kinds, appends, increments, flushes, minor and major compactions,
 * splits, reopens, TTL expiry on a controlled clock) against the engine
 * and against a brute-force model of SPEC section 4's rules; after every
 * step a random row (all versions) is compared, and one in a time range
 * [lo, hi) whose end is near one of its delete markers (family d keeps
 * deleted cells: a read whose range ends at or before a delete's
 * timestamp does not see it); after every major compaction every row in
 * such ranges, and the whole table by scan every so often.  A major
 * compaction of family d that drops a cell some read of some range still
 * needs fails here.  The seed is printed; CELLFS_SEED replays one,
 * CELLFS_MODEL_STEPS sets the length.
 *
 * The model keeps every write ever made and decides visibility from that
 * history alone, by the definition (docs/engine.md), without sharing code
 * with engine/visible.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cellfs.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/log.h"
#include "tests/tap.h"

#define NROWS 24
#define NQUALS 4
#define NFAMS 6

enum { T_PUT, T_DEL, T_DELCOL, T_DELFAM };

struct ev {
	int row, fam, qual;	/* qual -1: a family delete */
	int64_t ts;
	int type;
	uint64_t seq;
	char val[48];
	size_t vlen;
};

static struct ev *evs;
static size_t nev, evcap;
static uint64_t mseq;
static int64_t now_ms = 1700000000000LL;

static const struct {
	const char *name;
	int versions, minv;
	int64_t ttl;
	int kdc;		/* KEEP_DELETED_CELLS: enum cf_kdc */
} fams[NFAMS] = {
	{ "a", 3, 0, CF_TTL_FOREVER, CF_KDC_FALSE },
	{ "b", 1, 0, 20, CF_KDC_FALSE },
	{ "c", 2, 1, 10, CF_KDC_FALSE },
	{ "d", 2, 0, CF_TTL_FOREVER, CF_KDC_TRUE },
	{ "e", 2, 1, 10, CF_KDC_TRUE },	/* rule 4 under time travel */
	{ "f", 2, 1, 10, CF_KDC_TTL },	/* markers that expire too */
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned rn(unsigned n) { return (unsigned)(rnd() % n); }

static void row_key(int r, char *out, size_t *len)
{
	/* a few binary keys among printable ones */
	if (r % 7 == 3) {
		out[0] = 'k';
		out[1] = 0;
		out[2] = (char)(0xf0 + r % 16);
		out[3] = (char)r;
		*len = 4;
	} else {
		*len = (size_t)snprintf(out, 16, "row%03d", r);
	}
}

static void qual_name(int q, char *out, size_t *len)
{
	if (q == 0) {
		*len = 0;	/* the empty qualifier */
	} else {
		*len = (size_t)snprintf(out, 8, "q%d", q);
	}
}

static void add_ev(int row, int fam, int qual, int64_t ts, int type,
		   const void *val, size_t vlen)
{
	if (nev == evcap) {
		evcap = evcap ? evcap * 2 : 1024;
		evs = realloc(evs, evcap * sizeof *evs);
		if (!evs)
			bail("out of memory");
	}
	struct ev *e = &evs[nev++];
	memset(e, 0, sizeof *e);
	e->row = row;
	e->fam = fam;
	e->qual = qual;
	e->ts = ts;
	e->type = type;
	e->seq = ++mseq;
	if (vlen > sizeof e->val)
		vlen = sizeof e->val;
	memcpy(e->val, val, vlen);
	e->vlen = vlen;
}

/* --- the model -------------------------------------------------------- */

#define NEVER UINT64_MAX

/* Does delete d cover put p for a read whose time range ends at hi
 * (INT64_MAX: no range)?  With KEEP_DELETED_CELLS such a read does not
 * see a delete of timestamp >= hi (HBase's time travel); with
 * KEEP_DELETED_CELLS=TTL only while the delete's TTL has not passed. */
static int covers(const struct ev *d, const struct ev *p, int64_t hi)
{
	int f = d->fam;

	if (d->row != p->row || f != p->fam || d->seq <= p->seq)
		return 0;
	if (fams[f].kdc && hi != INT64_MAX && d->ts >= hi &&
	    !(fams[f].kdc == CF_KDC_TTL && fams[f].ttl != CF_TTL_FOREVER &&
	      now_ms - d->ts > fams[f].ttl * 1000))
		return 0;
	if (d->type == T_DELFAM)
		return d->ts >= p->ts;
	if (d->qual != p->qual)
		return 0;
	if (d->type == T_DEL)
		return d->ts == p->ts;
	if (d->type == T_DELCOL)
		return d->ts >= p->ts;
	return 0;
}

/* visible versions of (row, fam, qual) in time range [lo, hi), newest
 * first, into out */
static size_t model_column(int row, int fam, int qual, int64_t lo,
			   int64_t hi, const struct ev **out)
{
	const struct ev *ps[4096];
	uint64_t death[4096];
	size_t np = 0, nout = 0;

	for (size_t i = 0; i < nev; i++)
		if (evs[i].type == T_PUT && evs[i].row == row &&
		    evs[i].fam == fam && evs[i].qual == qual)
			ps[np++] = &evs[i];
	/* ts desc, seq desc */
	for (size_t i = 1; i < np; i++)
		for (size_t j = i; j > 0; j--) {
			const struct ev *a = ps[j - 1], *b = ps[j];
			if (a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq)) {
				ps[j - 1] = b;
				ps[j] = a;
			}
		}
	for (size_t i = 0; i < np; i++) {
		const struct ev *p = ps[i];
		uint64_t d = NEVER;
		for (size_t j = 0; j < nev; j++) {
			if (covers(&evs[j], p, hi) && evs[j].seq < d)
				d = evs[j].seq;
			if (evs[j].type == T_PUT && evs[j].row == p->row &&
			    evs[j].fam == p->fam && evs[j].qual == p->qual &&
			    evs[j].ts == p->ts && evs[j].seq > p->seq &&
			    evs[j].seq < d)
				d = evs[j].seq;
		}
		/* crowding: every moment from p's birth on */
		for (uint64_t t = p->seq; t <= mseq && t < d; t++) {
			int alive = 0;
			for (size_t k = 0; k < i; k++)
				if (ps[k]->ts > p->ts && ps[k]->seq <= t &&
				    death[k] > t)
					alive++;
			if (alive >= fams[fam].versions) {
				d = t;
				break;
			}
		}
		death[i] = d;
		if (d != NEVER)
			continue;
		if (fams[fam].ttl != CF_TTL_FOREVER &&
		    now_ms - p->ts > fams[fam].ttl * 1000) {
			int dead = fams[fam].minv == 0;
			for (uint64_t t = p->seq; t <= mseq && !dead; t++) {
				int alive = 0;
				for (size_t k = 0; k < i; k++)
					if (ps[k]->ts > p->ts &&
					    ps[k]->seq <= t && death[k] > t)
						alive++;
				dead = alive >= fams[fam].minv;
			}
			if (dead)
				continue;
		}
		if (p->ts >= lo && p->ts < hi)
			out[nout++] = p;
	}
	return nout;
}

static const struct ev *model_latest(int row, int fam, int qual)
{
	const struct ev *v[4096];
	return model_column(row, fam, qual, 0, INT64_MAX, v) ? v[0] : NULL;
}

/* --- comparing -------------------------------------------------------- */

static int fails;

/* On a mismatch: the row's history as the model saw it, and what the
 * engine returned, so a failing seed explains itself. */
static void dump_row(int row, const cf_row *got)
{
	static const char *const tn[] = { "put", "delete", "delete-column",
					  "delete-family" };
	size_t n = got ? cf_row_count(got) : 0;

	diag("clock %" PRId64 "; history of row %d (seq, family, qual, ts):",
	     now_ms, row);
	for (size_t i = 0; i < nev; i++) {
		const struct ev *e = &evs[i];
		if (e->row != row)
			continue;
		diag("  seq %" PRIu64 " %s %s q%d ts %" PRId64 " (age %" PRId64
		     " ms) '%.*s'", e->seq, tn[e->type], fams[e->fam].name,
		     e->qual, e->ts, now_ms - e->ts, (int)e->vlen, e->val);
	}
	diag("engine returned %zu cells:", n);
	for (size_t i = 0; i < n; i++) {
		const struct cf_cell *c = cf_row_cell(got, i);
		diag("  %.*s:%.*s ts %" PRId64 " '%.*s'", (int)c->famlen,
		     c->fam, (int)c->qlen, (const char *)c->qual, c->ts,
		     c->val ? (int)c->vlen : 0,
		     c->val ? (const char *)c->val : "");
	}
}

static int check_row(cf_table *t, int row, const cf_row *got, int64_t lo,
		     int64_t hi, const char *why)
{
	char rk[16], q[8];
	size_t rl, ql, gi = 0, n = got ? cf_row_count(got) : 0;
	int bad = 0;

	row_key(row, rk, &rl);
	for (int f = 0; f < NFAMS && !bad; f++)
		for (int qq = 0; qq < NQUALS && !bad; qq++) {
			const struct ev *v[4096];
			size_t nv = model_column(row, f, qq, lo, hi, v);
			qual_name(qq, q, &ql);
			for (size_t i = 0; i < nv && !bad; i++, gi++) {
				const struct cf_cell *c =
					gi < n ? cf_row_cell(got, gi) : NULL;
				if (!c || strlen(fams[f].name) != c->famlen ||
				    memcmp(c->fam, fams[f].name, c->famlen) ||
				    c->qlen != ql || memcmp(c->qual, q, ql) ||
				    c->ts != v[i]->ts || c->vlen != v[i]->vlen ||
				    memcmp(c->val, v[i]->val, c->vlen)) {
					diag("%s: row %d fam %s qual %d version "
					     "%zu: want ts %" PRId64 " '%.*s', "
					     "got %s ts %" PRId64 " '%.*s'", why,
					     row, fams[f].name, qq, i, v[i]->ts,
					     (int)v[i]->vlen, v[i]->val,
					     c ? "cell" : "nothing",
					     c ? c->ts : 0,
					     c ? (int)c->vlen : 0,
					     c ? (const char *)c->val : "");
					bad = 1;
				}
			}
		}
	if (!bad && gi != n) {
		diag("%s: row %d: engine has %zu cells, model %zu", why, row,
		     n, gi);
		bad = 1;
	}
	if (bad && (lo != 0 || hi != INT64_MAX))
		diag("(time range [%" PRId64 ", %" PRId64 "))", lo, hi);
	if (bad)
		dump_row(row, got);
	(void)t;
	return bad;
}

static int get_and_check(cf_table *t, int row, int64_t lo, int64_t hi,
			 const char *why)
{
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	char rk[16];
	size_t rl;
	cf_row *r;
	int rc, bad;

	o.max_versions = INT32_MAX;
	o.min_ts = lo;
	o.max_ts = hi;
	row_key(row, rk, &rl);
	rc = cf_table_get(t, rk, rl, &o, &r);
	if (rc) {
		diag("%s: get row %d: %s", why, row, cf_strerror(rc));
		return 1;
	}
	bad = check_row(t, row, r, lo, hi, why);
	cf_row_free(r);
	return bad;
}

static int model_row_empty(int row, int64_t lo, int64_t hi)
{
	const struct ev *v[4096];

	for (int f = 0; f < NFAMS; f++)
		for (int q = 0; q < NQUALS; q++)
			if (model_column(row, f, q, lo, hi, v))
				return 0;
	return 1;
}

static int row_index(const unsigned char *k, size_t kl)
{
	char rk[16];
	size_t rl;
	for (int r = 0; r < NROWS; r++) {
		row_key(r, rk, &rl);
		if (rl == kl && memcmp(rk, k, kl) == 0)
			return r;
	}
	return -1;
}

static int cmp_rows(const void *a, const void *b)
{
	char x[16], y[16];
	size_t xl, yl;
	row_key(*(const int *)a, x, &xl);
	row_key(*(const int *)b, y, &yl);
	int c = memcmp(x, y, xl < yl ? xl : yl);
	return c ? c : (xl > yl) - (xl < yl);
}

static int scan_and_check(cf_table *t, int64_t lo, int64_t hi,
			  const char *why)
{
	struct cf_scan_opts so = { .read = CF_READ_OPTS_INIT };
	cf_scanner *s;
	const cf_row *row;
	int order[NROWS], nexp = 0, seen = 0, bad = 0, rc;

	for (int r = 0; r < NROWS; r++)
		if (!model_row_empty(r, lo, hi))
			order[nexp++] = r;
	qsort(order, (size_t)nexp, sizeof *order, cmp_rows);
	so.read.max_versions = INT32_MAX;
	so.read.min_ts = lo;
	so.read.max_ts = hi;
	if ((rc = cf_scan_open(t, &so, &s))) {
		diag("%s: scan open: %s", why, cf_strerror(rc));
		return 1;
	}
	while (!bad && (rc = cf_scan_next(s, &row)) == CF_OK && row) {
		size_t kl;
		const unsigned char *k = cf_row_key(row, &kl);
		int r = row_index(k, kl);
		if (seen >= nexp || r != order[seen]) {
			diag("%s: scan row %d at position %d, want %d", why, r,
			     seen, seen < nexp ? order[seen] : -1);
			if (r >= 0)	/* what differs in it */
				check_row(t, r, row, lo, hi, why);
			bad = 1;
			break;
		}
		bad = check_row(t, r, row, lo, hi, why);
		seen++;
	}
	if (rc) {
		diag("%s: scan: %s", why, cf_strerror(rc));
		bad = 1;
	}
	if (!bad && seen != nexp) {
		diag("%s: scan saw %d rows, model has %d", why, seen, nexp);
		bad = 1;
	}
	cf_scan_close(s);
	return bad;
}

/*
 * A time range [lo, hi) for reads of row: mostly hi at, just below or
 * just above the timestamp of one of the row's delete markers (where a
 * read of family d, KEEP_DELETED_CELLS, starts or stops seeing it),
 * else somewhere near now; lo 0 or below hi.
 */
static void pick_range(int row, int64_t *lo, int64_t *hi)
{
	size_t nm = 0, pick;

	for (size_t i = 0; i < nev; i++)
		if (evs[i].type != T_PUT && (row < 0 || evs[i].row == row))
			nm++;
	*hi = now_ms + 1 - (int64_t)rn(12000);
	if (nm && rn(4)) {
		pick = rn((unsigned)nm);
		for (size_t i = 0; i < nev; i++)
			if (evs[i].type != T_PUT &&
			    (row < 0 || evs[i].row == row) && !pick--) {
				*hi = evs[i].ts + (int64_t)rn(3) - 1;
				break;
			}
	}
	*lo = rn(2) ? 0 : *hi - 1 - (int64_t)rn(9000);
	if (*lo < 0)
		*lo = 0;
}

/* Every row, in a few time ranges around its markers: after a major
 * compaction, where one that dropped too much shows. */
static int ranges_and_check(cf_table *t, const char *why)
{
	int bad = 0;

	for (int r = 0; r < NROWS && !bad; r++)
		for (int k = 0; k < 4 && !bad; k++) {
			int64_t lo, hi;
			pick_range(r, &lo, &hi);
			bad = get_and_check(t, r, lo, hi, why);
		}
	for (int k = 0; k < 3 && !bad; k++) {
		int64_t lo, hi;
		pick_range(-1, &lo, &hi);
		bad = scan_and_check(t, lo, hi, why);
	}
	return bad;
}

/* --- the run ---------------------------------------------------------- */

static cf_db *db;
static cf_table *tab;
static const char *dir;

static void open_db(void)
{
	struct cf_options o;
	int rc;

	cf_options_default(&o);
	o.background = 0;
	o.flush_size = 1 << 20;
	o.sync_mode = CF_SYNC_NONE;
	rc = cf_db_open(dir, &o, &db);
	if (rc)
		bail("open: %s", cf_strerror(rc));
	rc = cf_table_open(db, "m", &tab);
	if (rc)
		bail("table open: %s", cf_strerror(rc));
}

static void close_db(void)
{
	cf_table_close(tab);
	cf_db_close(db);
}

static int step(int i, char *what, size_t wl)
{
	int op = (int)rn(100), row = (int)rn(NROWS), f = (int)rn(NFAMS);
	int q = (int)rn(NQUALS);
	char rk[16], qn[8], val[48];
	size_t rl, ql, vl;
	int64_t ts;
	cf_batch *b;
	int rc = CF_OK;

	row_key(row, rk, &rl);
	qual_name(q, qn, &ql);
	/* timestamps close together, so versions collide and interleave */
	ts = rn(4) ? now_ms - (int64_t)rn(8) * 1000 : CF_TS_NOW;
	vl = (size_t)snprintf(val, sizeof val, "v%d-%u", i, rn(1000));
	cf_batch_new(&b);
	if (op < 40) {
		snprintf(what, wl, "put r%d %s:q%d ts %" PRId64, row,
			 fams[f].name, q, ts == CF_TS_NOW ? now_ms : ts);
		cf_batch_put(b, rk, rl, fams[f].name, 1, qn, ql, ts, val, vl);
		rc = cf_table_apply(tab, b);
		if (!rc)
			add_ev(row, f, q, ts == CF_TS_NOW ? now_ms : ts, T_PUT,
			       val, vl);
	} else if (op < 46) {
		const struct ev *l = model_latest(row, f, q);
		int64_t dts = rn(2) ? CF_TS_NOW : now_ms - (int64_t)rn(8) * 1000;
		snprintf(what, wl, "delete version r%d %s:q%d", row,
			 fams[f].name, q);
		cf_batch_delete(b, CF_DEL_VERSION, rk, rl, fams[f].name, 1,
				qn, ql, dts);
		rc = cf_table_apply(tab, b);
		if (!rc && dts != CF_TS_NOW)
			add_ev(row, f, q, dts, T_DEL, "", 0);
		else if (!rc && l)
			add_ev(row, f, q, l->ts, T_DEL, "", 0);
	} else if (op < 52) {
		int64_t dts = rn(2) ? CF_TS_NOW : now_ms - (int64_t)rn(8) * 1000;
		snprintf(what, wl, "delete column r%d %s:q%d", row,
			 fams[f].name, q);
		cf_batch_delete(b, CF_DEL_COLUMN, rk, rl, fams[f].name, 1, qn,
				ql, dts);
		rc = cf_table_apply(tab, b);
		if (!rc)
			add_ev(row, f, q, dts == CF_TS_NOW ? now_ms : dts,
			       T_DELCOL, "", 0);
	} else if (op < 55) {
		snprintf(what, wl, "delete family r%d %s", row, fams[f].name);
		cf_batch_delete(b, CF_DEL_FAMILY, rk, rl, fams[f].name, 1,
				NULL, 0, CF_TS_NOW);
		rc = cf_table_apply(tab, b);
		if (!rc)
			add_ev(row, f, -1, now_ms, T_DELFAM, "", 0);
	} else if (op < 57) {
		snprintf(what, wl, "delete row r%d", row);
		cf_batch_delete(b, CF_DEL_ROW, rk, rl, NULL, 0, NULL, 0,
				CF_TS_NOW);
		rc = cf_table_apply(tab, b);
		for (int x = 0; !rc && x < NFAMS; x++)
			add_ev(row, x, -1, now_ms, T_DELFAM, "", 0);
	} else if (op < 63) {
		const struct ev *l = model_latest(row, f, q);
		char nv[48];
		size_t nl = 0;
		struct buf out = BUF_INIT;
		snprintf(what, wl, "append r%d %s:q%d", row, fams[f].name, q);
		if (l) {
			memcpy(nv, l->val, l->vlen);
			nl = l->vlen;
		}
		if (nl + 2 > sizeof nv)
			nl = 0;	/* keep values short: skip long ones */
		if (nl + 2 <= sizeof nv && (!l || l->vlen + 2 <= sizeof nv)) {
			memcpy(nv + nl, "+a", 2);
			nl += 2;
			rc = cf_table_append(tab, rk, rl, fams[f].name, 1, qn,
					     ql, "+a", 2, &out);
			if (!rc) {
				int64_t ats = l && l->ts > now_ms ? l->ts :
					      now_ms;
				if (out.len != nl || memcmp(out.p, nv, nl))
					diag("append result differs");
				add_ev(row, f, q, ats, T_PUT, nv, nl);
			}
		}
		buf_release(&out);
	} else if (op < 67) {
		const struct ev *l;
		int64_t res = 0, old = 0;
		/* increments live in family a, qualifier q3 of their own
		 * rows, so values stay 8 bytes */
		f = 0;
		q = 3;
		qual_name(q, qn, &ql);
		l = model_latest(row, f, q);
		snprintf(what, wl, "increment r%d", row);
		if (!l || l->vlen == 8) {
			int64_t ats;
			if (l)
				old = (int64_t)dec_u64be((const unsigned char *)
							 l->val);
			rc = cf_table_increment(tab, rk, rl, "a", 1, qn, ql, 5,
						&res);
			if (!rc) {
				unsigned char v8[8];
				if (res != old + 5)
					diag("increment gave %" PRId64
					     ", want %" PRId64, res, old + 5);
				enc_u64be(v8, (uint64_t)(old + 5));
				ats = l && l->ts > now_ms ? l->ts : now_ms;
				add_ev(row, f, q, ats, T_PUT, v8, 8);
			}
		} else {
			rc = cf_table_increment(tab, rk, rl, "a", 1, qn, ql, 5,
						&res);
			if (rc == CF_EINVAL)
				rc = CF_OK;	/* not a counter: refused */
			else
				diag("increment of a non-counter: %s",
				     cf_strerror(rc));
		}
	} else if (op < 75) {
		snprintf(what, wl, "flush");
		rc = cf_db_flush(db);
	} else if (op < 80) {
		snprintf(what, wl, "minor compaction");
		rc = cf_db_compact(db, 0);
	} else if (op < 83) {
		snprintf(what, wl, "major compaction");
		rc = cf_db_compact(db, 1);
	} else if (op < 86) {
		snprintf(what, wl, "reopen");
		close_db();
		open_db();
	} else if (op < 92) {
		int64_t adv = (int64_t)rn(6000);
		snprintf(what, wl, "clock +%" PRId64 " ms", adv);
		now_ms += adv;
		env_clock_set(now_ms);
	} else if (op < 94) {
		snprintf(what, wl, "split at r%d", row);
		rc = cf_table_split(tab, rk, rl);
		if (rc == CF_EEXIST)
			rc = CF_OK;
	} else {
		snprintf(what, wl, "read only");
	}
	cf_batch_free(b);
	return rc;
}

int main(void)
{
	const char *s = getenv("CELLFS_SEED");
	const char *n = getenv("CELLFS_MODEL_STEPS");
	uint64_t seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
	int steps = n ? atoi(n) : 3000, bad = 0, i;
	struct cf_family f[NFAMS];
	struct cf_options o;
	char what[128];

	rng_state = seed ? seed : 1;
	diag("seed %" PRIu64 " (CELLFS_SEED=%" PRIu64 " replays), %d steps",
	     seed, seed, steps);
	dir = tap_tmpdir("model");
	env_clock_set(now_ms);
	for (i = 0; i < NFAMS; i++) {
		cf_family_default(&f[i], fams[i].name);
		f[i].versions = fams[i].versions;
		f[i].min_versions = fams[i].minv;
		f[i].ttl = fams[i].ttl;
		f[i].keep_deleted = fams[i].kdc;
	}
	f[1].compression = CF_COMPRESS_NONE;
	f[2].bloom = CF_BLOOM_ROWCOL;
	cf_options_default(&o);
	o.background = 0;
	if (cf_db_open(dir, &o, &db))
		bail("open");
	if (cf_table_create(db, "m", f, NFAMS))
		bail("create");
	cf_db_close(db);
	open_db();

	for (i = 0; i < steps && !bad; i++) {
		int rc = step(i, what, sizeof what);
		if (rc) {
			diag("step %d (%s): %s", i, what, cf_strerror(rc));
			bad = 1;
			break;
		}
		bad = get_and_check(tab, (int)rn(NROWS), 0, INT64_MAX, what);
		if (!bad) {
			int64_t lo, hi;
			int r = (int)rn(NROWS);
			pick_range(r, &lo, &hi);
			bad = get_and_check(tab, r, lo, hi, what);
		}
		if (!bad && !strncmp(what, "major", 5))
			bad = ranges_and_check(tab, what);
		if (!bad && i % 50 == 0)
			bad = scan_and_check(tab, 0, INT64_MAX, what);
		if (bad)
			diag("failed at step %d after: %s (seed %" PRIu64 ")",
			     i, what, seed);
	}
	ok(!bad, "%d random steps match the model (seed %" PRIu64 ")", i, seed);
	if (!bad) {
		ok(!scan_and_check(tab, 0, INT64_MAX, "final scan") &&
		   !ranges_and_check(tab, "final ranges"),
		   "final scan and time ranges match");
		ok(cf_db_compact(db, 1) == CF_OK, "final major compaction");
		ok(!scan_and_check(tab, 0, INT64_MAX, "after major compaction")
		   && !ranges_and_check(tab, "after major compaction"),
		   "major compaction changes no read, of any time range");
		close_db();
		open_db();
		ok(!scan_and_check(tab, 0, INT64_MAX, "after reopen") &&
		   !ranges_and_check(tab, "after reopen"),
		   "reopen changes no read");
	}
	close_db();
	free(evs);
	(void)fails;
	tap_rmdir(dir);
	cf_log_release();
	return done_testing();
}
