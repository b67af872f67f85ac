/* SPDX-License-Identifier: BSD-3-Clause */
/* The data-path health check programs (dataplane/bpf/check_path) through
 * BPF_PROG_TEST_RUN, their maps filled with the records
 * control/check_path builds (mlv_check_path_records) from a check's
 * struct mlv_health_tunnel. Every frame, in and expected out, is built
 * here field by field with checksums summed from scratch; each case
 * compares the whole output frame byte for byte, checks the inner TCP
 * checksum (and over IPv6 the outer UDP one) by a full sum, and which
 * counters moved:
 *  - mlv_check_out: a check packet re-addressed to the VIP and sent as
 *    ipip (4in4, 6in6), gue (over IPv4 and IPv6) or l2dsr (with and
 *    without a configured MAC), a SYN with an MSS option and a segment
 *    with an odd-length HTTP request each; other TCP, UDP and non-IP
 *    frames untouched;
 *  - ipip with an ipip_source (ipip_source6) prefix: the outer source
 *    the prefix with the host bits of maglevd's flow hash
 *    (mlv_flow_hash of a key built here from the packet's fields), for
 *    several check ports inside the prefix with a right IPv4 header
 *    checksum; a host prefix as it is; gue ignoring a prefix;
 *  - mlv_check_path_records: the prefix in the out record, refused when
 *    of the other family or too long;
 *  - mlv_check_in: replies from the VIP re-addressed to the backend,
 *    others untouched.
 * Runs in a private network namespace. Needs root (exits 77, skipped,
 * without). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <netinet/in.h>

#include "control/check_path/check_path.h"
#include "dataplane/packet/flow_hash.h"
#include "tests/bpf/bpf_test_env.h"
#include "tc_check_path.skel.h"

#define FRAME_CAP 4096

static const uint8_t HOST_MAC[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 };
static const uint8_t GW_MAC[6]   = { 0x02, 0, 0, 0, 0xaa, 0xfe };
static const uint8_t BE_MAC[6]   = { 0x02, 0, 0, 0, 0x01, 0x11 };

#define HOST4    "10.0.0.1"
#define BACKEND4 "10.0.1.5"
#define VIP4     "192.0.2.10"
#define HOST6    "fd00::1"
#define BACKEND6 "fd00:1::5"
#define VIP6     "2001:db8::10"
#define CHECK_PORT 80
/* ipip outer source prefixes (ipip_source, ipip_source6) */
#define SRC4     "10.77.0.16/28"
#define SRC6     "fd00:77::100/120"
#define SRC4_ONE "10.77.1.9/32"
#define SRC6_ONE "fd00:77::1:9/128"
#define GUE_PORT 6080
#define OTHER_LOCAL_PORT 40999

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_PSH 0x08
#define TCP_ACK 0x10

/* the check sockets' own ports: one tunnel (check) each */
enum {
	P_IPIP4 = 40001, P_GUE4, P_L2MAC4, P_L2BARE4,
	P_IPIP6 = 40011, P_GUE6, P_L2MAC6, P_L2BARE6,
	/* ipip with SRC4 / SRC6: N_SRC_PORTS checks each */
	P_SRC4 = 40021,
	P_SRC6 = 40031,
	/* ipip with SRC4_ONE / SRC6_ONE; gue with SRC4 / SRC6 */
	P_ONE4 = 40041, P_ONE6, P_GUESRC4, P_GUESRC6,
};
#define N_SRC_PORTS 6

static struct tc_check_path_bpf *skel;
static int out_fd = -1, in_fd = -1, ctr_fd = -1;
/* matching packets run so far: what the counters must say */
static uint64_t want_carried, want_returned;

static const uint8_t MSS_OPT[4] = { 2, 4, 0x05, 0xb4 };   /* MSS 1460 */
static const char HTTP_GET[] = "GET /healthz HTTP/1.1\r\n";    /* 23 bytes */
static const char HTTP_OK[] = "HTTP/1.1 200 OK\r\n";           /* 17 bytes */

/* ---- addresses ---- */

static void addr(uint8_t out[16], const char *text)
{
	struct mlv_ip ip;

	assert_true(mlv_ip_parse(text, &ip));
	memcpy(out, ip.bytes, 16);
}

static struct mlv_ip ip_of(const char *text)
{
	struct mlv_ip ip;

	assert_true(mlv_ip_parse(text, &ip));
	return ip;
}

/* ---- checksums: plain full sums, nothing incremental ---- */

/* The one's-complement sum of len bytes as big-endian 16-bit words, an
 * odd last byte padded with zero, added to sum (not folded). */
static uint32_t sum_bytes(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The pseudo-header's sum: RFC 793 / 768 (IPv4), RFC 8200 8.1 (IPv6). */
static uint32_t pseudo_sum(uint8_t family, const uint8_t *src,
			   const uint8_t *dst, uint8_t proto, uint32_t l4_len)
{
	uint8_t ph[40];

	memset(ph, 0, sizeof(ph));
	if (family == 4) {
		memcpy(ph, src, 4);
		memcpy(ph + 4, dst, 4);
		ph[9] = proto;
		ph[10] = (uint8_t)(l4_len >> 8);
		ph[11] = (uint8_t)l4_len;
		return sum_bytes(0, ph, 12);
	}
	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	ph[32] = (uint8_t)(l4_len >> 24);
	ph[33] = (uint8_t)(l4_len >> 16);
	ph[34] = (uint8_t)(l4_len >> 8);
	ph[35] = (uint8_t)l4_len;
	ph[39] = proto;
	return sum_bytes(0, ph, 40);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The checksum field value for the bytes at p (field zeroed there). */
static uint16_t csum_of(uint32_t seed, const uint8_t *p, size_t len)
{
	return (uint16_t)~fold(sum_bytes(seed, p, len));
}

/* ---- frames ---- */

/* An IP packet with a TCP or UDP payload. */
struct seg {
	uint8_t family;             /* 4 or 6 */
	uint8_t proto;              /* IPPROTO_TCP (default 0 too) or UDP */
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint8_t flags;              /* TCP */
	const uint8_t *opts;        /* TCP options, a multiple of 4 */
	uint8_t opt_len;
	const uint8_t *data;
	uint16_t data_len;
};

static void ip4_header(uint8_t *h, uint16_t tot_len, uint16_t id,
		       uint16_t frag, uint8_t ttl, uint8_t proto,
		       const uint8_t *src, const uint8_t *dst)
{
	h[0] = 0x45;
	h[1] = 0;
	put16(h + 2, tot_len);
	put16(h + 4, id);
	put16(h + 6, frag);
	h[8] = ttl;
	h[9] = proto;
	h[10] = h[11] = 0;
	memcpy(h + 12, src, 4);
	memcpy(h + 16, dst, 4);
	put16(h + 10, csum_of(0, h, 20));
}

static void ip6_header(uint8_t *h, uint16_t payload_len, uint8_t nexthdr,
		       uint8_t hop_limit, const uint8_t *src,
		       const uint8_t *dst)
{
	h[0] = 0x60;
	h[1] = h[2] = h[3] = 0;
	put16(h + 4, payload_len);
	h[6] = nexthdr;
	h[7] = hop_limit;
	memcpy(h + 8, src, 16);
	memcpy(h + 24, dst, 16);
}

/* s as an IP packet at buf; its length. Checksums from scratch. */
static uint32_t build_ip(uint8_t *buf, const struct seg *s)
{
	uint8_t proto = s->proto ? s->proto : IPPROTO_TCP;
	uint32_t ihl = s->family == 4 ? 20 : 40, l4_len;
	uint8_t *l4 = buf + ihl;

	if (proto == IPPROTO_TCP) {
		uint32_t thl = 20u + s->opt_len;

		put16(l4, s->sport);
		put16(l4 + 2, s->dport);
		l4[4] = 0x11; l4[5] = 0x22; l4[6] = 0x33; l4[7] = 0x44;
		if (s->flags & TCP_ACK) {
			l4[8] = 0x5a; l4[9] = 0x6b; l4[10] = 0x7c; l4[11] = 0x8d;
		} else {
			memset(l4 + 8, 0, 4);
		}
		l4[12] = (uint8_t)(thl / 4 << 4);
		l4[13] = s->flags;
		put16(l4 + 14, 64240);
		l4[16] = l4[17] = 0;
		l4[18] = l4[19] = 0;
		if (s->opt_len)
			memcpy(l4 + 20, s->opts, s->opt_len);
		if (s->data_len)
			memcpy(l4 + thl, s->data, s->data_len);
		l4_len = thl + s->data_len;
		put16(l4 + 16, csum_of(pseudo_sum(s->family, s->src, s->dst,
						  IPPROTO_TCP, l4_len),
				       l4, l4_len));
	} else {
		uint16_t c;

		l4_len = 8u + s->data_len;
		put16(l4, s->sport);
		put16(l4 + 2, s->dport);
		put16(l4 + 4, (uint16_t)l4_len);
		l4[6] = l4[7] = 0;
		if (s->data_len)
			memcpy(l4 + 8, s->data, s->data_len);
		c = csum_of(pseudo_sum(s->family, s->src, s->dst, IPPROTO_UDP,
				       l4_len), l4, l4_len);
		put16(l4 + 6, c ? c : 0xffff);
	}
	if (s->family == 4)
		ip4_header(buf, (uint16_t)(20 + l4_len), 0x1c46, 0x4000, 64,
			   proto, s->src, s->dst);
	else
		ip6_header(buf, (uint16_t)l4_len, proto, 64, s->src, s->dst);
	return ihl + l4_len;
}

static uint32_t eth(uint8_t *buf, const uint8_t *dmac, uint16_t type)
{
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, HOST_MAC, 6);
	put16(buf + 12, type);
	return 14;
}

static uint16_t ethertype(uint8_t family)
{
	return family == 4 ? 0x0800 : 0x86dd;
}

/* s as the frame the host's stack sends (to the gateway's MAC). */
static uint32_t build_frame(uint8_t *buf, const struct seg *s)
{
	uint32_t n = eth(buf, GW_MAC, ethertype(s->family));

	return n + build_ip(buf + n, s);
}

/* What check packet s must become with method (MLV_CP_*): its
 * destination the VIP, then the outer headers. dmac: the frame's
 * destination MAC; osrc: ipip's outer source, NULL for s's own. */
static uint32_t build_carried(uint8_t *buf, const struct seg *s,
			      const char *vip, int method,
			      const uint8_t *dmac, const uint8_t *osrc)
{
	struct seg in = *s;
	uint8_t inner[FRAME_CAP];
	uint32_t n, ilen, hlen;
	uint8_t *o;

	addr(in.dst, vip);
	n = eth(buf, dmac, ethertype(s->family));
	if (method == MLV_CP_L2DSR)
		return n + build_ip(buf + n, &in);
	ilen = build_ip(inner, &in);
	o = buf + n;
	hlen = s->family == 4 ? 20 : 40;
	if (method == MLV_CP_GUE) {
		uint8_t *udp = o + hlen;
		uint32_t ulen = 8 + 4 + ilen;

		put16(udp, s->sport);
		put16(udp + 2, GUE_PORT);
		put16(udp + 4, (uint16_t)ulen);
		udp[6] = udp[7] = 0;
		udp[8] = 0;                                 /* version 0 */
		udp[9] = s->family == 4 ? 4 : 41;           /* inner proto */
		udp[10] = udp[11] = 0;
		memcpy(udp + 12, inner, ilen);
		if (s->family == 4) {
			ip4_header(o, (uint16_t)(20 + ulen), 0, 0x4000, 64,
				   IPPROTO_UDP, s->src, s->dst);
		} else {
			uint16_t c;

			ip6_header(o, (uint16_t)ulen, IPPROTO_UDP, 64, s->src,
				   s->dst);
			c = csum_of(pseudo_sum(6, s->src, s->dst, IPPROTO_UDP,
					       ulen), udp, ulen);
			put16(udp + 6, c ? c : 0xffff);
		}
		return n + hlen + ulen;
	}
	memcpy(o + hlen, inner, ilen);
	if (!osrc)
		osrc = s->src;
	if (s->family == 4)
		ip4_header(o, (uint16_t)(20 + ilen), 0, 0x4000, 64,
			   IPPROTO_IPIP, osrc, s->dst);
	else
		ip6_header(o, (uint16_t)ilen, IPPROTO_IPV6, 64, osrc, s->dst);
	return n + hlen + ilen;
}

/* ---- verification from the output's bytes ---- */

/* The TCP checksum of the IP packet at ip (len bytes) sums right. */
static bool tcp_csum_ok(const uint8_t *ip, uint32_t len)
{
	uint8_t family = ip[0] >> 4;
	uint32_t ihl, l4_len;

	if (family == 4) {
		ihl = (ip[0] & 0xf) * 4u;
		if (ip[9] != IPPROTO_TCP || get16(ip + 2) > len)
			return false;
		l4_len = get16(ip + 2) - ihl;
		return fold(sum_bytes(pseudo_sum(4, ip + 12, ip + 16,
						 IPPROTO_TCP, l4_len),
				      ip + ihl, l4_len)) == 0xffff;
	}
	ihl = 40;
	if (ip[6] != IPPROTO_TCP || 40u + get16(ip + 4) > len)
		return false;
	l4_len = get16(ip + 4);
	return fold(sum_bytes(pseudo_sum(6, ip + 8, ip + 24, IPPROTO_TCP,
					 l4_len),
			      ip + ihl, l4_len)) == 0xffff;
}

/* The outer UDP checksum of the IPv6 GUE packet at ip sums right over
 * the whole datagram and is not 0 ("none"). */
static bool udp6_csum_ok(const uint8_t *ip, uint32_t len)
{
	const uint8_t *udp = ip + 40;
	uint32_t ulen;

	if (ip[6] != IPPROTO_UDP || len < 48)
		return false;
	ulen = get16(udp + 4);
	if (ulen != get16(ip + 4) || 40 + ulen > len || !get16(udp + 6))
		return false;
	return fold(sum_bytes(pseudo_sum(6, ip + 8, ip + 24, IPPROTO_UDP,
					 ulen), udp, ulen)) == 0xffff;
}

static void dump_diff(const uint8_t *want, uint32_t want_len,
		      const uint8_t *got, uint32_t got_len)
{
	uint32_t n = want_len > got_len ? want_len : got_len;

	fprintf(stderr, "frame differs: want %u bytes, got %u\n", want_len,
		got_len);
	fprintf(stderr, "  off  want got\n");
	for (uint32_t i = 0; i < n; i++) {
		int w = i < want_len ? want[i] : -1;
		int g = i < got_len ? got[i] : -1;

		if (w != g)
			fprintf(stderr, "  %4u  %02x  %02x\n", i,
				w < 0 ? 0 : w, g < 0 ? 0 : g);
	}
}

/* ---- running ---- */

static void counters(uint64_t out[MLV_CP_CTR__COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	assert_true(ncpu > 0);
	v = calloc((size_t)ncpu, sizeof(*v));
	assert_non_null(v);
	for (uint32_t c = 0; c < MLV_CP_CTR__COUNT; c++) {
		out[c] = 0;
		assert_int_equal(bpf_map_lookup_elem(ctr_fd, &c, v), 0);
		for (int i = 0; i < ncpu; i++)
			out[c] += v[i];
	}
	free(v);
}

static int run(int prog_fd, const uint8_t *in, uint32_t len, uint8_t *out,
	       uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = in, .data_size_in = len,
		.data_out = out, .data_size_out = FRAME_CAP,
		.repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &o), 0);
	*out_len = o.data_size_out;
	return (int)o.retval;
}

/* in through prog_fd must give TC_ACT_OK and exactly want, with counter
 * ctr (-1: none) one more and the others unchanged. ip_off: where the
 * (inner) TCP packet starts in the output to verify its checksum, 0 for
 * none. */
static void expect(int prog_fd, const uint8_t *in, uint32_t len,
		   const uint8_t *want, uint32_t want_len, int ctr,
		   uint32_t ip_off)
{
	uint64_t before[MLV_CP_CTR__COUNT], after[MLV_CP_CTR__COUNT];
	uint8_t out[FRAME_CAP];
	uint32_t out_len = 0;
	int ret;

	counters(before);
	ret = run(prog_fd, in, len, out, &out_len);
	counters(after);
	assert_int_equal(ret, TC_ACT_OK);
	if (out_len != want_len || memcmp(out, want, want_len)) {
		dump_diff(want, want_len, out, out_len);
		fail_msg("output frame is not the expected one");
	}
	if (ip_off)
		assert_true(tcp_csum_ok(out + ip_off, out_len - ip_off));
	for (int c = 0; c < MLV_CP_CTR__COUNT; c++)
		assert_int_equal(after[c] - before[c], c == ctr ? 1 : 0);
	if (ctr == MLV_CP_CTR_CARRIED)
		want_carried++;
	else if (ctr == MLV_CP_CTR_RETURNED)
		want_returned++;
}

static void expect_untouched(int prog_fd, const uint8_t *in, uint32_t len)
{
	expect(prog_fd, in, len, in, len, -1, 0);
}

/* ---- setup: one check (tunnel) per case, as maglevd adds them ---- */

/* src_prefix: the tunnel's outer_source, NULL for none. */
static void add_tunnel(const char *backend, const char *vip,
		       uint16_t local_port, enum mlv_forwarding fwd,
		       bool has_mac, const char *src_prefix)
{
	struct mlv_health_tunnel t;
	struct mlv_cp_out_key ok;
	struct mlv_cp_out ov;
	struct mlv_cp_in_key ik;
	struct mlv_cp_in iv;

	memset(&t, 0, sizeof(t));
	t.backend = ip_of(backend);
	t.vip = ip_of(vip);
	t.port = CHECK_PORT;
	t.local_port = local_port;
	t.forwarding = fwd;
	t.gue_port = GUE_PORT;
	t.has_mac = has_mac;
	memcpy(t.mac.bytes, BE_MAC, 6);
	if (src_prefix)
		assert_null(mlv_ip_prefix_parse(src_prefix, &t.outer_source));
	assert_int_equal(mlv_check_path_records(&t, &ok, &ov, &ik, &iv),
			 MLV_OK);
	assert_int_equal(bpf_map_update_elem(out_fd, &ok, &ov, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(in_fd, &ik, &iv, BPF_ANY), 0);
}

static int group_setup(void **state)
{
	(void)state;
	bpf_test_private_netns();
	skel = tc_check_path_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "setup: loading tc_check_path failed\n");
		return -1;
	}
	out_fd = bpf_map__fd(skel->maps.cp_out);
	in_fd = bpf_map__fd(skel->maps.cp_in);
	ctr_fd = bpf_map__fd(skel->maps.cp_counters);
	add_tunnel(BACKEND4, VIP4, P_IPIP4, MLV_FWD_IPIP, false, NULL);
	add_tunnel(BACKEND4, VIP4, P_GUE4, MLV_FWD_GUE, false, NULL);
	add_tunnel(BACKEND4, VIP4, P_L2MAC4, MLV_FWD_L2DSR, true, NULL);
	add_tunnel(BACKEND4, VIP4, P_L2BARE4, MLV_FWD_L2DSR, false, NULL);
	add_tunnel(BACKEND6, VIP6, P_IPIP6, MLV_FWD_IPIP, false, NULL);
	add_tunnel(BACKEND6, VIP6, P_GUE6, MLV_FWD_GUE, false, NULL);
	add_tunnel(BACKEND6, VIP6, P_L2MAC6, MLV_FWD_L2DSR, true, NULL);
	add_tunnel(BACKEND6, VIP6, P_L2BARE6, MLV_FWD_L2DSR, false, NULL);
	for (uint16_t i = 0; i < N_SRC_PORTS; i++) {
		add_tunnel(BACKEND4, VIP4, P_SRC4 + i, MLV_FWD_IPIP, false,
			   SRC4);
		add_tunnel(BACKEND6, VIP6, P_SRC6 + i, MLV_FWD_IPIP, false,
			   SRC6);
	}
	add_tunnel(BACKEND4, VIP4, P_ONE4, MLV_FWD_IPIP, false, SRC4_ONE);
	add_tunnel(BACKEND6, VIP6, P_ONE6, MLV_FWD_IPIP, false, SRC6_ONE);
	add_tunnel(BACKEND4, VIP4, P_GUESRC4, MLV_FWD_GUE, false, SRC4);
	add_tunnel(BACKEND6, VIP6, P_GUESRC6, MLV_FWD_GUE, false, SRC6);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tc_check_path_bpf__destroy(skel);
	return 0;
}

/* ---- egress ---- */

static int out_prog(void)
{
	return bpf_program__fd(skel->progs.mlv_check_out);
}

static int in_prog(void)
{
	return bpf_program__fd(skel->progs.mlv_check_in);
}

/* A check's SYN (MSS option, no payload) or request (odd length). */
static struct seg check_seg(uint8_t family, uint16_t local_port, bool syn)
{
	struct seg s;

	memset(&s, 0, sizeof(s));
	s.family = family;
	s.proto = IPPROTO_TCP;
	addr(s.src, family == 4 ? HOST4 : HOST6);
	addr(s.dst, family == 4 ? BACKEND4 : BACKEND6);
	s.sport = local_port;
	s.dport = CHECK_PORT;
	if (syn) {
		s.flags = TCP_SYN;
		s.opts = MSS_OPT;
		s.opt_len = sizeof(MSS_OPT);
	} else {
		s.flags = TCP_PSH | TCP_ACK;
		s.data = (const uint8_t *)HTTP_GET;
		s.data_len = (uint16_t)strlen(HTTP_GET);
	}
	return s;
}

/* Both segments of the check on local_port carried with method; osrc:
 * ipip's outer source, NULL for the packet's own. */
static void carried_from(uint8_t family, uint16_t local_port, int method,
			 const uint8_t *dmac, const uint8_t *osrc)
{
	const char *vip = family == 4 ? VIP4 : VIP6;
	uint32_t hlen = family == 4 ? 20 : 40;
	uint32_t inner_off = 14 + (method == MLV_CP_L2DSR ? 0 :
				   hlen + (method == MLV_CP_GUE ? 12 : 0));

	for (int syn = 1; syn >= 0; syn--) {
		struct seg s = check_seg(family, local_port, syn);
		uint8_t in[FRAME_CAP], want[FRAME_CAP];
		uint32_t len = build_frame(in, &s);
		uint32_t want_len = build_carried(want, &s, vip, method, dmac,
						  osrc);

		assert_true(tcp_csum_ok(in + 14, len - 14));
		if (family == 6 && method == MLV_CP_GUE)
			assert_true(udp6_csum_ok(want + 14, want_len - 14));
		expect(out_prog(), in, len, want, want_len,
		       MLV_CP_CTR_CARRIED, inner_off);
	}
}

static void carried(uint8_t family, uint16_t local_port, int method,
		    const uint8_t *dmac)
{
	carried_from(family, local_port, method, dmac, NULL);
}

static void ipip4(void **state)
{
	(void)state;
	carried(4, P_IPIP4, MLV_CP_IPIP, GW_MAC);
}

static void gue4(void **state)
{
	(void)state;
	carried(4, P_GUE4, MLV_CP_GUE, GW_MAC);
}

static void ipip6(void **state)
{
	(void)state;
	carried(6, P_IPIP6, MLV_CP_IPIP, GW_MAC);
}

/* The outer UDP checksum once more, from the program's own output. */
static void gue6(void **state)
{
	(void)state;
	carried(6, P_GUE6, MLV_CP_GUE, GW_MAC);
	for (int syn = 1; syn >= 0; syn--) {
		struct seg s = check_seg(6, P_GUE6, syn);
		uint8_t in[FRAME_CAP], out[FRAME_CAP];
		uint32_t len = build_frame(in, &s), out_len;

		assert_int_equal(run(out_prog(), in, len, out, &out_len),
				 TC_ACT_OK);
		want_carried++;
		assert_true(out_len > 14 + 52);
		assert_int_not_equal(get16(out + 14 + 40 + 6), 0);
		assert_true(udp6_csum_ok(out + 14, out_len - 14));
		assert_true(tcp_csum_ok(out + 14 + 52, out_len - 14 - 52));
	}
}

static void l2dsr_mac(void **state)
{
	(void)state;
	carried(4, P_L2MAC4, MLV_CP_L2DSR, BE_MAC);
	carried(6, P_L2MAC6, MLV_CP_L2DSR, BE_MAC);
}

static void l2dsr_no_mac(void **state)
{
	(void)state;
	carried(4, P_L2BARE4, MLV_CP_L2DSR, GW_MAC);
	carried(6, P_L2BARE6, MLV_CP_L2DSR, GW_MAC);
}

/* ---- ipip outer sources from a prefix ---- */

/* The outer source the data plane gives the check on local_port
 * (family's host, VIP and check port) with the prefix text: the
 * prefix's address, its host bits (in the last 32 bits, big-endian)
 * from mlv_flow_hash of the inner packet's flow key. */
static void want_source(uint8_t family, uint16_t local_port,
			const char *prefix, uint8_t out[16])
{
	struct mlv_ip_prefix p;
	struct mlv_flow_key key;
	uint32_t bits = family == 4 ? 32 : 128, mask, last;
	uint8_t *w;

	assert_null(mlv_ip_prefix_parse(prefix, &p));
	memset(&key, 0, sizeof(key));
	addr(key.src, family == 4 ? HOST4 : HOST6);
	addr(key.dst, family == 4 ? VIP4 : VIP6);
	key.sport = htons(local_port);
	key.dport = htons(CHECK_PORT);
	key.proto = IPPROTO_TCP;
	key.family = family;
	mask = (uint32_t)(((uint64_t)1 << (bits - p.len)) - 1);
	memcpy(out, p.ip.bytes, 16);
	w = out + bits / 8 - 4;
	last = (uint32_t)w[0] << 24 | (uint32_t)w[1] << 16 |
	       (uint32_t)w[2] << 8 | w[3];
	last |= mlv_flow_hash(&key) & mask;
	w[0] = (uint8_t)(last >> 24);
	w[1] = (uint8_t)(last >> 16);
	w[2] = (uint8_t)(last >> 8);
	w[3] = (uint8_t)last;
}

/* Whether a's first p.len bits are the prefix's. */
static bool in_prefix(const uint8_t *a, const char *prefix)
{
	struct mlv_ip_prefix p;
	uint32_t full;

	assert_null(mlv_ip_prefix_parse(prefix, &p));
	full = p.len / 8u;
	if (memcmp(a, p.ip.bytes, full))
		return false;
	if (p.len % 8 == 0)
		return true;
	return ((a[full] ^ p.ip.bytes[full]) &
		(uint8_t)(0xff00 >> (p.len % 8))) == 0;
}

/* Checks on N_SRC_PORTS ports under prefix: each frame byte for byte
 * with the flow hash's source; from the program's own output, a source
 * inside the prefix and (IPv4) a header checksum that sums right; not
 * all the same source. */
static void ipip_source_case(uint8_t family, uint16_t first_port,
			     const char *prefix)
{
	uint32_t hlen = family == 4 ? 20 : 40;
	uint32_t soff = family == 4 ? 12 : 8;
	uint8_t first[16];
	bool differ = false;

	for (uint16_t i = 0; i < N_SRC_PORTS; i++) {
		uint8_t osrc[16];

		want_source(family, first_port + i, prefix, osrc);
		assert_true(in_prefix(osrc, prefix));
		carried_from(family, first_port + i, MLV_CP_IPIP, GW_MAC, osrc);
		for (int syn = 1; syn >= 0; syn--) {
			struct seg s = check_seg(family, first_port + i, syn);
			uint8_t in[FRAME_CAP], out[FRAME_CAP];
			uint32_t len = build_frame(in, &s), out_len;
			const uint8_t *ip = out + 14;

			assert_int_equal(run(out_prog(), in, len, out, &out_len),
					 TC_ACT_OK);
			want_carried++;
			assert_true(out_len > 14 + hlen);
			assert_true(in_prefix(ip + soff, prefix));
			assert_memory_equal(ip + soff, osrc, family == 4 ? 4 : 16);
			if (family == 4)
				assert_int_equal(fold(sum_bytes(0, ip, 20)),
						 0xffff);
			assert_true(tcp_csum_ok(ip + hlen, out_len - 14 - hlen));
			if (i == 0)
				memcpy(first, ip + soff, 16);
			else if (memcmp(first, ip + soff, family == 4 ? 4 : 16))
				differ = true;
		}
	}
	assert_true(differ);
}

static void ipip4_source(void **state)
{
	(void)state;
	ipip_source_case(4, P_SRC4, SRC4);
}

static void ipip6_source(void **state)
{
	(void)state;
	ipip_source_case(6, P_SRC6, SRC6);
}

/* A host prefix (/32, /128): the outer source is its address. */
static void ipip_source_host_prefix(void **state)
{
	uint8_t a[16];

	(void)state;
	addr(a, "10.77.1.9");
	carried_from(4, P_ONE4, MLV_CP_IPIP, GW_MAC, a);
	addr(a, "fd00:77::1:9");
	carried_from(6, P_ONE6, MLV_CP_IPIP, GW_MAC, a);
}

/* gue keeps the packet's own source, whatever the tunnel's prefix. */
static void gue_ignores_source(void **state)
{
	(void)state;
	carried(4, P_GUESRC4, MLV_CP_GUE, GW_MAC);
	carried(6, P_GUESRC6, MLV_CP_GUE, GW_MAC);
}

/* The records: the prefix in the out record for ipip only; refused of
 * the other family or longer than the address. */
static void records_source(void **state)
{
	static const struct {
		const char *backend, *vip, *prefix;
		enum mlv_forwarding fwd;
		enum mlv_err err;
		uint8_t has_src, len;
	} c[] = {
		{ BACKEND4, VIP4, SRC4, MLV_FWD_IPIP, MLV_OK, 1, 28 },
		{ BACKEND6, VIP6, SRC6, MLV_FWD_IPIP, MLV_OK, 1, 120 },
		{ BACKEND4, VIP4, SRC4_ONE, MLV_FWD_IPIP, MLV_OK, 1, 32 },
		{ BACKEND4, VIP4, NULL, MLV_FWD_IPIP, MLV_OK, 0, 0 },
		{ BACKEND4, VIP4, SRC4, MLV_FWD_GUE, MLV_OK, 0, 0 },
		{ BACKEND6, VIP6, SRC6, MLV_FWD_L2DSR, MLV_OK, 0, 0 },
		{ BACKEND4, VIP4, SRC6, MLV_FWD_IPIP, MLV_E_INVAL, 0, 0 },
		{ BACKEND6, VIP6, SRC4, MLV_FWD_IPIP, MLV_E_INVAL, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct mlv_health_tunnel t;
		struct mlv_cp_out_key ok;
		struct mlv_cp_out ov;
		struct mlv_cp_in_key ik;
		struct mlv_cp_in iv;
		uint8_t want[16] = { 0 };

		memset(&t, 0, sizeof(t));
		t.backend = ip_of(c[i].backend);
		t.vip = ip_of(c[i].vip);
		t.port = CHECK_PORT;
		t.local_port = P_SRC4;
		t.forwarding = c[i].fwd;
		t.gue_port = GUE_PORT;
		if (c[i].prefix)
			assert_null(mlv_ip_prefix_parse(c[i].prefix,
							&t.outer_source));
		assert_int_equal(mlv_check_path_records(&t, &ok, &ov, &ik, &iv),
				 c[i].err);
		if (c[i].err != MLV_OK)
			continue;
		assert_int_equal(ov.has_src, c[i].has_src);
		assert_int_equal(ov.src_len, c[i].len);
		if (c[i].has_src)
			memcpy(want, t.outer_source.ip.bytes,
			       t.backend.family == MLV_AF_INET ? 4 : 16);
		assert_memory_equal(ov.src_prefix, want, 16);
		assert_int_equal(ov.method, c[i].fwd == MLV_FWD_IPIP ? MLV_CP_IPIP :
				 c[i].fwd == MLV_FWD_GUE ? MLV_CP_GUE :
				 MLV_CP_L2DSR);
	}
	/* a length past the address's */
	{
		struct mlv_health_tunnel t;
		struct mlv_cp_out_key ok;
		struct mlv_cp_out ov;
		struct mlv_cp_in_key ik;
		struct mlv_cp_in iv;

		memset(&t, 0, sizeof(t));
		t.backend = ip_of(BACKEND4);
		t.vip = ip_of(VIP4);
		t.port = CHECK_PORT;
		t.local_port = P_SRC4;
		t.forwarding = MLV_FWD_IPIP;
		assert_null(mlv_ip_prefix_parse(SRC4_ONE, &t.outer_source));
		t.outer_source.len = 33;
		assert_int_equal(mlv_check_path_records(&t, &ok, &ov, &ik, &iv),
				 MLV_E_INVAL);
	}
}

/* TCP to a backend's check port from a port no check has, to another
 * port, to another address: untouched. */
static void other_tcp_untouched(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		for (int v = 0; v < 3; v++) {
			struct seg s = check_seg(family, P_IPIP4, false);
			uint8_t in[FRAME_CAP];
			uint32_t len;

			if (family == 6)
				s.sport = P_IPIP6;
			if (v == 0)
				s.sport = OTHER_LOCAL_PORT;
			else if (v == 1)
				s.dport = 8080;
			else
				s.dst[family == 4 ? 3 : 15] ^= 0x40;
			len = build_frame(in, &s);
			expect_untouched(out_prog(), in, len);
		}
	}
}

/* UDP with a check's addresses and ports; an ARP request. */
static void udp_and_non_ip_untouched(void **state)
{
	uint8_t in[FRAME_CAP], a[16];
	uint32_t len;

	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		struct seg s = check_seg(family, family == 4 ? P_GUE4 : P_GUE6,
					 false);

		s.proto = IPPROTO_UDP;
		len = build_frame(in, &s);
		expect_untouched(out_prog(), in, len);
		expect_untouched(in_prog(), in, len);
	}
	/* ARP who-has 10.0.1.5 tell 10.0.0.1 */
	memset(in, 0, 60);
	memset(in, 0xff, 6);
	memcpy(in + 6, HOST_MAC, 6);
	put16(in + 12, 0x0806);
	put16(in + 14, 1);          /* Ethernet */
	put16(in + 16, 0x0800);
	in[18] = 6;
	in[19] = 4;
	put16(in + 20, 1);          /* request */
	memcpy(in + 22, HOST_MAC, 6);
	addr(a, HOST4);
	memcpy(in + 28, a, 4);
	addr(a, BACKEND4);          /* target MAC 0, padding to 60 0 */
	memcpy(in + 38, a, 4);
	expect_untouched(out_prog(), in, 60);
	expect_untouched(in_prog(), in, 60);
}

/* ---- ingress ---- */

/* The backend's answer from the VIP to the check's socket. */
static struct seg reply_seg(uint8_t family, uint16_t local_port, bool syn)
{
	struct seg s;

	memset(&s, 0, sizeof(s));
	s.family = family;
	s.proto = IPPROTO_TCP;
	addr(s.src, family == 4 ? VIP4 : VIP6);
	addr(s.dst, family == 4 ? HOST4 : HOST6);
	s.sport = CHECK_PORT;
	s.dport = local_port;
	if (syn) {
		s.flags = TCP_SYN | TCP_ACK;
		s.opts = MSS_OPT;
		s.opt_len = sizeof(MSS_OPT);
	} else {
		s.flags = TCP_PSH | TCP_ACK | TCP_FIN;
		s.data = (const uint8_t *)HTTP_OK;
		s.data_len = (uint16_t)strlen(HTTP_OK);
	}
	return s;
}

static void returned(uint8_t family, uint16_t local_port)
{
	for (int syn = 1; syn >= 0; syn--) {
		struct seg s = reply_seg(family, local_port, syn), w;
		uint8_t in[FRAME_CAP], want[FRAME_CAP];
		uint32_t len = build_frame(in, &s), want_len;

		w = s;
		addr(w.src, family == 4 ? BACKEND4 : BACKEND6);
		want_len = build_frame(want, &w);
		expect(in_prog(), in, len, want, want_len,
		       MLV_CP_CTR_RETURNED, 14);
	}
}

static void replies_returned(void **state)
{
	(void)state;
	returned(4, P_IPIP4);
	returned(4, P_GUE4);
	returned(6, P_IPIP6);
	returned(6, P_L2BARE6);
}

/* Replies to a port no check has, from another port, from the backend
 * itself (not the VIP); a check packet run through ingress. */
static void other_replies_untouched(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		uint16_t lp = family == 4 ? P_IPIP4 : P_IPIP6;

		for (int v = 0; v < 4; v++) {
			struct seg s = reply_seg(family, lp, false);
			uint8_t in[FRAME_CAP];
			uint32_t len;

			if (v == 0)
				s.dport = OTHER_LOCAL_PORT;
			else if (v == 1)
				s.sport = 8080;
			else if (v == 2)
				addr(s.src, family == 4 ? BACKEND4 : BACKEND6);
			else
				s = check_seg(family, lp, false);
			len = build_frame(in, &s);
			expect_untouched(in_prog(), in, len);
		}
	}
}

/* Every matching packet counted once, nothing dropped. Last. */
static void counters_total(void **state)
{
	uint64_t c[MLV_CP_CTR__COUNT];

	(void)state;
	counters(c);
	assert_true(want_carried > 0 && want_returned > 0);
	assert_int_equal(c[MLV_CP_CTR_CARRIED], want_carried);
	assert_int_equal(c[MLV_CP_CTR_RETURNED], want_returned);
	assert_int_equal(c[MLV_CP_CTR_DROPPED], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ipip4),
		cmocka_unit_test(gue4),
		cmocka_unit_test(ipip6),
		cmocka_unit_test(gue6),
		cmocka_unit_test(l2dsr_mac),
		cmocka_unit_test(l2dsr_no_mac),
		cmocka_unit_test(ipip4_source),
		cmocka_unit_test(ipip6_source),
		cmocka_unit_test(ipip_source_host_prefix),
		cmocka_unit_test(gue_ignores_source),
		cmocka_unit_test(records_source),
		cmocka_unit_test(other_tcp_untouched),
		cmocka_unit_test(udp_and_non_ip_untouched),
		cmocka_unit_test(replies_returned),
		cmocka_unit_test(other_replies_untouched),
		cmocka_unit_test(counters_total),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
