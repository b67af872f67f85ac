/* SPDX-License-Identifier: BSD-3-Clause */
/* The tc egress half of SYN-ACK MSS clamping (dataplane/bpf/decap/synack.h):
 * the program mlv_tc_synack on the clsact egress hook of the interface the
 * decapsulator is attached to, using the attached decapsulator's maps.
 * Our filter is the one at MLV_DECAP_TC_HANDLE / MLV_DECAP_TC_PRIO whose
 * program is named MLV_DECAP_TC_PROG_NAME; a filter of anyone else there
 * is never replaced or removed (MLV_E_BUSY). The clsact qdisc is created
 * when missing and left in place on detach (other filters may use it).
 *
 * Threads: one thread at a time per interface. Errors: enum mlv_err with
 * a one-line reason in errbuf (when not NULL). */
#ifndef MLV_DECAP_SYNACK_TC_H
#define MLV_DECAP_SYNACK_TC_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "tools/bin/maglev-decap/decap_ctl.h"

/* The BPF program name of the egress program. */
#define MLV_DECAP_TC_PROG_NAME "mlv_tc_synack"
/* Where our filter sits on the egress hook: a fixed handle and priority,
 * so every command finds it again. */
#define MLV_DECAP_TC_HANDLE 0x6d6c
#define MLV_DECAP_TC_PRIO 0x6d6c

/* Load the egress program over the maps of the decapsulator maps came
 * from and attach it to ifindex's egress, replacing our earlier one. */
enum mlv_err mlv_decap_tc_attach(int ifindex, const struct mlv_decap_maps *maps,
				 char *errbuf, size_t errlen);

/* The id of our egress program on ifindex (0 if none). MLV_E_BUSY if
 * another program holds our handle and priority. */
enum mlv_err mlv_decap_tc_query(int ifindex, uint32_t *prog_id,
				char *errbuf, size_t errlen);

/* Remove our egress program from ifindex; *removed 0 if none was there. */
enum mlv_err mlv_decap_tc_detach(int ifindex, int *removed, char *errbuf,
				 size_t errlen);

#endif
