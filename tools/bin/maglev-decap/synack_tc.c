/* SPDX-License-Identifier: BSD-3-Clause */
/* The SYN-ACK clamp's tc egress program from userspace: see synack_tc.h. */
#include "tools/bin/maglev-decap/synack_tc.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp_decap.skel.h"

/* libbpf prints the kernel's extack message of every failed netlink
 * request; "no qdisc" and "qdisc exists" are expected answers here. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static void hook_init(struct bpf_tc_hook *hook, int ifindex)
{
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = BPF_TC_EGRESS;
}

static void opts_init(struct bpf_tc_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->sz = sizeof(*opts);
	opts->handle = MLV_DECAP_TC_HANDLE;
	opts->priority = MLV_DECAP_TC_PRIO;
}

/* Is program id ours (by name)? */
static int prog_is_ours(uint32_t id)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), ours;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	ours = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       !strcmp(info.name, MLV_DECAP_TC_PROG_NAME);
	close(fd);
	return ours;
}

enum mlv_err mlv_decap_tc_query(int ifindex, uint32_t *prog_id,
				char *errbuf, size_t errlen)
{
	struct bpf_tc_hook hook;
	struct bpf_tc_opts opts;
	int rc;

	*prog_id = 0;
	hook_init(&hook, ifindex);
	opts_init(&opts);
	{
		libbpf_print_fn_t old = libbpf_set_print(quiet);

		rc = bpf_tc_query(&hook, &opts);
		libbpf_set_print(old);
	}
	/* no clsact qdisc answers -EINVAL, no filter -ENOENT */
	if (rc == -ENOENT || rc == -EINVAL)
		return MLV_OK;
	if (rc)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			   "querying tc egress: %s", strerror(-rc));
	if (!prog_is_ours(opts.prog_id))
		return mlv_err_msg(errbuf, errlen, MLV_E_BUSY,
			   "tc egress handle %#x priority %#x holds program "
			   "id %u, not %s", MLV_DECAP_TC_HANDLE,
			   MLV_DECAP_TC_PRIO, opts.prog_id,
			   MLV_DECAP_TC_PROG_NAME);
	*prog_id = opts.prog_id;
	return MLV_OK;
}

enum mlv_err mlv_decap_tc_attach(int ifindex, const struct mlv_decap_maps *maps,
				 char *errbuf, size_t errlen)
{
	struct xdp_decap_bpf *skel;
	struct bpf_tc_hook hook;
	struct bpf_tc_opts opts;
	enum mlv_err err;
	uint32_t cur;
	int rc;

	err = mlv_decap_tc_query(ifindex, &cur, errbuf, errlen);
	if (err)
		return err;
	skel = xdp_decap_bpf__open();
	if (!skel)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			   "opening the egress program failed: %s",
			   strerror(errno));
	/* the XDP program of this object is already attached; only the
	 * egress program is loaded, over that program's maps */
	bpf_program__set_autoload(skel->progs.mlv_xdp_decap, false);
	const struct { struct bpf_map *map; int fd; } reuse[] = {
		{ skel->maps.decap_addrs, maps->addrs_fd },
		{ skel->maps.decap_gue_ports, maps->ports_fd },
		{ skel->maps.decap_sources, maps->sources_fd },
		{ skel->maps.decap_stats, maps->stats_fd },
		{ skel->maps.decap_syn_mss, maps->syn_mss_fd },
		{ skel->maps.decap_mss_cfg, maps->mss_cfg_fd },
	};
	rc = 0;
	for (size_t i = 0; !rc && i < sizeof(reuse) / sizeof(reuse[0]); i++)
		rc = bpf_map__reuse_fd(reuse[i].map, reuse[i].fd);
	if (!rc)
		rc = xdp_decap_bpf__load(skel);
	if (rc) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			  "loading the egress program failed: %s",
			  strerror(-rc));
		goto out;
	}
	hook_init(&hook, ifindex);
	{
		libbpf_print_fn_t old = libbpf_set_print(quiet);

		rc = bpf_tc_hook_create(&hook);
		libbpf_set_print(old);
	}
	if (rc && rc != -EEXIST) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			  "creating the clsact qdisc failed: %s",
			  strerror(-rc));
		goto out;
	}
	opts_init(&opts);
	opts.prog_fd = bpf_program__fd(skel->progs.mlv_tc_synack);
	opts.flags = cur ? BPF_TC_F_REPLACE : 0;
	rc = bpf_tc_attach(&hook, &opts);
	if (rc)
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			  "attaching the egress program failed: %s",
			  strerror(-rc));
out:
	/* the filter keeps the program (and the maps) alive */
	xdp_decap_bpf__destroy(skel);
	return err;
}

enum mlv_err mlv_decap_tc_detach(int ifindex, int *removed, char *errbuf,
				 size_t errlen)
{
	struct bpf_tc_hook hook;
	struct bpf_tc_opts opts;
	enum mlv_err err;
	uint32_t cur;
	int rc;

	*removed = 0;
	err = mlv_decap_tc_query(ifindex, &cur, errbuf, errlen);
	if (err || !cur)
		return err;
	hook_init(&hook, ifindex);
	opts_init(&opts);
	rc = bpf_tc_detach(&hook, &opts);
	if (rc && rc != -ENOENT)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			   "detaching the egress program failed: %s",
			   strerror(-rc));
	*removed = rc == 0;
	return MLV_OK;
}
