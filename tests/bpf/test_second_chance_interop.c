/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance end to end: the load balancer's encapsulation
 * (dataplane/packet/encap.c, mlv_encap_tmpl_init with second_chance and
 * mlv_encap_apply_sc, as the workers call them) against the backend's
 * program (dataplane/bpf/decap/xdp_decap.bpf.c, redirect.h) through
 * BPF_PROG_TEST_RUN, configured by tools/bin/maglev-decap's code. Where
 * test_second_chance.c builds its frames byte by byte, this one takes
 * them from the encapsulator, so both ends must agree on the wire format
 * of dataplane/bpf/common/second_chance.h:
 *  - each frame the encapsulator writes is first read back here against
 *    that header: the GUE header's Hlen, the block's kind, version,
 *    flags, hop count and slots, the inner packet after it, the outer
 *    checksums;
 *  - a TCP ACK of a flow with no socket here leaves for its first hop
 *    that is not this host, over outer IPv4 and IPv6, with one hop and
 *    two: the output is the input with the outer destination the hop,
 *    TTL / hop limit one less and the block marked redirected, the
 *    outer IPv4 header checksum and the IPv6 UDP checksum as recomputed
 *    here from scratch (the IPv4 UDP checksum stays 0), the MACs from
 *    the hop's neighbour entry;
 *  - that output, given to the hop's own decapsulator as it would
 *    arrive there, goes no further: the hop holds no socket for it
 *    either (one namespace), and the list has no later hop that is not
 *    the hop itself, so it is decapsulated (the inner packet,
 *    unchanged) and counted sc_exhausted or sc_self;
 *  - a SYN nothing listens for goes on the same way (sc_no_listener);
 *    SYNs with a listener and UDP are decapsulated: the inner packet as
 *    the load balancer got it, under decap_gue alone;
 *  - a block the encapsulator writes without hops (mlv_encap_apply on a
 *    second-chance template) is decapsulated, counted sc_no_hop.
 *
 * The network is test_second_chance.c's, in a namespace of its own: a
 * veth pair sc0/sc1, the hops' networks with permanent neighbour
 * entries, forwarding on. This backend's decapsulator is on sc0 (its
 * addresses LOCAL4 / LOCAL6); the hops' (their addresses HOP_*) on sc1.
 * Needs root (exits 77, skipped, without). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "dataplane/bpf/common/second_chance.h"
#include "dataplane/packet/encap.h"
#include "tests/bpf/bpf_test_env.h"
#include "tests/bpf/decap_test_config.h"
#include "tests/support/frames.h"
#include "tests/bpf/sc_net.h"
#include "tools/bin/maglev-decap/decap_ctl.h"

#define FRAME_CAP 2048

static const uint8_t LB_MAC[6] = { 0x02, 0, 0, 0, 0x99, 0x01 };
static const uint8_t BE_MAC[6] = { 0x02, 0, 0, 0, 0x01, 0x11 };
/* what the worker passes: the inner packet's TOS (DSCP AF11, not ECT)
 * and some flow hash */
#define INNER_TOS 0x28
#define FLOW_HASH 0x9e3779b9u
#define TCP_SYN 0x02
#define TCP_ACK 0x10
#define TCP_PSH 0x08
#define NO_CTR (-1)

/* A decapsulator: this backend's or the hops'. */
struct decap {
	int ifindex;
	struct mlv_decap_maps maps;
	int prog_fd;
};

static struct decap here = { .prog_fd = -1 }, hops = { .prog_fd = -1 };
static struct mlv_ip here_addrs[2], hop_addrs[4];
static const uint16_t gue_ports[1] = { GUE_PORT };
static struct mlv_ip_prefix lb_sources[2];

/* ---- the namespace ---- */

static int attach(struct decap *d, const char *dev,
		  const struct mlv_ip *addrs, size_t n_addrs)
{
	const struct mlv_decap_config cfg = {
		.addrs = addrs, .n_addrs = n_addrs,
		.gue_ports = gue_ports, .n_gue_ports = 1,
		.sources = lb_sources, .n_sources = 2,
	};
	char why[256] = "";
	int updated = -1;

	d->maps = (struct mlv_decap_maps){ .addrs_fd = -1, .ports_fd = -1,
					   .sources_fd = -1, .stats_fd = -1,
					   .syn_mss_fd = -1, .mss_cfg_fd = -1,
					   .sc_cfg_fd = -1 };
	d->ifindex = (int)if_nametoindex(dev);
	if (!d->ifindex ||
	    mlv_decap_attach(d->ifindex, MLV_DECAP_MODE_GENERIC, &cfg,
			     &updated, why, sizeof(why)) ||
	    mlv_decap_open(d->ifindex, &d->maps, why, sizeof(why))) {
		fprintf(stderr, "setup (%s): %s\n", dev, why);
		return -1;
	}
	d->prog_fd = bpf_prog_get_fd_by_id(d->maps.prog_id);
	return d->prog_fd < 0 ? -1 : 0;
}

/* Wait until no frame reaches the programs of progs[0..n) for half a
 * second (at most 10 s): the kernel's own frames after the links came
 * up (MLD reports when forwarding joins the routers' group, say) would
 * otherwise move a case's counters. */
static int wait_quiet(const struct mlv_decap_maps *const *progs, int n)
{
	uint64_t last = UINT64_MAX;
	int still = 0;

	for (int i = 0; i < 100 && still < 5; i++) {
		uint64_t sum = 0, c[MLV_DECAP_CTR__COUNT];

		for (int m = 0; m < n; m++) {
			if (mlv_decap_counters(progs[m], c) != MLV_OK)
				return -1;
			for (unsigned k = 0; k < MLV_DECAP_CTR__COUNT; k++)
				sum += c[k];
		}
		still = sum == last ? still + 1 : 0;
		last = sum;
		usleep(100 * 1000);
	}
	return still >= 5 ? 0 : -1;
}

static int group_setup(void **state)
{
	(void)state;
	bpf_test_private_netns();
	sc_net_make();
	if (!mlv_ip_parse(LOCAL4, &here_addrs[0]) ||
	    !mlv_ip_parse(LOCAL6, &here_addrs[1]) ||
	    !mlv_ip_parse(HOP_A4, &hop_addrs[0]) ||
	    !mlv_ip_parse(HOP_A6, &hop_addrs[1]) ||
	    !mlv_ip_parse(HOP_B4, &hop_addrs[2]) ||
	    !mlv_ip_parse(HOP_B6, &hop_addrs[3]) ||
	    mlv_ip_prefix_parse(LB_SRC4, &lb_sources[0]) ||
	    mlv_ip_prefix_parse(LB_SRC6, &lb_sources[1]))
		return -1;
	/* this backend on sc0; the hops' decapsulator, a program and maps
	 * of its own, on sc1 */
	if (attach(&here, "sc0", here_addrs, 2) ||
	    attach(&hops, "sc1", hop_addrs, 4))
		return -1;
	{
		const struct mlv_decap_maps *both[2] = { &here.maps, &hops.maps };

		return wait_quiet(both, 2);
	}
}

static void release(struct decap *d)
{
	int removed;

	if (d->prog_fd >= 0)
		close(d->prog_fd);
	mlv_decap_maps_close(&d->maps);
	if (d->ifindex)
		mlv_decap_detach(d->ifindex, &removed, NULL, 0);
}

static int group_teardown(void **state)
{
	(void)state;
	release(&hops);
	release(&here);
	return 0;
}

/* ---- the load balancer's frames ---- */

struct lb_case {
	uint8_t outer;            /* 4 or 6 */
	uint8_t inner;            /* 4 or 6 */
	uint8_t proto;            /* inner IPPROTO_TCP or IPPROTO_UDP */
	uint8_t tcp_flags;
	uint8_t n_hops;
	const char *hop[MLV_SC_MAX_HOPS];
};

static uint32_t alen_of(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

static uint32_t block_len_of(uint8_t family)
{
	return MLV_SC_HDR_LEN + MLV_SC_MAX_HOPS * alen_of(family);
}

/* The frame offset of the block: after Ethernet, the outer header (no
 * options, no extension headers), UDP and the GUE header. */
static uint32_t sc_off_of(uint8_t family)
{
	return 14 + (family == 4 ? 20 : 40) + 8 + 4;
}

/* The client's packet to the VIP (frames.c's default flow), built here
 * independently of dataplane/. */
static uint32_t inner_packet(uint8_t *buf, const struct lb_case *k)
{
	struct frame_spec s;
	uint32_t len;

	frame_spec_init(&s, k->inner, k->proto);
	if (k->proto == IPPROTO_UDP)
		s.dport = 53;
	s.tcp_flags = k->proto == IPPROTO_TCP ? k->tcp_flags : 0;
	s.tos = INNER_TOS;
	s.payload_len = 100;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

/* The template a worker holds for this backend of a GUE VIP with
 * second_chance. */
static void lb_template(struct mlv_encap_tmpl *t, const struct lb_case *k)
{
	struct mlv_encap_params p = { 0 };

	p.method = MLV_ENCAP_GUE;
	memcpy(p.src_mac, LB_MAC, 6);
	memcpy(p.dst_mac, BE_MAC, 6);
	p.outer_family = k->outer;
	frame_addr(p.outer_src, k->outer == 4 ? LB_SRC4 : LB_SRC6);
	frame_addr(p.outer_dst, k->outer == 4 ? LOCAL4 : LOCAL6);
	p.inner_family = k->inner;
	p.gue_port = GUE_PORT;
	p.second_chance = true;
	assert_int_equal(mlv_encap_tmpl_init(t, &p), 0);
	assert_int_not_equal(t->sc_off, 0);
	assert_int_equal(t->len, sc_off_of(k->outer) + block_len_of(k->outer));
}

/* The frame the load balancer sends for k, as a worker writes it: the
 * inner packet behind the template's room, then mlv_encap_apply_sc with
 * k's hops. */
static uint32_t lb_frame(uint8_t *f, const struct lb_case *k)
{
	uint8_t addr[MLV_SC_MAX_HOPS][16];
	const uint8_t *hop_ptr[MLV_SC_MAX_HOPS];
	struct mlv_encap_tmpl t;
	uint32_t ilen;

	lb_template(&t, k);
	ilen = inner_packet(f + t.len, k);
	for (unsigned i = 0; i < k->n_hops; i++) {
		assert_int_equal(frame_addr(addr[i], k->hop[i]), k->outer);
		hop_ptr[i] = addr[i];
	}
	mlv_encap_apply_sc(f, &t, (uint16_t)ilen, INNER_TOS, FLOW_HASH,
			   hop_ptr, k->n_hops);
	return t.len + ilen;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The frame f (len bytes) read back against second_chance.h and GUE as
 * the backend reads them, written with k's hops and flags (flags
 * besides MLV_SC_F_IPV6); the inner packet must follow the block. */
static void check_wire(const uint8_t *f, uint32_t len, const struct lb_case *k,
		       uint8_t flags)
{
	uint32_t alen = alen_of(k->outer), blen = block_len_of(k->outer);
	uint32_t off = sc_off_of(k->outer), hl = k->outer == 4 ? 20 : 40;
	const uint8_t *ip = f + 14, *udp = ip + hl, *gue = udp + 8;
	const uint8_t *sc = f + off;
	uint8_t inner[FRAME_CAP], addr[16];
	uint32_t ilen = inner_packet(inner, k);

	assert_int_equal(len, off + blen + ilen);
	assert_int_equal(rd16(f + 12), k->outer == 4 ? 0x0800 : 0x86dd);
	if (k->outer == 4) {
		assert_int_equal(ip[0], 0x45);
		assert_int_equal(ip[9], IPPROTO_UDP);
		assert_int_equal(rd16(ip + 2), len - 14);
		assert_int_equal(rd16(udp + 6), 0);     /* no UDP checksum */
	} else {
		assert_int_equal(ip[0] >> 4, 6);
		assert_int_equal(ip[6], IPPROTO_UDP);
		assert_int_equal(rd16(ip + 4), len - 14 - 40);
		assert_int_not_equal(rd16(udp + 6), 0);
	}
	assert_true(frame_ip_checksums_ok(ip, len - 14));
	assert_int_equal(rd16(udp + 2), GUE_PORT);
	assert_int_equal(rd16(udp + 4), len - 14 - hl);
	/* GUE: version 0, C 0, Hlen the block's words; the inner family's
	 * protocol; no flags */
	assert_int_equal(gue[0], blen / 4);
	assert_int_equal(gue[1], k->inner == 4 ? 4 : 41);
	assert_int_equal(gue[2] | gue[3], 0);
	/* the block */
	assert_int_equal(sc[0], MLV_SC_KIND);
	assert_int_equal(sc[1], MLV_SC_VERSION);
	assert_int_equal(sc[2], flags | (k->outer == 6 ? MLV_SC_F_IPV6 : 0));
	assert_int_equal(sc[3], k->n_hops);
	for (unsigned i = 0; i < MLV_SC_MAX_HOPS; i++) {
		memset(addr, 0, sizeof(addr));
		if (i < k->n_hops)
			frame_addr(addr, k->hop[i]);
		assert_memory_equal(sc + MLV_SC_HDR_LEN + i * alen, addr, alen);
	}
	assert_memory_equal(f + off + blen, inner, ilen);
}

/* ---- what the backend's program must make of them ---- */

/* What the stack gets when a frame with the MACs dst, src and k's inner
 * packet is decapsulated: the MACs kept, the inner family's ethertype,
 * the inner packet as it was. */
static uint32_t decapsulated(uint8_t *buf, const struct lb_case *k,
			     const uint8_t *dst, const uint8_t *src)
{
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = k->inner == 4 ? 0x08 : 0x86;
	buf[13] = k->inner == 4 ? 0x00 : 0xdd;
	return 14 + inner_packet(buf + 14, k);
}

/* The outer IPv6 packet's UDP checksum from scratch (0 sent as 0xFFFF). */

/* What leaves for hop (text, index at in the list) through the device
 * of MAC dev_mac toward hop_mac: the input frame with the outer
 * destination, the TTL / hop limit, the block's flags (redirected, the
 * index) and the MACs changed, the checksums redone from scratch. */
static void redirected(uint8_t *want, const uint8_t *in, uint32_t len,
		       uint8_t outer, const char *hop, uint8_t at,
		       const uint8_t *dev_mac, const uint8_t *hop_mac)
{
	uint8_t *ip = want + 14, addr[16];

	memcpy(want, in, len);
	memcpy(want, hop_mac, 6);
	memcpy(want + 6, dev_mac, 6);
	assert_int_equal(frame_addr(addr, hop), outer);
	want[sc_off_of(outer) + 2] |= (uint8_t)(MLV_SC_F_REDIRECTED |
						at << MLV_SC_F_AT_SHIFT);
	if (outer == 4) {
		memcpy(ip + 16, addr, 4);
		ip[8]--;
		ipv4_csum_fill(ip);
		/* the UDP checksum stays 0: none was sent */
	} else {
		memcpy(ip + 24, addr, 16);
		ip[7]--;
		udp_csum_fill(ip);
	}
}

/* Run frame through d's program as arriving on its device: it must
 * return action and count ctr and extra (or NO_CTR) once each, and
 * sc_carried (every frame here carries the encapsulator's block),
 * nothing else. Returns the output length; the output lands in out. */
static uint32_t run(const struct decap *d, const uint8_t *frame, uint32_t len,
		    uint8_t *out, int action, int ctr, int extra)
{
	uint64_t before[MLV_DECAP_CTR__COUNT], after[MLV_DECAP_CTR__COUNT];
	char moved[256] = "";
	uint32_t out_len = 0;
	size_t off = 0;
	int got = -1, bad = 0;

	assert_int_equal(mlv_decap_counters(&d->maps, before), MLV_OK);
	assert_int_equal(bpf_test_try_run_xdp_dev(d->prog_fd, d->ifindex,
						  frame, len, out, FRAME_CAP,
						  &out_len, &got), 0);
	assert_int_equal(mlv_decap_counters(&d->maps, after), MLV_OK);
	for (unsigned i = 0; i < MLV_DECAP_CTR__COUNT; i++) {
		uint64_t n = after[i] - before[i];

		bad |= n != (i == (unsigned)ctr || i == (unsigned)extra ||
			     i == MLV_DECAP_CTR_SC_CARRIED ? 1u : 0u);
		if (n && off < sizeof(moved))
			off += (size_t)snprintf(moved + off, sizeof(moved) - off,
						" %s+%llu",
						mlv_decap_counter_name(i),
						(unsigned long long)n);
	}
	if (bad)
		fail_msg("expected %s+1%s%s, counters moved:%s",
			 mlv_decap_counter_name((unsigned)ctr),
			 extra == NO_CTR ? "" : " ",
			 extra == NO_CTR ? "" :
			 mlv_decap_counter_name((unsigned)extra), moved);
	assert_int_equal(got, action);
	return out_len;
}

/* k's frame from the load balancer is sent on to hop: XDP_TX through sc0
 * toward hop A, XDP_REDIRECT through sc1 toward hop B, counted
 * redirected and why (or NO_CTR). Then the hops' decapsulator gets what
 * left, as the hop receives it, and decapsulates it: the inner packet,
 * counted sc_exhausted when the hop was the list's last, else sc_self
 * (the later hop is the hops' own address too). */
static void expect_redirect_why(const struct lb_case *k, const char *hop,
				int action, int why)
{
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint8_t out2[FRAME_CAP], want2[FRAME_CAP];
	bool via_sc0 = action == XDP_TX;
	const uint8_t *dev_mac = via_sc0 ? sc0_mac : sc1_mac;
	const uint8_t *hop_mac = via_sc0 ? hop_a_mac : hop_b_mac;
	uint32_t len = lb_frame(frame, k), want2_len;
	uint8_t at = MLV_SC_MAX_HOPS;

	for (uint8_t i = 0; i < k->n_hops; i++)
		if (!strcmp(k->hop[i], hop))
			at = i;
	assert_true(at < k->n_hops);
	check_wire(frame, len, k, 0);
	redirected(want, frame, len, k->outer, hop, at, dev_mac, hop_mac);
	assert_int_equal(run(&here, frame, len, out, action,
			     MLV_DECAP_CTR_REDIRECTED, why), len);
	assert_memory_equal(out, want, len);
	assert_true(frame_ip_checksums_ok(out + 14, len - 14));
	/* still the load balancer's frame, only marked */
	check_wire(out, len, k, (uint8_t)(MLV_SC_F_REDIRECTED |
					  at << MLV_SC_F_AT_SHIFT));

	want2_len = decapsulated(want2, k, hop_mac, dev_mac);
	assert_int_equal(run(&hops, out, len, out2, XDP_PASS,
			     MLV_DECAP_CTR_DECAP_GUE,
			     at + 1 == k->n_hops ? MLV_DECAP_CTR_SC_EXHAUSTED :
						   MLV_DECAP_CTR_SC_SELF),
			 want2_len);
	assert_memory_equal(out2, want2, want2_len);
	assert_true(frame_ip_checksums_ok(out2 + 14, want2_len - 14));
}

static void expect_redirect(const struct lb_case *k, const char *hop,
			    int action)
{
	expect_redirect_why(k, hop, action, NO_CTR);
}

/* k's frame from the load balancer is decapsulated here, counted
 * decap_gue and extra. */
static void expect_decap(const struct lb_case *k, int extra)
{
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint32_t len = lb_frame(frame, k);
	uint32_t want_len = decapsulated(want, k, BE_MAC, LB_MAC);

	check_wire(frame, len, k, 0);
	assert_int_equal(run(&here, frame, len, out, XDP_PASS,
			     MLV_DECAP_CTR_DECAP_GUE, extra), want_len);
	assert_memory_equal(out, want, want_len);
	assert_true(frame_ip_checksums_ok(out + 14, want_len - 14));
}

/* ---- the cases ---- */

/* A TCP ACK of no connection here goes to the first hop, one hop listed
 * or two, every family pair; data with it too. */
static void ack_goes_to_first_hop(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			const char *a = outer == 4 ? HOP_A4 : HOP_A6;
			const char *b = outer == 4 ? HOP_B4 : HOP_B6;
			struct lb_case k = { outer, inner, IPPROTO_TCP,
					     TCP_ACK, 1, { a } };

			expect_redirect(&k, a, XDP_TX);
			k.n_hops = 2;
			k.hop[1] = b;
			expect_redirect(&k, a, XDP_TX);
			k.tcp_flags = TCP_ACK | TCP_PSH;
			expect_redirect(&k, a, XDP_TX);
		}
}

/* This host first in the list: the second slot, where the encapsulator
 * writes it, is the hop. */
static void second_slot_when_first_is_here(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			const char *b = outer == 4 ? HOP_B4 : HOP_B6;
			struct lb_case k = { outer, inner, IPPROTO_TCP,
					     TCP_ACK, 2,
					     { outer == 4 ? LOCAL4 : LOCAL6,
					       b } };

			expect_redirect(&k, b, XDP_REDIRECT);
		}
}

/* A listener on port 80, any address, of family. */
static int listener_80(int family)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				    sizeof(one)), 0);
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (void *)&ss;

		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					    &one, sizeof(one)), 0);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(80);
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (void *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(80);
		len = sizeof(*sin);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* A SYN nothing here listens for goes on to the next hop; with a
 * listener it starts its connection where the load balancer chose. */
static void syn_goes_where_a_listener_is(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			const char *a = outer == 4 ? HOP_A4 : HOP_A6;
			struct lb_case k = { outer, inner, IPPROTO_TCP,
					     TCP_SYN, 1,
					     { a, outer == 4 ? HOP_B4 :
							       HOP_B6 } };
			int fd;

			expect_redirect_why(&k, a, XDP_TX,
					    MLV_DECAP_CTR_SC_NO_LISTENER);
			k.n_hops = 2;
			expect_redirect_why(&k, a, XDP_TX,
					    MLV_DECAP_CTR_SC_NO_LISTENER);
			fd = listener_80(inner == 4 ? AF_INET : AF_INET6);
			expect_decap(&k, NO_CTR);
			k.n_hops = 1;
			expect_decap(&k, NO_CTR);
			close(fd);
		}
}

/* UDP has no connection to look for. */
static void udp_is_decapsulated(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			struct lb_case k = { outer, inner, IPPROTO_UDP, 0, 1,
					     { outer == 4 ? HOP_A4 : HOP_A6,
					       outer == 4 ? HOP_B4 : HOP_B6 } };

			expect_decap(&k, NO_CTR);
			k.n_hops = 2;
			expect_decap(&k, NO_CTR);
		}
}

/* A second-chance template written by mlv_encap_apply (no hops at
 * hand): a valid block with none listed; the ACK is decapsulated here,
 * counted sc_no_hop. */
static void block_without_hops_is_decapsulated(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			struct lb_case k = { outer, inner, IPPROTO_TCP,
					     TCP_ACK, 0, { NULL } };
			uint8_t frame[FRAME_CAP], out[FRAME_CAP],
				want[FRAME_CAP];
			struct mlv_encap_tmpl t;
			uint32_t ilen, len, want_len;

			lb_template(&t, &k);
			ilen = inner_packet(frame + t.len, &k);
			mlv_encap_apply(frame, &t, (uint16_t)ilen, INNER_TOS,
					FLOW_HASH);
			len = t.len + ilen;
			check_wire(frame, len, &k, 0);
			want_len = decapsulated(want, &k, BE_MAC, LB_MAC);
			assert_int_equal(run(&here, frame, len, out, XDP_PASS,
					     MLV_DECAP_CTR_DECAP_GUE,
					     MLV_DECAP_CTR_SC_NO_HOP),
					 want_len);
			assert_memory_equal(out, want, want_len);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ack_goes_to_first_hop),
		cmocka_unit_test(second_slot_when_first_is_here),
		cmocka_unit_test(syn_goes_where_a_listener_is),
		cmocka_unit_test(udp_is_decapsulated),
		cmocka_unit_test(block_without_hops_is_decapsulated),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
