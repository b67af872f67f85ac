/* SPDX-License-Identifier: BSD-3-Clause */
/* The control side of health checks through the data path
 * (docs/health.md, "Checks through the data path"): loads the tc
 * programs of dataplane/bpf/check_path, attaches them to the interfaces
 * the host reaches backends by, and keeps their maps equal to the
 * data-path checks in flight (struct mlv_health_tunnel, one entry in each
 * direction per check). Plain libbpf, no DPDK.
 *
 * Attaching: both programs go on the interface's clsact hook (egress:
 * mlv_check_out, ingress: mlv_check_in) with a fixed handle and priority
 * (MLV_CHECK_PATH_TC_HANDLE, _PRIO), replacing whatever an earlier
 * maglevd left there, so a restart after a crash takes over. A clsact
 * qdisc this module created is removed again by mlv_check_path_close;
 * one that existed before stays, only our filters leave it.
 *
 * Threads: every function is for one thread per handle (the control
 * thread). Each map update is atomic for the programs reading it; a
 * check's two entries are written before its socket connects and
 * removed after it closed (control/health/health.h), so every packet of
 * the check finds both.
 * Errors: enum mlv_err, with a one-line reason in why (why_len bytes). */
#ifndef MLV_CHECK_PATH_H
#define MLV_CHECK_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/health/health.h"
#include "dataplane/bpf/check_path/counters.h"
#include "dataplane/bpf/check_path/structs.h"

/* The tc filters' handle and priority on each hook. */
#define MLV_CHECK_PATH_TC_HANDLE 0x4d4c
#define MLV_CHECK_PATH_TC_PRIO   0x4d4c

/* Interfaces one handle attaches to, at most. */
#define MLV_CHECK_PATH_MAX_IFS 64

struct mlv_check_path;

/* Load the programs; attached nowhere yet. MLV_OK and *out;
 * MLV_E_IO (the BPF load failed: no privilege, an old kernel) or
 * MLV_E_NOMEM, with why. */
enum mlv_err mlv_check_path_open(struct mlv_check_path **out, char *why,
				 size_t why_len);

/* Attach both programs to interface ifindex; a no-op for an interface
 * this handle attached to already. MLV_E_IO with why (the interface is
 * gone, not Ethernet-like, tc refused), MLV_E_LIMIT past
 * MLV_CHECK_PATH_MAX_IFS interfaces. */
enum mlv_err mlv_check_path_attach(struct mlv_check_path *cp, int ifindex,
				   char *why, size_t why_len);

/* Whether ifindex carries this handle's programs. */
bool mlv_check_path_attached(const struct mlv_check_path *cp, int ifindex);

/* The map records of t: what cp_out and cp_in hold for it. Pure; any
 * thread. MLV_E_INVAL when t's addresses are not of one family, its
 * forwarding is unknown, or its ipip outer_source is of another family or
 * longer than its addresses. */
enum mlv_err mlv_check_path_records(const struct mlv_health_tunnel *t,
				    struct mlv_cp_out_key *out_key,
				    struct mlv_cp_out *out,
				    struct mlv_cp_in_key *in_key,
				    struct mlv_cp_in *in);

/* Carry t's packets from now on (both entries). MLV_E_INVAL (as for
 * mlv_check_path_records), MLV_E_IO with why (a map is full). */
enum mlv_err mlv_check_path_add(struct mlv_check_path *cp,
				const struct mlv_health_tunnel *t, char *why,
				size_t why_len);

/* Stop carrying t's packets. An entry that is not there is no error. */
void mlv_check_path_remove(struct mlv_check_path *cp,
			   const struct mlv_health_tunnel *t);

/* The programs' counters (counters.h), summed over the CPUs; zeros if
 * the map cannot be read. */
void mlv_check_path_counters(const struct mlv_check_path *cp,
			     uint64_t out[MLV_CP_CTR__COUNT]);

/* Name of a counter ("carried"), or "unknown". Any thread. */
const char *mlv_check_path_counter_name(enum mlv_cp_counter c);

/* Interfaces the programs are attached to. */
uint32_t mlv_check_path_n_attached(const struct mlv_check_path *cp);

/* Detach from every interface and free. NULL is a no-op. */
void mlv_check_path_close(struct mlv_check_path *cp);

#endif
