/* SPDX-License-Identifier: BSD-3-Clause */
/* maglev-decap: attach maglevd's backend decapsulator (an XDP program
 * that undoes IPIP and GUE, dataplane/bpf/decap/xdp_decap.bpf.c) to a backend's
 * interface, for kernels without the ipip/ip6_tunnel/fou modules.
 *
 *   maglev-decap attach DEV [--address IP]... [--gue-port N]... [--mode M]
 *   maglev-decap detach DEV
 *   maglev-decap status DEV
 *
 * Exit status: 0 done; 1 failed (the reason is printed); 2 bad usage. */
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/if_link.h>

#include "tools/bin/maglev-decap/decap_ctl.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Command-line limits: the maps' sizes (dataplane/bpf/common/consts.h). */
#define MAX_ADDRS 256
#define MAX_PORTS 16

static void usage(FILE *out)
{
	fprintf(out,
"usage: maglev-decap attach DEV [--address IP]... [--gue-port PORT]...\n"
"                               [--mode auto|native|generic]\n"
"       maglev-decap detach DEV\n"
"       maglev-decap status DEV\n"
"\n"
"attach  load the decapsulator on DEV (or, if it is already there, replace\n"
"        its configuration in place). IPIP (4in4, 6in4, 4in6, 6in6) and GUE\n"
"        on the given UDP ports, addressed to one of the --address IPs (by\n"
"        default every address DEV has now), are decapsulated; everything\n"
"        else passes untouched.\n"
"detach  remove it (another XDP program is left alone).\n"
"status  configuration and counters.\n"
"\n"
"exit status: 0 ok, 1 failed, 2 bad usage\n");
}

static int ifindex_of(const char *dev)
{
	unsigned idx = if_nametoindex(dev);

	if (!idx)
		fprintf(stderr, "maglev-decap: %s: no such interface\n", dev);
	return (int)idx;
}

/* Every IPv4/IPv6 address DEV has; returns how many (0 if none). */
static size_t device_addresses(const char *dev, struct mlv_ip *out, size_t cap)
{
	struct ifaddrs *list, *ifa;
	size_t n = 0;

	if (getifaddrs(&list)) {
		fprintf(stderr, "maglev-decap: getifaddrs: %s\n",
			strerror(errno));
		return 0;
	}
	for (ifa = list; ifa && n < cap; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || strcmp(ifa->ifa_name, dev))
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		if (ifa->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *sin =
				(const void *)ifa->ifa_addr;

			out[n].family = MLV_AF_INET;
			memcpy(out[n].bytes, &sin->sin_addr, 4);
			n++;
		} else if (ifa->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 =
				(const void *)ifa->ifa_addr;

			out[n].family = MLV_AF_INET6;
			memcpy(out[n].bytes, &sin6->sin6_addr, 16);
			n++;
		}
	}
	freeifaddrs(list);
	return n;
}

static int parse_port(const char *text, uint16_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "address", required_argument, NULL, 'a' },
		{ "gue-port", required_argument, NULL, 'g' },
		{ "mode", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct mlv_ip addrs[MAX_ADDRS];
	uint16_t ports[MAX_PORTS];
	struct mlv_decap_config cfg = { .addrs = addrs, .gue_ports = ports };
	enum mlv_decap_mode mode = MLV_DECAP_MODE_AUTO;
	char why[256] = "";
	const char *dev;
	enum mlv_err err;
	int c, ifindex, updated;

	optind = 1;
	while ((c = getopt_long(argc, argv, "a:g:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (cfg.n_addrs == MAX_ADDRS) {
				fprintf(stderr, "maglev-decap: at most %d "
					"addresses\n", MAX_ADDRS);
				return EXIT_USAGE;
			}
			if (!mlv_ip_parse(optarg, &addrs[cfg.n_addrs])) {
				fprintf(stderr, "maglev-decap: --address %s: "
					"not an IPv4/IPv6 address\n", optarg);
				return EXIT_USAGE;
			}
			cfg.n_addrs++;
			break;
		case 'g':
			if (cfg.n_gue_ports == MAX_PORTS) {
				fprintf(stderr, "maglev-decap: at most %d GUE "
					"ports\n", MAX_PORTS);
				return EXIT_USAGE;
			}
			if (parse_port(optarg, &ports[cfg.n_gue_ports])) {
				fprintf(stderr, "maglev-decap: --gue-port %s: "
					"not a port (1-65535)\n", optarg);
				return EXIT_USAGE;
			}
			cfg.n_gue_ports++;
			break;
		case 'm':
			if (!strcmp(optarg, "auto"))
				mode = MLV_DECAP_MODE_AUTO;
			else if (!strcmp(optarg, "native"))
				mode = MLV_DECAP_MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				mode = MLV_DECAP_MODE_GENERIC;
			else {
				fprintf(stderr, "maglev-decap: --mode %s: "
					"auto, native or generic\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	dev = argv[optind];
	ifindex = ifindex_of(dev);
	if (!ifindex)
		return EXIT_FAILED;
	if (!cfg.n_addrs) {
		cfg.n_addrs = device_addresses(dev, addrs, MAX_ADDRS);
		if (!cfg.n_addrs) {
			fprintf(stderr, "maglev-decap: %s has no IP address; "
				"give --address\n", dev);
			return EXIT_FAILED;
		}
	}
	err = mlv_decap_attach(ifindex, mode, &cfg, &updated, why, sizeof(why));
	if (err) {
		fprintf(stderr, "maglev-decap: %s: %s\n", dev, why);
		return EXIT_FAILED;
	}
	printf("%s: decapsulator %s (%zu addresses, %zu GUE ports)\n", dev,
	       updated ? "reconfigured" : "attached", cfg.n_addrs,
	       cfg.n_gue_ports);
	return EXIT_OK;
}

static int cmd_detach(const char *dev)
{
	char why[256] = "";
	int ifindex = ifindex_of(dev), removed;

	if (!ifindex)
		return EXIT_FAILED;
	if (mlv_decap_detach(ifindex, &removed, why, sizeof(why))) {
		fprintf(stderr, "maglev-decap: %s: %s\n", dev, why);
		return EXIT_FAILED;
	}
	printf("%s: %s\n", dev, removed ? "decapsulator detached" :
	       "no XDP program was attached");
	return EXIT_OK;
}

static const char *mode_name(uint32_t flags)
{
	if (flags == XDP_FLAGS_DRV_MODE)
		return "native";
	if (flags == XDP_FLAGS_SKB_MODE)
		return "generic";
	return "offloaded";
}

static int cmd_status(const char *dev)
{
	static struct mlv_ip addrs[MAX_ADDRS];
	uint64_t ctr[MLV_DECAP_CTR__COUNT];
	uint16_t ports[MAX_PORTS];
	struct mlv_decap_maps maps;
	size_t n_addrs, n_ports;
	char why[256] = "", text[MLV_IP_STRLEN];
	int ifindex = ifindex_of(dev), rc = EXIT_FAILED;

	if (!ifindex)
		return EXIT_FAILED;
	if (mlv_decap_open(ifindex, &maps, why, sizeof(why))) {
		fprintf(stderr, "maglev-decap: %s: %s\n", dev, why);
		return EXIT_FAILED;
	}
	if (mlv_decap_read_config(&maps, addrs, MAX_ADDRS, &n_addrs, ports,
				  MAX_PORTS, &n_ports) ||
	    mlv_decap_counters(&maps, ctr)) {
		fprintf(stderr, "maglev-decap: %s: reading the maps failed\n",
			dev);
		goto out;
	}
	printf("%s: %s id %u, %s mode\n", dev, MLV_DECAP_PROG_NAME,
	       maps.prog_id, mode_name(maps.mode_flags));
	printf("addresses:");
	for (size_t i = 0; i < n_addrs && i < MAX_ADDRS; i++)
		printf(" %s", mlv_ip_format(&addrs[i], text, sizeof(text)));
	printf("\ngue ports:");
	for (size_t i = 0; i < n_ports && i < MAX_PORTS; i++)
		printf(" %u", ports[i]);
	printf("%s\n", n_ports ? "" : " (none: IPIP only)");
	for (unsigned i = 0; i < MLV_DECAP_CTR__COUNT; i++)
		printf("%-18s %12" PRIu64 "  %s\n", mlv_decap_counter_name(i),
		       ctr[i], mlv_decap_counter_help(i));
	rc = EXIT_OK;
out:
	mlv_decap_maps_close(&maps);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc - 1, argv + 1);
	if (argc != 3) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "detach"))
		return cmd_detach(argv[2]);
	if (!strcmp(argv[1], "status"))
		return cmd_status(argv[2]);
	fprintf(stderr, "maglev-decap: unknown command %s\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
