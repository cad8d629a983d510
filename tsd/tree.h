/*
 * tree.h: OpenTSDB's trees (src/tree/: Tree, TreeRule, TreeBuilder,
 * Branch, Leaf; TreeRpc's /api/tree endpoints; docs/api.md): tree
 * definitions and their rules, the branches and leaves a series' meta
 * data makes through a tree's rules, and the series that collided or
 * matched no rule.  Kept where OpenTSDB keeps them, in table
 * TSD_TABLE_TREE, family "t":
 *
 *   row ID (2 bytes)            "tree": the tree's storage JSON;
 *                               "tree_rule:LEVEL:ORDER": a rule's JSON
 *   row ID HASH...              "branch": {"path":{..},"displayName":..};
 *   (4 bytes a display name)    "leaf:" HASH: {"displayName":..,"tsuid":..}
 *   row ID 0x01                 "tree_collision:" TSUID: the TSUID kept
 *   row ID 0x02                 "tree_not_matched:" TSUID: the failed rules
 *
 * HASH is Java's String.hashCode of the display name (UTF-16), big
 * endian.  Every function below answers JSON into out (appended) in
 * Jackson's field order and fills err->reason with OpenTSDB's message.
 * Errors: CF_EINVAL (bad input: HTTP 400), CF_ENOTFOUND (404),
 * CF_EEXIST (no change: 304), CF_EBUSY (other writers kept changing it),
 * engine errors.
 */
#ifndef CF_TSD_TREE_H
#define CF_TSD_TREE_H

#include <stddef.h>

#include "tsd/tsd.h"
#include "util/buf.h"

#define TSD_TABLE_TREE "tsdb-tree"

/* The tree id (1..65535) as JSON, its rules under "rules"; id 0: the
 * array of every tree.  CF_ENOTFOUND (`Unable to locate tree: N`),
 * CF_EINVAL (`Invalid Tree ID`). */
int tsd_tree_get(tsd *t, int id, struct buf *out, struct tsd_error *err);
/* Tree.storeTree / createNewTree of JSON object body (a Tree: treeId,
 * name, description, notes, strictMatch, enabled, storeFailures): with a
 * treeId, the fields the body sets merged into the stored tree
 * (overwrite: all replaced); without, a new tree (a name required) with
 * the next ID after the greatest stored.  out gets the stored tree. */
int tsd_tree_sync(tsd *t, const char *body, size_t len, int overwrite,
		  struct buf *out, struct tsd_error *err);
/* Tree.deleteTree: the branches, leaves, collisions and not-matched of
 * tree id go; with definition, its definition and rules too.
 * CF_ENOTFOUND when the tree is not stored. */
int tsd_tree_delete(tsd *t, int id, int definition, struct tsd_error *err);

/* The rule LEVEL:ORDER of tree id.  CF_ENOTFOUND (`Unable to locate
 * tree: N`, `Unable to locate rule: [ID:LEVEL:ORDER:TYPE]`). */
int tsd_tree_rule_get(tsd *t, int id, int level, int order, struct buf *out,
		      struct tsd_error *err);
/* TreeRule.syncToStorage of JSON object body (a TreeRule: treeId,
 * level, order, type, field, customField, regex, separator,
 * description, notes, regexGroupIdx, displayFormat); out (may be NULL)
 * gets the stored rule.  CF_EINVAL for the validation messages
 * (`Missing rule type`, `Missing field name required for TAGK rule`,
 * ...), CF_EEXIST (`No changes detected in the rule`). */
int tsd_tree_rule_sync(tsd *t, const char *body, size_t len, int overwrite,
		       struct buf *out, struct tsd_error *err);
/* Deletes rule LEVEL:ORDER of tree id (CF_ENOTFOUND when absent). */
int tsd_tree_rule_delete(tsd *t, int id, int level, int order,
			 struct tsd_error *err);
/* /api/tree/rules: body a JSON array of rules of one tree, each synced
 * (overwrite: the tree's rules are deleted first); body NULL and del:
 * every rule of tree id deleted.  CF_EINVAL (`Missing tree rules`, `All
 * rules must belong to the same tree`). */
int tsd_tree_rules(tsd *t, int id, const char *body, size_t len,
		   int overwrite, int del, struct tsd_error *err);

/* Branch.fetchBranch: the branch of hex id branch (NULL or "": the root
 * of tree id) with its child branches and leaves. */
int tsd_tree_branch(tsd *t, int id, const char *branch, struct buf *out,
		    struct tsd_error *err);
/* The collisions (collisions 1) or not-matched series of tree id as a
 * JSON object TSUID -> text; tsuids (NULL: all) a comma separated
 * list. */
int tsd_tree_failures(tsd *t, int id, const char *tsuids, int collisions,
		      struct buf *out, struct tsd_error *err);
/* How the tree code reads a series' meta: tsd_tsmeta_get (passed in by
 * its callers, so tree code does not call back into tsmeta.c, which
 * calls it). */
typedef int tsd_tree_meta_fn(tsd *t, const char *tsuid, struct buf *out,
			     struct tsd_error *err);
/* /api/tree/test: each series of the comma separated hex TSUIDs (their
 * metas read by meta) run through tree id's rules without storing
 * anything: {"TSUID":{"branch":ROOT,"meta":TSMETA,"messages":[..]},..}.
 * CF_EINVAL (`Missing or empty TSUID list`). */
int tsd_tree_test(tsd *t, int id, const char *tsuids, tsd_tree_meta_fn *meta,
		  struct buf *out, struct tsd_error *err);
/* TreeBuilder.processAllTrees: the series tsuid[0..n) (whose TSMeta was
 * just created, read by meta) run through every enabled tree and
 * stored.  Failures are logged, not returned. */
void tsd_tree_process(tsd *t, const unsigned char *tsuid, size_t n,
		      tsd_tree_meta_fn *meta);

/* The names of MNT/tsd/tree/, each a query string ("%XX" decoded):
 * "treeid=N" the tree (tsd_tree_get), "treeid=N&level=L&order=O" a
 * rule, "branch=HEX" a branch (the root of tree N: its 4 hex digits).
 * t may be NULL (nothing written yet: CF_ENOTFOUND).  CF_EINVAL for an
 * unknown parameter or a bad number, and the errors of those. */
int tsd_tree_qs(tsd *t, const char *qs, size_t len, struct buf *out,
		struct tsd_error *err);

/* Java's String.hashCode of UTF-8 text s[0..n) (invalid bytes count as
 * themselves). */
int32_t tsd_tree_hash(const char *s, size_t n);

/* The builder alone (TreeBuilder.processRuleset), for tests: the names
 * of the path of meta (the API's TSMeta JSON) through the rules of tree
 * JSON tree (as tsd_tree_get answers it), the last the leaf's, into
 * names (a JSON array, the caller's); *matched 0 when a level matched no
 * rule (strict trees refuse the series).  CF_EINVAL on bad JSON. */
int tsd_tree_build(const char *tree, const char *meta, char **names,
		   int *matched);

#endif
