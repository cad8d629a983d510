/*
 * main.c: `cellfs [-f] [-o OPT,...] DATADIR MOUNTPOINT`.  Parses cellfs's
 * own options into struct cf_options, passes the rest to FUSE, opens the
 * data directory and serves it until unmounted or signalled (SIGTERM,
 * SIGINT, SIGHUP end the loop; the mount is then removed and the db
 * closed cleanly, exit status 0).  Under a service manager
 * ($NOTIFY_SOCKET, systemd's Type=notify) it says READY=1 once the mount
 * is up and the db open, and STOPPING=1 when the loop ends.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fs/notify.h"
#include "net/net.h"
#include "tsd/line.h"
#include "util/log.h"

struct config {
	char *datadir;
	int nonopts;
	char *flush_size, *split_size, *block_cache, *sync, *sync_ms;
	char *max_value, *wal, *wal_compression;
	char *tsd_http, *tsd_telnet;	/* ADDR:PORT of the servers */
	char *uid, *gid, *umask, *write_buffers, *tsd_recent;
	char *cache_timeout;
	char *special;		/* tsd_allow_specialchars=CHARS */
	char *cors;		/* tsd_cors_domains=LIST */
	int rdplus_always;	/* readdirplus=always (else auto) */
	int allow_delete;	/* tsd_allow_delete: delete queries over HTTP */
	int tsuid_tracking, realtime_ts, tsuid_incrementing; /* tsd meta */
	int realtime_uid;
	int net_trust;		/* tsd_net_trust */
	int fsname, subtype;	/* given by the user: not set by us */
	int shared;		/* allow_other or allow_root given */
};

enum { KEY_SHARED = 1 };

#define OPT(t, f) { t, offsetof(struct config, f), 0 }
static const struct fuse_opt cellfs_opts[] = {
	OPT("flush_size=%s", flush_size),
	OPT("split_size=%s", split_size),
	OPT("block_cache=%s", block_cache),
	OPT("sync=%s", sync),
	OPT("sync_ms=%s", sync_ms),
	OPT("max_value=%s", max_value),
	OPT("wal=%s", wal),
	OPT("wal_compression=%s", wal_compression),
	OPT("tsd_http=%s", tsd_http),
	OPT("tsd_telnet=%s", tsd_telnet),
	OPT("uid=%s", uid),
	OPT("gid=%s", gid),
	OPT("umask=%s", umask),
	OPT("write_buffers=%s", write_buffers),
	OPT("tsd_recent=%s", tsd_recent),
	OPT("cache_timeout=%s", cache_timeout),
	OPT("tsd_allow_specialchars=%s", special),
	OPT("tsd_cors_domains=%s", cors),
	FUSE_OPT_KEY("allow_other", KEY_SHARED),
	FUSE_OPT_KEY("allow_root", KEY_SHARED),
	{ "readdirplus=always", offsetof(struct config, rdplus_always), 1 },
	{ "readdirplus=auto", offsetof(struct config, rdplus_always), 0 },
	{ "tsd_allow_delete", offsetof(struct config, allow_delete), 1 },
	{ "tsd_tsuid_tracking", offsetof(struct config, tsuid_tracking), 1 },
	{ "tsd_realtime_ts", offsetof(struct config, realtime_ts), 1 },
	{ "tsd_tsuid_incrementing", offsetof(struct config,
					      tsuid_incrementing), 1 },
	{ "tsd_realtime_uid", offsetof(struct config, realtime_uid), 1 },
	{ "tsd_net_trust", offsetof(struct config, net_trust), 1 },
	FUSE_OPT_END
};

/* Options of mount(8) and fstab that mean nothing to a FUSE filesystem
 * (or that the kernel's FUSE cannot honour) and that mount.fuse3 passes
 * on: accepted and ignored, as mount(8) ignores them for filesystems
 * that do not know them.  FUSE itself takes rw, ro, suid, nosuid, dev,
 * nodev, exec, noexec, atime, noatime, sync, async, dirsync. */
static int mount_opt_ignored(const char *arg)
{
	static const char *const ignored[] = {
		"defaults", "auto", "noauto", "user", "nouser", "users",
		"owner", "group", "_netdev", "nofail", "relatime",
		"norelatime", "strictatime", "nostrictatime", "lazytime",
		"nolazytime", "diratime", "nodiratime", "iversion",
		"noiversion", "silent", "loud",
	};
	size_t i;

	if (!strncmp(arg, "x-", 2) || !strncmp(arg, "comment=", 8))
		return 1;
	for (i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		if (!strcmp(arg, ignored[i]))
			return 1;
	return 0;
}

static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct config *c = data;

	if (key == KEY_SHARED) {
		c->shared = 1;
		return 1;	/* FUSE's too */
	}
	if (key == FUSE_OPT_KEY_OPT) {
		if (mount_opt_ignored(arg))
			return 0;
		if (!strncmp(arg, "fsname=", 7))
			c->fsname = 1;
		if (!strncmp(arg, "subtype=", 8))
			c->subtype = 1;
		return 1;
	}
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	if (c->nonopts++ == 0) {
		c->datadir = strdup(arg);
		return 0;	/* ours; FUSE sees only the mountpoint */
	}
	return 1;
}

/* Names the mount as mount(8) and /proc/self/mountinfo show it: source
 * the data directory, type fuse.cellfs (unless the user said otherwise),
 * so that `mount -a` sees an fstab line's mount is there.  0 or -1. */
static int name_mount(const struct config *c, struct fuse_args *args)
{
	struct buf o = BUF_INIT;
	const char *p;
	int rc = 0;

	if (!c->subtype && fuse_opt_add_arg(args, "-osubtype=cellfs"))
		return -1;
	if (c->fsname)
		return 0;
	/* fuse_opt splits -o at commas: escape them (and backslashes) */
	rc = buf_printf(&o, "-ofsname=");
	for (p = c->datadir; !rc && *p; p++) {
		if (*p == ',' || *p == '\\')
			rc = buf_putc(&o, '\\');
		if (!rc)
			rc = buf_putc(&o, *p);
	}
	if (!rc)
		rc = buf_putc(&o, '\0');
	if (!rc && fuse_opt_add_arg(args, (const char *)o.p))
		rc = -1;
	buf_release(&o);
	return rc ? -1 : 0;
}

/* Parses BYTES with an optional K, M or G suffix (powers of 1024). */
static int parse_size(const char *name, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		goto bad;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "cellfs: bad value for %s: '%s'\n", name, s);
	return -1;
}

/* Parses a whole number of seconds up to max; no suffix. */
static int parse_seconds(const char *name, const char *s, unsigned max,
			 unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max) {
		fprintf(stderr, "cellfs: bad value for %s: '%s' (seconds, "
			"0 to %u)\n", name, s, max);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int make_options(const struct config *c, struct cf_options *o)
{
	uint64_t ms;

	cf_options_default(o);
	if (parse_size("flush_size", c->flush_size, &o->flush_size) ||
	    parse_size("split_size", c->split_size, &o->split_size) ||
	    parse_size("block_cache", c->block_cache, &o->block_cache) ||
	    parse_size("max_value", c->max_value, &o->max_value))
		return -1;
	if (c->sync_ms) {
		ms = 0;
		if (parse_size("sync_ms", c->sync_ms, &ms) || ms > 3600000)
			return -1;
		o->sync_ms = (unsigned)ms;
	}
	if (c->sync) {
		if (!strcmp(c->sync, "batch"))
			o->sync_mode = CF_SYNC_BATCH;
		else if (!strcmp(c->sync, "always"))
			o->sync_mode = CF_SYNC_ALWAYS;
		else if (!strcmp(c->sync, "none"))
			o->sync_mode = CF_SYNC_NONE;
		else {
			fprintf(stderr, "cellfs: sync must be batch, always "
				"or none, not '%s'\n", c->sync);
			return -1;
		}
	}
	if (c->wal) {
		if (!strcmp(c->wal, "mmap"))
			o->wal_write = 0;
		else if (!strcmp(c->wal, "write"))
			o->wal_write = 1;
		else {
			fprintf(stderr, "cellfs: wal must be mmap or write, "
				"not '%s'\n", c->wal);
			return -1;
		}
	}
	if (c->wal_compression) {
		if (!strcmp(c->wal_compression, "snappy"))
			o->wal_compression = 1;
		else if (!strcmp(c->wal_compression, "none"))
			o->wal_compression = 0;
		else {
			fprintf(stderr, "cellfs: wal_compression must be snappy "
				"or none, not '%s'\n", c->wal_compression);
			return -1;
		}
	}
	return 0;
}

/* Tells the service manager, if any, state; a failure is logged only. */
static void tell(const char *state)
{
	int err = fs_notify(state);

	if (err)
		cf_log(CF_LOG_ERROR, "NOTIFY_SOCKET %s: cannot send %s: %s",
		       getenv("NOTIFY_SOCKET"), state, strerror(err));
}

/* The server addresses are checked before mounting, so that a typo is
 * reported on the terminal. */
static int check_net(const struct config *c)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char why[160];

	if (c->tsd_http && net_addr_parse(c->tsd_http, &sa, &len, why,
					  sizeof why)) {
		fprintf(stderr, "cellfs: tsd_http: %s\n", why);
		return -1;
	}
	if (c->tsd_telnet && net_addr_parse(c->tsd_telnet, &sa, &len, why,
					    sizeof why)) {
		fprintf(stderr, "cellfs: tsd_telnet: %s\n", why);
		return -1;
	}
	return 0;
}

/* uid=, gid= (decimal) and umask= (octal) into *p. */
static int parse_ids(const struct config *c, struct fs_perm_opts *p)
{
	const char *name[3] = { "uid", "gid", "umask" };
	const char *val[3] = { c->uid, c->gid, c->umask };
	unsigned long v[3];
	char *end;

	p->uid = getuid();
	p->gid = getgid();
	p->umask = 022;
	p->net_trust = c->net_trust;
	for (int i = 0; i < 3; i++) {
		if (!val[i])
			continue;
		errno = 0;
		v[i] = strtoul(val[i], &end, i == 2 ? 8 : 10);
		if (errno || end == val[i] || *end || val[i][0] == '-' ||
		    v[i] > (i == 2 ? 0777ul : 0xFFFFFFFEul)) {
			fprintf(stderr, "cellfs: bad value for %s: '%s'\n",
				name[i], val[i]);
			return -1;
		}
	}
	if (val[0])
		p->uid = (uid_t)v[0];
	if (val[1])
		p->gid = (gid_t)v[1];
	if (val[2])
		p->umask = (mode_t)v[2];
	return 0;
}

static void usage(const char *prog)
{
	printf("usage: %s [-f] [-o OPT[,OPT...]] DATADIR MOUNTPOINT\n\n"
	       "cellfs options:\n"
	       "    -o flush_size=BYTES   memstore size that flushes a region\n"
	       "    -o split_size=BYTES   store size that splits a region\n"
	       "                          (a table's only region: 2 x flush_size,\n"
	       "                          if that is smaller)\n"
	       "    -o block_cache=BYTES  block cache capacity\n"
	       "    -o sync=batch|always|none  WAL sync policy\n"
	       "    -o sync_ms=MS         longest wait for fsync under batch\n"
	       "    -o max_value=BYTES    largest cell value\n"
	       "    -o wal=mmap|write     WAL records through a mapping of\n"
	       "                          the segment, or with write(2)\n"
	       "    -o wal_compression=snappy|none  WAL records compressed\n"
	       "                          (the default) or not\n"
	       "    -o readdirplus=auto|always  attributes with every listing\n"
	       "                          page, or as the kernel sees fit\n"
	       "    -o cache_timeout=SECONDS  how long the kernel keeps names\n"
	       "                          and attributes (default 10)\n"
	       "    -o tsd_http=[ADDR:]PORT    OpenTSDB's HTTP API (docs/api.md)\n"
	       "    -o tsd_telnet=[ADDR:]PORT  OpenTSDB's telnet put port\n"
	       "    -o tsd_allow_specialchars=CHARS  characters names may\n"
	       "                          have besides [A-Za-z0-9-_./] and\n"
	       "                          letters (',' written '\\,')\n"
	       "    -o tsd_cors_domains=LIST  origins the HTTP API allows\n"
	       "                          (CORS; '*' any; ',' written '\\,')\n"
	       "    -o tsd_allow_delete   the HTTP API serves delete queries\n"
	       "                          (DELETE /api/query; off: 400)\n"
	       "    -o tsd_tsuid_tracking  writes keep each series' last\n"
	       "                          write in tsdb-meta; with\n"
	       "    -o tsd_realtime_ts    its TSMeta made at the first write\n"
	       "    -o tsd_tsuid_incrementing  and its points counted\n"
	       "    -o tsd_realtime_uid   each new name gets its UIDMeta\n"
	       "    -o tsd_net_trust      the network ports let every client\n"
	       "                          read and write (else MNT/tsd's mode\n"
	       "                          and owner say, per local user)\n"
	       "    -o write_buffers=BYTES  memory of all files open for\n"
	       "                          writing together (default 1G)\n"
	       "    -o tsd_recent=BYTES   memory of the recent points of\n"
	       "                          MNT/tsd/ (default 256M; 0: none)\n"
	       "    -o uid=N,gid=N        owner of the tree (default: the\n"
	       "                          daemon's user)\n"
	       "    -o umask=OOO          mode bits taken away (default 022)\n"
	       "    -o allow_other        other users may use the mount; the\n"
	       "                          kernel then checks permissions\n"
	       "                          (default_permissions, always)\n\n",
	       prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts fo;
	struct fuse_loop_config lc;
	struct fuse_session *se = NULL;
	struct config c;
	struct cf_options o;
	struct fs_perm_opts po;
	uint64_t wbuf = FS_WRITE_BUFFERS_DEFAULT, recent = 0;
	unsigned cache_s = 10;
	cf_db *db = NULL;
	net_http *http = NULL;
	net_telnet *telnet = NULL;
	char *abs;
	int rc, ret = 1, mounted = 0, handlers = 0;

	memset(&c, 0, sizeof c);
	memset(&fo, 0, sizeof fo);
	if (fuse_opt_parse(&args, &c, cellfs_opts, opt_proc) == -1)
		goto out;
	if (fuse_parse_cmdline(&args, &fo) != 0)
		goto out;
	if (fo.show_help) {
		usage(argv[0]);
		ret = 0;
		goto out;
	}
	if (fo.show_version) {
		printf("cellfs 0.1, FUSE %s\n", fuse_pkgversion());
		ret = 0;
		goto out;
	}
	if (!c.datadir || !fo.mountpoint) {
		fprintf(stderr, "usage: %s [-f] [-o OPT,...] DATADIR "
			"MOUNTPOINT (--help for options)\n", argv[0]);
		goto out;
	}
	if (make_options(&c, &o) || check_net(&c) || parse_ids(&c, &po) ||
	    parse_size("write_buffers", c.write_buffers, &wbuf) ||
	    (c.tsd_recent &&
	     parse_size("tsd_recent", c.tsd_recent, &recent)) ||
	    parse_seconds("cache_timeout", c.cache_timeout, 86400, &cache_s))
		goto out;
	/* OpenTSDB's tsd.core.tag.allow_specialchars */
	if (c.special && tsd_name_allow(c.special)) {
		fprintf(stderr, "cellfs: bad value for tsd_allow_specialchars: "
			"'%s' (UTF-8, at most %d characters)\n", c.special,
			TSD_SPECIAL_MAX);
		goto out;
	}
	/* OpenTSDB's tsd.http.request.cors_domains */
	if (c.cors && net_http_set_cors(c.cors)) {
		fprintf(stderr, "cellfs: bad value for tsd_cors_domains: '%s' "
			"('*' alone, or at most 64 origins)\n", c.cors);
		goto out;
	}
	/* Other users only ever see the mount with the kernel checking
	 * their permissions against the modes and owners we give (SPEC 4,
	 * docs/usage.md "Who may do what"). */
	if (c.shared && fuse_opt_add_arg(&args, "-odefault_permissions"))
		goto out;
	if (mkdir(c.datadir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "cellfs: %s: %s\n", c.datadir,
			strerror(errno));
		goto out;
	}
	/* fuse_daemonize() changes to /: keep the directory we were given */
	abs = realpath(c.datadir, NULL);
	if (!abs) {
		fprintf(stderr, "cellfs: %s: %s\n", c.datadir,
			strerror(errno));
		goto out;
	}
	free(c.datadir);
	c.datadir = abs;
	if (name_mount(&c, &args))
		goto out;
	if (fo.foreground)
		cf_log_set_stderr(1);

	/* Open once before daemonizing so that a locked or damaged data
	 * directory is reported on the terminal; the real open follows the
	 * fork, since the engine's threads would not survive it. */
	rc = cf_db_open(c.datadir, &o, &db);
	if (rc) {
		fprintf(stderr, "cellfs: cannot open %s: %s\n", c.datadir,
			cf_strerror(rc));
		goto out;
	}
	cf_db_close(db);
	db = NULL;

	se = fuse_session_new(&args, &fs_ops, sizeof fs_ops, NULL);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out;
	handlers = 1;
	if (fuse_session_mount(se, fo.mountpoint) != 0)
		goto out;
	mounted = 1;
	if (fuse_daemonize(fo.foreground) != 0)
		goto out;
	rc = cf_db_open(c.datadir, &o, &db);
	if (rc) {
		cf_log(CF_LOG_ERROR, "cannot open %s: %s", c.datadir,
		       cf_strerror(rc));
		goto out;
	}
	rc = fs_perm_setup(db, &po);
	if (rc) {
		cf_log(CF_LOG_ERROR, "cannot read table access of %s: %s",
		       c.datadir, cf_strerror(rc));
		goto out;
	}
	fs_budget_setup(wbuf);
	if (c.tsd_recent)
		fs_tsd_set_recent(recent);
	fs_tsd_set_meta(c.tsuid_tracking, c.realtime_ts,
			c.tsuid_incrementing, c.realtime_uid);
	fs_setup(db, c.datadir, o.max_value);
	fs_set_session(se);
	fs_set_readdirplus(c.rdplus_always);
	fs_set_cache_timeout(cache_s);
	if ((c.tsd_http && net_http_start(c.tsd_http, fs_tsd_get,
			(c.allow_delete ? NET_ALLOW_DELETE : 0) |
			(c.tsuid_tracking ? NET_TSUID_TRACKING : 0) |
			(c.realtime_ts ? NET_REALTIME_TS : 0) |
			(c.tsuid_incrementing ? NET_TSUID_INCREMENTING : 0) |
			(c.realtime_uid ? NET_REALTIME_UID : 0),
			fs_perm_tsd_net, &http)) ||
	    (c.tsd_telnet &&
	     net_telnet_start(c.tsd_telnet, fs_tsd_get, fs_perm_tsd_net,
			      &telnet)))
		goto out;
	cf_log(CF_LOG_INFO, "mounted %s at %s", c.datadir, fo.mountpoint);
	tell("READY=1");
	if (fo.singlethread) {
		ret = fuse_session_loop(se) != 0;
	} else {
		lc.clone_fd = fo.clone_fd;
		lc.max_idle_threads = fo.max_idle_threads == UINT_MAX ?
				      10 : fo.max_idle_threads;
		ret = fuse_session_loop_mt(se, &lc) != 0;
	}
	/* A signal ends the loop with its number; that is a clean exit. */
	ret = 0;
	tell("STOPPING=1");
out:
	net_http_stop(http);	/* before the tsd layer they use closes */
	net_telnet_stop(telnet);
	fs_set_session(NULL);	/* no invalidation after this */
	if (mounted)
		fuse_session_unmount(se);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se)
		fuse_session_destroy(se);
	if (db) {
		fs_teardown();	/* the tsd layer first: it uses db */
		fs_perm_teardown();
		cf_db_close(db);
	}
	cf_log_release();
	free(fo.mountpoint);
	free(c.datadir);
	free(c.flush_size);
	free(c.split_size);
	free(c.block_cache);
	free(c.sync);
	free(c.sync_ms);
	free(c.max_value);
	free(c.wal);
	free(c.wal_compression);
	free(c.tsd_http);
	free(c.cors);
	free(c.tsd_telnet);
	free(c.uid);
	free(c.gid);
	free(c.umask);
	free(c.write_buffers);
	free(c.tsd_recent);
	free(c.cache_timeout);
	free(c.special);
	fuse_opt_free_args(&args);
	return ret;
}
