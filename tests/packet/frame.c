/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/frame.h"

#include <string.h>

#include "tests/packet/csum.h"

void pkt_fill_payload(uint8_t *buf, uint32_t len, uint32_t id)
{
	static const uint8_t tag[8] = {'M', 'L', 'V', 'T'};
	uint32_t x = id * 2654435761u + 0x9e3779b9u;

	for (uint32_t i = 0; i < len; i++) {
		if (i < 4) {
			buf[i] = tag[i];
		} else if (i < 8) {
			buf[i] = (uint8_t)(id >> (8 * (7 - i)));
		} else {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (uint8_t)x;
		}
	}
}

static uint32_t l4_header_len(const struct pkt_l4 *l4)
{
	switch (l4->proto) {
	case 6:  return 20u + l4->tcp_opts_len;
	case 17: return 8;
	case 1:
	case 58: return 8;
	default: return 0;
	}
}

uint32_t pkt_build_l4(uint8_t *out, const struct pkt_l3 *l3,
		      const struct pkt_l4 *l4, const uint8_t *payload,
		      uint32_t payload_len)
{
	uint32_t hlen = l4_header_len(l4);
	uint32_t len = hlen + payload_len;
	uint32_t sum = 0;
	uint8_t *ck = NULL;

	memset(out, 0, hlen);
	if (payload_len)
		memcpy(out + hlen, payload, payload_len);

	switch (l4->proto) {
	case 6:
		pkt_put16(out, l4->sport);
		pkt_put16(out + 2, l4->dport);
		pkt_put32(out + 4, 0x10000000u + l4->sport);  /* seq */
		pkt_put32(out + 8, (l4->tcp_flags & PKT_TCP_ACK) ? 0x20000000u : 0);
		out[12] = (uint8_t)(hlen / 4 << 4);
		out[13] = l4->tcp_flags;
		if (l4->tcp_opts_len)
			memcpy(out + 20, l4->tcp_opts, l4->tcp_opts_len);
		pkt_put16(out + 14, 65535);
		ck = out + 16;
		sum = pkt_csum_pseudo(l3->family, l3->src, l3->dst, len, 6);
		break;
	case 17:
		pkt_put16(out, l4->sport);
		pkt_put16(out + 2, l4->dport);
		pkt_put16(out + 4, (uint16_t)len);
		ck = out + 6;
		sum = pkt_csum_pseudo(l3->family, l3->src, l3->dst, len, 17);
		break;
	case 1:
	case 58:
		out[0] = l4->icmp_type;
		out[1] = l4->icmp_code;
		pkt_put32(out + 4, l4->icmp_rest);
		ck = out + 2;
		if (l4->proto == 58)
			sum = pkt_csum_pseudo(6, l3->src, l3->dst, len, 58);
		break;
	default:
		break;
	}
	if (ck) {
		uint16_t c = pkt_csum_finish(pkt_csum_add(sum, out, len));

		/* UDP transmits a computed 0 as all ones (RFC 768) */
		if (l4->proto == 17 && c == 0)
			c = 0xffff;
		pkt_put16(ck, c);
	}
	return len;
}

static uint32_t v6_ext_len(uint8_t type)
{
	switch (type) {
	case PKT_V6_HOPOPTS: return 8;
	case PKT_V6_ROUTING: return 24;
	case PKT_V6_DSTOPTS: return 16;
	default:             return 0;
	}
}

/* Write one extension header of type with next header nh; returns bytes. */
static uint32_t put_v6_ext(uint8_t *p, uint8_t type, uint8_t nh,
			   const uint8_t *final_dst)
{
	uint32_t len = v6_ext_len(type);

	memset(p, 0, len);
	p[0] = nh;
	p[1] = (uint8_t)(len / 8 - 1);
	if (type == PKT_V6_ROUTING) {
		p[2] = 4;     /* segment routing header */
		p[3] = 0;     /* segments left: we are the final destination */
		memcpy(p + 8, final_dst, 16);
	} else {
		p[2] = 1;     /* PadN option filling the header */
		p[3] = (uint8_t)(len - 4);
	}
	return len;
}

static uint32_t build_ipv4(uint8_t *out, const struct pkt_l3 *l3, uint8_t proto,
			   const uint8_t *data, uint32_t data_len,
			   const struct pkt_frag *frag)
{
	uint32_t hlen = 20u + l3->v4_opt_len;
	uint32_t total = hlen + data_len;
	uint16_t fl = 0;

	memset(out, 0, hlen);
	out[0] = (uint8_t)(0x40 | hlen / 4);
	out[1] = l3->tos;
	pkt_put16(out + 2, (uint16_t)total);
	pkt_put16(out + 4, l3->ip_id);
	if (l3->df)
		fl |= 0x4000;
	if (frag && frag->is_fragment) {
		fl |= (uint16_t)(frag->offset / 8);
		if (frag->more)
			fl |= 0x2000;
	}
	pkt_put16(out + 6, fl);
	out[8] = l3->ttl;
	out[9] = proto;
	memcpy(out + 12, l3->src, 4);
	memcpy(out + 16, l3->dst, 4);
	if (l3->v4_opt_len) {
		/* Router Alert (RFC 2113), then NOPs, then End of Options */
		uint8_t *o = out + 20;

		o[0] = 148;
		o[1] = 4;
		for (uint32_t i = 4; i < l3->v4_opt_len; i++)
			o[i] = 1;
		if (l3->v4_opt_len > 4)
			o[l3->v4_opt_len - 1] = 0;
	}
	pkt_put16(out + 10, pkt_csum_finish(pkt_csum_add(0, out, hlen)));
	memcpy(out + hlen, data, data_len);
	return total;
}

static uint32_t build_ipv6(uint8_t *out, const struct pkt_l3 *l3, uint8_t proto,
			   const uint8_t *data, uint32_t data_len,
			   const struct pkt_frag *frag)
{
	bool fragmented = frag && frag->is_fragment;
	uint8_t after_ext = fragmented ? 44 : proto;
	uint32_t off = 40;

	memset(out, 0, 40);
	pkt_put32(out, 0x60000000u | (uint32_t)l3->tos << 20);
	out[6] = l3->n_v6_ext ? l3->v6_ext[0] : after_ext;
	out[7] = l3->ttl;
	memcpy(out + 8, l3->src, 16);
	memcpy(out + 24, l3->dst, 16);
	for (uint32_t i = 0; i < l3->n_v6_ext; i++) {
		uint8_t nh = i + 1 < l3->n_v6_ext ? l3->v6_ext[i + 1] : after_ext;

		off += put_v6_ext(out + off, l3->v6_ext[i], nh, l3->dst);
	}
	if (fragmented) {
		uint8_t *f = out + off;

		f[0] = proto;
		f[1] = 0;
		pkt_put16(f + 2, (uint16_t)(frag->offset | (frag->more ? 1 : 0)));
		pkt_put32(f + 4, l3->frag_id);
		off += 8;
	}
	memcpy(out + off, data, data_len);
	off += data_len;
	pkt_put16(out + 4, (uint16_t)(off - 40));
	return off;
}

uint32_t pkt_build_ip(uint8_t *out, const struct pkt_l3 *l3, uint8_t proto,
		      const uint8_t *data, uint32_t data_len,
		      const struct pkt_frag *frag)
{
	if (l3->family == 4)
		return build_ipv4(out, l3, proto, data, data_len, frag);
	return build_ipv6(out, l3, proto, data, data_len, frag);
}

uint32_t pkt_build_eth(uint8_t *out, const struct pkt_l2 *l2,
		       uint16_t ethertype, const uint8_t *ip, uint32_t ip_len,
		       uint16_t *l3_off)
{
	uint32_t off = 12;

	memcpy(out, l2->dst, 6);
	memcpy(out + 6, l2->src, 6);
	if (l2->vlan) {
		pkt_put16(out + off, PKT_ETH_VLAN);
		pkt_put16(out + off + 2, l2->vlan_tci);
		off += 4;
	}
	pkt_put16(out + off, ethertype);
	off += 2;
	if (l3_off)
		*l3_off = (uint16_t)off;
	memcpy(out + off, ip, ip_len);
	off += ip_len;
	if (off < PKT_ETH_MIN) {
		memset(out + off, 0, PKT_ETH_MIN - off);
		off = PKT_ETH_MIN;
	}
	return off;
}

void pkt_ipv4_fix_csum(uint8_t *ip, uint32_t hdr_room)
{
	uint32_t hlen = (uint32_t)(ip[0] & 0x0f) * 4;

	if (hlen < 20)
		hlen = 20;
	if (hlen > hdr_room)
		hlen = hdr_room;
	ip[10] = 0;
	ip[11] = 0;
	pkt_put16(ip + 10, pkt_csum_finish(pkt_csum_add(0, ip, hlen)));
}
