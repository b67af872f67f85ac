/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet capture with DPDK's own tool (docs/operations.md, "Packet
 * capture"): maglevd runs DPDK's pdump server, so that dpdk-dumpcap, a
 * DPDK secondary process, can ask it to copy a port's received and
 * transmitted frames into a ring dpdk-dumpcap reads and writes to a
 * pcapng file.
 *
 * The server is only a handler on the EAL's multi-process socket: the
 * RX/TX callbacks that copy frames are installed on a port's queues when
 * a capture starts and removed when it stops, so the workers' bursts
 * cost nothing extra otherwise. The ring and the mbuf pool of the copies
 * are dpdk-dumpcap's, in the shared hugepage memory; maglevd's own pool
 * lends them nothing.
 *
 * A secondary process needs the primary's shared files: EAL arguments
 * with --in-memory, --no-shconf or --no-huge rule capture out, and
 * maglevd then says so once at start-up.
 *
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_CAPTURE_H
#define MLV_DAEMON_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "control/base/error.h"
#include "daemon/options/eal_args.h"

struct mlv_capture {
	bool server;             /* rte_pdump_init succeeded: uninit at close */
};

/* After rte_eal_init: start the pdump server if eal's arguments let a
 * secondary process attach, and log at info either the dpdk-dumpcap
 * command for this instance (its --file-prefix) or the argument that
 * rules capture out. Returns MLV_OK in both cases, MLV_E_DPDK when DPDK
 * refused to start the server (why says how; nothing else changed). */
enum mlv_err mlv_capture_open(struct mlv_capture *c,
			      const struct mlv_eal_args *eal,
			      char *why, size_t len);

/* Stop answering capture requests and free the capture statistics.
 * Only after the workers stopped: a capture still running leaves its
 * callbacks on the queues, and they count into those statistics. Before
 * the ports close, so that no capture starts on a port going away;
 * dpdk-dumpcap ends by itself once maglevd is gone. Idempotent; safe on
 * a zeroed struct. */
void mlv_capture_close(struct mlv_capture *c);

#endif
