/* SPDX-License-Identifier: BSD-3-Clause */
/* The packets an MSS-clamping VIP must deliver (docs/forwarding.md, "MSS
 * clamping"), built from the input packets with code of the checker's
 * own: its own walk of the TCP options and a TCP checksum computed from
 * scratch (csum.c), never the incremental update the daemon uses, so a
 * wrong update shows as a byte mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/check.h"
#include "tests/packet/csum.h"

/* The TCP segment of the IP packet ip (len bytes): only what the mss
 * scenario sends, IPv4 with options or IPv6 without extension headers. */
static uint8_t *tcp_of(uint8_t *ip, uint32_t len, uint32_t *seg_len,
		       int *family)
{
	uint32_t off;

	if (len >= 20 && ip[0] >> 4 == 4 && ip[9] == 6) {
		off = (uint32_t)(ip[0] & 0x0f) * 4;
		*family = 4;
	} else if (len >= 40 && ip[0] >> 4 == 6 && ip[6] == 6) {
		off = 40;
		*family = 6;
	} else {
		return NULL;
	}
	if (off + 20 > len)
		return NULL;
	*seg_len = len - off;
	return ip + off;
}

static bool tcp_csum_ok(int family, const uint8_t *ip, const uint8_t *tcp,
			uint32_t seg_len)
{
	const uint8_t *src = ip + (family == 4 ? 12 : 8);
	const uint8_t *dst = ip + (family == 4 ? 16 : 24);
	uint32_t s = pkt_csum_pseudo(family, src, dst, seg_len, 6);

	return pkt_csum_ok(pkt_csum_add(s, tcp, seg_len));
}

/* Set every MSS option (kind 2, length 4) above mss to mss; the number
 * set, or -1 if the options are not a well-formed list. */
static int patch_options(uint8_t *tcp, uint16_t mss)
{
	uint32_t doff = (uint32_t)(tcp[12] >> 4) * 4, i = 20;
	int n = 0;

	while (i < doff) {
		if (tcp[i] == 0)
			break;
		if (tcp[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff || tcp[i + 1] < 2 || i + tcp[i + 1] > doff)
			return -1;
		if (tcp[i] == 2 && tcp[i + 1] == 4 && pkt_get16(tcp + i + 2) > mss) {
			pkt_put16(tcp + i + 2, mss);
			n++;
		}
		i += tcp[i + 1];
	}
	return n;
}

int check_mss_prepare(struct check_ctx *c)
{
	const struct scenario *sc = c->sc;

	for (uint32_t i = 0; i < sc->n_frames; i++) {
		const struct sc_frame *fr = &sc->frames[i];
		uint8_t *ip, *tcp;
		uint32_t seg_len;
		int family;

		if (fr->exp.mss == 0)
			continue;
		if (!c->mss_ip) {
			c->mss_ip = calloc(sc->n_frames, sizeof(*c->mss_ip));
			if (!c->mss_ip)
				goto nomem;
		}
		ip = malloc(fr->l3_len);
		if (!ip)
			goto nomem;
		memcpy(ip, fr->data + fr->l3_off, fr->l3_len);
		c->mss_ip[i] = ip;
		tcp = tcp_of(ip, fr->l3_len, &seg_len, &family);
		if (!tcp || !tcp_csum_ok(family, ip, tcp, seg_len) ||
		    patch_options(tcp, fr->exp.mss) <= 0) {
			fprintf(stderr, "pkt-check: input frame %u (%s) expects "
				"MSS %u but is no TCP segment with a valid "
				"checksum and an MSS option above it (scenario "
				"bug)\n", i, fr->exp.what, fr->exp.mss);
			return -1;
		}
		tcp[16] = tcp[17] = 0;
		pkt_put16(tcp + 16, pkt_csum_finish(pkt_csum_add(
			pkt_csum_pseudo(family, ip + (family == 4 ? 12 : 8),
					ip + (family == 4 ? 16 : 24), seg_len, 6),
			tcp, seg_len)));
		c->want_mss_clamped += c->fed[i];
	}
	return 0;
nomem:
	fprintf(stderr, "pkt-check: out of memory\n");
	return -1;
}

void check_mss_free(struct check_ctx *c)
{
	for (uint32_t i = 0; c->mss_ip && i < c->sc->n_frames; i++)
		free(c->mss_ip[i]);
	free(c->mss_ip);
	c->mss_ip = NULL;
}
