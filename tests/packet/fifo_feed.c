/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/fifo_feed.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/packet/poll_wait.h"

int fifo_feed_write(struct fifo_feed *f, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = {.fd = f->fd, .events = POLLOUT};
		ssize_t n;

		if (poll_now_ms() > f->deadline_ms) {
			fprintf(stderr, "%s: timeout writing to the FIFO "
				"(daemon not reading)\n", f->tool);
			return -1;
		}
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			fprintf(stderr, "%s: poll: %s\n", f->tool, strerror(errno));
			return -1;
		}
		n = write(f->fd, p, len);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fprintf(stderr, "%s: writing the FIFO: %s%s\n", f->tool,
				strerror(errno), errno == EPIPE ?
				" (the daemon closed its input)" : "");
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fifo_feed_open(struct fifo_feed *f, const char *path)
{
	/* pcap file header: magic, version 2.4, zone, sigfigs, snaplen,
	 * link type Ethernet; host byte order */
	static const uint32_t hdr[6] = {0xa1b2c3d4u, 2u | 4u << 16, 0, 0,
					65535, 1};

	/* O_NONBLOCK: fails with ENXIO until the daemon opens the read end,
	 * so a daemon that never starts cannot hang us */
	for (;;) {
		f->fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (f->fd >= 0)
			break;
		if (errno != ENXIO) {
			fprintf(stderr, "%s: open %s: %s\n", f->tool, path,
				strerror(errno));
			return -1;
		}
		if (!poll_alive(f->pid) || poll_now_ms() > f->deadline_ms) {
			fprintf(stderr, "%s: the daemon never opened %s\n",
				f->tool, path);
			return -1;
		}
		poll_step();
	}
	return fifo_feed_write(f, hdr, sizeof(hdr));
}

void fifo_feed_record_header(uint8_t out[16], uint64_t n, uint32_t len)
{
	uint32_t h[4] = {
		(uint32_t)(n / 1000000), (uint32_t)(n % 1000000), len, len,
	};

	memcpy(out, h, sizeof(h));
}

void fifo_feed_close(struct fifo_feed *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
