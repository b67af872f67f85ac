/* SPDX-License-Identifier: BSD-3-Clause */
/* Cross-field config checks, hooked into the schema tables
 * (schema.c) and run by the walk in apply.c once the keys
 * of one mapping are converted. Internal to the config loader. */
#ifndef MLV_CONFIG_VALIDATE_H
#define MLV_CONFIG_VALIDATE_H

#include "control/config/schema_internal.h"

/* health: timeout shorter than interval, path starts with '/'. */
void mlv_cfg_finish_health(struct mlv_cfg_ctx *ctx, void *obj,
			   const struct mlv_cfg_seen *seen);
/* dataplane: at least one port; unique port names and devices; tx_port
 * names another port; at most one exception port; mbuf_size holds a
 * frame of the largest port MTU behind the headroom. */
void mlv_cfg_finish_dataplane(struct mlv_cfg_ctx *ctx, void *obj,
			      const struct mlv_cfg_seen *seen);
/* A port's bond: marks it enabled; two members at least, none twice,
 * none a bonded device itself. */
void mlv_cfg_finish_bond(struct mlv_cfg_ctx *ctx, void *obj,
			 const struct mlv_cfg_seen *seen);
/* control: build_cpus is a CPU list (control/config/cpu_list.h). */
void mlv_cfg_finish_control(struct mlv_cfg_ctx *ctx, void *obj,
			    const struct mlv_cfg_seen *seen);
/* announce: a table of its own, not one the kernel's routing relies on
 * (main, local, default). */
void mlv_cfg_finish_announce(struct mlv_cfg_ctx *ctx, void *obj,
			     const struct mlv_cfg_seen *seen);
/* One VIP: gue_port only with gue, mss_clamp only with tcp (UDP VIPs
 * get it off), address families the forwarding can
 * carry, l2dsr MACs, unique backend names, balance warnings; then sorts
 * the backends by name (the Maglev builder relies on it). */
void mlv_cfg_finish_vip(struct mlv_cfg_ctx *ctx, void *obj,
			const struct mlv_cfg_seen *seen);
/* Item nodes of a list value (report.c), indexable (free them); NULL (and no error)
 * if the value is not a list of exactly n items, e.g. because it was
 * rejected; NULL with ctx->nomem on allocation failure. */
const struct mlv_ynode **mlv_cfg_list_items(struct mlv_cfg_ctx *ctx,
					    const struct mlv_ynode *list,
					    uint32_t n);
/* One VIP's QUIC routing (validate_quic.c): quic only on UDP, server
 * IDs unique within the VIP, ignored IDs and ID-less quic VIPs warned
 * about. Before the backends are sorted: reads them in file order. */
void mlv_cfg_check_quic(struct mlv_cfg_ctx *ctx,
			const struct mlv_vip_config *vip,
			const struct mlv_cfg_seen *seen);
/* The whole file: unique VIP names and (address, port, protocol). */
void mlv_cfg_finish_root(struct mlv_cfg_ctx *ctx, void *obj,
			 const struct mlv_cfg_seen *seen);
/* port_spec.c: a VIP with a port range or `any` and a health check names
 * health.port; source_prefix6 only with hash: source. */
void mlv_cfg_check_vip_ports_hash(struct mlv_cfg_ctx *ctx,
				  const struct mlv_vip_config *vip,
				  const struct mlv_cfg_seen *seen);
/* port_spec.c: no two VIPs on one address and protocol with the same
 * port (or both `any`), and no overlapping ranges. */
void mlv_cfg_check_unique_vips(struct mlv_cfg_ctx *ctx,
			       const struct mlv_config *cfg,
			       const struct mlv_ynode **items);
/* A new VIP inherits defaults.{forwarding,table_size,health}. */
void mlv_cfg_init_vip(struct mlv_cfg_ctx *ctx, void *elem);

#endif
