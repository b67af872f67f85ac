/* SPDX-License-Identifier: BSD-3-Clause */
/* Internet checksum arithmetic for the XDP programs: verifying an IPv4
 * header, and updating a checksum after a 16- or 32-bit word it covers
 * changed (RFC 1624).
 * One's-complement sums are byte-order independent, so words are summed
 * as stored. BPF side only. */
#ifndef MLV_BPF_PKT_CSUM_H
#define MLV_BPF_PKT_CSUM_H

#include <linux/ip.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

static __always_inline __u16 mlv_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* True if the option-less IPv4 header at ip (20 bytes, already
 * bounds-checked by the caller) carries a correct header checksum. */
static __always_inline int mlv_ipv4_hdr_csum_ok(const struct iphdr *ip)
{
	const __u16 *word = (const __u16 *)ip;
	__u32 sum = 0;

#pragma unroll
	for (int i = 0; i < (int)(sizeof(*ip) / 2); i++)
		sum += word[i];
	return mlv_csum_fold(sum) == 0xffff;
}

/* The checksum after a covered 16-bit word changed from old to new:
 * HC' = ~(~HC + ~m + m') (RFC 1624, eqn. 3). */
static __always_inline __sum16 mlv_csum_replace16(__sum16 check, __be16 old,
						  __be16 new)
{
	__u32 sum = (__u16)~check + (__u16)~old + (__u16)new;

	return (__sum16)(__u16)~mlv_csum_fold(sum);
}

/* mlv_csum_replace16 for a covered 32-bit word (an IPv4 address, a
 * quarter of an IPv6 one), as its two 16-bit halves. */
static __always_inline __sum16 mlv_csum_replace32(__sum16 check, __be32 old,
						  __be32 new)
{
	check = mlv_csum_replace16(check, (__be16)old, (__be16)new);
	return mlv_csum_replace16(check, (__be16)(old >> 16),
				  (__be16)(new >> 16));
}

/* A UDP checksum of 0 means "none" (RFC 768), so an update that comes
 * to 0 is sent as 0xFFFF, the same value in one's complement. */
static __always_inline __sum16 mlv_udp_csum(__sum16 check)
{
	return check ? check : (__sum16)0xffff;
}

#endif
