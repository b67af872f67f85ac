/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/csum.h"

uint32_t pkt_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t acc = sum;

	while (len >= 2) {
		acc += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		acc += (uint32_t)p[0] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t pkt_csum_finish(uint32_t sum)
{
	return (uint16_t)~fold(sum);
}

uint32_t pkt_csum_pseudo(int family, const uint8_t *src, const uint8_t *dst,
			 uint32_t l4_len, uint8_t proto)
{
	size_t alen = family == 6 ? 16 : 4;
	uint32_t sum = 0;

	sum = pkt_csum_add(sum, src, alen);
	sum = pkt_csum_add(sum, dst, alen);
	sum += l4_len >> 16;
	sum += l4_len & 0xffffu;
	sum += proto;
	return sum;
}

int pkt_csum_ok(uint32_t sum_including_field)
{
	return fold(sum_including_field) == 0xffffu;
}
