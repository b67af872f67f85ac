/* SPDX-License-Identifier: BSD-3-Clause */
/* The key -> node mappings hash-compare measures, behind one interface.
 *
 * The key-based ones (mod-N, ring, rendezvous, jump, multi-probe) follow
 * the papers and the published comparison: a 64-bit key hash goes straight
 * to a node. The table-based ones are maglevd's own builders
 * (control/tables/builder.h): a key goes to table[key mod M], as a flow
 * goes to table[flow_hash mod M] in the data plane.
 *
 * Nodes are identified by name; a scheme maps a key to an index into the
 * names it was built from. Single-threaded tool code.
 */
#ifndef HC_SCHEMES_H
#define HC_SCHEMES_H

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"

struct hc_scheme {
	const char *name;          /* row label */
	const char *family;        /* "modn", "ring", ... for --json */
	/* Only the last node can leave and a new one is appended (mod-N,
	 * jump: nodes are bucket numbers, not names). */
	bool numbered;
	uint32_t param;            /* ring V, multi-probe K, table M */
	uint32_t vnodes;           /* maglevd ring table: points per weight */
	/* Build over names[0..n-1]; NULL on allocation failure. */
	void *(*build)(const struct hc_scheme *s, char *const *names, uint32_t n);
	uint32_t (*lookup)(const void *state, uint64_t key);
	void (*free)(void *state);
};

/* The published comparison's rows, then maglevd's tables. */
extern const struct hc_scheme hc_schemes[];
extern const uint32_t hc_n_schemes;

/* The 64-bit hash of a node name (SipHash-2-4 under a tool key). */
uint64_t hc_name_hash(const char *name);

/* MurmurHash3's 64-bit finalizer. */
uint64_t hc_mix(uint64_t k);

#endif
