/*
 * batch.c: the lines written to T/.batch (SPEC section 5, docs/usage.md
 * "Bulk writes and HBase mutations").  One write(2) is parsed whole
 * before anything is applied; a bad line applies none of its lines.
 *
 *   put ROW FAM:QUAL[@TS] VALUE
 *   delete ROW                            every version of the row (now)
 *   delete ROW FAM:QUAL                   DeleteColumn at now
 *   delete ROW FAM:QUAL@TS                the version TS only
 *   deletecolumn ROW FAM:QUAL[@TS]        Delete.addColumn: version TS
 *                                         (without TS: the latest one)
 *   deletecolumns ROW FAM:QUAL[@TS]       Delete.addColumns: every
 *                                         version <= TS (default now)
 *   deletefamily ROW FAM[@TS]             Delete.addFamily: <= TS
 *   deletefamilyversion ROW FAM@TS        Delete.addFamilyVersion
 *   deleteall ROW [@TS]                   the row, versions <= TS
 *   deleteall ROW FAM[:QUAL][@TS]         shell deleteall of a column
 *                                         or family
 *   incr ROW FAM:QUAL [DELTA] [FAM:QUAL [DELTA] ...]
 *                                         Increment of one or several
 *                                         columns of ROW, atomic (alone
 *                                         in its write)
 *   append ROW FAM:QUAL VALUE [FAM:QUAL VALUE ...]
 *                                         Append of one or several
 *                                         columns of ROW, atomic (alone
 *                                         in its write)
 *   checkandput ROW FAM:QUAL[@R] EXPECT FAM2:QUAL2[@TS] VALUE
 *   checkanddelete ROW FAM:QUAL[@R] EXPECT [FAM2[:QUAL2]][@TS]
 *                                         CheckAndPut / CheckAndDelete
 *                                         (of the row, a family or a
 *                                         column's versions <= TS); EXPECT
 *                                         is a value, '' or @none (HBase's
 *                                         null: absent or empty)
 *   ifequals ROW FAM:QUAL[@R] VALUE       CheckAndMutate: the lines after
 *   ifnotexists ROW FAM:QUAL[@R]          it in its write(2), all of ROW,
 *   ifmatches ROW FAM:QUAL[@R] OP VALUE   apply iff the check holds; OP
 *   iffilter ROW [@R] FILTER              is HBase's CompareOperator (or
 *                                         its symbol in the filter
 *                                         language), FILTER its filter
 *                                         language; R a time range TS or
 *                                         T1,T2 (either end may be left
 *                                         out) of the versions checked
 *
 * The puts and deletes of one write are one cf_batch: every row's lines
 * are one atomic mutation (HBase RowMutations), and an error applies
 * none.  A check line must be the first of its write; if the check fails
 * nothing is applied and the write fails with ECANCELED.
 * DeleteFamilyVersion is made of Deletes of the versions at TS that the
 * family holds when the write is applied (the same reads, since a delete
 * masks only what was written before it: docs/engine.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/filter.h"
#include "fs/fs.h"
#include "util/coding.h"
#include "util/escape.h"

static _Thread_local char whybuf[200];
/* Why the last parse_col of a line failed on its family (NULL: it did
 * not), which says more than the line's form: HBase's
 * NoSuchColumnFamilyException; col_rc its code (CF_ENOTFOUND for a
 * family the table lacks: SPEC's ENOENT for an unknown family, as a
 * cell's create and a scan's query say). */
static _Thread_local const char *col_why;
static _Thread_local int col_rc;
static _Thread_local char colbuf[CF_FAMILY_MAX + 40];

#define IS(i, s) (tl[i] == sizeof(s) - 1 && !memcmp(tok[i], s, tl[i]))
#define ROWP(r) ((r).len ? (const void *)(r).p : "")

/* Parses a decimal delta, optionally signed: 0 or CF_EINVAL. */
static int parse_delta(const char *p, size_t len, int64_t *out)
{
	char num[24], *e;

	if (len == 0 || len >= sizeof num)
		return CF_EINVAL;
	memcpy(num, p, len);
	num[len] = 0;
	errno = 0;
	*out = strtoll(num, &e, 10);
	if (*e || num[0] == ' ' || !(num[0] == '-' || num[0] == '+' ||
				     (num[0] >= '0' && num[0] <= '9')) ||
	    errno == ERANGE)
		return CF_EINVAL;
	return 0;
}

/* Splits line at single spaces into at most max tokens; the last token
 * takes the rest.  Returns the count. */
static size_t tokens(const char *p, size_t len, const char **tok,
		     size_t *tlen, size_t max)
{
	size_t n = 0, i = 0, j;

	while (i <= len && n < max) {
		if (n == max - 1) {
			j = len;
		} else {
			for (j = i; j < len && p[j] != ' '; j++)
				;
		}
		tok[n] = p + i;
		tlen[n++] = j - i;
		if (j >= len)
			break;
		i = j + 1;
	}
	return n;
}

/* A timestamp TS, decimal digits (at p, len bytes), into *ts. */
static int parse_ts(const char *p, size_t len, int64_t *ts)
{
	uint64_t v = 0;

	if (len < 1 || len > 19)
		return CF_EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return CF_EINVAL;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v >= INT64_MAX)
		return CF_EINVAL;
	*ts = (int64_t)v;
	return 0;
}

/* "@TS" at p (len bytes, '@' included) into *ts. */
static int parse_at(const char *p, size_t len, int64_t *ts)
{
	if (len < 2 || p[0] != '@')
		return CF_EINVAL;
	return parse_ts(p + 1, len - 1, ts);
}

/* What a column token must hold: a qualifier (Q_NEED), none (Q_NONE:
 * a family), or either. */
enum { Q_ANY, Q_NEED, Q_NONE };

/* Parses "FAM[:QUAL][@TS]" of a known family: *hasq says whether the
 * qualifier was given (q: whether it must be).  A token of the wrong
 * form is malformed before its family is looked up. */
static int parse_col(cf_table *t, const char *p, size_t len, int q,
		     size_t *famlen, int *hasq, struct buf *qual, int64_t *ts)
{
	const char *at = memchr(p, '@', len), *colon;
	size_t end = at ? (size_t)(at - p) : len;

	colon = memchr(p, ':', end);
	*famlen = colon ? (size_t)(colon - p) : end;
	*hasq = colon != NULL;
	*ts = CF_TS_NOW;
	if ((q == Q_NEED && !colon) || (q == Q_NONE && colon))
		return CF_EINVAL;
	if (!cf_family_name_valid(p, *famlen)) {
		/* (an empty word: the line's form says more) */
		if (*famlen)
			col_why = "a malformed family name";
		return CF_EINVAL;
	}
	if (!cf_table_has_family(t, p, *famlen)) {
		snprintf(colbuf, sizeof colbuf, "no family '%.*s' in the table",
			 (int)*famlen, p);
		col_why = colbuf;
		col_rc = CF_ENOTFOUND;
		return CF_EINVAL;
	}
	if (at && parse_at(at, len - end, ts))
		return CF_EINVAL;
	buf_reset(qual);
	if (colon && cf_unescape(colon + 1, end - *famlen - 1, qual))
		return CF_EINVAL;
	return 0;
}

/* A value token: escaped, '' the empty value. */
static int parse_val(const char *p, size_t len, struct buf *val)
{
	buf_reset(val);
	if (len == 2 && !memcmp(p, "''", 2))
		return 0;
	return cf_unescape(p, len, val);
}

/* The check of a write (its first line, or a checkandput's or
 * checkanddelete's): HBase's CheckAndMutate (engine/cellfs.h). */
struct bcheck {
	int on;
	struct buf qual, val;
	char fam[CF_FAMILY_MAX + 1];
	size_t famlen;
	enum cf_cmp op;
	int64_t tmin, tmax;
	struct fs_filter *filter;
	int null;		/* the value is HBase's null ('', @none) */
};

/* "T1,T2" (either may be empty: the table's bounds) or "TS" (the version
 * at TS) at p (len bytes, after the '@') into [*tmin, *tmax). */
static int parse_range(const char *p, size_t len, int64_t *tmin,
		       int64_t *tmax)
{
	const char *comma = memchr(p, ',', len);
	size_t n = comma ? (size_t)(comma - p) : len;

	if (!comma) {
		if (parse_ts(p, len, tmin))
			return CF_EINVAL;
		*tmax = *tmin + 1;
		return 0;
	}
	*tmin = 0;
	*tmax = INT64_MAX;
	if ((n && parse_ts(p, n, tmin)) ||
	    (len > n + 1 && parse_ts(comma + 1, len - n - 1, tmax)))
		return CF_EINVAL;
	return *tmin < *tmax ? 0 : CF_EINVAL;
}

/* The checked column "FAM:QUAL[@R]" into c. */
static int parse_check_col(cf_table *t, const char *p, size_t len,
			   struct bcheck *c)
{
	const char *at = memchr(p, '@', len);
	size_t end = at ? (size_t)(at - p) : len;
	int64_t ts;
	int hasq;

	c->tmin = 0;
	c->tmax = INT64_MAX;
	if (parse_col(t, p, end, Q_NEED, &c->famlen, &hasq, &c->qual, &ts) ||
	    (at && parse_range(at + 1, len - end - 1, &c->tmin, &c->tmax)))
		return CF_EINVAL;
	memcpy(c->fam, p, c->famlen);
	return 0;
}

/* An expected value: '' and @none are HBase's null. */
static int parse_expect(const char *p, size_t len, struct bcheck *c)
{
	buf_reset(&c->val);
	c->null = (len == 5 && !memcmp(p, "@none", 5));
	if (c->null)
		return 0;
	if (parse_val(p, len, &c->val))
		return CF_EINVAL;
	c->null = c->val.len == 0;
	return 0;
}

/* HBase's CompareOperator by name, or its filter-language symbol. */
static int parse_op(const char *p, size_t len, enum cf_cmp *op)
{
	static const struct {
		const char *name, *sym;
		enum cf_cmp op;
	} ops[] = {
		{ "EQUAL", "=", CF_CMP_EQUAL },
		{ "NOT_EQUAL", "!=", CF_CMP_NOT_EQUAL },
		{ "LESS", "<", CF_CMP_LESS },
		{ "LESS_OR_EQUAL", "<=", CF_CMP_LESS_OR_EQUAL },
		{ "GREATER", ">", CF_CMP_GREATER },
		{ "GREATER_OR_EQUAL", ">=", CF_CMP_GREATER_OR_EQUAL },
	};

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if ((strlen(ops[i].name) == len &&
		     !memcmp(p, ops[i].name, len)) ||
		    (strlen(ops[i].sym) == len && !memcmp(p, ops[i].sym, len))) {
			*op = ops[i].op;
			return 0;
		}
	return CF_EINVAL;
}

/*
 * A check line: verb tok[0] ("ifequals", "ifnotexists", "ifmatches",
 * "iffilter"), its row tok[1] (already read), the rest up to end.  Fills
 * c; on CF_EINVAL *bad says why (a filter's own reason in why).
 */
static int parse_check_line(cf_table *t, const char *const *tok,
			    const size_t *tl, size_t nt, const char *end,
			    struct bcheck *c, const char **bad, char *why,
			    size_t whylen)
{
	const char *k[2];
	size_t kl[2];

	c->op = CF_CMP_EQUAL;
	c->null = 0;
	buf_reset(&c->val);
	if (IS(0, "iffilter")) {
		const char *f = nt > 2 ? tok[2] : end;
		c->tmin = 0;
		c->tmax = INT64_MAX;
		*bad = "not 'iffilter ROW [@T1,T2] FILTER'";
		if (nt > 3 && tl[2] && tok[2][0] == '@') {
			if (parse_range(tok[2] + 1, tl[2] - 1, &c->tmin,
					&c->tmax))
				return CF_EINVAL;
			f = tok[3];
		}
		if (f == end)
			return CF_EINVAL;
		/* the text is decoded into c->val, which a filter check
		 * does not use otherwise */
		if (fs_filter_decode(f, (size_t)(end - f), &c->val)) {
			*bad = "iffilter: '%' not followed by two hex digits";
			return CF_EINVAL;
		}
		if (fs_filter_parse((const char *)c->val.p, c->val.len, 0,
				    &c->filter, why, whylen)) {
			*bad = why;
			return CF_EINVAL;
		}
		return 0;
	}
	*bad = IS(0, "ifmatches") ? "not 'ifmatches ROW FAM:QUAL[@T1,T2] OP "
				    "VALUE' (OP: <, <=, =, !=, >=, > or "
				    "HBase's LESS ... GREATER)"
	       : "not 'ifequals ROW FAM:QUAL[@T1,T2] VALUE' or 'ifnotexists "
		 "ROW FAM:QUAL[@T1,T2]'";
	if (nt < 3 || parse_check_col(t, tok[2], tl[2], c))
		return CF_EINVAL;
	if (IS(0, "ifnotexists")) {
		c->null = 1;
		return nt == 3 ? 0 : CF_EINVAL;
	}
	if (nt != 4)
		return CF_EINVAL;
	if (IS(0, "ifequals"))
		return parse_expect(tok[3], tl[3], c);
	if (tokens(tok[3], tl[3], k, kl, 2) != 2 ||
	    parse_op(k[0], kl[0], &c->op))
		return CF_EINVAL;
	return parse_expect(k[1], kl[1], c);
}

/* The engine's filter check: 1 if any cell of r passes the filter. */
static int filter_holds(void *arg, const cf_row *r)
{
	struct fs_filter *f = arg;
	size_t n = cf_row_count(r);
	unsigned char *keep;
	int end = 0, any = 0, rc;

	if (n == 0)
		return 0;
	if (!(keep = malloc(n)))
		return CF_ENOMEM;
	rc = fs_filter_row(f, r, keep, &end);
	for (size_t i = 0; !rc && i < n; i++)
		any |= keep[i];
	free(keep);
	return rc ? CF_ENOMEM : any;
}

/* Applies b iff c holds against row: CF_ECANCELED (why set) if not. */
static int check_apply(cf_table *t, const struct buf *row,
		       struct bcheck *c, const cf_batch *b, const char **why)
{
	struct cf_check k = { 0 };
	int rc, applied = 0;

	k.fam = c->fam;
	k.famlen = c->famlen;
	k.qual = c->qual.len ? (const void *)c->qual.p : "";
	k.qlen = c->qual.len;
	k.op = c->op;
	k.value = c->null ? NULL : (const void *)c->val.p;
	k.vlen = c->null ? 0 : c->val.len;
	k.min_ts = c->tmin;
	k.max_ts = c->tmax;
	if (c->filter) {
		k.filter = filter_holds;
		k.arg = c->filter;
	}
	rc = cf_table_check_mutate(t, row->len ? (const void *)row->p : "",
				   row->len, &k, b, &applied);
	if (!rc && !applied) {
		rc = CF_ECANCELED;
		*why = c->filter ? "line 1: check failed: no cell of the row "
				   "passes the filter; nothing applied"
		       : "line 1: check failed: the cell's value does not "
			 "match; nothing applied";
	}
	return rc;
}

/* The Deletes of DeleteFamilyVersion: every version at ts of fam. */
static int family_version(cf_table *t, cf_batch *b, const struct buf *row,
			  const char *fam, size_t famlen, int64_t ts)
{
	struct cf_column col = { fam, famlen, NULL, 0 };
	struct cf_read_opts o = CF_READ_OPTS_INIT;
	const struct cf_cell *c;
	cf_row *r = NULL;
	size_t i;
	int rc;

	o.columns = &col;
	o.ncolumns = 1;
	o.min_ts = ts;
	o.max_ts = ts + 1;
	o.max_versions = INT32_MAX;
	o.keys_only = 1;
	rc = cf_table_get(t, row->len ? (void *)row->p : "", row->len, &o,
			  &r);
	for (i = 0; !rc && i < cf_row_count(r); i++) {
		c = cf_row_cell(r, i);
		if (c->ts == ts)
			rc = cf_batch_delete(b, CF_DEL_VERSION,
					     row->len ? (void *)row->p : "",
					     row->len, fam, famlen,
					     c->qlen ? (const void *)c->qual
						     : "", c->qlen, ts);
	}
	cf_row_free(r);
	return rc;
}


/*
 * The rows a write changes, for the kernel's caches: up to BATCH_ROWS
 * distinct rows are told apart (their nodes forget names and attributes,
 * fs_rows_changed); past that the whole table is (fs_table_changed),
 * one visit of every node instead of a search per line.
 */
#define BATCH_ROWS 64

/* Adds row to rows[0..*n) unless there (the last first: a write's
 * lines come row by row).  1 when there is no room (or no memory). */
static int note_row(struct buf *rows, size_t *n, const struct buf *row)
{
	for (size_t k = *n; k-- > 0;)
		if (rows[k].len == row->len &&
		    (!row->len || !memcmp(rows[k].p, row->p, row->len)))
			return 0;
	if (*n == BATCH_ROWS)
		return 1;
	rows[*n] = (struct buf)BUF_INIT;
	if (buf_append(&rows[*n], row->p, row->len)) {
		buf_release(&rows[*n]);
		return 1;
	}
	(*n)++;
	return 0;
}

int fs_batch_write(cf_table *t, const char *p, size_t len, const char **why)
{
	struct buf row = BUF_INIT, qual = BUF_INIT, val = BUF_INIT;
	struct buf crow = BUF_INIT;
	struct bcheck chk = { 0 };
	char fwhy[160];
	cf_batch *b = NULL;
	const char *tok[4], *bad = NULL;
	size_t tl[4], nt, i = 0, j, famlen, lineno = 0;
	size_t lines = 0;
	int64_t ts, delta = 0;
	int rc, hasq, incr = 0, oneline = 0;
	int append = 0;
	enum cf_delete_kind kind;
	struct buf rows[BATCH_ROWS];
	size_t nrows = 0;
	int many = 0;

	*why = "";
	rc = cf_batch_new(&b);
	while (!rc && i < len) {
		for (j = i; j < len && p[j] != '\n'; j++)
			;
		lineno++;
		if (j == i) {
			i = j + 1;
			continue;
		}
		lines++;
		nt = tokens(p + i, j - i, tok, tl, 4);
		col_why = NULL;
		col_rc = 0;
		rc = CF_EINVAL;
		bad = "not a known verb with its arguments and a known family";
		if (nt < 2)
			goto bad;
		buf_reset(&row);
		if (!IS(1, "''") && cf_unescape(tok[1], tl[1], &row)) {
			bad = "malformed escape in the row";
			goto bad;
		}
		if (incr || oneline || append) {
			bad = incr ? "incr goes alone in its write" :
			      append ? "append goes alone in its write" :
			      "checkandput and checkanddelete go alone in "
			      "their write";
			goto bad;
		}
		if (chk.on && (row.len != crow.len ||
			      (row.len && memcmp(row.p, crow.p, row.len)))) {
			bad = "the lines after a check change its row only";
			goto bad;
		}
		if (IS(0, "put")) {
			/* no value: the empty value */
			if (nt < 3 || parse_col(t, tok[2], tl[2], Q_NEED,
						&famlen, &hasq, &qual, &ts) ||
			    parse_val(nt == 4 ? tok[3] : "", nt == 4 ? tl[3]
				      : 0, &val))
				goto bad;
			rc = cf_batch_put(b, ROWP(row), row.len, tok[2], famlen,
					  ROWP(qual), qual.len, ts, ROWP(val),
					  val.len);
		} else if ((IS(0, "delete") || IS(0, "deleteall")) && nt == 2) {
			rc = cf_batch_delete(b, CF_DEL_ROW, ROWP(row), row.len,
					     NULL, 0, NULL, 0, CF_TS_NOW);
		} else if (IS(0, "delete") || IS(0, "deletecolumn") ||
			   IS(0, "deletecolumns") || IS(0, "deleteall") ||
			   IS(0, "deletefamily")) {
			if (nt != 3)
				goto bad;
			if (IS(0, "deleteall") && tl[2] && tok[2][0] == '@') {
				if (parse_at(tok[2], tl[2], &ts))
					goto bad;
				rc = cf_batch_delete(b, CF_DEL_ROW, ROWP(row),
						     row.len, NULL, 0, NULL, 0,
						     ts);
				goto next;
			}
			if (parse_col(t, tok[2], tl[2],
				      IS(0, "deletefamily") ? Q_NONE :
				      IS(0, "deleteall") ? Q_ANY : Q_NEED,
				      &famlen, &hasq, &qual, &ts))
				goto bad;
			/* (the form is parse_col's: deletefamily names a
			 * family, deleteall either, the others a column) */
			if (!hasq) {
				kind = CF_DEL_FAMILY;
			} else if (IS(0, "deletecolumn") ||
				   (IS(0, "delete") && ts != CF_TS_NOW)) {
				kind = CF_DEL_VERSION;
			} else {
				kind = CF_DEL_COLUMN;
			}
			rc = cf_batch_delete(b, kind, ROWP(row), row.len,
					     tok[2], famlen, ROWP(qual),
					     qual.len, ts);
		} else if (IS(0, "deletefamilyversion")) {
			if (nt != 3 || parse_col(t, tok[2], tl[2], Q_NONE,
						 &famlen, &hasq, &qual, &ts) ||
			    ts == CF_TS_NOW)
				goto bad;
			rc = family_version(t, b, &row, tok[2], famlen, ts);
		} else if (IS(0, "incr")) {
			/* ROW then FAM:QUAL [DELTA] ...: the puts carry the
			 * deltas, 8 bytes big-endian */
			const char *q = tok[1] + tl[1], *end = p + j;
			const char *pt[3];
			size_t pl[3], n;
			unsigned char d8[8];
			bad = "not 'incr ROW FAM:QUAL [DELTA] [FAM:QUAL "
			      "[DELTA] ...]' alone in its write, without @TS";
			if (lines > 1 || nt < 3)
				goto bad;
			while (q < end) {
				n = tokens(q + 1, (size_t)(end - q - 1), pt, pl,
					   3);
				if (parse_col(t, pt[0], pl[0], Q_NEED, &famlen,
					      &hasq, &qual, &ts) ||
				    ts != CF_TS_NOW)
					goto bad;
				delta = 1;
				q = pt[0] + pl[0];
				/* a column has its ':', a delta none */
				if (n >= 2 && !memchr(pt[1], ':', pl[1])) {
					if (parse_delta(pt[1], pl[1], &delta))
						goto bad;
					q = pt[1] + pl[1];
				}
				enc_u64be(d8, (uint64_t)delta);
				rc = cf_batch_put(b, ROWP(row), row.len, pt[0],
						  famlen, ROWP(qual), qual.len,
						  CF_TS_NOW, d8, 8);
				if (rc)
					goto bad;
				rc = CF_EINVAL;
			}
			incr = 1;
			rc = buf_append(&crow, row.p, row.len);
		} else if (IS(0, "append")) {
			/* ROW then FAM:QUAL VALUE pairs; the puts carry the
			 * data to append */
			const char *q = tok[1] + tl[1], *end = p + j;
			const char *pt[3];
			size_t pl[3];
			bad = "not 'append ROW FAM:QUAL VALUE [FAM:QUAL "
			      "VALUE ...]' alone in its write, without @TS";
			if (lines > 1 || nt < 4)
				goto bad;
			while (q < end) {
				if (tokens(q + 1, (size_t)(end - q - 1), pt, pl,
					   3) < 2 ||
				    parse_col(t, pt[0], pl[0], Q_NEED, &famlen,
					      &hasq, &qual, &ts) ||
				    ts != CF_TS_NOW || pl[1] == 0 ||
				    parse_val(pt[1], pl[1], &val))
					goto bad;
				rc = cf_batch_put(b, ROWP(row), row.len, pt[0],
						  famlen, ROWP(qual), qual.len,
						  CF_TS_NOW, ROWP(val),
						  val.len);
				if (rc)
					goto bad;
				rc = CF_EINVAL;
				q = pt[1] + pl[1];
			}
			append = 1;
			rc = buf_append(&crow, row.p, row.len);
		} else if (IS(0, "checkandput") || IS(0, "checkanddelete")) {
			/* ROW FAM:QUAL EXPECT REST: the check, then REST as
			 * a put or delete line of ROW */
			size_t t4[3], n4 = 0;
			const char *k4[3];
			int put = IS(0, "checkandput");
			if (nt == 4)
				n4 = tokens(tok[3], tl[3], k4, t4, put ? 3 : 2);
			bad = "not 'checkandput ROW FAM:QUAL[@T1,T2] EXPECT "
			      "FAM:QUAL[@TS] VALUE' or 'checkanddelete ROW "
			      "FAM:QUAL[@T1,T2] EXPECT [FAM[:QUAL]][@TS]' "
			      "alone in its write";
			if (lines > 1 || nt != 4 || (put ? n4 != 3 : n4 < 1) ||
			    parse_check_col(t, tok[2], tl[2], &chk) ||
			    parse_expect(k4[0], t4[0], &chk))
				goto bad;
			chk.on = 1;
			chk.op = CF_CMP_EQUAL;
			if ((rc = buf_append(&crow, row.p, row.len)))
				goto bad;
			rc = CF_EINVAL;
			oneline = 1;
			if (put) {
				if (parse_col(t, k4[1], t4[1], Q_NEED, &famlen,
					      &hasq, &qual, &ts) ||
				    parse_val(k4[2], t4[2], &val))
					goto bad;
				rc = cf_batch_put(b, ROWP(row), row.len, k4[1],
						  famlen, ROWP(qual), qual.len,
						  ts, ROWP(val), val.len);
			} else if (n4 == 1) {
				rc = cf_batch_delete(b, CF_DEL_ROW, ROWP(row),
						     row.len, NULL, 0, NULL, 0,
						     CF_TS_NOW);
			} else if (t4[1] && k4[1][0] == '@') {
				if (parse_at(k4[1], t4[1], &ts))
					goto bad;
				rc = cf_batch_delete(b, CF_DEL_ROW, ROWP(row),
						     row.len, NULL, 0, NULL, 0,
						     ts);
			} else {
				if (parse_col(t, k4[1], t4[1], Q_ANY, &famlen,
					      &hasq, &qual, &ts))
					goto bad;
				rc = cf_batch_delete(b, hasq ? CF_DEL_COLUMN :
						     CF_DEL_FAMILY, ROWP(row),
						     row.len, k4[1], famlen,
						     ROWP(qual), qual.len, ts);
			}
		} else if (IS(0, "ifequals") || IS(0, "ifnotexists") ||
			   IS(0, "ifmatches") || IS(0, "iffilter")) {
			if (lines > 1) {
				bad = "a check is the first line of its write";
				goto bad;
			}
			if (parse_check_line(t, tok, tl, nt, p + j, &chk, &bad,
					     fwhy, sizeof fwhy))
				goto bad;
			chk.on = 1;
			rc = buf_append(&crow, row.p, row.len);
		} else
			goto bad;
next:
		if (!rc && !many)
			many = note_row(rows, &nrows, &row);
		i = j + 1;
		continue;
bad:
		snprintf(whybuf, sizeof whybuf, "line %zu: %s", lineno,
			 col_why ? col_why : bad);
		*why = whybuf;
		if (col_rc)
			rc = col_rc;
		break;
	}
	if (rc)
		goto out;
	if (append) {
		rc = cf_table_append_row(t, ROWP(crow), crow.len, b);
		if (rc == CF_ETOOBIG)
			*why = "append: a new value would pass max_value";
	} else if (incr) {
		rc = cf_table_increment_row(t, ROWP(crow), crow.len, b);
		if (rc == CF_EINVAL)
			*why = "incr: the cell holds no 8-byte counter";
		else if (rc == CF_ERANGE)
			*why = "incr: the counter would overflow";
	} else if (chk.on && !oneline && lines < 2) {
		rc = CF_EINVAL;
		*why = "line 1: a check needs the lines it guards in the same "
		       "write(2)";
	} else if (chk.on) {
		rc = check_apply(t, &crow, &chk, b, why);
	} else if (lines) {
		rc = cf_table_apply(t, b);
	}
	if (rc && !**why)
		*why = cf_strerror(rc);
	if (!rc && many)
		fs_table_changed(cf_table_name(t), 0);
	else if (!rc)
		fs_rows_changed(cf_table_name(t), rows, nrows);
out:
	for (size_t k = 0; k < nrows; k++)
		buf_release(&rows[k]);
	cf_batch_free(b);
	buf_release(&row);
	buf_release(&qual);
	buf_release(&val);
	buf_release(&crow);
	buf_release(&chk.qual);
	buf_release(&chk.val);
	fs_filter_free(chk.filter);
	return rc;
}
