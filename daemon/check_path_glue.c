/* SPDX-License-Identifier: BSD-3-Clause */
/* Data-path health checks in the daemon (docs/health.md, "Checks through
 * the data path"): the health engine's tunnel callbacks. A check's
 * interface is the one the kernel's route to its backend leaves by, looked
 * up for every check (one rtnetlink request the kernel answers at once),
 * so a route that moves takes the checks with it; the programs are
 * attached to each such interface the first time a check leaves by it
 * and stay until the daemon stops. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "control/base/log.h"

/* After the programs failed to load, the next attempt waits this long:
 * a load costs milliseconds, and the reason does not change per check. */
#define CHECK_PATH_RETRY_MS 10000u

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static enum mlv_err ensure_loaded(struct mlv_daemon *d, char *why,
				  size_t len)
{
	enum mlv_err err;

	if (d->check_path)
		return MLV_OK;
	if (d->check_path_retry_ms && now_ms() < d->check_path_retry_ms) {
		snprintf(why, len, "%s", d->check_path_error);
		return MLV_E_IO;
	}
	err = mlv_check_path_open(&d->check_path, d->check_path_error,
				  sizeof(d->check_path_error));
	if (err) {
		if (err == MLV_E_NOMEM)
			snprintf(d->check_path_error,
				 sizeof(d->check_path_error), "%s",
				 mlv_strerror(err));
		mlv_warn("health: data-path checks cannot run: %s",
			 d->check_path_error);
		d->check_path_retry_ms = now_ms() + CHECK_PATH_RETRY_MS;
		snprintf(why, len, "%s", d->check_path_error);
		return err;
	}
	d->check_path_retry_ms = 0;
	return MLV_OK;
}

static enum mlv_err tunnel_open(void *ctx, const struct mlv_health_tunnel *t,
				char *why, size_t len)
{
	struct mlv_daemon *d = ctx;
	char addr[MLV_IP_STRLEN], name[IF_NAMESIZE] = "?";
	struct mlv_ip via;
	enum mlv_err err;
	int dev = 0;

	if ((err = ensure_loaded(d, why, len)))
		return err;
	if (!d->check_rtnl.req && mlv_rtnl_open_requests(&d->check_rtnl)) {
		snprintf(why, len, "rtnetlink: %s", strerror(errno));
		return MLV_E_IO;
	}
	err = mlv_rtnl_route(&d->check_rtnl, &t->backend, 0, &via, &dev);
	if (err) {
		snprintf(why, len, err == MLV_E_NOT_FOUND ?
			 "no route to the backend" : "route look-up failed");
		return err;
	}
	if (!mlv_check_path_attached(d->check_path, dev)) {
		err = mlv_check_path_attach(d->check_path, dev, why, len);
		if (err) {
			mlv_warn("health: data-path checks: %s", why);
			return err;
		}
		if_indextoname((unsigned)dev, name);
		mlv_ip_format(&t->backend, addr, sizeof(addr));
		mlv_info("health: data-path checks leave by %s (first: backend "
			 "%s)", name, addr);
	}
	return mlv_check_path_add(d->check_path, t, why, len);
}

static void tunnel_close(void *ctx, const struct mlv_health_tunnel *t)
{
	struct mlv_daemon *d = ctx;

	if (d->check_path)
		mlv_check_path_remove(d->check_path, t);
}

struct mlv_health_tunnel_ops mlv_daemon_check_path_ops(struct mlv_daemon *d)
{
	return (struct mlv_health_tunnel_ops){
		.open = tunnel_open,
		.close = tunnel_close,
		.ctx = d,
	};
}

void mlv_daemon_check_path_close(struct mlv_daemon *d)
{
	mlv_check_path_close(d->check_path);
	d->check_path = NULL;
	mlv_rtnl_close(&d->check_rtnl);
}
