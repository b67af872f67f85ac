/* SPDX-License-Identifier: BSD-3-Clause */
/* maglev-decap: attach maglevd's backend decapsulator (an XDP program
 * that undoes IPIP and GUE, dataplane/bpf/decap/xdp_decap.bpf.c) to a backend's
 * interface, for kernels without the ipip/ip6_tunnel/fou modules.
 *
 *   maglev-decap attach DEV --from CIDR[,CIDR]... [--address IP]...
 *                      [--gue-port N]... [--mode M]
 *                      [--mss-clamp auto|off] [--path-mtu N]
 *                      [--second-chance on|off]
 *   maglev-decap drain DEV | undrain DEV
 *   maglev-decap detach DEV
 *   maglev-decap status DEV
 *
 * Exit status: 0 done; 1 failed (the reason is printed); 2 bad usage. */
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/if_link.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dataplane/bpf/decap/structs.h"
#include "tools/bin/maglev-decap/attach_args.h"
#include "tools/bin/maglev-decap/decap_ctl.h"
#include "tools/bin/maglev-decap/readiness.h"
#include "tools/bin/maglev-decap/synack_tc.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *out)
{
	fprintf(out,
"usage: maglev-decap attach DEV --from CIDR[,CIDR...]|any [--address IP]...\n"
"                               [--gue-port PORT]... [--mode auto|native|generic]\n"
"                               [--mss-clamp auto|off] [--path-mtu N]\n"
"                               [--second-chance on|off]\n"
"       maglev-decap drain DEV | undrain DEV\n"
"       maglev-decap detach DEV\n"
"       maglev-decap status DEV [--prometheus]\n"
"       maglev-decap --version\n"
"\n"
"attach  load the decapsulator on DEV (or, if it is already there, replace\n"
"        its configuration in place). IPIP (4in4, 6in4, 4in6, 6in6) and GUE\n"
"        on the given UDP ports, from an outer source inside a --from\n"
"        prefix (the load balancers), addressed to one of the --address\n"
"        IPs (by default every address DEV has now), are decapsulated;\n"
"        everything else passes untouched. --from is required: without\n"
"        it anyone who can reach DEV could inject packets with any source\n"
"        address; --from any (0.0.0.0/0 and ::/0) accepts every source.\n"
"        SYN-ACK MSS clamping (--mss-clamp auto, the default): a tc egress\n"
"        program on DEV lowers the MSS of SYN-ACKs answering decapsulated\n"
"        SYNs to what fits the tunnel they came through, so clients send\n"
"        segments the load balancer can encapsulate; no advmss route is\n"
"        needed. --path-mtu N is the outer path MTU from the load\n"
"        balancers to DEV (default: DEV's MTU now); --mss-clamp off\n"
"        attaches no egress program.\n"
"        Second chance: GUE that carries maglevd's list of other backends\n"
"        (a VIP with second_chance) is decapsulated too; a TCP packet of a\n"
"        connection with no socket here is sent on, still encapsulated, to\n"
"        the first listed backend that is not this host. That needs a\n"
"        route to it and forwarding enabled on DEV (net.ipv4.conf.DEV.\n"
"        forwarding; net.ipv6.conf.all and .DEV.forwarding); without them\n"
"        the packet is decapsulated here (sc_no_route). Until the hop's\n"
"        neighbour is known the stack forwards the packet instead. A SYN\n"
"        nothing here listens for, and an ICMP too-big about a connection\n"
"        not here, go on the same way; a packet another backend sent on\n"
"        goes on to a later hop only. --second-chance off hands nothing\n"
"        on (for services whose sockets are not in DEV's namespace or\n"
"        live under a DNATed address).\n"
"drain   hand new connections (SYNs with second-chance hops) on to the\n"
"        next hop even though a listener is here; connections here stay.\n"
"        undrain ends it. Kept until undrain or detach, across attach.\n"
"detach  remove it and its egress program (other programs are left alone).\n"
"status  configuration and counters (decap_ipip to aborted: one per frame;\n"
"        the syn_*, synack_* and sc_* ones count some of those frames again).\n"
"        --prometheus: the counters alone, in the Prometheus text format\n"
"        (for node_exporter's textfile collector).\n"
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

/* DEV's MTU, or 0 (with a message) if it cannot be read. */
static uint32_t device_mtu(const char *dev)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 0;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		mtu = (uint32_t)ifr.ifr_mtu;
	else
		fprintf(stderr, "maglev-decap: %s: reading its MTU: %s\n", dev,
			strerror(errno));
	if (fd >= 0)
		close(fd);
	return mtu;
}

static int cmd_attach(int argc, char **argv)
{
	static struct mlv_decap_attach_args a;
	struct mlv_decap_config cfg;
	char why[512] = "";
	enum mlv_err err;
	int ifindex, updated;
	uint32_t dev_mtu = 0;

	err = mlv_decap_parse_attach(argc, argv, &a, why, sizeof(why));
	if (err) {
		fprintf(stderr, "maglev-decap: %s\n(maglev-decap --help for "
			"usage)\n", why);
		return EXIT_USAGE;
	}
	if (a.help) {
		usage(stdout);
		return EXIT_OK;
	}
	ifindex = ifindex_of(a.dev);
	if (!ifindex)
		return EXIT_FAILED;
	if (!a.n_addrs) {
		a.n_addrs = device_addresses(a.dev, a.addrs,
					     MLV_DECAP_ARGS_MAX_ADDRS);
		if (!a.n_addrs) {
			fprintf(stderr, "maglev-decap: %s has no IP address; "
				"give --address\n", a.dev);
			return EXIT_FAILED;
		}
	}
	if (!a.mss_clamp_off && !a.path_mtu) {
		dev_mtu = device_mtu(a.dev);
		if (!dev_mtu)
			return EXIT_FAILED;
	}
	mlv_decap_args_config(&a, dev_mtu, &cfg);
	err = mlv_decap_attach(ifindex, a.mode, &cfg, &updated, why,
			       sizeof(why));
	if (err) {
		fprintf(stderr, "maglev-decap: %s: %s\n", a.dev, why);
		return EXIT_FAILED;
	}
	printf("%s: decapsulator %s (%zu addresses, %zu GUE ports, "
	       "%zu sources", a.dev, updated ? "reconfigured" : "attached",
	       cfg.n_addrs, cfg.n_gue_ports, cfg.n_sources);
	if (cfg.path_mtu)
		printf(", SYN-ACK MSS clamp for path MTU %u)\n", cfg.path_mtu);
	else
		printf(", no SYN-ACK MSS clamp)\n");
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
	       "no decapsulator was attached");
	return EXIT_OK;
}

/* drain DEV (on) or undrain DEV. */
static int cmd_drain(const char *dev, bool on)
{
	struct mlv_decap_maps maps;
	char why[256] = "";
	int ifindex = ifindex_of(dev), rc = EXIT_OK;

	if (!ifindex)
		return EXIT_FAILED;
	if (mlv_decap_open(ifindex, &maps, why, sizeof(why))) {
		fprintf(stderr, "maglev-decap: %s: %s\n", dev, why);
		return EXIT_FAILED;
	}
	if (mlv_decap_set_drain(&maps, on, why, sizeof(why))) {
		fprintf(stderr, "maglev-decap: %s: %s\n", dev, why);
		rc = EXIT_FAILED;
	} else {
		printf("%s: %s\n", dev, on ?
		       "draining: new connections go on to their next hop" :
		       "not draining");
	}
	mlv_decap_maps_close(&maps);
	return rc;
}

static const char *mode_name(uint32_t flags)
{
	if (flags == XDP_FLAGS_DRV_MODE)
		return "native";
	if (flags == XDP_FLAGS_SKB_MODE)
		return "generic";
	return "offloaded";
}

/* v with backslash, quote and newline escaped, as a Prometheus label
 * value. */
static void put_label(const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			putchar('\\');
		if (*v == '\n')
			fputs("\\n", stdout);
		else
			putchar(*v);
	}
}

/* The counters as one Prometheus family, a sample per counter; the
 * readiness checks (n of them) as another, 1 for each that holds. */
static void print_prometheus(const char *dev, const uint64_t *ctr,
			     const struct mlv_sc_check *chk, size_t n)
{
	printf("# HELP maglev_decap_frames_total frames maglev-decap counted, "
	       "by counter (maglev-decap --help)\n"
	       "# TYPE maglev_decap_frames_total counter\n");
	for (unsigned i = 0; i < MLV_DECAP_CTR__COUNT; i++) {
		printf("maglev_decap_frames_total{dev=\"");
		put_label(dev);
		printf("\",counter=\"%s\"} %" PRIu64 "\n",
		       mlv_decap_counter_name(i), ctr[i]);
	}
	if (!n)
		return;
	printf("# HELP maglev_decap_second_chance_ready whether a host "
	       "setting second chance's redirects need holds (maglev-decap "
	       "status)\n"
	       "# TYPE maglev_decap_second_chance_ready gauge\n");
	for (size_t i = 0; i < n; i++) {
		printf("maglev_decap_second_chance_ready{dev=\"");
		put_label(dev);
		printf("\",check=\"%s\"} %d\n", chk[i].name, chk[i].ok);
	}
}

/* Whether any of addrs[0..n) is IPv6. */
static bool any_v6(const struct mlv_ip *addrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (addrs[i].family == 6)
			return true;
	return false;
}

static int cmd_status(const char *dev, bool prometheus)
{
	static struct mlv_ip addrs[MLV_DECAP_ARGS_MAX_ADDRS];
	static struct mlv_ip_prefix sources[MLV_DECAP_ARGS_MAX_SOURCES];
	uint64_t ctr[MLV_DECAP_CTR__COUNT];
	uint16_t ports[MLV_DECAP_ARGS_MAX_PORTS];
	struct mlv_decap_maps maps;
	size_t n_addrs, n_ports, n_sources;
	char why[256] = "", text[MLV_IP_PREFIX_STRLEN];
	int ifindex = ifindex_of(dev), rc = EXIT_FAILED;
	uint32_t path_mtu = 0, tc_id = 0, sc_flags = 0;
	struct mlv_sc_check chk[MLV_SC_CHECKS_MAX];
	size_t n_chk = 0, missing = 0;

	if (!ifindex)
		return EXIT_FAILED;
	if (mlv_decap_open(ifindex, &maps, why, sizeof(why))) {
		fprintf(stderr, "maglev-decap: %s: %s\n", dev, why);
		return EXIT_FAILED;
	}
	if (mlv_decap_read_sc(&maps, &sc_flags) ||
	    mlv_decap_read_config(&maps, addrs, MLV_DECAP_ARGS_MAX_ADDRS,
				  &n_addrs, ports, MLV_DECAP_ARGS_MAX_PORTS,
				  &n_ports) ||
	    mlv_decap_read_sources(&maps, sources, MLV_DECAP_ARGS_MAX_SOURCES,
				   &n_sources) ||
	    mlv_decap_counters(&maps, ctr) ||
	    mlv_decap_read_path_mtu(&maps, &path_mtu)) {
		fprintf(stderr, "maglev-decap: %s: reading the maps failed\n",
			dev);
		goto out;
	}
	/* what redirects need, while second chance is on here */
	if (!(sc_flags & MLV_DECAP_SC_OFF))
		n_chk = mlv_sc_readiness("/proc/sys", dev,
					 any_v6(addrs, n_addrs < MLV_DECAP_ARGS_MAX_ADDRS ?
						n_addrs : MLV_DECAP_ARGS_MAX_ADDRS),
					 n_ports > 0, chk);
	for (size_t i = 0; i < n_chk; i++)
		missing += !chk[i].ok;
	if (prometheus) {
		print_prometheus(dev, ctr, chk, n_chk);
		rc = EXIT_OK;
		goto out;
	}
	printf("%s: %s id %u, %s mode\n", dev, MLV_DECAP_PROG_NAME,
	       maps.prog_id, mode_name(maps.mode_flags));
	printf("addresses:");
	for (size_t i = 0; i < n_addrs && i < MLV_DECAP_ARGS_MAX_ADDRS; i++)
		printf(" %s", mlv_ip_format(&addrs[i], text, sizeof(text)));
	printf("\ngue ports:");
	for (size_t i = 0; i < n_ports && i < MLV_DECAP_ARGS_MAX_PORTS; i++)
		printf(" %u", ports[i]);
	printf("%s\n", n_ports ? "" : " (none: IPIP only)");
	printf("sources:");
	for (size_t i = 0; i < n_sources && i < MLV_DECAP_ARGS_MAX_SOURCES; i++)
		printf(" %s", mlv_ip_prefix_format(&sources[i], text,
						   sizeof(text)));
	printf("%s\n", n_sources ? "" : " (none: nothing is decapsulated)");
	if (mlv_decap_tc_query(ifindex, &tc_id, why, sizeof(why)))
		printf("syn-ack mss clamp: %s\n", why);
	else if (path_mtu && tc_id)
		printf("syn-ack mss clamp: path MTU %u, %s id %u on egress\n",
		       path_mtu, MLV_DECAP_TC_PROG_NAME, tc_id);
	else if (path_mtu)
		printf("syn-ack mss clamp: path MTU %u, but no egress program "
		       "(attach again)\n", path_mtu);
	else
		printf("syn-ack mss clamp: off\n");
	printf("second chance: %s%s\n",
	       sc_flags & MLV_DECAP_SC_OFF ? "off (nothing handed on)" : "on",
	       sc_flags & MLV_DECAP_SC_DRAIN ?
	       ", draining (new connections go on to their next hop)" : "");
	if (n_chk)
		printf("second chance readiness: %s\n", missing ?
		       "NOT READY (packets that need a hand-on are "
		       "decapsulated here instead)" : "ready");
	for (size_t i = 0; i < n_chk; i++)
		printf("  %-7s %-22s %s\n", chk[i].ok ? "ok" : "MISSING",
		       chk[i].name, chk[i].detail);
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
	if (!strcmp(argv[1], "--version")) {
		printf("maglev-decap %s\n", MLV_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc - 1, argv + 1);
	if (argc == 4 && !strcmp(argv[1], "status") &&
	    !strcmp(argv[3], "--prometheus"))
		return cmd_status(argv[2], true);
	if (argc != 3) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "detach"))
		return cmd_detach(argv[2]);
	if (!strcmp(argv[1], "status"))
		return cmd_status(argv[2], false);
	if (!strcmp(argv[1], "drain"))
		return cmd_drain(argv[2], true);
	if (!strcmp(argv[1], "undrain"))
		return cmd_drain(argv[2], false);
	fprintf(stderr, "maglev-decap: unknown command %s\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
