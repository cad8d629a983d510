/*
 * budget.c: the memory that files open for writing hold, together, at
 * most a limit (-o write_buffers=BYTES): the values written to cells,
 * staged files and .schema before their close, and the unfinished line
 * of each .batch or .ctl writer.  Without it, 50 writers of a cell near
 * max_value would hold 50 values (docs/usage.md, "Bounds").  Charged by
 * buffer capacity before a buffer grows (fs/file.c, fileh_hold()), given back
 * when the file is released.  Lock-free: one atomic counter.
 */
#include "fs/fs.h"
#include "util/err.h"

static uint64_t limit = FS_WRITE_BUFFERS_DEFAULT;
static uint64_t held;		/* atomic */
static uint64_t refused;	/* atomic */

void fs_budget_setup(uint64_t lim)
{
	limit = lim;
}

int fs_budget_take(uint64_t n)
{
	uint64_t cur = __atomic_load_n(&held, __ATOMIC_RELAXED);

	do {
		if (n > limit || cur > limit - n) {
			__atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
			return CF_ENOSPC;
		}
	} while (!__atomic_compare_exchange_n(&held, &cur, cur + n, 1,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return CF_OK;
}

void fs_budget_give(uint64_t n)
{
	__atomic_fetch_sub(&held, n, __ATOMIC_RELAXED);
}

void fs_budget_stats(uint64_t *h, uint64_t *lim, uint64_t *r)
{
	*h = __atomic_load_n(&held, __ATOMIC_RELAXED);
	*lim = limit;
	*r = __atomic_load_n(&refused, __ATOMIC_RELAXED);
}
