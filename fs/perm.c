/*
 * perm.c: who may do what through the mount (docs/usage.md, "Who may
 * do what").  The kernel checks permissions (default_permissions, which
 * main.c adds to every allow_other or allow_root mount) against the
 * attributes given here:
 *  - everything is owned by the mount's owner (the daemon's user, or the
 *    uid=/gid= options) with 0777/0666 less umask=, except
 *  - a table, and tsd/, may carry its own mode and owner (chmod, chown
 *    of its directory; kept in the catalog, cf_db_access_set): its
 *    directories take the mode, its data files (cells, staged files,
 *    .batch, tsd/put ...) the mode without x bits;
 *  - control files (.ctl, .schema) are writable by their owner only,
 *    status files (.stats, .log, .regions) by nobody.
 *
 * The access rows are read once at setup and every change passes through
 * fs_perm_set, so the copy here is the truth.  Memory: one entry per
 * table with an access set.  pmu is a leaf lock.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "util/log.h"

struct entry {
	char name[CF_TABLE_MAX + 1];
	struct cf_access a;
};

static pthread_mutex_t pmu = PTHREAD_MUTEX_INITIALIZER;
static struct entry *ents;	/* under pmu */
static size_t nents, cap;
static struct fs_perm_opts opts;
static cf_db *db;
/* top-level names the daemon serves that are not tables */
static const char *const others[] = { "tsd", NULL };

/* With pmu held: name's entry, or NULL. */
static struct entry *find(const char *name)
{
	for (size_t i = 0; i < nents; i++)
		if (!strcmp(ents[i].name, name))
			return &ents[i];
	return NULL;
}

/* With pmu held: stores a as name's access; CF_* code. */
static int store(const char *name, const struct cf_access *a)
{
	struct entry *e = find(name), *ne;

	if (!e) {
		if (nents == cap) {
			size_t nc = cap ? 2 * cap : 8;
			if (!(ne = realloc(ents, nc * sizeof *ne)))
				return CF_ENOMEM;
			ents = ne;
			cap = nc;
		}
		e = &ents[nents++];
		snprintf(e->name, sizeof e->name, "%s", name);
	}
	e->a = *a;
	return CF_OK;
}

static int load_one(const char *name, const struct cf_access *a, void *arg)
{
	(void)arg;
	return strlen(name) > CF_TABLE_MAX ? CF_OK : store(name, a);
}

int fs_perm_setup(cf_db *d, const struct fs_perm_opts *o)
{
	int rc;

	db = d;
	opts = *o;
	pthread_mutex_lock(&pmu);
	rc = cf_db_access_list(db, load_one, NULL);
	pthread_mutex_unlock(&pmu);
	return rc;
}

void fs_perm_teardown(void)
{
	pthread_mutex_lock(&pmu);
	free(ents);
	ents = NULL;
	nents = cap = 0;
	pthread_mutex_unlock(&pmu);
}

/* top's access: what was set on it, else the mount's defaults. */
static void access_of(const char *top, struct cf_access *a)
{
	struct entry *e;

	a->mode = 0777 & ~opts.umask;
	a->uid = opts.uid;
	a->gid = opts.gid;
	if (!*top)
		return;
	pthread_mutex_lock(&pmu);
	e = find(top);
	if (e)
		*a = e->a;
	pthread_mutex_unlock(&pmu);
}

void fs_perm_attrs(const char *top, enum fs_perm_class c, struct stat *st)
{
	struct cf_access a;
	mode_t m;

	access_of(c == FP_DATA_DIR || c == FP_DATA_FILE || c == FP_CTL ||
		  c == FP_STATUS ? top : "", &a);
	switch (c) {
	case FP_DATA_DIR:
		m = S_IFDIR | a.mode;
		break;
	case FP_DATA_FILE:
		m = S_IFREG | (a.mode & 0666);
		break;
	case FP_CTL:
		m = S_IFREG | (0644 & ~opts.umask);
		break;
	case FP_STATUS:
	default:
		m = S_IFREG | (0444 & ~opts.umask);
		break;
	}
	st->st_mode = m;
	st->st_uid = a.uid;
	st->st_gid = a.gid;
}

int fs_perm_set(const char *top, const mode_t *mode, const uid_t *uid,
		const gid_t *gid, const char **why)
{
	struct cf_access a;
	int rc;

	access_of(top, &a);
	if (mode)
		a.mode = *mode & 07777;
	if (geteuid() != 0 && ((uid && *uid != a.uid) ||
			       (gid && *gid != a.gid))) {
		/* the kernel let it through: a mount without
		 * default_permissions by its only user */
		*why = "only a daemon run by root can give a table away";
		return EPERM;
	}
	if (uid)
		a.uid = *uid;
	if (gid)
		a.gid = *gid;
	rc = cf_db_access_set(db, top, &a, others);
	if (!rc) {
		pthread_mutex_lock(&pmu);
		rc = store(top, &a);
		pthread_mutex_unlock(&pmu);
	}
	if (rc) {
		*why = cf_strerror(rc);
		return fs_errno(rc);
	}
	cf_log(CF_LOG_INFO, "%s: mode %04o, owner %u:%u", top,
	       (unsigned)a.mode, (unsigned)a.uid, (unsigned)a.gid);
	return 0;
}

void fs_perm_forget(const char *top)
{
	struct entry *e;

	pthread_mutex_lock(&pmu);
	e = find(top);
	if (e)
		*e = ents[--nents];
	pthread_mutex_unlock(&pmu);
}

/* Whether uid is in group gid (its primary group or a supplementary
 * one, as the password and group files say). */
static int in_group(uid_t uid, gid_t gid)
{
	struct passwd pw, *res = NULL;
	gid_t groups[256];
	int ng = 256, in = 0;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) || !res)
		return 0;
	if (pw.pw_gid == gid)
		return 1;
	if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &ng) < 0)
		ng = 256;	/* more than that: the first 256 */
	for (int i = 0; i < ng && !in; i++)
		in = groups[i] == gid;
	return in;
}

int fs_perm_tsd_net(int local, uid_t uid, int write, char *why, size_t n)
{
	struct cf_access a;
	mode_t bits;

	if (opts.net_trust || (local && uid == 0))
		return 0;
	access_of("tsd", &a);
	if (!local)
		bits = a.mode & 07;
	else if (uid == a.uid)
		bits = (a.mode >> 6) & 07;
	else if (in_group(uid, a.gid))
		bits = (a.mode >> 3) & 07;
	else
		bits = a.mode & 07;
	if (bits & (write ? 02 : 04))
		return 0;
	if (local)
		snprintf(why, n, "uid %u may not %s MNT/tsd (mode %04o, owner "
			 "%u:%u)", (unsigned)uid, write ? "write" : "read",
			 (unsigned)a.mode, (unsigned)a.uid, (unsigned)a.gid);
	else
		snprintf(why, n, "a client of another host may not %s MNT/tsd "
			 "(mode %04o; -o tsd_net_trust lets it)",
			 write ? "write" : "read", (unsigned)a.mode);
	return EACCES;
}
