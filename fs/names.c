/*
 * names.c: what a name means.  resolve() turns a name under a directory
 * node into the meaning of the child (SPEC section 3: table, region,
 * row, cell F:Q[@TS], a control file, a staged .NAME, tsd/ and the query
 * names of fs/cellq.c) without asking the engine whether it exists;
 * lookup_node interns it and pins it for the request.  Also a node's type
 * and permission bits (node_perm, through fs/perm.c).
 *
 * Promises: the same (parent, name) always means the same thing (a node
 * found in the table is the answer, without parsing again); a name is at
 * most 255 bytes.  Locks: lookup_node and node_release take fs_mu; the
 * others need none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"
#include "util/escape.h"

/* n's type, permission bits and owner into st (fs/perm.c). */
void node_perm(const struct node *n, struct stat *st)
{
	enum fs_perm_class c;

	switch (n->kind) {
	case K_ROOT_CTL: case K_TCTL: case K_SCHEMA:
		c = FP_CTL;
		break;
	case K_ROOT_STATS: case K_ROOT_LOG: case K_TSTATS: case K_REGIONS:
		c = FP_STATUS;
		break;
	default:
		c = node_is_dir(n) ? FP_DATA_DIR : FP_DATA_FILE;
		break;
	}
	fs_perm_attrs(n->kind == K_TSD ? "tsd" : n->table, c, st);
}

int node_is_dir(const struct node *n)
{
	enum kind k = n->kind;

	if (k == K_TSD)
		return fs_tsd_is_dir(n->tk);
	if (k == K_HQ)
		return n->hk == FQ_SCANS;
	return k == K_ROOT || k == K_TABLE || k == K_REGION ||
	       k == K_PREFIXES || k == K_PREFIX || k == K_ROW ||
	       k == K_VERSIONS;
}

/* Parses "FAM:QUAL[@TS]" into n; name must live as long as n (it is
 * n->name).  CF_EINVAL when malformed. */
static int parse_cell(const char *name, struct node *n)
{
	const char *colon = strchr(name, ':'), *at, *end;
	char *e;
	long long ts;

	if (!colon || !cf_family_name_valid(name, (size_t)(colon - name)))
		return CF_EINVAL;
	n->famlen = (size_t)(colon - name);
	n->fam = name;
	at = strchr(colon + 1, '@');
	end = at ? at : colon + strlen(colon);
	n->ts = CF_TS_NOW;
	if (at) {
		int q = fs_hq_cell_kind(at + 1, &n->hk);
		if (q == 1)
			n->kind = K_HQ;	/* a query or counter name */
		else if (q)
			return CF_EINVAL;
	}
	if (at && n->kind != K_HQ) {
		if (at[1] < '0' || at[1] > '9')
			return CF_EINVAL;
		errno = 0;
		ts = strtoll(at + 1, &e, 10);
		if (errno || *e || ts < 0 || ts == INT64_MAX)
			return CF_EINVAL;
		n->ts = ts;
	}
	return cf_unescape(colon + 1, (size_t)(end - colon - 1), &n->qual);
}

/* Fills tmp with the meaning of name under parent, existence aside.
 * Returns 0 or an errno; *why says what was wrong. */
static int resolve(struct node *parent, const char *name, struct node *tmp,
		   const char **why)
{
	int rc;

	memset(tmp, 0, sizeof *tmp);
	tmp->parent = parent;
	if (strlen(name) > 255) {
		/* the kernel lets FUSE names reach 1024 bytes */
		count(&fs_counts.names_too_long);
		*why = "name longer than 255 bytes";
		return ENAMETOOLONG;
	}
	tmp->name = strdup(name);
	if (!tmp->name)
		return ENOMEM;
	tmp->table = parent->table;
	*why = "no such file";
	switch (parent->kind) {
	case K_ROOT:
		if (!strcmp(name, ".ctl"))
			tmp->kind = K_ROOT_CTL;
		else if (!strcmp(name, ".stats"))
			tmp->kind = K_ROOT_STATS;
		else if (!strcmp(name, ".log"))
			tmp->kind = K_ROOT_LOG;
		else if (!strcmp(name, "tsd")) {
			tmp->kind = K_TSD;
			tmp->tk = FT_DIR;
		} else if (cf_table_name_valid(name)) {
			tmp->kind = K_TABLE;
			tmp->table = tmp->name;
		} else {
			*why = "not a valid table name";
			return name[0] == '.' ? ENOENT : EINVAL;
		}
		return 0;
	case K_TABLE:
		if (!strcmp(name, ".schema"))
			tmp->kind = K_SCHEMA;
		else if (!strcmp(name, ".ctl"))
			tmp->kind = K_TCTL;
		else if (!strcmp(name, ".stats"))
			tmp->kind = K_TSTATS;
		else if (!strcmp(name, ".regions"))
			tmp->kind = K_REGIONS;
		else if (!strcmp(name, ".batch"))
			tmp->kind = K_BATCH;
		else if (!strcmp(name, ".prefix"))
			tmp->kind = K_PREFIXES;
		else if (!strcmp(name, ".scan")) {
			tmp->kind = K_HQ;
			tmp->hk = FQ_SCANS;
		} else if (name[0] == '.')
			tmp->kind = K_STAGE;
		else if (name[0] == '@') {
			tmp->kind = K_REGION;
			rc = cf_unescape(name + 1, strlen(name + 1), &tmp->key);
			if (rc) {
				*why = "malformed escape in region name";
				return EINVAL;
			}
		} else
			goto row;
		return 0;
	case K_TSD:
		tmp->kind = K_TSD;
		return fs_tsd_resolve(parent->tk, name, &tmp->tk, &tmp->key,
				      why);
	case K_HQ: {
		static __thread char qwhy[160];
		if (parent->hk != FQ_SCANS) {
			*why = "not a directory";
			return ENOTDIR;
		}
		tmp->kind = K_HQ;
		tmp->hk = FQ_SCAN;
		*why = qwhy;
		return fs_hq_scan_check(name, qwhy, sizeof qwhy);
	}
	case K_PREFIXES:
		tmp->kind = K_PREFIX;
		if (cf_unescape(name, strlen(name), &tmp->key)) {
			*why = "malformed escape in prefix";
			return EINVAL;
		}
		return 0;
	case K_REGION:
	case K_PREFIX:
	row:
		tmp->kind = K_ROW;
		buf_reset(&tmp->key);
		if (cf_unescape(name, strlen(name), &tmp->key)) {
			*why = "malformed escape in row name";
			return EINVAL;
		}
		return 0;
	case K_ROW:
	case K_VERSIONS:
		if (buf_append(&tmp->key, parent->key.p, parent->key.len))
			return ENOMEM;
		if (parent->kind == K_ROW && !strcmp(name, ".versions")) {
			tmp->kind = K_VERSIONS;
			return 0;
		}
		if (parent->kind == K_ROW && name[0] == '.') {
			tmp->kind = K_STAGE;
			tmp->in_row = 1;
			return 0;
		}
		tmp->kind = K_CELL;
		if (parse_cell(tmp->name, tmp)) {
			*why = "not a cell name FAM:QUAL[@TS], "
			       "FAM:QUAL@[T1],[T2][,v=N], FAM:QUAL@v=N or "
			       "FAM:QUAL@counter";
			return EINVAL;
		}
		return 0;
	default:
		*why = "not a directory";
		return ENOTDIR;
	}
}

/* Resolves and interns name under parent; 0 or errno (logged by caller). */
int lookup_node(fuse_ino_t parent, const char *name, struct node **out,
		const char **why)
{
	struct node tmp, *p = node_of(parent), *n;
	uint64_t h = node_hname(p, name);
	int err;

	/* A name with a node already (unlink, rmdir, open of a name the
	 * kernel knows): a node's meaning follows from its parent and name
	 * alone, so the node is the answer, without parsing the name again
	 * (three allocations and frees fewer). */
	pthread_mutex_lock(&fs_mu);
	for (n = node_hcap ? node_htab[node_hslot(h, node_hcap)] : NULL; n;
	     n = n->hnext)
		if (n->hash == h && n->parent == p && !strcmp(n->name, name))
			break;
	if (n)
		n->nopen++;	/* pinned until node_release */
	pthread_mutex_unlock(&fs_mu);
	if (n) {
		*out = n;
		return 0;
	}
	err = resolve(p, name, &tmp, why);
	if (err) {
		buf_release(&tmp.key);
		buf_release(&tmp.qual);
		free(tmp.name);
		return err;
	}
	pthread_mutex_lock(&fs_mu);
	n = node_intern(&tmp);
	if (n)
		n->nopen++;	/* pinned until node_release */
	pthread_mutex_unlock(&fs_mu);
	if (!n)
		return ENOMEM;
	*out = n;
	return 0;
}

/* Drops the pin lookup_node took. */
void node_release(struct node *n)
{
	pthread_mutex_lock(&fs_mu);
	n->nopen--;
	node_unref(n);
	pthread_mutex_unlock(&fs_mu);
}
