/*
 * tsdfs.c: MNT/tsd/ (SPEC section 6), the path mapping onto tsd/tsd.h.
 *
 *   tsd/                  FT_DIR      annotation annotations lookup
 *                                     metrics put q tagk tagv tree
 *                                     tsmeta uidmeta
 *   tsd/put               FT_PUT      append put lines
 *   tsd/metrics/          FT_METRICS  metric names (escaped, section 2)
 *   tsd/metrics/M         FT_METRIC   read: dump; write: "TS VALUE TAGS"
 *   tsd/tagk/, tagv/      FT_TAGK/V   tag names
 *   tsd/tagk/K, tagv/V    FT_KNAME/FT_VNAME  read: its UID, 6 hex digits
 *                         (mv of M, K or V in its directory renames it)
 *   tsd/q/                FT_Q        lists nothing; any query resolves
 *   tsd/q/QUERY[.png]     FT_QUERY    read: the result, or its graph;
 *                                     rm QUERY: delete what it reads
 *   tsd/lookup/           FT_LOOKUP   lists nothing; any lookup resolves
 *   tsd/lookup/LOOKUP     FT_LOOKUPQ  read: the series, one a line
 *   tsd/annotation        FT_NOTE     append annotations, a JSON line each
 *   tsd/annotations/      FT_NOTES    lists nothing; any range resolves
 *   tsd/annotations/RANGE FT_NOTESQ   read: the notes (JSON); rm: delete
 *   tsd/uidmeta/          FT_UMETAS   lists nothing; any UID resolves
 *   tsd/uidmeta/UID       FT_UMETAQ   read: the UIDMeta (JSON); append:
 *                                     JSON lines merged in; rm: delete
 *   tsd/tsmeta/           FT_TMETAS   lists nothing; any series resolves
 *   tsd/tsmeta/SERIES     FT_TMETAQ   the same for a series' TSMeta
 *                                     (tsuid=HEX, or m=METRIC{K=V,..}:
 *                                     read, the list of its series)
 *   tsd/tree/             FT_TREES    lists nothing; any name resolves
 *   tsd/tree/NAME         FT_TREEQ    read: a tree, rule or branch
 *                                     (treeid=N, &level=L&order=O,
 *                                     branch=HEX; JSON), read-only
 *
 * The tsd handle is opened at the first use that needs it: a write opens
 * it (creating tsdb and tsdb-uid), a read before any write finds no
 * tables and sees an empty tree, so mounting never creates tables.  The
 * handle lives until fs_tsd_teardown(), before the engine closes.
 *
 * Files whose content is produced while read (metric dumps, queries) are
 * opened direct_io by fs/file.c and report size 0, as /proc files do.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "tsd/tree.h"
#include "tsd/tsd.h"
#include "util/escape.h"
#include "util/log.h"

/* The longest line of tsd/annotation (one JSON note, or an array of
 * them): the memory a writer may hold. */
#define NOTE_LINE_MAX (1 << 20)

struct fs_tsd_file {
	enum fs_tsd_node kind;
	tsd_writer *w;
	tsd_cursor *c;
	char uid[8];		/* FT_KNAME, FT_VNAME: "%06x\n" */
	char *what;		/* for messages: the path below tsd/ */
	pthread_mutex_t mu;	/* FT_NOTE: text and lines */
	struct buf text;	/* FT_NOTESQ, FT_TREEQ: the answer; FT_NOTE: the
				 * line not ended yet */
	uint64_t lines;		/* FT_NOTE, meta files: lines taken */
	int writing;		/* meta files: opened to write (text: the
				 * pending line), else to read (the answer) */
};

static pthread_mutex_t tmu = PTHREAD_MUTEX_INITIALIZER;
static cf_db *tdb;
static tsd *handle;
static uint64_t recent_bytes;
static int recent_set;
static int meta_tracking, meta_realtime, meta_incrementing, meta_uid;

void fs_tsd_setup(cf_db *db)
{
	tdb = db;
}

void fs_tsd_set_recent(uint64_t bytes)
{
	recent_bytes = bytes;
	recent_set = 1;
}

void fs_tsd_set_meta(int tracking, int realtime, int incrementing,
		     int realtime_uid)
{
	meta_tracking = tracking;
	meta_realtime = realtime;
	meta_incrementing = incrementing;
	meta_uid = realtime_uid;
}

void fs_tsd_teardown(void)
{
	pthread_mutex_lock(&tmu);
	tsd_close(handle);
	handle = NULL;
	tdb = NULL;
	pthread_mutex_unlock(&tmu);
}

/* The handle; with create 0, CF_ENOTFOUND while no tsd table exists. */
static int get(int create, tsd **out)
{
	cf_table *t;
	int rc = 0;

	pthread_mutex_lock(&tmu);
	if (!handle && !create) {
		rc = cf_table_open(tdb, TSD_TABLE_UID, &t);
		if (!rc)
			cf_table_close(t);
	}
	if (!handle && !rc) {
		struct tsd_options o;
		tsd_options_default(&o);
		if (recent_set)
			o.recent_bytes = recent_bytes;
		o.tsuid_tracking = meta_tracking;
		o.realtime_ts = meta_realtime;
		o.tsuid_incrementing = meta_incrementing;
		o.realtime_uid = meta_uid;
		rc = tsd_open(tdb, &o, &handle);
	}
	*out = handle;
	pthread_mutex_unlock(&tmu);
	return rc;
}

int fs_tsd_get(int create, tsd **out)
{
	return get(create, out);
}

int fs_tsd_is_dir(enum fs_tsd_node k)
{
	return k == FT_DIR || k == FT_METRICS || k == FT_TAGK ||
	       k == FT_TAGV || k == FT_Q || k == FT_LOOKUP || k == FT_NOTES ||
	       k == FT_UMETAS || k == FT_TMETAS || k == FT_TREES;
}

/* A meta file: of a UID (tsd/uidmeta/) or of a series (tsd/tsmeta/). */
static int is_meta(enum fs_tsd_node k)
{
	return k == FT_UMETAQ || k == FT_TMETAQ;
}

/* tsd_uidmeta_qs or tsd_tsmeta_qs, as the meta file k says. */
static int meta_qs(enum fs_tsd_node k, tsd *t, const char *name,
		   enum tsd_meta_op op, const char *body, size_t blen,
		   struct buf *out, struct tsd_error *e)
{
	return (k == FT_TMETAQ ? tsd_tsmeta_qs : tsd_uidmeta_qs)(
		t, name, strlen(name), op, body, blen, out, e);
}

static enum tsd_kind kind_of(enum fs_tsd_node parent)
{
	return parent == FT_METRICS ? TSD_METRICS :
	       parent == FT_TAGK ? TSD_TAGK : TSD_TAGV;
}

/* The UID kind of a file under metrics/, tagk/ or tagv/. */
static enum tsd_kind name_kind(enum fs_tsd_node k)
{
	return k == FT_METRIC ? TSD_METRICS : k == FT_KNAME ? TSD_TAGK
							    : TSD_TAGV;
}

int fs_tsd_resolve(enum fs_tsd_node parent, const char *name,
		   enum fs_tsd_node *kind, struct buf *arg, const char **why)
{
	static const struct { const char *name; enum fs_tsd_node k; } top[] = {
		{ "put", FT_PUT }, { "metrics", FT_METRICS },
		{ "tagk", FT_TAGK }, { "tagv", FT_TAGV }, { "q", FT_Q },
		{ "lookup", FT_LOOKUP }, { "annotation", FT_NOTE },
		{ "annotations", FT_NOTES }, { "uidmeta", FT_UMETAS },
		{ "tsmeta", FT_TMETAS }, { "tree", FT_TREES },
	};
	size_t i;

	*why = "no such file";
	switch (parent) {
	case FT_DIR:
		for (i = 0; i < sizeof top / sizeof top[0]; i++)
			if (!strcmp(name, top[i].name)) {
				*kind = top[i].k;
				return 0;
			}
		return ENOENT;
	case FT_METRICS: case FT_TAGK: case FT_TAGV:
		*kind = parent == FT_METRICS ? FT_METRIC :
			parent == FT_TAGK ? FT_KNAME : FT_VNAME;
		if (cf_unescape(name, strlen(name), arg)) {
			*why = "malformed escape in a name";
			return EINVAL;
		}
		if (buf_putc(arg, 0))
			return ENOMEM;
		arg->len--;
		return 0;
	case FT_Q: case FT_LOOKUP: case FT_NOTES: case FT_UMETAS:
	case FT_TMETAS: case FT_TREES:
		*kind = parent == FT_Q ? FT_QUERY : parent == FT_LOOKUP ?
			FT_LOOKUPQ : parent == FT_NOTES ? FT_NOTESQ :
			parent == FT_UMETAS ? FT_UMETAQ :
			parent == FT_TMETAS ? FT_TMETAQ : FT_TREEQ;
		if (buf_append(arg, name, strlen(name)) || buf_putc(arg, 0))
			return ENOMEM;
		arg->len--;
		return 0;
	default:
		*why = "not a directory";
		return ENOTDIR;
	}
}

/* The query string of a FT_QUERY name and its format. */
static size_t query_of(const struct buf *arg, enum tsd_format *fmt)
{
	size_t n = arg->len;

	*fmt = TSD_FMT_TEXT;
	if (n > 4 && !memcmp(arg->p + n - 4, ".png", 4)) {
		*fmt = TSD_FMT_PNG;
		n -= 4;
	}
	return n;
}

/* tsd_reject_fn of the writers: one .log line per refused line, naming
 * its number (counted from the open of the file) and its text, so that
 * lines appended one open at a time (echo >>) are told apart too. */
static void log_refused(void *ctx, const struct tsd_error *e,
			const char *line, size_t len)
{
	struct fs_tsd_file *f = ctx;
	char text[84];
	size_t k = 0;

	for (size_t i = 0; i < len && k < 80; i++) {
		unsigned char ch = (unsigned char)line[i];
		text[k++] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	if (len > 80)
		memcpy(text + k - 3, "...", 3);
	text[k] = '\0';
	cf_log(CF_LOG_WARN, "write tsd/%s: line %" PRIu64 " \"%s\": %s: %s",
	       f->what, e->line, text, e->reason, strerror(EINVAL));
}

static void why_set(char *why, size_t whylen, const struct tsd_error *e,
		    int rc)
{
	if (e->line)
		snprintf(why, whylen, "line %" PRIu64 ": %s", e->line,
			 e->reason);
	else if (e->reason[0])
		snprintf(why, whylen, "%s", e->reason);
	else
		snprintf(why, whylen, "%s", cf_strerror(rc));
}

int fs_tsd_stat(enum fs_tsd_node k, const struct buf *arg, struct stat *st,
		char *why, size_t whylen)
{
	struct tsd_error e = { 0, "" };
	enum tsd_format fmt;
	uint32_t uid;
	tsd *t;
	int rc;

	snprintf(why, whylen, "no such file");
	st->st_size = 0;
	switch (k) {
	case FT_DIR: case FT_PUT: case FT_METRICS: case FT_TAGK:
	case FT_TAGV: case FT_Q: case FT_LOOKUP: case FT_NOTE: case FT_NOTES:
	case FT_UMETAS: case FT_TMETAS: case FT_TREES:
		return 0;
	case FT_TREEQ: {
		/* the tree, rule or branch must exist */
		struct buf tmp = BUF_INIT;
		rc = get(0, &t);
		if (rc == CF_ENOTFOUND)
			t = NULL;	/* nothing written: no tree */
		if (!rc || rc == CF_ENOTFOUND)
			rc = tsd_tree_qs(t, (const char *)arg->p, arg->len,
					 &tmp, &e);
		buf_release(&tmp);
		if (rc) {
			why_set(why, whylen, &e, rc);
			if (rc != CF_ENOTFOUND)
				cf_log(CF_LOG_WARN, "lookup tsd/tree/%s: %s: "
				       "%s", (const char *)arg->p, why,
				       strerror(fs_errno(rc)));
		}
		return fs_errno(rc);
	}
	case FT_UMETAQ: case FT_TMETAQ: {
		/* the UID must have a name, as UIDMeta's reads check; the
		 * series a meta (a name asking create=true may be written
		 * before it has one) */
		struct buf tmp = BUF_INIT;
		rc = get(0, &t);
		if (!rc)
			rc = meta_qs(k, t, (const char *)arg->p, TSD_META_GET, NULL, 0,
				     k == FT_TMETAQ ? &tmp : NULL, &e);
		buf_release(&tmp);
		if ((rc == CF_ENOTFOUND || rc == CF_OK) && k == FT_TMETAQ &&
		    strstr((const char *)arg->p, "create=true"))
			rc = CF_OK;
		if (rc) {
			why_set(why, whylen, &e, rc);
			if (rc != CF_ENOTFOUND)
				cf_log(CF_LOG_WARN, "lookup tsd/%s/%s: %s: %s",
				       k == FT_TMETAQ ? "tsmeta" : "uidmeta",
				       (const char *)arg->p, why,
				       strerror(fs_errno(rc)));
		}
		return fs_errno(rc);
	}
	case FT_NOTESQ:
		/* the range checked, not read: reading it is the open's */
		rc = tsd_note_qs(NULL, (const char *)arg->p, arg->len, 0, NULL,
				 NULL, &e);
		if (rc) {
			why_set(why, whylen, &e, rc);
			cf_log(CF_LOG_WARN, "lookup tsd/annotations/%s: %s: %s",
			       (const char *)arg->p, why,
			       strerror(fs_errno(rc)));
		}
		return fs_errno(rc);
	case FT_METRIC: case FT_KNAME: case FT_VNAME:
		rc = get(0, &t);
		if (!rc)
			rc = tsd_name_lookup(t, name_kind(k),
					     (const char *)arg->p, &uid);
		if (!rc && k != FT_METRIC)
			st->st_size = 7;
		return fs_errno(rc);
	case FT_QUERY:
		rc = get(0, &t);
		if (!rc)
			rc = tsd_query_check(t, (const char *)arg->p,
					     query_of(arg, &fmt), &e);
		if (rc) {
			why_set(why, whylen, &e, rc);
			/* the lookup of a bad query is where it fails (before
			 * any open): say why here, as the open would */
			cf_log(CF_LOG_WARN, "query tsd/q/%s: %s: %s",
			       (const char *)arg->p, why,
			       strerror(fs_errno(rc)));
		}
		return fs_errno(rc);
	case FT_LOOKUPQ:
		rc = get(0, &t);
		if (rc == CF_ENOTFOUND)
			t = NULL;	/* nothing written: every name unknown */
		if (!rc || rc == CF_ENOTFOUND)
			rc = tsd_lookup_check(t, (const char *)arg->p,
					      arg->len, &e);
		if (rc) {
			why_set(why, whylen, &e, rc);
			cf_log(CF_LOG_WARN, "lookup tsd/lookup/%s: %s: %s",
			       (const char *)arg->p, why,
			       strerror(fs_errno(rc)));
		}
		return fs_errno(rc);
	}
	return ENOENT;
}

int fs_tsd_list(enum fs_tsd_node k,
		int (*add)(void *ctx, const char *name, size_t len, int dir),
		void *ctx)
{
	static const struct { const char *name; int dir; } top[] = {
		{ "put", 0 }, { "metrics", 1 }, { "tagk", 1 }, { "tagv", 1 },
		{ "q", 1 }, { "lookup", 1 }, { "annotation", 0 },
		{ "annotations", 1 }, { "tree", 1 }, { "tsmeta", 1 },
		{ "uidmeta", 1 },
	};
	struct buf b = BUF_INIT;
	char **names = NULL;
	size_t n = 0, i;
	tsd *t;
	int rc = 0;

	switch (k) {
	case FT_DIR:
		for (i = 0; !rc && i < sizeof top / sizeof top[0]; i++)
			rc = add(ctx, top[i].name, strlen(top[i].name),
				 top[i].dir);
		return rc;
	case FT_METRICS: case FT_TAGK: case FT_TAGV:
		rc = get(0, &t);
		if (rc == CF_ENOTFOUND)
			return 0;	/* nothing written yet */
		if (!rc)
			rc = tsd_names(t, kind_of(k), "", 0, &names, &n);
		for (i = 0; !rc && i < n; i++) {
			buf_reset(&b);
			rc = cf_escape(names[i], strlen(names[i]), &b);
			if (!rc && b.len <= 255)
				rc = add(ctx, (char *)b.p, b.len, 0);
		}
		free(names);
		buf_release(&b);
		return rc;
	default:
		return 0;
	}
}

void fs_tsd_file_close(struct fs_tsd_file *f)
{
	if (!f)
		return;
	tsd_writer_close(f->w);
	tsd_cursor_close(f->c);
	buf_release(&f->text);
	pthread_mutex_destroy(&f->mu);
	free(f->what);
	free(f);
}

int fs_tsd_open(enum fs_tsd_node k, const struct buf *arg, int flags,
		struct fs_tsd_file **out, char *why, size_t whylen)
{
	struct tsd_error e = { 0, "" };
	struct fs_tsd_file *f;
	enum tsd_format fmt;
	int acc = flags & O_ACCMODE, rc;
	size_t qlen;
	uint32_t uid;
	tsd *t;

	snprintf(why, whylen, "%s", "");
	f = calloc(1, sizeof *f);
	if (!f)
		return ENOMEM;
	f->kind = k;
	pthread_mutex_init(&f->mu, NULL);
	f->what = k == FT_PUT ? strdup("put") :
		  k == FT_NOTE ? strdup("annotation") : NULL;
	if (k != FT_PUT && k != FT_NOTE &&
	    asprintf(&f->what, "%s/%s", k == FT_METRIC ?
		     "metrics" : k == FT_QUERY ? "q" :
		     k == FT_LOOKUPQ ? "lookup" :
		     k == FT_NOTESQ ? "annotations" :
		     k == FT_UMETAQ ? "uidmeta" :
		     k == FT_TMETAQ ? "tsmeta" :
		     k == FT_TREEQ ? "tree" :
		     k == FT_KNAME ? "tagk" : "tagv",
		     (const char *)arg->p) < 0)
		f->what = NULL;
	if (!f->what) {
		free(f);
		return ENOMEM;
	}
	switch (k) {
	case FT_PUT:
		if (acc == O_RDONLY) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "tsd/put is written, not read");
			break;
		}
		rc = get(1, &t);
		if (!rc)
			rc = tsd_writer_open(t, NULL, &f->w);
		if (!rc)
			tsd_writer_on_reject(f->w, log_refused, f);
		break;
	case FT_METRIC:
		if (acc == O_RDWR) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "a metric file is read or "
				 "appended to, not both");
			break;
		}
		if (acc == O_WRONLY) {
			rc = get(1, &t);
			if (!rc)
				rc = tsd_writer_open(t, (const char *)arg->p,
						     &f->w);
			if (rc == CF_EINVAL)
				snprintf(why, whylen, "not a valid metric "
					 "name");
			if (!rc)
				tsd_writer_on_reject(f->w, log_refused, f);
			break;
		}
		rc = get(0, &t);
		if (!rc)
			rc = tsd_metric_open(t, (const char *)arg->p, &f->c);
		break;
	case FT_KNAME: case FT_VNAME:
		rc = get(0, &t);
		if (!rc)
			rc = tsd_name_lookup(t, name_kind(k),
					     (const char *)arg->p, &uid);
		if (!rc)
			snprintf(f->uid, sizeof f->uid, "%06" PRIx32 "\n",
				 uid);
		break;
	case FT_QUERY:
		if (acc != O_RDONLY) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "queries are read-only");
			break;
		}
		qlen = query_of(arg, &fmt);
		rc = get(0, &t);
		if (!rc)
			rc = tsd_query_open(t, (const char *)arg->p, qlen,
					    (enum tsd_format)(fmt |
							      TSD_FMT_EXP),
					    &f->c, &e);
		if (rc)
			why_set(why, whylen, &e, rc);
		break;
	case FT_LOOKUPQ:
		if (acc != O_RDONLY) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "lookups are read-only");
			break;
		}
		rc = get(0, &t);
		if (rc == CF_ENOTFOUND)
			t = NULL;
		if (!rc || rc == CF_ENOTFOUND)
			rc = tsd_lookup_open(t, (const char *)arg->p, arg->len,
					     &f->c, &e);
		if (rc)
			why_set(why, whylen, &e, rc);
		break;
	case FT_NOTE:
		if (acc != O_WRONLY) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "tsd/annotation is written, not "
				 "read");
			break;
		}
		rc = get(1, &t);
		break;
	case FT_NOTESQ:
		if (acc != O_RDONLY) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "annotation ranges are read or "
				 "removed");
			break;
		}
		rc = get(0, &t);
		if (rc == CF_ENOTFOUND)
			t = NULL;	/* nothing written: no note */
		if (!rc || rc == CF_ENOTFOUND)
			rc = tsd_note_qs(t, (const char *)arg->p, arg->len, 0,
					 &f->text, NULL, &e);
		if (!rc)
			rc = buf_putc(&f->text, '\n');
		if (rc)
			why_set(why, whylen, &e, rc);
		break;
	case FT_TREEQ:
		if (acc != O_RDONLY) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "trees are read-only here (the "
				 "HTTP API changes them)");
			break;
		}
		rc = get(0, &t);
		if (rc == CF_ENOTFOUND)
			t = NULL;
		if (!rc || rc == CF_ENOTFOUND)
			rc = tsd_tree_qs(t, (const char *)arg->p, arg->len,
					 &f->text, &e);
		if (!rc)
			rc = buf_putc(&f->text, '\n');
		if (rc)
			why_set(why, whylen, &e, rc);
		break;
	case FT_UMETAQ: case FT_TMETAQ:
		/* read: the meta as it is now; write: JSON lines */
		rc = get(acc != O_RDONLY, &t);
		if (!rc && acc == O_RDONLY)
			rc = meta_qs(k, t, (const char *)arg->p, TSD_META_GET, NULL, 0,
				     &f->text, &e);
		if (!rc && acc == O_RDONLY)
			rc = buf_putc(&f->text, '\n');
		if (!rc && acc == O_RDWR) {
			rc = CF_EINVAL;
			snprintf(why, whylen, "meta files are read or "
				 "written, not both");
		}
		f->writing = acc == O_WRONLY;
		if (rc && !why[0])
			why_set(why, whylen, &e, rc);
		break;
	default:
		rc = CF_EINVAL;
		snprintf(why, whylen, "not a file");
		break;
	}
	if (rc) {
		if (!why[0])
			snprintf(why, whylen, "%s", cf_strerror(rc));
		fs_tsd_file_close(f);
		return fs_errno(rc);
	}
	*out = f;
	return 0;
}

int fs_tsd_read(struct fs_tsd_file *f, void *dst, size_t n, uint64_t off,
		size_t *got)
{
	size_t len;

	*got = 0;
	if (f->kind == FT_KNAME || f->kind == FT_VNAME ||
	    f->kind == FT_NOTESQ || f->kind == FT_TREEQ || is_meta(f->kind)) {
		int text = f->kind == FT_NOTESQ || f->kind == FT_TREEQ ||
			   is_meta(f->kind);
		const char *p = text ? (const char *)f->text.p : f->uid;
		len = text ? f->text.len : strlen(f->uid);
		if (off < len) {
			*got = len - (size_t)off < n ? len - (size_t)off : n;
			memcpy(dst, p + off, *got);
		}
		return 0;
	}
	if (!f->c)
		return EBADF;
	return fs_errno(tsd_cursor_pread(f->c, dst, n, off, got));
}

/* The reason of a failed put: the refused lines have their own .log
 * lines (log_refused); this one sums the write up. */
static void put_why(char *why, size_t whylen, const struct tsd_put_result *r,
		    const struct tsd_error *e, int rc)
{
	if (rc == CF_EINVAL && r->refused)
		snprintf(why, whylen, "%" PRIu64 " line%s refused, %" PRIu64
			 " point%s stored", r->refused,
			 r->refused == 1 ? "" : "s", r->stored,
			 r->stored == 1 ? "" : "s");
	else
		why_set(why, whylen, e, rc);
}

/* The JSON lines of f->text ended by '\n' (all with last), each applied
 * as a POST: of /api/annotation (an array: of /bulk) for tsd/annotation,
 * of /api/uid/uidmeta onto the file's UID for tsd/uidmeta/UID, of
 * /api/uid/tsmeta onto the file's series for tsd/tsmeta/SERIES.  A
 * refused line gets a .log line and makes the write EINVAL; the others
 * are kept. */
static int note_lines(struct fs_tsd_file *f, int last, char *why,
		      size_t whylen)
{
	struct buf out = BUF_INIT;
	size_t b = 0, refused = 0;
	tsd *t;
	int rc = get(1, &t), bad = 0;

	if (rc)
		return fs_errno(rc);
	for (size_t i = 0; i < f->text.len || (last && b < f->text.len);
	     i++) {
		if (i < f->text.len && f->text.p[i] != '\n')
			continue;
		const char *line = (const char *)f->text.p + b;
		size_t len = (i < f->text.len ? i : f->text.len) - b, sp;
		struct tsd_error e = { 0, "" };
		b = i + 1;
		f->lines++;
		for (sp = 0; sp < len && (line[sp] == ' ' || line[sp] == '\t');
		     sp++)
			;
		if (sp == len)
			continue;	/* a blank line */
		buf_reset(&out);
		if (is_meta(f->kind)) {
			rc = meta_qs(f->kind, t, strchr(f->what, '/') + 1,
				     TSD_META_POST, line, len, &out, &e);
		} else
			rc = tsd_note_sync(t, line, len, line[sp] == '[', 0,
					   &out, &e);
		if (rc == CF_EEXIST)
			rc = CF_OK;	/* nothing to change: HTTP's 304 */
		if (rc) {
			e.line = f->lines;
			log_refused(f, &e, line, len);
			if (!refused++)
				why_set(why, whylen, &e, rc);
			if (rc != CF_EINVAL)
				bad = fs_errno(rc);
		}
	}
	buf_release(&out);
	if (b > f->text.len)
		b = f->text.len;
	memmove(f->text.p, f->text.p + b, f->text.len - b);
	f->text.len -= b;
	if (refused > 1)
		snprintf(why, whylen, "%zu %s lines refused", refused,
			 f->kind == FT_UMETAQ ? "UID meta" :
			 f->kind == FT_TMETAQ ? "series meta" : "annotation");
	return bad ? bad : refused ? EINVAL : 0;
}

int fs_tsd_write(struct fs_tsd_file *f, const void *p, size_t n,
		 char *why, size_t whylen)
{
	struct tsd_error e = { 0, "" };
	struct tsd_put_result r;
	int rc;

	if (f->kind == FT_NOTE || is_meta(f->kind)) {
		pthread_mutex_lock(&f->mu);
		/* a line is one JSON document, of at most NOTE_LINE_MAX */
		if (f->text.len + n > NOTE_LINE_MAX) {
			snprintf(why, whylen, "a JSON line over %d bytes",
				 NOTE_LINE_MAX);
			f->text.len = 0;
			rc = EINVAL;
		} else if (buf_append(&f->text, p, n)) {
			rc = ENOMEM;
		} else {
			rc = note_lines(f, 0, why, whylen);
		}
		pthread_mutex_unlock(&f->mu);
		return rc;
	}
	if (!f->w) {
		snprintf(why, whylen, "read-only file");
		return EBADF;
	}
	rc = tsd_writer_put(f->w, p, n, 0, &r, &e);
	if (rc)
		put_why(why, whylen, &r, &e, rc);
	return fs_errno(rc);
}

int fs_tsd_flush(struct fs_tsd_file *f, char *why, size_t whylen)
{
	struct tsd_error e = { 0, "" };
	struct tsd_put_result r;
	int rc;

	if (f->kind == FT_NOTE || (is_meta(f->kind) && f->writing)) {
		pthread_mutex_lock(&f->mu);
		rc = f->text.len ? note_lines(f, 1, why, whylen) : 0;
		pthread_mutex_unlock(&f->mu);
		return rc;
	}
	if (!f->w)
		return 0;
	rc = tsd_writer_put(f->w, "", 0, 1, &r, &e);
	if (rc)
		put_why(why, whylen, &r, &e, rc);
	return fs_errno(rc);
}

int fs_tsd_unlink(enum fs_tsd_node k, const struct buf *arg, char *why,
		  size_t whylen)
{
	struct tsd_error e = { 0, "" };
	tsd *t;
	int rc;

	if (k == FT_QUERY) {
		enum tsd_format fmt;
		size_t n = query_of(arg, &fmt);
		if (fmt != TSD_FMT_TEXT) {
			snprintf(why, whylen, "a graph cannot be removed "
				 "(rm the query without .png)");
			return EPERM;
		}
		if ((rc = get(0, &t)) == CF_OK)
			rc = tsd_query_delete(t, (const char *)arg->p, n,
					      NULL, &e);
		if (rc)
			why_set(why, whylen, &e, rc);
		return fs_errno(rc);
	}
	if (is_meta(k)) {
		if ((rc = get(0, &t)) == CF_OK)
			rc = meta_qs(k, t, (const char *)arg->p, TSD_META_DELETE, NULL, 0, NULL,
				     &e);
		if (rc)
			why_set(why, whylen, &e, rc);
		return fs_errno(rc);
	}
	if (k != FT_NOTESQ) {
		snprintf(why, whylen, "cannot be removed");
		return EPERM;
	}
	rc = get(0, &t);
	if (rc == CF_ENOTFOUND)
		t = NULL;
	if (!rc || rc == CF_ENOTFOUND)
		rc = tsd_note_qs(t, (const char *)arg->p, arg->len, 1, NULL,
				 NULL, &e);
	if (rc)
		why_set(why, whylen, &e, rc);
	return fs_errno(rc);
}

int fs_tsd_rename(enum fs_tsd_node k, const struct buf *old,
		  const struct buf *name, char *why, size_t whylen)
{
	struct tsd_error e = { 0, "" };
	tsd *t;
	int rc;

	if (k != FT_METRIC && k != FT_KNAME && k != FT_VNAME) {
		snprintf(why, whylen, "only a metric, tag key or tag value "
			 "file is renamed");
		return EINVAL;
	}
	rc = get(0, &t);
	if (rc == CF_OK)
		rc = tsd_name_rename(t, name_kind(k), (const char *)old->p,
				     (const char *)name->p, &e);
	if (rc)
		why_set(why, whylen, &e, rc);
	return fs_errno(rc);
}

const char *fs_tsd_file_name(const struct fs_tsd_file *f)
{
	return f->what;
}

int fs_tsd_stats_text(struct buf *out)
{
	struct tsd_stats s;
	tsd *t;
	int rc;

	rc = get(0, &t);
	if (rc == CF_ENOTFOUND)
		memset(&s, 0, sizeof s);
	else if (rc)
		return rc;
	else
		tsd_stats(t, &s);
#define STAT(name, help, v)                                                 \
	buf_printf(out, "# HELP cellfs_tsd_" name " " help "\n"             \
		   "# TYPE cellfs_tsd_" name " counter\n"                    \
		   "cellfs_tsd_" name " %" PRIu64 "\n", (uint64_t)(v))
	rc = STAT("points_total", "Points stored through MNT/tsd/.",
		  s.points);
	rc = rc ? rc : STAT("lines_rejected_total",
			    "Put lines refused (invalid or too long).", s.lines_rejected);
	rc = rc ? rc : STAT("writes_rejected_total",
			    "Writes that failed: some line refused, or nothing stored.",
			    s.writes_rejected);
	rc = rc ? rc : STAT("uids_assigned_total", "New UIDs assigned.",
			    s.uids_assigned);
	rc = rc ? rc : STAT("rows_compacted_total",
			    "Hourly rows compacted into one cell.",
			    s.rows_compacted);
	rc = rc ? rc : STAT("queries_total", "Queries run.", s.queries);
	rc = rc ? rc : STAT("query_points_total", "Points loaded by queries.",
			    s.query_points);
	rc = rc ? rc : STAT("query_bytes_total", "Bytes of query results "
			    "produced (as they are read).", s.query_bytes);
	rc = rc ? rc : STAT("query_points_recent_total", "Of the points "
			    "loaded by queries, those read from the recent "
			    "points in memory.", s.query_points_recent);
	rc = rc ? rc : STAT("recent_rebuilds_total", "Rebuilds of the recent "
			    "points from tsdb (at mount, after a write to "
			    "tsdb not made through MNT/tsd/).",
			    s.recent_rebuilds);
#undef STAT
#define GAUGE(name, help, v)                                                \
	buf_printf(out, "# HELP cellfs_tsd_" name " " help "\n"             \
		   "# TYPE cellfs_tsd_" name " gauge\n"                      \
		   "cellfs_tsd_" name " %" PRIu64 "\n", (uint64_t)(v))
	rc = rc ? rc : GAUGE("recent_ready", "1 when queries may read the "
			     "recent points.", s.recent_ready);
	rc = rc ? rc : GAUGE("recent_points", "Points held in the recent "
			     "points.", s.recent_points);
	rc = rc ? rc : GAUGE("recent_bytes", "Memory of the recent points.",
			     s.recent_bytes);
#undef GAUGE
	if (!rc)
		rc = buf_printf(out, "# HELP cellfs_tsd_compact_pending Rows "
				"waiting for compaction.\n# TYPE "
				"cellfs_tsd_compact_pending gauge\n"
				"cellfs_tsd_compact_pending %" PRIu64 "\n",
				s.compact_pending);
	return rc;
}
