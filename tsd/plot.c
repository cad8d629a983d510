/*
 * plot.c: query graphs drawn by gnuplot, as OpenTSDB's GraphHandler does.
 *
 * Each call works in a fresh directory under $TMPDIR (or /tmp): one data
 * file per series ("SECONDS VALUE" lines), a gnuplot script, the PNG it
 * writes, and gnuplot's messages; the PNG is read back and the directory
 * removed.  gnuplot runs as a child (posix_spawn, so nothing of this
 * multi-threaded process is forked) and is killed past
 * gnuplot_timeout_ms.  The pngcairo terminal is tried first, then png.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tsd/internal.h"
#include "tsd/number.h"
#include "util/env.h"
#include "util/err.h"
#include "util/log.h"

extern char **environ;

static void set_err(struct tsd_error *err, const char *fmt, const char *a)
{
	if (err) {
		err->line = 0;
		snprintf(err->reason, sizeof err->reason, fmt, a);
	}
}

/* gnuplot's messages msg[0..len) as one line that fits a tsd_error
 * whole: whitespace runs become one space, and a long text keeps its end
 * (where gnuplot says what went wrong) after "...".  In place. */
static const char *last_words(char *msg, size_t len)
{
	size_t k = 0, max = sizeof(((struct tsd_error *)0)->reason) - 40;

	for (size_t i = 0; i < len; i++) {
		char c = msg[i] == '\n' || msg[i] == '\t' || msg[i] == '\r'
				 ? ' ' : msg[i];
		if (c == ' ' && (k == 0 || msg[k - 1] == ' '))
			continue;
		msg[k++] = c;
	}
	while (k && msg[k - 1] == ' ')
		k--;
	msg[k] = '\0';
	if (k <= max)
		return msg;
	char *from = msg + k - (max - 3);
	memcpy(from - 3, "...", 3);
	return from - 3;
}

static int write_file(const char *path, const struct buf *b)
{
	struct env_file *f = NULL;
	int rc = env_open(path, ENV_WRITE_NEW, &f);
	if (rc)
		return rc;
	if (b->len)
		rc = env_write(f, b->p, b->len);
	int rc2 = env_close(f);
	return rc ? rc : rc2;
}

/* A gnuplot single-quoted string: only ' needs escaping (doubled);
 * newlines, which would end the command, become spaces. */
static int quote(struct buf *b, const char *s)
{
	int rc = buf_putc(b, '\'');
	for (; *s && rc == CF_OK; s++) {
		if (*s == '\'')
			rc = buf_append(b, "''", 2);
		else
			rc = buf_putc(b, *s == '\n' || *s == '\r' ? ' ' : *s);
	}
	return rc ? rc : buf_putc(b, '\'');
}

static const char *time_format(int64_t span_s)
{
	if (span_s < 120)
		return "%H:%M:%S";
	if (span_s < 2 * 86400 + 8640)
		return "%H:%M";
	if (span_s < 7 * 86400)
		return "%a %H:%M";
	if (span_s < 31 * 86400)
		return "%m/%d";
	return "%Y/%m/%d";
}

static int script(const char *dir, const char *term,
		  const struct tsd_query *q, const struct tsd_plot_series *s,
		  size_t n, const int *has_data, struct buf *b)
{
	char path[4200];
	int rc = CF_OK, any = 0;

	rc = buf_printf(b, "set terminal %s size %d,%d noenhanced\n"
			"set output '%s/graph.png'\n"
			"set xdata time\nset timefmt '%%s'\n"
			"set format x '%s'\n"
			"set xrange ['%lld':'%lld']\n"
			"set grid\n",
			term, q->width, q->height, dir,
			time_format((q->end_ms - q->start_ms) / 1000),
			(long long)(q->start_ms / 1000),
			(long long)((q->end_ms + 999) / 1000));
	if (rc)
		return rc;
	if (q->title && ((rc = buf_printf(b, "set title ")) ||
			 (rc = quote(b, q->title)) || (rc = buf_putc(b, '\n'))))
		return rc;
	if (q->ylabel && ((rc = buf_printf(b, "set ylabel ")) ||
			  (rc = quote(b, q->ylabel)) ||
			  (rc = buf_putc(b, '\n'))))
		return rc;
	/* yrange and key were checked by the parser: brackets, numbers and
	 * colons; letters and spaces */
	if (q->yrange && (rc = buf_printf(b, "set yrange %s\n", q->yrange)))
		return rc;
	if (q->ylog && (rc = buf_printf(b, "set logscale y\n")))
		return rc;
	if (q->nokey)
		rc = buf_printf(b, "unset key\n");
	else
		rc = buf_printf(b, "set key %s\n", q->key ? q->key : "top left");
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (!has_data[i])
			continue;
		snprintf(path, sizeof path, "%s/s%zu.dat", dir, i);
		if ((rc = buf_printf(b, "%s ", any ? "," : "plot")) ||
		    (rc = quote(b, path)) ||
		    (rc = buf_printf(b, " using 1:2 title ")) ||
		    (rc = quote(b, s[i].label)) ||
		    (rc = buf_printf(b, " with linespoints pt 7 ps 0.4")))
			return rc;
		any = 1;
	}
	if (!any)
		rc = buf_printf(b, "set label 1 'No data' at graph 0.5,0.5 "
				"center\nset yrange [0:1]\nplot 2 notitle");
	return rc ? rc : buf_putc(b, '\n');
}

/* Runs gnuplot on the script; 0 when it exited with status 0. */
static int run_gnuplot(tsd *t, const char *dir, int *status)
{
	char spath[4200], epath[4200];
	char *argv[3];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	snprintf(spath, sizeof spath, "%s/plot.gp", dir);
	snprintf(epath, sizeof epath, "%s/errors.txt", dir);
	argv[0] = (char *)t->o.gnuplot;
	argv[1] = spath;
	argv[2] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, epath,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawnp(&pid, t->o.gnuplot, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return CF_EIO;
	/* time is counted in sleeps, not read from env's clock, which
	 * tests may have stopped */
	for (unsigned waited = 0;; waited += 5) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return CF_OK;
		if (w < 0)
			return CF_EIO;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (waited > t->o.gnuplot_timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return CF_EIO;
		}
	}
}

int tsd_plot(tsd *t, const struct tsd_query *q,
	     const struct tsd_plot_series *s, size_t n, struct buf *out,
	     struct tsd_error *err)
{
	char dir[4096], path[4200];
	const char *tmp = getenv("TMPDIR");
	struct buf b = BUF_INIT;
	int *has_data = calloc(n ? n : 1, sizeof *has_data);
	char *png = NULL;
	size_t pnglen = 0;
	int rc, status = 0;

	if (!has_data)
		return CF_ENOMEM;
	pthread_mutex_lock(&t->mu);
	unsigned seq = t->tmp_seq++;
	pthread_mutex_unlock(&t->mu);
	snprintf(dir, sizeof dir, "%s/cellfs-plot-%ld-%u-%lld",
		 tmp && *tmp ? tmp : "/tmp", (long)getpid(), seq,
		 (long long)(env_now_ms() % 1000000));
	if ((rc = env_mkdir(dir, 0700)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		int gap = 0;
		buf_reset(&b);
		for (size_t j = 0; j < s[i].n; j++) {
			const struct tsd_dp *p = &s[i].dp[j];
			int64_t sec = p->ts / 1000, ms = p->ts % 1000;
			if (p->is_float && p->d != p->d) {
				/* NaN (fill nan, null): a blank line, a gap
				 * in the line; a series of nothing else is
				 * not drawn ("No data" when none is) */
				if (b.len && !gap && (rc = buf_putc(&b, '\n')))
					goto out;
				gap = 1;
				continue;
			}
			gap = 0;
			rc = ms ? buf_printf(&b, "%lld.%03lld ", (long long)sec,
					     (long long)ms)
				: buf_printf(&b, "%lld ", (long long)sec);
			if (rc)
				goto out;
			if (p->is_float)
				rc = tsd_buf_double(&b, p->d);
			else
				rc = buf_printf(&b, "%lld", (long long)p->i);
			if (rc || (rc = buf_putc(&b, '\n')))
				goto out;
			has_data[i] = 1;
		}
		snprintf(path, sizeof path, "%s/s%zu.dat", dir, i);
		if ((rc = write_file(path, &b)))
			goto out;
	}
	static const char *const terms[] = { "pngcairo", "png" };
	for (size_t k = 0; k < 2; k++) {
		buf_reset(&b);
		if ((rc = script(dir, terms[k], q, s, n, has_data, &b)))
			goto out;
		snprintf(path, sizeof path, "%s/plot.gp", dir);
		if ((rc = write_file(path, &b)))
			goto out;
		rc = run_gnuplot(t, dir, &status);
		if (rc == CF_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			break;
		if (rc == CF_OK)
			rc = CF_EIO;
	}
	if (rc) {
		char *msg = NULL;
		size_t mlen;
		snprintf(path, sizeof path, "%s/errors.txt", dir);
		if (env_read_file(path, &msg, &mlen) == CF_OK && mlen) {
			set_err(err, "gnuplot failed: %s", last_words(msg,
								    mlen));
		} else {
			set_err(err, "gnuplot failed: %s",
				"cannot run it or it timed out");
		}
		cf_log(CF_LOG_ERROR, "tsd: %s", err ? err->reason
						   : "gnuplot failed");
		free(msg);
		goto out;
	}
	snprintf(path, sizeof path, "%s/graph.png", dir);
	if ((rc = env_read_file(path, &png, &pnglen)))
		goto out;
	rc = buf_append(out, png, pnglen);
out:
	env_remove_tree(dir);
	free(png);
	free(has_data);
	buf_release(&b);
	return rc;
}
