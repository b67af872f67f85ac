/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's readiness on a backend (docs/second-chance.md,
 * "Limits"; docs/deployment.md "Second chance on the backend"): the
 * host settings a redirect needs, read from the sysctl tree before any
 * packet needs them, for `maglev-decap status`. Plain C, no BPF: the
 * root of the tree is a parameter, so tests read a tree of their own. */
#ifndef MLV_DECAP_READINESS_H
#define MLV_DECAP_READINESS_H

#include <stdbool.h>
#include <stddef.h>

/* One check: its name (a Prometheus label value), whether it holds, and
 * what to do when it does not (or what was read). */
struct mlv_sc_check {
	const char *name;
	bool ok;
	char detail[192];
};

/* The most checks mlv_sc_readiness fills. */
#define MLV_SC_CHECKS_MAX 6

/* Fill out[] with the checks for second chance on dev, reading
 * sysctl_root (normally "/proc/sys"): IPv4 forwarding on dev; ICMP
 * redirects off (all and dev); reverse-path filtering not strict (all
 * and dev); and, when v6 (dev decapsulates IPv6), IPv6 forwarding (all
 * and dev); and whether gue ports are configured (has_gue: hops travel
 * in GUE only). A setting that cannot be read fails its check, saying
 * so. Returns how many were filled. Any thread. */
size_t mlv_sc_readiness(const char *sysctl_root, const char *dev, bool v6,
			bool has_gue, struct mlv_sc_check *out);

#endif
