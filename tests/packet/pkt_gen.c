/* SPDX-License-Identifier: BSD-3-Clause */
/* pkt-gen: write a packet-test scenario's input and configuration.
 *
 *   pkt-gen SCENARIO DIR SOCKET
 *
 * Writes DIR/in.pcap (the scenario's frames) and DIR/config.yaml (one
 * net_pcap port reading DIR/in.pcap, writing DIR/out.pcap). For the
 * reload storm, DIR/config-a.yaml and DIR/config-b.yaml instead, reading
 * from the FIFO DIR/in.fifo that pkt-storm feeds. A paced scenario's
 * config reads DIR/in.fifo too, which pkt-pace feeds in real time (its
 * DIR/in.pcap is still written, for pkt-check). Prints the number of
 * input frames on stdout, followed by " paced" for a paced scenario.
 * Exit 0, or 1 with a message. */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "tests/packet/config_yaml.h"
#include "tests/packet/scenario.h"

static void usage(void)
{
	fprintf(stderr, "usage: pkt-gen SCENARIO DIR SOCKET\nscenarios:");
	for (const char *const *n = sc_names(); *n; n++)
		fprintf(stderr, " %s", *n);
	fputc('\n', stderr);
}

static int write_pcap(const struct scenario *sc, const char *path)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d;

	if (!p) {
		fprintf(stderr, "pcap_open_dead failed\n");
		return -1;
	}
	d = pcap_dump_open(p, path);
	if (!d) {
		fprintf(stderr, "cannot write %s: %s\n", path, pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	for (uint32_t i = 0; i < sc->n_frames; i++) {
		/* timestamps are the frame number in microseconds, so the
		 * file is the same byte for byte on every run */
		struct pcap_pkthdr h = {
			.ts = {.tv_sec = i / 1000000, .tv_usec = i % 1000000},
			.caplen = sc->frames[i].len,
			.len = sc->frames[i].len,
		};

		pcap_dump((u_char *)d, &h, sc->frames[i].data);
	}
	if (pcap_dump_flush(d) != 0) {
		fprintf(stderr, "cannot write %s\n", path);
		pcap_dump_close(d);
		pcap_close(p);
		return -1;
	}
	pcap_dump_close(d);
	pcap_close(p);
	return 0;
}

static int path_in(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len) {
		fprintf(stderr, "path too long: %s/%s\n", dir, name);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct scenario sc;
	char in[4096], out[4096], cfg[4096], cfg_b[4096];
	int rc = 1;

	if (argc != 4) {
		usage();
		return 1;
	}
	if (!sc_build(argv[1], &sc)) {
		fprintf(stderr, "pkt-gen: no scenario '%s'\n", argv[1]);
		usage();
		return 1;
	}
	if (path_in(out, sizeof(out), argv[2], "out.pcap"))
		goto done;

	if (sc.n_alt_vips) {
		struct sc_config_paths paths = {.tx_pcap = out, .socket = argv[3]};

		if (path_in(in, sizeof(in), argv[2], "in.fifo") ||
		    path_in(cfg, sizeof(cfg), argv[2], "config-a.yaml") ||
		    path_in(cfg_b, sizeof(cfg_b), argv[2], "config-b.yaml"))
			goto done;
		paths.rx_pcap = in;
		if (sc_write_config(&sc, false, &paths, cfg) ||
		    sc_write_config(&sc, true, &paths, cfg_b))
			goto done;
	} else {
		struct sc_config_paths paths = {.tx_pcap = out, .socket = argv[3]};
		char fifo[4096];

		if (path_in(in, sizeof(in), argv[2], "in.pcap") ||
		    path_in(fifo, sizeof(fifo), argv[2], "in.fifo") ||
		    path_in(cfg, sizeof(cfg), argv[2], "config.yaml"))
			goto done;
		paths.rx_pcap = sc.paced ? fifo : in;
		if (write_pcap(&sc, in) || sc_write_config(&sc, false, &paths, cfg))
			goto done;
	}
	printf("%u%s\n", sc.n_frames, sc.paced ? " paced" : "");
	rc = 0;
done:
	sc_free(&sc);
	return rc;
}
