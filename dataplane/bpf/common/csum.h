/* SPDX-License-Identifier: BSD-3-Clause */
/* Internet checksum arithmetic for the XDP programs: verifying an IPv4
 * header, and updating one after a 16-bit word changed (RFC 1624).
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

#endif
