/* SPDX-License-Identifier: BSD-3-Clause */
/* pkt-pace: feed a paced scenario's frames into a running maglevd in real
 * time, each at its at_ms after the first, through the FIFO its net_pcap
 * port reads.
 *
 *   pkt-pace SCENARIO DIR PID TIMEOUT_S
 *
 * Writes DIR/in.fifo (fifo_feed.h) and closes it at the end. Prints on
 * stdout the milliseconds between writing the first and the last frame
 * that may be rate-limited (SC_MAY_LIMIT), the window pkt-check judges
 * the rate over. Exit 0, or 1 with a message (daemon gone, timeout,
 * write error). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/packet/fifo_feed.h"
#include "tests/packet/poll_wait.h"
#include "tests/packet/scenario.h"

/* Sleep until the monotonic millisecond `until`, at most a millisecond at
 * a time so that a late feeder catches up at once. */
static void sleep_until(uint64_t until)
{
	for (uint64_t now = poll_now_ms(); now < until; now = poll_now_ms()) {
		struct timespec ts = { 0, 500 * 1000 };

		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	static struct scenario sc;
	static uint8_t rec[16 + PKT_FRAME_MAX];
	struct fifo_feed f = {.fd = -1, .tool = "pkt-pace"};
	uint64_t start, first = 0, last = 0;
	bool any = false;
	char path[4096];
	int rc = 1;

	if (argc != 5) {
		fprintf(stderr, "usage: pkt-pace SCENARIO DIR PID TIMEOUT_S\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!sc_build(argv[1], &sc) || !sc.paced) {
		fprintf(stderr, "pkt-pace: no paced scenario '%s'\n", argv[1]);
		return 1;
	}
	f.pid = (pid_t)atoi(argv[3]);
	f.deadline_ms = poll_now_ms() + strtoull(argv[4], NULL, 10) * 1000;
	snprintf(path, sizeof(path), "%s/in.fifo", argv[2]);
	if (fifo_feed_open(&f, path))
		goto done;
	start = poll_now_ms();
	for (uint32_t i = 0; i < sc.n_frames; i++) {
		const struct sc_frame *fr = &sc.frames[i];
		uint64_t now;

		sleep_until(start + fr->at_ms);
		fifo_feed_record_header(rec, i, fr->len);
		memcpy(rec + 16, fr->data, fr->len);
		if (fifo_feed_write(&f, rec, 16 + fr->len))
			goto done;
		f.fed++;
		if (fr->exp.outcome != SC_MAY_LIMIT)
			continue;
		now = poll_now_ms();
		if (!any)
			first = now;
		last = now;
		any = true;
	}
	fprintf(stderr, "pkt-pace: %llu frames fed in %llu ms\n",
		(unsigned long long)f.fed,
		(unsigned long long)(poll_now_ms() - start));
	printf("%llu\n", (unsigned long long)(last - first));
	rc = 0;
done:
	fifo_feed_close(&f);
	sc_free(&sc);
	return rc;
}
