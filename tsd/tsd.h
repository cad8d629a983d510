/*
 * tsd.h: the time-series layer of cellfs, OpenTSDB 2.x on the engine.
 *
 * Points live in two ordinary tables with OpenTSDB's byte layout
 * (docs/tsd_format.md): "tsdb-uid" (families id and name: 3-byte UIDs of
 * metric names, tag keys and tag values, counter row "\0") and "tsdb"
 * (family t: one row per metric, hour and tag set; one cell per point, or
 * one compacted cell per finished hour).  tsd_open() creates them when
 * missing; they stay browsable as tables.
 *
 * This header is all fs/ needs for MNT/tsd/ (SPEC section 6):
 *
 *   path                    operation      calls
 *   MNT/tsd/put             open (write)   tsd_writer_open(t, NULL, &w)
 *                           write          tsd_writer_put(w, buf, n, 0, ..)
 *                           flush/release  tsd_writer_finish(w, &e),
 *                                          tsd_writer_close(w)
 *   MNT/tsd/metrics/        readdir        tsd_names(t, TSD_METRICS, "", 0..)
 *   MNT/tsd/metrics/M       lookup         tsd_name_lookup(t, TSD_METRICS, M)
 *                           open (read)    tsd_metric_open(t, M, &c)
 *                           open (append)  tsd_writer_open(t, M, &w)
 *                           read           tsd_cursor_pread(c, ...)
 *   MNT/tsd/tagk/, tagv/    readdir        tsd_names(t, TSD_TAGK/TSD_TAGV..)
 *                           lookup         tsd_name_lookup(...)
 *   MNT/tsd/q/QUERY         lookup         tsd_query_check(t, QUERY, ..)
 *                           unlink         tsd_query_delete(t, QUERY, ..)
 *                           open (read)    tsd_query_open(t, QUERY, n,
 *                                                         TSD_FMT_TEXT, ..)
 *   MNT/tsd/q/QUERY.png     open (read)    same with TSD_FMT_PNG (fs strips
 *                                          the ".png")
 *
 * File sizes of metrics/M and q/... are not known before they are
 * produced: fs should open them with FUSE direct_io (as /proc files do) so
 * the kernel reads to EOF whatever st_size says; tsd_cursor_size() gives
 * the exact size when needed (a full production, for queries as for
 * metric dumps).
 *
 * Names as path components: metric and tag names may contain '/' (OpenTSDB
 * allows it), so fs escapes them with SPEC section 2's escaping in
 * listings and unescapes lookups; QUERY strings are taken as given, and
 * tsd decodes %XX inside them (so %2F is a '/').
 *
 * Errors: every function returns CF_OK or a negative CF_E* code of
 * util/err.h.  Failures caused by the input (a bad line, a bad query, an
 * unknown metric) also fill a struct tsd_error with a one-line reason that
 * fs writes to MNT/.log.
 *
 * Threads: a tsd handle is used by any number of threads at once.  A
 * tsd_writer or tsd_cursor belongs to one open file; calls on one of them
 * are serialized internally, so concurrent reads of one handle are safe.
 */
#ifndef CF_TSD_H
#define CF_TSD_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cellfs.h"

/* Most tags of a series (tsd/codec.h's TSD_MAX_TAGS). */
#define TSD_LOOKUP_TAGS 8

typedef struct tsd tsd;
typedef struct tsd_writer tsd_writer;
typedef struct tsd_cursor tsd_cursor;

/* The names of the two tables. */
#define TSD_TABLE_DATA "tsdb"
#define TSD_TABLE_UID "tsdb-uid"

struct tsd_options {
	/* Background compaction: every compact_interval_ms, rows whose hour
	 * ended more than compact_grace_s ago are merged into one cell
	 * (OpenTSDB's CompactionQueue).  0: no thread; tsd_compact() only. */
	unsigned compact_interval_ms;	/* default 60000 */
	unsigned compact_grace_s;	/* default 60 */
	/* Compact finished rows met by reads that are not compacted yet
	 * (OpenTSDB compacts at query time too).  Default 1. */
	int compact_on_read;
	/* Largest number of points one query may load (CF_ETOOBIG past
	 * it). */
	uint64_t max_query_points;	/* default 20000000 */
	/* Largest number of points one graph may draw: they are all in
	 * memory at once (CF_ETOOBIG past it). */
	uint64_t max_graph_points;	/* default 1000000 */
	/* Largest memory one query may hold for its loaded points
	 * (CF_ETOOBIG past it); see tsd_query_open() for the whole bound. */
	uint64_t max_query_bytes;	/* default 256 MiB */
	/* Recent points (docs/timeseries.md): a copy in memory of every
	 * row of the last recent_hours hours, rebuilt from tsdb after
	 * tsd_open(), that queries read instead of the table; at most
	 * recent_bytes (the oldest hours are dropped past it).  0: none. */
	uint64_t recent_bytes;		/* default 256 MiB */
	unsigned recent_hours;		/* default 36 */
	/* The gnuplot program ("gnuplot": found through PATH). */
	const char *gnuplot;
	unsigned gnuplot_timeout_ms;	/* default 20000 */
	/* Series meta data kept by writes (OpenTSDB's tsd.core.meta.*;
	 * tsd/tsmeta.c, docs/timeseries.md), all off by default:
	 * tsuid_tracking: each write of a series sets its counter column
	 * (tsdb-meta, name:ts_ctr) to 1, so that its timestamp says when
	 * the series was last written; with realtime_ts, its TSMeta is
	 * created at the first write instead, and with tsuid_incrementing
	 * as well, the counter counts the points written. */
	int tsuid_tracking, realtime_ts, tsuid_incrementing;
	/* Each UID assigned gets its UIDMeta, created then (OpenTSDB's
	 * tsd.core.meta.enable_realtime_uid).  Off by default. */
	int realtime_uid;
};

/* Fills o with the defaults above. */
void tsd_options_default(struct tsd_options *o);

/* Opens the layer on db, creating the two tables when missing.  o may be
 * NULL (defaults).  *out is owned by the caller until tsd_close(); db must
 * outlive it.  Errors of cf_table_create/cf_table_open. */
int tsd_open(cf_db *db, const struct tsd_options *o, tsd **out);
/* Stops the compaction thread (after its current row) and frees t.  Every
 * writer and cursor must be closed before. */
void tsd_close(tsd *t);

/* Why an operation on user input failed. */
struct tsd_error {
	uint64_t line;		/* 1-based line of the open file; 0: none */
	char reason[256];	/* one line, NUL-terminated */
};

/* --- writing ----------------------------------------------------------- */

/*
 * A writer: the state of one open put file (MNT/tsd/put, metric NULL) or
 * metric file opened for appending (MNT/tsd/metrics/M, metric M).  Put
 * lines are "[put ]METRIC TS VALUE TAGK=TAGV ..."; metric-file lines are
 * "TS VALUE TAGK=TAGV ..." (tsd/line.h has the rules).  Lines may be split
 * across writes; a '\n' ends a line.
 * Errors: CF_EINVAL (metric is not a valid name), CF_ENOMEM.
 */
int tsd_writer_open(tsd *t, const char *metric, tsd_writer **out);

/*
 * Takes data[0..len): every line it completes is parsed; each invalid
 * line is refused (counted in tsd_stats' lines_rejected, reported to the
 * tsd_writer_on_reject() callback) and the valid ones are stored in one
 * batch (one WAL record; durable as the engine's sync mode says when this
 * returns).  Unknown names get UIDs.  This is OpenTSDB's put rule: a bad
 * line costs only itself.
 *
 * Returns CF_OK when no line was refused.  CF_EINVAL when some were, after
 * the valid ones are stored; *err then names the first refused line (its
 * number counted from the opening of the writer, as tsd_error says) and
 * why.  A line over 64 KiB is refused too, and the writer skips its rest
 * up to the next '\n'.
 * Errors that store nothing of the write: CF_ERANGE (UID space of a kind
 * exhausted), engine errors (CF_ENOSPC, CF_EIO, ...), CF_ENOMEM; the
 * write's unfinished last line is then dropped (refused, its rest
 * skipped), so that a retry does not join two halves.  err may be NULL.
 */
int tsd_writer_write(tsd_writer *w, const void *data, size_t len,
		     struct tsd_error *err);
/* Stores a last line that has no '\n' yet (at flush or close of the
 * file).  Same errors as tsd_writer_write(). */
int tsd_writer_finish(tsd_writer *w, struct tsd_error *err);

/* What one write did: lines completed (blank ones included), points
 * stored, lines refused. */
struct tsd_put_result {
	uint64_t lines, stored, refused;
};
/* tsd_writer_write(), then with finish set tsd_writer_finish(), in one
 * call under the writer's lock, with the counts in *res (may be NULL). */
int tsd_writer_put(tsd_writer *w, const void *data, size_t len, int finish,
		   struct tsd_put_result *res, struct tsd_error *err);

/* Called for every refused line, with e (line number and reason) and the
 * line's text line[0..len) (without its '\n'; possibly not UTF-8),
 * valid during the call.  It runs under the writer's lock: it must not
 * call back into w. */
typedef void tsd_reject_fn(void *ctx, const struct tsd_error *e,
			   const char *line, size_t len);
/* Sets w's callback for refused lines (fn NULL: none, the default). */
void tsd_writer_on_reject(tsd_writer *w, tsd_reject_fn *fn, void *ctx);

/* Frees w; an unfinished line not passed to tsd_writer_finish() is
 * dropped. */
void tsd_writer_close(tsd_writer *w);

/* Writes text[0..len) as one whole put file (open, write, finish, close):
 * the convenience for batch imports and tests.  Same errors. */
int tsd_put_text(tsd *t, const char *text, size_t len, struct tsd_error *err);

/*
 * Puts the lines of text[0..len) as OpenTSDB's telnet "put" takes them,
 * line by line (tsd/putlines.c): every valid line is stored (all of them
 * in one batch), every invalid one is skipped and reported through
 * bad(ctx, its 1-based line number, the reason) and counted in
 * lines_rejected.  *stored (may be NULL) is the number of lines stored.
 * Returns CF_OK when every valid line is stored, bad lines or not;
 * CF_ERANGE, CF_ENOMEM or an engine error with nothing stored (*err).
 */
int tsd_put_lines(tsd *t, const char *text, size_t len,
		  void (*bad)(void *ctx, uint64_t line, const char *reason),
		  void *ctx, size_t *stored, struct tsd_error *err);

/* Counts n points refused before they became put lines (/api/put's
 * checks of its JSON) in lines_rejected, as tsd_put_lines() counts the
 * lines it refuses: OpenTSDB counts both in its rejection counters. */
void tsd_put_refused(tsd *t, uint64_t n);

/* --- names ------------------------------------------------------------- */

enum tsd_kind { TSD_METRICS = 0, TSD_TAGK = 1, TSD_TAGV = 2 };

/* The UID of name (NUL-terminated) of the given kind.  CF_ENOTFOUND. */
int tsd_name_lookup(tsd *t, enum tsd_kind kind, const char *name,
		    uint32_t *uid);

/* Gives name (NUL-terminated) of the given kind a UID without writing
 * a point (tsd/assign.c).  CF_EEXIST with *uid when it has one already;
 * CF_EINVAL for a name a put line would refuse, with OpenTSDB's
 * Tags.validateString message in *err (err may be NULL: `Invalid metric
 * ("a b"): illegal character:  `, `Invalid tagk: empty string`);
 * CF_ERANGE when the kind's UID space is exhausted; engine errors. */
int tsd_name_assign(tsd *t, enum tsd_kind kind, const char *name,
		    uint32_t *uid, struct tsd_error *err);

/* Renames the name old of the given kind to name (both NUL-terminated;
 * OpenTSDB's TSDB.renameUid, behind /api/uid/rename and mv of
 * MNT/tsd/metrics/, tagk/, tagv/ files): the UID keeps its number, so
 * every point stored under it reads under the new name.  A later put of
 * the old name gives it a new UID.  Errors, each with OpenTSDB's
 * message in *err: CF_EINVAL (a name a put line would refuse: `Invalid
 * metric ("a b"): illegal character:  `), CF_ENOTFOUND (`Name("old")
 * does not exist`), CF_EEXIST (`When trying rename("a", "b") on
 * UniqueId(tsdb-uid, metrics): new name already assigned ID=[0, 0, 2]`);
 * engine errors. */
int tsd_name_rename(tsd *t, enum tsd_kind kind, const char *old,
		    const char *name, struct tsd_error *err);

/*
 * The names of a kind that begin with prefix ("" for all), in byte order,
 * at most max of them (0: no limit): OpenTSDB's suggest scan over the
 * forward rows of tsdb-uid.  *names is one malloc'd block holding the
 * array and the strings: free(*names) frees all.
 */
int tsd_names(tsd *t, enum tsd_kind kind, const char *prefix, size_t max,
	      char ***names, size_t *n);

/* --- reading ----------------------------------------------------------- */

enum tsd_format {
	TSD_FMT_TEXT = 0, TSD_FMT_PNG = 1, TSD_FMT_JSON = 2, TSD_FMT_GRAPH_JSON = 3,
	/* or'ed into tsd_query_open()'s format: exp= parameters are read
	 * (graphite-style expressions, tsd/expr.h) and, when there are any,
	 * the answer is their results (MNT/tsd/q/); with TSD_FMT_GEXP the
	 * answer is the expressions' results even with none
	 * (/api/query/gexp).  Text and JSON only. */
	TSD_FMT_EXP = 0x100, TSD_FMT_GEXP = 0x200
};

/*
 * A metric dump: every point of metric as "M TS VALUE TAGK=TAGV ...\n"
 * lines, in storage order (by hour, then by tag set; in time order within
 * a series), tags sorted by name; TS in seconds, or in milliseconds for
 * points written with millisecond timestamps; VALUE an integer or a
 * floating-point number as OpenTSDB prints it.  The dump is produced
 * while it is read.  CF_ENOTFOUND: no such metric.
 */
int tsd_metric_open(tsd *t, const char *metric, tsd_cursor **out);

/*
 * Parses query string qs[0..len) (tsd/query.h; docs/timeseries.md) without
 * running it.  CF_EINVAL with *err filled; CF_ENOTFOUND when it names an
 * unknown metric, tag key or literal tag value.  err may be NULL.
 */
int tsd_query_check(tsd *t, const char *qs, size_t len,
		    struct tsd_error *err);

/*
 * Loads the query's points now (scanning every sub query) and produces
 * the result while it is read: each group of series is aggregated as the
 * reader reaches it, so a long range with a fill policy costs time while
 * read, not memory, and a reader that stops early (head) stops the work.
 * Memory of one open query: its loaded points (at most max_query_bytes)
 * plus, for the group being read, the values of one downsampling
 * interval per series, plus the cursor's window (KEEP_BEHIND behind the
 * reader and one 64 KiB chunk ahead).  The first chunk is produced here,
 * so errors of small results come at open; a later CF_ERANGE fails the
 * read and is logged.  A graph (TSD_FMT_PNG) is drawn here whole, of at
 * most max_graph_points points.
 * TSD_FMT_TEXT: one line per point, "M TS VALUE TAGK=TAGV ...\n", sub
 * queries in order, each group of series in tag order; the tags are
 * those common to every series of the group, sorted by name.  TS is in
 * seconds (millisecond points cut to their second, as OpenTSDB prints
 * them) unless the query says "ms".  A NaN value
 * (fill policy nan) prints "NaN"; fill policy null leaves the point out.
 * TSD_FMT_PNG: the same query drawn by gnuplot (one line per group, its
 * tags in the legend).
 * TSD_FMT_JSON: OpenTSDB's /api/query answer (tsd/json.c; docs/api.md).
 * TSD_FMT_GRAPH_JSON: what OpenTSDB's /q?json says of the graph it would
 * draw: {"plotted":N,"points":N,"etags":[[K,...],...],"timing":MS}, the
 * points drawn (in the range, not NaN), the points aggregated, each sub
 * query's aggregated tag keys (of its last group; null when it has
 * none, [] for the first), the time taken (no graph is drawn).
 * Errors: CF_EINVAL (bad query; *err), CF_ENOTFOUND (unknown metric,
 * tag key, or tag value of a literal_or filter; *err), CF_ETOOBIG (more
 * than max_query_points, max_query_bytes or max_graph_points; *err), CF_ERANGE
 * (a value overflowed), CF_EIO (gnuplot failed; *err), engine errors.
 */
int tsd_query_open(tsd *t, const char *qs, size_t len, enum tsd_format fmt,
		   tsd_cursor **out, struct tsd_error *err);

/*
 * OpenTSDB 2.3's /api/query/exp: the JSON query body[0..len) (its
 * metrics, filters, expressions and outputs; docs/api.md) run, and its
 * answer, {"outputs":[...],"query":{...}}, appended to out.  Memory: the
 * metric queries' points aggregated whole (at most max_graph_points)
 * and the points the expressions make (at most max_graph_points more),
 * plus the answer's text.  Errors: CF_EINVAL (a body that is not such a
 * query, an expression that does not parse, no intersection; *err says
 * why as OpenTSDB's pojos do), CF_ENOTFOUND (an unknown metric or tag),
 * CF_ETOOBIG, engine errors.
 */
struct buf;
int tsd_query_exp(tsd *t, const char *body, size_t len, struct buf *out,
		  struct tsd_error *err);

/*
 * Deletes what query qs[0..len) reads, as OpenTSDB's delete query does
 * (DELETE /api/query; rm MNT/tsd/q/QUERY): every row of tsdb that a
 * sub query selects (its metric and filters, or its TSUIDs), whole,
 * whose base hour holds a part of [start, end]: points of those hours
 * before start or after end go too (OpenTSDB deletes the rows its scan
 * read).  Annotations are kept (they live in tsdb-annotation).  Rows
 * are deleted in batches of TSD_DELETE_BATCH (the memory bound: one
 * batch of keys), each atomic; a failure leaves the batches before it
 * applied.  *rows (may be NULL): the rows deleted.  A compaction that
 * read a row before the delete writes nothing back.  Errors: those of
 * tsd_query_check(), engine errors.
 */
#define TSD_DELETE_BATCH 10000
int tsd_query_delete(tsd *t, const char *qs, size_t len, uint64_t *rows,
		     struct tsd_error *err);

/*
 * Copies up to n bytes of the cursor's content at offset off into dst;
 * *got is the count (0 at the end).  Reading forward is cheap; reading
 * before data already discarded restarts the production (a metric dump
 * keeps the last 256 KiB behind the furthest read).  Errors: those of the
 * engine while producing.
 */
int tsd_cursor_pread(tsd_cursor *c, void *dst, size_t n, uint64_t off,
		     size_t *got);
/* The total size of the content (produces all of it). */
int tsd_cursor_size(tsd_cursor *c, uint64_t *size);
void tsd_cursor_close(tsd_cursor *c);

/* --- series lookup (tsd/lookup.c) ------------------------------------
 *
 * OpenTSDB's /api/search/lookup (TimeSeriesLookup) on the data table:
 * the series (metric and tag set) that have a metric, tag key, tag value
 * or pair, each once.  docs/api.md and docs/timeseries.md.
 */

/* Most series one lookup answers (a larger or <= 0 limit is this). */
#define TSD_LOOKUP_MAX 100000
/* SearchQuery's default limit. */
#define TSD_LOOKUP_LIMIT 25

/* A tag condition: key or value NULL (or "*") when not given. */
struct tsd_lookup_pair {
	char *key, *value;
};

/* A lookup; the strings are the query's (malloc'd). */
struct tsd_lookup_query {
	char *metric;		/* NULL: none given; NULL, "" or "*": any */
	struct tsd_lookup_pair *tags;
	size_t ntags, cap;
	int has_tags;		/* a (possibly empty) tag list was given */
	long limit;		/* as asked; tsd_lookup_limit() applies it */
};

/* Sets q empty, limit TSD_LOOKUP_LIMIT. */
void tsd_lookup_query_init(struct tsd_lookup_query *q);
/* Frees q's strings and makes it empty again. */
void tsd_lookup_query_release(struct tsd_lookup_query *q);
/* Parses m[0..len) as Tags.parseWithMetric does ("METRIC",
 * "METRIC{K=V,K=,=V,...}", "{K=V}"), adding to q.  CF_EINVAL with
 * OpenTSDB's reason in *err ("Missing '}' at the end of: a{", "When
 * parsing tag 'x': invalid tag: x"); CF_ENOMEM. */
int tsd_lookup_parse_m(struct tsd_lookup_query *q, const char *m, size_t len,
		       struct tsd_error *err);
/* Parses a limit as Java's Integer.parseInt.  CF_EINVAL ("Unable to
 * convert 'limit' to a valid number"). */
int tsd_lookup_parse_limit(struct tsd_lookup_query *q, const char *s,
			   struct tsd_error *err);
/* The name of a MNT/tsd/lookup/ file: "m=M&limit=N" (%XX decoded;
 * other parameters ignored) or M alone; limit defaults to none (that is
 * TSD_LOOKUP_MAX).  CF_EINVAL with *err; CF_ENOMEM. */
int tsd_lookup_parse_qs(struct tsd_lookup_query *q, const char *s, size_t n,
			struct tsd_error *err);
/* Sets the metric (NULL: none) or adds a pair (either may be NULL). */
int tsd_lookup_set_metric(struct tsd_lookup_query *q, const char *metric);
int tsd_lookup_add_pair(struct tsd_lookup_query *q, const char *key,
			const char *value);
/* The number of series q may answer: its limit, or TSD_LOOKUP_MAX. */
size_t tsd_lookup_limit(const struct tsd_lookup_query *q);

/* One series found: its TSUID as OpenTSDB prints it (upper-case hex of
 * the metric UID then the tag UID pairs), names, tags sorted by key. */
struct tsd_series {
	char tsuid[2 * (3 + TSD_LOOKUP_TAGS * 6) + 1];
	const char *metric;
	size_t ntags;
	const char *tagk[TSD_LOOKUP_TAGS], *tagv[TSD_LOOKUP_TAGS];
};

struct tsd_lookup_result {
	struct tsd_series *s;	/* n of them, by TSUID */
	size_t n;
	char *names;		/* the strings s points into */
};

/*
 * Runs q: the series it matches, newest written first, at most
 * tsd_lookup_limit(q) of them, into *res sorted by TSUID (free with
 * tsd_lookup_result_release()).  t may be NULL when no tsd table exists
 * (nothing written): every name is then unknown, no series found.
 * Memory: the series found (at most TSD_LOOKUP_MAX TSUIDs and their
 * names) and one row's keys; time: the keys of the metric's rows, newest
 * hour first, up to the limit-th series (the whole table without a
 * metric).
 * Errors: CF_EINVAL (no metric and no tags: "Missing metric and tags.
 * Please supply at least one value."), CF_ENOTFOUND with *err "No such
 * name for 'tagk': 'x'" (an unknown name) or "No such unique ID for
 * ..." (a row's UID without a name), engine errors, CF_ENOMEM.
 */
int tsd_lookup(tsd *t, const struct tsd_lookup_query *q,
	       struct tsd_lookup_result *res, struct tsd_error *err);
void tsd_lookup_result_release(struct tsd_lookup_result *r);

/*
 * MNT/tsd/lookup/QUERY: QUERY parsed by tsd_lookup_parse_qs(), run by
 * tsd_lookup(), as "METRIC TAGK=TAGV ...\n" lines (tags sorted by key,
 * series by TSUID) produced here whole (at most TSD_LOOKUP_MAX lines).
 * Errors of both.
 */
int tsd_lookup_open(tsd *t, const char *qs, size_t len, tsd_cursor **out,
		    struct tsd_error *err);
/* Parses qs as tsd_lookup_open() does and resolves its names, without
 * scanning (the lookup of the file's name).  Same errors. */
int tsd_lookup_check(tsd *t, const char *qs, size_t len,
		     struct tsd_error *err);

/* --- annotations (tsd/annot.c) ------------------------------------------
 *
 * OpenTSDB's annotations (meta/Annotation, AnnotationRpc): a note with a
 * start (seconds, or milliseconds), an end, a description, notes and
 * custom string pairs, tied to a series by its TSUID or global (TSUID
 * ""), kept in table TSD_TABLE_NOTE (created at the first write) as
 * OpenTSDB keeps them in its data table's rows.  JSON texts are
 * OpenTSDB's: {"tsuid":...,"startTime":...,"endTime":...,"description":
 * ...,"notes":...[,"custom":{...}]}.  docs/api.md, "Annotations".
 * Memory: the request's JSON and one note (a range: its notes' JSON).
 */
#define TSD_TABLE_NOTE "tsdb-annotation"
/* Most notes one range answers, and one query result group carries
 * (more: CF_ETOOBIG). */
#define TSD_NOTES_MAX 100000

/*
 * Creates or changes the note of JSON object body (bulk: an array of
 * them), as AnnotationRpc's POST (overwrite 0: fields not given keep their
 * stored value) or PUT (overwrite 1: every field replaced) does; out gets
 * the stored note (bulk: an array of those that changed).  Errors:
 * CF_EINVAL with *err (bad JSON, "The start timestamp has not been set",
 * "invalid TSUID: X"), CF_EEXIST (not bulk: nothing to change, HTTP 304),
 * CF_EBUSY (other writers kept changing it), engine errors.
 */
int tsd_note_sync(tsd *t, const char *body, size_t len, int bulk,
		  int overwrite, struct buf *out, struct tsd_error *err);
/* The note of tsuid ("" global) starting at start, as JSON into out.
 * CF_ENOTFOUND ("Unable to locate annotation in storage"), CF_EINVAL. */
int tsd_note_get(tsd *t, const char *tsuid, int64_t start, struct buf *out,
		 struct tsd_error *err);
/* Deletes the note of tsuid ("" global) starting at start (none: no
 * error).  CF_EINVAL, engine errors. */
int tsd_note_delete(tsd *t, const char *tsuid, int64_t start,
		    struct tsd_error *err);
/* The notes of tsuid (NULL or "": the global ones) starting in
 * [start_ms, end_ms]: as a JSON array into out (if non-NULL), or, with
 * del, deleted (Annotation.deleteRange); *count (if non-NULL) how many.
 * t may be NULL (no tsd table: no note).  CF_EINVAL, CF_ETOOBIG (an
 * answer of more than TSD_NOTES_MAX notes; deletes have no bound), engine
 * errors. */
int tsd_note_range(tsd *t, const char *tsuid, int64_t start_ms,
		   int64_t end_ms, int del, struct buf *out, uint64_t *count,
		   struct tsd_error *err);
/* tsd_note_range() of a query string "start_time=TIME[&end_time=TIME]
 * [&tsuid=HEX]" (times as a query's; end default now; %XX decoded): the
 * names of MNT/tsd/annotations/.  CF_EINVAL ("Missing start time", an
 * unknown parameter, a bad time), tsd_note_range()'s. */
int tsd_note_qs(tsd *t, const char *qs, size_t len, int del, struct buf *out,
		uint64_t *count, struct tsd_error *err);

/* --- UID meta data (tsd/uidmeta.c) -------------------------------------
 *
 * OpenTSDB's UIDMeta of a metric, tag key or tag value (UniqueIdRpc's
 * /api/uid/uidmeta): displayName, description, notes, created, custom,
 * stored in tsdb-uid's row of the UID, family "name", qualifier
 * "metric_meta" (tagk_meta, tagv_meta), as OpenTSDB stores it.  The
 * API's JSON: {"uid":"000001","type":"METRIC","name":...,"description":
 * ...,"notes":...,"created":0,"custom":null,"displayName":...}.  type as
 * UniqueId.stringToUniqueIdType takes it (metric, metrics, tagk, tagv, any
 * case), uid as hex (padded to 6 digits).
 */
/* The meta of the UID into out; a UID with none stored has the default
 * (empty texts, created 0, custom null).  CF_EINVAL (`Invalid type
 * requested: x`, `Invalid UID: x`), CF_ENOTFOUND (the UID has no name:
 * `Could not find the requested UID`), engine errors. */
int tsd_uidmeta_get(tsd *t, const char *type, const char *uid,
		    struct buf *out, struct tsd_error *err);
/* UIDMeta.syncToStorage of JSON object body ({"uid":..,"type":..,
 * "displayName":..,...}): POST (overwrite 0: fields not given keep their
 * stored value) or PUT (1: replaced); out gets the stored meta.  Errors:
 * CF_EINVAL (`Missing UID`, `Missing type`, bad JSON or values),
 * CF_EEXIST (`No changes detected in UID meta data`: HTTP 304),
 * CF_ENOTFOUND (no such UID), CF_EBUSY (other writers kept changing it),
 * engine errors. */
int tsd_uidmeta_sync(tsd *t, const char *body, size_t len, int overwrite,
		     struct buf *out, struct tsd_error *err);
/* Deletes the stored meta of the UID (none: no error).  CF_EINVAL
 * (`Missing UID`, `Missing type`, bad values), engine errors. */
int tsd_uidmeta_delete(tsd *t, const char *type, const char *uid,
		       struct tsd_error *err);
/* The three of a query string naming the UID (MNT/tsd/uidmeta/'s names):
 * "type=TYPE&uid=HEX" or "type=TYPE&name=NAME" (%XX decoded).  GET: the
 * meta into out; POST: the fields of JSON object body[0..blen) merged in
 * (tsd_uidmeta_sync, overwrite 0; PUT: 1); DELETE.  CF_EINVAL also for `Missing
 * type`, `Missing UID`, an unknown parameter; CF_ENOTFOUND for an unknown
 * name. */
enum tsd_meta_op { TSD_META_GET, TSD_META_POST, TSD_META_PUT,
		   TSD_META_DELETE };
int tsd_uidmeta_qs(tsd *t, const char *qs, size_t len, enum tsd_meta_op op,
		   const char *body, size_t blen, struct buf *out,
		   struct tsd_error *err);

/* --- series meta data (tsd/tsmeta.c) -----------------------------------
 *
 * OpenTSDB's TSMeta of a series (UniqueIdRpc's /api/uid/tsmeta): display
 * name, description, notes, created, custom, units, data type,
 * retention, max and min, kept where OpenTSDB keeps them: table
 * TSD_TABLE_META (created at the first write), the row the series' TSUID,
 * family "name", qualifier "ts_meta" (the storage JSON) and "ts_ctr" (an
 * 8-byte counter whose timestamp is the series' last write).  The API's
 * JSON, in Jackson's order: {"tsuid":..,"metric":UIDMETA,"tags":[UIDMETA
 * of each tag key then value],"description":..,"notes":..,"created":N,
 * ["custom":{..},]"units":..,"retention":N,"max":D,"min":D,"displayName":
 * ..,"dataType":..,"lastReceived":SECONDS,"totalDatapoints":N}, where D
 * is Double.toString's text or "NaN".
 */
#define TSD_TABLE_META "tsdb-meta"
/* Most TSMetas one list answers (CF_ETOOBIG past it). */
#define TSD_TSMETA_LIST_MAX 100000

/* The meta of the series hex TSUID into out.  CF_EINVAL (`invalid
 * TSUID: x`), CF_ENOTFOUND (`Could not find Timeseries meta data`; a UID
 * of it without a name: `Unable to find one of the UIDs`), engine
 * errors. */
int tsd_tsmeta_get(tsd *t, const char *tsuid, struct buf *out,
		   struct tsd_error *err);
/* The JSON array of the metas of the series of m (Tags.parseWithMetric:
 * METRIC or METRIC{K=V,...}): every series of the metric having the
 * pairs given, in TSUID order (TSUIDQuery.getTSMetas).  CF_EINVAL (bad
 * m), CF_ENOTFOUND (a name with no UID: `Unable to find one of the
 * UIDs`), CF_ETOOBIG (over TSD_TSMETA_LIST_MAX). */
int tsd_tsmeta_list(tsd *t, const char *m, size_t mlen, struct buf *out,
		    struct tsd_error *err);
/* TSMeta.syncToStorage of JSON object body ({"tsuid":..,"displayName":
 * ..}): POST (overwrite 0: fields not given keep their stored value) or
 * PUT (1).  A body without "tsuid" names its series by m (NULL: `Missing
 * parameter <code>m</code>`); a series with no meta is then created when
 * create is set (with a zero counter if it had none), else CF_EINVAL
 * (`Could not find TSMeta, specify "create=true" to create a new one.`).
 * out gets the stored meta.  Errors: CF_EINVAL (bad JSON or values; a
 * series with no meta: `Requested TSMeta did not exist`), CF_EEXIST (`No
 * changes detected in TSUID meta data`: HTTP 304), CF_ENOTFOUND (a UID
 * or name unknown), CF_EBUSY (other writers kept changing it). */
int tsd_tsmeta_sync(tsd *t, const char *body, size_t len, const char *m,
		    int create, int overwrite, struct buf *out,
		    struct tsd_error *err);
/* Deletes the stored meta of the series (its counter stays, as in
 * OpenTSDB; none: no error).  CF_EINVAL (`Missing UID`, a bad TSUID). */
int tsd_tsmeta_delete(tsd *t, const char *tsuid, struct tsd_error *err);
/* The names of MNT/tsd/tsmeta/: "tsuid=HEX" or "m=M" ("&create=true"
 * may follow, which only POST and PUT use; %XX decoded).  GET: the meta (tsuid=) or
 * the list (m=) into out; POST and PUT: JSON object body[0..blen) synced
 * onto the series (tsd_tsmeta_sync); DELETE (tsuid=, or m= naming one
 * series).  CF_EINVAL also for an unknown parameter or none. */
int tsd_tsmeta_qs(tsd *t, const char *qs, size_t len, enum tsd_meta_op op,
		  const char *body, size_t blen, struct buf *out,
		  struct tsd_error *err);

/* The series' last writes as their counters say (OpenTSDB's
 * TSUIDQuery.getLastWriteTimes, and getLastPoint's Get of the counter):
 * fn(arg, TSUID in hex, the counter's timestamp in ms) for the series
 * spec names, in TSUID order: with tsuid set, spec is one hex TSUID;
 * else METRIC or METRIC{K=V,...}, every series of the metric having the
 * pairs.  A series without a counter (tracking off when it was written)
 * is not called.  fn's nonzero return stops and is returned.  CF_EINVAL
 * (a bad spec or TSUID), CF_ENOTFOUND (a name without a UID: `Unable to
 * find one of the UIDs`), engine errors. */
typedef int tsd_written_fn(void *arg, const char *tsuid, int64_t ts_ms);
int tsd_tsmeta_written(tsd *t, const char *spec, int tsuid,
		       tsd_written_fn *fn, void *arg, struct tsd_error *err);

/* --- maintenance and status -------------------------------------------- */

/* Compacts the rows written since open whose hour ended more than
 * compact_grace_s ago, or, with all set, every row written since open.
 * Returns the engine's first error; rows that failed stay queued. */
int tsd_compact(tsd *t, int all);

struct tsd_stats {
	uint64_t points;	/* points stored */
	uint64_t lines_rejected;	/* lines refused (bad or too long) */
	uint64_t writes_rejected;	/* writes that failed (some line
					 * refused, or an engine error) */
	uint64_t uids_assigned;	/* new UIDs */
	uint64_t rows_compacted;
	uint64_t queries;
	uint64_t query_points;	/* points loaded by queries */
	uint64_t query_bytes;	/* bytes of text results produced */
	uint64_t compact_pending;	/* rows waiting for compaction */
	/* recent points (struct tsd_options) */
	uint64_t recent_points;		/* points held */
	uint64_t recent_bytes;		/* memory they take */
	uint64_t recent_ready;		/* 1: queries may read them */
	uint64_t recent_rebuilds;	/* rebuilds from the table */
	uint64_t query_points_recent;	/* of query_points, read from them */
};

void tsd_stats(tsd *t, struct tsd_stats *s);

/* Forgets the cached name and UID mappings (OpenTSDB's dropCaches, behind
 * /api/dropcaches): later lookups read tsdb-uid again. */
void tsd_drop_caches(tsd *t);

#endif
