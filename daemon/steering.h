/* SPDX-License-Identifier: BSD-3-Clause */
/* AF_XDP steering in the daemon (docs/deployment.md): for each net_af_xdp
 * device among the EAL arguments, make sure DPDK's driver loads our XDP
 * steering program, then keep the program's VIP maps equal to the
 * running config. The BPF side is control/steering/steering.h.
 *
 * Order in the daemon's life:
 *   1. mlv_steering_prepare, before rte_eal_init and after the daemon
 *      holds its control socket (so no other maglevd on this socket
 *      runs): a vdev without xdp_prog= gets the object embedded in this
 *      binary, written next to the control socket; a program left
 *      attached by a killed maglevd is removed;
 *   2. mlv_steering_open, after the ports started (the driver attached
 *      the program while setting up RX queues): find its maps and sync;
 *   3. mlv_steering_sync after every accepted reload;
 *   4. mlv_steering_close before the ports close.
 *
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_STEERING_H
#define MLV_DAEMON_STEERING_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "control/config/config.h"
#include "control/base/error.h"
#include "daemon/options/eal_args.h"

struct mlv_xdp_steer;

struct mlv_steer_iface {
	char ifname[IF_NAMESIZE];
	bool ours;                   /* we appended xdp_prog=: the program
					must be ours and must be found */
	struct mlv_xdp_steer *h;     /* NULL until opened */
	uint64_t sync_failures;
};

struct mlv_steering {
	uint32_t n;
	struct mlv_steer_iface ifs[MLV_MAX_PORTS];
	char obj_path[PATH_MAX];     /* the object we wrote, "" if none */
	uint64_t syncs;
	bool in_place;               /* the last sync reached every managed
					interface (true with none) */
};

/* Rewrite the af_xdp vdevs of eal as described above. control_socket
 * names where the object goes ("<control_socket>.xdp_steer.bpf.o", one
 * per instance). Logs and returns MLV_E_CONFIG for an af_xdp vdev without
 * a usable iface=, MLV_E_IO when the object cannot be written, MLV_E_BUSY
 * when another XDP program is attached to the interface, MLV_E_NOMEM. */
enum mlv_err mlv_steering_prepare(struct mlv_steering *s,
				  struct mlv_eal_args *eal,
				  const char *control_socket);

/* Open each interface's program and sync cfg into it. A program we asked
 * for that cannot be opened fails (logged); one the operator named with
 * their own xdp_prog= that is not ours is left alone with a warning. */
enum mlv_err mlv_steering_open(struct mlv_steering *s,
			       const struct mlv_config *cfg);

/* Sync cfg's VIPs into every open program. Logs failures and returns the
 * first error (the other interfaces are still synced). */
enum mlv_err mlv_steering_sync(struct mlv_steering *s,
			       const struct mlv_config *cfg);

/* Per interface: its counters and sync failures; an empty object when no
 * interface is steered. NULL when memory ran out. */
json_t *mlv_steering_json(const struct mlv_steering *s);

/* Close every handle (the driver detaches its program when the port
 * closes) and remove the object file. */
void mlv_steering_close(struct mlv_steering *s);

#endif
