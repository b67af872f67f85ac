/* SPDX-License-Identifier: BSD-3-Clause */
/* dp-bench-gen: write a pcap of TCP traffic to the dp-bench VIPs.
 *
 *   dp-bench-gen -o FILE --flows K [--packets N] [--family 4|6|mixed]
 *                [--ip-len BYTES] [--flags ack|syn]
 *
 * Frame j belongs to flow j mod K, so with N = K (the default) every
 * frame is a different 5-tuple. --flags ack writes segments of
 * established connections (ACK, no SYN: a load balancer that sees them
 * tracks the flow as established); --flags syn writes connection
 * openings. --ip-len 0 (default) writes the smallest segments: 60-byte
 * IPv4 frames (64 bytes on the wire), 74-byte IPv6 frames.
 *
 * net_pcap's infinite_rx replays the file in a loop, so the file itself
 * decides how many distinct flows the data plane sees (docs/benchmarks.md,
 * "Data plane"). Exit 0, 1 on an I/O error, 2 on bad usage. */
#include <errno.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_tcp.h>

#include "control/base/error.h"
#include "tools/bench/dp-bench/frame.h"

/* Largest file: 64M frames (about 5 GB of 64-byte frames) is far beyond
 * what any replay pool holds; the cap only stops typing mistakes. */
#define DPB_MAX_PACKETS (1u << 26)

struct gen_opts {
	const char *out;
	uint32_t flows;
	uint32_t packets;
	uint32_t ip_len;
	enum dpb_family_mix family;
	uint8_t tcp_flags;
};

static void usage(FILE *f)
{
	fputs("usage: dp-bench-gen -o FILE --flows K [--packets N]\n"
	      "                    [--family 4|6|mixed] [--ip-len BYTES]"
	      " [--flags ack|syn]\n"
	      "  --flows K     distinct 5-tuples, 1..16777215\n"
	      "  --packets N   frames in the file (default K); frame j is flow"
	      " j mod K\n"
	      "  --family      IPv4, IPv6 or both alternating (default 4)\n"
	      "  --ip-len N    IP packet length; 0 = smallest (default)\n"
	      "  --flags       ack: established traffic (default); syn:"
	      " connection openings\n", f);
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

static enum mlv_err parse_opts(int argc, char **argv, struct gen_opts *o)
{
	static const struct option longopts[] = {
		{"out", required_argument, NULL, 'o'},
		{"flows", required_argument, NULL, 'k'},
		{"packets", required_argument, NULL, 'n'},
		{"family", required_argument, NULL, 'f'},
		{"ip-len", required_argument, NULL, 'l'},
		{"flags", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->family = DPB_FAMILY_V4;
	o->tcp_flags = RTE_TCP_ACK_FLAG;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'k':
			if (!parse_u32(optarg, 1, DPB_MAX_FLOWS, &o->flows)) {
				fprintf(stderr, "dp-bench-gen: --flows: '%s' is not"
					" in 1..%u\n", optarg, DPB_MAX_FLOWS);
				return MLV_E_INVAL;
			}
			break;
		case 'n':
			if (!parse_u32(optarg, 1, DPB_MAX_PACKETS, &o->packets)) {
				fprintf(stderr, "dp-bench-gen: --packets: '%s' is "
					"not in 1..%u\n", optarg, DPB_MAX_PACKETS);
				return MLV_E_INVAL;
			}
			break;
		case 'f':
			if (strcmp(optarg, "4") == 0)
				o->family = DPB_FAMILY_V4;
			else if (strcmp(optarg, "6") == 0)
				o->family = DPB_FAMILY_V6;
			else if (strcmp(optarg, "mixed") == 0)
				o->family = DPB_FAMILY_MIXED;
			else {
				fprintf(stderr, "dp-bench-gen: --family: '%s' is "
					"not 4, 6 or mixed\n", optarg);
				return MLV_E_INVAL;
			}
			break;
		case 'l':
			if (!parse_u32(optarg, 0, DPB_MAX_IP_LEN, &o->ip_len)) {
				fprintf(stderr, "dp-bench-gen: --ip-len: '%s' is "
					"not in 0..%u\n", optarg, DPB_MAX_IP_LEN);
				return MLV_E_INVAL;
			}
			break;
		case 't':
			if (strcmp(optarg, "ack") == 0)
				o->tcp_flags = RTE_TCP_ACK_FLAG;
			else if (strcmp(optarg, "syn") == 0)
				o->tcp_flags = RTE_TCP_SYN_FLAG;
			else {
				fprintf(stderr, "dp-bench-gen: --flags: '%s' is "
					"not ack or syn\n", optarg);
				return MLV_E_INVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return MLV_E_INVAL;
		}
	}
	if (optind < argc || !o->out || !o->flows) {
		usage(stderr);
		return MLV_E_INVAL;
	}
	if (!o->packets)
		o->packets = o->flows;
	return MLV_OK;
}

static enum mlv_err write_pcap(const struct gen_opts *o, uint64_t *bytes)
{
	static uint8_t buf[DPB_MAX_FRAME];
	enum mlv_err err = MLV_E_IO;
	pcap_dumper_t *d = NULL;
	pcap_t *p;

	*bytes = 0;
	p = pcap_open_dead(DLT_EN10MB, DPB_MAX_FRAME);
	if (!p) {
		fprintf(stderr, "dp-bench-gen: pcap_open_dead failed\n");
		return MLV_E_NOMEM;
	}
	d = pcap_dump_open(p, o->out);
	if (!d) {
		fprintf(stderr, "dp-bench-gen: cannot write %s: %s\n", o->out,
			pcap_geterr(p));
		goto out;
	}
	for (uint32_t j = 0; j < o->packets; j++) {
		struct dpb_flow f;
		uint32_t len;

		dpb_flow_make(j % o->flows, o->family, &f);
		len = dpb_frame_build(buf, &f, o->ip_len, o->tcp_flags);
		/* the frame number as the timestamp: the same options write
		 * the same file byte for byte */
		struct pcap_pkthdr h = {
			.ts = {.tv_sec = j / 1000000, .tv_usec = j % 1000000},
			.caplen = len,
			.len = len,
		};
		pcap_dump((u_char *)d, &h, buf);
		*bytes += len;
	}
	if (pcap_dump_flush(d) != 0 || ferror(pcap_dump_file(d))) {
		fprintf(stderr, "dp-bench-gen: cannot write %s: %s\n", o->out,
			strerror(errno));
		goto out;
	}
	err = MLV_OK;
out:
	if (d)
		pcap_dump_close(d);
	pcap_close(p);
	return err;
}

int main(int argc, char **argv)
{
	struct gen_opts o;
	uint64_t bytes;

	if (parse_opts(argc, argv, &o) != MLV_OK)
		return 2;
	if (write_pcap(&o, &bytes) != MLV_OK)
		return 1;
	printf("%s: %u frames, %u flows, %llu bytes of frames\n", o.out,
	       o.packets, o.flows, (unsigned long long)bytes);
	return 0;
}
