/* SPDX-License-Identifier: BSD-3-Clause */
/* Verifying the echo replies the daemon answers pings to VIPs with
 * (icmp_echo: reply): each output echo reply must be, byte for byte, the
 * reply this file builds from an input echo request expected to be
 * answered. The expected reply follows docs/forwarding.md ("ICMP echo to
 * a VIP"): the request's L2 header with the MACs swapped, a bare IP header
 * from the VIP to the client (TTL / hop limit 64, TOS and IPv4 ID and DF
 * as the request's), ICMP type 0 / 129 with the request's identifier,
 * sequence and data, checksums computed here from scratch. */
#include <inttypes.h>
#include <string.h>

#include "tests/packet/check.h"
#include "tests/packet/csum.h"

#define REPLY_TTL 64

/* The L2 header length and the ethertype after any VLAN tag. */
static uint32_t l2_len(const uint8_t *d, uint32_t len, uint16_t *et)
{
	if (len < 14)
		return 0;
	*et = pkt_get16(d + 12);
	if (*et != PKT_ETH_VLAN)
		return 14;
	if (len < 18)
		return 0;
	*et = pkt_get16(d + 16);
	return 18;
}

/* The ICMP message of an input IP packet: after the IPv4 header and its
 * options, or after the IPv6 header and the extension headers the
 * scenarios use. */
static const uint8_t *icmp_of(const uint8_t *ip, uint32_t ip_len, uint8_t family,
			      uint32_t *icmp_len)
{
	uint32_t off;

	if (family == 4) {
		off = (uint32_t)(ip[0] & 0x0f) * 4;
	} else {
		uint8_t nh = ip[6];

		off = 40;
		while ((nh == 0 || nh == 43 || nh == 60) && off + 8 <= ip_len) {
			nh = ip[off];
			off += ((uint32_t)ip[off + 1] + 1) * 8;
		}
		if (nh != 58)
			return NULL;
	}
	if (off + 8 > ip_len)
		return NULL;
	*icmp_len = ip_len - off;
	return ip + off;
}

/* The reply frame the daemon must send for input frame fr; its length,
 * or 0 if fr is not an echo request. */
static uint32_t expected_reply(const struct sc_frame *fr, uint8_t *out,
			       uint32_t cap)
{
	const uint8_t *in = fr->data, *ip, *icmp;
	uint16_t et;
	uint32_t l3_off = l2_len(in, fr->len, &et), ip_len;
	uint8_t family;
	uint32_t hlen, icmp_len, total, s;
	uint8_t *rip, *ricmp;

	/* raw frames (sc_emit_raw) carry no offsets: read them */
	ip = in + l3_off;
	if (et == PKT_ETH_IPV4 && fr->len >= l3_off + 20 && ip[9] == 1) {
		family = 4;
		ip_len = pkt_get16(ip + 2);
	} else if (et == PKT_ETH_IPV6 && fr->len >= l3_off + 40) {
		family = 6;
		ip_len = 40u + pkt_get16(ip + 4);
	} else {
		return 0;
	}
	if (l3_off == 0 || l3_off + ip_len > fr->len)
		return 0;
	hlen = family == 4 ? 20 : 40;
	icmp = icmp_of(ip, ip_len, family, &icmp_len);
	if (!icmp || icmp[0] != (family == 4 ? 8 : 128))
		return 0;
	total = l3_off + hlen + icmp_len;
	if (total > cap)
		return 0;
	memcpy(out, in + 6, 6);
	memcpy(out + 6, in, 6);
	memcpy(out + 12, in + 12, l3_off - 12u);
	rip = out + l3_off;
	ricmp = rip + hlen;
	memset(rip, 0, hlen);
	memcpy(ricmp, icmp, icmp_len);
	ricmp[0] = family == 4 ? 0 : 129;
	ricmp[2] = ricmp[3] = 0;
	if (family == 4) {
		rip[0] = 0x45;
		rip[1] = ip[1];
		pkt_put16(rip + 2, (uint16_t)(hlen + icmp_len));
		memcpy(rip + 4, ip + 4, 2);          /* identification */
		rip[6] = ip[6] & 0x40;               /* DF as the request's */
		rip[8] = REPLY_TTL;
		rip[9] = 1;
		memcpy(rip + 12, ip + 16, 4);
		memcpy(rip + 16, ip + 12, 4);
		pkt_put16(rip + 10, pkt_csum_finish(pkt_csum_add(0, rip, 20)));
		pkt_put16(ricmp + 2, pkt_csum_finish(pkt_csum_add(0, ricmp,
								   icmp_len)));
	} else {
		uint8_t tc = (uint8_t)(ip[0] << 4 | ip[1] >> 4);

		rip[0] = (uint8_t)(0x60 | tc >> 4);
		rip[1] = (uint8_t)(tc << 4);
		pkt_put16(rip + 4, (uint16_t)icmp_len);
		rip[6] = 58;
		rip[7] = REPLY_TTL;
		memcpy(rip + 8, ip + 24, 16);
		memcpy(rip + 24, ip + 8, 16);
		s = pkt_csum_pseudo(6, rip + 8, rip + 24, icmp_len, 58);
		pkt_put16(ricmp + 2, pkt_csum_finish(pkt_csum_add(s, ricmp,
								   icmp_len)));
	}
	return total;
}

bool check_echo_reply(struct check_ctx *c, uint64_t n, const uint8_t *d,
		      uint32_t len)
{
	static uint8_t want[PKT_FRAME_MAX];
	uint16_t et;
	uint32_t l2 = l2_len(d, len, &et), wlen;
	const uint8_t *ip = d + l2;
	int64_t any = -1;
	uint32_t diff_at = 0;
	int64_t near = -1;

	if (l2 == 0)
		return false;
	if (!(et == PKT_ETH_IPV4 && len >= l2 + 28 && ip[9] == 1 &&
	      ip[20] == 0) &&
	    !(et == PKT_ETH_IPV6 && len >= l2 + 48 && ip[6] == 58 &&
	      ip[40] == 129))
		return false;
	c->n_out_icmp++;
	for (uint32_t i = 0; i < c->sc->n_frames; i++) {
		const struct sc_frame *fr = &c->sc->frames[i];

		wlen = expected_reply(fr, want, sizeof(want));
		if (wlen == 0)
			continue;
		if (wlen != len)
			continue;
		if (memcmp(want, d, len) != 0) {
			uint32_t k = 0;

			while (k < len && want[k] == d[k])
				k++;
			if (k >= diff_at) {
				diff_at = k;
				near = i;
			}
			continue;
		}
		any = i;
		if (fr->exp.outcome == SC_ICMP_ECHO_REPLY)
			break;
	}
	if (any < 0) {
		check_fail(c, "output frame %" PRIu64 ": echo reply (%u bytes) "
			   "that is not byte-identical to the reply to any "
			   "input echo request (the nearest, to input frame %"
			   PRId64 ", differs at byte %u)", n, len, near, diff_at);
		return true;
	}
	const struct sc_frame *fr = &c->sc->frames[any];

	if (fr->exp.outcome != SC_ICMP_ECHO_REPLY) {
		check_fail(c, "output frame %" PRIu64 ": echo reply to input "
			   "frame %" PRId64 " (%s), which must not be answered",
			   n, any, fr->exp.what);
		return true;
	}
	c->icmp_replies[any]++;
	return true;
}
