/* SPDX-License-Identifier: BSD-3-Clause */
/* pkt-storm: feed the "storm" scenario's frames into a running maglevd
 * through a FIFO while making it reload many times.
 *
 *   pkt-storm DIR PID RELOADS TIMEOUT_S
 *
 * The daemon (PID) reads DIR/in.fifo as its net_pcap rx_pcap and was
 * started with -c DIR/config.yaml (a copy of DIR/config-a.yaml). For each
 * reload this tool replaces DIR/config.yaml atomically with the other of
 * config-a/config-b, sends SIGHUP, and keeps writing frames until the
 * stats file's generation number moves, so every publish happens while
 * packets flow. Then it closes the FIFO (end of input) and prints the
 * number of frames it wrote, for pkt-check --fed. Exit 0, or 1 with a
 * message (daemon gone, timeout, write error). The FIFO is written by
 * fifo_feed.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/fifo_feed.h"
#include "tests/packet/poll_wait.h"
#include "tests/packet/scenario.h"
#include "tests/packet/stats_json.h"

#define BATCH 32                 /* frames written between stats reads */

struct feeder {
	struct fifo_feed ff;
	const struct scenario *sc;
	uint32_t next;               /* next frame to write (cyclic) */
	const char *dir;
};

static int feed_batch(struct feeder *f)
{
	static uint8_t buf[BATCH * (16 + PKT_FRAME_MAX)];
	size_t off = 0;

	for (int i = 0; i < BATCH; i++) {
		const struct sc_frame *fr = &f->sc->frames[f->next];

		fifo_feed_record_header(buf + off, f->ff.fed, fr->len);
		memcpy(buf + off + 16, fr->data, fr->len);
		off += 16 + fr->len;
		f->ff.fed++;
		f->next = (f->next + 1) % f->sc->n_frames;
	}
	return fifo_feed_write(&f->ff, buf, off);
}

static int generation(const struct feeder *f, uint64_t *g)
{
	char path[4096], why[128];
	json_t *doc;
	bool ok;

	snprintf(path, sizeof(path), "%s/stats.json", f->dir);
	doc = stats_load(path, why, sizeof(why));
	if (!doc)
		return -1;
	ok = stats_generation(doc, g);
	json_decref(doc);
	return ok ? 0 : -1;
}

/* Feed until the generation exceeds after (or first appears if after is
 * UINT64_MAX); *g receives it. */
static int feed_until_generation(struct feeder *f, uint64_t after, uint64_t *g)
{
	for (;;) {
		if (feed_batch(f))
			return -1;
		if (generation(f, g) == 0 && (after == UINT64_MAX || *g > after))
			return 0;
		if (!poll_alive(f->ff.pid)) {
			fprintf(stderr, "pkt-storm: the daemon exited\n");
			return -1;
		}
	}
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, fp) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

/* Replace DIR/config.yaml atomically with the given content. */
static int install_config(const struct feeder *f, const char *text, size_t len)
{
	char path[4096], tmp[4200];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/config.yaml", f->dir);
	snprintf(tmp, sizeof(tmp), "%s.storm-tmp", path);
	fp = fopen(tmp, "wb");
	if (!fp || fwrite(text, 1, len, fp) != len || fclose(fp) != 0) {
		fprintf(stderr, "pkt-storm: cannot write %s\n", tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		perror("pkt-storm: rename");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct scenario sc;
	struct feeder f = {.ff = {.fd = -1, .tool = "pkt-storm"}};
	char path[4096];
	char *cfg[2] = {NULL, NULL};
	size_t cfg_len[2];
	uint64_t g0, g, reloads;
	uint64_t t0 = poll_now_ms();
	int rc = 1;

	if (argc != 5) {
		fprintf(stderr, "usage: pkt-storm DIR PID RELOADS TIMEOUT_S\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!sc_build("storm", &sc))
		return 1;
	f.sc = &sc;
	f.dir = argv[1];
	f.ff.pid = (pid_t)atoi(argv[2]);
	reloads = strtoull(argv[3], NULL, 10);
	f.ff.deadline_ms = t0 + strtoull(argv[4], NULL, 10) * 1000;

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/config-%c.yaml", f.dir, 'a' + i);
		cfg[i] = slurp(path, &cfg_len[i]);
		if (!cfg[i]) {
			fprintf(stderr, "pkt-storm: cannot read %s\n", path);
			goto done;
		}
	}
	snprintf(path, sizeof(path), "%s/in.fifo", f.dir);
	if (fifo_feed_open(&f.ff, path))
		goto done;
	if (feed_until_generation(&f, UINT64_MAX, &g0))
		goto done;
	g = g0;
	for (uint64_t i = 1; i <= reloads; i++) {
		uint64_t before = g;

		if (install_config(&f, cfg[i % 2], cfg_len[i % 2]))
			goto done;
		if (kill(f.ff.pid, SIGHUP) != 0) {
			perror("pkt-storm: kill SIGHUP");
			goto done;
		}
		if (feed_until_generation(&f, before, &g)) {
			fprintf(stderr, "pkt-storm: reload %llu of %llu did not "
				"land (generation stuck at %llu)\n",
				(unsigned long long)i, (unsigned long long)reloads,
				(unsigned long long)before);
			goto done;
		}
	}
	/* one more full pass of the frames under the final generation */
	for (uint32_t i = 0; i < sc.n_frames / BATCH + 1; i++)
		if (feed_batch(&f))
			goto done;
	fprintf(stderr, "pkt-storm: %llu reloads landed (generation %llu -> "
		"%llu) while %llu frames were fed, in %llu ms\n",
		(unsigned long long)reloads, (unsigned long long)g0,
		(unsigned long long)g, (unsigned long long)f.ff.fed,
		(unsigned long long)(poll_now_ms() - t0));
	if (g - g0 < reloads) {
		fprintf(stderr, "pkt-storm: only %llu generations published for "
			"%llu reloads\n", (unsigned long long)(g - g0),
			(unsigned long long)reloads);
		goto done;
	}
	printf("%llu\n", (unsigned long long)f.ff.fed);
	rc = 0;
done:
	fifo_feed_close(&f.ff);
	free(cfg[0]);
	free(cfg[1]);
	sc_free(&sc);
	return rc;
}
