/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/packet/mss.h"

#define TCP_MIN_HLEN 20
#define TCP_CSUM_OFF 16

uint16_t mlv_csum_update16(uint16_t hc, uint16_t old, uint16_t now)
{
	/* HC' = ~(~HC + ~m + m'), in one's-complement arithmetic */
	uint32_t sum = (uint16_t)~hc + (uint32_t)(uint16_t)~old + now;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t swap16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

unsigned mlv_mss_clamp(uint8_t *tcp, uint32_t room, uint16_t clamp)
{
	uint32_t at[MLV_MSS_MAX_OPTS];   /* offsets of the MSS values */
	unsigned n_at = 0, lowered = 0;
	uint32_t doff, i;
	uint16_t hc;

	if (room < TCP_MIN_HLEN)
		return 0;
	doff = (uint32_t)(tcp[12] >> 4) * 4;
	if (doff < TCP_MIN_HLEN || doff > room)
		return 0;
	/* First the whole walk, so that a malformed list changes nothing. */
	for (i = TCP_MIN_HLEN; i < doff;) {
		uint8_t kind = tcp[i];
		uint32_t len;

		if (kind == MLV_TCPOPT_EOL)
			break;
		if (kind == MLV_TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= doff)
			return 0;   /* no room for the length byte */
		len = tcp[i + 1];
		if (len < 2 || len > doff - i)
			return 0;
		if (kind == MLV_TCPOPT_MSS && len == MLV_TCPOLEN_MSS &&
		    n_at < MLV_MSS_MAX_OPTS)
			at[n_at++] = i + 2;
		i += len;
	}
	hc = rd16(tcp + TCP_CSUM_OFF);
	for (unsigned k = 0; k < n_at; k++) {
		uint8_t *p = tcp + at[k];
		uint16_t old = rd16(p);

		if (old <= clamp)
			continue;
		wr16(p, clamp);
		/* The checksum sums 16-bit words from the header's start
		 * (the pseudo-header is of even length): a value at an
		 * odd offset straddles two words and counts byte-swapped. */
		if (at[k] & 1)
			hc = mlv_csum_update16(hc, swap16(old), swap16(clamp));
		else
			hc = mlv_csum_update16(hc, old, clamp);
		lowered++;
	}
	if (lowered)
		wr16(tcp + TCP_CSUM_OFF, hc);
	return lowered;
}
