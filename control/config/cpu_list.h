/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU lists as Linux writes them (cpuset(7) "List format", e.g.
 * "0-1,4"): for control.build_cpus. Parsed by hand: DPDK's own parser
 * (eal_parse_coremask and friends) is EAL-internal, and glibc has none.
 *
 * Plain C; pure functions, any thread.
 */
#ifndef MLV_CPU_LIST_H
#define MLV_CPU_LIST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t */
#endif
#include <sched.h>
#include <stddef.h>

#include "control/base/error.h"

/* Parse text, comma-separated CPU numbers and ranges "a-b" (a <= b), all
 * below CPU_SETSIZE, into *set. Spaces around items are allowed; an empty
 * list, an empty item, a reversed range or trailing junk is not. Returns
 * MLV_OK, or MLV_E_INVAL / MLV_E_RANGE with a one-line reason in
 * why[why_len] (may be NULL). */
enum mlv_err mlv_cpu_list_parse(const char *text, cpu_set_t *set,
				char *why, size_t why_len);

/* Format set as a list ("0-1,4") into buf; truncated text still ends
 * with a NUL. Returns buf. */
char *mlv_cpu_list_format(const cpu_set_t *set, char *buf, size_t len);

#endif
