/* SPDX-License-Identifier: BSD-3-Clause */
/* The table build threads (control.build_threads, control.build_cpus;
 * control/tables/build_pool.h): started once the EAL has pinned the control
 * thread, so an unset build_cpus means the CPU(s) it runs on. */
#define _GNU_SOURCE /* cpu_set_t, pthread_getaffinity_np */
#include <pthread.h>
#include <sched.h>

#include "control/tables/build_pool.h"
#include "control/config/cpu_list.h"
#include "daemon/daemon.h"
#include "control/base/log.h"

enum mlv_err mlv_daemon_build_pool_start(struct mlv_daemon *d)
{
	const struct mlv_config *cfg = d->cfg;
	char why[96], list[256];
	cpu_set_t cpus;
	enum mlv_err err;

	if (cfg->build_cpus[0] != '\0') {
		/* validated with the config; checked again for a config built
		 * some other way */
		err = mlv_cpu_list_parse(cfg->build_cpus, &cpus, why, sizeof(why));
		if (err) {
			mlv_err_log("control.build_cpus \"%s\": %s",
				    cfg->build_cpus, why);
			return err;
		}
	} else if (pthread_getaffinity_np(pthread_self(), sizeof(cpus),
					  &cpus) != 0) {
		mlv_err_log("table build: cannot read the control thread's CPUs");
		return MLV_E_IO;
	}
	err = mlv_build_pool_new(cfg->build_threads ? cfg->build_threads : 1,
				 &cpus, &d->build_pool);
	mlv_cpu_list_format(&cpus, list, sizeof(list));
	if (err) {
		mlv_err_log("table build: cannot start %u thread(s) on CPUs "
			    "%s: %s%s", cfg->build_threads, list,
			    mlv_strerror(err), err == MLV_E_INVAL ?
			    " (no online CPU in control.build_cpus?)" : "");
		return err;
	}
	mlv_info("table build: %u thread(s) on CPUs %s%s",
		 mlv_build_pool_threads(d->build_pool), list,
		 cfg->build_cpus[0] ? "" : " (the control thread's)");
	/* more threads than CPUs only take turns: the build gets no faster */
	if ((uint32_t)CPU_COUNT(&cpus) < mlv_build_pool_threads(d->build_pool))
		mlv_warn("table build: %u threads share %d CPU(s); set "
			 "control.build_cpus to spare CPUs",
			 mlv_build_pool_threads(d->build_pool), CPU_COUNT(&cpus));
	return MLV_OK;
}

void mlv_daemon_build_pool_stop(struct mlv_daemon *d)
{
	mlv_build_pool_free(d->build_pool);
	d->build_pool = NULL;
}
