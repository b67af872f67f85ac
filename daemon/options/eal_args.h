/* SPDX-License-Identifier: BSD-3-Clause */
/* The argument vector maglevd hands to rte_eal_init: the program name, the
 * configured dataplane.eal_args (or the command line's after "--"), plus
 * defaults the operator did not set: the lcore list 0..workers (main lcore
 * = control thread, then one lcore per worker) and a DPDK log level that
 * follows --log-level. Plain C, no DPDK: built and tested without EAL.
 * Control thread only.
 */
#ifndef MLV_DAEMON_EAL_ARGS_H
#define MLV_DAEMON_EAL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/base/log.h"

struct mlv_eal_args {
	int argc;
	/* argc strings and a NULL; owned here because rte_eal_init may
	 * permute argv, so the config's strings are never handed over.
	 * argv_orig keeps the pointers for freeing. */
	char **argv;
	char **argv_orig;
};

/* True if args select lcores themselves (-l, --lcores, -c coremask). */
bool mlv_eal_args_have_lcores(char *const *args, int n);

/* The first of args[0..n-1] that keeps DPDK single-process, leaving a
 * secondary process such as dpdk-dumpcap nothing to attach to:
 * "--in-memory" and "--no-shconf" (no shared runtime files, no
 * multi-process socket) or "--no-huge" (memory in no file a secondary can
 * map). NULL when there is none. */
const char *mlv_eal_args_single_process(char *const *args, int n);

/* When maglevd picks the lcores (args select none: -l 0-workers),
 * lcore i runs on CPU i, so CPUs 0..workers must all be CPUs this
 * process may run on. allowed[0..n_allowed-1]: whether CPU i is one
 * (NULL: sched_getaffinity of this process). Returns MLV_OK, or MLV_E_CONFIG with one sentence in why
 * (why_len bytes) naming dataplane.workers, the CPUs it needs and the
 * CPUs there are. Explicit lcores are DPDK's to check. */
enum mlv_err mlv_eal_args_check_cpus(char *const *args, int n,
				     uint32_t workers, const bool *allowed,
				     size_t n_allowed, char *why, size_t why_len);

/* Build out from prog and args[0..n-1]. Returns MLV_OK, MLV_E_RANGE if
 * workers is 0 or too large, MLV_E_NOMEM. Release with mlv_eal_args_free. */
enum mlv_err mlv_eal_args_build(const char *prog, char *const *args, int n,
				uint32_t workers, enum mlv_log_level level,
				struct mlv_eal_args *out);

/* Replace argument i (1 .. argc-1) with text, taking ownership of text
 * (malloc'd). Only before rte_eal_init, which may permute argv. */
void mlv_eal_args_replace(struct mlv_eal_args *a, int i, char *text);

/* Append text (malloc'd; owned from now on, freed on failure). Only
 * before rte_eal_init. MLV_OK or MLV_E_NOMEM. */
enum mlv_err mlv_eal_args_append(struct mlv_eal_args *a, char *text);

void mlv_eal_args_free(struct mlv_eal_args *a);

#endif
