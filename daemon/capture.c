/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDK's pdump server for dpdk-dumpcap (daemon/capture.h). */
#include "daemon/capture.h"

#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_pdump.h>

#include "control/base/log.h"

/* The EAL's --file-prefix: the last part of its runtime directory
 * (/var/run/dpdk/PREFIX for root), which is what a secondary process
 * names to find this one. */
static const char *file_prefix(void)
{
	const char *dir = rte_eal_get_runtime_dir();
	const char *slash = dir ? strrchr(dir, '/') : NULL;

	if (!dir || !*dir)
		return "rte";
	return slash ? slash + 1 : dir;
}

enum mlv_err mlv_capture_open(struct mlv_capture *c,
			      const struct mlv_eal_args *eal,
			      char *why, size_t len)
{
	const char *single;

	c->server = false;
	/* argv_orig: rte_eal_init reorders argv and puts the program name
	 * over one of the arguments */
	single = mlv_eal_args_single_process(eal->argv_orig + 1,
					     eal->argc - 1);
	if (single) {
		mlv_info("packet capture: unavailable, %s keeps DPDK "
			 "single-process and dpdk-dumpcap needs to attach as a "
			 "secondary process (docs/operations.md, \"Packet "
			 "capture\")", single);
		return MLV_OK;
	}
	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		mlv_info("packet capture: unavailable, maglevd is not DPDK's "
			 "primary process (--proc-type)");
		return MLV_OK;
	}
	if (rte_pdump_init() != 0)
		return mlv_err_msg(why, len, MLV_E_DPDK, "rte_pdump_init: %s",
				   rte_strerror(rte_errno));
	c->server = true;
	mlv_info("packet capture: available to dpdk-dumpcap --file-prefix=%s "
		 "-i DEVICE (a port's device, RX and TX)", file_prefix());
	return MLV_OK;
}

void mlv_capture_close(struct mlv_capture *c)
{
	if (!c->server)
		return;
	/* 0 in DPDK 22.11 whatever happens; checked all the same */
	if (rte_pdump_uninit() != 0)
		mlv_warn("packet capture: rte_pdump_uninit: %s",
			 rte_strerror(rte_errno));
	c->server = false;
}
