/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's packet path and poll loop (dataplane/worker/worker.c, forward.c,
 * port.c) on a real DPDK port: an rte_ring-backed ethdev, opened through
 * mlv_ports_open like any other device. Frames come from
 * tests/support/frames.c. EAL runs without hugepages or shared files (--no-huge --no-shconf).
 *
 * Covered: every frame lands in exactly one counter; the encapsulated
 * frame carries the original IP packet; a flow keeps its backend across a
 * table change and is re-selected when its backend leaves; the VIP memo
 * forgets a generation once another is published; a full TX
 * queue is counted and leaks no mbuf; and the real worker loop forwards
 * while the control thread publishes hundreds of generations (run under
 * ASan in CI: a generation freed too early would be a use-after-free).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "control/config/config.h"
#include "control/generation/generation.h"
#include "control/generation/moves.h"
#include "control/publish/publish.h"
#include "control/generation/stats.h"
#include "dataplane/packet/flow_hash.h"
#include "dataplane/packet/parse.h"
#include "dataplane/worker/port.h"
#include "dataplane/worker/worker.h"
#include "tests/support/frames.h"
#include "tests/support/config_load.h"

#define RX_RING 1024
#define TX_RING 64            /* holds 63: small enough to overflow */
#define NEXT_HOP "02:00:00:00:00:99"

static const uint8_t next_hop[6] = { 2, 0, 0, 0, 0, 0x99 };

struct env {
	struct rte_mempool *pool;
	struct rte_ring *rx, *tx;
	struct mlv_ports ports;
	struct mlv_stats *stats;
	struct mlv_publisher *pub;
	struct mlv_worker *w;
	struct mlv_config *cfg;
	unsigned worker_lcore;
	uint32_t number;
	struct mlv_flow_tally *tally[1];
	struct mlv_flow_tally_set tallies;
};

static struct env E;

/* Backends b1..b3 (weight 1) plus `extra` (a YAML flow line or "").
 * `skip` names a backend to leave out. */
static struct mlv_config *config(const char *skip, const char *extra)
{
	static const char *const names[] = { "b1", "b2", "b3" };
	char text[4096], backends[1024] = "";
	size_t used = 0;

	for (int i = 0; i < 3; i++) {
		if (skip && strcmp(skip, names[i]) == 0)
			continue;
		used += (size_t)snprintf(backends + used, sizeof(backends) - used,
			"      - {name: %s, address: 10.99.1.%d, weight: 1}\n",
			names[i], 11 + i);
	}
	snprintf(text, sizeof(text),
		 "dataplane:\n"
		 "  workers: 1\n"
		 "  ports:\n"
		 "    - {name: ext, device: net_ring_lb, address: 10.99.0.1, "
		 "address6: \"fd00:99::1\", next_hop: \"" NEXT_HOP "\"}\n"
		 "  conntrack: {entries_per_worker: 1024}\n"
		 "vips:\n"
		 "  - name: web\n"
		 "    address: 192.0.2.10\n"
		 "    port: 80\n"
		 "    protocol: tcp\n"
		 "    forwarding: ipip\n"
		 "    table_size: 251\n"
		 "    health: {type: none}\n"
		 "    backends:\n%s%s",
		 backends, extra);
	return config_load_ok(text, strlen(text));
}

static void publish(struct mlv_config *cfg)
{
	struct mlv_generation *gen = NULL;
	struct mlv_gen_build_opts opts = { .tallies = &E.tallies };

	assert_int_equal(mlv_gen_build_opt(cfg, E.ports.info, 1, ++E.number,
					   NULL, NULL, mlv_publish_current(E.pub),
					   &opts, &gen),
			 MLV_OK);
	mlv_gen_tally_bind(gen);
	assert_int_equal(mlv_publish(E.pub, gen), MLV_OK);
}

static int setup(void **state)
{
	char *argv[] = { "test_worker", "--no-shconf", "--no-pci", "--no-huge",
			 "-m", "256", "-l", "0-1", "--no-telemetry",
			 "--log-level=3", NULL };
	struct mlv_publish_hooks hooks = { mlv_stats_track, mlv_stats_fold, NULL };
	struct mlv_ct_params ct = { 1024, 300000, 5000, 10000, 30000, 30000 };
	struct mlv_worker_params wp = { 0 };

	(void)state;
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return -1;
	E.worker_lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	E.pool = rte_pktmbuf_pool_create("test_pool", 4095, 0, 0,
					 RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	E.rx = rte_ring_create("test_rx", RX_RING, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	E.tx = rte_ring_create("test_tx", TX_RING, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!E.pool || !E.rx || !E.tx ||
	    rte_eth_from_rings("lb", &E.rx, 1, &E.tx, 1, 0) < 0)
		return -1;
	E.cfg = config(NULL, "");
	if (mlv_ports_open(&E.ports, E.cfg, &E.worker_lcore, 1) != MLV_OK ||
	    mlv_stats_create(&E.stats) != MLV_OK)
		return -1;
	hooks.ctx = E.stats;
	if (mlv_publish_create(1, &hooks, &E.pub) != MLV_OK)
		return -1;
	wp.lcore = E.worker_lcore;
	wp.pub = E.pub;
	wp.ct = &ct;
	wp.ports = &E.ports;
	wp.idle = MLV_IDLE_ADAPTIVE;
	wp.idle_max_sleep_us = 50;
	if (mlv_worker_create(&wp, &E.w) != MLV_OK)
		return -1;
	E.tally[0] = mlv_worker_tally(E.w);
	E.tallies.n_workers = 1;
	E.tallies.per_worker = E.tally;
	publish(E.cfg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mlv_publish_destroy(E.pub);
	mlv_stats_destroy(E.stats);
	mlv_worker_destroy(E.w);
	mlv_ports_close(&E.ports);
	mlv_config_free(E.cfg);
	rte_eal_cleanup();
	return 0;
}

/* ---- frames ---- */

static struct rte_mbuf *mbuf_from(const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(E.pool);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memcpy(p, data, len);
	return m;
}

static struct rte_mbuf *frame(const struct frame_spec *s)
{
	uint8_t buf[2048];
	uint32_t len = frame_build(buf, sizeof(buf), s, NULL, NULL);

	assert_true(len > 0);
	return mbuf_from(buf, len);
}

static struct rte_mbuf *tcp_to_vip(uint16_t sport, uint32_t payload, bool df)
{
	struct frame_spec s;

	frame_spec_init(&s, 4, 6);
	s.sport = sport;
	s.payload_len = payload;
	s.df = df;
	return frame(&s);
}

/* Start each test from zero counters and an empty TX ring, so one
 * failing test does not cascade into the next. */
static void counters_zero(void)
{
	struct rte_mbuf *m[TX_RING];

	memset(&E.w->ctr, 0, sizeof(E.w->ctr));
	rte_pktmbuf_free_bulk(m, rte_ring_dequeue_burst(E.tx, (void **)m,
							TX_RING, NULL));
}

static uint32_t now_ms(void)
{
	return 1000;
}

static void forward(struct rte_mbuf **m, uint16_t n)
{
	mlv_forward_burst(E.w, mlv_publish_current(E.pub), &E.w->rxq[0], m, n,
			  now_ms());
	mlv_worker_flush(E.w);
}

/* Take what the port transmitted. */
static unsigned take_tx(struct rte_mbuf **out, unsigned cap)
{
	return rte_ring_dequeue_burst(E.tx, (void **)out, cap, NULL);
}

static uint64_t outcomes_and_drops(void)
{
	uint64_t sum = E.w->ctr.ctr[MLV_CTR_FORWARDED] +
		       E.w->ctr.ctr[MLV_CTR_ICMP_SENT] +
		       E.w->ctr.ctr[MLV_CTR_EXCEPTION];

	for (int i = 0; i < MLV_DROP__COUNT; i++)
		sum += E.w->ctr.drop[i];
	return sum;
}

/* The outer IPv4 destination of an IPIP frame (host order last byte). */
static uint8_t backend_of(struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	assert_memory_equal(p, next_hop, 6);
	assert_int_equal(p[12], 0x08);
	assert_int_equal(p[13], 0x00);
	assert_int_equal(p[14 + 9], 4);           /* IPPROTO_IPIP */
	return p[14 + 19];
}

/* The worker's drops for the VIP named name in the current generation. */
static struct mlv_vip_drops vip_drops_of(const char *name)
{
	const struct mlv_generation *g = mlv_publish_current(E.pub);
	const struct mlv_gen_vip *v = mlv_gen_find_vip_named(g, name);

	assert_non_null(v);
	return g->vip_drops[0][mlv_gen_vip_index(g, v)];
}

/* ---- tests ---- */

static void test_every_frame_counted_once(void **state)
{
	struct rte_mbuf *m[16], *out[16];
	struct frame_spec s;
	uint8_t ip[2048], arp[60] = { 0 };
	uint32_t ip_len;
	unsigned avail = rte_mempool_avail_count(E.pool), n_out;
	uint16_t n = 0;

	(void)state;
	counters_zero();
	/* 4 flows to the VIP */
	for (int i = 0; i < 4; i++)
		m[n++] = tcp_to_vip((uint16_t)(41000 + i), 100, true);
	/* not a VIP */
	frame_spec_init(&s, 4, 17);
	frame_addr(s.dst, "192.0.2.99");
	m[n++] = frame(&s);
	/* not IP (ARP) */
	memset(arp, 0xff, 6);
	arp[12] = 0x08;
	arp[13] = 0x06;
	m[n++] = mbuf_from(arp, sizeof(arp));
	/* truncated: a TCP frame cut inside its IPv4 header */
	frame_spec_init(&s, 4, 6);
	ip_len = frame_build(ip, sizeof(ip), &s, NULL, NULL);
	assert_true(ip_len > 40);
	m[n++] = mbuf_from(ip, 14 + 10);
	/* echo request to the VIP */
	frame_spec_init(&s, 4, 1);
	s.icmp_type = 8;
	m[n++] = frame(&s);
	/* too big after IPIP (1500 - 20 room): DF -> ICMP reply, else drop */
	m[n++] = tcp_to_vip(42000, 1500 - 40, true);
	m[n++] = tcp_to_vip(42001, 1500 - 40, false);

	struct mlv_vip_drops web_before = vip_drops_of("web"), web_after;

	forward(m, n);
	/* the VIP's own drops are also counted on it; the others on none */
	web_after = vip_drops_of("web");
	assert_int_equal(web_after.v[MLV_VDROP_ICMP_ECHO] -
			 web_before.v[MLV_VDROP_ICMP_ECHO], 1);
	assert_int_equal(web_after.v[MLV_VDROP_TOO_BIG] -
			 web_before.v[MLV_VDROP_TOO_BIG], 1);
	assert_int_equal(web_after.v[MLV_VDROP_NO_BACKEND] -
			 web_before.v[MLV_VDROP_NO_BACKEND], 0);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_RX_PACKETS], n);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_FORWARDED], 4);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_ICMP_SENT], 1);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_NOT_VIP], 1);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_NOT_IP], 1);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_TRUNCATED], 1);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_ICMP_ECHO], 1);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_TOO_BIG], 1);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_NEW], 4);
	assert_int_equal(outcomes_and_drops(), n);

	n_out = take_tx(out, 16);
	assert_int_equal(n_out, 5);
	/* the ICMP reply goes back to the client's MAC, as ICMP type 3/4 */
	for (unsigned i = 0; i < n_out; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(out[i], const uint8_t *);

		if (p[14 + 9] == 1) {
			assert_memory_equal(p, s.src_mac, 6);
			assert_int_equal(p[14 + 20], 3);
			assert_int_equal(p[14 + 21], 4);
		} else {
			backend_of(out[i]);
		}
	}
	rte_pktmbuf_free_bulk(out, n_out);
	/* every dropped mbuf went back to the pool */
	assert_int_equal(rte_mempool_avail_count(E.pool), avail);
}

static void test_encapsulated_frame_carries_the_packet(void **state)
{
	struct rte_mbuf *m, *out;
	struct frame_spec s;
	uint8_t orig[2048];
	uint32_t l3_off, len;
	const uint8_t *p;

	(void)state;
	counters_zero();
	frame_spec_init(&s, 4, 6);
	s.sport = 43000;
	s.payload_len = 200;
	s.vlan = true;           /* the tag goes with the old L2 header */
	s.vlan_tci = 7;
	s.eth_pad = 6;           /* trailing padding is not forwarded */
	len = frame_build(orig, sizeof(orig), &s, &l3_off, NULL);
	m = mbuf_from(orig, len);
	forward(&m, 1);
	assert_int_equal(take_tx(&out, 1), 1);
	p = rte_pktmbuf_mtod(out, const uint8_t *);
	backend_of(out);
	/* Ethernet + outer IPv4 (20) + the original IP packet, unchanged */
	assert_int_equal(out->pkt_len, 14 + 20 + (len - l3_off - 6));
	assert_memory_equal(p + 14 + 20, orig + l3_off, len - l3_off - 6);
	assert_true(frame_ip_checksums_ok(p + 14, out->pkt_len - 14));
	rte_pktmbuf_free(out);
}

/* Send one frame of flow sport; return the backend's last address byte. */
static uint8_t send_flow(uint16_t sport)
{
	struct rte_mbuf *m = tcp_to_vip(sport, 10, true), *out;
	uint8_t b;

	forward(&m, 1);
	assert_int_equal(take_tx(&out, 1), 1);
	b = backend_of(out);
	rte_pktmbuf_free(out);
	return b;
}

/* One TCP segment with flags of flow sport; returns the backend's last
 * address byte. */
static uint8_t send_flags(uint16_t sport, uint8_t flags)
{
	struct frame_spec s;
	struct rte_mbuf *m, *out;
	uint8_t b;

	frame_spec_init(&s, 4, 6);
	s.sport = sport;
	s.tcp_flags = flags;
	m = frame(&s);
	forward(&m, 1);
	assert_int_equal(take_tx(&out, 1), 1);
	b = backend_of(out);
	rte_pktmbuf_free(out);
	return b;
}

/* The current generation's backend named name (NULL if absent). */
static const struct mlv_gen_backend *gen_backend(const char *name)
{
	const struct mlv_generation *g = mlv_publish_current(E.pub);

	return mlv_gen_find_backend_named(mlv_gen_find_vip_named(g, "web"), name);
}

/* Tracked flows of uid by class, as the control plane reads them. */
static void flows_of(uint32_t uid, uint64_t out[2])
{
	mlv_flow_tally_backend(&E.tallies, uid, out);
}

/* Tracked-flow counts belong to the flows, not to a generation: they
 * change class with the TCP state, survive publishes with no packet in
 * between (with per-generation counts, every backend read 0 after one),
 * and follow a flow re-selected when its backend leaves. web has no
 * max_load: no VIP count is kept for it. */
static void test_tracked_counts_survive_publishes(void **state)
{
	enum { N = 18 };
	static const char *const names[] = { "b1", "b2", "b3" };
	uint32_t uid[3], vip_uid;
	uint64_t base[3][2], now[2], vip_base;
	uint32_t sent[3] = { 0 }, gone = 0;
	uint8_t first[N], victim;
	struct mlv_config *without;

	(void)state;
	counters_zero();
	for (int b = 0; b < 3; b++) {
		uid[b] = gen_backend(names[b])->uid;
		flows_of(uid[b], base[b]);
	}
	vip_uid = mlv_gen_find_vip_named(mlv_publish_current(E.pub), "web")->uid;
	vip_base = mlv_flow_tally_vip(&E.tallies, vip_uid);
	for (int i = 0; i < N; i++) {
		first[i] = send_flags((uint16_t)(47000 + i), MLV_TCP_SYN);
		sent[first[i] - 11]++;
	}
	for (int b = 0; b < 3; b++) {
		flows_of(uid[b], now);
		assert_int_equal(now[0], base[b][0]);
		assert_int_equal(now[1], base[b][1] + sent[b]);   /* opening */
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(send_flags((uint16_t)(47000 + i), MLV_TCP_ACK),
				 first[i]);
	for (int b = 0; b < 3; b++) {
		flows_of(uid[b], now);
		assert_int_equal(now[0], base[b][0] + sent[b]);   /* established */
		assert_int_equal(now[1], base[b][1]);
	}
	/* publishes with no packet: nothing changes, through the new
	 * generation's eyes too */
	publish(E.cfg);
	publish(E.cfg);
	for (int b = 0; b < 3; b++) {
		assert_int_equal(gen_backend(names[b])->uid, uid[b]);
		assert_int_equal(mlv_gen_backend_tracked(mlv_publish_current(E.pub),
							 gen_backend(names[b])),
				 base[b][0] + base[b][1] + sent[b]);
	}
	assert_int_equal(mlv_flow_tally_vip(&E.tallies, vip_uid), vip_base);
	/* flow 0's backend leaves: its flows stay counted on it until their
	 * next packet re-selects them, then count where they went */
	victim = first[0];
	without = config(names[victim - 11], "");
	publish(without);
	assert_null(gen_backend(names[victim - 11]));
	flows_of(uid[victim - 11], now);
	assert_int_equal(now[0], base[victim - 11][0] + sent[victim - 11]);
	for (int i = 0; i < N; i++) {
		uint8_t b = send_flags((uint16_t)(47000 + i), MLV_TCP_ACK);

		if (first[i] == victim) {
			assert_int_not_equal(b, victim);
			gone++;
		}
	}
	flows_of(uid[victim - 11], now);
	assert_int_equal(now[0], base[victim - 11][0]);
	assert_int_equal(gone, sent[victim - 11]);
	{
		uint64_t others = 0, was = 0;

		for (int b = 0; b < 3; b++) {
			if (b == victim - 11)
				continue;
			flows_of(uid[b], now);
			others += now[0];
			was += base[b][0] + sent[b];
		}
		assert_int_equal(others, was + gone);
	}
	assert_int_equal(mlv_flow_tally_vip(&E.tallies, vip_uid), vip_base);
	/* they close: inactive until they leave the table */
	for (int i = 0; i < N; i++)
		send_flags((uint16_t)(47000 + i), MLV_TCP_FIN | MLV_TCP_ACK);
	for (int b = 0; b < 3; b++) {
		if (b == victim - 11)
			continue;
		flows_of(uid[b], now);
		assert_int_equal(now[0], base[b][0]);
	}
	assert_int_equal(mlv_flow_tally_vip(&E.tallies, vip_uid), vip_base);
	mlv_config_free(without);
	publish(E.cfg);
	mlv_publish_wait(E.pub);
}

static void test_flows_keep_backend_until_it_leaves(void **state)
{
	enum { N = 24 };
	uint8_t first[N], again[N];
	struct mlv_config *heavy;
	int moved_to_b4 = 0, gone = 0;
	uint8_t victim;

	(void)state;
	counters_zero();
	for (int i = 0; i < N; i++)
		first[i] = send_flow((uint16_t)(44000 + i));
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_NEW], N);
	for (int i = 0; i < N; i++)
		assert_int_equal(send_flow((uint16_t)(44000 + i)), first[i]);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_NEW], N);

	/* A heavy new backend takes almost every slot; tracked flows stay. */
	heavy = config(NULL, "      - {name: b4, address: 10.99.1.14, weight: 1000}\n");
	publish(heavy);
	for (int i = 0; i < N; i++)
		assert_int_equal(send_flow((uint16_t)(44000 + i)), first[i]);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_RESELECTED], 0);
	/* while new flows mostly land on b4 (.14) */
	for (int i = 0; i < N; i++)
		moved_to_b4 += send_flow((uint16_t)(45000 + i)) == 14;
	assert_true(moved_to_b4 > N / 2);

	/* The backend of flow 0 leaves: its flows are re-selected, the
	 * others keep theirs. */
	victim = first[0];
	mlv_config_free(heavy);
	heavy = config(victim == 11 ? "b1" : victim == 12 ? "b2" : "b3",
		       "      - {name: b4, address: 10.99.1.14, weight: 1000}\n");
	publish(heavy);
	for (int i = 0; i < N; i++) {
		again[i] = send_flow((uint16_t)(44000 + i));
		if (first[i] == victim) {
			gone++;
			assert_int_not_equal(again[i], victim);
		} else {
			assert_int_equal(again[i], first[i]);
		}
	}
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_RESELECTED], gone);
	/* re-selected once, then remembered */
	for (int i = 0; i < N; i++)
		assert_int_equal(send_flow((uint16_t)(44000 + i)), again[i]);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_RESELECTED], gone);
	mlv_config_free(heavy);
	publish(E.cfg);
	mlv_publish_wait(E.pub);
}

/* web as a gue VIP with second chance, b1..b3 and, with heavy, b4 of
 * weight 1000 (which takes most slots). */
static struct mlv_config *config_sc(bool heavy)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "dataplane:\n"
		 "  workers: 1\n"
		 "  ports:\n"
		 "    - {name: ext, device: net_ring_lb, address: 10.99.0.1, "
		 "address6: \"fd00:99::1\", next_hop: \"" NEXT_HOP "\"}\n"
		 "  conntrack: {entries_per_worker: 1024}\n"
		 "vips:\n"
		 "  - name: web\n"
		 "    address: 192.0.2.10\n"
		 "    port: 80\n"
		 "    protocol: tcp\n"
		 "    forwarding: gue\n"
		 "    second_chance: {enabled: true, window: 1h}\n"
		 "    table_size: 251\n"
		 "    health: {type: none}\n"
		 "    backends:\n"
		 "      - {name: b1, address: 10.99.1.11, weight: 1}\n"
		 "      - {name: b2, address: 10.99.1.12, weight: 1}\n"
		 "      - {name: b3, address: 10.99.1.13, weight: 1}\n%s",
		 heavy ? "      - {name: b4, address: 10.99.1.14, weight: 1000}\n"
		       : "");
	return config_load_ok(text, strlen(text));
}

/* The outer IPv4 destination's last byte of a GUE frame. */
static uint8_t gue_backend_of(struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	assert_int_equal(p[14 + 9], 17);          /* UDP: GUE */
	return p[14 + 19];
}

static uint8_t send_gue(uint16_t sport, uint8_t flags)
{
	struct frame_spec s;
	struct rte_mbuf *m, *out;
	uint8_t b;

	frame_spec_init(&s, 4, 6);
	s.sport = sport;
	s.tcp_flags = flags;
	m = frame(&s);
	forward(&m, 1);
	assert_int_equal(take_tx(&out, 1), 1);
	b = gue_backend_of(out);
	rte_pktmbuf_free(out);
	return b;
}

/* The last address byte of the owner of flow sport's slot in vip. */
static uint8_t owner_of(const struct mlv_gen_vip *vip, uint16_t sport)
{
	struct frame_spec s;
	struct mlv_flow_key k = { 0 };
	uint32_t h, slot;

	frame_spec_init(&s, 4, 6);
	memcpy(k.src, s.src, 4);
	memcpy(k.dst, s.dst, 4);
	k.sport = htons(sport);
	k.dport = htons(s.dport);
	k.proto = 6;
	k.family = 4;
	h = mlv_gen_slot_hash(vip, &k, false, mlv_flow_hash(&k));
	slot = h % vip->table_size;
	return vip->backends[vip->table[slot]].address.bytes[3];
}

/* Second chance: a TCP segment of a connection this worker does not
 * track goes where it most likely lives, the slot's previous owner
 * while the window names one (a connection older than the change), and
 * stays tracked there; a SYN goes to the owner; a slot that did not
 * change goes to its owner. The old owners are read from the previous
 * generation's own table. */
static void test_picked_up_flow_goes_to_likely_holder(void **state)
{
	enum { N = 32 };
	struct mlv_config *c3 = config_sc(false), *c4 = config_sc(true);
	const struct mlv_generation *g1, *g2;
	int changed = 0;

	(void)state;
	counters_zero();
	publish(c3);
	g1 = mlv_publish_current(E.pub);
	publish(c4);
	g2 = mlv_publish_current(E.pub);
	for (int i = 0; i < N; i++) {
		uint16_t sp = (uint16_t)(50000 + i);
		uint8_t was = owner_of(mlv_gen_find_vip_named(g1, "web"), sp);
		uint8_t now = owner_of(mlv_gen_find_vip_named(g2, "web"), sp);

		changed += was != now;
		assert_int_equal(send_gue(sp, 0x10), was);
		/* tracked there from now on */
		assert_int_equal(send_gue(sp, 0x18), was);
		/* a new connection of the same slot's flow hash goes to the
		 * owner: another port, a SYN */
		assert_int_equal(send_gue((uint16_t)(50500 + i), 0x02),
				 owner_of(mlv_gen_find_vip_named(g2, "web"),
					  (uint16_t)(50500 + i)));
	}
	assert_true(changed > N / 2);   /* b4 took most slots */
	mlv_config_free(c4);
	mlv_config_free(c3);
	publish(E.cfg);
	mlv_publish_wait(E.pub);
}

/* The VIP memo outlives a burst but not a generation: after a publish
 * that takes b1 out of the VIP, new flows (one per burst, so every look-up
 * after the first would come from the memo) reach only the new
 * generation's backends. With the old generation's VIP remembered (the
 * reset disabled), 8 of the 24 went to b1. */
static void test_vip_memo_follows_the_generation(void **state)
{
	enum { N = 24 };
	struct mlv_config *without_b1 = config("b1", "");
	int to_b1 = 0;

	(void)state;
	counters_zero();
	for (int i = 0; i < N; i++)
		to_b1 += send_flow((uint16_t)(47000 + i)) == 11;
	assert_true(to_b1 > 0);   /* b1 takes its share before */
	publish(without_b1);
	mlv_publish_wait(E.pub);
	to_b1 = 0;
	for (int i = 0; i < N; i++)
		to_b1 += send_flow((uint16_t)(47100 + i)) == 11;
	assert_int_equal(to_b1, 0);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_FORWARDED], 2 * N);
	mlv_config_free(without_b1);
	publish(E.cfg);
	mlv_publish_wait(E.pub);
}

/* Frames of one burst interleaving three VIPs (in runs, alternating,
 * and mixed) each reach a backend of their own VIP: the VIP memo of the
 * burst (dataplane/worker/forward.c) never hands one frame another's VIP. */
static void test_interleaved_vips_in_one_burst(void **state)
{
	static const char more_vips[] =
		"  - {name: dns, address: 192.0.2.20, port: 80, protocol: tcp, "
		"table_size: 251, health: {type: none}, backends: ["
		"{name: d1, address: 10.99.2.1}, {name: d2, address: 10.99.2.2}]}\n"
		"  - {name: api, address: 192.0.2.30, port: 80, protocol: tcp, "
		"table_size: 251, health: {type: none}, backends: ["
		"{name: a1, address: 10.99.3.1}]}\n";
	/* VIP of each frame: 0 web (10.99.1.x), 1 dns (10.99.2.x),
	 * 2 api (10.99.3.x) */
	static const uint8_t pattern[] = { 0, 1, 0, 1, 0, 1, 2, 2, 0, 2, 1, 2,
					   0, 0, 1, 1, 2, 0, 1, 2, 1, 0 };
	static const char *const vip_addr[] = { "192.0.2.10", "192.0.2.20",
						"192.0.2.30" };
	enum { N = sizeof(pattern) };
	struct rte_mbuf *m[N], *out[N];
	struct mlv_config *cfg = config(NULL, more_vips);

	(void)state;
	publish(cfg);
	counters_zero();
	for (unsigned i = 0; i < N; i++) {
		struct frame_spec s;

		frame_spec_init(&s, 4, 6);
		frame_addr(s.dst, vip_addr[pattern[i]]);
		s.sport = (uint16_t)(47000 + i);
		s.payload_len = 10;
		m[i] = frame(&s);
	}
	forward(m, N);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_FORWARDED], N);
	assert_int_equal(take_tx(out, N), N);
	for (unsigned i = 0; i < N; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(out[i], const uint8_t *);

		backend_of(out[i]);
		/* in order (the inner destination is frame i's VIP) ... */
		assert_int_equal(p[14 + 20 + 16], 192);
		assert_int_equal(p[14 + 20 + 19], 10 * (pattern[i] + 1));
		/* ... and to one of that VIP's backends (outer destination
		 * 10.99.<VIP>.x) */
		assert_int_equal(p[14 + 18], pattern[i] + 1);
	}
	rte_pktmbuf_free_bulk(out, N);
	mlv_config_free(cfg);
	publish(E.cfg);
	mlv_publish_wait(E.pub);
}

/* A new flow no backend can take (a VIP whose backend list is empty) is
 * dropped as NO_BACKEND and claims nothing: no entry is made, so no
 * tracked flow is evicted for a frame that goes nowhere. */
static void test_no_backend_claims_nothing(void **state)
{
	static const char empty_vip[] =
		"  - {name: empty, address: 192.0.2.20, port: 80, protocol: tcp, "
		"table_size: 251, health: {type: none}, backends: []}\n";
	enum { N = 24 };
	struct mlv_config *cfg = config(NULL, empty_vip);
	struct rte_mbuf *m[N], *out[N];
	struct mlv_ct_stats before;
	uint32_t occupancy;

	(void)state;
	publish(cfg);
	mlv_publish_wait(E.pub);
	counters_zero();
	for (unsigned i = 0; i < N; i++)
		m[i] = tcp_to_vip((uint16_t)(48000 + i), 10, true);
	forward(m, N);   /* tracked flows of web */
	assert_int_equal(take_tx(out, N), N);
	rte_pktmbuf_free_bulk(out, N);
	occupancy = mlv_ct_occupancy(E.w->ct);
	before = *mlv_ct_get_stats(E.w->ct);
	assert_true(occupancy >= N);
	for (unsigned i = 0; i < N; i++) {
		struct frame_spec s;

		frame_spec_init(&s, 4, 6);
		frame_addr(s.dst, "192.0.2.20");
		s.sport = (uint16_t)(48100 + i);
		s.payload_len = 10;
		m[i] = frame(&s);
	}
	struct mlv_vip_drops web_before = vip_drops_of("web");

	forward(m, N);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_NO_BACKEND], N);
	/* on the VIP that has no backend, not on the other */
	assert_int_equal(vip_drops_of("empty").v[MLV_VDROP_NO_BACKEND], N);
	struct mlv_vip_drops web_now = vip_drops_of("web");

	assert_memory_equal(&web_before, &web_now, sizeof(web_before));
	assert_int_equal(take_tx(out, N), 0);
	assert_int_equal(mlv_ct_occupancy(E.w->ct), occupancy);
	assert_int_equal(mlv_ct_get_stats(E.w->ct)->inserts, before.inserts);
	assert_int_equal(mlv_ct_get_stats(E.w->ct)->evictions, before.evictions);
	mlv_config_free(cfg);
	publish(E.cfg);
	mlv_publish_wait(E.pub);
}

/* new_flows_per_second: a VIP's new flows beyond its bucket are dropped
 * as new_flow_limit and claim no entry; its established flows, and
 * another VIP's new flows, always pass; the bucket refills at the rate
 * and a publish does not refill it; a TCP segment without SYN of a
 * connection not tracked here is never dropped by the limit: over the
 * rate it goes by the table, without an entry. */
static struct rte_mbuf *tcp_to(const char *dst, uint16_t sport, uint8_t flags)
{
	struct frame_spec s;

	frame_spec_init(&s, 4, 6);
	frame_addr(s.dst, dst);
	s.sport = sport;
	s.tcp_flags = flags;
	s.payload_len = 10;
	return frame(&s);
}

/* Forward n segments with flags to dst from sports first.. at now;
 * returns how many left (the rest must be new_flow_limit drops). */
static unsigned segments_at(const char *dst, uint16_t first, unsigned n,
			    uint8_t flags, uint32_t now)
{
	struct rte_mbuf *m[32], *out[32];
	uint64_t limited = E.w->ctr.drop[MLV_DROP_NEW_FLOW_LIMIT];
	unsigned sent;

	assert_true(n <= 32);
	for (unsigned i = 0; i < n; i++)
		m[i] = tcp_to(dst, (uint16_t)(first + i), flags);
	mlv_forward_burst(E.w, mlv_publish_current(E.pub), &E.w->rxq[0], m,
			  (uint16_t)n, now);
	mlv_worker_flush(E.w);
	sent = take_tx(out, 32);
	rte_pktmbuf_free_bulk(out, sent);
	assert_int_equal(sent + (E.w->ctr.drop[MLV_DROP_NEW_FLOW_LIMIT] - limited),
			 n);
	return sent;
}

/* SYNs: connections opening. */
static unsigned flows_at(const char *dst, uint16_t first, unsigned n,
			 uint32_t now)
{
	return segments_at(dst, first, n, MLV_TCP_SYN, now);
}

static void test_new_flow_limit(void **state)
{
	static const char limited_vip[] =
		"  - {name: lim, address: 192.0.2.30, port: 80, protocol: tcp, "
		"table_size: 251, health: {type: none}, "
		"new_flows_per_second: 1000, new_flows_burst: 10, "
		"backends: [{name: l1, address: 10.99.1.31}]}\n";
	struct mlv_config *cfg = config(NULL, limited_vip);
	uint32_t occupancy;

	(void)state;
	publish(cfg);
	mlv_publish_wait(E.pub);
	counters_zero();
	/* a full bucket: 10 flows; 8 become established flows */
	assert_int_equal(flows_at("192.0.2.30", 61000, 8, 50000), 8);
	occupancy = mlv_ct_occupancy(E.w->ct);
	assert_int_equal(flows_at("192.0.2.30", 61100, 20, 50000), 2);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_NEW_FLOW_LIMIT], 18);
	assert_int_equal(vip_drops_of("lim").v[MLV_VDROP_NEW_FLOW_LIMIT], 18);
	assert_int_equal(vip_drops_of("web").v[MLV_VDROP_NEW_FLOW_LIMIT], 0);
	/* refused flows claim no entry */
	assert_int_equal(mlv_ct_occupancy(E.w->ct), occupancy + 2);
	/* established flows are never limited, nor another VIP's flows */
	assert_int_equal(segments_at("192.0.2.30", 61000, 8, MLV_TCP_ACK,
				     50000), 8);
	assert_int_equal(flows_at("192.0.2.10", 61200, 30, 50000), 30);
	/* connections tracked elsewhere (ACKs that miss) over the rate: by
	 * the table, no entry, counted */
	occupancy = mlv_ct_occupancy(E.w->ct);
	assert_int_equal(segments_at("192.0.2.30", 61800, 20, MLV_TCP_ACK,
				     50000), 20);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_LIMIT_UNTRACKED], 20);
	assert_int_equal(mlv_ct_occupancy(E.w->ct), occupancy);
	/* 1000/s: one flow a millisecond */
	assert_int_equal(flows_at("192.0.2.30", 61300, 20, 50005), 5);
	/* never more than the burst, however long the quiet */
	assert_int_equal(flows_at("192.0.2.30", 61400, 20, 60000), 10);
	/* a publish keeps the empty bucket empty */
	publish(cfg);
	mlv_publish_wait(E.pub);
	assert_int_equal(flows_at("192.0.2.30", 61500, 20, 60000), 0);
	assert_int_equal(flows_at("192.0.2.30", 61600, 20, 60003), 3);
	/* without the limit, everything passes */
	publish(E.cfg);
	mlv_publish_wait(E.pub);
	assert_int_equal(flows_at("192.0.2.10", 61700, 30, 60003), 30);
	mlv_config_free(cfg);
}

/* The key the parser builds for tcp_to_vip(sport, ...). */
static void tcp_key(uint16_t sport, struct mlv_flow_key *key)
{
	struct frame_spec s;
	struct mlv_pkt pkt;
	uint8_t buf[256];
	uint32_t len;

	frame_spec_init(&s, 4, 6);
	s.sport = sport;
	s.payload_len = 10;
	len = frame_build(buf, sizeof(buf), &s, NULL, NULL);
	assert_true(len > 0);
	assert_int_equal(mlv_parse(buf, len, &pkt), MLV_PARSE_OK);
	*key = pkt.key;
}

/* The control thread's question through the mailbox: one at a time,
 * answered by the worker's housekeeping with what its conntrack holds. */
static void test_query_mailbox(void **state)
{
	const struct mlv_gen_backend *b;
	struct mlv_worker_answer a;
	struct mlv_flow_key key;
	uint8_t backend;

	(void)state;
	counters_zero();
	backend = send_flow(46000);
	tcp_key(46000, &key);

	assert_true(mlv_worker_query_post(E.w, &key, mlv_flow_hash(&key)));
	assert_false(mlv_worker_query_answer(E.w, &a));
	/* the mailbox holds one question until it is answered */
	assert_false(mlv_worker_query_post(E.w, &key, mlv_flow_hash(&key)));
	mlv_worker_query_serve(E.w, now_ms());
	assert_true(mlv_worker_query_answer(E.w, &a));
	assert_true(a.found);
	assert_true(a.expires_in_ms > 0);
	assert_true(a.state != MLV_CT_FREE);
	b = mlv_gen_find_backend_uid(mlv_publish_current(E.pub), a.backend_uid);
	assert_non_null(b);
	assert_int_equal(b->address.bytes[3], backend);
	/* served once: a second round changes nothing */
	mlv_worker_query_serve(E.w, now_ms());
	assert_true(mlv_worker_query_answer(E.w, &a));
	assert_true(a.found);

	tcp_key(46001, &key);          /* never sent */
	assert_true(mlv_worker_query_post(E.w, &key, mlv_flow_hash(&key)));
	mlv_worker_query_serve(E.w, now_ms());
	assert_true(mlv_worker_query_answer(E.w, &a));
	assert_false(a.found);
}

/* The listing mailbox: one request at a time, answered by the worker's
 * housekeeping with pages that together hold each live flow once, none
 * beyond the cap asked for. */
static void test_list_mailbox(void **state)
{
	const struct mlv_worker_listing *l;
	uint32_t first = 0, total = 0, pages = 0, mine = 0;
	struct mlv_flow_key key;

	(void)state;
	counters_zero();
	send_flow(49000);   /* a flow this test knows */
	tcp_key(49000, &key);
	assert_true(mlv_worker_list_post(E.w, 0, 4));
	assert_null(mlv_worker_list_answer(E.w));
	assert_false(mlv_worker_list_post(E.w, 0, 4));   /* one at a time */
	mlv_worker_list_serve(E.w, now_ms());
	l = mlv_worker_list_answer(E.w);
	assert_non_null(l);
	assert_true(l->n <= 4);
	for (;;) {
		for (uint32_t i = 0; i < l->n; i++) {
			struct mlv_ct_view v;

			mlv_ct_entry_view(&l->e[i], &v);
			mine += v.family == 4 && v.sport == key.sport &&
				!memcmp(v.src, key.src, 4);
		}
		total += l->n;
		pages++;
		first = l->next;
		if (first == 0)
			break;
		assert_true(mlv_worker_list_post(E.w, first, 4));
		mlv_worker_list_serve(E.w, now_ms());
		l = mlv_worker_list_answer(E.w);
		assert_non_null(l);
		assert_true(l->n <= 4);
	}
	assert_int_equal(mine, 1);
	assert_int_equal(total, mlv_ct_occupancy(E.w->ct));
	assert_true(pages > 1);
}

static void test_tx_full_counted_not_leaked(void **state)
{
	enum { N = 100 };
	struct rte_mbuf *m[32], *out[TX_RING];
	unsigned avail = rte_mempool_avail_count(E.pool), n_out;
	int sent = 0;

	(void)state;
	counters_zero();
	while (sent < N) {
		uint16_t n = 0;

		for (; n < 32 && sent < N; n++, sent++)
			m[n] = tcp_to_vip((uint16_t)(46000 + sent), 10, true);
		forward(m, n);
	}
	n_out = take_tx(out, TX_RING);
	assert_int_equal(n_out, TX_RING - 1);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_FORWARDED], n_out);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_TX_FULL], N - n_out);
	assert_int_equal(outcomes_and_drops(), N);
	rte_pktmbuf_free_bulk(out, n_out);
	assert_int_equal(rte_mempool_avail_count(E.pool), avail);
}

/* A full TX queue with ICMP replies and forwarded frames in the same
 * buffer (one port: replies go back out of it, forwarded frames too):
 * each sent frame counts as what it was sent for, forwarded bytes only
 * for forwarded frames that left, and every frame left unsent, reply or
 * forwarded, as TX_FULL. Bursts of 20 forwarded; 24 replies + 8
 * forwarded; 16 + 16, of which the ring takes 11 (all replies). */
static void test_tx_full_mixed_outcomes(void **state)
{
	static const uint8_t replies[3] = { 0, 24, 16 }, sizes[3] = { 20, 32, 32 };
	struct rte_mbuf *m[32], *out[TX_RING];
	unsigned avail = rte_mempool_avail_count(E.pool), n_out, total = 0;
	uint64_t icmp_out = 0, fwd_out = 0, fwd_bytes = 0;
	uint16_t sport = 46500;

	(void)state;
	counters_zero();
	for (int b = 0; b < 3; b++) {
		for (int i = 0; i < sizes[b]; i++)
			/* too big for the VIP's mtu_room, DF: an ICMP reply */
			m[i] = i < replies[b] ? tcp_to_vip(sport++, 1470, true)
					      : tcp_to_vip(sport++, 10, true);
		forward(m, sizes[b]);
		total += sizes[b];
	}
	n_out = take_tx(out, TX_RING);
	assert_int_equal(n_out, TX_RING - 1);
	for (unsigned i = 0; i < n_out; i++) {
		const uint8_t *p = rte_pktmbuf_mtod(out[i], const uint8_t *);

		if (p[14 + 9] == IPPROTO_ICMP) {
			icmp_out++;
		} else {
			assert_int_equal(p[14 + 9], IPPROTO_IPIP);
			fwd_out++;
			fwd_bytes += out[i]->pkt_len;
		}
	}
	assert_int_equal(icmp_out, 24 + 11);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_ICMP_SENT], icmp_out);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_FORWARDED], fwd_out);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_TX_BYTES], fwd_bytes);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_TX_FULL], total - n_out);
	assert_int_equal(outcomes_and_drops(), total);
	rte_pktmbuf_free_bulk(out, n_out);
	assert_int_equal(rte_mempool_avail_count(E.pool), avail);
}

/* The real loop on the worker lcore while this (control) thread feeds
 * frames, drains the TX ring and publishes a new generation each round. */
static void test_worker_loop_with_publish_storm(void **state)
{
	enum { N = 5000, ROUNDS_MIN = 200 };
	struct mlv_flow_counters before, after;
	struct rte_mbuf *out[64];
	uint64_t fwd, fed = 0, done;
	uint32_t first_gen = E.number, rounds = 0;

	(void)state;
	counters_zero();
	mlv_stats_vip(E.stats, mlv_publish_current(E.pub),
		      &mlv_publish_current(E.pub)->vips[0], &before);
	assert_int_equal(rte_eal_remote_launch(mlv_worker_run, E.w,
					       E.worker_lcore), 0);
	do {
		if (fed < N) {
			struct rte_mbuf *m = tcp_to_vip((uint16_t)(47000 + fed % 3000),
							10, true);

			if (rte_ring_enqueue(E.rx, m) == 0)
				fed++;
			else
				rte_pktmbuf_free(m);
		}
		rte_pktmbuf_free_bulk(out, take_tx(out, 64));
		if (rounds < ROUNDS_MIN || fed < N) {
			publish(E.cfg);
			rounds++;
		}
		mlv_publish_reclaim(E.pub);
		done = __atomic_load_n(&E.w->ctr.ctr[MLV_CTR_FORWARDED], __ATOMIC_RELAXED) +
		       __atomic_load_n(&E.w->ctr.drop[MLV_DROP_TX_FULL], __ATOMIC_RELAXED);
	} while (done < N || rounds < ROUNDS_MIN);

	mlv_worker_request_stop(E.w);
	assert_int_equal(rte_eal_wait_lcore(E.worker_lcore), 0);
	rte_pktmbuf_free_bulk(out, take_tx(out, 64));
	mlv_publish_wait(E.pub);
	assert_int_equal(mlv_publish_pending(E.pub), 0);

	assert_true(E.number - first_gen >= ROUNDS_MIN);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_RX_PACKETS], N);
	assert_int_equal(outcomes_and_drops(), N);
	fwd = E.w->ctr.ctr[MLV_CTR_FORWARDED];
	assert_true(fwd > 0);
	/* per-VIP counts survive the generations they were counted in
	 * (folded by the stats hook as each one was freed); they include
	 * frames a full TX ring refused afterwards */
	mlv_stats_vip(E.stats, mlv_publish_current(E.pub),
		      &mlv_publish_current(E.pub)->vips[0], &after);
	assert_int_equal(after.v[MLV_FLOW_PACKETS] - before.v[MLV_FLOW_PACKETS], N);
}

/* A source ACL is checked per packet: a reload that denies a tracked
 * flow's client cuts the flow (an acl_denied drop, on the VIP's row too),
 * an allow inside the deny lets it through again, and an unchanged ACL is
 * shared by the next generation rather than rebuilt. */
static void test_acl_reload_cuts_tracked_flow(void **state)
{
	struct mlv_config *deny = config(NULL,
		"    deny: [198.51.100.0/24]\n");
	struct mlv_config *carve = config(NULL,
		"    deny: [198.51.100.0/24]\n    allow: [198.51.100.0/30]\n");
	struct mlv_vip_drops before, after;
	const struct mlv_acl *acl;
	struct rte_mbuf *m[1], *out[4];

	(void)state;
	counters_zero();
	m[0] = tcp_to_vip(41500, 100, true);   /* from 198.51.100.1 */
	forward(m, 1);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_CT_NEW], 1);
	assert_int_equal(take_tx(out, 4), 1);
	rte_pktmbuf_free(out[0]);

	publish(deny);
	before = vip_drops_of("web");
	m[0] = tcp_to_vip(41500, 100, true);
	forward(m, 1);
	after = vip_drops_of("web");
	assert_int_equal(E.w->ctr.drop[MLV_DROP_ACL_DENIED], 1);
	assert_int_equal(after.v[MLV_VDROP_ACL_DENIED] -
			 before.v[MLV_VDROP_ACL_DENIED], 1);
	assert_int_equal(take_tx(out, 4), 0);

	acl = mlv_publish_current(E.pub)->vips[0].acl;
	assert_non_null(acl);
	publish(deny);
	assert_ptr_equal(mlv_publish_current(E.pub)->vips[0].acl, acl);

	publish(carve);
	assert_ptr_not_equal(mlv_publish_current(E.pub)->vips[0].acl, acl);
	m[0] = tcp_to_vip(41500, 100, true);
	forward(m, 1);
	assert_int_equal(E.w->ctr.drop[MLV_DROP_ACL_DENIED], 1);
	assert_int_equal(E.w->ctr.ctr[MLV_CTR_FORWARDED], 2);
	assert_int_equal(take_tx(out, 4), 1);
	rte_pktmbuf_free(out[0]);
	assert_int_equal(outcomes_and_drops(), 3);

	publish(E.cfg);
	assert_null(mlv_publish_current(E.pub)->vips[0].acl);
	mlv_config_free(carve);
	mlv_config_free(deny);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_frame_counted_once),
		cmocka_unit_test(test_encapsulated_frame_carries_the_packet),
		cmocka_unit_test(test_flows_keep_backend_until_it_leaves),
		cmocka_unit_test(test_picked_up_flow_goes_to_likely_holder),
		cmocka_unit_test(test_tracked_counts_survive_publishes),
		cmocka_unit_test(test_list_mailbox),
		cmocka_unit_test(test_vip_memo_follows_the_generation),
		cmocka_unit_test(test_interleaved_vips_in_one_burst),
		cmocka_unit_test(test_no_backend_claims_nothing),
		cmocka_unit_test(test_new_flow_limit),
		cmocka_unit_test(test_query_mailbox),
		cmocka_unit_test(test_tx_full_counted_not_leaked),
		cmocka_unit_test(test_tx_full_mixed_outcomes),
		cmocka_unit_test(test_acl_reload_cuts_tracked_flow),
		cmocka_unit_test(test_worker_loop_with_publish_storm),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
