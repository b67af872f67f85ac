/* SPDX-License-Identifier: BSD-3-Clause */
/* Test frame builder (see frames.h). Deliberately simple and independent
 * of dataplane/: byte-at-a-time writes, a bytewise checksum. */
#include "tests/support/frames.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void w16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void w32(uint8_t *p, uint32_t v)
{
	w16(p, v >> 16);
	w16(p + 2, v & 0xffff);
}

int frame_addr(uint8_t out[16], const char *text)
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, text, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, text, out) == 1)
		return 6;
	fprintf(stderr, "frames: bad address %s\n", text);
	abort();
}

void frame_spec_init(struct frame_spec *s, uint8_t family, uint8_t proto)
{
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 1 };
	static const uint8_t dmac[6] = { 2, 0, 0, 0, 0, 2 };

	memset(s, 0, sizeof(*s));
	s->family = family;
	s->proto = proto;
	memcpy(s->src_mac, smac, 6);
	memcpy(s->dst_mac, dmac, 6);
	frame_addr(s->src, family == 4 ? "198.51.100.1" : "2001:db8:1::1");
	frame_addr(s->dst, family == 4 ? "192.0.2.10" : "2001:db8::10");
	s->sport = 40000;
	s->dport = 80;
	s->tcp_flags = 0x10;
	s->ttl = 64;
	s->df = true;
	s->ip_id = 0x1234;
}

uint16_t frame_csum(const uint8_t *p, uint32_t n, uint32_t initial)
{
	uint64_t sum = initial;
	for (uint32_t i = 0; i < n; i++)
		sum += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint32_t frame_pseudo_sum(int family, const uint8_t *src, const uint8_t *dst,
			  uint8_t proto, uint32_t l4_len)
{
	uint32_t alen = family == 4 ? 4 : 16, sum = 0;
	for (uint32_t i = 0; i < alen; i += 2) {
		sum += (uint32_t)src[i] << 8 | src[i + 1];
		sum += (uint32_t)dst[i] << 8 | dst[i + 1];
	}
	return sum + proto + (l4_len >> 16) + (l4_len & 0xffff);
}

static uint32_t l4_hdr_len(const struct frame_spec *s)
{
	switch (s->proto) {
	case 6:
		return 20u + s->tcp_opt_len;
	case 17:
	case 1:
	case 58:
		return 8;
	default:
		return 0;
	}
}

static bool is_fragment(const struct frame_spec *s)
{
	return (s->family == 4 || s->v6_frag) && (s->mf || s->frag_offset);
}

/* L4 header + payload at p; fills checksum if the segment is whole. */
static void put_l4(uint8_t *p, const struct frame_spec *s, uint32_t l4_len,
		   bool write_hdr)
{
	uint32_t hl = write_hdr ? l4_hdr_len(s) : 0;
	uint8_t *pl = p + hl;

	for (uint32_t i = 0; i < s->payload_len; i++)
		pl[i] = s->payload ? s->payload[i] : (uint8_t)(i * 7 + 3);
	if (!write_hdr)
		return;
	memset(p, 0, hl);
	switch (s->proto) {
	case 6:
		w16(p, s->sport);
		w16(p + 2, s->dport);
		w32(p + 4, 1000);
		w32(p + 8, (s->tcp_flags & 0x10) ? 2000 : 0);
		p[12] = (uint8_t)((hl / 4) << 4);
		p[13] = s->tcp_flags;
		w16(p + 14, 65535);
		memset(p + 20, 1, s->tcp_opt_len);   /* NOPs */
		break;
	case 17:
		w16(p, s->sport);
		w16(p + 2, s->dport);
		w16(p + 4, l4_len);
		break;
	case 1:
	case 58:
		p[0] = s->icmp_type;
		p[1] = s->icmp_code;
		w32(p + 4, s->icmp_rest);
		break;
	default:
		return;
	}
	if (is_fragment(s))
		return;
	uint32_t init = 0;
	if (s->proto != 1)
		init = frame_pseudo_sum(s->family, s->src, s->dst, s->proto, l4_len);
	uint16_t c = frame_csum(p, l4_len, init);
	if (s->proto == 17 && c == 0)
		c = 0xffff;
	w16(p + (s->proto == 6 ? 16 : s->proto == 17 ? 6 : 2), c);
}

uint32_t frame_build_ip(uint8_t *buf, uint32_t cap, const struct frame_spec *s)
{
	bool frag = is_fragment(s);
	bool l4hdr = !(frag && s->frag_offset != 0);
	uint32_t l4_len = (l4hdr ? l4_hdr_len(s) : 0) + s->payload_len;

	if (s->family == 4) {
		uint32_t hl = 20u + s->ip_opt_len, tot = hl + l4_len;
		if (tot > cap || tot > 65535)
			return 0;
		memset(buf, 0, hl);
		buf[0] = (uint8_t)(0x40 | hl / 4);
		buf[1] = s->tos;
		w16(buf + 2, tot);
		w16(buf + 4, s->ip_id);
		w16(buf + 6, (s->df ? 0x4000u : 0) | (s->mf ? 0x2000u : 0) |
			     (s->frag_offset & 0x1fffu));
		buf[8] = s->ttl;
		buf[9] = s->proto;
		memcpy(buf + 12, s->src, 4);
		memcpy(buf + 16, s->dst, 4);
		memset(buf + 20, 1, s->ip_opt_len);   /* NOP options */
		w16(buf + 10, frame_csum(buf, hl, 0));
		put_l4(buf + hl, s, l4_len, l4hdr);
		return tot;
	}

	uint32_t ext_len = s->v6_frag ? 8 : 0;
	for (unsigned i = 0; i < s->n_ext; i++)
		ext_len += (s->ext_units[i] + 1u) * 8;
	uint32_t tot = 40 + ext_len + l4_len;
	if (tot > cap)
		return 0;
	memset(buf, 0, 40 + ext_len);
	w32(buf, 0x60000000u | (uint32_t)s->tos << 20 | (s->flow_label & 0xfffff));
	w16(buf + 4, tot - 40);
	buf[7] = s->ttl;
	memcpy(buf + 8, s->src, 16);
	memcpy(buf + 24, s->dst, 16);

	uint8_t *nh = buf + 6;
	uint8_t *p = buf + 40;
	for (unsigned i = 0; i < s->n_ext; i++) {
		uint32_t hlen = (s->ext_units[i] + 1u) * 8;
		*nh = s->ext[i];
		nh = p;
		p[1] = s->ext_units[i];
		if (s->ext[i] == 43) {
			p[2] = 253;   /* routing type: experimental, segments left 0 */
		} else {
			p[2] = 1;     /* PadN over the whole options area */
			p[3] = (uint8_t)(hlen - 4);
		}
		p += hlen;
	}
	if (s->v6_frag) {
		*nh = 44;
		nh = p;
		w16(p + 2, (uint32_t)(s->frag_offset & 0x1fff) << 3 | (s->mf ? 1 : 0));
		w32(p + 4, s->frag_id);
		p += 8;
	}
	*nh = s->proto;
	put_l4(p, s, l4_len, l4hdr);
	return tot;
}

uint32_t frame_build(uint8_t *buf, uint32_t cap, const struct frame_spec *s,
		     uint32_t *l3_off, uint32_t *l4_off)
{
	uint32_t l3 = s->vlan ? 18 : 14;
	if (cap < l3)
		return 0;
	memcpy(buf, s->dst_mac, 6);
	memcpy(buf + 6, s->src_mac, 6);
	uint16_t type = s->family == 4 ? 0x0800 : 0x86dd;
	if (s->vlan) {
		w16(buf + 12, 0x8100);
		w16(buf + 14, s->vlan_tci);
		w16(buf + 16, type);
	} else {
		w16(buf + 12, type);
	}
	uint32_t n = frame_build_ip(buf + l3, cap - l3, s);
	if (n == 0 || cap - l3 - n < s->eth_pad)
		return 0;
	memset(buf + l3 + n, 0, s->eth_pad);
	if (l3_off)
		*l3_off = l3;
	if (l4_off) {
		uint32_t off = s->family == 4 ? 20u + s->ip_opt_len : 40u;
		if (s->family == 6) {
			for (unsigned i = 0; i < s->n_ext; i++)
				off += (s->ext_units[i] + 1u) * 8;
			off += s->v6_frag ? 8 : 0;
		}
		*l4_off = l3 + off;
	}
	return l3 + n + s->eth_pad;
}

bool frame_ip_checksums_ok(const uint8_t *ip, uint32_t len)
{
	int family = ip[0] >> 4;
	uint32_t hl, tot;
	uint8_t proto;
	const uint8_t *src, *dst;

	if (family == 4) {
		hl = (ip[0] & 15u) * 4;
		tot = (uint32_t)ip[2] << 8 | ip[3];
		if (hl < 20 || tot > len || frame_csum(ip, hl, 0) != 0)
			return false;
		proto = ip[9];
		src = ip + 12;
		dst = ip + 16;
		if (((uint32_t)ip[6] << 8 | ip[7]) & 0x3fff)
			return true;   /* fragment: no whole segment */
	} else if (family == 6) {
		/* Only headers this builder and the encapsulation write. */
		hl = 40;
		tot = 40 + ((uint32_t)ip[4] << 8 | ip[5]);
		if (tot > len)
			return false;
		proto = ip[6];
		src = ip + 8;
		dst = ip + 24;
	} else {
		return false;
	}
	uint32_t l4_len = tot - hl;
	const uint8_t *l4 = ip + hl;
	switch (proto) {
	case 6:
	case 17:
	case 58:
		if (proto == 17 && l4_len >= 8 && family == 4 &&
		    l4[6] == 0 && l4[7] == 0)
			return true;
		return frame_csum(l4, l4_len, frame_pseudo_sum(family, src, dst,
							       proto, l4_len)) == 0;
	case 1:
		return frame_csum(l4, l4_len, 0) == 0;
	default:
		return true;
	}
}
