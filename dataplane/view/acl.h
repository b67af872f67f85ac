/* SPDX-License-Identifier: BSD-3-Clause */
/* A VIP's source ACL as the workers read it: the sorted starts of
 * disjoint address intervals, each with the verdict of the most specific
 * prefix that covers it, and the look-up of a source address. How it is
 * built from the VIP's allow and deny lists, why it is hand-rolled, and
 * its semantics: control/generation/acl.h. The look-up is a pure read,
 * any thread holding a generation that holds the ACL.
 */
#ifndef MLV_VIEW_ACL_H
#define MLV_VIEW_ACL_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct mlv_acl_rule;

/* The search runs in two steps. A direct index first: the `bits` bits of
 * the address after its first `skip` (skip: the bits every interval
 * boundary but address 0 has in common, so that the index spreads over
 * where the boundaries are) give a bucket, and first[bucket] ..
 * first[bucket + 1] the intervals that bucket's addresses can be in;
 * then a branchless binary search of those, mostly one or two. An
 * address outside the boundaries' common prefix (mask / base) is before
 * every boundary (interval 0) or after them all (the last). */
struct mlv_acl {
	uint8_t family;            /* 4 or 6: a VIP's clients are of its family */
	uint8_t first_allow;       /* verdict of interval 0 (1 = allow) */
	uint8_t bits;              /* index bits: 4..MLV_ACL_INDEX_BITS */
	uint8_t skip;              /* leading bits before them */
	uint32_t n;                /* intervals, >= 1; start[0] is 0 */
	const uint32_t *first;     /* [2^bits + 1] */
	const uint32_t *start4;    /* family 4: host byte order */
	const unsigned __int128 *start6; /* family 6: host-order 128-bit */
	uint32_t mask4, base4;     /* family 4: top `skip` bits and theirs */
	unsigned __int128 mask6, base6;  /* family 6: the same */
	/* Control thread only: */
	uint32_t refs;
	uint32_t n_rules;          /* the input, as given to mlv_acl_build */
	const struct mlv_acl_rule *rules;
};

/* The direct index has at most 2^16 buckets (256 KiB), and about two per
 * interval below that. */
#define MLV_ACL_INDEX_BITS 16

/* Whether the ACL lets a packet from src (the flow key's source, in
 * network byte order, of the ACL's family) through. Pure; any thread. */
static inline bool mlv_acl_allows(const struct mlv_acl *acl,
				  const uint8_t *src)
{
	uint32_t i, n;

	if (acl->family == 4) {
		const uint32_t *s = acl->start4;
		uint32_t k, b;

		memcpy(&k, src, 4);
		k = be32toh(k);
		if ((k & acl->mask4) != acl->base4) {
			i = (k & acl->mask4) < acl->base4 ? 0 : acl->n - 1;
		} else {
			b = (k << acl->skip) >> (32 - acl->bits);
			i = acl->first[b];
			n = acl->first[b + 1] - i + 1;
			while (n > 1) {
				uint32_t half = n / 2;

				i = s[i + half] <= k ? i + half : i;
				n -= half;
			}
		}
	} else {
		const unsigned __int128 *s = acl->start6;
		unsigned __int128 k;
		uint64_t hi, lo;
		uint32_t b;

		memcpy(&hi, src, 8);
		memcpy(&lo, src + 8, 8);
		k = ((unsigned __int128)be64toh(hi) << 64) | be64toh(lo);
		if ((k & acl->mask6) != acl->base6) {
			i = (k & acl->mask6) < acl->base6 ? 0 : acl->n - 1;
		} else {
			b = (uint32_t)((k << acl->skip) >> (128 - acl->bits));
			i = acl->first[b];
			n = acl->first[b + 1] - i + 1;
			while (n > 1) {
				uint32_t half = n / 2;

				i = s[i + half] <= k ? i + half : i;
				n -= half;
			}
		}
	}
	return (acl->first_allow ^ (i & 1)) != 0;
}

#endif
