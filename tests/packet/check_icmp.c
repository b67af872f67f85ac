/* SPDX-License-Identifier: BSD-3-Clause */
/* Verifying ICMP "fragmentation needed" (RFC 792/1191) and ICMPv6 "packet
 * too big" (RFC 4443) replies the daemon sends to clients whose DF packet
 * would not fit the port MTU after encapsulation: L2 header (the input's,
 * MACs swapped), IP header fields, checksums, the MTU value, and the
 * quoted bytes against the input packet. Constants per
 * docs/forwarding.md. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tests/packet/check.h"
#include "tests/packet/csum.h"

#define REPLY_TOS   0xc0     /* CS6, as Linux sends ICMP errors */
#define REPLY_TTL   64
#define V4_MIN_MTU  576      /* RFC 1122 3.2.2: reply within 576 bytes */
#define V6_MIN_MTU  1280     /* RFC 4443 2.4(c) */

struct reply {
	uint32_t l3_off;
	uint8_t family;
	const uint8_t *ip;
	const uint8_t *icmp;
	uint32_t icmp_len;
	const uint8_t *quote;
	uint32_t quote_len;
};

/* Decode enough to tell whether this is a too-big reply at all. */
static bool decode(const uint8_t *d, uint32_t len, struct reply *r)
{
	uint32_t off = 12;
	uint16_t et;

	if (len < 14)
		return false;
	et = pkt_get16(d + off);
	if (et == PKT_ETH_VLAN) {
		if (len < 18)
			return false;
		off += 4;
		et = pkt_get16(d + off);
	}
	off += 2;
	r->l3_off = off;
	r->ip = d + off;
	if (et == PKT_ETH_IPV4 && len >= off + 28 && r->ip[9] == 1 &&
	    r->ip[20] == 3 && r->ip[21] == 4) {
		r->family = 4;
		r->icmp = r->ip + 20;
	} else if (et == PKT_ETH_IPV6 && len >= off + 48 && r->ip[6] == 58 &&
		   r->ip[40] == 2) {
		r->family = 6;
		r->icmp = r->ip + 40;
	} else {
		return false;
	}
	r->icmp_len = len - (uint32_t)(r->icmp - d);
	r->quote = r->icmp + 8;
	r->quote_len = r->icmp_len - 8;
	return true;
}

/* The input frame the reply quotes: its IP packet starts with the quote. */
static int64_t find_quoted(const struct check_ctx *c, const struct reply *r)
{
	int64_t any = -1;

	for (uint32_t i = 0; i < c->sc->n_frames; i++) {
		const struct sc_frame *fr = &c->sc->frames[i];
		uint32_t n = r->quote_len < fr->l3_len ? r->quote_len : fr->l3_len;

		if (n < 28 || memcmp(fr->data + fr->l3_off, r->quote, n) != 0)
			continue;
		if (fr->exp.outcome == SC_ICMP_TOO_BIG)
			return i;
		any = i;
	}
	return any;
}

bool check_icmp_reply(struct check_ctx *c, uint64_t n, const uint8_t *d,
		      uint32_t len)
{
	struct reply r;
	int64_t idx;
	char a[64], b[64];

	if (!decode(d, len, &r))
		return false;
	c->n_out_icmp++;
	idx = find_quoted(c, &r);
	if (idx < 0) {
		check_fail(c, "output frame %" PRIu64 ": ICMP too-big reply quoting "
			   "no input packet", n);
		return true;
	}
	const struct sc_frame *fr = &c->sc->frames[idx];
	const uint8_t *in = fr->data;
	const uint8_t *in_ip = in + fr->l3_off;
	uint32_t ip_hlen = r.family == 4 ? 20 : 40;
	uint32_t room = (r.family == 4 ? V4_MIN_MTU : V6_MIN_MTU) - ip_hlen - 8;
	uint32_t want_quote = fr->l3_len < room ? fr->l3_len : room;

	if (fr->exp.outcome != SC_ICMP_TOO_BIG) {
		check_fail(c, "output frame %" PRIu64 ": ICMP too-big reply about "
			   "input frame %" PRId64 " (%s), which expects %s", n, idx,
			   fr->exp.what, fr->exp.outcome == SC_DROP ? "a drop" :
			   "forwarding");
		return true;
	}
	c->icmp_replies[idx]++;

	/* L2: the input's header with source and destination swapped, any
	 * VLAN tag kept */
	if (r.l3_off != fr->l3_off || memcmp(d, in + 6, 6) != 0 ||
	    memcmp(d + 6, in, 6) != 0 || memcmp(d + 12, in + 12, r.l3_off - 12) != 0)
		check_fail(c, "output frame %" PRIu64 " (reply to %s): L2 header is "
			   "not the input's with MACs swapped", n, fr->exp.what);
	if (r.quote_len != want_quote)
		check_fail(c, "output frame %" PRIu64 " (reply to %s): quotes %u "
			   "bytes, want %u (the packet, up to the minimum MTU)", n,
			   fr->exp.what, r.quote_len, want_quote);
	if (len != r.l3_off + ip_hlen + 8 + want_quote)
		check_fail(c, "output frame %" PRIu64 " (reply to %s): %u bytes, "
			   "want %u", n, fr->exp.what, len,
			   r.l3_off + ip_hlen + 8 + want_quote);

	if (r.family == 4) {
		const uint8_t *ip = r.ip;

		if (ip[0] != 0x45 || ip[1] != REPLY_TOS || ip[8] != REPLY_TTL)
			check_fail(c, "output frame %" PRIu64 " (reply to %s): IPv4 "
				   "ver/IHL 0x%02x TOS 0x%02x TTL %u, want 0x45 0x%02x %u",
				   n, fr->exp.what, ip[0], ip[1], ip[8], REPLY_TOS,
				   REPLY_TTL);
		if (pkt_get16(ip + 2) != 20 + 8 + r.quote_len)
			check_fail(c, "output frame %" PRIu64 ": IPv4 total length "
				   "%u, want %u", n, pkt_get16(ip + 2),
				   20 + 8 + r.quote_len);
		if (pkt_get16(ip + 6) != 0 || pkt_get16(ip + 4) != pkt_get16(in_ip + 4))
			check_fail(c, "output frame %" PRIu64 ": IPv4 id/flags "
				   "0x%04x/0x%04x, want the quoted id 0x%04x, DF clear",
				   n, pkt_get16(ip + 4), pkt_get16(ip + 6),
				   pkt_get16(in_ip + 4));
		if (!pkt_csum_ok(pkt_csum_add(0, ip, 20)))
			check_fail(c, "output frame %" PRIu64 ": IPv4 header "
				   "checksum wrong", n);
		if (memcmp(ip + 12, in_ip + 16, 4) || memcmp(ip + 16, in_ip + 12, 4))
			check_fail(c, "output frame %" PRIu64 ": reply %s -> %s, "
				   "want from the VIP to the client", n,
				   check_addr(4, ip + 12, a, sizeof(a)),
				   check_addr(4, ip + 16, b, sizeof(b)));
		if (r.icmp[0] != 3 || r.icmp[1] != 4 || pkt_get16(r.icmp + 4) != 0)
			check_fail(c, "output frame %" PRIu64 ": ICMP %u/%u unused "
				   "0x%04x, want 3/4 and 0", n, r.icmp[0], r.icmp[1],
				   pkt_get16(r.icmp + 4));
		if (pkt_get16(r.icmp + 6) != fr->exp.icmp_mtu)
			check_fail(c, "output frame %" PRIu64 " (reply to %s): "
				   "next-hop MTU %u, want %u (port MTU %u minus "
				   "the encapsulation)", n, fr->exp.what,
				   pkt_get16(r.icmp + 6), fr->exp.icmp_mtu,
				   c->sc->port.mtu);
		if (!pkt_csum_ok(pkt_csum_add(0, r.icmp, r.icmp_len)))
			check_fail(c, "output frame %" PRIu64 ": ICMP checksum "
				   "wrong", n);
	} else {
		const uint8_t *ip = r.ip;
		uint32_t w0 = pkt_get32(ip);
		uint32_t s;

		if (w0 != (0x60000000u | (uint32_t)REPLY_TOS << 20) ||
		    ip[7] != REPLY_TTL)
			check_fail(c, "output frame %" PRIu64 " (reply to %s): IPv6 "
				   "first word 0x%08x hop limit %u, want 0x%08x %u", n,
				   fr->exp.what, w0, ip[7],
				   0x60000000u | (uint32_t)REPLY_TOS << 20, REPLY_TTL);
		if (pkt_get16(ip + 4) != 8 + r.quote_len)
			check_fail(c, "output frame %" PRIu64 ": IPv6 payload "
				   "length %u, want %u", n, pkt_get16(ip + 4),
				   8 + r.quote_len);
		if (memcmp(ip + 8, in_ip + 24, 16) || memcmp(ip + 24, in_ip + 8, 16))
			check_fail(c, "output frame %" PRIu64 ": reply %s -> %s, "
				   "want from the VIP to the client", n,
				   check_addr(6, ip + 8, a, sizeof(a)),
				   check_addr(6, ip + 24, b, sizeof(b)));
		if (r.icmp[1] != 0)
			check_fail(c, "output frame %" PRIu64 ": ICMPv6 code %u, "
				   "want 0", n, r.icmp[1]);
		if (pkt_get32(r.icmp + 4) != fr->exp.icmp_mtu)
			check_fail(c, "output frame %" PRIu64 " (reply to %s): MTU "
				   "%u, want %u (port MTU %u minus the encapsulation)",
				   n, fr->exp.what, pkt_get32(r.icmp + 4),
				   fr->exp.icmp_mtu, c->sc->port.mtu);
		s = pkt_csum_pseudo(6, ip + 8, ip + 24, r.icmp_len, 58);
		if (!pkt_csum_ok(pkt_csum_add(s, r.icmp, r.icmp_len)))
			check_fail(c, "output frame %" PRIu64 ": ICMPv6 checksum "
				   "wrong", n);
	}
	return true;
}
