/* SPDX-License-Identifier: BSD-3-Clause */
/* The steering program (dataplane/bpf/steer/xdp_steer.bpf.c) through
 * BPF_PROG_TEST_RUN, and its control module (control/steering/steering.c):
 * which frames go to the AF_XDP socket and which to the kernel, the
 * counters, and how a sync changes the VIP set.
 *
 * Runs in a private network namespace: the program is attached to that
 * namespace's lo (generic XDP) and an AF_XDP socket bound to lo's queue 0
 * sits in xsks_map, so a redirect returns XDP_REDIRECT as on a live
 * interface. Needs root (exits 77, skipped, without). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>

#include "control/xdp/attached.h"
#include "tests/bpf/bpf_test_env.h"
#include "tests/support/frames.h"
#include "control/steering/steering.h"

#define FRAME_CAP 2048

static struct mlv_xdp_steer *steer;
static struct bpf_test_xsk *xsk;
static int prog_fd = -1;

/* The VIP set most tests run against. */
static struct mlv_xdp_vip base_vips[4];

static struct mlv_xdp_vip vip(const char *addr, uint16_t port, uint8_t proto)
{
	struct mlv_xdp_vip v = { .port = port, .protocol = proto };

	if (!mlv_ip_parse(addr, &v.address))
		abort();
	return v;
}

static void sync_base(void)
{
	assert_int_equal(mlv_xdp_steer_sync(steer, base_vips, 4, NULL), MLV_OK);
}

static int open_prog_fd(void)
{
	struct mlv_xdp_attached cur;

	assert_int_equal(mlv_xdp_attached_query((int)if_nametoindex("lo"),
						&cur, NULL, 0), MLV_OK);
	assert_string_equal(cur.name, MLV_XDP_STEER_PROG_NAME);
	return bpf_prog_get_fd_by_id(cur.prog_id);
}

static void put_socket(void)
{
	__u32 q = 0;
	int fd = bpf_test_xsk_fd(xsk);

	assert_int_equal(bpf_map_update_elem(mlv_xdp_steer_xsks_map_fd(steer),
					     &q, &fd, BPF_ANY), 0);
}

static int group_setup(void **state)
{
	char why[256] = "";

	(void)state;
	bpf_test_private_netns();
	if (mlv_xdp_steer_attach("lo", MLV_XDP_MODE_AUTO, &steer, why,
				 sizeof(why))) {
		fprintf(stderr, "attach: %s\n", why);
		return -1;
	}
	prog_fd = open_prog_fd();
	if (prog_fd < 0)
		return -1;
	xsk = bpf_test_xsk_open("lo");
	put_socket();
	base_vips[0] = vip("192.0.2.10", 80, IPPROTO_TCP);
	base_vips[1] = vip("2001:db8::10", 53, IPPROTO_UDP);
	base_vips[2] = vip("2001:db8::10", 443, IPPROTO_TCP);
	base_vips[3] = vip("192.0.2.20", 53, IPPROTO_UDP);
	/* pings answered on 192.0.2.20 and, through its TCP VIP only, on
	 * 2001:db8::10 (an address answers if any of its VIPs says so) */
	base_vips[2].echo_reply = true;
	base_vips[3].echo_reply = true;
	sync_base();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (prog_fd >= 0)
		close(prog_fd);
	mlv_xdp_steer_close(steer);
	bpf_test_xsk_close(xsk);
	return 0;
}

/* Run frame through the program: it must return action, leave the frame
 * unchanged, and count it exactly once, under counter ctr. */
static void expect(const uint8_t *frame, uint32_t len, int action,
		   enum mlv_steer_counter ctr)
{
	uint64_t before[MLV_STEER_CTR__COUNT], after[MLV_STEER_CTR__COUNT];
	char moved[256] = "";
	size_t off = 0;
	int bad = 0;
	uint8_t out[FRAME_CAP];
	uint32_t out_len = 0;

	assert_int_equal(mlv_xdp_steer_counters(steer, before), MLV_OK);
	assert_int_equal(bpf_test_run_xdp(prog_fd, frame, len, out,
					  sizeof(out), &out_len), action);
	assert_int_equal(mlv_xdp_steer_counters(steer, after), MLV_OK);
	for (unsigned i = 0; i < MLV_STEER_CTR__COUNT; i++) {
		uint64_t d = after[i] - before[i];

		bad |= d != (i == (unsigned)ctr ? 1u : 0u);
		if (d && off < sizeof(moved))
			off += (size_t)snprintf(moved + off, sizeof(moved) - off,
						" %s+%llu",
						mlv_xdp_steer_counter_name(i),
						(unsigned long long)d);
	}
	if (bad)
		fail_msg("expected %s+1, counters moved:%s",
			 mlv_xdp_steer_counter_name(ctr), moved);
	assert_int_equal(out_len, len);
	assert_memory_equal(out, frame, len);
}

static uint32_t build(uint8_t *buf, const struct frame_spec *s)
{
	uint32_t len = frame_build(buf, FRAME_CAP, s, NULL, NULL);

	assert_true(len > 0);
	return len;
}

static void expect_spec(const struct frame_spec *s, int action,
			enum mlv_steer_counter ctr)
{
	uint8_t buf[FRAME_CAP];
	uint32_t len = build(buf, s);

	expect(buf, len, action, ctr);
}

static void spec6(struct frame_spec *s, uint8_t proto, uint16_t dport)
{
	frame_spec_init(s, 6, proto);
	s->dport = dport;
}

static void vip_tcp4_redirects(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_TCP);
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	s.ip_opt_len = 8;    /* options move the TCP header */
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
}

static void vip_udp4_and_v6_redirect(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_UDP);
	frame_addr(s.dst, "192.0.2.20");
	s.dport = 53;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	spec6(&s, IPPROTO_UDP, 53);
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	spec6(&s, IPPROTO_TCP, 443);
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
}

static void vip_behind_vlan_tag_redirects(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_TCP);
	s.vlan = true;
	s.vlan_tci = 100;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
}

static void vip_after_ipv6_extension_headers_redirects(void **state)
{
	struct frame_spec s;

	(void)state;
	spec6(&s, IPPROTO_UDP, 53);
	s.n_ext = 3;
	s.ext[0] = 0;      /* hop-by-hop */
	s.ext[1] = 43;     /* routing */
	s.ext[2] = 60;     /* destination options */
	s.ext_units[1] = 2;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
}

static void not_a_vip_passes(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_TCP);
	s.dport = 22;                           /* VIP address, SSH */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	frame_spec_init(&s, 4, IPPROTO_UDP);    /* VIP port, other protocol */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	frame_spec_init(&s, 4, IPPROTO_TCP);
	frame_addr(s.dst, "192.0.2.11");        /* VIP port, other address */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	spec6(&s, IPPROTO_TCP, 53);             /* v6 VIP port, other protocol */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	frame_spec_init(&s, 4, 47);             /* GRE to the VIP address */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

static void arp_passes(void **state)
{
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1,
		0x08, 0x06,                  /* ARP */
		0, 1, 0x08, 0x00, 6, 4, 0, 1, /* Ethernet/IPv4 request */
		2, 0, 0, 0, 0, 1, 198, 51, 100, 1,
		0, 0, 0, 0, 0, 0, 192, 0, 2, 10, /* who has the VIP */
	};

	(void)state;
	expect(arp, sizeof(arp), XDP_PASS, MLV_STEER_CTR_PASS_NOT_IP);
}

static void ipv4_fragments_to_vip_address_redirect(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_UDP);
	s.dport = 9999;          /* no VIP has this port: the address decides */
	s.df = false;
	s.mf = true;             /* first fragment */
	s.payload_len = 64;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_FRAGMENT);
	s.mf = false;            /* last fragment: no UDP header at all */
	s.frag_offset = 100;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_FRAGMENT);
	frame_addr(s.dst, "192.0.2.99");
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

static void ipv6_fragments_to_vip_address_redirect(void **state)
{
	struct frame_spec s;

	(void)state;
	spec6(&s, IPPROTO_TCP, 9999);
	s.v6_frag = true;
	s.mf = true;
	s.payload_len = 64;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_FRAGMENT);
	s.mf = false;
	s.frag_offset = 10;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_FRAGMENT);
	frame_addr(s.dst, "2001:db8::99");
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

static void ipv6_atomic_fragment_is_parsed_through(void **state)
{
	struct frame_spec s;

	(void)state;
	spec6(&s, IPPROTO_UDP, 53);
	s.v6_frag = true;        /* offset 0, M clear: RFC 6946 atomic */
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	s.dport = 54;
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

static void icmp_too_big_to_vip_redirects(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_ICMP);
	s.icmp_type = 3;
	s.icmp_code = 4;
	s.icmp_rest = 1400;
	s.payload_len = 28;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_ICMP);
	s.icmp_code = 1;         /* host unreachable: not for maglevd */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	s.icmp_type = 8;         /* echo request: the kernel's business */
	s.icmp_code = 0;
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	s.icmp_type = 3;
	s.icmp_code = 4;
	frame_addr(s.dst, "192.0.2.99");
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);

	spec6(&s, IPPROTO_ICMPV6, 0);
	s.icmp_type = 2;
	s.icmp_rest = 1280;
	s.payload_len = 48;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_ICMP);
	s.icmp_type = 135;       /* neighbour solicitation */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	s.icmp_type = 2;
	frame_addr(s.dst, "2001:db8::99");
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

/* Echo requests go to maglevd only for addresses that answer pings
 * (icmp_echo: reply on some VIP there); the rest are the kernel's. */
static void echo_to_answering_address_redirects(void **state)
{
	struct frame_spec s;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_ICMP);
	s.icmp_type = 8;
	s.icmp_rest = 0x12340001;
	s.payload_len = 56;
	frame_addr(s.dst, "192.0.2.20");
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_ECHO);
	s.icmp_code = 1;         /* not an echo request */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	s.icmp_code = 0;
	frame_addr(s.dst, "192.0.2.10");   /* a VIP address that does not answer */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);

	spec6(&s, IPPROTO_ICMPV6, 0);
	s.icmp_type = 128;
	s.icmp_rest = 0x12340001;
	s.payload_len = 56;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_ECHO);
	s.icmp_type = 129;       /* an echo reply is not ours */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	s.icmp_type = 128;
	frame_addr(s.dst, "2001:db8::99");
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

/* Every cut of a VIP frame: before the destination port is whole the
 * frame passes as malformed; from there on it is steered (the steering
 * program judges only what it needs, maglevd the rest). */
static void truncated_frames_pass(void **state)
{
	struct frame_spec specs[3];
	uint8_t buf[FRAME_CAP];

	(void)state;
	frame_spec_init(&specs[0], 4, IPPROTO_TCP);
	spec6(&specs[1], IPPROTO_UDP, 53);
	specs[1].n_ext = 1;
	spec6(&specs[2], IPPROTO_TCP, 443);
	for (unsigned k = 0; k < 3; k++) {
		uint32_t l4_off = 0;
		uint32_t len = frame_build(buf, sizeof(buf), &specs[k], NULL,
					   &l4_off);

		assert_true(len > 0);
		for (uint32_t cut = 14; cut < len; cut++) {
			if (cut < l4_off + 4)
				expect(buf, cut, XDP_PASS,
				       MLV_STEER_CTR_PASS_MALFORMED);
			else
				expect(buf, cut, XDP_REDIRECT,
				       MLV_STEER_CTR_REDIRECT_VIP);
		}
	}
}

static void bad_headers_pass(void **state)
{
	struct frame_spec s;
	uint8_t buf[FRAME_CAP];
	uint32_t len;

	(void)state;
	frame_spec_init(&s, 4, IPPROTO_TCP);
	len = build(buf, &s);
	buf[14] = 0x44;          /* IHL 4 */
	expect(buf, len, XDP_PASS, MLV_STEER_CTR_PASS_MALFORMED);
	buf[14] = 0x65;          /* version 6 behind an IPv4 ethertype */
	expect(buf, len, XDP_PASS, MLV_STEER_CTR_PASS_MALFORMED);

	spec6(&s, IPPROTO_UDP, 53);
	s.n_ext = 1;
	s.ext_units[0] = 200;    /* a hop-by-hop header beyond the frame */
	s.payload_len = 0;
	len = build(buf, &s);
	expect(buf, 14 + 40 + 8, XDP_PASS, MLV_STEER_CTR_PASS_MALFORMED);

	spec6(&s, IPPROTO_UDP, 53);
	s.n_ext = 8;             /* as many as the data plane's parser walks */
	for (unsigned i = 0; i < 9; i++)
		s.ext[i] = 60;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	s.n_ext = 9;             /* one more */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_MALFORMED);
}

/* Random bytes behind IPv4/IPv6/other ethertypes: never a drop or an
 * abort, every frame counted exactly once. */
static void garbage_never_drops(void **state)
{
	uint64_t before[MLV_STEER_CTR__COUNT], after[MLV_STEER_CTR__COUNT];
	uint64_t total = 0;
	uint8_t buf[256], out[FRAME_CAP];
	uint32_t out_len, seed = 12345;
	const unsigned rounds = 3000;

	(void)state;
	assert_int_equal(mlv_xdp_steer_counters(steer, before), MLV_OK);
	for (unsigned r = 0; r < rounds; r++) {
		uint32_t len = 14 + (r % 200);
		int act;

		for (uint32_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (uint8_t)(seed >> 16);
		}
		buf[12] = r % 3 == 0 ? 0x08 : r % 3 == 1 ? 0x86 : 0x81;
		buf[13] = r % 3 == 0 ? 0x00 : r % 3 == 1 ? 0xdd : 0x00;
		act = bpf_test_run_xdp(prog_fd, buf, len, out, sizeof(out),
				       &out_len);
		assert_true(act == XDP_PASS || act == XDP_REDIRECT);
	}
	assert_int_equal(mlv_xdp_steer_counters(steer, after), MLV_OK);
	for (unsigned i = 0; i < MLV_STEER_CTR__COUNT; i++)
		total += after[i] - before[i];
	assert_int_equal(total, rounds);
}

static void no_socket_on_queue_passes(void **state)
{
	struct frame_spec s;
	__u32 q = 0;

	(void)state;
	assert_int_equal(bpf_map_delete_elem(mlv_xdp_steer_xsks_map_fd(steer),
					     &q), 0);
	frame_spec_init(&s, 4, IPPROTO_TCP);
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NO_SOCKET);
	put_socket();
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
}

/* A range VIP and an `any` VIP are steered by their address and
 * protocol (the key with port 0): every port of that protocol goes to
 * maglevd, which picks the VIP; another protocol on the address and
 * another address do not. */
static void range_and_any_vips_steer_every_port(void **state)
{
	struct mlv_xdp_vip w[3] = {
		vip("203.0.113.5", 8000, IPPROTO_TCP),
		vip("203.0.113.6", 0, IPPROTO_UDP),
		vip("192.0.2.10", 80, IPPROTO_TCP),
	};
	struct mlv_xdp_sync_result res;
	struct frame_spec s;

	(void)state;
	w[0].port_last = 8100;
	w[1].port_last = 65535;
	assert_int_equal(mlv_xdp_steer_sync(steer, w, 3, &res), MLV_OK);
	assert_int_equal(res.vips, 3);
	frame_spec_init(&s, 4, IPPROTO_TCP);
	frame_addr(s.dst, "203.0.113.5");
	s.dport = 8050;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	s.dport = 22;      /* outside the range: maglevd counts it not_vip */
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	frame_spec_init(&s, 4, IPPROTO_UDP);
	frame_addr(s.dst, "203.0.113.5");    /* no UDP VIP there */
	s.dport = 8050;
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	frame_addr(s.dst, "203.0.113.6");
	s.dport = 1;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	s.dport = 65535;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	frame_spec_init(&s, 4, IPPROTO_TCP); /* one port: only that port */
	s.dport = 81;
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	sync_base();
}

static void sync_adds_and_removes(void **state)
{
	struct mlv_xdp_vip a[2] = {
		vip("203.0.113.1", 8080, IPPROTO_TCP),
		vip("192.0.2.10", 80, IPPROTO_TCP),
	};
	struct mlv_xdp_vip b[2] = {
		vip("192.0.2.10", 80, IPPROTO_TCP),
		vip("2001:db8::77", 8443, IPPROTO_TCP),
	};
	struct mlv_xdp_sync_result res;
	struct frame_spec s;

	(void)state;
	assert_int_equal(mlv_xdp_steer_sync(steer, a, 2, &res), MLV_OK);
	assert_int_equal(res.vips, 2);
	assert_int_equal(res.vips_added, 1);
	assert_int_equal(res.vips_removed, 3);
	assert_int_equal(res.addrs, 2);
	assert_int_equal(res.addrs_added, 1);
	assert_int_equal(res.addrs_removed, 2);

	frame_spec_init(&s, 4, IPPROTO_TCP);
	frame_addr(s.dst, "203.0.113.1");
	s.dport = 8080;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	spec6(&s, IPPROTO_UDP, 53);              /* removed */
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);

	assert_int_equal(mlv_xdp_steer_sync(steer, b, 2, &res), MLV_OK);
	assert_int_equal(res.vips_added, 1);
	assert_int_equal(res.vips_removed, 1);
	frame_spec_init(&s, 4, IPPROTO_TCP);     /* kept */
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	frame_addr(s.dst, "203.0.113.1");        /* gone, and its address */
	s.dport = 8080;
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	s.mf = true;
	s.df = false;
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	spec6(&s, IPPROTO_TCP, 8443);            /* new */
	frame_addr(s.dst, "2001:db8::77");
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);

	assert_int_equal(mlv_xdp_steer_sync(steer, NULL, 0, &res), MLV_OK);
	assert_int_equal(res.vips, 0);
	assert_int_equal(res.addrs_removed, 2);
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
	sync_base();
}

static void sync_counts_duplicates_once(void **state)
{
	struct mlv_xdp_vip d[5] = {
		vip("192.0.2.10", 80, IPPROTO_TCP),
		vip("192.0.2.10", 80, IPPROTO_TCP),
		vip("192.0.2.10", 443, IPPROTO_TCP),
		vip("2001:db8::10", 53, IPPROTO_UDP),
		vip("2001:db8::10", 53, IPPROTO_UDP),
	};
	struct mlv_xdp_sync_result res;

	(void)state;
	assert_int_equal(mlv_xdp_steer_sync(steer, d, 5, &res), MLV_OK);
	assert_int_equal(res.vips, 3);
	assert_int_equal(res.addrs, 2);
	sync_base();
}

static void sync_rejects_unsteerable_vip(void **state)
{
	struct mlv_xdp_vip bad[2] = {
		vip("198.51.100.7", 80, IPPROTO_TCP),
		vip("192.0.2.10", 0, IPPROTO_ICMP),
	};
	struct frame_spec s;

	(void)state;
	assert_int_equal(mlv_xdp_steer_sync(steer, bad, 2, NULL), MLV_E_INVAL);
	assert_non_null(strstr(mlv_xdp_steer_error(steer), "protocol 1"));
	bad[1] = bad[0];
	bad[1].address.family = 0;
	assert_int_equal(mlv_xdp_steer_sync(steer, bad, 2, NULL), MLV_E_INVAL);
	/* nothing changed: the base set still steers, the new VIP does not */
	frame_spec_init(&s, 4, IPPROTO_TCP);
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	frame_addr(s.dst, "198.51.100.7");
	expect_spec(&s, XDP_PASS, MLV_STEER_CTR_PASS_NOT_VIP);
}

/* The daemon's path: the program is already attached (here by us, in
 * the daemon by the PMD); a second handle finds its maps by name. */
static void open_attached_shares_the_maps(void **state)
{
	struct mlv_xdp_vip extra[5];
	struct mlv_xdp_steer *found = NULL;
	struct frame_spec s;
	char why[256] = "";

	(void)state;
	assert_int_equal(mlv_xdp_steer_open_attached("lo", &found, why,
						     sizeof(why)), MLV_OK);
	memcpy(extra, base_vips, sizeof(base_vips));
	extra[4] = vip("192.0.2.30", 25, IPPROTO_TCP);
	assert_int_equal(mlv_xdp_steer_sync(found, extra, 5, NULL), MLV_OK);
	frame_spec_init(&s, 4, IPPROTO_TCP);
	frame_addr(s.dst, "192.0.2.30");
	s.dport = 25;
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	mlv_xdp_steer_close(found);   /* closes fds, leaves the program */
	expect_spec(&s, XDP_REDIRECT, MLV_STEER_CTR_REDIRECT_VIP);
	sync_base();

	assert_int_equal(mlv_xdp_steer_open_attached("nosuchif0", &found, why,
						     sizeof(why)), MLV_E_INVAL);
	assert_non_null(strstr(why, "nosuchif0"));
	assert_null(found);
}

static void second_attach_is_refused(void **state)
{
	struct mlv_xdp_steer *again = NULL;
	char why[256] = "";

	(void)state;
	assert_int_equal(mlv_xdp_steer_attach("lo", MLV_XDP_MODE_AUTO, &again,
					      why, sizeof(why)), MLV_E_BUSY);
	assert_null(again);
	assert_non_null(strstr(why, "lo"));
}

/* What the PMD does with xdp_prog=: open the file with libbpf, load it,
 * take the first program, find "xsks_map". */
static void written_object_meets_the_pmd_contract(void **state)
{
	char path[] = "/tmp/mlv-steer-objXXXXXX";
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	char why[256] = "";
	int fd = mkstemp(path);
	unsigned n_progs = 0;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mlv_xdp_steer_write_object(path, why, sizeof(why)),
			 MLV_OK);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	assert_int_equal(bpf_object__load(obj), 0);
	bpf_object__for_each_program(prog, obj)
		n_progs++;
	assert_int_equal(n_progs, 1);
	prog = bpf_object__next_program(obj, NULL);
	assert_string_equal(bpf_program__name(prog), MLV_XDP_STEER_PROG_NAME);
	assert_int_equal(bpf_program__type(prog), BPF_PROG_TYPE_XDP);
	map = bpf_object__find_map_by_name(obj, "xsks_map");
	assert_non_null(map);
	assert_int_equal(bpf_map__type(map), BPF_MAP_TYPE_XSKMAP);
	bpf_object__close(obj);
	unlink(path);

	assert_int_equal(mlv_xdp_steer_write_object("/nonexistent-dir/x.o",
						    why, sizeof(why)),
			 MLV_E_IO);
}

/* Last: closing the attaching handle detaches; a stale program is
 * removed by name. */
static void close_detaches_and_stale_is_removed(void **state)
{
	struct mlv_xdp_steer *found = NULL, *again = NULL;
	struct mlv_xdp_attached cur;
	char why[256] = "";
	int removed = -1, lo = (int)if_nametoindex("lo");

	(void)state;
	close(prog_fd);
	prog_fd = -1;
	mlv_xdp_steer_close(steer);
	steer = NULL;
	assert_int_equal(mlv_xdp_attached_query(lo, &cur, NULL, 0), MLV_OK);
	assert_int_equal(cur.prog_id, 0);
	assert_int_equal(mlv_xdp_steer_open_attached("lo", &found, why,
						     sizeof(why)),
			 MLV_E_NOT_FOUND);
	assert_int_equal(mlv_xdp_steer_remove_stale("lo", &removed, why,
						    sizeof(why)), MLV_OK);
	assert_int_equal(removed, 0);

	/* a program left behind (its loader gone): found and removed */
	assert_int_equal(mlv_xdp_steer_attach("lo", MLV_XDP_MODE_GENERIC,
					      &again, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(mlv_xdp_steer_remove_stale("lo", &removed, why,
						    sizeof(why)), MLV_OK);
	assert_int_equal(removed, 1);
	assert_int_equal(mlv_xdp_attached_query(lo, &cur, NULL, 0), MLV_OK);
	assert_int_equal(cur.prog_id, 0);
	mlv_xdp_steer_close(again);   /* its detach finds nothing: harmless */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vip_tcp4_redirects),
		cmocka_unit_test(vip_udp4_and_v6_redirect),
		cmocka_unit_test(vip_behind_vlan_tag_redirects),
		cmocka_unit_test(vip_after_ipv6_extension_headers_redirects),
		cmocka_unit_test(not_a_vip_passes),
		cmocka_unit_test(arp_passes),
		cmocka_unit_test(ipv4_fragments_to_vip_address_redirect),
		cmocka_unit_test(ipv6_fragments_to_vip_address_redirect),
		cmocka_unit_test(ipv6_atomic_fragment_is_parsed_through),
		cmocka_unit_test(icmp_too_big_to_vip_redirects),
		cmocka_unit_test(echo_to_answering_address_redirects),
		cmocka_unit_test(truncated_frames_pass),
		cmocka_unit_test(bad_headers_pass),
		cmocka_unit_test(garbage_never_drops),
		cmocka_unit_test(no_socket_on_queue_passes),
		cmocka_unit_test(range_and_any_vips_steer_every_port),
		cmocka_unit_test(sync_adds_and_removes),
		cmocka_unit_test(sync_counts_duplicates_once),
		cmocka_unit_test(sync_rejects_unsteerable_vip),
		cmocka_unit_test(open_attached_shares_the_maps),
		cmocka_unit_test(second_attach_is_refused),
		cmocka_unit_test(written_object_meets_the_pmd_contract),
		cmocka_unit_test(close_detaches_and_stale_is_removed),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
