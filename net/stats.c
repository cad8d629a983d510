/*
 * stats.c: the time-series layer's counters as OpenTSDB's StatsRpc names
 * them, for both front doors: the telnet `stats` command (net/telnet.c)
 * and /api/stats (net/api_meta.c), so that the two list the same
 * counters under the same names and tags.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/err.h"

void net_hostname(char *buf, size_t n)
{
	if (gethostname(buf, n))
		snprintf(buf, n, "localhost");
	buf[n - 1] = '\0';
}

void net_tsd_stats(net_tsd_fn get, struct net_stat out[NET_TSD_STATS])
{
	static const struct { const char *metric, *type; } names[] = {
		{ "tsd.datapoints.added", "all" },
		{ "tsd.datapoints.rejected", NULL },
		{ "tsd.uid.assigned", NULL },
		{ "tsd.compaction.count", NULL },
		{ "tsd.compaction.pending", NULL },
		{ "tsd.query.count", NULL },
		{ "tsd.query.points", NULL },
	};
	struct tsd_stats st;
	tsd *t;

	memset(&st, 0, sizeof st);
	if (get(0, &t) == CF_OK)	/* no tsd table yet: all 0 */
		tsd_stats(t, &st);
	out[0].value = st.points;
	out[1].value = st.lines_rejected;
	out[2].value = st.uids_assigned;
	out[3].value = st.rows_compacted;
	out[4].value = st.compact_pending;
	out[5].value = st.queries;
	out[6].value = st.query_points;
	for (size_t i = 0; i < NET_TSD_STATS; i++) {
		out[i].metric = names[i].metric;
		out[i].type = names[i].type;
	}
}
