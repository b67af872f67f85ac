/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance on the backend (dataplane/bpf/decap/redirect.h) through
 * BPF_PROG_TEST_RUN, configured by tools/bin/maglev-decap's code. GUE
 * frames carrying a second-chance block (dataplane/bpf/common/
 * second_chance.h) are built here byte by byte (tests/support/frames.c);
 * each case asserts the action, the output frame exactly and which
 * counters moved:
 *  - a TCP packet of a flow with no socket here goes to its first hop
 *    that is not this host, still encapsulated: outer destination the
 *    hop, TTL / hop limit one less, the block marked redirected with
 *    the hop's index, MACs from the hop's neighbour entry, checksums as
 *    recomputed here from scratch; XDP_TX out of the receiving device,
 *    XDP_REDIRECT to another; so do a SYN nothing listens for, every
 *    SYN while the host drains, and an ICMP frag-needed / too-big about
 *    a connection not here;
 *  - a frame another backend sent on goes on to a later hop only, and
 *    the end of the list is decapsulated (the bound);
 *  - SYNs with a listener, UDP, flows with a socket here (a real
 *    connection, a syncookie handshake), malformed blocks, someone
 *    else's private data, no usable hop, TTL 1, unroutable hops and
 *    second chance switched off are decapsulated as any GUE frame,
 *    under their counters.
 *
 * The program's routes and sockets are those of the device the frame
 * arrives on, so the test makes its own network namespace: a veth pair
 * sc0/sc1 with the hops' networks and permanent neighbour entries,
 * forwarding on, the VIPs and the clients on lo. Only addresses inside
 * that namespace are used; it goes away with the process. Needs root
 * (exits 77, skipped, without). */
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

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "dataplane/bpf/common/second_chance.h"
#include "dataplane/bpf/decap/structs.h"
#include "tests/bpf/bpf_test_env.h"
#include "tests/bpf/decap_test_config.h"
#include "tests/support/frames.h"
#include "tests/bpf/sc_net.h"
#include "tools/bin/maglev-decap/decap_ctl.h"

#define FRAME_CAP 2048

static const uint8_t LB_MAC[6] = { 0x02, 0, 0, 0, 0x99, 0x01 };
static const uint8_t BE_MAC[6] = { 0x02, 0, 0, 0, 0x01, 0x11 };
/* nothing routes to the unroutable ones */
/* on sc0's network, with no neighbour entry */
#define UNRESOLVED4 "10.77.0.3"
#define UNRESOLVED6 "fd00:77::3"
#define NOWHERE4 "10.66.0.2"
#define NOWHERE6 "fd00:66::2"
/* frames.c's default flow: client 198.51.100.1 / 2001:db8:1::1 port
 * 40000 -> VIP 192.0.2.10 / 2001:db8::10 port 80 */
#define CLIENT4 "198.51.100.1"
#define CLIENT6 "2001:db8:1::1"
#define VIP4 "192.0.2.10"
#define VIP6 "2001:db8::10"
/* where the ICMP errors come from (a router toward the client) */
#define ROUTER4 "203.0.113.1"
#define ROUTER6 "2001:db8:ffff::1"
/* the port of the real listener (nothing listens on 80) */
#define LISTEN_PORT 8080
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10
#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define NO_CTR (-1)

static int sc0, sc1;
static struct mlv_decap_maps maps = { .addrs_fd = -1, .ports_fd = -1,
				      .sources_fd = -1, .stats_fd = -1 };
static int prog_fd = -1;
static struct mlv_ip local_addrs[2];
static const uint16_t gue_ports[1] = { GUE_PORT };
static struct mlv_ip_prefix lb_sources[2];

/* ---- the namespace ---- */

/* sc_net_make, and the flow's addresses on lo (the real sockets' ends) */
static void make_network(void)
{
	sc_net_make();
	sh("ip addr add " VIP4 "/32 dev lo && ip addr add " VIP6 "/128 dev lo && "
	   "ip addr add " CLIENT4 "/32 dev lo && "
	   "ip addr add " CLIENT6 "/128 dev lo");
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
	const struct mlv_decap_config cfg = {
		.addrs = local_addrs, .n_addrs = 2,
		.gue_ports = gue_ports, .n_gue_ports = 1,
		.sources = lb_sources, .n_sources = 2,
	};
	char why[256] = "";
	int updated = -1;

	(void)state;
	bpf_test_private_netns();
	make_network();
	sc0 = (int)if_nametoindex("sc0");
	sc1 = (int)if_nametoindex("sc1");
	if (!sc0 || !sc1 || !mlv_ip_parse(LOCAL4, &local_addrs[0]) ||
	    !mlv_ip_parse(LOCAL6, &local_addrs[1]) ||
	    mlv_ip_prefix_parse(LB_SRC4, &lb_sources[0]) ||
	    mlv_ip_prefix_parse(LB_SRC6, &lb_sources[1]))
		return -1;
	if (mlv_decap_attach(sc0, MLV_DECAP_MODE_GENERIC, &cfg, &updated, why,
			     sizeof(why)) ||
	    mlv_decap_open(sc0, &maps, why, sizeof(why))) {
		fprintf(stderr, "setup: %s\n", why);
		return -1;
	}
	prog_fd = bpf_prog_get_fd_by_id(maps.prog_id);
	if (prog_fd < 0)
		return -1;
	{
		const struct mlv_decap_maps *one[1] = { &maps };

		return wait_quiet(one, 1);
	}
}

static int group_teardown(void **state)
{
	int removed;

	(void)state;
	if (prog_fd >= 0)
		close(prog_fd);
	mlv_decap_maps_close(&maps);
	mlv_decap_detach(sc0, &removed, NULL, 0);
	return 0;
}

/* ---- frames ---- */

/* A second-chance GUE frame: the inner packet, the block, the outer
 * header, and the ways a block can be wrong. */
struct sc_case {
	uint8_t outer;            /* 4 or 6 */
	uint8_t inner;            /* 4 or 6 */
	uint8_t proto;            /* inner IPPROTO_TCP or IPPROTO_UDP */
	uint8_t tcp_flags;
	uint16_t sport, dport;    /* inner ports; 0: 40000, 80 */
	uint8_t n_hops;
	const char *hop[MLV_SC_MAX_HOPS];  /* every one given is written,
					    * past n_hops too */
	uint8_t sc_flags;         /* besides MLV_SC_F_IPV6 */
	uint8_t ttl;              /* 0: 64 */
	bool udp_csum;            /* outer IPv4: a UDP checksum, not 0 */
	/* what is wrong with the block */
	uint8_t kind, version;    /* 0: MLV_SC_KIND, MLV_SC_VERSION */
	uint8_t hops_field;       /* 0: n_hops */
	bool flip_ipv6;           /* MLV_SC_F_IPV6 not the outer family's */
	uint8_t block_len;        /* 0: the outer family's */
	/* the inner packet is an ICMP error from a router about the VIP's
	 * segment to the client (VIP:dport -> client:sport): frag-needed
	 * (3/4) / packet-too-big (2/0), or icmp_type if set */
	bool icmp;
	uint8_t icmp_type;
};

/* k's inner ICMP error: the quoted segment (the VIP's, to the client),
 * inside an ICMP message from the router to the VIP. */
static uint32_t inner_icmp(uint8_t *buf, const struct sc_case *k)
{
	struct frame_spec q, s;
	uint8_t quoted[128];
	uint32_t qlen, len;

	frame_spec_init(&q, k->inner, IPPROTO_TCP);
	frame_addr(q.src, k->inner == 4 ? VIP4 : VIP6);
	frame_addr(q.dst, k->inner == 4 ? CLIENT4 : CLIENT6);
	q.sport = k->dport ? k->dport : 80;
	q.dport = k->sport ? k->sport : 40000;
	q.tcp_flags = k->tcp_flags;
	q.payload_len = 0;
	qlen = frame_build_ip(quoted, sizeof(quoted), &q);
	assert_true(qlen > 0);
	frame_spec_init(&s, k->inner, k->inner == 4 ? IPPROTO_ICMP :
						      IPPROTO_ICMPV6);
	frame_addr(s.src, k->inner == 4 ? ROUTER4 : ROUTER6);
	frame_addr(s.dst, k->inner == 4 ? VIP4 : VIP6);
	s.icmp_type = k->icmp_type ? k->icmp_type : k->inner == 4 ? 3 : 2;
	s.icmp_code = k->icmp_type ? 0 : k->inner == 4 ? 4 : 0;
	s.icmp_rest = k->inner == 4 ? 1400 : 1400;
	s.payload = quoted;
	s.payload_len = qlen;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

static uint32_t inner_packet(uint8_t *buf, const struct sc_case *k)
{
	struct frame_spec s;
	uint32_t len;

	if (k->icmp)
		return inner_icmp(buf, k);
	frame_spec_init(&s, k->inner, k->proto);
	if (k->sport)
		s.sport = k->sport;
	if (k->dport)
		s.dport = k->dport;
	s.tcp_flags = k->proto == IPPROTO_TCP ? k->tcp_flags : 0;
	s.payload_len = 24;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

static uint32_t alen_of(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

static uint32_t block_len_of(const struct sc_case *k)
{
	return k->block_len ? k->block_len :
	       MLV_SC_HDR_LEN + MLV_SC_MAX_HOPS * alen_of(k->outer);
}

/* The GUE header and the block at b; returns their length. */
static uint32_t gue_and_block(uint8_t *b, const struct sc_case *k)
{
	uint32_t alen = alen_of(k->outer), blen = block_len_of(k);
	uint8_t *sc = b + 4, addr[16];
	bool v6 = (k->outer == 6) != k->flip_ipv6;

	b[0] = (uint8_t)(blen / 4);                  /* version 0, C 0, Hlen */
	b[1] = k->inner == 4 ? 4 : 41;
	b[2] = b[3] = 0;
	memset(sc, 0, blen);
	sc[0] = k->kind ? k->kind : MLV_SC_KIND;
	sc[1] = k->version ? k->version : MLV_SC_VERSION;
	sc[2] = (uint8_t)(k->sc_flags | (v6 ? MLV_SC_F_IPV6 : 0));
	sc[3] = k->hops_field ? k->hops_field : k->n_hops;
	for (unsigned i = 0; i < MLV_SC_MAX_HOPS; i++) {
		if (!k->hop[i])
			continue;
		assert_int_equal(frame_addr(addr, k->hop[i]), k->outer);
		if (MLV_SC_HDR_LEN + (i + 1) * alen <= blen)
			memcpy(sc + MLV_SC_HDR_LEN + i * alen, addr, alen);
	}
	return 4 + blen;
}

/* The UDP checksum of the outer packet at ip redone from scratch (the
 * value RFC 768 sends: 0 comes out as 0xFFFF). */

/* The frame a load balancer sends for k, into f; *inner_len set to the
 * inner packet's length. Over IPv4 its UDP checksum is 0 (as
 * dataplane/packet/encap.c writes it) unless k->udp_csum. */
static uint32_t sc_frame(uint8_t *f, const struct sc_case *k)
{
	uint8_t pl[FRAME_CAP];
	struct frame_spec s;
	uint32_t n, len;

	n = gue_and_block(pl, k);
	n += inner_packet(pl + n, k);
	frame_spec_init(&s, k->outer, IPPROTO_UDP);
	memcpy(s.src_mac, LB_MAC, 6);
	memcpy(s.dst_mac, BE_MAC, 6);
	frame_addr(s.src, k->outer == 4 ? LB_SRC4 : LB_SRC6);
	frame_addr(s.dst, k->outer == 4 ? LOCAL4 : LOCAL6);
	s.sport = 0x5eed;
	s.dport = GUE_PORT;
	s.ttl = k->ttl ? k->ttl : 64;
	s.payload = pl;
	s.payload_len = n;
	len = frame_build(f, FRAME_CAP, &s, NULL, NULL);
	assert_true(len > 0);
	if (k->outer == 4 && !k->udp_csum)
		f[14 + 20 + 6] = f[14 + 20 + 7] = 0;
	return len;
}

/* What the stack gets when k's frame is decapsulated: the frame's MACs,
 * the inner family's ethertype, the inner packet. */
static uint32_t decapsulated(uint8_t *buf, const struct sc_case *k)
{
	memcpy(buf, BE_MAC, 6);
	memcpy(buf + 6, LB_MAC, 6);
	buf[12] = k->inner == 4 ? 0x08 : 0x86;
	buf[13] = k->inner == 4 ? 0x00 : 0xdd;
	return 14 + inner_packet(buf + 14, k);
}

/* What leaves for hop (text, one of k's hops) through a device of MAC
 * dev_mac toward hop_mac: the input frame with the outer header
 * rewritten, the block marked redirected to the hop's index, every
 * checksum redone from scratch. */
static void redirected(uint8_t *want, const uint8_t *in, uint32_t len,
		       const struct sc_case *k, const char *hop,
		       const uint8_t *dev_mac, const uint8_t *hop_mac)
{
	uint8_t *ip = want + 14, addr[16];
	uint32_t sc_off = k->outer == 4 ? 14 + 20 + 8 + 4 : 14 + 40 + 8 + 4;

	unsigned at = MLV_SC_MAX_HOPS;

	/* the hop's index: where the list names it */
	for (unsigned i = 0; i < MLV_SC_MAX_HOPS; i++)
		if (k->hop[i] && !strcmp(k->hop[i], hop))
			at = i;
	assert_true(at < MLV_SC_MAX_HOPS);
	memcpy(want, in, len);
	memcpy(want, hop_mac, 6);
	memcpy(want + 6, dev_mac, 6);
	frame_addr(addr, hop);
	want[sc_off + 2] = (uint8_t)((want[sc_off + 2] & ~MLV_SC_F_AT_MASK) |
				     MLV_SC_F_REDIRECTED |
				     at << MLV_SC_F_AT_SHIFT);
	if (k->outer == 4) {
		memcpy(ip + 16, addr, 4);
		ip[8]--;
		ipv4_csum_fill(ip);
		if (k->udp_csum)
			udp_csum_fill(ip);
	} else {
		memcpy(ip + 24, addr, 16);
		ip[7]--;
		udp_csum_fill(ip);
	}
}

/* ---- running ---- */

/* Whether frame's GUE private data starts with second chance's kind
 * byte ('M'): read from the outer headers by their documented offsets. */
static bool has_sc_kind(const uint8_t *frame, uint32_t len)
{
	uint32_t l4;

	if (len < 14 + 40 + 12)
		return false;
	if (frame[12] == 0x08 && frame[13] == 0x00)
		l4 = 14 + (frame[14] & 15u) * 4;
	else if (frame[12] == 0x86 && frame[13] == 0xdd)
		l4 = 14 + 40;
	else
		return false;
	/* GUE's Hlen (words of private data), then its first byte */
	return l4 + 13 <= len && (frame[l4 + 8] & 31u) > 0 &&
	       frame[l4 + 12] == MLV_SC_KIND;
}

/* Run frame as arriving on sc0: the program must return action, and
 * count it under ctr (an outcome) and extra (another counter, or
 * NO_CTR), and sc_carried when the frame carries a block that is not
 * malformed, nothing else. Returns the output length. */
static uint32_t run(const uint8_t *frame, uint32_t len, uint8_t *out,
		    int action, int ctr, int extra)
{
	uint64_t before[MLV_DECAP_CTR__COUNT], after[MLV_DECAP_CTR__COUNT];
	char moved[256] = "";
	uint32_t out_len = 0;
	size_t off = 0;
	int got = -1, bad = 0;
	int carried = has_sc_kind(frame, len) &&
		      extra != MLV_DECAP_CTR_SC_MALFORMED ?
		      MLV_DECAP_CTR_SC_CARRIED : NO_CTR;

	assert_int_equal(mlv_decap_counters(&maps, before), MLV_OK);
	assert_int_equal(bpf_test_try_run_xdp_dev(prog_fd, sc0, frame, len,
						  out, FRAME_CAP, &out_len,
						  &got), 0);
	assert_int_equal(mlv_decap_counters(&maps, after), MLV_OK);
	for (unsigned i = 0; i < MLV_DECAP_CTR__COUNT; i++) {
		uint64_t d = after[i] - before[i];

		bad |= d != (i == (unsigned)ctr || i == (unsigned)extra ||
			     i == (unsigned)carried ? 1u : 0u);
		if (d && off < sizeof(moved))
			off += (size_t)snprintf(moved + off, sizeof(moved) - off,
						" %s+%llu",
						mlv_decap_counter_name(i),
						(unsigned long long)d);
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

/* k's frame must come out decapsulated, counted decap_gue and extra. */
static void expect_decap(const struct sc_case *k, int extra)
{
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint32_t len = sc_frame(frame, k);
	uint32_t want_len = decapsulated(want, k);

	assert_int_equal(run(frame, len, out, XDP_PASS,
			     MLV_DECAP_CTR_DECAP_GUE, extra), want_len);
	assert_memory_equal(out, want, want_len);
}

/* frame (k's, perhaps edited) must leave for hop, rewritten, with
 * action: XDP_TX through sc0 to hop A's MAC, XDP_REDIRECT through sc1
 * to hop B's. */
static void expect_redirect_why(const uint8_t *frame, uint32_t len,
				const struct sc_case *k, const char *hop,
				int action, int why)
{
	uint8_t out[FRAME_CAP], want[FRAME_CAP];
	bool via_sc0 = action == XDP_TX;

	redirected(want, frame, len, k, hop, via_sc0 ? sc0_mac : sc1_mac,
		   via_sc0 ? hop_a_mac : hop_b_mac);
	assert_int_equal(run(frame, len, out, action,
			     MLV_DECAP_CTR_REDIRECTED, why), len);
	assert_memory_equal(out, want, len);
	assert_true(frame_ip_checksums_ok(out + 14, len - 14));
}

static void expect_redirect_frame(const uint8_t *frame, uint32_t len,
				  const struct sc_case *k, const char *hop,
				  int action)
{
	expect_redirect_why(frame, len, k, hop, action, NO_CTR);
}

static void expect_redirect(const struct sc_case *k, const char *hop,
			    int action)
{
	uint8_t frame[FRAME_CAP];

	expect_redirect_frame(frame, sc_frame(frame, k), k, hop, action);
}

/* k's frame leaves for hop, counted redirected and why. */
static void expect_handed_on(const struct sc_case *k, const char *hop,
			     int action, int why)
{
	uint8_t frame[FRAME_CAP];

	expect_redirect_why(frame, sc_frame(frame, k), k, hop, action, why);
}

/* ---- a: outer IPv4 ---- */

static void ack_without_socket_goes_to_hop4(void **state)
{
	struct sc_case k = { 4, 4, IPPROTO_TCP, TCP_ACK, 0, 0, 1,
			     { HOP_A4 } };

	(void)state;
	expect_redirect(&k, HOP_A4, XDP_TX);
	/* the first hop of two; inner IPv6; FIN, RST and data too */
	k.n_hops = 2;
	k.hop[1] = HOP_B4;
	k.inner = 6;
	k.tcp_flags = TCP_FIN | TCP_ACK;
	expect_redirect(&k, HOP_A4, XDP_TX);
	k.tcp_flags = TCP_RST;
	expect_redirect(&k, HOP_A4, XDP_TX);
	/* another device: a redirect; this host as the first hop: the
	 * second; a UDP checksum the sender filled is kept right */
	k.hop[0] = LOCAL4;
	k.tcp_flags = TCP_ACK | TCP_PSH;
	k.udp_csum = true;
	expect_redirect(&k, HOP_B4, XDP_REDIRECT);
	k.inner = 4;
	k.ttl = 2;
	expect_redirect(&k, HOP_B4, XDP_REDIRECT);
}

/* ---- b: outer IPv6 ---- */

static void ack_without_socket_goes_to_hop6(void **state)
{
	struct sc_case k = { 6, 6, IPPROTO_TCP, TCP_ACK, 0, 0, 1,
			     { HOP_A6 } };

	(void)state;
	expect_redirect(&k, HOP_A6, XDP_TX);
	k.inner = 4;
	expect_redirect(&k, HOP_A6, XDP_TX);
	k.n_hops = 2;
	k.hop[0] = LOCAL6;
	k.hop[1] = HOP_B6;
	k.ttl = 2;
	expect_redirect(&k, HOP_B6, XDP_REDIRECT);
	k.inner = 6;
	k.sport = 1;
	k.dport = 65535;
	expect_redirect(&k, HOP_B6, XDP_REDIRECT);
}

/* ---- c, d, h: what is decapsulated whatever the sockets ---- */

/* A listener on the VIP's LISTEN_PORT of family (below). */
static int listener(uint8_t family);

/* A SYN nothing here listens for goes on (sc_no_listener); with a
 * listener it is this host's. */
static void syn_goes_where_a_listener_is(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			const char *a = outer == 4 ? HOP_A4 : HOP_A6;
			struct sc_case k = { outer, inner, IPPROTO_TCP,
					     TCP_SYN, 0, LISTEN_PORT, 1,
					     { a } };
			int lfd;

			expect_handed_on(&k, a, XDP_TX,
					 MLV_DECAP_CTR_SC_NO_LISTENER);
			lfd = listener(inner);
			expect_decap(&k, NO_CTR);
			/* another port: still nothing listens */
			k.dport = LISTEN_PORT + 1;
			expect_handed_on(&k, a, XDP_TX,
					 MLV_DECAP_CTR_SC_NO_LISTENER);
			close(lfd);
			/* no hop: this host answers (a reset) */
			k.n_hops = 0;
			k.hop[0] = NULL;
			expect_decap(&k, MLV_DECAP_CTR_SC_NO_HOP);
		}
}

/* A frame another backend sent on (redirected, to hop index at): held
 * here, decapsulated (sc_arrived); not, it goes on to a later hop only,
 * and past the last it is decapsulated (sc_exhausted): at most
 * MLV_SC_MAX_HOPS extra hops, never back. */
static void redirected_goes_on_to_later_hops_only(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2) {
		const char *a = outer == 4 ? HOP_A4 : HOP_A6;
		const char *b = outer == 4 ? HOP_B4 : HOP_B6;
		const char *self = outer == 4 ? LOCAL4 : LOCAL6;
		struct sc_case k = { outer, 4, IPPROTO_TCP, TCP_ACK, 0, 0, 1,
				     { a }, MLV_SC_F_REDIRECTED };

		/* sent to the only hop: nowhere further */
		expect_decap(&k, MLV_DECAP_CTR_SC_EXHAUSTED);
		/* sent to the first of two: on to the second, even though
		 * the first (a) routes too */
		k.n_hops = 2;
		k.hop[1] = b;
		expect_redirect(&k, b, XDP_REDIRECT);
		/* a SYN nothing listens for goes on the same way */
		k.tcp_flags = TCP_SYN;
		expect_handed_on(&k, b, XDP_REDIRECT,
				 MLV_DECAP_CTR_SC_NO_LISTENER);
		k.tcp_flags = TCP_ACK;
		/* sent to the second of two: the end */
		k.sc_flags = MLV_SC_F_REDIRECTED | 1 << MLV_SC_F_AT_SHIFT;
		expect_decap(&k, MLV_DECAP_CTR_SC_EXHAUSTED);
		/* the later hop is this host: nobody to send to */
		k.sc_flags = MLV_SC_F_REDIRECTED;
		k.hop[1] = self;
		expect_decap(&k, MLV_DECAP_CTR_SC_SELF);
	}
}

/* Two backends' programs in turn: what the first sends on, the second
 * (the hop it went to) sends on again to the next hop; the third hop
 * in a row would be past the list. The second backend is this one with
 * hop A's address among its own (decap_addrs), as hop A would be. */
static void a_chain_of_hops(void **state)
{
	const struct mlv_ip *saved = local_addrs;
	struct mlv_ip as_a[3];
	const struct mlv_decap_config cfg_a = {
		.addrs = as_a, .n_addrs = 3,
		.gue_ports = gue_ports, .n_gue_ports = 1,
		.sources = lb_sources, .n_sources = 2,
	};
	const struct mlv_decap_config cfg_here = {
		.addrs = saved, .n_addrs = 2,
		.gue_ports = gue_ports, .n_gue_ports = 1,
		.sources = lb_sources, .n_sources = 2,
	};
	struct sc_case k = { 4, 4, IPPROTO_TCP, TCP_ACK, 0, 0, 2,
			     { HOP_A4, HOP_B4 } };
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint32_t len = sc_frame(frame, &k), n;
	char why[256] = "";
	struct sc_case k2 = k;

	(void)state;
	/* the first backend: on to hop A (index 0) */
	redirected(want, frame, len, &k, HOP_A4, sc0_mac, hop_a_mac);
	n = run(frame, len, out, XDP_TX, MLV_DECAP_CTR_REDIRECTED, NO_CTR);
	assert_int_equal(n, len);
	assert_memory_equal(out, want, len);
	/* hop A: neither holds it; on to hop B (index 1) */
	as_a[0] = saved[0];
	as_a[1] = saved[1];
	assert_true(mlv_ip_parse(HOP_A4, &as_a[2]));
	assert_int_equal(mlv_decap_configure(&maps, &cfg_a, why,
					     sizeof(why)), MLV_OK);
	k2.sc_flags = MLV_SC_F_REDIRECTED;
	memcpy(frame, out, n);
	redirected(want, frame, n, &k2, HOP_B4, sc1_mac, hop_b_mac);
	assert_int_equal(run(frame, n, out, XDP_REDIRECT,
			     MLV_DECAP_CTR_REDIRECTED, NO_CTR), n);
	assert_memory_equal(out, want, n);
	assert_true(frame_ip_checksums_ok(out + 14, n - 14));
	/* the same frame at hop B (index 1, the last): decapsulated */
	memcpy(frame, out, n);
	assert_true(mlv_ip_parse(HOP_B4, &as_a[2]));
	assert_int_equal(mlv_decap_configure(&maps, &cfg_a, why,
					     sizeof(why)), MLV_OK);
	k2.sc_flags = MLV_SC_F_REDIRECTED | 1 << MLV_SC_F_AT_SHIFT;
	len = decapsulated(want, &k2);
	memcpy(want, frame, 12);        /* the MACs it arrived with */
	assert_int_equal(run(frame, n, out, XDP_PASS, MLV_DECAP_CTR_DECAP_GUE,
			     MLV_DECAP_CTR_SC_EXHAUSTED), len);
	assert_memory_equal(out, want, len);
	assert_int_equal(mlv_decap_configure(&maps, &cfg_here, why,
					     sizeof(why)), MLV_OK);
}

static void udp_is_never_redirected(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			struct sc_case k = { outer, inner, IPPROTO_UDP, 0, 0,
					     53, 1,
					     { outer == 4 ? HOP_A4 : HOP_A6 } };

			expect_decap(&k, NO_CTR);
		}
}

/* ---- e: blocks not as version 1 writes them ---- */

static void malformed_blocks_are_decapsulated(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2) {
		const char *a = outer == 4 ? HOP_A4 : HOP_A6;
		const char *b = outer == 4 ? HOP_B4 : HOP_B6;
		struct sc_case base = { outer, 4, IPPROTO_TCP, TCP_ACK, 0, 0,
					1, { a } };
		struct sc_case k;

		k = base;
		k.version = 2;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k = base;
		k.hops_field = 3;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		for (unsigned bit = 2; bit < 8; bit++) {
			k = base;
			k.sc_flags = (uint8_t)(1u << bit);
			expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		}
		k = base;
		k.hop[1] = b;                 /* a second slot, hops 1 */
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k = base;
		k.n_hops = 0;                 /* the first slot, hops 0 */
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k = base;
		k.flip_ipv6 = true;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		/* sent on to a hop index past the list */
		k = base;
		k.sc_flags = MLV_SC_F_REDIRECTED | 1 << MLV_SC_F_AT_SHIFT;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k.n_hops = 2;
		k.hop[1] = b;
		k.sc_flags = MLV_SC_F_REDIRECTED | 2 << MLV_SC_F_AT_SHIFT;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		/* Hlen of the other family, and one word short or long */
		k = base;
		k.block_len = outer == 4 ? MLV_SC_LEN6 : MLV_SC_LEN4;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k.block_len = (uint8_t)(block_len_of(&base) - 4);
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k.block_len = (uint8_t)(block_len_of(&base) + 4);
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
		k.block_len = 4;
		expect_decap(&k, MLV_DECAP_CTR_SC_MALFORMED);
	}
}

/* GUE private data that is not second chance's: skipped, decapsulated
 * as any GUE, whatever its length. */
static void foreign_private_data_is_skipped(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t words = 1; words <= 31; words += 5) {
			struct sc_case k = { outer, 6, IPPROTO_TCP, TCP_ACK, 0,
					     0, 1,
					     { outer == 4 ? HOP_A4 : HOP_A6 } };

			k.kind = 'X';
			k.block_len = (uint8_t)(words * 4);
			expect_decap(&k, NO_CTR);
		}
}

/* ---- f: no hop to send to ---- */

static void unusable_hops_decapsulate(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2) {
		const char *self = outer == 4 ? LOCAL4 : LOCAL6;
		struct sc_case k = { outer, 4, IPPROTO_TCP, TCP_ACK };

		expect_decap(&k, MLV_DECAP_CTR_SC_NO_HOP);
		k.n_hops = 1;
		k.hop[0] = self;
		expect_decap(&k, MLV_DECAP_CTR_SC_SELF);
		k.n_hops = 2;
		k.hop[1] = self;
		expect_decap(&k, MLV_DECAP_CTR_SC_SELF);
		k.n_hops = 1;
		k.hop[0] = outer == 4 ? HOP_A4 : HOP_A6;
		k.hop[1] = NULL;
		k.ttl = 1;
		expect_decap(&k, MLV_DECAP_CTR_SC_TTL);
		k.ttl = 0;                    /* back to 64 */
		k.hop[0] = outer == 4 ? NOWHERE4 : NOWHERE6;
		expect_decap(&k, MLV_DECAP_CTR_SC_NO_ROUTE);
		/* an unroutable first hop is not skipped for the second */
		k.n_hops = 2;
		k.hop[1] = outer == 4 ? HOP_A4 : HOP_A6;
		expect_decap(&k, MLV_DECAP_CTR_SC_NO_ROUTE);
	}
}

/* A hop whose neighbour is not resolved: the frame goes to the stack
 * rewritten (destination, flag, checksums; the stack decrements the TTL
 * and resolves the neighbour as it forwards it), MACs as they came,
 * counted redirected. */
static void unresolved_hop_goes_through_the_stack(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2) {
		const char *hop = outer == 4 ? UNRESOLVED4 : UNRESOLVED6;
		struct sc_case k = { outer, 4, IPPROTO_TCP, TCP_ACK, 0, 0, 1,
				     { hop } };
		uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
		uint32_t len = sc_frame(frame, &k);
		uint8_t *ip = want + 14;

		/* redirected() with the TTL back and the MACs unchanged */
		redirected(want, frame, len, &k, hop, frame + 6, frame);
		if (outer == 4) {
			ip[8]++;
			ipv4_csum_fill(ip);
		} else {
			ip[7]++;
			udp_csum_fill(ip);
		}
		assert_int_equal(run(frame, len, out, XDP_PASS,
				     MLV_DECAP_CTR_REDIRECTED, NO_CTR), len);
		assert_memory_equal(out, want, len);
		assert_true(frame_ip_checksums_ok(out + 14, len - 14));
	}
}

/* ---- g: sockets here ---- */

/* addr:port of family into *ss (*len its size). */
static void sockaddr_of(uint8_t family, const char *addr, uint16_t port,
			struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == 4) {
		struct sockaddr_in *sin = (void *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, addr, &sin->sin_addr), 1);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (void *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, addr, &sin6->sin6_addr), 1);
		*len = sizeof(*sin6);
	}
}

/* A TCP socket of family bound to addr:port (0: any port). */
static int tcp_socket(uint8_t family, const char *addr, uint16_t port,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family == 4 ? AF_INET : AF_INET6,
			SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	sockaddr_of(family, addr, port, ss, len);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				    sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)ss, *len), 0);
	return fd;
}

/* A listener on the VIP's LISTEN_PORT of family. */
static int listener(uint8_t family)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = tcp_socket(family, family == 4 ? VIP4 : VIP6, LISTEN_PORT,
			    &ss, &len);

	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

/* A connection from the client address to the listener lfd; the
 * client's port in *port; the accepted socket in *srv. */
static int connection(uint8_t family, int lfd, uint16_t *port, int *srv)
{
	struct sockaddr_storage me, vip;
	socklen_t len, vlen;
	int fd = tcp_socket(family, family == 4 ? CLIENT4 : CLIENT6, 0, &me,
			    &len);

	sockaddr_of(family, family == 4 ? VIP4 : VIP6, LISTEN_PORT, &vip,
		    &vlen);
	assert_int_equal(connect(fd, (struct sockaddr *)&vip, vlen), 0);
	*srv = accept(lfd, NULL, NULL);
	assert_true(*srv >= 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);
	*port = ntohs(family == 4 ? ((struct sockaddr_in *)&me)->sin_port :
		      ((struct sockaddr_in6 *)&me)->sin6_port);
	return fd;
}

/* A connection here keeps its packets; a listener alone does not. */
static void connection_here_is_kept(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		int lfd = listener(family), cfd, srv;
		uint16_t port;
		struct sc_case k = { family, family, IPPROTO_TCP, TCP_ACK,
				     40000, LISTEN_PORT, 1,
				     { family == 4 ? HOP_A4 : HOP_A6 } };

		/* the listener alone: a plain ACK is no syncookie */
		expect_redirect(&k, k.hop[0], XDP_TX);
		cfd = connection(family, lfd, &port, &srv);
		k.sport = port;
		expect_decap(&k, NO_CTR);
		k.tcp_flags = TCP_ACK | TCP_FIN;
		expect_decap(&k, NO_CTR);
		/* over the other outer family too */
		k.outer = (uint8_t)(10 - family);
		k.hop[0] = k.outer == 4 ? HOP_A4 : HOP_A6;
		expect_decap(&k, NO_CTR);
		/* another port of the same client: not this connection */
		k.sport = (uint16_t)(port + 1);
		expect_redirect(&k, k.hop[0], XDP_TX);
		close(cfd);
		close(srv);
		close(lfd);
	}
}

/* The configuration group_setup attached, with second chance off or
 * on. */
static void configure_here(bool sc_off)
{
	const struct mlv_decap_config cfg = {
		.addrs = local_addrs, .n_addrs = 2,
		.gue_ports = gue_ports, .n_gue_ports = 1,
		.sources = lb_sources, .n_sources = 2,
		.second_chance_off = sc_off,
	};
	char why[256] = "";

	assert_int_equal(mlv_decap_configure(&maps, &cfg, why, sizeof(why)),
			 MLV_OK);
}

static uint32_t sc_flags_now(void)
{
	uint32_t flags = 0xffffffff;

	assert_int_equal(mlv_decap_read_sc(&maps, &flags), MLV_OK);
	return flags;
}

static void set_drain(bool on)
{
	char why[256] = "";

	assert_int_equal(mlv_decap_set_drain(&maps, on, why, sizeof(why)),
			 MLV_OK);
}

/* Local drain: a new connection's SYN goes on to the next hop though a
 * listener is here (sc_drained); a connection here keeps its packets;
 * the drain outlives a configuration change; with no hop the host
 * serves the SYN itself; undrained, the listener takes SYNs again. */
static void drain_hands_new_connections_on(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		const char *a = family == 4 ? HOP_A4 : HOP_A6;
		int lfd = listener(family), cfd, srv;
		uint16_t port;
		struct sc_case k = { family, family, IPPROTO_TCP, TCP_SYN,
				     41001, LISTEN_PORT, 1, { a } };

		cfd = connection(family, lfd, &port, &srv);
		assert_int_equal(sc_flags_now(), 0);
		expect_decap(&k, NO_CTR);
		set_drain(true);
		assert_int_equal(sc_flags_now(), MLV_DECAP_SC_DRAIN);
		expect_handed_on(&k, a, XDP_TX, MLV_DECAP_CTR_SC_DRAINED);
		/* the connection here stays */
		k.sport = port;
		k.tcp_flags = TCP_ACK | TCP_PSH;
		expect_decap(&k, NO_CTR);
		/* attach again (configure): still draining */
		configure_here(false);
		assert_int_equal(sc_flags_now(), MLV_DECAP_SC_DRAIN);
		k.sport = 41001;
		k.tcp_flags = TCP_SYN;
		expect_handed_on(&k, a, XDP_TX, MLV_DECAP_CTR_SC_DRAINED);
		k.n_hops = 0;
		k.hop[0] = NULL;
		expect_decap(&k, MLV_DECAP_CTR_SC_NO_HOP);
		set_drain(false);
		assert_int_equal(sc_flags_now(), 0);
		k.n_hops = 1;
		k.hop[0] = a;
		expect_decap(&k, NO_CTR);
		close(cfd);
		close(srv);
		close(lfd);
	}
}

/* --second-chance off: every second-chance frame is decapsulated here
 * (sc_off), whatever it is; on again, they go on. */
static void off_hands_nothing_on(void **state)
{
	(void)state;
	configure_here(true);
	assert_int_equal(sc_flags_now(), MLV_DECAP_SC_OFF);
	for (uint8_t outer = 4; outer <= 6; outer += 2) {
		const char *a = outer == 4 ? HOP_A4 : HOP_A6;
		struct sc_case k = { outer, 4, IPPROTO_TCP, TCP_ACK, 0, 0, 1,
				     { a } };

		expect_decap(&k, MLV_DECAP_CTR_SC_OFF);
		k.tcp_flags = TCP_SYN;
		expect_decap(&k, MLV_DECAP_CTR_SC_OFF);
		k.icmp = true;
		expect_decap(&k, MLV_DECAP_CTR_SC_OFF);
	}
	configure_here(false);
	assert_int_equal(sc_flags_now(), 0);
	{
		struct sc_case k = { 4, 4, IPPROTO_TCP, TCP_ACK, 0, 0, 1,
				     { HOP_A4 } };

		expect_redirect(&k, HOP_A4, XDP_TX);
	}
}

/* An ICMP frag-needed / packet-too-big about a connection not here goes
 * to the next hop (sc_icmp), so path MTU discovery reaches the backend
 * that holds it; about a connection here it stays; other ICMP stays. */
static void icmp_about_a_flow_elsewhere_goes_on(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		const char *a = family == 4 ? HOP_A4 : HOP_A6;
		int lfd = listener(family), cfd, srv;
		uint16_t port;
		struct sc_case k = { family, family, IPPROTO_TCP, TCP_ACK,
				     0, 0, 1, { a } };

		k.icmp = true;
		expect_handed_on(&k, a, XDP_TX, MLV_DECAP_CTR_SC_ICMP);
		/* over the other outer family */
		k.outer = (uint8_t)(10 - family);
		k.hop[0] = k.outer == 4 ? HOP_A4 : HOP_A6;
		expect_handed_on(&k, k.hop[0], XDP_TX, MLV_DECAP_CTR_SC_ICMP);
		/* about the connection here: stays */
		cfd = connection(family, lfd, &port, &srv);
		k.sport = port;
		k.dport = LISTEN_PORT;
		expect_decap(&k, NO_CTR);
		/* the listener alone holds no other client port's */
		k.sport = (uint16_t)(port + 1);
		expect_handed_on(&k, k.hop[0], XDP_TX, MLV_DECAP_CTR_SC_ICMP);
		/* an echo request is nobody's connection */
		k.icmp_type = family == 4 ? 8 : 128;
		expect_decap(&k, NO_CTR);
		close(cfd);
		close(srv);
		close(lfd);
	}
}

/* Set the sequence and acknowledgement numbers of the inner IPv4 TCP
 * segment at ip and redo its checksum. */
static void set_seq_ack(uint8_t *ip, uint32_t seq, uint32_t ack)
{
	uint32_t len = (uint32_t)(ip[2] << 8 | ip[3]);
	uint8_t *tcp = ip + 20;
	uint16_t c;

	for (unsigned i = 0; i < 4; i++) {
		tcp[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
		tcp[8 + i] = (uint8_t)(ack >> (24 - 8 * i));
	}
	tcp[16] = tcp[17] = 0;
	c = frame_csum(tcp, len - 20,
		       frame_pseudo_sum(4, ip + 12, ip + 16, 6, len - 20));
	tcp[16] = (uint8_t)(c >> 8);
	tcp[17] = (uint8_t)c;
}

/* The cookie of a SYN-ACK the listener sends to a raw SYN: IP_HDRINCL
 * out, every TCP segment delivered here in. */
static uint32_t syn_cookie(uint16_t client_port, uint32_t isn)
{
	struct frame_spec s;
	struct sockaddr_in vip = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 2 };
	uint8_t syn[128], buf[2048];
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_TCP), one = 1;
	uint32_t len;

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one,
				    sizeof(one)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	frame_spec_init(&s, 4, IPPROTO_TCP);
	s.sport = client_port;
	s.dport = LISTEN_PORT;
	s.tcp_flags = TCP_SYN;
	len = frame_build_ip(syn, sizeof(syn), &s);
	set_seq_ack(syn, isn, 0);
	inet_pton(AF_INET, VIP4, &vip.sin_addr);
	assert_int_equal(sendto(fd, syn, len, 0, (struct sockaddr *)&vip,
				sizeof(vip)), (ssize_t)len);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		uint8_t *tcp;

		assert_true(n > 0);
		tcp = buf + (buf[0] & 15) * 4;
		if (n >= (tcp - buf) + 20 && tcp[13] == (TCP_SYN | TCP_ACK) &&
		    (tcp[0] << 8 | tcp[1]) == LISTEN_PORT &&
		    (tcp[2] << 8 | tcp[3]) == client_port) {
			close(fd);
			return (uint32_t)tcp[4] << 24 | tcp[5] << 16 |
			       tcp[6] << 8 | tcp[7];
		}
	}
}

/* An ACK completing a syncookie handshake with a listener here is this
 * host's, though no socket of its 4-tuple exists yet. */
static void syncookie_ack_is_kept(void **state)
{
	const uint32_t isn = 0x12345678;
	const uint16_t port = 41000;
	int lfd;
	uint32_t cookie;

	(void)state;
	/* cookies for every SYN, so none gets a request socket */
	write_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "2");
	lfd = listener(4);
	cookie = syn_cookie(port, isn);
	{
		struct sc_case k = { 4, 4, IPPROTO_TCP, TCP_ACK, port,
				     LISTEN_PORT, 1, { HOP_A4 } };
		uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
		uint32_t len = sc_frame(frame, &k);
		uint32_t want_len = decapsulated(want, &k);
		/* the inner packet: after the outer IPv4, UDP, GUE, block */
		uint8_t *inner = frame + 14 + 20 + 8 + 4 + MLV_SC_LEN4;

		set_seq_ack(inner, isn + 1, cookie + 1);
		set_seq_ack(want + 14, isn + 1, cookie + 1);
		assert_int_equal(run(frame, len, out, XDP_PASS,
				     MLV_DECAP_CTR_DECAP_GUE, NO_CTR),
				 want_len);
		assert_memory_equal(out, want, want_len);

		/* not the ACK of another cookie: a cookie's low 24 bits
		 * decode to its MSS index, and 2^23 more to one past the
		 * kernel's table */
		set_seq_ack(inner, isn + 1, cookie + 1 + (1u << 23));
		expect_redirect_frame(frame, len, &k, HOP_A4, XDP_TX);
	}
	close(lfd);
	write_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ack_without_socket_goes_to_hop4),
		cmocka_unit_test(ack_without_socket_goes_to_hop6),
		cmocka_unit_test(syn_goes_where_a_listener_is),
		cmocka_unit_test(redirected_goes_on_to_later_hops_only),
		cmocka_unit_test(a_chain_of_hops),
		cmocka_unit_test(udp_is_never_redirected),
		cmocka_unit_test(malformed_blocks_are_decapsulated),
		cmocka_unit_test(foreign_private_data_is_skipped),
		cmocka_unit_test(unusable_hops_decapsulate),
		cmocka_unit_test(unresolved_hop_goes_through_the_stack),
		cmocka_unit_test(connection_here_is_kept),
		cmocka_unit_test(syncookie_ack_is_kept),
		cmocka_unit_test(drain_hands_new_connections_on),
		cmocka_unit_test(off_hands_nothing_on),
		cmocka_unit_test(icmp_about_a_flow_elsewhere_goes_on),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
