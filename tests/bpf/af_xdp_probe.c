/* SPDX-License-Identifier: BSD-3-Clause */
/* af_xdp_probe: the daemon's AF_XDP steering path, end to end, for the
 * steer-af-xdp integration test. Starts DPDK with a net_af_xdp port on
 * IFNAME loading our steering object (xdp_prog=OBJ), finds the program
 * with mlv_xdp_steer_open_attached() once the RX queue is set up (the
 * PMD loads the program then), syncs one VIP, writes READY_FILE, and
 * counts frames arriving on the port: those for the VIP, and any other.
 * Exits 0 once WANT frames for the VIP have arrived and no other frame
 * has, 1 on timeout or a stray frame, 2 on bad usage.
 *
 *   af_xdp_probe IFNAME OBJ VIP PORT udp|tcp WANT TIMEOUT_S READY_FILE
 *
 * Runs inside the test's own namespace; DPDK with --in-memory --no-pci. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "tests/support/frames.h"
#include "control/steering/steering.h"

#define BURST 32

static int usage(void)
{
	fprintf(stderr, "usage: af_xdp_probe IFNAME OBJ VIP PORT udp|tcp WANT "
		"TIMEOUT_S READY_FILE\n");
	return 2;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Is the untagged frame TCP/UDP to the VIP (IPv4 or IPv6)? */
static int for_vip(const uint8_t *f, uint32_t len, const struct mlv_xdp_vip *v)
{
	uint32_t l4;

	if (len < 14)
		return 0;
	if (v->address.family == MLV_AF_INET && f[12] == 0x08 && f[13] == 0) {
		l4 = 14 + (uint32_t)(f[14] & 0xf) * 4;
		return len >= l4 + 4 && f[14 + 9] == v->protocol &&
		       !memcmp(f + 14 + 16, v->address.bytes, 4) &&
		       (f[l4 + 2] << 8 | f[l4 + 3]) == v->port;
	}
	if (v->address.family == MLV_AF_INET6 && f[12] == 0x86 &&
	    f[13] == 0xdd) {
		l4 = 14 + 40;
		return len >= l4 + 4 && f[14 + 6] == v->protocol &&
		       !memcmp(f + 14 + 24, v->address.bytes, 16) &&
		       (f[l4 + 2] << 8 | f[l4 + 3]) == v->port;
	}
	return 0;
}

static int setup_port(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(port, 1, 1, &conf) ||
	    rte_eth_rx_queue_setup(port, 0, 1024, rte_socket_id(), NULL,
				   pool) ||
	    rte_eth_tx_queue_setup(port, 0, 1024, rte_socket_id(), NULL) ||
	    rte_eth_dev_start(port))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	char vdev[512], why[256] = "";
	char *eal[] = { argv[0], "--in-memory", "--no-pci", "--no-telemetry",
			"--log-level=pmd.net.af_xdp:info", "-l", "0", vdev };
	struct mlv_xdp_steer *steer = NULL;
	struct mlv_xdp_vip v = { 0 };
	struct rte_mempool *pool;
	uint64_t ctr[MLV_STEER_CTR__COUNT];
	unsigned long want, got = 0, stray = 0;
	double deadline;
	uint16_t port;
	FILE *ready;
	int rc = 1;

	if (argc != 9)
		return usage();
	if (!mlv_ip_parse(argv[3], &v.address))
		return usage();
	v.port = (uint16_t)atoi(argv[4]);
	v.protocol = !strcmp(argv[5], "udp") ? IPPROTO_UDP : IPPROTO_TCP;
	want = strtoul(argv[6], NULL, 10);
	snprintf(vdev, sizeof(vdev),
		 "--vdev=net_af_xdp0,iface=%s,start_queue=0,queue_count=1,"
		 "xdp_prog=%s", argv[1], argv[2]);

	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])), eal) < 0) {
		fprintf(stderr, "af_xdp_probe: EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("probe", 4096, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	if (!pool || rte_eth_dev_get_port_by_name("net_af_xdp0", &port) ||
	    setup_port(port, pool)) {
		fprintf(stderr, "af_xdp_probe: port setup failed\n");
		goto out;
	}
	/* what the daemon does after its ports are up */
	if (mlv_xdp_steer_open_attached(argv[1], &steer, why, sizeof(why))) {
		fprintf(stderr, "af_xdp_probe: %s\n", why);
		goto out;
	}
	if (mlv_xdp_steer_sync(steer, &v, 1, NULL)) {
		fprintf(stderr, "af_xdp_probe: %s\n",
			mlv_xdp_steer_error(steer));
		goto out;
	}
	ready = fopen(argv[8], "w");
	if (!ready || fclose(ready)) {
		perror(argv[8]);
		goto out;
	}

	deadline = now_s() + atof(argv[7]);
	while (got < want && now_s() < deadline) {
		struct rte_mbuf *m[BURST];
		uint16_t n = rte_eth_rx_burst(port, 0, m, BURST);

		for (uint16_t i = 0; i < n; i++) {
			if (for_vip(rte_pktmbuf_mtod(m[i], const uint8_t *),
				    m[i]->data_len, &v))
				got++;
			else
				stray++;
			rte_pktmbuf_free(m[i]);
		}
	}
	if (mlv_xdp_steer_counters(steer, ctr) == MLV_OK)
		for (unsigned i = 0; i < MLV_STEER_CTR__COUNT; i++)
			printf("steer %s %llu\n", mlv_xdp_steer_counter_name(i),
			       (unsigned long long)ctr[i]);
	printf("vip frames %lu of %lu, other frames %lu\n", got, want, stray);
	rc = got >= want && !stray ? 0 : 1;
out:
	mlv_xdp_steer_close(steer);
	if (rte_eth_dev_get_port_by_name("net_af_xdp0", &port) == 0) {
		rte_eth_dev_stop(port);
		rte_eth_dev_close(port);   /* the PMD detaches the program */
	}
	rte_eal_cleanup();
	return rc;
}
