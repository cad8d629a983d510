/*
 * uid.c: UID assignment and lookup on tsdb-uid (layout in uid.h).
 *
 * The cache holds, per kind, entries linked into two hash tables: by name
 * and by UID.  It is bounded: past CACHE_MAX entries of a kind it is
 * emptied and refilled from the table, which is cheap because mappings
 * never change.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tsd/codec.h"
#include "tsd/uid.h"
#include "util/coding.h"
#include "util/err.h"
#include "util/log.h"

#define CACHE_MAX (1u << 20)

static const char *const kinds[3] = { "metrics", "tagk", "tagv" };

static const char fam_id[] = "id";
static const char fam_name[] = "name";
/* OpenTSDB's MAXID_ROW: one zero byte */
static const unsigned char counter_row[1] = { 0 };

struct uentry {
	struct uentry *next_name, *next_uid;
	uint32_t uid;
	uint32_t hash;
	size_t len;
	char name[];
};

struct ucache {
	struct uentry **by_name, **by_uid;
	size_t nb;		/* buckets, a power of two */
	size_t count;
};

struct tsd_uids {
	pthread_mutex_t mu;	/* the caches and the counters below */
	pthread_mutex_t assign_mu;	/* creations and renames of this
					 * process */
	struct ucache c[3];
	uint64_t assigned;
	/* renames so far: a mapping read from the table is cached only if
	 * no rename came between the read and the caching */
	uint64_t renames;
	uint64_t clears;	/* tsd_uids_clear calls */
	tsd_uid_assigned_fn *on_assign;
	void *on_assign_arg;
};

void tsd_uids_on_assign(struct tsd_uids *u, tsd_uid_assigned_fn *fn,
			void *arg)
{
	u->on_assign = fn;
	u->on_assign_arg = arg;
}

const char *tsd_uid_kind_name(enum tsd_kind kind)
{
	return kinds[kind];
}

static uint32_t hash_name(const char *s, size_t n)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static uint32_t hash_uid(uint32_t uid)
{
	return uid * 2654435761u;
}

static void cache_free(struct ucache *c)
{
	for (size_t i = 0; i < c->nb; i++) {
		struct uentry *e = c->by_name[i], *n;
		for (; e; e = n) {
			n = e->next_name;
			free(e);
		}
	}
	free(c->by_name);
	free(c->by_uid);
	memset(c, 0, sizeof *c);
}

static int cache_grow(struct ucache *c)
{
	size_t nb = c->nb ? 2 * c->nb : 256;
	struct uentry **bn = calloc(nb, sizeof *bn), **bu = calloc(nb, sizeof *bu);
	if (!bn || !bu) {
		free(bn);
		free(bu);
		return CF_ENOMEM;
	}
	for (size_t i = 0; i < c->nb; i++) {
		struct uentry *e = c->by_name[i], *n;
		for (; e; e = n) {
			n = e->next_name;
			e->next_name = bn[e->hash & (nb - 1)];
			bn[e->hash & (nb - 1)] = e;
			size_t b = hash_uid(e->uid) & (nb - 1);
			e->next_uid = bu[b];
			bu[b] = e;
		}
	}
	free(c->by_name);
	free(c->by_uid);
	c->by_name = bn;
	c->by_uid = bu;
	c->nb = nb;
	return CF_OK;
}

static struct uentry *cache_by_name(struct ucache *c, const char *name,
				    size_t len)
{
	if (!c->nb)
		return NULL;
	uint32_t h = hash_name(name, len);
	for (struct uentry *e = c->by_name[h & (c->nb - 1)]; e; e = e->next_name)
		if (e->hash == h && e->len == len && !memcmp(e->name, name, len))
			return e;
	return NULL;
}

static struct uentry *cache_by_uid(struct ucache *c, uint32_t uid)
{
	if (!c->nb)
		return NULL;
	for (struct uentry *e = c->by_uid[hash_uid(uid) & (c->nb - 1)]; e;
	     e = e->next_uid)
		if (e->uid == uid)
			return e;
	return NULL;
}

/* Caching is best effort: on memory pressure the entry is not kept. */
static void cache_put(struct ucache *c, const char *name, size_t len,
		      uint32_t uid)
{
	if (cache_by_name(c, name, len) || cache_by_uid(c, uid))
		return;
	if (c->count >= CACHE_MAX)
		cache_free(c);
	if (c->count >= c->nb && cache_grow(c))
		return;
	struct uentry *e = malloc(sizeof *e + len + 1);
	if (!e)
		return;
	e->uid = uid;
	e->hash = hash_name(name, len);
	e->len = len;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->next_name = c->by_name[e->hash & (c->nb - 1)];
	c->by_name[e->hash & (c->nb - 1)] = e;
	size_t b = hash_uid(uid) & (c->nb - 1);
	e->next_uid = c->by_uid[b];
	c->by_uid[b] = e;
	c->count++;
}

/* Forgets entry e.  Under mu. */
static void cache_drop(struct ucache *c, struct uentry *e)
{
	struct uentry **pp = &c->by_name[e->hash & (c->nb - 1)];
	while (*pp != e)
		pp = &(*pp)->next_name;
	*pp = e->next_name;
	pp = &c->by_uid[hash_uid(e->uid) & (c->nb - 1)];
	while (*pp != e)
		pp = &(*pp)->next_uid;
	*pp = e->next_uid;
	free(e);
	c->count--;
}

/* The renames so far, for a later cache_put_since().  Under mu. */
static uint64_t renames_locked(struct tsd_uids *u)
{
	return u->renames;
}

/* cache_put of a mapping read when u->renames was seen: not cached if a
 * rename came since (it may be the old name's).  Takes mu. */
static void cache_put_since(struct tsd_uids *u, enum tsd_kind kind,
			    uint64_t seen, const char *name, size_t len,
			    uint32_t uid)
{
	pthread_mutex_lock(&u->mu);
	if (u->renames == seen)
		cache_put(&u->c[kind], name, len, uid);
	pthread_mutex_unlock(&u->mu);
}

int tsd_uids_new(struct tsd_uids **out)
{
	struct tsd_uids *u = calloc(1, sizeof *u);
	if (!u)
		return CF_ENOMEM;
	pthread_mutex_init(&u->mu, NULL);
	pthread_mutex_init(&u->assign_mu, NULL);
	*out = u;
	return CF_OK;
}

void tsd_uids_free(struct tsd_uids *u)
{
	if (!u)
		return;
	for (int k = 0; k < 3; k++)
		cache_free(&u->c[k]);
	pthread_mutex_destroy(&u->mu);
	pthread_mutex_destroy(&u->assign_mu);
	free(u);
}

void tsd_uids_clear(struct tsd_uids *u)
{
	pthread_mutex_lock(&u->mu);
	for (int k = 0; k < 3; k++)
		cache_free(&u->c[k]);
	u->clears++;
	pthread_mutex_unlock(&u->mu);
}

uint64_t tsd_uids_epoch(struct tsd_uids *u)
{
	pthread_mutex_lock(&u->mu);
	uint64_t n = u->renames + u->clears;
	pthread_mutex_unlock(&u->mu);
	return n;
}

uint64_t tsd_uids_assigned(struct tsd_uids *u)
{
	pthread_mutex_lock(&u->mu);
	uint64_t n = u->assigned;
	pthread_mutex_unlock(&u->mu);
	return n;
}

/* Reads the forward mapping of name from the table. */
static int read_forward(cf_table *uidt, enum tsd_kind kind, const char *name,
			size_t len, uint32_t *uid)
{
	struct cf_column col = { fam_id, 2, kinds[kind], strlen(kinds[kind]) };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	cf_row *row = NULL;
	int rc;

	o.columns = &col;
	o.ncolumns = 1;
	rc = cf_table_get(uidt, name, len, &o, &row);
	if (rc)
		return rc;
	if (cf_row_count(row) == 0) {
		rc = CF_ENOTFOUND;
	} else {
		const struct cf_cell *c = cf_row_cell(row, 0);
		if (c->vlen != TSD_UID_WIDTH)
			rc = CF_ECORRUPT;
		else
			*uid = tsd_uid_get(c->val);
	}
	cf_row_free(row);
	return rc;
}

int tsd_uid_lookup(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		   const char *name, size_t len, uint32_t *uid)
{
	struct uentry *e;
	uint64_t seen;
	int rc;

	pthread_mutex_lock(&u->mu);
	e = cache_by_name(&u->c[kind], name, len);
	if (e)
		*uid = e->uid;
	seen = renames_locked(u);
	pthread_mutex_unlock(&u->mu);
	if (e)
		return CF_OK;
	rc = read_forward(uidt, kind, name, len, uid);
	if (rc == CF_OK)
		cache_put_since(u, kind, seen, name, len, *uid);
	return rc;
}

static int put_one(cf_table *t, const void *row, size_t rowlen,
		   const char *fam, const char *qual, const void *val,
		   size_t vlen, cf_batch **out)
{
	cf_batch *b = NULL;
	int rc = cf_batch_new(&b);
	if (rc)
		return rc;
	rc = cf_batch_put(b, row, rowlen, fam, strlen(fam), qual, strlen(qual),
			  CF_TS_NOW, val, vlen);
	if (rc == CF_OK && !out)
		rc = cf_table_apply(t, b);
	if (rc || !out)
		cf_batch_free(b);
	else
		*out = b;
	return rc;
}

int tsd_uid_assign(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		   const char *name, size_t len, uint32_t *uid)
{
	const char *q = kinds[kind];
	unsigned char id[TSD_UID_WIDTH];
	cf_batch *fwd = NULL;
	uint64_t seen;
	int64_t next;
	int applied = 0, rc;

	rc = tsd_uid_lookup(u, uidt, kind, name, len, uid);
	if (rc != CF_ENOTFOUND)
		return rc;
	pthread_mutex_lock(&u->assign_mu);
	pthread_mutex_lock(&u->mu);
	seen = renames_locked(u);
	pthread_mutex_unlock(&u->mu);
	/* another thread of ours may have created it meanwhile */
	rc = read_forward(uidt, kind, name, len, uid);
	if (rc != CF_ENOTFOUND)
		goto out;
	rc = cf_table_increment(uidt, counter_row, 1, fam_id, 2, q, strlen(q),
				1, &next);
	if (rc)
		goto out;
	if (next <= 0 || next > (int64_t)TSD_UID_MAX) {
		cf_log(CF_LOG_ERROR, "tsd: no more UIDs of kind %s (counter at "
		       "%lld, the largest is %u)", q, (long long)next,
		       TSD_UID_MAX);
		rc = CF_ERANGE;
		goto out;
	}
	tsd_uid_put(id, (uint32_t)next);
	/* reverse first: a crash between the two leaves a wasted UID, never
	 * a name whose UID cannot be resolved back */
	rc = put_one(uidt, id, sizeof id, fam_name, q, name, len, NULL);
	if (rc)
		goto out;
	rc = put_one(uidt, name, len, fam_id, q, id, sizeof id, &fwd);
	if (rc)
		goto out;
	rc = cf_table_check_and_apply(uidt, name, len, fam_id, 2, q, strlen(q),
				      NULL, 0, fwd, &applied);
	if (rc)
		goto out;
	if (applied) {
		*uid = (uint32_t)next;
		pthread_mutex_lock(&u->mu);
		u->assigned++;
		pthread_mutex_unlock(&u->mu);
	} else {
		/* lost the race to another writer: take its UID */
		rc = read_forward(uidt, kind, name, len, uid);
	}
out:
	pthread_mutex_unlock(&u->assign_mu);
	cf_batch_free(fwd);
	if (rc == CF_OK)
		cache_put_since(u, kind, seen, name, len, *uid);
	if (rc == CF_OK && applied && u->on_assign)
		u->on_assign(u->on_assign_arg, uidt, kind, *uid);
	return rc;
}

int tsd_uid_assign_many(struct tsd_uids *u, cf_table *uidt,
			struct tsd_uid_req *req, size_t n, size_t *failed)
{
	size_t i, misses = 0;
	int rc;

	/* UID 0 is never assigned (the counter starts at 1): it marks a
	 * request the cache did not answer */
	pthread_mutex_lock(&u->mu);
	for (i = 0; i < n; i++) {
		struct uentry *e = cache_by_name(&u->c[req[i].kind],
						 req[i].name, req[i].len);
		req[i].uid = e ? e->uid : 0;
		misses += !e;
	}
	pthread_mutex_unlock(&u->mu);
	for (i = 0; misses && i < n; i++) {
		if (req[i].uid)
			continue;
		misses--;
		if ((rc = tsd_uid_assign(u, uidt, req[i].kind, req[i].name,
					 req[i].len, &req[i].uid))) {
			*failed = i;
			return rc;
		}
	}
	return CF_OK;
}

int tsd_uid_rename(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		   const char *old, size_t olen, const char *name, size_t len,
		   uint32_t *uid)
{
	const char *q = kinds[kind];
	unsigned char id[TSD_UID_WIDTH];
	cf_batch *b = NULL;
	uint32_t other;
	int applied = 1, resumed = 0, rc;

	pthread_mutex_lock(&u->assign_mu);
	if ((rc = read_forward(uidt, kind, old, olen, uid)))
		goto out;
	rc = read_forward(uidt, kind, name, len, &other);
	if (rc == CF_OK && (other != *uid ||
			    (len == olen && !memcmp(name, old, len)))) {
		*uid = other;
		rc = CF_EEXIST;
		goto out;
	}
	/* both names on the UID: a rename a crash stopped, finished now */
	resumed = rc == CF_OK;
	if (rc != CF_OK && rc != CF_ENOTFOUND)
		goto out;
	tsd_uid_put(id, *uid);
	/* the reverse first, as OpenTSDB: a crash before the forward row
	 * leaves the old name resolving and the rename to be made again */
	if ((rc = put_one(uidt, id, sizeof id, fam_name, q, name, len, NULL)))
		goto out;
	if (!resumed) {
		/* the new forward row only if nobody assigned the name
		 * meanwhile (CheckAndPut, as assignments make it) */
		if ((rc = put_one(uidt, name, len, fam_id, q, id, sizeof id,
				  &b)) ||
		    (rc = cf_table_check_and_apply(uidt, name, len, fam_id, 2,
						   q, strlen(q), NULL, 0, b,
						   &applied)))
			goto out;
		cf_batch_free(b);
		b = NULL;
	}
	if (!applied) {
		/* lost to an assignment of the new name: undo the reverse */
		rc = put_one(uidt, id, sizeof id, fam_name, q, old, olen, NULL);
		if (rc == CF_OK)
			rc = read_forward(uidt, kind, name, len, uid);
		if (rc == CF_OK)
			rc = CF_EEXIST;
		goto out;
	}
	if ((rc = cf_batch_new(&b)) ||
	    (rc = cf_batch_delete(b, CF_DEL_COLUMN, old, olen, fam_id, 2, q,
				  strlen(q), CF_TS_NOW)) ||
	    (rc = cf_table_apply(uidt, b)))
		goto out;
out:
	{
		/* forget both names' mappings (whatever was written before
		 * an error) and fence the reads in flight */
		struct uentry *e;
		pthread_mutex_lock(&u->mu);
		u->renames++;
		if ((e = cache_by_name(&u->c[kind], old, olen)))
			cache_drop(&u->c[kind], e);
		if ((e = cache_by_uid(&u->c[kind], *uid)))
			cache_drop(&u->c[kind], e);
		if ((e = cache_by_name(&u->c[kind], name, len)))
			cache_drop(&u->c[kind], e);
		pthread_mutex_unlock(&u->mu);
	}
	pthread_mutex_unlock(&u->assign_mu);
	cf_batch_free(b);
	return rc;
}

int tsd_uid_name(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		 uint32_t uid, struct buf *out)
{
	struct cf_column col = { fam_name, 4, kinds[kind], strlen(kinds[kind]) };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	unsigned char id[TSD_UID_WIDTH];
	cf_row *row = NULL;
	struct uentry *e;
	uint64_t seen;
	int rc = CF_OK;

	pthread_mutex_lock(&u->mu);
	e = cache_by_uid(&u->c[kind], uid);
	if (e)
		rc = buf_append(out, e->name, e->len);
	seen = renames_locked(u);
	pthread_mutex_unlock(&u->mu);
	if (e)
		return rc;
	o.columns = &col;
	o.ncolumns = 1;
	tsd_uid_put(id, uid);
	if ((rc = cf_table_get(uidt, id, sizeof id, &o, &row)))
		return rc;
	if (cf_row_count(row) == 0) {
		rc = CF_ENOTFOUND;
	} else {
		const struct cf_cell *c = cf_row_cell(row, 0);
		rc = buf_append(out, c->val, c->vlen);
		if (rc == CF_OK)
			cache_put_since(u, kind, seen, (const char *)c->val,
					c->vlen, uid);
	}
	cf_row_free(row);
	return rc;
}

int tsd_uid_list(cf_table *uidt, enum tsd_kind kind, const char *prefix,
		 size_t max, char ***names, size_t *n)
{
	struct cf_column col = { fam_id, 2, kinds[kind], strlen(kinds[kind]) };
	struct cf_scan_opts so;
	struct buf text = BUF_INIT;	/* the names, NUL-terminated */
	size_t count = 0, plen = strlen(prefix);
	cf_scanner *s = NULL;
	const cf_row *row;
	char **arr;
	int rc;

	memset(&so, 0, sizeof so);
	so.read.columns = &col;
	so.read.ncolumns = 1;
	so.read.max_ts = INT64_MAX;
	so.read.max_versions = 1;
	so.read.keys_only = 1;
	if (plen) {
		so.prefix = prefix;
		so.prefixlen = plen;
	}
	*names = NULL;
	*n = 0;
	if ((rc = cf_scan_open(uidt, &so, &s)))
		return rc;
	while ((rc = cf_scan_next(s, &row)) == CF_OK && row) {
		size_t klen;
		const unsigned char *key = cf_row_key(row, &klen);
		/* the counter row has id cells too; names never hold a NUL */
		if (memchr(key, 0, klen))
			continue;
		if ((rc = buf_append(&text, key, klen)) ||
		    (rc = buf_putc(&text, 0)))
			break;
		if (++count == max)
			break;
	}
	cf_scan_close(s);
	if (rc)
		goto out;
	arr = malloc((count + 1) * sizeof *arr + text.len + 1);
	if (!arr) {
		rc = CF_ENOMEM;
		goto out;
	}
	char *p = (char *)(arr + count + 1);
	if (text.len)
		memcpy(p, text.p, text.len);
	for (size_t i = 0; i < count; i++) {
		arr[i] = p;
		p += strlen(p) + 1;
	}
	arr[count] = NULL;
	*names = arr;
	*n = count;
out:
	buf_release(&text);
	return rc;
}
