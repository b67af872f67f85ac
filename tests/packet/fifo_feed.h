/* SPDX-License-Identifier: BSD-3-Clause */
/* Feeding frames to a running maglevd through a FIFO that its net_pcap
 * port reads as rx_pcap (pkt-storm, pkt-pace). The pcap stream is
 * written by hand (a 24-byte file header, then a 16-byte header per
 * frame, libpcap's documented format) rather than with pcap_dump:
 * pcap_dump writes through stdio and would block forever on a FIFO whose
 * reader stalled, and a feeder must give up on a deadline instead. Test
 * code; single-threaded; messages go to stderr prefixed with `tool`. */
#ifndef PKT_FIFO_FEED_H
#define PKT_FIFO_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fifo_feed {
	int fd;
	pid_t pid;               /* the daemon reading the FIFO */
	uint64_t deadline_ms;    /* poll_now_ms() past which writes fail */
	const char *tool;
	uint64_t fed;            /* frames written */
};

/* Open path for writing once the daemon (pid) has opened it for reading,
 * then write the pcap file header. 0, or -1 with a message (the daemon
 * gone, the deadline passed, an I/O error). */
int fifo_feed_open(struct fifo_feed *f, const char *path);

/* Write all of buf, waiting for the reader within the deadline. 0 or -1
 * with a message. */
int fifo_feed_write(struct fifo_feed *f, const void *buf, size_t len);

/* The 16-byte pcap record header of frame number n (its timestamp is n in
 * microseconds: the daemon ignores it) of len bytes, at out. */
void fifo_feed_record_header(uint8_t out[16], uint64_t n, uint32_t len);

/* Close the FIFO: the daemon's port sees the end of its input. */
void fifo_feed_close(struct fifo_feed *f);

#endif
