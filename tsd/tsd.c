/*
 * tsd.c: the tsd handle, the write path (put lines to one batch) and row
 * compaction.
 *
 * Write path of one write(): complete lines are cut from the writer's
 * buffer and parsed; invalid ones are refused one by one (OpenTSDB's
 * put rule), the names of the valid ones resolved (new ones assigned
 * UIDs) and their points put in one cf_batch, applied once.
 * Each row written is queued for compaction; the compaction thread (or
 * tsd_compact()) merges a row once its hour is over, as OpenTSDB's
 * CompactionQueue does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tsd/internal.h"
#include "tsd/line.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"


void tsd_options_default(struct tsd_options *o)
{
	memset(o, 0, sizeof *o);
	o->compact_interval_ms = 60000;
	o->compact_grace_s = 60;
	o->compact_on_read = 1;
	o->max_query_points = 20000000;
	o->max_query_bytes = 256u << 20;
	o->max_graph_points = 1000000;
	o->recent_bytes = 256u << 20;
	o->recent_hours = 36;
	o->gnuplot = "gnuplot";
	o->gnuplot_timeout_ms = 20000;
}

/* --- the compaction queue ---------------------------------------------- */

static uint32_t hash_key(const unsigned char *k, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

static int rowset_grow(struct rowset *s)
{
	size_t nb = s->nb ? 2 * s->nb : 64;
	struct rowent **b = calloc(nb, sizeof *b);
	if (!b)
		return CF_ENOMEM;
	for (size_t i = 0; i < s->nb; i++) {
		struct rowent *e = s->b[i], *n;
		for (; e; e = n) {
			n = e->next;
			size_t h = hash_key(e->key, e->len) & (nb - 1);
			e->next = b[h];
			b[h] = e;
		}
	}
	free(s->b);
	s->b = b;
	s->nb = nb;
	return CF_OK;
}

/* Called with t->mu held. */
static void rowset_add(struct rowset *s, const unsigned char *key, size_t len)
{
	if (s->nb) {
		for (struct rowent *e = s->b[hash_key(key, len) & (s->nb - 1)];
		     e; e = e->next)
			if (e->len == len && !memcmp(e->key, key, len))
				return;
	}
	if (s->count >= s->nb && rowset_grow(s))
		return;
	struct rowent *e = malloc(sizeof *e + len);
	if (!e)
		return;
	e->len = len;
	memcpy(e->key, key, len);
	e->base = (uint32_t)e->key[3] << 24 | (uint32_t)e->key[4] << 16 |
		  (uint32_t)e->key[5] << 8 | e->key[6];
	size_t h = hash_key(key, len) & (s->nb - 1);
	e->next = s->b[h];
	s->b[h] = e;
	s->count++;
}

static void rowset_free(struct rowset *s)
{
	for (size_t i = 0; i < s->nb; i++) {
		struct rowent *e = s->b[i], *n;
		for (; e; e = n) {
			n = e->next;
			free(e);
		}
	}
	free(s->b);
	memset(s, 0, sizeof *s);
}

void tsd_pending_add(tsd *t, const unsigned char *key, size_t len)
{
	pthread_mutex_lock(&t->mu);
	rowset_add(&t->pending, key, len);
	pthread_mutex_unlock(&t->mu);
}

int tsd_row_finished(tsd *t, uint32_t base)
{
	int64_t now_s = env_now_ms() / 1000;
	return (int64_t)base + TSD_MAX_TIMESPAN + t->o.compact_grace_s <= now_s;
}

uint64_t tsd_del_gen(tsd *t)
{
	return __atomic_load_n(&t->del_gen, __ATOMIC_ACQUIRE);
}

int tsd_compact_row(tsd *t, cf_table *dbt, const unsigned char *key,
		    size_t klen, const cf_row *row, uint64_t gen, int *done)
{
	struct cf_column col = { "t", 1, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	struct tsd_rawcell *cells = NULL;
	struct buf q = BUF_INIT, v = BUF_INIT;
	cf_row *own = NULL;
	cf_batch *b = NULL;
	size_t n = 0, np;
	int rc;

	*done = 0;
	pthread_rwlock_rdlock(&t->del_lock);
	rc = CF_OK;
	if (row && tsd_del_gen(t) != gen)
		goto out;	/* a delete may have removed what row holds */
	if (!row) {
		o.columns = &col;
		o.ncolumns = 1;
		if ((rc = cf_table_get(dbt, key, klen, &o, &own)))
			goto out;
		row = own;
	}
	if ((rc = tsd_row_cells(row, &cells, &n)))
		goto out;
	if (n < 2)
		goto out;
	if ((rc = tsd_compact_cells(cells, n, &q, &v, &np)))
		goto out;
	if ((rc = cf_batch_new(&b)))
		goto out;
	cf_batch_keep_stamp(b);	/* the same points: the copy stays true */
	for (size_t i = 0; i < n; i++) {
		/* a cell the result overwrites needs no delete (and a
		 * delete would race with the put of the same column) */
		if (cells[i].qlen == q.len && !memcmp(cells[i].q, q.p, q.len))
			continue;
		rc = cf_batch_delete(b, CF_DEL_VERSION, key, klen, "t", 1,
				     cells[i].q, cells[i].qlen, cells[i].version);
		if (rc)
			goto out;
	}
	if ((rc = cf_batch_put(b, key, klen, "t", 1, q.p, q.len, CF_TS_NOW,
			       v.p, v.len)))
		goto out;
	if ((rc = cf_table_apply(dbt, b)))
		goto out;
	*done = 1;
	pthread_mutex_lock(&t->mu);
	t->st.rows_compacted++;
	pthread_mutex_unlock(&t->mu);
out:
	pthread_rwlock_unlock(&t->del_lock);
	cf_batch_free(b);
	free(cells);
	buf_release(&q);
	buf_release(&v);
	cf_row_free(own);
	return rc;
}

int tsd_compact(tsd *t, int all)
{
	struct rowent *ready = NULL, *e, *n;
	cf_table *uidt = NULL, *dbt = NULL;
	int rc, first = CF_OK, done;

	/* take the ready rows out under the lock, compact them without it */
	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < t->pending.nb; i++) {
		struct rowent **pp = &t->pending.b[i];
		while ((e = *pp)) {
			if (all || tsd_row_finished(t, e->base)) {
				*pp = e->next;
				e->next = ready;
				ready = e;
				t->pending.count--;
			} else {
				pp = &e->next;
			}
		}
	}
	pthread_mutex_unlock(&t->mu);
	if (!ready)
		return CF_OK;
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		first = rc;
	for (e = ready; e; e = n) {
		n = e->next;
		rc = first ? first : tsd_compact_row(t, dbt, e->key, e->len,
						     NULL, 0, &done);
		if (rc && rc != CF_ECLOSED) {
			if (first == CF_OK)
				first = rc;
			tsd_pending_add(t, e->key, e->len);
		}
		free(e);
	}
	cf_table_close(dbt);
	cf_table_close(uidt);
	return first;
}

/* The recent points' upkeep: a rebuild when stale, old hours dropped. */
static void recent_upkeep(tsd *t)
{
	cf_table *uidt, *dbt;
	int rc;

	if (!t->recent)
		return;
	rc = tsd_tables(t, &uidt, &dbt);
	if (rc == CF_OK) {
		rc = tsd_recent_maintain(t, dbt);
		cf_table_close(uidt);
		cf_table_close(dbt);
	}
	if (rc && rc != CF_ECLOSED)
		cf_log(CF_LOG_WARN, "tsd: recent points: %s", cf_strerror(rc));
}

void tsd_recent_kick(tsd *t)
{
	pthread_mutex_lock(&t->mu);
	t->recent_wake = 1;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

/* Milliseconds of the monotonic clock (the thread's schedule; the
 * tsd clock, env_now_ms(), may be set by tests). */
static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *compactor(void *arg)
{
	tsd *t = arg;
	int64_t next = mono_ms() + t->o.compact_interval_ms;

	recent_upkeep(t);	/* the copy, first of all */
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t wait = next - mono_ms();
		if (wait < 0)
			wait = 0;
		ts.tv_sec += wait / 1000;
		ts.tv_nsec += (long)(wait % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!t->recent_wake)
			pthread_cond_timedwait(&t->cv, &t->mu, &ts);
		if (t->stop)
			break;
		int woken = t->recent_wake;
		t->recent_wake = 0;
		pthread_mutex_unlock(&t->mu);
		int due = mono_ms() >= next;
		if (woken || due)
			recent_upkeep(t);
		if (due) {
			int rc = tsd_compact(t, 0);
			if (rc)
				cf_log(CF_LOG_WARN, "tsd: compaction: %s",
				       cf_strerror(rc));
			next = mono_ms() + t->o.compact_interval_ms;
		}
		pthread_mutex_lock(&t->mu);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* --- open and close ---------------------------------------------------- */

int tsd_open(cf_db *db, const struct tsd_options *o, tsd **out)
{
	cf_table *uidt = NULL, *dbt = NULL;
	tsd *t;
	int rc;

	t = calloc(1, sizeof *t);
	if (!t)
		return CF_ENOMEM;
	t->db = db;
	if (o)
		t->o = *o;
	else
		tsd_options_default(&t->o);
	/* options from before these fields existed: the defaults */
	if (!t->o.max_query_bytes)
		t->o.max_query_bytes = 256u << 20;
	if (!t->o.max_graph_points)
		t->o.max_graph_points = 1000000;
	snprintf(t->gnuplot, sizeof t->gnuplot, "%s",
		 t->o.gnuplot ? t->o.gnuplot : "gnuplot");
	t->o.gnuplot = t->gnuplot;
	pthread_mutex_init(&t->mu, NULL);
	pthread_mutex_init(&t->pool_mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	pthread_rwlock_init(&t->del_lock, NULL);
	pthread_mutex_init(&t->seen_mu, NULL);
	if ((rc = tsd_uids_new(&t->uids)))
		goto fail;
	if (t->o.realtime_uid)
		tsd_uids_on_assign(t->uids, tsd_uidmeta_assigned, t);
	if (t->o.recent_bytes && (rc = tsd_recent_new(&t->o, &t->recent)))
		goto fail;
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		goto fail;
	cf_table_close(uidt);
	cf_table_close(dbt);
	if (t->o.compact_interval_ms) {
		if (pthread_create(&t->thr, NULL, compactor, t)) {
			rc = CF_ENOMEM;
			goto fail;
		}
		t->thr_started = 1;
	}
	*out = t;
	return CF_OK;
fail:
	tsd_recent_free(t->recent);
	tsd_uids_free(t->uids);
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->pool_mu);
	pthread_cond_destroy(&t->cv);
	pthread_rwlock_destroy(&t->del_lock);
	tsd_tsmeta_release(t);
	pthread_mutex_destroy(&t->seen_mu);
	free(t);
	return rc;
}

void tsd_close(tsd *t)
{
	if (!t)
		return;
	if (t->thr_started) {
		pthread_mutex_lock(&t->mu);
		t->stop = 1;
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->thr, NULL);
	}
	rowset_free(&t->pending);
	tsd_recent_free(t->recent);
	tsd_points_pool_release(t);
	tsd_uids_free(t->uids);
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->pool_mu);
	pthread_cond_destroy(&t->cv);
	pthread_rwlock_destroy(&t->del_lock);
	tsd_tsmeta_release(t);
	pthread_mutex_destroy(&t->seen_mu);
	free(t);
}

void tsd_stats(tsd *t, struct tsd_stats *s)
{
	pthread_mutex_lock(&t->mu);
	*s = t->st;
	s->compact_pending = t->pending.count;
	pthread_mutex_unlock(&t->mu);
	tsd_recent_stats(t, s);
	s->uids_assigned = tsd_uids_assigned(t->uids);
}

/* --- names ------------------------------------------------------------- */

int tsd_name_lookup(tsd *t, enum tsd_kind kind, const char *name,
		    uint32_t *uid)
{
	cf_table *uidt, *dbt;
	int rc;

	if ((unsigned)kind > TSD_TAGV)
		return CF_EINVAL;
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	rc = tsd_uid_lookup(t->uids, uidt, kind, name, strlen(name), uid);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

int tsd_names(tsd *t, enum tsd_kind kind, const char *prefix, size_t max,
	      char ***names, size_t *n)
{
	cf_table *uidt, *dbt;
	int rc;

	if ((unsigned)kind > TSD_TAGV)
		return CF_EINVAL;
	if ((rc = tsd_tables(t, &uidt, &dbt)))
		return rc;
	rc = tsd_uid_list(uidt, kind, prefix ? prefix : "", max, names, n);
	cf_table_close(uidt);
	cf_table_close(dbt);
	return rc;
}

/* --- writers ----------------------------------------------------------- */

/* What a write needs beside its text, kept from one write to the next
 * (fresh memory for each write costs a page fault every 4 KiB, and on a
 * virtual machine a first touch of a page 15-30 us): CHUNK parsed lines
 * and their names to resolve (110 KiB), the write's encoded points,
 * their order and their rows (about 100 bytes a point), and the batch
 * (about as much again).  When the points' arrays pass SCRATCH_KEEP
 * (32768 points: a 1 MiB write of lines of 32 bytes or more), all of it
 * is freed after the write: a writer keeps at most about 7 MiB. */
struct scratch {
	struct tsd_line *lines;	/* CHUNK of them */
	struct tsd_line_words *words;	/* theirs (tags NULL: none) */
	struct tsd_uid_req *req;	/* CHUNK * (1 + 2 * TSD_MAX_TAGS) */
	struct tsd_point *pts;
	size_t pcap;
	struct tsd_point **order;
	size_t ocap;
	uint32_t *slot;		/* the rows' hash table (2 * ocap) */
	uint32_t *grp;		/* each point's row; then the rows' order */
	struct rowgrp *rows;	/* ocap */
	cf_batch *b;
};

/* The points of one row in a write. */
struct rowgrp {
	const struct tsd_point *first;	/* the row's key */
	uint32_t n, at;
};

#define SCRATCH_KEEP ((size_t)4 << 20)

/*
 * A writer's memo of the series its lines name: the row key (its base
 * time aside) last made for each metric word and tag text, so that a line
 * of a series seen before skips the checks of its names and their UID
 * lookups, most of what a put line costs once its row is known
 * (docs/timeseries_performance.md).  Two lines with the same metric word
 * and the same tag text have the same names (tsd_line_words), so the memo
 * answers only what tsd_line_parse and the UID caches would; it forgets
 * everything when a name's UID may have changed (tsd_uids_epoch: a
 * rename, tsdb-uid recreated).  Two ways a set, MEMO_SETS sets (a
 * collector's thousand series fit with room), the way used less recently
 * replaced; a metric word and tag text over MEMO_KEY bytes is not kept.
 * 768 KiB a writer, made once it has taken MEMO_AFTER lines (a short
 * write never pays it).
 */
#define MEMO_SETS 2048
#define MEMO_KEY 128
#define MEMO_AFTER 1024

struct memo_slot {
	uint32_t hash;
	uint16_t klen;		/* 0: empty */
	unsigned char rklen;
	unsigned char rowkey[TSD_ROWKEY_MAX];
	char key[MEMO_KEY];	/* the metric word, '\n', the tag text */
};

struct memo {
	uint64_t epoch;		/* tsd_uids_epoch() of the mappings held */
	unsigned char last[MEMO_SETS];	/* the way a set used last */
	struct memo_slot slot[MEMO_SETS][2];
};

struct tsd_writer {
	tsd *t;
	pthread_mutex_t mu;
	char *metric;		/* NULL: lines name their metric */
	struct buf pending;	/* an unfinished line */
	uint64_t lines;		/* lines consumed since open */
	int skip;		/* drop bytes up to the next '\n' */
	tsd_reject_fn *on_reject;
	void *reject_ctx;
	struct scratch sc;	/* under mu */
	struct memo *memo;	/* under mu; NULL: none yet */
};

static void scratch_free(struct scratch *sc)
{
	free(sc->lines);
	free(sc->words);
	free(sc->pts);
	free(sc->order);
	free(sc->slot);
	free(sc->grp);
	free(sc->rows);
	free(sc->req);
	cf_batch_free(sc->b);
	memset(sc, 0, sizeof *sc);
}

int tsd_writer_open(tsd *t, const char *metric, tsd_writer **out)
{
	tsd_writer *w;

	if (metric && !tsd_name_valid(metric, strlen(metric)))
		return CF_EINVAL;
	w = calloc(1, sizeof *w);
	if (!w)
		return CF_ENOMEM;
	if (metric && !(w->metric = strdup(metric))) {
		free(w);
		return CF_ENOMEM;
	}
	w->t = t;
	pthread_mutex_init(&w->mu, NULL);
	*out = w;
	return CF_OK;
}

void tsd_writer_on_reject(tsd_writer *w, tsd_reject_fn *fn, void *ctx)
{
	pthread_mutex_lock(&w->mu);
	w->on_reject = fn;
	w->reject_ctx = ctx;
	pthread_mutex_unlock(&w->mu);
}

void tsd_writer_close(tsd_writer *w)
{
	if (!w)
		return;
	buf_release(&w->pending);
	scratch_free(&w->sc);
	free(w->memo);
	pthread_mutex_destroy(&w->mu);
	free(w->metric);
	free(w);
}


static void set_err(struct tsd_error *err, uint64_t line, const char *reason,
		    int rc)
{
	if (!err)
		return;
	err->line = line;
	if (rc)
		snprintf(err->reason, sizeof err->reason, "%s: %s", reason,
			 cf_strerror(rc));
	else
		snprintf(err->reason, sizeof err->reason, "%s", reason);
}

static int point_cmp(const void *a, const void *b)
{
	const struct tsd_point *x = *(const struct tsd_point *const *)a;
	const struct tsd_point *y = *(const struct tsd_point *const *)b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, n);

	if (c)
		return c;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	n = x->qlen < y->qlen ? x->qlen : y->qlen;
	if ((c = memcmp(x->q, y->q, n)))
		return c;
	if (x->qlen != y->qlen)
		return x->qlen < y->qlen ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Lines parsed, then resolved and encoded, at a time; their names are
 * resolved under one taking of the UID cache's lock
 * (tsd_uid_assign_many).  128 lines of at most 8 tags: 40 KiB of lines,
 * 69 KiB of requests. */
#define CHUNK 128

static uint32_t key_hash(const unsigned char *k, size_t n)
{
	uint64_t h = n * UINT64_C(0x9e3779b97f4a7c15);

	for (; n >= 8; n -= 8, k += 8) {
		uint64_t w;
		memcpy(&w, k, 8);
		h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 29;
	}
	for (; n; n--, k++)
		h = (h ^ *k) * UINT64_C(0x100000001b3);
	h ^= h >> 32;
	return (uint32_t)h;
}

/* The memo's hash of a line's metric word and tag text. */
static uint32_t memo_hash(const struct tsd_line_words *lw)
{
	return key_hash((const unsigned char *)lw->tags, lw->tagslen) * 31u +
	       key_hash((const unsigned char *)lw->metric, lw->mlen);
}

/* 1 when slot e holds lw's series (hash h). */
static int memo_is(const struct memo_slot *e, uint32_t h,
		   const struct tsd_line_words *lw)
{
	return e->klen == lw->mlen + 1 + lw->tagslen && e->hash == h &&
	       !memcmp(e->key, lw->metric, lw->mlen) &&
	       e->key[lw->mlen] == '\n' &&
	       !memcmp(e->key + lw->mlen + 1, lw->tags, lw->tagslen);
}

/* Forgets every series. */
static void memo_clear(struct memo *m)
{
	memset(m->last, 0, sizeof m->last);
	for (size_t i = 0; i < MEMO_SETS; i++)
		m->slot[i][0].klen = m->slot[i][1].klen = 0;
}

/* The slot holding lw's series, or NULL. */
static const struct memo_slot *memo_find(struct memo *m,
					 const struct tsd_line_words *lw)
{
	uint32_t h = memo_hash(lw);
	size_t set = h & (MEMO_SETS - 1);

	for (int way = 0; way < 2; way++)
		if (memo_is(&m->slot[set][way], h, lw)) {
			m->last[set] = (unsigned char)way;
			return &m->slot[set][way];
		}
	return NULL;
}

/* Remembers that lw's series has row key key[0..klen) (any base time). */
static void memo_put(struct memo *m, const struct tsd_line_words *lw,
		     const unsigned char *key, size_t klen)
{
	uint32_t h;
	size_t set;
	int way;
	struct memo_slot *e;

	if (!lw->tags || lw->mlen + 1 + lw->tagslen > MEMO_KEY)
		return;
	h = memo_hash(lw);
	set = h & (MEMO_SETS - 1);
	way = memo_is(&m->slot[set][0], h, lw) ? 0 :
	      memo_is(&m->slot[set][1], h, lw) ? 1 : !m->last[set];
	m->last[set] = (unsigned char)way;
	e = &m->slot[set][way];
	e->hash = h;
	e->klen = (uint16_t)(lw->mlen + 1 + lw->tagslen);
	memcpy(e->key, lw->metric, lw->mlen);
	e->key[lw->mlen] = '\n';
	memcpy(e->key + lw->mlen + 1, lw->tags, lw->tagslen);
	e->rklen = (unsigned char)klen;
	memcpy(e->rowkey, key, klen);
}

/* Room in sc->pts for n points more than the np it holds. */
static int pts_room(struct scratch *sc, size_t np, size_t n)
{
	size_t nc;
	struct tsd_point *p;

	if (np + n <= sc->pcap)
		return CF_OK;
	nc = sc->pcap ? 2 * sc->pcap : 4 * CHUNK;
	while (nc < np + n)
		nc *= 2;
	if (!(p = realloc(sc->pts, nc * sizeof *p)))
		return CF_ENOMEM;
	sc->pts = p;
	sc->pcap = nc;
	return CF_OK;
}

/* Appends the point (ts, v) of a series whose row key the memo holds. */
static void point_from_memo(struct scratch *sc, size_t *np,
			    const struct memo_slot *e, int64_t ts,
			    const struct tsd_value *v)
{
	struct tsd_point *p = &sc->pts[*np];
	unsigned flags;

	memcpy(p->key, e->rowkey, e->rklen);
	enc_u32be(p->key + TSD_UID_WIDTH, tsd_base_time(ts));
	p->klen = e->rklen;
	if (v->is_float)
		p->vlen = (unsigned char)tsd_value_encode_float(p->v, v->d,
								&flags);
	else
		p->vlen = (unsigned char)tsd_value_encode_int(p->v, v->i,
							      &flags);
	p->qlen = (unsigned char)tsd_qualifier_build(p->q, ts, flags);
	p->seq = (uint32_t)*np;
	p->gone = 0;
	(*np)++;
}

/* Resolves the names of sc->lines[0..n) and appends their points to
 * sc->pts, which holds *np already; m (or NULL) remembers their series.
 * UIDs are assigned in line order; a failure leaves earlier assignments
 * (harmless: OpenTSDB does the same). */
static int encode_lines(tsd *t, cf_table *uidt, struct scratch *sc,
			struct memo *m, size_t n, size_t *np,
			struct tsd_error *err)
{
	struct tsd_uid_req *req = sc->req;
	size_t nr = 0, bad;
	int rc;

	if ((rc = pts_room(sc, *np, n)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct tsd_line *l = &sc->lines[i];
		req[nr++] = (struct tsd_uid_req){ l->metric, l->mlen,
						  TSD_METRICS, 0 };
		for (size_t j = 0; j < l->ntags; j++) {
			req[nr++] = (struct tsd_uid_req){
				l->tags[j].k, l->tags[j].klen, TSD_TAGK, 0 };
			req[nr++] = (struct tsd_uid_req){
				l->tags[j].v, l->tags[j].vlen, TSD_TAGV, 0 };
		}
	}
	if ((rc = tsd_uid_assign_many(t->uids, uidt, req, nr, &bad))) {
		set_err(err, 0, rc == CF_ERANGE ? "cannot assign a UID "
			"(UID space exhausted)" : "cannot assign a UID", rc);
		return rc;
	}
	nr = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tsd_line *l = &sc->lines[i];
		unsigned char metric[TSD_UID_WIDTH];
		unsigned char tags[TSD_MAX_TAGS][2 * TSD_UID_WIDTH];
		struct tsd_point *p = &sc->pts[*np];
		unsigned flags;

		tsd_uid_put(metric, req[nr++].uid);
		for (size_t j = 0; j < l->ntags; j++) {
			tsd_uid_put(tags[j], req[nr++].uid);
			tsd_uid_put(tags[j] + TSD_UID_WIDTH, req[nr++].uid);
		}
		p->klen = (unsigned char)tsd_rowkey_build(p->key, metric,
							  tsd_base_time(l->ts),
							  tags, l->ntags);
		if (m)
			memo_put(m, &sc->words[i], p->key, p->klen);
		if (l->value.is_float)
			p->vlen = (unsigned char)tsd_value_encode_float(
				p->v, l->value.d, &flags);
		else
			p->vlen = (unsigned char)tsd_value_encode_int(
				p->v, l->value.i, &flags);
		p->qlen = (unsigned char)tsd_qualifier_build(p->q, l->ts,
							     flags);
		p->seq = (uint32_t)*np;
		p->gone = 0;
		(*np)++;
	}
	return CF_OK;
}

/* Rows by key. */
static int rows_cmp(const void *x, const void *y)
{
	const struct tsd_point *a = ((const struct rowgrp *)x)->first;
	const struct tsd_point *b = ((const struct rowgrp *)y)->first;
	size_t n = a->klen < b->klen ? a->klen : b->klen;
	int c = memcmp(a->key, b->key, n);

	if (c)
		return c;
	return a->klen < b->klen ? -1 : a->klen > b->klen;
}

/* 1 when the points of one row p[0..n) are in (qualifier, seq) order. */
static int row_sorted(struct tsd_point *const *p, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (point_cmp(&p[i - 1], &p[i]) > 0)
			return 0;
	return 1;
}

/* Grows the order and row arrays to the points' capacity. */
static int order_room(struct scratch *sc, size_t n)
{
	if (n <= sc->ocap)
		return CF_OK;
	free(sc->order);
	free(sc->slot);
	free(sc->grp);
	free(sc->rows);
	sc->ocap = 0;
	sc->order = malloc(sc->pcap * sizeof *sc->order);
	sc->slot = malloc(2 * sc->pcap * sizeof *sc->slot);
	sc->grp = malloc(sc->pcap * sizeof *sc->grp);
	sc->rows = malloc(sc->pcap * sizeof *sc->rows);
	if (!sc->order || !sc->slot || !sc->grp || !sc->rows)
		return CF_ENOMEM;
	sc->ocap = sc->pcap;
	return CF_OK;
}

/* Of the points order[a..b) with the same time (a run of equal
 * offsets), keeps the one of the latest line: the others are gone. */
static void keep_latest(struct tsd_point **order, size_t a, size_t b)
{
	size_t w = a;

	for (size_t i = a + 1; i < b; i++)
		if (order[i]->seq > order[w]->seq)
			w = i;
	for (size_t i = a; i < b; i++)
		if (i != w)
			order[i]->gone = 1;
}

/*
 * One row's points order[a..b), in point_cmp order: the seconds points
 * by time, then the milliseconds points by time.  Where lines of the
 * write gave one time twice (another value, or another width or kind of
 * one: 100 then 200 are a 1-byte and a 2-byte qualifier), the later line
 * is kept and the others are marked gone, as a later write's newer
 * version wins (docs/timeseries.md): two cells of one time in one write
 * would share their version, and a read could not tell the later.
 */
static void drop_row_repeats(struct tsd_point **order, size_t a, size_t b)
{
	size_t ms = b, run = a, i, j;
	uint32_t prev = 0;

	for (i = a; i < b; i++) {
		uint32_t off = tsd_qualifier_offset_ms(order[i]->q);
		if ((order[i]->qlen == 4 && ms == b) ||
		    (i > run && off != prev)) {
			if (i - run > 1)
				keep_latest(order, run, i);
			run = i;
			if (order[i]->qlen == 4 && ms == b)
				ms = i;
		}
		prev = off;
	}
	if (b - run > 1)
		keep_latest(order, run, b);
	/* a seconds point and a milliseconds point of one time: each
	 * list is in time order */
	for (i = a, j = ms; ms > a && i < ms && j < b;) {
		uint32_t x, y;
		if (order[i]->gone) {
			i++;
			continue;
		}
		if (order[j]->gone) {
			j++;
			continue;
		}
		x = tsd_qualifier_offset_ms(order[i]->q);
		y = tsd_qualifier_offset_ms(order[j]->q);
		if (x < y)
			i++;
		else if (y < x)
			j++;
		else if (order[i]->seq < order[j]->seq)
			order[i++]->gone = 1;
		else
			order[j++]->gone = 1;
	}
}

/*
 * Puts sc->order[0..n) in key order and marks gone each point that a
 * later line of the write gives again (drop_row_repeats).  The points
 * are grouped by row with a hash table (in line order, so each row's
 * points keep the order of their lines, which is usually time order
 * already), the rows sorted, and only a row whose points are out of
 * order sorted itself.  A qsort of all the points compared full keys
 * about 14 times a point.
 */
static void order_points(struct scratch *sc, size_t n)
{
	struct tsd_point **order = sc->order;
	uint32_t *slot = sc->slot, *grp = sc->grp;
	struct rowgrp *rows = sc->rows;
	size_t mask = 1, nrows = 0;

	while (mask < 2 * n)
		mask <<= 1;
	mask--;
	memset(slot, 0xff, (mask + 1) * sizeof *slot);
	for (size_t i = 0; i < n; i++) {
		const struct tsd_point *p = &sc->pts[i];
		size_t h = key_hash(p->key, p->klen) & mask;
		uint32_t g;
		for (;; h = (h + 1) & mask) {
			g = slot[h];
			if (g == UINT32_MAX) {
				g = slot[h] = (uint32_t)nrows;
				rows[nrows++] = (struct rowgrp){ p, 0, 0 };
				break;
			}
			if (rows[g].first->klen == p->klen &&
			    !memcmp(rows[g].first->key, p->key, p->klen))
				break;
		}
		rows[g].n++;
		grp[i] = g;
	}
	/* the rows in key order, each carrying its index in at; then
	 * slot[index] (the table is free now) is the row's first place */
	for (size_t g = 0; g < nrows; g++)
		rows[g].at = (uint32_t)g;
	qsort(rows, nrows, sizeof *rows, rows_cmp);
	for (size_t g = 0, at = 0; g < nrows; g++) {
		slot[rows[g].at] = (uint32_t)at;
		at += rows[g].n;
	}
	for (size_t i = 0; i < n; i++)
		order[slot[grp[i]]++] = &sc->pts[i];
	for (size_t g = 0, at = 0; g < nrows; g++) {
		if (rows[g].n > 1) {
			if (!row_sorted(order + at, rows[g].n))
				qsort(order + at, rows[g].n, sizeof *order,
				      point_cmp);
			drop_row_repeats(order, at, at + rows[g].n);
		}
		at += rows[g].n;
	}
}

/* Puts the points sc->pts[0..n) in one batch. */
static int store_points(tsd *t, cf_table *dbt, struct scratch *sc, size_t n,
			struct tsd_error *err)
{
	struct tsd_point **order;
	int rc;

	if ((rc = order_room(sc, n)))
		return rc;
	if (!sc->b) {
		if ((rc = cf_batch_new(&sc->b)))
			return rc;
		cf_batch_keep_stamp(sc->b);	/* the recent points follow it */
	}
	order = sc->order;
	/* in key order: the memstore's inserts then walk to neighbouring
	 * nodes, and a row's points are compacted in order (a point the
	 * write gives twice is put once, as its later line gives it;
	 * tsd.datapoints.added and the series' counters count both, as
	 * OpenTSDB's do) */
	order_points(sc, n);
	cf_batch_clear(sc->b);
	for (size_t i = 0; i < n; i++) {
		const struct tsd_point *p = order[i];
		if (p->gone)
			continue;
		if ((rc = cf_batch_put(sc->b, p->key, p->klen, "t", 1, p->q,
				       p->qlen, CF_TS_NOW, p->v, p->vlen)))
			return rc;
	}
	if ((rc = cf_table_apply(dbt, sc->b))) {
		set_err(err, 0, "storing the points", rc);
		return rc;
	}
	tsd_recent_put(t, (const struct tsd_point *const *)order, n);
	tsd_tsmeta_track(t, (const struct tsd_point *const *)order, n);
	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || order[i]->klen != order[i - 1]->klen ||
		    memcmp(order[i]->key, order[i - 1]->key, order[i]->klen))
			rowset_add(&t->pending, order[i]->key, order[i]->klen);
	t->st.points += n;
	pthread_mutex_unlock(&t->mu);
	return CF_OK;
}

/* Refuses line number lineno (text s[0..len)) for reason: counted in the
 * stats and in *res, reported to the writer's callback, and kept in *err
 * when it is the write's first refused line.  Called with w->mu held. */
static void refuse(tsd_writer *w, uint64_t lineno, const char *s, size_t len,
		   const char *reason, struct tsd_put_result *res,
		   struct tsd_error *err)
{
	struct tsd_error e;

	e.line = lineno;
	snprintf(e.reason, sizeof e.reason, "%s", reason);
	if (res->refused++ == 0 && err)
		*err = e;
	pthread_mutex_lock(&w->t->mu);
	w->t->st.lines_rejected++;
	pthread_mutex_unlock(&w->t->mu);
	if (w->on_reject)
		w->on_reject(w->reject_ctx, &e, s, len);
}

/* Parses the lines of text[0..len), each ended by '\n' but the last,
 * which may also end with the text; refuses the invalid ones and stores
 * the others in one batch.  Engine errors win over refused lines (the
 * caller then fails the write with them, nothing of it stored). */
static int write_lines(tsd_writer *w, const char *text, size_t len,
		       struct tsd_put_result *res, struct tsd_error *err)
{
	struct scratch *sc = &w->sc;
	cf_table *uidt = NULL, *dbt = NULL;
	size_t nl = 0, np = 0, mlen = w->metric ? strlen(w->metric) : 0;
	char why[200];
	int rc = CF_OK;

	if (!sc->lines) {
		sc->lines = malloc(CHUNK * sizeof *sc->lines);
		sc->words = malloc(CHUNK * sizeof *sc->words);
		sc->req = malloc(CHUNK * (1 + 2 * TSD_MAX_TAGS) *
				 sizeof *sc->req);
		if (!sc->lines || !sc->words || !sc->req) {
			scratch_free(sc);
			return CF_ENOMEM;
		}
	}
	/* the tables before the memo answers: opening them makes a dropped
	 * tsdb-uid anew, which empties the UID caches and moves the epoch
	 * (tsd_tables), and the memo must not give a line UIDs from before */
	if ((w->memo || w->lines >= MEMO_AFTER) &&
	    (rc = tsd_tables(w->t, &uidt, &dbt)))
		return rc;
	if (!w->memo && w->lines >= MEMO_AFTER &&
	    (w->memo = malloc(sizeof *w->memo))) {
		w->memo->epoch = tsd_uids_epoch(w->t->uids);
		memo_clear(w->memo);
	} else if (w->memo) {
		uint64_t epoch = tsd_uids_epoch(w->t->uids);
		if (epoch != w->memo->epoch) {
			w->memo->epoch = epoch;
			memo_clear(w->memo);
		}
	}
	for (size_t b = 0; b < len;) {
		const char *nlp = memchr(text + b, '\n', len - b);
		size_t e = nlp ? (size_t)(nlp - text) : len;
		struct tsd_line_words *lw = &sc->words[nl];
		const struct memo_slot *known = NULL;
		w->lines++;
		res->lines++;
		if (!tsd_line_words(text + b, e - b, w->metric != NULL, lw)) {
			lw->tags = NULL;
		} else {
			if (w->metric) {
				/* the writer's metric: not in the key */
				lw->metric = "";
				lw->mlen = 0;
			}
			if (w->memo)
				known = memo_find(w->memo, lw);
		}
		if (known) {
			int64_t ts;
			struct tsd_value v;
			if (tsd_line_point(lw, &ts, &v, why, sizeof why)) {
				refuse(w, w->lines, text + b, e - b, why, res,
				       err);
			} else {
				/* the lines before it first: the points
				 * keep the order of their lines */
				if (nl && !uidt &&
				    (rc = tsd_tables(w->t, &uidt, &dbt)))
					goto out;
				if (nl && (rc = encode_lines(w->t, uidt, sc,
							     w->memo, nl, &np,
							     err)))
					goto out;
				nl = 0;
				if ((rc = pts_room(sc, np, 1)))
					goto out;
				point_from_memo(sc, &np, known, ts, &v);
			}
			b = e + 1;
			continue;
		}
		rc = tsd_line_parse(text + b, e - b, w->metric, mlen,
				    &sc->lines[nl], why, sizeof why);
		if (rc == TSD_LINE_BLANK)
			rc = CF_OK;
		else if (rc)
			refuse(w, w->lines, text + b, e - b, why, res, err);
		else
			nl++;
		b = e + 1;
		if (nl == CHUNK || (b >= len && nl)) {
			if (!uidt && (rc = tsd_tables(w->t, &uidt, &dbt)))
				goto out;
			if ((rc = encode_lines(w->t, uidt, sc, w->memo, nl,
					       &np, err)))
				goto out;
			nl = 0;
		}
	}
	if (nl) {
		/* the last lines, when a known one ended the text */
		if (!uidt && (rc = tsd_tables(w->t, &uidt, &dbt)))
			goto out;
		if ((rc = encode_lines(w->t, uidt, sc, w->memo, nl, &np, err)))
			goto out;
	}
	rc = CF_OK;
	if (np && !dbt && (rc = tsd_tables(w->t, &uidt, &dbt)))
		goto out;	/* every line was a known series */
	if (np && (rc = store_points(w->t, dbt, sc, np, err)) == CF_OK)
		res->stored += np;
out:
	cf_table_close(uidt);
	cf_table_close(dbt);
	if (sc->pcap * (sizeof *sc->pts + sizeof *sc->order) > SCRATCH_KEEP)
		scratch_free(sc);
	return rc;
}

/* Refuses the unfinished line pending + p[0..len) (too long, or the end
 * of a failed write) and skips its rest up to the next '\n'. */
static void drop_unfinished(tsd_writer *w, const char *p, size_t len,
			    const char *reason, struct tsd_put_result *res,
			    struct tsd_error *err)
{
	if (buf_append(&w->pending, p, len) == CF_OK)
		refuse(w, ++w->lines, (const char *)w->pending.p,
		       w->pending.len, reason, res, err);
	else
		refuse(w, ++w->lines, p, len, reason, res, err);
	buf_reset(&w->pending);
	w->skip = 1;
}

int tsd_writer_put(tsd_writer *w, const void *data, size_t len, int finish,
		   struct tsd_put_result *res, struct tsd_error *err)
{
	struct tsd_put_result own;
	const char *p = data;
	int rc = CF_OK;

	if (!res)
		res = &own;
	memset(res, 0, sizeof *res);
	if (err) {
		err->line = 0;
		err->reason[0] = '\0';
	}
	pthread_mutex_lock(&w->mu);
	if (w->skip) {
		const char *nl = len ? memchr(p, '\n', len) : NULL;
		if (!nl) {
			len = 0;
		} else {
			w->skip = 0;
			len -= (size_t)(nl + 1 - p);
			p = nl + 1;
		}
	}
	const char *last = len ? memrchr(p, '\n', len) : NULL;
	size_t head = last ? (size_t)(last + 1 - p) : 0;
	if (head) {
		if (w->pending.len) {
			/* the first line began in an earlier write */
			rc = buf_append(&w->pending, p, head);
			if (rc == CF_OK)
				rc = write_lines(w, (const char *)w->pending.p,
						 w->pending.len, res, err);
		} else {
			rc = write_lines(w, p, head, res, err);
		}
		buf_reset(&w->pending);
	}
	p += head;
	len -= head;
	if (rc) {
		/* nothing of the write is stored: neither its unfinished
		 * last line, whose rest is skipped when it comes */
		if (len)
			drop_unfinished(w, p, len, "unfinished line of a "
					"failed write", res, NULL);
		goto out;
	}
	if (w->skip)
		goto done;
	if (w->pending.len + len > TSD_LINE_MAX) {
		drop_unfinished(w, p, len, "line too long (over 64 KiB)", res,
				err);
		goto done;
	}
	if ((rc = buf_append(&w->pending, p, len)))
		goto out;
	if (finish && w->pending.len) {
		rc = write_lines(w, (const char *)w->pending.p, w->pending.len,
				 res, err);
		buf_reset(&w->pending);
		if (rc)
			goto out;
	}
done:
	if (finish)
		w->skip = 0;
	if (res->refused)
		rc = CF_EINVAL;
out:
	if (rc) {
		pthread_mutex_lock(&w->t->mu);
		w->t->st.writes_rejected++;
		pthread_mutex_unlock(&w->t->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int tsd_writer_write(tsd_writer *w, const void *data, size_t len,
		     struct tsd_error *err)
{
	return tsd_writer_put(w, data, len, 0, NULL, err);
}

int tsd_writer_finish(tsd_writer *w, struct tsd_error *err)
{
	return tsd_writer_put(w, "", 0, 1, NULL, err);
}

int tsd_put_text(tsd *t, const char *text, size_t len, struct tsd_error *err)
{
	tsd_writer *w;
	int rc = tsd_writer_open(t, NULL, &w);
	if (rc)
		return rc;
	rc = tsd_writer_put(w, text, len, 1, NULL, err);
	tsd_writer_close(w);
	return rc;
}

void tsd_drop_caches(tsd *t)
{
	tsd_uids_clear(t->uids);
	cf_log(CF_LOG_INFO, "tsd: UID caches dropped");
}
