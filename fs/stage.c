/*
 * stage.c: staged files.  A name starting with '.' in a table or row
 * directory (rsync's and editors' temporary files) is held in memory,
 * not in the engine, until it is renamed onto a cell or .schema
 * (fs/rename.c) or removed.  Owns the list of them and stage_bytes, their
 * total, which STAGE_LIMIT bounds (file_flush refuses past it).
 *
 * Locks: the list, every staged file's data and stage_bytes are under
 * fs_mu.
 */
#include <stdlib.h>
#include <string.h>

#include "fs/internal.h"

static struct stage *stages;
size_t stage_bytes;

/* With fs_mu held: the staged file n names, or the slot to add it. */
struct stage **stage_find(const struct node *n)
{
	struct stage **pp, *s;
	for (pp = &stages; (s = *pp); pp = &s->next)
		if (s->in_row == n->in_row && !strcmp(s->table, n->table) &&
		    !strcmp(s->name, n->name) && s->row.len == n->key.len &&
		    (!n->key.len || !memcmp(s->row.p, n->key.p, n->key.len)))
			return pp;
	return pp;
}

void stage_free(struct stage *s)
{
	stage_bytes -= s->data.len;
	buf_release(&s->data);
	buf_release(&s->row);
	free(s->name);
	free(s);
}

/* Frees every staged file (fs_teardown). */
void stage_teardown(void)
{
	struct stage *s;

	while ((s = stages)) {
		stages = s->next;
		stage_free(s);
	}
}
