/*
 * check.c: the offline check and repair of a data directory (cf_check,
 * run by cellfs-fsck).  It reads what the engine writes: the catalog, the
 * region directories with their .regioninfo, the store files and the WAL.
 *
 * Findings come in two kinds.  Debris is what an unclean stop (kill -9,
 * a power cut) leaves and what the next mount removes: store files and
 * region or table directories the catalog does not name (a flush,
 * compaction, split, create or drop cut short; torn or whole), and a
 * torn tail of the newest WAL segment.  Debris is only recognised against
 * a sound catalog.  Everything else is damage (problems): committed data
 * that is unreadable, missing or inconsistent, and any bad record in a
 * WAL segment other than the newest one (records lost).
 *
 * Repair removes debris as the next mount would.  Otherwise it never
 * deletes: whatever cannot be used goes to lost+found/.  A
 * catalog that is missing, damaged, or disagrees with the disk (regions
 * with gaps or overlaps, store files it names that are gone) is rebuilt
 * from the region directories: each .regioninfo names its table (and the
 * table's id, which the WAL refers to), its key range and families.  A
 * region directory whose range strictly contains other regions' is a
 * split parent: its files become bounded references of the daughters, as
 * a split makes them.  Each region's flushed position is the largest
 * sequence number in its files, so WAL replay adds exactly the rest.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/internal.h"
#include "engine/wal.h"
#include "engine/walrec.h"
#include "meta/meta.h"
#include "util/env.h"

struct cat;

struct rinfo {
	char table[CF_TABLE_MAX + 1];
	int64_t tableid;
	uint64_t id;
	struct buf start, end;
	struct buf fams;	/* schema lines, '\n' after each */
	int retired;
};

struct cfile {			/* a file the catalog names */
	char table[CF_TABLE_MAX + 1];
	int64_t region, home;
	uint64_t id;
	char fam[CF_FAMILY_MAX + 1];
	int bad;		/* fails its checks */
};

struct chk {
	const char *dir;
	int repair;
	cf_check_say say;
	void *arg;
	unsigned problems;	/* damage */
	unsigned debris;
	struct cat *cat;	/* the catalog's regions, when it is sound */
	int rebuild;		/* the catalog must be rebuilt */
	struct rinfo *ri;
	size_t nri;
	struct cfile *cf;
	size_t ncf;
	struct meta *m;
	/* walk state */
	char table[CF_TABLE_MAX + 1];
	uint64_t region;
	char fam[CF_FAMILY_MAX + 1];
	struct buf path;
	int64_t tid;		/* catalog loading */
	int64_t rid;
};

/* Counts one finding of kind (damage or debris) and tells the caller. */
static void vfinding(struct chk *c, enum cf_check_kind kind,
		     const char *path, const char *fmt, va_list ap)
{
	char what[512];

	vsnprintf(what, sizeof what, fmt, ap);
	if (kind == CF_CHECK_DEBRIS)
		c->debris++;
	else
		c->problems++;
	if (c->say)
		c->say(c->arg, kind, path, what);
}

static void problem(struct chk *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct chk *c, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfinding(c, CF_CHECK_DAMAGE, path, fmt, ap);
	va_end(ap);
}

static void debris(struct chk *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void debris(struct chk *c, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfinding(c, CF_CHECK_DEBRIS, path, fmt, ap);
	va_end(ap);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Two hex digits a byte, up to the end of the line or the text. */
static int unhex(const char *s, struct buf *out)
{
	buf_reset(out);
	for (; s[0] && s[0] != '\n'; s += 2) {
		int hi = hexval(s[0]), lo = hexval(s[1]);
		if (hi < 0 || lo < 0)
			return CF_ECORRUPT;
		if (buf_putc(out, hi << 4 | lo))
			return CF_ENOMEM;
	}
	return CF_OK;
}

/* Parses a .regioninfo file into r. */
static int parse_info(const char *text, struct rinfo *r)
{
	const char *p = text;
	int have = 0;

	if (strncmp(p, "cellfs-regioninfo 1\n", 20) != 0)
		return CF_ECORRUPT;
	while ((p = strchr(p, '\n')) && *++p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		if (!strncmp(p, "table ", 6) && n - 6 <= CF_TABLE_MAX) {
			memcpy(r->table, p + 6, n - 6);
			r->table[n - 6] = 0;
			have |= 1;
		} else if (!strncmp(p, "tableid ", 8)) {
			r->tableid = strtoll(p + 8, NULL, 10);
			have |= 2;
		} else if (!strncmp(p, "region ", 7)) {
			r->id = strtoull(p + 7, NULL, 16);
			have |= 4;
		} else if (!strncmp(p, "start ", 6)) {
			if (unhex(p + 6, &r->start))
				return CF_ECORRUPT;
			have |= 8;
		} else if (n == 5 && !strncmp(p, "start", 5)) {
			buf_reset(&r->start);	/* "start" alone: empty */
			have |= 8;
		} else if (!strncmp(p, "end ", 4)) {
			if (unhex(p + 4, &r->end))
				return CF_ECORRUPT;
			have |= 16;
		} else if (n == 3 && !strncmp(p, "end", 3)) {
			buf_reset(&r->end);
			have |= 16;
		} else if (!strncmp(p, "family ", 7)) {
			buf_append(&r->fams, p + 7, n - 7);
			buf_putc(&r->fams, '\n');
		}
	}
	return (have & 31) == 31 && cf_table_name_valid(r->table) ?
		       CF_OK : CF_ECORRUPT;
}

int check_regioninfo_parse(const char *text)
{
	struct rinfo r;
	int rc;

	memset(&r, 0, sizeof r);
	rc = parse_info(text, &r);
	buf_release(&r.start);
	buf_release(&r.end);
	buf_release(&r.fams);
	return rc;
}

static void path_set(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void path_set(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char tmp[8192];

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	buf_reset(b);
	buf_append(b, tmp, strlen(tmp) + 1);
	b->len--;
}

/* Moves path under lost+found/, keeping its path below dir. */
static int lose(struct chk *c, const char *path)
{
	struct buf to = BUF_INIT;
	size_t dl = strlen(c->dir);
	const char *rel = strncmp(path, c->dir, dl) == 0 ? path + dl + 1 : path;
	int rc;

	path_set(&to, "%s/lost+found/%s", c->dir, rel);
	{
		char *slash = strrchr((char *)to.p, '/');
		*slash = 0;
		env_mkdir_p((const char *)to.p, 0700);
		*slash = '/';
	}
	if (env_exists((const char *)to.p)) {
		char tail[32];
		snprintf(tail, sizeof tail, ".%ld", (long)time(NULL));
		buf_append(&to, tail, strlen(tail) + 1);
		to.len--;
	}
	rc = env_rename(path, (const char *)to.p);
	buf_release(&to);
	return rc;
}

/* Verifies a store file quietly; 0 if good, else why into why. */
static int sst_bad(const char *path, char *why, size_t size)
{
	uint64_t bad = 0;
	int rc = sst_verify(path, &bad);

	if (rc == CF_ECORRUPT)
		snprintf(why, size, "checksum mismatch at offset %" PRIu64,
			 bad);
	else if (rc)
		snprintf(why, size, "unreadable: %s", cf_strerror(rc));
	return rc;
}

/* Verifies a store file; 0 if good, else says why. */
static int verify_sst(struct chk *c, const char *path, uint64_t *max_seq)
{
	char why[128];
	struct sst *s;
	int rc = sst_bad(path, why, sizeof why);

	if (rc) {
		problem(c, path, "%s", why);
		return rc;
	}
	if (max_seq) {
		rc = sst_open(path, 0, NULL, 0, &s);
		if (rc) {
			problem(c, path, "unreadable: %s", cf_strerror(rc));
			return rc;
		}
		*max_seq = sst_get_meta(s)->max_seq;
		sst_unref(s);
	}
	return CF_OK;
}

/* --- the catalog as it is ------------------------------------------- */

struct creg {
	char table[CF_TABLE_MAX + 1];
	uint64_t id;
	struct buf start, end;
};

struct cat {
	struct chk *c;
	const char *table;
	struct creg *regs;
	size_t nregs;
	char (*tabs)[CF_TABLE_MAX + 1];	/* every table's name */
	size_t ntabs;
};

static int cat_file(const struct meta_file *f, void *arg)
{
	struct cat *k = arg;
	struct chk *c = k->c;
	struct cfile *n = realloc(c->cf, (c->ncf + 1) * sizeof *n);

	if (!n)
		return CF_ENOMEM;
	c->cf = n;
	n = &c->cf[c->ncf++];
	memset(n, 0, sizeof *n);
	snprintf(n->table, sizeof n->table, "%s", k->table);
	n->region = f->region_id;
	n->home = f->home_region;
	n->id = f->id;
	snprintf(n->fam, sizeof n->fam, "%s", f->family);
	return 0;
}

static int cat_region(const struct meta_region *r, void *arg)
{
	struct cat *k = arg;
	struct creg *n = realloc(k->regs, (k->nregs + 1) * sizeof *n);

	if (!n)
		return CF_ENOMEM;
	k->regs = n;
	n = &k->regs[k->nregs++];
	memset(n, 0, sizeof *n);
	snprintf(n->table, sizeof n->table, "%s", k->table);
	n->id = (uint64_t)r->id;
	buf_append(&n->start, r->start, r->startlen);
	buf_append(&n->end, r->end, r->endlen);
	return meta_file_list(k->c->m, r->id, cat_file, k);
}

static int cat_table(const struct meta_table *t, void *arg)
{
	struct cat *k = arg;
	size_t first = k->nregs;
	char (*tabs)[CF_TABLE_MAX + 1];
	int rc;

	tabs = realloc(k->tabs, (k->ntabs + 1) * sizeof *tabs);
	if (!tabs)
		return CF_ENOMEM;
	k->tabs = tabs;
	snprintf(k->tabs[k->ntabs++], sizeof *tabs, "%s", t->name);
	k->table = t->name;
	rc = meta_region_list(k->c->m, t->id, cat_region, k);
	if (rc)
		return rc;
	/* regions come ordered by start: they must tile the key space */
	for (size_t i = first; i < k->nregs; i++) {
		struct creg *r = &k->regs[i];
		char where[300];
		snprintf(where, sizeof where, "%s/data/%s/%016" PRIx64,
			 k->c->dir, t->name, r->id);
		if (i == first && r->start.len) {
			problem(k->c, where, "the first region does not start "
				"at the table's start");
			k->c->rebuild = 1;
		}
		if (i > first && bytes_cmp(k->regs[i - 1].end.p,
					   k->regs[i - 1].end.len, r->start.p,
					   r->start.len) != 0) {
			problem(k->c, where, "%s with the region before it",
				bytes_cmp(k->regs[i - 1].end.p,
					  k->regs[i - 1].end.len, r->start.p,
					  r->start.len) < 0 ? "a gap" :
				"an overlap");
			k->c->rebuild = 1;
		}
		if (i + 1 == k->nregs && r->end.len) {
			problem(k->c, where, "the last region does not reach "
				"the table's end");
			k->c->rebuild = 1;
		}
	}
	if (first == k->nregs) {
		problem(k->c, "catalog.db", "table %s has no region", t->name);
		k->c->rebuild = 1;
	}
	return 0;
}

/* 0 if the catalog names no such file, 1 if it does, 2 if the file it
 * names failed its checks. */
static int cat_named(struct chk *c, const char *table, uint64_t home,
		     uint64_t id)
{
	int named = 0;

	for (size_t i = 0; i < c->ncf; i++)
		if ((uint64_t)c->cf[i].home == home && c->cf[i].id == id &&
		    !strcmp(c->cf[i].table, table))
			named = c->cf[i].bad ? 2 : 1;
	return named;
}

static int cf_same(const struct cfile *a, const struct cfile *b)
{
	return a->home == b->home && a->id == b->id &&
	       !strcmp(a->table, b->table);
}

/* 1 if a file the catalog names before c->cf[i] is the same file (a
 * split's daughters share their parent's): each is checked once. */
static int cf_seen(const struct chk *c, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (cf_same(&c->cf[j], &c->cf[i]))
			return 1;
	return 0;
}

/* 1 when the catalog is sound, so that what it does not name is debris */
static int sound(const struct chk *c)
{
	return c->cat && !c->rebuild;
}

static int cat_has_table(const struct chk *c, const char *table)
{
	for (size_t i = 0; i < c->cat->ntabs; i++)
		if (!strcmp(c->cat->tabs[i], table))
			return 1;
	return 0;
}

/* As the mount's sweep: a region of the table, or the home of a file
 * one of them uses (a split parent). */
static int cat_region_in_use(const struct chk *c, const char *table,
			     const char *name)
{
	uint64_t id;

	if (strlen(name) != 16 || sscanf(name, "%16" SCNx64, &id) != 1)
		return 0;
	for (size_t i = 0; i < c->cat->nregs; i++)
		if (c->cat->regs[i].id == id &&
		    !strcmp(c->cat->regs[i].table, table))
			return 1;
	for (size_t i = 0; i < c->ncf; i++)
		if ((uint64_t)c->cf[i].home == id &&
		    !strcmp(c->cf[i].table, table))
			return 1;
	return 0;
}

#define DEBRIS_TAIL ", removed by the next mount"

/* --- walking the disk ----------------------------------------------- */

static int walk_files(const char *name, void *arg)
{
	struct chk *c = arg;
	size_t mark = c->path.len;
	int named;
	uint64_t id;
	char tail[8];
	const char *p;

	buf_printf(&c->path, "/%s", name);
	buf_putc(&c->path, 0);
	c->path.len--;
	p = (const char *)c->path.p;
	if (sscanf(name, "%16" SCNx64 "%7s", &id, tail) != 2 ||
	    strcmp(tail, ".sst") != 0) {
		problem(c, p, "not a store file");
		if (c->repair)
			lose(c, p);
	} else if ((named = cat_named(c, c->table, c->region, id)) == 2) {
		/* reported when the catalog's files were checked; moved now
		 * even though a rebuild follows: the rebuild moves a bad
		 * file only from a region that owns its own files, so one
		 * in the directory of a split region stayed */
		if (c->repair)
			lose(c, p);
	} else if (!named && sound(c)) {
		/* a flush or compaction cut short (torn or whole), or the
		 * inputs of a committed compaction not yet removed */
		char why[128];
		if (sst_bad(p, why, sizeof why))
			debris(c, p, "not in the catalog, %s" DEBRIS_TAIL,
			       why);
		else
			debris(c, p, "not in the catalog" DEBRIS_TAIL);
		if (c->repair)
			env_unlink(p);
	} else if (!named && verify_sst(c, p, NULL) != CF_OK) {
		/* no sound catalog: the rebuild adds the good ones */
		if (c->repair)
			lose(c, p);
	}
	c->path.len = mark;
	return 0;
}

static int walk_fams(const char *name, void *arg)
{
	struct chk *c = arg;
	size_t mark = c->path.len;

	if (!strcmp(name, ".regioninfo"))
		return 0;
	buf_printf(&c->path, "/%s", name);
	buf_putc(&c->path, 0);
	c->path.len--;
	snprintf(c->fam, sizeof c->fam, "%s", name);
	env_list_dir((const char *)c->path.p, walk_files, c);
	c->path.len = mark;
	return 0;
}

static int walk_regions(const char *name, void *arg)
{
	struct chk *c = arg;
	size_t mark = c->path.len;
	struct rinfo r;
	char *text = NULL;
	size_t len;

	memset(&r, 0, sizeof r);
	buf_printf(&c->path, "/%s", name);
	buf_putc(&c->path, 0);
	c->path.len--;
	if (sound(c) && !cat_region_in_use(c, c->table, name)) {
		/* a split cut short, or a parent whose last reference went */
		debris(c, (const char *)c->path.p, "a region directory not "
		       "in the catalog" DEBRIS_TAIL);
		if (c->repair)
			env_remove_tree((const char *)c->path.p);
		c->path.len = mark;
		return 0;
	}
	c->region = strtoull(name, NULL, 16);
	{
		struct buf ip = BUF_INIT;
		path_set(&ip, "%s/.regioninfo", (const char *)c->path.p);
		if (env_read_file((const char *)ip.p, &text, &len) != CF_OK ||
		    parse_info(text, &r) != CF_OK || r.id != c->region ||
		    strcmp(r.table, c->table)) {
			problem(c, (const char *)ip.p,
				"missing or malformed .regioninfo");
			buf_release(&r.start);
			buf_release(&r.end);
			buf_release(&r.fams);
		} else {
			struct rinfo *n = realloc(c->ri, (c->nri + 1) *
						  sizeof *n);
			if (n) {
				c->ri = n;
				c->ri[c->nri++] = r;
			}
		}
		free(text);
		buf_release(&ip);
	}
	env_list_dir((const char *)c->path.p, walk_fams, c);
	c->path.len = mark;
	return 0;
}

static int walk_tables(const char *name, void *arg)
{
	struct chk *c = arg;
	size_t mark = c->path.len;

	buf_printf(&c->path, "/%s", name);
	buf_putc(&c->path, 0);
	c->path.len--;
	if (sound(c) && !cat_has_table(c, name)) {
		/* a create or a drop cut short */
		debris(c, (const char *)c->path.p, "a table directory not "
		       "in the catalog" DEBRIS_TAIL);
		if (c->repair)
			env_remove_tree((const char *)c->path.p);
		c->path.len = mark;
		return 0;
	}
	snprintf(c->table, sizeof c->table, "%s", name);
	env_list_dir((const char *)c->path.p, walk_regions, c);
	c->path.len = mark;
	return 0;
}

/* --- the WAL ---------------------------------------------------------- */

/* Keeps a copy of a damaged segment in lost+found/, then cuts it at end. */
static void cut_damaged(struct chk *c, const char *path, uint64_t id,
			uint64_t end)
{
	struct buf to = BUF_INIT;
	char *data = NULL;
	size_t dl;
	struct env_file *f;

	path_set(&to, "%s/lost+found", c->dir);
	env_mkdir_p((const char *)to.p, 0700);
	path_set(&to, "%s/lost+found/wal-%016" PRIx64 ".log", c->dir, id);
	if (env_read_file(path, &data, &dl) == CF_OK)
		env_write_file_atomic((const char *)to.p, data, dl);
	free(data);
	buf_release(&to);
	if (env_open(path, ENV_RDWR, &f) == CF_OK) {
		env_truncate(f, end);
		env_sync(f);
		env_close(f);
	}
}

/*
 * Only the newest segment may end torn: a segment is cut back to its
 * records and synced before the next one is created (docs/wal_format.md),
 * and replay cuts the newest one's tail before it starts the next.  So a
 * torn tail there is debris; anywhere else, a bad record is lost data.
 */
static void check_wal(struct chk *c)
{
	struct buf dir = BUF_INIT;
	uint64_t *ids = NULL;
	size_t n = 0;
	char path[8192];

	path_set(&dir, "%s/wal", c->dir);
	if (!env_exists((const char *)dir.p) ||
	    wal_list((const char *)dir.p, &ids, &n) != CF_OK) {
		buf_release(&dir);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct wal_reader *r;
		const void *rec;
		size_t len;
		uint64_t at;
		int rc, undecodable, newest = i + 1 == n;

		wal_segment_path(path, sizeof path, (const char *)dir.p, ids[i]);
		rc = wal_reader_open(path, &r);
		if (rc) {
			problem(c, path, "unreadable WAL segment: %s",
				cf_strerror(rc));
			if (c->repair)
				lose(c, path);
			continue;
		}
		at = wal_reader_valid_end(r);
		undecodable = 0;
		while ((rc = wal_reader_next(r, &rec, &len)) == CF_OK && rec) {
			if (walrec_check(rec, len) == CF_ECORRUPT) {
				undecodable = 1;
				break;
			}
			at = wal_reader_valid_end(r);
		}
		if (undecodable) {
			problem(c, path, "the record at offset %" PRIu64 " is "
				"whole but its contents do not decode: replay "
				"refuses it and every record after it", at);
			if (c->repair)
				cut_damaged(c, path, ids[i], at);
		} else if (rc) {
			uint64_t end = wal_reader_valid_end(r);
			problem(c, path, "damaged record after offset %" PRIu64,
				end);
			if (c->repair)
				cut_damaged(c, path, ids[i], end);
		} else if (wal_reader_torn(r)) {
			uint64_t end = wal_reader_valid_end(r);
			int zeros = wal_reader_zero_tail(r);
			if (newest) {
				debris(c, path, "%s after offset %" PRIu64 " in "
				       "the newest segment, cut there by the "
				       "next mount", zeros ? "zeros" :
				       "a torn record", end);
				if (c->repair) {
					struct env_file *f;
					if (env_open(path, ENV_RDWR, &f) ==
					    CF_OK) {
						env_truncate(f, end);
						env_sync(f);
						env_close(f);
					}
				}
			} else {
				problem(c, path, "%s after offset %" PRIu64
					" in a segment older than the newest: "
					"records after it are lost", zeros ?
					"zeros" : "a torn record", end);
				if (c->repair)
					cut_damaged(c, path, ids[i], end);
			}
		}
		wal_reader_close(r);
	}
	free(ids);
	buf_release(&dir);
}

/* --- rebuilding the catalog ----------------------------------------- */

static int overlaps(const struct rinfo *a, const struct rinfo *b)
{
	int a_before = a->end.len && bytes_cmp(a->end.p, a->end.len,
					       b->start.p, b->start.len) <= 0;
	int b_before = b->end.len && bytes_cmp(b->end.p, b->end.len,
					       a->start.p, a->start.len) <= 0;
	return !a_before && !b_before;
}

struct addfile {
	struct chk *c;
	struct rinfo *home;
	struct rinfo *owner;	/* the live region using the files */
	uint64_t max_seq;
	uint64_t max_id;
	int rc;
};

static int add_files_in(const char *famname, void *arg);

static int add_one(const char *name, void *arg)
{
	struct addfile *a = arg;
	struct chk *c = a->c;
	uint64_t id, seq = 0;
	char tail[8];
	const char *p;
	size_t mark = c->path.len;

	buf_printf(&c->path, "/%s", name);
	buf_putc(&c->path, 0);
	c->path.len--;
	p = (const char *)c->path.p;
	if (sscanf(name, "%16" SCNx64 "%7s", &id, tail) == 2 &&
	    !strcmp(tail, ".sst") && env_exists(p)) {
		if (verify_sst(c, p, &seq)) {
			if (a->owner == a->home)
				lose(c, p);
		} else {
			struct meta_file mf = { 0 };
			struct buf lo = BUF_INIT, hi = BUF_INIT;
			int bounded = a->owner != a->home;
			mf.id = id;
			mf.region_id = (int64_t)a->owner->id;
			mf.family = c->fam;
			mf.home_region = (int64_t)a->home->id;
			if (env_file_size(p, &mf.size))
				mf.size = 0;
			mf.max_seq = seq;
			if (bounded) {
				/* the tighter of the two ranges */
				const struct rinfo *o = a->owner, *h = a->home;
				const struct buf *l = bytes_cmp(o->start.p,
					o->start.len, h->start.p,
					h->start.len) > 0 ? &o->start :
					&h->start;
				buf_append(&lo, l->p, l->len);
				mf.lo = lo.p ? lo.p : (const void *)"";
				mf.lolen = lo.len;
				if (o->end.len || h->end.len) {
					const struct buf *e;
					if (!o->end.len)
						e = &h->end;
					else if (!h->end.len)
						e = &o->end;
					else
						e = bytes_cmp(o->end.p,
							o->end.len, h->end.p,
							h->end.len) < 0 ?
							&o->end : &h->end;
					buf_append(&hi, e->p, e->len);
					mf.hi = hi.p;
					mf.hilen = hi.len;
				}
			}
			if (!a->rc)
				a->rc = meta_file_add(c->m, &mf);
			if (seq > a->max_seq)
				a->max_seq = seq;
			if (id > a->max_id)
				a->max_id = id;
			buf_release(&lo);
			buf_release(&hi);
		}
	}
	c->path.len = mark;
	return 0;
}

static int add_files_in(const char *famname, void *arg)
{
	struct addfile *a = arg;
	struct chk *c = a->c;
	size_t mark = c->path.len;

	if (!strcmp(famname, ".regioninfo"))
		return 0;
	buf_printf(&c->path, "/%s", famname);
	buf_putc(&c->path, 0);
	c->path.len--;
	snprintf(c->fam, sizeof c->fam, "%s", famname);
	env_list_dir((const char *)c->path.p, add_one, a);
	c->path.len = mark;
	return 0;
}

static int rebuild(struct chk *c)
{
	struct buf p = BUF_INIT;
	uint64_t max_id = 0, max_region = 0, max_seq = 0;
	int rc = CF_OK;

	/* the old catalog goes to lost+found */
	if (c->m) {
		meta_close(c->m);
		c->m = NULL;
	}
	{
		const char *sfx[] = { "", "-wal", "-shm", "-journal" };
		for (int i = 0; i < 4; i++) {
			path_set(&p, "%s/catalog.db%s", c->dir, sfx[i]);
			if (env_exists((const char *)p.p))
				lose(c, (const char *)p.p);
		}
	}
	path_set(&p, "%s/catalog.db", c->dir);
	rc = meta_open((const char *)p.p, &c->m);
	if (!rc)
		rc = meta_begin(c->m);
	/* replaced regions: a newer one (a larger id, as region ids only
	 * grow) overlaps them: split parents, whose daughters lie inside,
	 * and merged regions, inside the region they became */
	for (size_t i = 0; i < c->nri; i++)
		for (size_t j = 0; j < c->nri; j++)
			if (i != j && !strcmp(c->ri[i].table, c->ri[j].table) &&
			    c->ri[j].id > c->ri[i].id &&
			    overlaps(&c->ri[j], &c->ri[i]))
				c->ri[i].retired = 1;
	for (size_t i = 0; i < c->nri && !rc; i++) {
		struct rinfo *t = &c->ri[i];
		int first = 1;
		size_t best = i;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->ri[j].table, t->table))
				first = 0;
		if (!first)
			continue;
		/* the newest region of the table has the current schema */
		for (size_t j = 0; j < c->nri; j++)
			if (!strcmp(c->ri[j].table, t->table) &&
			    c->ri[j].id > c->ri[best].id)
				best = j;
		rc = meta_table_put(c->m, t->tableid, t->table);
		for (const char *l = (const char *)c->ri[best].fams.p;
		     !rc && l && l < (const char *)c->ri[best].fams.p +
				     c->ri[best].fams.len;) {
			const char *e = strchr(l, '\n');
			struct cf_family f;
			struct buf line = BUF_INIT;
			if (!e)
				break;
			if (cf_family_parse(l, (size_t)(e - l), &f, NULL) ==
			    CF_OK) {
				buf_append(&line, l, (size_t)(e - l));
				buf_putc(&line, 0);
				rc = meta_family_put(c->m, t->tableid, f.name,
						     (const char *)line.p);
			}
			buf_release(&line);
			l = e + 1;
		}
	}
	for (size_t i = 0; i < c->nri && !rc; i++) {
		struct rinfo *r = &c->ri[i];
		struct addfile a = { c, r, r, 0, 0, 0 };
		struct meta_region mr;

		if (r->id > max_region)
			max_region = r->id;
		if (r->retired)
			continue;
		path_set(&c->path, "%s/data/%s/%016" PRIx64, c->dir, r->table,
			 r->id);
		env_list_dir((const char *)c->path.p, add_files_in, &a);
		/* files of split parents this region still references */
		for (size_t j = 0; j < c->nri && !a.rc; j++) {
			struct rinfo *h = &c->ri[j];
			if (!h->retired || strcmp(h->table, r->table) ||
			    !overlaps(h, r))
				continue;
			a.home = h;
			path_set(&c->path, "%s/data/%s/%016" PRIx64, c->dir,
				 h->table, h->id);
			env_list_dir((const char *)c->path.p, add_files_in,
				     &a);
		}
		rc = a.rc;
		mr.id = (int64_t)r->id;
		for (size_t j = 0; j < c->nri; j++)
			if (!strcmp(c->ri[j].table, r->table))
				mr.table_id = c->ri[j].tableid;
		mr.start = r->start.p;
		mr.startlen = r->start.len;
		mr.end = r->end.p;
		mr.endlen = r->end.len;
		mr.flushed_seq = a.max_seq;
		if (!rc)
			rc = meta_region_put(c->m, &mr);
		if (a.max_id > max_id)
			max_id = a.max_id;
		if (a.max_seq > max_seq)
			max_seq = a.max_seq;
	}
	if (!rc)
		rc = meta_set_u64(c->m, "next_file", max_id + 1);
	if (!rc)
		rc = meta_set_u64(c->m, "next_region", max_region + 1);
	if (!rc)
		rc = meta_set_u64(c->m, "last_seq", max_seq);
	if (!rc)
		rc = meta_commit(c->m);
	else if (c->m)
		meta_rollback(c->m);
	buf_release(&p);
	return rc;
}

int cf_check(const char *dir, int repair, cf_check_say say, void *arg,
	     unsigned *problems, unsigned *ndebris)
{
	struct chk c = { .dir = dir, .repair = repair, .say = say, .arg = arg };
	struct env_file *lock = NULL;
	struct buf p = BUF_INIT;
	struct cat k = { 0 };
	int rc;

	*problems = 0;
	if (ndebris)
		*ndebris = 0;
	path_set(&p, "%s/LOCK", dir);
	if (!env_exists(dir))
		return CF_ENOTFOUND;
	rc = env_lock_file((const char *)p.p, &lock);
	if (rc)
		goto out;
	path_set(&p, "%s/catalog.db", dir);
	if (!env_exists((const char *)p.p)) {
		problem(&c, (const char *)p.p, "the catalog is missing");
		c.rebuild = 1;
	} else if ((rc = meta_open((const char *)p.p, &c.m)) != CF_OK ||
		   (rc = meta_check(c.m)) != CF_OK) {
		problem(&c, (const char *)p.p, "the catalog is damaged: %s",
			cf_strerror(rc));
		c.rebuild = 1;
		rc = CF_OK;
	} else {
		k.c = &c;
		rc = meta_table_list(c.m, cat_table, &k);
		if (rc) {
			problem(&c, (const char *)p.p, "unreadable: %s",
				cf_strerror(rc));
			c.rebuild = 1;
			rc = CF_OK;
		} else {
			c.cat = &k;
		}
		/* every file the catalog names must exist */
		for (size_t i = 0; i < c.ncf; i++) {
			struct buf fp = BUF_INIT;
			path_set(&fp, "%s/data/%s/%016" PRIx64 "/%s/%016"
				 PRIx64 ".sst", dir, c.cf[i].table,
				 (uint64_t)c.cf[i].home, c.cf[i].fam,
				 c.cf[i].id);
			if (!env_exists((const char *)fp.p)) {
				problem(&c, (const char *)fp.p,
					"named by the catalog but missing");
				c.rebuild = 1;
			} else if (!cf_seen(&c, i) &&
				   verify_sst(&c, (const char *)fp.p,
					      NULL) != CF_OK) {
				for (size_t j = i; j < c.ncf; j++)
					if (cf_same(&c.cf[j], &c.cf[i]))
						c.cf[j].bad = 1;
				c.rebuild = 1;
			}
			buf_release(&fp);
		}
	}
	path_set(&c.path, "%s/data", dir);
	if (env_exists((const char *)c.path.p))
		env_list_dir((const char *)c.path.p, walk_tables, &c);
	check_wal(&c);
	if (repair && c.rebuild)
		rc = rebuild(&c);
	*problems = c.problems;
	if (ndebris)
		*ndebris = c.debris;
out:
	if (c.m)
		meta_close(c.m);
	for (size_t i = 0; i < c.nri; i++) {
		buf_release(&c.ri[i].start);
		buf_release(&c.ri[i].end);
		buf_release(&c.ri[i].fams);
	}
	free(c.ri);
	free(c.cf);
	for (size_t i = 0; i < k.nregs; i++) {
		buf_release(&k.regs[i].start);
		buf_release(&k.regs[i].end);
	}
	free(k.regs);
	free(k.tabs);
	buf_release(&c.path);
	buf_release(&p);
	env_close(lock);
	return rc;
}
