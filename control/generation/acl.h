/* SPDX-License-Identifier: BSD-3-Clause */
/* A VIP's source ACL as the workers read it: the allow and deny prefixes
 * of the VIP flattened, when the generation is built, into the sorted
 * starts of disjoint address intervals, each with the verdict of the most
 * specific prefix that covers it (or the default where none does).
 * Adjacent intervals with the same verdict are merged, so verdicts
 * alternate and only the first one is stored: interval i allows iff
 * first_allow ^ (i & 1). A look-up finds the last start <= the source
 * address: a direct index on 4 to 16 bits of it narrows that down to a
 * few intervals (struct mlv_acl), a branchless binary search does the
 * rest.
 *
 * Hand-rolled rather than rte_lpm / rte_lpm6, measured in one run by
 * tools/bench/acl-bench (docs/benchmarks.md, "Source ACLs"; 10,000
 * random nested prefixes): per look-up, IPv4 costs 3.0 ns against
 * rte_lpm's 1.8 ns when the same sources repeat, and 8.8 ns against
 * 10.1 ns when every look-up goes elsewhere; IPv6 costs 6 to 11 ns
 * against rte_lpm6's 20 to 78 ns. rte_lpm's small lead on hot IPv4
 * sources does not pay for what it needs: 64 MiB of tbl24 per table
 * however few its prefixes (one per ACL'd VIP and generation: 74 MiB
 * against our 162 KiB at 10,000 prefixes), 20 times the build time
 * (37 ms against 1.7 ms), EAL memory and a unique name per table, where
 * the generation is plain C, built and unit-tested without EAL, freed as
 * a whole and never updated in place.
 *
 * Semantics (docs/forwarding.md, "Source ACLs"): longest-prefix match
 * over the union of the two lists; the matching prefix's list decides;
 * no match: denied if the allow list is non-empty, else allowed.
 *
 * Threads: mlv_acl_build / mlv_acl_ref / mlv_acl_release on the control
 * thread (the reference count is a plain integer, like the tables'); the
 * look-up is a pure read, any thread holding a generation that holds it.
 */
#ifndef MLV_GEN_ACL_H
#define MLV_GEN_ACL_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "control/base/error.h"
#include "control/config/config.h"

/* At most this many prefixes per VIP, allow and deny together (config
 * checks it; the build refuses more with MLV_E_RANGE). */
#define MLV_ACL_MAX_PREFIXES MLV_VIP_ACL_MAX

/* One prefix of an ACL's input: family's address in network byte order
 * (IPv4 in addr[0..3]), its length, and its list. */
struct mlv_acl_rule {
	uint8_t addr[16];
	uint8_t len;
	bool allow;
};

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

/* Build the ACL for family (4 or 6) from n rules (any order; a prefix
 * listed twice counts once, deny winning if its lists differ; bits past
 * a rule's length are ignored). The result has one reference. Errors:
 * MLV_E_INVAL (bad family or length, n 0), MLV_E_RANGE (more than
 * MLV_ACL_MAX_PREFIXES), MLV_E_NOMEM. Control thread. */
enum mlv_err mlv_acl_build(uint8_t family, const struct mlv_acl_rule *rules,
			   uint32_t n, struct mlv_acl **out);

/* Whether acl was built from exactly this input: the same family and
 * the same rules in the same order (a reordered list is rebuilt, which
 * is correct, only slower). A comparison, no sort: a generation built
 * for a health change with a million unchanged prefixes shares them for
 * the cost of a memcmp. Control thread. */
bool mlv_acl_same_input(const struct mlv_acl *acl, uint8_t family,
			const struct mlv_acl_rule *rules, uint32_t n);

/* The ACL of VIP vc: NULL in *out if its lists are empty; prev (the
 * same VIP's ACL in the previous generation, or NULL) with one more
 * reference if it was built from the same lists; else a new one.
 * Errors as mlv_acl_build. Control thread. */
enum mlv_err mlv_acl_for_vip(const struct mlv_vip_config *vc,
			     const struct mlv_acl *prev, struct mlv_acl **out);

/* Take / drop a reference; the last release frees it. NULL: no-op.
 * Control thread. */
void mlv_acl_ref(struct mlv_acl *acl);
void mlv_acl_release(struct mlv_acl *acl);

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
