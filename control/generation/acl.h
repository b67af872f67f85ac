/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a VIP's source ACL (the structure the workers read and its
 * look-up: dataplane/view/acl.h): the allow and deny prefixes of the VIP
 * flattened, when the generation is built, into the sorted
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

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/config/config.h"
#include "dataplane/view/acl.h"

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

#endif
