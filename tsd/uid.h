/*
 * uid.h: OpenTSDB's UniqueId on table tsdb-uid (docs/tsd_format.md).
 *
 *   forward row  NAME        id:KIND   = UID (3 bytes)
 *   reverse row  UID         name:KIND = NAME
 *   counter row  "\0"        id:KIND   = last UID (8 bytes, big-endian)
 *
 * KIND is the qualifier "metrics", "tagk" or "tagv".  Assignment follows
 * OpenTSDB: the counter is incremented atomically, the reverse mapping is
 * written first, then the forward mapping with CheckAndPut (expect
 * absent), so racing writers end up with one UID and a loser reads the
 * winner's (its own reverse row stays behind, unreferenced: a wasted
 * UID, as in OpenTSDB).  Mappings change only by a rename, so they are
 * cached in memory in both directions, and a rename forgets the names
 * and the UID it changed.
 *
 * Thread safe: the caches are under one mutex (a leaf lock: no engine
 * call is made while holding it); creations in this process are
 * serialized by a second mutex taken around the engine calls.
 */
#ifndef CF_TSD_UID_H
#define CF_TSD_UID_H

#include <stddef.h>
#include <stdint.h>

#include "engine/cellfs.h"
#include "tsd/tsd.h"
#include "util/buf.h"

struct tsd_uids;

/* The qualifier of kind: "metrics", "tagk", "tagv". */
const char *tsd_uid_kind_name(enum tsd_kind kind);

int tsd_uids_new(struct tsd_uids **out);
void tsd_uids_free(struct tsd_uids *u);
/* Forgets every cached mapping (after tsdb-uid was recreated). */
void tsd_uids_clear(struct tsd_uids *u);
/* Grows whenever a mapping of a name to a UID may have changed (a rename,
 * a clear): what remembers mappings outside the caches (a writer's memo
 * of its lines' series) forgets them when it grows. */
uint64_t tsd_uids_epoch(struct tsd_uids *u);
/* Called after each UID this process assigns, outside the caches'
 * locks, with the table it was assigned in (NULL fn: nothing). */
typedef void tsd_uid_assigned_fn(void *arg, cf_table *uidt,
				 enum tsd_kind kind, uint32_t uid);
void tsd_uids_on_assign(struct tsd_uids *u, tsd_uid_assigned_fn *fn,
			void *arg);

/* UIDs assigned by this process so far. */
uint64_t tsd_uids_assigned(struct tsd_uids *u);

/* The UID of name[0..len).  CF_ENOTFOUND; CF_ECORRUPT when the stored
 * value is not 3 bytes; engine errors. */
int tsd_uid_lookup(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		   const char *name, size_t len, uint32_t *uid);

/* The UID of name[0..len), assigned when missing (OpenTSDB's
 * getOrCreateId).  CF_ERANGE when the kind's 3-byte space is exhausted;
 * engine errors. */
int tsd_uid_assign(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		   const char *name, size_t len, uint32_t *uid);

/* Renames old[0..olen) to name[0..len) (OpenTSDB's UniqueId.rename): the
 * UID (*uid) keeps its number; its reverse row names the new name, a
 * forward row of the new name is written (CheckAndPut, expect absent),
 * the old name's forward row deleted.  CF_ENOTFOUND: no old name;
 * CF_EEXIST: the new name has another UID (*uid that UID); engine
 * errors.  A rename a crash stopped after the forward row is finished
 * by the same rename made again. */
int tsd_uid_rename(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		   const char *old, size_t olen, const char *name, size_t len,
		   uint32_t *uid);

/* One name of tsd_uid_assign_many(): kind and name[0..len) in, uid
 * out. */
struct tsd_uid_req {
	const char *name;
	size_t len;
	enum tsd_kind kind;
	uint32_t uid;
};

/* tsd_uid_assign() of each of req[0..n), in order, with the cache's lock
 * taken once for all of them that are cached (the put path resolves a
 * write's names this way).  Stops at the first failure: returns its
 * error (those of tsd_uid_assign()) with *failed its index; the requests
 * before it are resolved. */
int tsd_uid_assign_many(struct tsd_uids *u, cf_table *uidt,
			struct tsd_uid_req *req, size_t n, size_t *failed);

/* Appends the name of uid to out.  CF_ENOTFOUND; engine errors. */
int tsd_uid_name(struct tsd_uids *u, cf_table *uidt, enum tsd_kind kind,
		 uint32_t uid, struct buf *out);

/* The suggest scan of tsd.h's tsd_names(). */
int tsd_uid_list(cf_table *uidt, enum tsd_kind kind, const char *prefix,
		 size_t max, char ***names, size_t *n);

#endif
