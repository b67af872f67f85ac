/* SPDX-License-Identifier: BSD-3-Clause */
/* The backend decapsulator (dataplane/bpf/decap/xdp_decap.bpf.c) through
 * BPF_PROG_TEST_RUN, configured by tools/bin/maglev-decap's code: frames
 * encapsulated by maglevd's own encapsulator (dataplane/packet/encap.c) must
 * come out as the inner packet behind an Ethernet header of the inner
 * family, byte for byte; everything it must not touch comes out
 * unchanged, and so does a tunnel from a source that is not a load
 * balancer's. Expected frames are built independently
 * (tests/support/frames.c). Runs in a private network namespace, on lo
 * (generic XDP).
 * Needs root (exits 77, skipped, without). */
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
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>

#include "tests/bpf/bpf_test_env.h"
#include "tests/bpf/decap_test_config.h"
#include "tools/bin/maglev-decap/attach_args.h"
#include "tools/bin/maglev-decap/decap_ctl.h"
#include "dataplane/packet/encap.h"
#include "tests/support/frames.h"
#include "control/steering/steering.h"

#define FRAME_CAP 2048

static const uint8_t LB_MAC[6] = { 0x02, 0, 0, 0, 0x99, 0x01 };
static const uint8_t BE_MAC[6] = { 0x02, 0, 0, 0, 0x01, 0x11 };

static int lo;
static struct mlv_decap_maps maps = { .addrs_fd = -1, .ports_fd = -1,
				      .sources_fd = -1, .stats_fd = -1 };
static int prog_fd = -1;
static struct mlv_ip local_addrs[2];
static const uint16_t gue_ports[2] = { GUE_PORT, GUE_PORT2 };
static struct mlv_ip_prefix lb_sources[4];

static const struct mlv_decap_config base_cfg = {
	.addrs = local_addrs, .n_addrs = 2,
	.gue_ports = gue_ports, .n_gue_ports = 2,
	.sources = lb_sources, .n_sources = 4,
};

static void attach_base(int want_updated)
{
	char why[256] = "";
	int updated = -1;

	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &base_cfg,
					  &updated, why, sizeof(why)), MLV_OK);
	assert_int_equal(updated, want_updated);
}

static int group_setup(void **state)
{
	char why[256] = "";

	(void)state;
	bpf_test_private_netns();
	lo = (int)if_nametoindex("lo");
	if (!mlv_ip_parse(LOCAL4, &local_addrs[0]) ||
	    !mlv_ip_parse(LOCAL6, &local_addrs[1]) ||
	    mlv_ip_prefix_parse(LB_SRC4, &lb_sources[0]) ||
	    mlv_ip_prefix_parse(LB_SRC6, &lb_sources[1]) ||
	    mlv_ip_prefix_parse(LB_NET4, &lb_sources[2]) ||
	    mlv_ip_prefix_parse(LB_NET6, &lb_sources[3]))
		return -1;
	attach_base(0);
	if (mlv_decap_open(lo, &maps, why, sizeof(why))) {
		fprintf(stderr, "open: %s\n", why);
		return -1;
	}
	prog_fd = bpf_prog_get_fd_by_id(maps.prog_id);
	return prog_fd < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	int removed;

	(void)state;
	if (prog_fd >= 0)
		close(prog_fd);
	mlv_decap_maps_close(&maps);
	mlv_decap_detach(lo, &removed, NULL, 0);
	return 0;
}

/* How a test frame is wrapped. */
struct wrap {
	enum mlv_encap_method method;   /* IPIP or GUE */
	uint8_t outer;                  /* 4 or 6 */
	uint8_t inner;                  /* 4 or 6 */
	const char *outer_dst;          /* NULL: this host's address */
	uint16_t gue_port;              /* 0: GUE_PORT */
	uint8_t inner_tos;              /* the inner packet's TOS / class */
	uint8_t outer_tos;              /* what the outer header gets */
	const char *outer_src;          /* NULL: LB_SRC4 / LB_SRC6 */
};

/* The inner packet: UDP from a client to the VIP. */
static uint32_t inner_packet(uint8_t *buf, uint8_t family, uint8_t tos)
{
	struct frame_spec s;
	uint32_t len;

	frame_spec_init(&s, family, IPPROTO_UDP);
	s.dport = 53;
	s.tos = tos;
	s.payload_len = 100;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

/* The frame maglevd's encapsulator sends for w; *inner_len set. */
static uint32_t encapsulated(uint8_t *buf, const struct wrap *w)
{
	struct mlv_encap_params p = { 0 };
	struct mlv_encap_tmpl t;
	uint8_t inner[FRAME_CAP];
	uint32_t ilen = inner_packet(inner, w->inner, w->inner_tos);

	p.method = w->method;
	memcpy(p.src_mac, LB_MAC, 6);
	memcpy(p.dst_mac, BE_MAC, 6);
	p.outer_family = w->outer;
	frame_addr(p.outer_src, w->outer_src ? w->outer_src :
		   w->outer == 4 ? LB_SRC4 : LB_SRC6);
	frame_addr(p.outer_dst, w->outer_dst ? w->outer_dst :
		   w->outer == 4 ? LOCAL4 : LOCAL6);
	p.inner_family = w->inner;
	p.gue_port = w->gue_port ? w->gue_port : GUE_PORT;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);
	memcpy(buf + t.len, inner, ilen);
	mlv_encap_apply(buf, &t, (uint16_t)ilen, w->outer_tos, 0x5eed);
	return t.len + ilen;
}

/* The frame the backend's stack should get: BE_MAC <- LB_MAC, the inner
 * family's ethertype, the inner packet with inner_tos. */
static uint32_t decapsulated(uint8_t *buf, uint8_t inner, uint8_t inner_tos)
{
	memcpy(buf, BE_MAC, 6);
	memcpy(buf + 6, LB_MAC, 6);
	buf[12] = inner == 4 ? 0x08 : 0x86;
	buf[13] = inner == 4 ? 0x00 : 0xdd;
	return 14 + inner_packet(buf + 14, inner, inner_tos);
}

/* Run frame; the program must return action and count it once under ctr.
 * Returns the output length (the output lands in out). */
static uint32_t run(const uint8_t *frame, uint32_t len, uint8_t *out,
		    int action, enum mlv_decap_counter ctr)
{
	uint64_t before[MLV_DECAP_CTR__COUNT], after[MLV_DECAP_CTR__COUNT];
	char moved[256] = "";
	size_t off = 0;
	int bad = 0;
	uint32_t out_len = 0;

	assert_int_equal(mlv_decap_counters(&maps, before), MLV_OK);
	assert_int_equal(bpf_test_run_xdp(prog_fd, frame, len, out, FRAME_CAP,
					  &out_len), action);
	assert_int_equal(mlv_decap_counters(&maps, after), MLV_OK);
	for (unsigned i = 0; i < MLV_DECAP_CTR__COUNT; i++) {
		uint64_t d = after[i] - before[i];

		bad |= d != (i == (unsigned)ctr ? 1u : 0u);
		if (d && off < sizeof(moved))
			off += (size_t)snprintf(moved + off, sizeof(moved) - off,
						" %s+%llu",
						mlv_decap_counter_name(i),
						(unsigned long long)d);
	}
	if (bad)
		fail_msg("expected %s+1, counters moved:%s",
			 mlv_decap_counter_name(ctr), moved);
	return out_len;
}

/* The frame must pass exactly as it came. */
static void untouched(const uint8_t *frame, uint32_t len,
		      enum mlv_decap_counter ctr)
{
	uint8_t out[FRAME_CAP];

	assert_int_equal(run(frame, len, out, XDP_PASS, ctr), len);
	assert_memory_equal(out, frame, len);
}

static void expect_decap(const struct wrap *w)
{
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint32_t len = encapsulated(frame, w);
	uint32_t want_len = decapsulated(want, w->inner, w->inner_tos);
	uint32_t out_len;

	out_len = run(frame, len, out, XDP_PASS,
		      w->method == MLV_ENCAP_GUE ? MLV_DECAP_CTR_DECAP_GUE :
		      MLV_DECAP_CTR_DECAP_IPIP);
	assert_int_equal(out_len, want_len);
	assert_memory_equal(out, want, want_len);
	assert_true(frame_ip_checksums_ok(out + 14, out_len - 14));
}

static void ipip_4in4(void **state)
{
	struct wrap w = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0 };

	(void)state;
	expect_decap(&w);
}

static void ipip_6in6(void **state)
{
	struct wrap w = { MLV_ENCAP_IPIP, 6, 6, NULL, 0, 0, 0 };

	(void)state;
	expect_decap(&w);
}

static void ipip_4in6(void **state)
{
	struct wrap w = { MLV_ENCAP_IPIP, 6, 4, NULL, 0, 0, 0 };

	(void)state;
	expect_decap(&w);
}

/* 6in4 (protocol 41 in IPv4): maglevd never sends it (the config refuses
 * IPv6 VIPs with IPv4 IPIP backends) but it is standard IPIP, so it is
 * undone too. Built by hand from a 4in4 frame's outer header. */
static void ipip_6in4(void **state)
{
	struct wrap w44 = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0 };
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint32_t ilen, want_len, out_len;

	(void)state;
	encapsulated(frame, &w44);                 /* outer header template */
	ilen = inner_packet(frame + 34, 6, 0);
	frame[14 + 2] = (uint8_t)((20 + ilen) >> 8);
	frame[14 + 3] = (uint8_t)(20 + ilen);
	frame[14 + 9] = 41;
	frame[14 + 10] = frame[14 + 11] = 0;
	{
		uint16_t c = frame_csum(frame + 14, 20, 0);

		frame[14 + 10] = (uint8_t)(c >> 8);
		frame[14 + 11] = (uint8_t)c;
	}
	want_len = decapsulated(want, 6, 0);
	out_len = run(frame, 34 + ilen, out, XDP_PASS,
		      MLV_DECAP_CTR_DECAP_IPIP);
	assert_int_equal(out_len, want_len);
	assert_memory_equal(out, want, want_len);
}

static void gue_every_family_pair(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			struct wrap w = { MLV_ENCAP_GUE, outer, inner, NULL,
					  0, 0, 0 };

			expect_decap(&w);
			w.gue_port = GUE_PORT2;
			expect_decap(&w);
		}
}

static void dscp_is_kept_and_padding_passes_through(void **state)
{
	struct wrap w = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0xb8, 0xb8 };
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], want[FRAME_CAP];
	uint32_t len, want_len;

	(void)state;
	expect_decap(&w);            /* EF, no ECN: inner unchanged */
	/* a short frame padded by the sender: the padding stays behind
	 * the inner packet, where the stack trims it by the IP length */
	len = encapsulated(frame, &w);
	memset(frame + len, 0, 20);
	want_len = decapsulated(want, 4, 0xb8);
	memset(want + want_len, 0, 20);
	assert_int_equal(run(frame, len + 20, out, XDP_PASS,
			     MLV_DECAP_CTR_DECAP_IPIP), want_len + 20);
	assert_memory_equal(out, want, want_len + 20);
}

/* RFC 6040 4.2: outer CE onto an ECT inner packet, checksum included;
 * outer CE over not-ECT: dropped; outer ECT over not-ECT: nothing. */
static void ecn_congestion_mark_is_propagated(void **state)
{
	(void)state;
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2) {
			struct wrap w = { MLV_ENCAP_IPIP, outer, inner, NULL,
					  0, 0x02, 0x03 };
			uint8_t frame[FRAME_CAP], out[FRAME_CAP];
			uint8_t want[FRAME_CAP];
			uint32_t len, want_len;

			if (outer == 4 && inner == 6)
				continue;   /* maglevd has no 6in4 */
			len = encapsulated(frame, &w);
			want_len = decapsulated(want, inner, 0x03);
			assert_int_equal(run(frame, len, out, XDP_PASS,
					     MLV_DECAP_CTR_DECAP_IPIP),
					 want_len);
			assert_memory_equal(out, want, want_len);

			w.inner_tos = 0x00;          /* not-ECT under CE */
			len = encapsulated(frame, &w);
			run(frame, len, out, XDP_DROP, MLV_DECAP_CTR_DROP_ECN);

			w.outer_tos = 0x01;          /* ECT(1) over not-ECT */
			expect_decap(&w);
		}
}

static void other_destination_is_untouched(void **state)
{
	struct wrap ws[3] = {
		{ MLV_ENCAP_IPIP, 4, 4, "10.99.1.12", 0, 0, 0 },
		{ MLV_ENCAP_IPIP, 6, 6, "fd00:99:1::22", 0, 0, 0 },
		{ MLV_ENCAP_GUE, 4, 6, "10.99.1.12", 0, 0, 0 },
	};
	uint8_t frame[FRAME_CAP];

	(void)state;
	for (unsigned i = 0; i < 3; i++)
		untouched(frame, encapsulated(frame, &ws[i]),
			  MLV_DECAP_CTR_PASS_NOT_LOCAL);
}

static void gue_on_another_port_is_untouched(void **state)
{
	struct wrap w = { MLV_ENCAP_GUE, 4, 4, NULL, 6082, 0, 0 };
	uint8_t frame[FRAME_CAP];

	(void)state;
	untouched(frame, encapsulated(frame, &w),
		  MLV_DECAP_CTR_PASS_NOT_TUNNEL);
	w.outer = 6;
	untouched(frame, encapsulated(frame, &w),
		  MLV_DECAP_CTR_PASS_NOT_TUNNEL);
}

/* GUE that is not a variant-0 data message, or whose flags announce
 * extension fields: passed as it came. (Private data alone, Hlen with
 * flags 0, is skipped: test_second_chance.c.) */
static void gue_extensions_are_untouched(void **state)
{
	struct wrap w = { MLV_ENCAP_GUE, 4, 4, NULL, 0, 0, 0 };
	const uint8_t first[2] = { 0x20, 0x40 };  /* C, variant 1 */
	uint8_t frame[FRAME_CAP];
	uint32_t len;

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		len = encapsulated(frame, &w);
		frame[14 + 20 + 8] = first[i];
		untouched(frame, len, MLV_DECAP_CTR_PASS_UNSUPPORTED);
	}
	for (unsigned bit = 0; bit < 16; bit++) {   /* Hlen 1, one flag */
		len = encapsulated(frame, &w);
		frame[14 + 20 + 8] = 0x01;
		frame[14 + 20 + 8 + 2 + bit / 8] = (uint8_t)(0x80u >> bit % 8);
		untouched(frame, len, MLV_DECAP_CTR_PASS_UNSUPPORTED);
	}
	len = encapsulated(frame, &w);
	frame[14 + 20 + 8 + 1] = 17;        /* proto: UDP, not IP */
	untouched(frame, len, MLV_DECAP_CTR_PASS_UNSUPPORTED);
}

static void set_ipv4_csum(uint8_t *ip)
{
	uint16_t c;

	ip[10] = ip[11] = 0;
	c = frame_csum(ip, (uint32_t)(ip[0] & 0xf) * 4, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

static void outer_problems_are_untouched(void **state)
{
	struct wrap w = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0 };
	uint8_t frame[FRAME_CAP], opt[FRAME_CAP];
	uint32_t len;

	(void)state;
	len = encapsulated(frame, &w);
	frame[14 + 6] = 0x20;               /* MF: a fragment */
	set_ipv4_csum(frame + 14);
	untouched(frame, len, MLV_DECAP_CTR_PASS_FRAGMENT);

	len = encapsulated(frame, &w);
	frame[14 + 11] ^= 0x01;             /* header checksum */
	untouched(frame, len, MLV_DECAP_CTR_PASS_MALFORMED);

	len = encapsulated(frame, &w);
	frame[34] = 0x65;                   /* protocol 4, inner version 6 */
	untouched(frame, len, MLV_DECAP_CTR_PASS_MALFORMED);

	/* an outer IPv4 header with 4 bytes of options (NOPs) */
	len = encapsulated(frame, &w);
	memcpy(opt, frame, 34);
	memset(opt + 34, 1, 4);
	memcpy(opt + 38, frame + 34, len - 34);
	opt[14] = 0x46;
	opt[14 + 3] += 4;
	set_ipv4_csum(opt + 14);
	untouched(opt, len + 4, MLV_DECAP_CTR_PASS_UNSUPPORTED);

	/* an IPv6 outer header followed by a destination-options header */
	w.outer = 6;
	w.inner = 6;
	len = encapsulated(frame, &w);
	frame[14 + 6] = 60;
	untouched(frame, len, MLV_DECAP_CTR_PASS_UNSUPPORTED);
	frame[14 + 6] = 44;
	untouched(frame, len, MLV_DECAP_CTR_PASS_FRAGMENT);
}

/* Every cut of a tunnel frame is shorter than its outer IP length says:
 * malformed, untouched, never decapsulated, dropped or aborted. */
static void truncated_frames_are_untouched(void **state)
{
	struct wrap ws[3] = {
		{ MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0 },
		{ MLV_ENCAP_GUE, 6, 4, NULL, 0, 0, 0 },
		{ MLV_ENCAP_IPIP, 6, 6, NULL, 0, 0, 0 },
	};
	uint8_t frame[FRAME_CAP];

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		uint32_t len = encapsulated(frame, &ws[i]);

		for (uint32_t cut = 15; cut < len; cut++)
			untouched(frame, cut, MLV_DECAP_CTR_PASS_MALFORMED);
	}
}

static void ordinary_traffic_is_untouched(void **state)
{
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1,
		0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 1,
		2, 0, 0, 0, 0, 1, 10, 99, 0, 1,
		0, 0, 0, 0, 0, 0, 10, 99, 1, 11,
	};
	struct wrap w = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0 };
	struct frame_spec s;
	uint8_t frame[FRAME_CAP], tagged[FRAME_CAP];
	uint32_t len;

	(void)state;
	untouched(arp, sizeof(arp), MLV_DECAP_CTR_PASS_NOT_IP);
	frame_spec_init(&s, 4, IPPROTO_TCP);       /* SSH to this host */
	frame_addr(s.dst, LOCAL4);
	s.dport = 22;
	len = frame_build(frame, sizeof(frame), &s, NULL, NULL);
	untouched(frame, len, MLV_DECAP_CTR_PASS_NOT_TUNNEL);
	frame_spec_init(&s, 6, IPPROTO_UDP);       /* DNS to this host */
	frame_addr(s.dst, LOCAL6);
	s.dport = 53;
	len = frame_build(frame, sizeof(frame), &s, NULL, NULL);
	untouched(frame, len, MLV_DECAP_CTR_PASS_NOT_TUNNEL);

	/* a VLAN-tagged tunnel frame: left to the kernel */
	len = encapsulated(frame, &w);
	memcpy(tagged, frame, 12);
	tagged[12] = 0x81;
	tagged[13] = 0x00;
	tagged[14] = 0;
	tagged[15] = 100;
	memcpy(tagged + 16, frame + 12, len - 12);
	untouched(tagged, len + 4, MLV_DECAP_CTR_PASS_NOT_IP);
}

/* The tunnels of every method and outer family, from src4 (IPv4 outer)
 * or src6 (IPv6 outer). */
static unsigned tunnels_from(const char *src4, const char *src6,
			     struct wrap out[6])
{
	const struct wrap ws[6] = {
		{ MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0, src4 },
		{ MLV_ENCAP_IPIP, 6, 6, NULL, 0, 0, 0, src6 },
		{ MLV_ENCAP_IPIP, 6, 4, NULL, 0, 0, 0, src6 },
		{ MLV_ENCAP_GUE, 4, 4, NULL, 0, 0, 0, src4 },
		{ MLV_ENCAP_GUE, 4, 6, NULL, 0, 0, 0, src4 },
		{ MLV_ENCAP_GUE, 6, 6, NULL, 0, 0, 0, src6 },
	};

	memcpy(out, ws, sizeof(ws));
	return 6;
}

static void expect_unknown_source(const char *src4, const char *src6)
{
	struct wrap ws[6];
	uint8_t frame[FRAME_CAP];
	unsigned n = tunnels_from(src4, src6, ws);

	for (unsigned i = 0; i < n; i++)
		untouched(frame, encapsulated(frame, &ws[i]),
			  MLV_DECAP_CTR_PASS_UNKNOWN_SRC);
}

static void expect_decap_from(const char *src4, const char *src6)
{
	struct wrap ws[6];
	unsigned n = tunnels_from(src4, src6, ws);

	for (unsigned i = 0; i < n; i++)
		expect_decap(&ws[i]);
}

/* Tunnels to this host from anyone but a load balancer: passed as they
 * came, under their own counter. */
static void unknown_sources_are_untouched(void **state)
{
	(void)state;
	expect_unknown_source("10.99.0.2", "fd00:99::2");
	/* just outside the listed prefixes */
	expect_unknown_source("10.98.8.0", "fd00:98:8::");
	expect_unknown_source("10.98.6.255", "fd00:98:6:ffff:ffff:ffff:ffff:ffff");
	/* an IPv4-mapped LB address is an IPv6 source, not the LB */
	expect_unknown_source("10.99.0.2", "::ffff:10.99.0.1");
}

/* Inside a listed prefix, from its first to its last address. */
static void prefix_members_are_decapsulated(void **state)
{
	(void)state;
	expect_decap_from(LB_SRC4, LB_SRC6);
	expect_decap_from("10.98.7.0", "fd00:98:7::");
	expect_decap_from("10.98.7.200", "fd00:98:7::c8");
	expect_decap_from("10.98.7.255", "fd00:98:7:0:ffff:ffff:ffff:ffff");
}

/* `attach --from any`, through the tool's own parser: every source of
 * both families. An IPv4 "any" alone leaves IPv6 tunnels out. */
static void from_any_accepts_every_source(void **state)
{
	char *argv[] = { "attach", "lo", "--from", "any", NULL };
	static struct mlv_decap_attach_args a;
	const struct mlv_ip_prefix *v4_any = &a.sources[0];
	struct mlv_decap_config cfg;
	char why[512] = "";
	int updated = -1;

	(void)state;
	assert_int_equal(mlv_decap_parse_attach(4, argv, &a, why, sizeof(why)),
			 MLV_OK);
	mlv_decap_args_config(&a, 0, &cfg);
	cfg.addrs = local_addrs;
	cfg.n_addrs = 2;
	cfg.gue_ports = gue_ports;
	cfg.n_gue_ports = 2;
	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &cfg,
					  &updated, why, sizeof(why)), MLV_OK);
	assert_int_equal(updated, 1);
	expect_decap_from("203.0.113.9", "2001:db8::9");
	expect_decap_from("0.0.0.0", "::");
	expect_decap_from("255.255.255.255",
			  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

	assert_int_equal(v4_any->ip.family, MLV_AF_INET);
	cfg.sources = v4_any;
	cfg.n_sources = 1;
	assert_int_equal(mlv_decap_configure(&maps, &cfg, why, sizeof(why)),
			 MLV_OK);
	{
		struct wrap w4 = { MLV_ENCAP_GUE, 4, 6, NULL, 0, 0, 0,
				   "203.0.113.9" };
		struct wrap w6 = { MLV_ENCAP_IPIP, 6, 4, NULL, 0, 0, 0, NULL };
		uint8_t frame[FRAME_CAP];

		expect_decap(&w4);
		untouched(frame, encapsulated(frame, &w6),
			  MLV_DECAP_CTR_PASS_UNKNOWN_SRC);
	}
	attach_base(1);
	expect_unknown_source("203.0.113.9", "2001:db8::9");
}

/* Status reads back exactly the configured prefixes, sorted; a
 * reconfiguration adds a prefix inside one already there (a trie lookup
 * of it would find the wider one) and removes what is no longer
 * listed. */
static void sources_are_replaced_and_read_back(void **state)
{
	static const char *const steps[3][3] = {
		{ "10.0.0.0/8", NULL },
		{ "10.98.7.0/24", "10.0.0.0/8", "fd00::/8" },
		{ "10.98.7.0/24", NULL },
	};
	static const char *const want[3][3] = {
		{ "10.0.0.0/8", NULL },
		{ "10.0.0.0/8", "10.98.7.0/24", "fd00::/8" },
		{ "10.98.7.0/24", NULL },
	};
	struct mlv_ip_prefix cfg_src[3], got[4];
	struct mlv_decap_config cfg = base_cfg;
	char why[256] = "", text[MLV_IP_PREFIX_STRLEN];
	size_t n, k;

	(void)state;
	for (unsigned s = 0; s < 3; s++) {
		for (k = 0; k < 3 && steps[s][k]; k++)
			assert_null(mlv_ip_prefix_parse(steps[s][k],
							&cfg_src[k]));
		cfg.sources = cfg_src;
		cfg.n_sources = k;
		assert_int_equal(mlv_decap_configure(&maps, &cfg, why,
						     sizeof(why)), MLV_OK);
		assert_int_equal(mlv_decap_read_sources(&maps, got, 4, &n),
				 MLV_OK);
		assert_int_equal(n, k);
		for (size_t i = 0; i < n; i++)
			assert_string_equal(mlv_ip_prefix_format(&got[i], text,
				sizeof(text)), want[s][i]);
	}
	/* the /8 and the IPv6 prefix are gone from the program's view too */
	{
		struct wrap in = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0,
				   "10.98.7.9" };
		struct wrap gone4 = { MLV_ENCAP_GUE, 4, 4, NULL, 0, 0, 0,
				      "10.1.1.1" };
		struct wrap gone6 = { MLV_ENCAP_IPIP, 6, 6, NULL, 0, 0, 0,
				      "fd00::1" };
		uint8_t frame[FRAME_CAP];

		expect_decap(&in);
		untouched(frame, encapsulated(frame, &gone4),
			  MLV_DECAP_CTR_PASS_UNKNOWN_SRC);
		untouched(frame, encapsulated(frame, &gone6),
			  MLV_DECAP_CTR_PASS_UNKNOWN_SRC);
	}
	attach_base(1);
}

static void reattach_reconfigures_in_place(void **state)
{
	const struct mlv_decap_config v6_only = {
		.addrs = &local_addrs[1], .n_addrs = 1,
		.sources = lb_sources, .n_sources = 4,
	};
	struct wrap w44 = { MLV_ENCAP_IPIP, 4, 4, NULL, 0, 0, 0 };
	struct wrap gue66 = { MLV_ENCAP_GUE, 6, 6, NULL, 0, 0, 0 };
	struct wrap w66 = { MLV_ENCAP_IPIP, 6, 6, NULL, 0, 0, 0 };
	struct mlv_decap_maps now;
	uint8_t frame[FRAME_CAP];
	char why[256] = "";
	int updated = -1;

	(void)state;
	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &v6_only,
					  &updated, why, sizeof(why)), MLV_OK);
	assert_int_equal(updated, 1);
	assert_int_equal(mlv_decap_open(lo, &now, why, sizeof(why)), MLV_OK);
	assert_int_equal(now.prog_id, maps.prog_id);   /* not reloaded */
	mlv_decap_maps_close(&now);

	untouched(frame, encapsulated(frame, &w44),
		  MLV_DECAP_CTR_PASS_NOT_LOCAL);
	untouched(frame, encapsulated(frame, &gue66),
		  MLV_DECAP_CTR_PASS_NOT_TUNNEL);
	expect_decap(&w66);
	attach_base(1);
	expect_decap(&w44);
}

static void bad_configuration_is_refused(void **state)
{
	static struct mlv_ip many[257];
	const uint16_t zero = 0;
	struct mlv_decap_config cfg = { .addrs = local_addrs, .n_addrs = 2,
					.gue_ports = &zero, .n_gue_ports = 1 };
	struct wrap w = { MLV_ENCAP_GUE, 4, 4, NULL, 0, 0, 0 };
	char why[256] = "";

	(void)state;
	assert_int_equal(mlv_decap_configure(&maps, &cfg, why, sizeof(why)),
			 MLV_E_INVAL);
	for (unsigned i = 0; i < 257; i++) {
		many[i].family = MLV_AF_INET;
		many[i].bytes[0] = 10;
		many[i].bytes[2] = (uint8_t)(i >> 8);
		many[i].bytes[3] = (uint8_t)i;
	}
	cfg.addrs = many;
	cfg.n_addrs = 257;
	cfg.n_gue_ports = 0;
	assert_int_equal(mlv_decap_configure(&maps, &cfg, why, sizeof(why)),
			 MLV_E_LIMIT);
	assert_non_null(strstr(why, "256"));

	/* sources: a prefix longer than its family, and too many */
	{
		static struct mlv_ip_prefix srcs[257];

		cfg.addrs = local_addrs;
		cfg.n_addrs = 2;
		srcs[0] = lb_sources[0];
		srcs[0].len = 33;
		cfg.sources = srcs;
		cfg.n_sources = 1;
		assert_int_equal(mlv_decap_configure(&maps, &cfg, why,
						     sizeof(why)), MLV_E_INVAL);
		assert_non_null(strstr(why, "prefix length 33"));
		for (unsigned i = 0; i < 257; i++) {
			srcs[i].ip = many[i];
			srcs[i].len = 32;
		}
		cfg.n_sources = 257;
		assert_int_equal(mlv_decap_configure(&maps, &cfg, why,
						     sizeof(why)), MLV_E_LIMIT);
		assert_non_null(strstr(why, "257 sources: at most 256"));
	}
	expect_decap(&w);            /* the old configuration stands */
}

/* Last: detaching ours; someone else's program is never replaced or
 * removed. */
static void detach_and_foreign_programs(void **state)
{
	struct mlv_xdp_steer *other = NULL;
	struct mlv_decap_maps m;
	char why[256] = "";
	int removed = -1, updated = -1;

	(void)state;
	assert_int_equal(mlv_decap_detach(lo, &removed, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(removed, 1);
	assert_int_equal(mlv_decap_open(lo, &m, why, sizeof(why)),
			 MLV_E_NOT_FOUND);
	assert_int_equal(mlv_decap_detach(lo, &removed, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(removed, 0);

	assert_int_equal(mlv_xdp_steer_attach("lo", MLV_XDP_MODE_AUTO, &other,
					      why, sizeof(why)), MLV_OK);
	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &base_cfg,
					  &updated, why, sizeof(why)),
			 MLV_E_BUSY);
	assert_non_null(strstr(why, "mlv_xdp_steer"));
	assert_int_equal(mlv_decap_detach(lo, &removed, why, sizeof(why)),
			 MLV_E_BUSY);
	assert_int_equal(removed, 0);
	mlv_xdp_steer_close(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipip_4in4),
		cmocka_unit_test(ipip_6in6),
		cmocka_unit_test(ipip_4in6),
		cmocka_unit_test(ipip_6in4),
		cmocka_unit_test(gue_every_family_pair),
		cmocka_unit_test(dscp_is_kept_and_padding_passes_through),
		cmocka_unit_test(ecn_congestion_mark_is_propagated),
		cmocka_unit_test(other_destination_is_untouched),
		cmocka_unit_test(gue_on_another_port_is_untouched),
		cmocka_unit_test(gue_extensions_are_untouched),
		cmocka_unit_test(outer_problems_are_untouched),
		cmocka_unit_test(truncated_frames_are_untouched),
		cmocka_unit_test(ordinary_traffic_is_untouched),
		cmocka_unit_test(unknown_sources_are_untouched),
		cmocka_unit_test(prefix_members_are_decapsulated),
		cmocka_unit_test(from_any_accepts_every_source),
		cmocka_unit_test(sources_are_replaced_and_read_back),
		cmocka_unit_test(reattach_reconfigures_in_place),
		cmocka_unit_test(bad_configuration_is_refused),
		cmocka_unit_test(detach_and_foreign_programs),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
