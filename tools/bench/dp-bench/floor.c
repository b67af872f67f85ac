/* SPDX-License-Identifier: BSD-3-Clause */
/* dp-bench-floor: the reference forwarder of dp-bench. It does
 * only the work every connection-tracking load balancer must do
 * (floor_path.h), so its rate on dp-bench's input is the best any such
 * balancer could reach on this machine, measured rather than estimated;
 * maglevd's rate over it is maglevd's own overhead. docs/benchmarks.md,
 * "The floor", has the figures.
 *
 *   dp-bench-floor EAL-ARGS -- --ct-entries N --stats-file F
 *                  [--stats-interval-ms MS] [--mbufs N] [--mbuf-size B]
 *                  [--mtu M]
 *
 * Ports as dp-bench gives testpmd: port 0 receives (net_pcap), port 1
 * transmits (net_null); the first worker lcore forwards, the main lcore
 * rewrites the stats file F every MS milliseconds (JSON: pid, uptime_s,
 * rx_packets, tx_packets, misses, drops, unsent; renamed into place, so
 * a reader never sees half a file) until SIGINT or SIGTERM, then prints
 * the totals. The conntrack table has N entries (rounded up to whole
 * 4-way buckets) on hugepages, like maglevd's entries_per_worker; the
 * eight backends and addresses are those of dp-bench's maglevd
 * configuration (dp-bench.sh, write_config). Exit 0, or 1 with a message. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "tools/bench/dp-bench/floor_path.h"

/* maglevd's MLV_CT_MAX_ENTRIES */
#define MAX_CT_ENTRIES (1u << 28)
#define RING_SIZE 1024
/* testpmd's per-lcore mempool cache (DEF_MBUF_CACHE) */
#define POOL_CACHE 250

struct options {
	uint32_t ct_entries, mbufs, interval_ms;
	uint16_t mbuf_size, mtu;
	const char *stats_file;
};

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!s[0] || *end || errno || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"ct-entries", required_argument, NULL, 'c'},
		{"stats-file", required_argument, NULL, 's'},
		{"stats-interval-ms", required_argument, NULL, 'i'},
		{"mbufs", required_argument, NULL, 'n'},
		{"mbuf-size", required_argument, NULL, 'b'},
		{"mtu", required_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	uint32_t v;
	int c;

	*o = (struct options){.interval_ms = 100, .mbufs = 8191,
			      .mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE,
			      .mtu = 1500};
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		const char *what = NULL;

		switch (c) {
		case 'c':
			if (parse_u32(optarg, 1, MAX_CT_ENTRIES, &o->ct_entries))
				what = "--ct-entries takes 1..268435456";
			break;
		case 's': o->stats_file = optarg; break;
		case 'i':
			if (parse_u32(optarg, 1, 60000, &o->interval_ms))
				what = "--stats-interval-ms takes 1..60000";
			break;
		case 'n':
			if (parse_u32(optarg, 1024, 1u << 26, &o->mbufs))
				what = "--mbufs takes 1024..67108864";
			break;
		case 'b':
			if (parse_u32(optarg, 256, UINT16_MAX, &v))
				what = "--mbuf-size takes 256..65535";
			o->mbuf_size = (uint16_t)v;
			break;
		case 'm':
			if (parse_u32(optarg, 68, 9000, &v))
				what = "--mtu takes 68..9000";
			o->mtu = (uint16_t)v;
			break;
		default:
			what = "unknown option (see tools/bench/dp-bench/floor.c)";
		}
		if (what) {
			fprintf(stderr, "dp-bench-floor: %s\n", what);
			return -1;
		}
	}
	if (optind != argc || !o->ct_entries || !o->stats_file) {
		fprintf(stderr, "dp-bench-floor: --ct-entries and --stats-file "
			"are required\n");
		return -1;
	}
	return 0;
}

static int port_setup(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	uint16_t nb_rxd = RING_SIZE, nb_txd = RING_SIZE;
	int rc;

	memset(&conf, 0, sizeof(conf));
	if ((rc = rte_eth_dev_configure(port, 1, 1, &conf)) ||
	    (rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd)) ||
	    (rc = rte_eth_rx_queue_setup(port, 0, nb_rxd,
					 rte_eth_dev_socket_id(port), NULL,
					 pool)) ||
	    (rc = rte_eth_tx_queue_setup(port, 0, nb_txd,
					 rte_eth_dev_socket_id(port), NULL)) ||
	    (rc = rte_eth_dev_start(port))) {
		fprintf(stderr, "dp-bench-floor: port %u: %s\n", port,
			rte_strerror(-rc));
		return -1;
	}
	return 0;
}

/* dp-bench's maglevd configuration: next hop 02:00:00:00:00:03, the int
 * port's address 10.99.0.2, backends 10.99.1.11 .. 10.99.1.18. The
 * lookup table spreads slots over them in turn, as a Maglev table of
 * equal weights does on average. */
static void backends_init(struct floor_path *p)
{
	struct rte_ether_addr next_hop = {{0x02, 0, 0, 0, 0, 0x03}}, src;

	if (rte_eth_macaddr_get(p->tx_port, &src) != 0)
		memset(&src, 0, sizeof(src));
	for (uint32_t i = 0; i < FLOOR_MAX_BACKENDS; i++)
		floor_tmpl_init(&p->tmpl[i], &next_hop, &src,
				htonl(0x0a630002u), htonl(0x0a63010bu + i));
	for (uint32_t s = 0; s < FLOOR_LOOKUP_SIZE; s++)
		p->lookup[s] = (uint8_t)(s % FLOOR_MAX_BACKENDS);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct totals {
	uint64_t rx, tx, misses, drops, unsent;
};

/* Read while the worker runs, as testpmd reads its statistics: the
 * PMDs' counters and the worker's are written by one thread and read
 * here without ordering, so a snapshot may be a burst behind. */
static void read_totals(const struct floor_path *p, struct totals *t)
{
	struct rte_eth_stats rx, tx;

	memset(t, 0, sizeof(*t));
	if (rte_eth_stats_get(p->rx_port, &rx) == 0)
		t->rx = rx.ipackets;
	if (rte_eth_stats_get(p->tx_port, &tx) == 0)
		t->tx = tx.opackets;
	t->misses = __atomic_load_n(&p->misses, __ATOMIC_RELAXED);
	t->drops = __atomic_load_n(&p->drops, __ATOMIC_RELAXED);
	t->unsent = __atomic_load_n(&p->unsent, __ATOMIC_RELAXED);
}

/* Write the stats file whole under a temporary name, then rename it into
 * place: dp-bench's snapshot waits for the new inode. */
static int write_stats(const char *path, const struct floor_path *p,
		       double uptime_s)
{
	char tmp[4096];
	struct totals t;
	json_t *doc;
	int rc;

	read_totals(p, &t);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path,
			     (int)getpid()) >= sizeof(tmp))
		return -1;
	doc = json_pack("{s:I, s:f, s:I, s:I, s:I, s:I, s:I}",
			"pid", (json_int_t)getpid(), "uptime_s", uptime_s,
			"rx_packets", (json_int_t)t.rx,
			"tx_packets", (json_int_t)t.tx,
			"misses", (json_int_t)t.misses,
			"drops", (json_int_t)t.drops,
			"unsent", (json_int_t)t.unsent);
	if (!doc)
		return -1;
	rc = json_dump_file(doc, tmp, JSON_COMPACT);
	json_decref(doc);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "dp-bench-floor: cannot write %s\n", path);
	return rc;
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	struct rte_mempool *pool = NULL;
	struct floor_path *p = NULL;
	struct options o;
	struct totals t;
	unsigned lcore;
	double t0;
	int n, rc = 1, launched = 0;
	int started = 0;   /* ports 0 .. started-1 are running */

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "dp-bench-floor: EAL: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	/* rte_eal_init leaves the program name in argv[n] */
	if (parse_options(argc - n, argv + n, &o))
		goto out;
	if (rte_eth_dev_count_avail() != 2) {
		fprintf(stderr, "dp-bench-floor: needs two ports (rx, tx); "
			"%u found\n", rte_eth_dev_count_avail());
		goto out;
	}
	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "dp-bench-floor: needs a worker lcore "
			"(--lcores)\n");
		goto out;
	}
	p = rte_zmalloc_socket("floor_path", sizeof(*p), RTE_CACHE_LINE_SIZE,
			       (int)rte_lcore_to_socket_id(lcore));
	if (!p) {
		fprintf(stderr, "dp-bench-floor: cannot allocate the path\n");
		goto out;
	}
	/* port_setup starts them in this order */
	p->rx_port = 0;
	p->tx_port = 1;
	p->mtu = o.mtu;
	p->n_buckets = (o.ct_entries + FLOOR_WAYS - 1) / FLOOR_WAYS;
	p->entries = rte_zmalloc_socket("floor_conntrack",
					(size_t)p->n_buckets * FLOOR_WAYS *
						sizeof(struct floor_entry),
					FLOOR_WAYS * sizeof(struct floor_entry),
					(int)rte_lcore_to_socket_id(lcore));
	if (!p->entries) {
		fprintf(stderr, "dp-bench-floor: cannot allocate %u conntrack "
			"entries (hugepages?)\n", p->n_buckets * FLOOR_WAYS);
		goto out;
	}
	pool = rte_pktmbuf_pool_create("floor_pool", o.mbufs, POOL_CACHE, 0,
				       o.mbuf_size, (int)rte_socket_id());
	if (!pool) {
		fprintf(stderr, "dp-bench-floor: cannot create a pool of %u "
			"mbufs: %s\n", o.mbufs, rte_strerror(rte_errno));
		goto out;
	}
	for (; started < 2; started++)
		if (port_setup((uint16_t)started, pool))
			goto out;
	backends_init(p);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = mono_s();
	if (rte_eal_remote_launch(floor_run, p, lcore) != 0) {
		fprintf(stderr, "dp-bench-floor: cannot launch lcore %u\n",
			lcore);
		goto out;
	}
	launched = 1;
	rc = 0;
	while (!quit && rc == 0) {
		sleep_ms(o.interval_ms);
		rc = write_stats(o.stats_file, p, mono_s() - t0) ? 1 : 0;
	}
out:
	if (launched) {
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
		rte_eal_wait_lcore(lcore);
		read_totals(p, &t);
		printf("dp-bench-floor: rx %" PRIu64 " tx %" PRIu64
		       " misses %" PRIu64 " drops %" PRIu64 " unsent %" PRIu64
		       "\n", t.rx, t.tx, t.misses, t.drops, t.unsent);
	}
	for (int port = 0; port < started; port++)
		if (rte_eth_dev_stop((uint16_t)port) != 0 ||
		    rte_eth_dev_close((uint16_t)port) != 0)
			fprintf(stderr, "dp-bench-floor: cannot stop port %d\n",
				port);
	rte_mempool_free(pool);
	if (p)
		rte_free(p->entries);
	rte_free(p);
	if (rte_eal_cleanup() != 0)
		rc = 1;
	return rc;
}
