/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/bench/dp-bench/flows.h"

#include <arpa/inet.h>
#include <string.h>

/* A bijection on 24-bit numbers: multiplication by an odd constant and
 * xor-shifts are each invertible modulo 2^24. */
static uint32_t mix24(uint32_t x)
{
	x &= 0xffffffu;
	x = (x * 0x9e3779u) & 0xffffffu;
	x ^= x >> 11;
	x = (x * 0x5bd1e9u) & 0xffffffu;
	x ^= x >> 13;
	return x;
}

void dpb_flow_make(uint32_t i, enum dpb_family_mix mix, struct dpb_flow *f)
{
	uint32_t m = mix24(i + 1);   /* never 0: no 10.0.0.0 client */

	memset(f, 0, sizeof(*f));
	f->family = mix == DPB_FAMILY_V6 ? 6 :
		    mix == DPB_FAMILY_MIXED && (i & 1) ? 6 : 4;
	/* Ephemeral ports from the client number: unique tuples come from
	 * the addresses already; the ports only add realism. */
	f->sport = (uint16_t)(32768 + (m % 28000));
	f->dport = DPB_VIP_PORT;
	if (f->family == 4) {
		uint32_t src = htonl(0x0a000000u | m);   /* 10.0.0.0/8 */

		memcpy(f->src, &src, 4);
		inet_pton(AF_INET, DPB_VIP4, f->dst);
	} else {
		/* fd00:1::/64 with the client number in the low 24 bits */
		f->src[0] = 0xfd;
		f->src[3] = 0x01;
		f->src[13] = (uint8_t)(m >> 16);
		f->src[14] = (uint8_t)(m >> 8);
		f->src[15] = (uint8_t)m;
		inet_pton(AF_INET6, DPB_VIP6, f->dst);
	}
}
