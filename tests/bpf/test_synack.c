/* SPDX-License-Identifier: BSD-3-Clause */
/* SYN-ACK MSS clamping on the backend (dataplane/bpf/decap/synack.h)
 * through BPF_PROG_TEST_RUN, configured by tools/bin/maglev-decap's code:
 * a SYN the XDP decapsulator undoes (encapsulated by maglevd's own
 * encapsulator, dataplane/packet/encap.c) leaves its flow in
 * decap_syn_mss with path MTU - outer headers - inner headers; the tc
 * egress program lowers the MSS option of that flow's SYN-ACK to it, byte
 * for byte against a frame built with its checksum computed from scratch
 * (tests/support/frames.c); SYN-ACKs of unknown flows, at or below the
 * value, or with options that do not parse leave unchanged. Runs in a
 * private network namespace, on lo. Needs root (exits 77, skipped,
 * without). */
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
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <netinet/in.h>

#include "tests/bpf/bpf_test_env.h"
#include "tests/bpf/decap_test_config.h"
#include "tools/bin/maglev-decap/decap_ctl.h"
#include "tools/bin/maglev-decap/synack_tc.h"
#include "dataplane/bpf/common/addr_key.h"
#include "dataplane/bpf/decap/structs.h"
#include "dataplane/packet/encap.h"
#include "tests/support/frames.h"

#define FRAME_CAP 2048
/* The path MTU the tests configure (auto would read lo's 65536). */
#define PATH_MTU 1500

static const uint8_t LB_MAC[6] = { 0x02, 0, 0, 0, 0x99, 0x01 };
static const uint8_t BE_MAC[6] = { 0x02, 0, 0, 0, 0x01, 0x11 };

static int lo;
static struct mlv_decap_maps maps;
static int xdp_fd = -1, tc_fd = -1;
static struct mlv_ip local_addrs[2];
static const uint16_t gue_ports[1] = { GUE_PORT };
static struct mlv_ip_prefix lb_sources[2];

static struct mlv_decap_config cfg = {
	.addrs = local_addrs, .n_addrs = 2,
	.gue_ports = gue_ports, .n_gue_ports = 1,
	.sources = lb_sources, .n_sources = 2,
	.path_mtu = PATH_MTU,
};

static int group_setup(void **state)
{
	char why[256] = "";
	uint32_t tc_id = 0;
	int updated;

	(void)state;
	bpf_test_private_netns();
	lo = (int)if_nametoindex("lo");
	if (!mlv_ip_parse(LOCAL4, &local_addrs[0]) ||
	    !mlv_ip_parse(LOCAL6, &local_addrs[1]) ||
	    mlv_ip_prefix_parse(LB_SRC4, &lb_sources[0]) ||
	    mlv_ip_prefix_parse(LB_SRC6, &lb_sources[1]))
		return -1;
	if (mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &cfg, &updated, why,
			     sizeof(why)) ||
	    mlv_decap_open(lo, &maps, why, sizeof(why)) ||
	    mlv_decap_tc_query(lo, &tc_id, why, sizeof(why)) || !tc_id) {
		fprintf(stderr, "setup: %s (tc id %u)\n", why, tc_id);
		return -1;
	}
	xdp_fd = bpf_prog_get_fd_by_id(maps.prog_id);
	tc_fd = bpf_prog_get_fd_by_id(tc_id);
	return xdp_fd < 0 || tc_fd < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	int removed;

	(void)state;
	if (xdp_fd >= 0)
		close(xdp_fd);
	if (tc_fd >= 0)
		close(tc_fd);
	mlv_decap_maps_close(&maps);
	mlv_decap_detach(lo, &removed, NULL, 0);
	return 0;
}

/* A TCP segment's description: flags, options, direction. */
struct seg {
	uint8_t family;           /* 4 or 6 */
	uint8_t flags;            /* TCP flags */
	const uint8_t *opts;      /* TCP options, len a multiple of 4 */
	uint8_t opt_len;
	int reply;                /* 1: VIP -> client (the backend's answer) */
	uint16_t client_port;     /* 0: frames.c's default, 40000 */
};

/* Refill the TCP checksum of the IP packet at ip (tcp at l4) from
 * scratch, as frames.c does. */
static void tcp_csum_fill(uint8_t *ip, uint8_t family, uint8_t *tcp,
			  uint32_t l4_len)
{
	const uint8_t *src = ip + (family == 4 ? 12 : 8);
	const uint8_t *dst = ip + (family == 4 ? 16 : 24);
	uint16_t c;

	tcp[16] = tcp[17] = 0;
	c = frame_csum(tcp, l4_len, frame_pseudo_sum(family, src, dst, 6,
						      l4_len));
	tcp[16] = (uint8_t)(c >> 8);
	tcp[17] = (uint8_t)c;
}

/* The IP packet (no Ethernet) of s at buf; returns its length. */
static uint32_t seg_ip(uint8_t *buf, const struct seg *s)
{
	struct frame_spec f;
	uint8_t tmp[16];
	uint32_t len, l4;

	frame_spec_init(&f, s->family, IPPROTO_TCP);
	f.tcp_flags = s->flags;
	f.tcp_opt_len = s->opt_len;
	if (s->client_port)
		f.sport = s->client_port;
	if (s->reply) {
		uint16_t p = f.sport;

		memcpy(tmp, f.src, 16);
		memcpy(f.src, f.dst, 16);
		memcpy(f.dst, tmp, 16);
		f.sport = f.dport;
		f.dport = p;
	}
	len = frame_build_ip(buf, FRAME_CAP, &f);
	assert_true(len > 0);
	l4 = s->family == 4 ? 20 : 40;
	if (s->opt_len)
		memcpy(buf + l4 + 20, s->opts, s->opt_len);
	tcp_csum_fill(buf, s->family, buf + l4, len - l4);
	return len;
}

/* s as the frame the backend's stack sends (BE_MAC -> LB_MAC). */
static uint32_t seg_frame(uint8_t *buf, const struct seg *s)
{
	memcpy(buf, LB_MAC, 6);
	memcpy(buf + 6, BE_MAC, 6);
	buf[12] = s->family == 4 ? 0x08 : 0x86;
	buf[13] = s->family == 4 ? 0x00 : 0xdd;
	return 14 + seg_ip(buf + 14, s);
}

/* s from a client, encapsulated by maglevd with method over outer. */
static uint32_t seg_encapsulated(uint8_t *buf, const struct seg *s,
				 enum mlv_encap_method method, uint8_t outer)
{
	struct mlv_encap_params p = { 0 };
	struct mlv_encap_tmpl t;
	uint8_t inner[FRAME_CAP];
	uint32_t ilen = seg_ip(inner, s);

	p.method = method;
	memcpy(p.src_mac, LB_MAC, 6);
	memcpy(p.dst_mac, BE_MAC, 6);
	p.outer_family = outer;
	frame_addr(p.outer_src, outer == 4 ? LB_SRC4 : LB_SRC6);
	frame_addr(p.outer_dst, outer == 4 ? LOCAL4 : LOCAL6);
	p.inner_family = s->family;
	p.gue_port = GUE_PORT;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);
	memcpy(buf + t.len, inner, ilen);
	mlv_encap_apply(buf, &t, (uint16_t)ilen, 0, 0x5eed);
	return t.len + ilen;
}

/* decap_syn_mss's key for s's flow (client -> VIP). */
static struct mlv_decap_flow_key flow_key(const struct seg *s)
{
	struct mlv_decap_flow_key k;
	struct frame_spec f;

	memset(&k, 0, sizeof(k));
	frame_spec_init(&f, s->family, IPPROTO_TCP);
	k.family = s->family == 4 ? MLV_BPF_FAMILY_V4 : MLV_BPF_FAMILY_V6;
	k.proto = IPPROTO_TCP;
	k.sport = htons(s->client_port ? s->client_port : f.sport);
	k.dport = htons(f.dport);
	memcpy(k.saddr, f.src, s->family == 4 ? 4 : 16);
	memcpy(k.daddr, f.dst, s->family == 4 ? 4 : 16);
	return k;
}

/* The recorded MSS of s's flow, 0 if none. */
static uint32_t recorded(const struct seg *s)
{
	struct mlv_decap_flow_key k = flow_key(s);
	struct mlv_decap_flow_val v;

	if (bpf_map_lookup_elem(maps.syn_mss_fd, &k, &v))
		return 0;
	return v.mss;
}

static void forget(const struct seg *s)
{
	struct mlv_decap_flow_key k = flow_key(s);

	bpf_map_delete_elem(maps.syn_mss_fd, &k);
}

static uint64_t counter(enum mlv_decap_counter c)
{
	uint64_t v[MLV_DECAP_CTR__COUNT];

	assert_int_equal(mlv_decap_counters(&maps, v), MLV_OK);
	return v[c];
}

static int run_tc(const uint8_t *in, uint32_t len, uint8_t *out,
		  uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = in, .data_size_in = len,
		.data_out = out, .data_size_out = FRAME_CAP);

	assert_int_equal(bpf_prog_test_run_opts(tc_fd, &o), 0);
	*out_len = o.data_size_out;
	return (int)o.retval;
}

/* The SYN s (from the client) decapsulated with method over outer: the
 * flow must be recorded with want, counted once. */
static void syn_records(const struct seg *s, enum mlv_encap_method method,
			uint8_t outer, uint32_t want)
{
	uint8_t frame[FRAME_CAP], out[FRAME_CAP];
	uint32_t len = seg_encapsulated(frame, s, method, outer), out_len;
	uint64_t before = counter(MLV_DECAP_CTR_SYN_RECORDED);

	forget(s);
	assert_int_equal(bpf_test_run_xdp(xdp_fd, frame, len, out, FRAME_CAP,
					  &out_len), XDP_PASS);
	assert_int_equal(recorded(s), want);
	assert_int_equal(counter(MLV_DECAP_CTR_SYN_RECORDED), before + 1);
}

/* The SYN-ACK s must leave with its MSS value (at offset mss_at of its
 * options) set to want, or unchanged when want is 0; ctr counts it. */
static void synack_leaves(const struct seg *s, int mss_at, uint16_t want,
			  enum mlv_decap_counter ctr)
{
	uint8_t frame[FRAME_CAP], out[FRAME_CAP], exp[FRAME_CAP];
	uint8_t opts[40];
	uint32_t len = seg_frame(frame, s), exp_len = len, out_len = 0;
	uint64_t before = counter(ctr);

	memcpy(exp, frame, len);
	if (want) {
		struct seg e = *s;

		if (s->opt_len)
			memcpy(opts, s->opts, s->opt_len);
		opts[mss_at] = (uint8_t)(want >> 8);
		opts[mss_at + 1] = (uint8_t)want;
		e.opts = opts;
		exp_len = seg_frame(exp, &e);
		assert_memory_not_equal(exp, frame, len);
	}
	assert_int_equal(run_tc(frame, len, out, &out_len), TC_ACT_OK);
	assert_int_equal(out_len, exp_len);
	assert_memory_equal(out, exp, exp_len);
	assert_true(frame_ip_checksums_ok(out + 14, out_len - 14));
	assert_int_equal(counter(ctr), before + 1);
}

/* MSS 1460, NOP, NOP, SACK permitted: the MSS value at option offset 2. */
static const uint8_t OPTS_LINUX[8] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2 };
/* NOP, MSS 1460, NOP x3: the value at an odd offset (3). */
static const uint8_t OPTS_ODD[8] = { 1, 2, 4, 0x05, 0xb4, 1, 1, 1 };
/* Window scale, then MSS 1200 */
static const uint8_t OPTS_LOW[8] = { 3, 3, 7, 2, 4, 0x04, 0xb0, 0 };

#define SYN 0x02
#define SYNACK 0x12
#define ACK 0x10

/* Every tunnel gives its own MSS: 1500 - outer - inner IP and TCP. */
static void syn_records_the_tunnels_mss(void **state)
{
	struct seg s4 = { 4, SYN, OPTS_LINUX, 8, 0, 0 };
	struct seg s6 = { 6, SYN, OPTS_LINUX, 8, 0, 0 };

	(void)state;
	syn_records(&s4, MLV_ENCAP_IPIP, 4, PATH_MTU - 20 - 40);
	syn_records(&s4, MLV_ENCAP_GUE, 4, PATH_MTU - 32 - 40);
	syn_records(&s4, MLV_ENCAP_GUE, 6, PATH_MTU - 52 - 40);
	syn_records(&s6, MLV_ENCAP_IPIP, 6, PATH_MTU - 40 - 60);
	syn_records(&s6, MLV_ENCAP_GUE, 6, PATH_MTU - 52 - 60);
	syn_records(&s6, MLV_ENCAP_GUE, 4, PATH_MTU - 32 - 60);
}

/* Other segments of the flow, and a SYN-ACK coming in, record nothing. */
static void only_syns_are_recorded(void **state)
{
	static const uint8_t flags[] = { ACK, SYNACK, 0x18, 0x11, 0x04 };
	uint8_t frame[FRAME_CAP], out[FRAME_CAP];
	uint64_t before = counter(MLV_DECAP_CTR_SYN_RECORDED);

	(void)state;
	for (unsigned i = 0; i < sizeof(flags); i++) {
		struct seg s = { 4, flags[i], OPTS_LINUX, 8, 0, 0 };
		uint32_t len = seg_encapsulated(frame, &s, MLV_ENCAP_IPIP, 4);
		uint32_t out_len;

		forget(&s);
		assert_int_equal(bpf_test_run_xdp(xdp_fd, frame, len, out,
						  FRAME_CAP, &out_len),
				 XDP_PASS);
		assert_int_equal(recorded(&s), 0);
	}
	assert_int_equal(counter(MLV_DECAP_CTR_SYN_RECORDED), before);
}

/* IPv4 over IPIP: 1460 becomes 1440; again for a retransmitted SYN-ACK
 * (the entry stays); the value at an odd offset too. */
static void synack_is_clamped_v4(void **state)
{
	struct seg syn = { 4, SYN, OPTS_LINUX, 8, 0, 0 };
	struct seg sa = { 4, SYNACK, OPTS_LINUX, 8, 1, 0 };
	struct seg odd = { 4, SYNACK, OPTS_ODD, 8, 1, 0 };

	(void)state;
	syn_records(&syn, MLV_ENCAP_IPIP, 4, 1440);
	synack_leaves(&sa, 2, 1440, MLV_DECAP_CTR_SYNACK_CLAMPED);
	synack_leaves(&sa, 2, 1440, MLV_DECAP_CTR_SYNACK_CLAMPED);
	synack_leaves(&odd, 3, 1440, MLV_DECAP_CTR_SYNACK_CLAMPED);
}

/* IPv6 over GUE: 1440 becomes 1388; odd offset. */
static void synack_is_clamped_v6(void **state)
{
	static const uint8_t opts6[8] = { 2, 4, 0x05, 0xa0, 1, 1, 4, 2 };
	struct seg syn = { 6, SYN, opts6, 8, 0, 0 };
	struct seg sa = { 6, SYNACK, opts6, 8, 1, 0 };
	struct seg odd = { 6, SYNACK, OPTS_ODD, 8, 1, 0 };

	(void)state;
	syn_records(&syn, MLV_ENCAP_GUE, 6, 1388);
	synack_leaves(&sa, 2, 1388, MLV_DECAP_CTR_SYNACK_CLAMPED);
	synack_leaves(&odd, 3, 1388, MLV_DECAP_CTR_SYNACK_CLAMPED);
}

/* A flow no decapsulated SYN started (the backend's own services), an
 * MSS at or below the value, no MSS option, and a segment that is not a
 * SYN-ACK: all leave unchanged. */
static void other_synacks_are_untouched(void **state)
{
	static const uint8_t no_mss[8] = { 1, 1, 4, 2, 3, 3, 7, 0 };
	static const uint8_t exact[4] = { 2, 4, 0x05, 0xa0 };   /* 1440 */
	struct seg syn = { 4, SYN, OPTS_LINUX, 8, 0, 0 };
	struct seg unknown = { 4, SYNACK, OPTS_LINUX, 8, 1, 40001 };
	struct seg low = { 4, SYNACK, OPTS_LOW, 8, 1, 0 };
	struct seg same = { 4, SYNACK, exact, 4, 1, 0 };
	struct seg none = { 4, SYNACK, no_mss, 8, 1, 0 };
	struct seg bare = { 4, SYNACK, NULL, 0, 1, 0 };
	struct seg ack = { 4, ACK, OPTS_LINUX, 8, 1, 0 };
	uint8_t frame[FRAME_CAP], out[FRAME_CAP];
	uint64_t before[MLV_DECAP_CTR__COUNT], after[MLV_DECAP_CTR__COUNT];
	uint32_t len, out_len;

	(void)state;
	syn_records(&syn, MLV_ENCAP_IPIP, 4, 1440);
	forget(&unknown);
	synack_leaves(&unknown, 2, 0, MLV_DECAP_CTR_SYNACK_UNKNOWN);
	synack_leaves(&low, 5, 0, MLV_DECAP_CTR_SYNACK_FITS);
	synack_leaves(&same, 2, 0, MLV_DECAP_CTR_SYNACK_FITS);
	synack_leaves(&none, 0, 0, MLV_DECAP_CTR_SYNACK_FITS);
	synack_leaves(&bare, 0, 0, MLV_DECAP_CTR_SYNACK_FITS);

	assert_int_equal(mlv_decap_counters(&maps, before), MLV_OK);
	len = seg_frame(frame, &ack);
	assert_int_equal(run_tc(frame, len, out, &out_len), TC_ACT_OK);
	assert_int_equal(out_len, len);
	assert_memory_equal(out, frame, len);
	assert_int_equal(mlv_decap_counters(&maps, after), MLV_OK);
	assert_memory_equal(before, after, sizeof(before));
}

/* Options that do not parse leave the SYN-ACK as it is. */
static void malformed_options_are_untouched(void **state)
{
	static const uint8_t bad[][8] = {
		{ 2, 3, 0x05, 0xb4, 1, 1, 1, 1 },   /* MSS of length 3 */
		{ 1, 1, 8, 1, 2, 4, 0x05, 0xb4 },   /* an option of length 1 */
		{ 1, 1, 1, 1, 1, 8, 10, 0 },        /* past the header's end */
		{ 1, 1, 1, 1, 1, 1, 1, 2 },         /* a kind with no length */
	};
	struct seg syn = { 4, SYN, OPTS_LINUX, 8, 0, 0 };

	(void)state;
	syn_records(&syn, MLV_ENCAP_IPIP, 4, 1440);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct seg sa = { 4, SYNACK, bad[i], 8, 1, 0 };

		synack_leaves(&sa, 0, 0, MLV_DECAP_CTR_SYNACK_MALFORMED);
	}
}

/* Random option bytes (every length the header allows) on a recorded
 * flow's SYN-ACK: the program changes at most the two MSS bytes and the
 * checksum, the result always verifies, a change is always to the
 * recorded MSS, and exactly one synack_* counter counts each frame. */
static void random_options_change_only_the_mss(void **state)
{
	static const enum mlv_decap_counter outcomes[] = {
		MLV_DECAP_CTR_SYNACK_CLAMPED, MLV_DECAP_CTR_SYNACK_FITS,
		MLV_DECAP_CTR_SYNACK_UNKNOWN, MLV_DECAP_CTR_SYNACK_MALFORMED,
	};
	struct seg syn = { 4, SYN, OPTS_LINUX, 8, 0, 0 };
	uint8_t opts[40], frame[FRAME_CAP], out[FRAME_CAP];
	uint64_t before[MLV_DECAP_CTR__COUNT], after[MLV_DECAP_CTR__COUNT];
	unsigned seed = 2718, clamped = 0;

	(void)state;
	syn_records(&syn, MLV_ENCAP_IPIP, 4, 1440);
	for (unsigned round = 0; round < 3000; round++) {
		struct seg sa = { 4, SYNACK, opts, 0, 1, 0 };
		uint32_t len, out_len, moved = 0, l4 = 14 + 20;

		sa.opt_len = (uint8_t)(4 * (1 + rand_r(&seed) % 10));
		for (unsigned i = 0; i < sa.opt_len; i++) {
			int r = rand_r(&seed) % 8;

			/* kinds 0-2 and small lengths often, so MSS options
			 * and near-valid lists come up */
			opts[i] = r < 3 ? (uint8_t)r : r < 6 ?
				(uint8_t)(rand_r(&seed) % 12) :
				(uint8_t)rand_r(&seed);
		}
		if (rand_r(&seed) % 2) {
			/* an MSS option of any value somewhere */
			unsigned at = (unsigned)rand_r(&seed) %
				      (sa.opt_len - 3u);

			opts[at] = 2;
			opts[at + 1] = 4;
			opts[at + 2] = (uint8_t)rand_r(&seed);
		}
		len = seg_frame(frame, &sa);
		assert_int_equal(mlv_decap_counters(&maps, before), MLV_OK);
		assert_int_equal(run_tc(frame, len, out, &out_len), TC_ACT_OK);
		assert_int_equal(mlv_decap_counters(&maps, after), MLV_OK);
		assert_int_equal(out_len, len);
		assert_true(frame_ip_checksums_ok(out + 14, out_len - 14));
		for (unsigned i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]);
		     i++)
			moved += (uint32_t)(after[outcomes[i]] -
					    before[outcomes[i]]);
		assert_int_equal(moved, 1);
		for (uint32_t i = 0; i < len; i++) {
			if (out[i] == frame[i] || i == l4 + 16 || i == l4 + 17)
				continue;
			/* a changed byte is one of the MSS value's, which
			 * now reads 1440 */
			assert_true(i >= l4 + 20 + 2);
			assert_int_equal(opts[i - l4 - 20 - 2], 2);
			assert_int_equal(opts[i - l4 - 20 - 1], 4);
			assert_int_equal(out[i] << 8 | out[i + 1], 1440);
			assert_int_equal(after[MLV_DECAP_CTR_SYNACK_CLAMPED],
					 before[MLV_DECAP_CTR_SYNACK_CLAMPED] + 1);
			clamped++;
			break;
		}
	}
	/* the generator does reach the rewrite */
	assert_true(clamped > 10);
}

/* path MTU 0 (--mss-clamp off) records nothing and removes the egress
 * program; configuring it again brings the program back; detach removes
 * both programs. */
static void off_records_nothing_and_detach_removes_both(void **state)
{
	struct mlv_decap_config off = cfg;
	struct seg syn = { 4, SYN, OPTS_LINUX, 8, 0, 40002 };
	uint8_t frame[FRAME_CAP], out[FRAME_CAP];
	uint32_t len = seg_encapsulated(frame, &syn, MLV_ENCAP_IPIP, 4);
	uint32_t out_len, tc_id = 1, path_mtu = 1;
	char why[256] = "";
	int updated = 0, removed = 0;

	(void)state;
	off.path_mtu = 0;
	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &off,
					  &updated, why, sizeof(why)), MLV_OK);
	assert_int_equal(updated, 1);
	assert_int_equal(mlv_decap_tc_query(lo, &tc_id, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(tc_id, 0);
	assert_int_equal(mlv_decap_read_path_mtu(&maps, &path_mtu), MLV_OK);
	assert_int_equal(path_mtu, 0);
	assert_int_equal(bpf_test_run_xdp(xdp_fd, frame, len, out, FRAME_CAP,
					  &out_len), XDP_PASS);
	assert_int_equal(recorded(&syn), 0);

	off.path_mtu = 100;     /* below what any IP path carries */
	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &off,
					  &updated, why, sizeof(why)),
			 MLV_E_INVAL);
	assert_non_null(strstr(why, "path MTU 100"));

	assert_int_equal(mlv_decap_attach(lo, MLV_DECAP_MODE_AUTO, &cfg,
					  &updated, why, sizeof(why)), MLV_OK);
	assert_int_equal(mlv_decap_tc_query(lo, &tc_id, why, sizeof(why)),
			 MLV_OK);
	assert_true(tc_id != 0);
	/* the new egress program shares the attached decapsulator's map */
	syn_records(&syn, MLV_ENCAP_IPIP, 4, 1440);
	{
		struct seg sa = { 4, SYNACK, OPTS_LINUX, 8, 1, 40002 };
		int fd = bpf_prog_get_fd_by_id(tc_id);

		assert_true(fd >= 0);
		close(tc_fd);
		tc_fd = fd;
		synack_leaves(&sa, 2, 1440, MLV_DECAP_CTR_SYNACK_CLAMPED);
	}

	assert_int_equal(mlv_decap_detach(lo, &removed, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(removed, 1);
	assert_int_equal(mlv_decap_tc_query(lo, &tc_id, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(tc_id, 0);
	assert_int_equal(mlv_decap_detach(lo, &removed, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(removed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syn_records_the_tunnels_mss),
		cmocka_unit_test(only_syns_are_recorded),
		cmocka_unit_test(synack_is_clamped_v4),
		cmocka_unit_test(synack_is_clamped_v6),
		cmocka_unit_test(other_synacks_are_untouched),
		cmocka_unit_test(malformed_options_are_untouched),
		cmocka_unit_test(random_options_change_only_the_mss),
		/* last: it detaches */
		cmocka_unit_test(off_records_nothing_and_detach_removes_both),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
