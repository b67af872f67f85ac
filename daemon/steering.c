/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE   /* asprintf */
#include "daemon/steering.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/base/log.h"
#include "control/steering/steering.h"

/* Object written for the driver to load: one per instance, next to the
 * instance's control socket (whose lock makes the name ours). */
#define OBJ_SUFFIX ".xdp_steer.bpf.o"

static enum mlv_err add_prog(struct mlv_steering *s, struct mlv_eal_args *eal,
			     int i, const char *control_socket)
{
	char err[256];
	char *arg;
	int n;

	if (!s->obj_path[0]) {
		n = snprintf(s->obj_path, sizeof(s->obj_path), "%s%s",
			     control_socket, OBJ_SUFFIX);
		if (n < 0 || (size_t)n >= sizeof(s->obj_path)) {
			s->obj_path[0] = '\0';
			mlv_err_log("AF_XDP steering: path %s%s is too long",
				    control_socket, OBJ_SUFFIX);
			return MLV_E_IO;
		}
		if (mlv_xdp_steer_write_object(s->obj_path, err, sizeof(err))) {
			mlv_err_log("AF_XDP steering: %s", err);
			s->obj_path[0] = '\0';
			return MLV_E_IO;
		}
	}
	if (asprintf(&arg, "%s,xdp_prog=%s", eal->argv[i], s->obj_path) < 0)
		return MLV_E_NOMEM;
	mlv_eal_args_replace(eal, i, arg);
	return MLV_OK;
}

enum mlv_err mlv_steering_prepare(struct mlv_steering *s,
				  struct mlv_eal_args *eal,
				  const char *control_socket)
{
	enum mlv_err rc;

	memset(s, 0, sizeof(*s));
	for (int i = 1; i < eal->argc; i++) {
		struct mlv_steer_iface *it;
		char err[256];
		int has_prog = 0, removed = 0;
		const char *arg = eal->argv[i];

		/* "--vdev=X" or "--vdev" "X" */
		if (strncmp(arg, "--vdev=", 7) != 0 &&
		    !(i > 1 && strcmp(eal->argv[i - 1], "--vdev") == 0))
			continue;
		if (s->n == MLV_MAX_PORTS)
			break;
		it = &s->ifs[s->n];
		rc = mlv_xdp_steer_vdev_iface(arg, it->ifname, sizeof(it->ifname),
					      &has_prog);
		if (rc == MLV_E_NOT_FOUND)
			continue;
		if (rc) {
			mlv_err_log("EAL argument %s: a net_af_xdp device needs "
				    "iface=<interface name>", arg);
			return MLV_E_CONFIG;
		}
		it->ours = !has_prog;
		if (it->ours && (rc = add_prog(s, eal, i, control_socket)))
			return rc;
		/* We hold the control socket's lock, so a steering program on
		 * the interface is a dead instance's: the driver would refuse
		 * to attach over it. */
		rc = mlv_xdp_steer_remove_stale(it->ifname, &removed, err,
						sizeof(err));
		if (rc) {
			mlv_err_log("AF_XDP steering: %s", err);
			return rc == MLV_E_INVAL ? MLV_E_CONFIG : rc;
		}
		if (removed)
			mlv_warn("AF_XDP steering: removed the program a previous "
				 "maglevd left on %s", it->ifname);
		s->n++;
	}
	return MLV_OK;
}

enum mlv_err mlv_steering_open(struct mlv_steering *s,
			       const struct mlv_config *cfg)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct mlv_steer_iface *it = &s->ifs[i];
		char err[256];
		enum mlv_err rc;

		rc = mlv_xdp_steer_open_attached(it->ifname, &it->h, err,
						 sizeof(err));
		if (rc && it->ours) {
			mlv_err_log("AF_XDP steering on %s: %s", it->ifname, err);
			return rc;
		}
		if (rc) {
			mlv_warn("AF_XDP steering on %s: %s; the xdp_prog= given "
				 "is not maglevd's steering program, so maglevd "
				 "does not manage its VIP set", it->ifname, err);
			continue;
		}
		mlv_info("AF_XDP steering on %s: program found", it->ifname);
	}
	return mlv_steering_sync(s, cfg);
}

enum mlv_err mlv_steering_sync(struct mlv_steering *s,
			       const struct mlv_config *cfg)
{
	enum mlv_err first = MLV_OK;

	for (uint32_t i = 0; i < s->n; i++) {
		struct mlv_steer_iface *it = &s->ifs[i];
		struct mlv_xdp_sync_result r;
		enum mlv_err rc;

		if (!it->h)
			continue;
		rc = mlv_xdp_steer_sync_config(it->h, cfg, &r);
		if (rc) {
			it->sync_failures++;
			mlv_err_log("AF_XDP steering on %s: VIP sync failed: %s",
				    it->ifname, mlv_xdp_steer_error(it->h));
			if (!first)
				first = rc;
			continue;
		}
		mlv_info("AF_XDP steering on %s: %u VIP(s) (+%u -%u), %u "
			 "address(es)", it->ifname, r.vips, r.vips_added,
			 r.vips_removed, r.addrs);
	}
	s->syncs++;
	s->in_place = first == MLV_OK;
	return first;
}

json_t *mlv_steering_json(const struct mlv_steering *s)
{
	json_t *obj = json_object();

	for (uint32_t i = 0; obj && i < s->n; i++) {
		const struct mlv_steer_iface *it = &s->ifs[i];
		uint64_t c[MLV_STEER_CTR__COUNT];
		json_t *o = json_pack("{s:b, s:I}", "managed", it->h != NULL,
				      "sync_failures",
				      (json_int_t)it->sync_failures);
		json_t *ctr = json_object();

		if (!o || !ctr || json_object_set_new(o, "counters", ctr) ||
		    json_object_set_new(obj, it->ifname, o)) {
			json_decref(obj);
			return NULL;
		}
		if (!it->h || mlv_xdp_steer_counters(it->h, c) != MLV_OK)
			continue;
		for (unsigned k = 0; k < MLV_STEER_CTR__COUNT; k++)
			if (json_object_set_new(ctr, mlv_xdp_steer_counter_name(k),
						json_integer((json_int_t)c[k]))) {
				json_decref(obj);
				return NULL;
			}
	}
	return obj;
}

void mlv_steering_close(struct mlv_steering *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		mlv_xdp_steer_close(s->ifs[i].h);
		s->ifs[i].h = NULL;
	}
	if (s->obj_path[0] && unlink(s->obj_path) != 0 && errno != ENOENT)
		mlv_debug("AF_XDP steering: cannot remove %s: %s", s->obj_path,
			  strerror(errno));
	s->obj_path[0] = '\0';
}
