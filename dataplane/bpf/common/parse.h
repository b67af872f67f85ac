/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounds-checked header walking for the XDP programs: a cursor over the
 * frame, Ethernet (+ one VLAN tag), IPv6 extension headers. Every read is
 * preceded by a check against the frame end the verifier can follow.
 * BPF side only. */
#ifndef MLV_BPF_PKT_PARSE_H
#define MLV_BPF_PKT_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/common/consts.h"

/* Where parsing has got to in the frame [pos, end). */
struct mlv_cursor {
	void *pos;
	void *end;
};

/* An 802.1Q tag after the MAC addresses. */
struct mlv_vlan_hdr {
	__be16 tci;
	__be16 proto;   /* the encapsulated ethertype */
};

/* IPv6 fragment header (RFC 8200 4.5); the uapi headers lack it. */
struct mlv_ip6_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;   /* offset << 3 | res | M */
	__be32 identification;
};

/* The start of every ICMP and ICMPv6 message. <linux/icmp.h> pulls in
 * libc socket headers that do not build for the BPF target. */
struct mlv_icmp_hdr {
	__u8 type;
	__u8 code;
	__sum16 checksum;
};

/* Step over the Ethernet header and, if allow_vlan, one 802.1Q tag (as
 * the data plane's parser does; it takes no 802.1ad tags either). Sets
 * *proto to the ethertype in network order. Returns 0, or -1 if the
 * frame is too short. */
static __always_inline int mlv_parse_eth(struct mlv_cursor *c, __be16 *proto,
					 int allow_vlan)
{
	struct ethhdr *eth = c->pos;

	if ((void *)(eth + 1) > c->end)
		return -1;
	*proto = eth->h_proto;
	c->pos = eth + 1;
	if (allow_vlan && *proto == bpf_htons(ETH_P_8021Q)) {
		struct mlv_vlan_hdr *vlan = c->pos;

		if ((void *)(vlan + 1) > c->end)
			return -1;
		*proto = vlan->proto;
		c->pos = vlan + 1;
	}
	return 0;
}

/* Where the walk over IPv6 extension headers stopped. */
enum mlv_ip6_walk {
	MLV_IP6_L4 = 0,      /* *nexthdr is the upper layer at c->pos */
	MLV_IP6_FRAGMENT,    /* a non-atomic fragment: no usable L4 header */
	MLV_IP6_MALFORMED,   /* truncated, or more than MLV_IPV6_MAX_EXT */
};

/* Skip hop-by-hop, routing and destination-options headers and atomic
 * fragment headers after the fixed IPv6 header, as the data plane does.
 * *nexthdr: in, the fixed header's next header; out, the upper layer. */
static __always_inline enum mlv_ip6_walk
mlv_ip6_skip_ext(struct mlv_cursor *c, __u8 *nexthdr)
{
	__u8 nh = *nexthdr;

	/* one more round than headers allowed: the last may only find the
	 * upper layer */
#pragma unroll
	for (int i = 0; i <= MLV_IPV6_MAX_EXT; i++) {
		if (nh == MLV_NEXTHDR_HOP || nh == MLV_NEXTHDR_ROUTING ||
		    nh == MLV_NEXTHDR_DEST) {
			struct ipv6_opt_hdr *opt = c->pos;

			if (i == MLV_IPV6_MAX_EXT ||
			    (void *)(opt + 1) > c->end)
				return MLV_IP6_MALFORMED;
			nh = opt->nexthdr;
			c->pos += ((__u32)opt->hdrlen + 1) * 8;
			continue;
		}
		if (nh == MLV_NEXTHDR_FRAGMENT) {
			struct mlv_ip6_frag_hdr *frag = c->pos;

			if (i == MLV_IPV6_MAX_EXT ||
			    (void *)(frag + 1) > c->end)
				return MLV_IP6_MALFORMED;
			if (frag->frag_off & bpf_htons(MLV_IP6_FRAG_MASK))
				return MLV_IP6_FRAGMENT;
			nh = frag->nexthdr;
			c->pos = frag + 1;
			continue;
		}
		*nexthdr = nh;
		return MLV_IP6_L4;
	}
	return MLV_IP6_MALFORMED;
}

#endif
