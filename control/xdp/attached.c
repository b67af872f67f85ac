/* SPDX-License-Identifier: BSD-3-Clause */
/* The XDP program attached to an interface: see attached.h. */
#include "control/xdp/attached.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>



enum mlv_err mlv_xdp_attached_query(int ifindex, struct mlv_xdp_attached *out,
				    char *errbuf, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);
	int fd, rc;

	memset(out, 0, sizeof(*out));
	rc = bpf_xdp_query(ifindex, 0, &q);
	if (rc)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			    "ifindex %d: XDP query failed: %s", ifindex,
			    strerror(-rc));
	if (q.drv_prog_id) {
		out->prog_id = q.drv_prog_id;
		out->mode_flags = XDP_FLAGS_DRV_MODE;
	} else if (q.skb_prog_id) {
		out->prog_id = q.skb_prog_id;
		out->mode_flags = XDP_FLAGS_SKB_MODE;
	} else if (q.hw_prog_id) {
		out->prog_id = q.hw_prog_id;
		out->mode_flags = XDP_FLAGS_HW_MODE;
	} else {
		return MLV_OK;
	}

	fd = bpf_prog_get_fd_by_id(out->prog_id);
	if (fd < 0)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			    "XDP program id %u: %s", out->prog_id,
			    strerror(errno));
	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	close(fd);
	if (rc)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			    "XDP program id %u: no info: %s", out->prog_id,
			    strerror(errno));
	snprintf(out->name, sizeof(out->name), "%s", info.name);
	return MLV_OK;
}

static void close_all(struct mlv_xdp_map_want *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (want[i].fd >= 0)
			close(want[i].fd);
		want[i].fd = -1;
	}
}

/* Keep fd if it is one of the wanted maps; returns 1 if kept, 0 if not,
 * or -1 with errbuf filled on a shape mismatch. */
static int match_map(int fd, struct mlv_xdp_map_want *want, size_t n,
		     uint32_t prog_id, char *errbuf, size_t errlen)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (want[i].fd >= 0 ||
		    strncmp(info.name, want[i].name, sizeof(info.name)))
			continue;
		if (info.type != want[i].type ||
		    info.key_size != want[i].key_size ||
		    info.value_size != want[i].value_size) {
			mlv_err_msg(errbuf, errlen, MLV_E_PROTO,
			     "XDP program id %u: map %s has type %u key %u "
			     "value %u bytes, expected %u/%u/%u (a program "
			     "from another maglevd build?)", prog_id,
			     want[i].name, info.type, info.key_size,
			     info.value_size, want[i].type, want[i].key_size,
			     want[i].value_size);
			return -1;
		}
		want[i].fd = fd;
		return 1;
	}
	return 0;
}

enum mlv_err mlv_xdp_attached_maps(uint32_t prog_id,
				   struct mlv_xdp_map_want *want, size_t n,
				   char *errbuf, size_t errlen)
{
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);
	__u32 *ids = NULL;
	__u32 n_ids;
	enum mlv_err err = MLV_OK;
	int prog_fd;

	for (size_t i = 0; i < n; i++)
		want[i].fd = -1;
	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			    "XDP program id %u: %s", prog_id, strerror(errno));

	/* first call: how many maps; second: their ids */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len)) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			   "XDP program id %u: no info: %s", prog_id,
			   strerror(errno));
		goto out;
	}
	n_ids = info.nr_map_ids;
	ids = calloc(n_ids ? n_ids : 1, sizeof(*ids));
	if (!ids) {
		err = MLV_E_NOMEM;
		goto out;
	}
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = n_ids;
	info.map_ids = (__u64)(unsigned long)ids;
	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len)) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			   "XDP program id %u: no map ids: %s", prog_id,
			   strerror(errno));
		goto out;
	}
	if (info.nr_map_ids < n_ids)
		n_ids = info.nr_map_ids;

	for (__u32 i = 0; i < n_ids; i++) {
		int fd = bpf_map_get_fd_by_id(ids[i]);
		int kept;

		if (fd < 0)
			continue;   /* the map went away meanwhile */
		kept = match_map(fd, want, n, prog_id, errbuf, errlen);
		if (kept < 0) {
			close(fd);
			err = MLV_E_PROTO;
			goto out;
		}
		if (!kept)
			close(fd);
	}
	for (size_t i = 0; i < n; i++) {
		if (want[i].fd < 0) {
			err = mlv_err_msg(errbuf, errlen, MLV_E_NOT_FOUND,
				   "XDP program id %u (%s) has no map %s",
				   prog_id, info.name, want[i].name);
			goto out;
		}
	}
out:
	if (err)
		close_all(want, n);
	free(ids);
	close(prog_fd);
	return err;
}

enum mlv_err mlv_xdp_attached_detach(int ifindex, const char *prog_name,
				     int *removed, char *errbuf,
				     size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	struct mlv_xdp_attached cur;
	enum mlv_err err;
	int fd, rc;

	*removed = 0;
	err = mlv_xdp_attached_query(ifindex, &cur, errbuf, errlen);
	if (err || !cur.prog_id)
		return err;
	if (strcmp(cur.name, prog_name))
		return mlv_err_msg(errbuf, errlen, MLV_E_BUSY,
			    "ifindex %d runs XDP program %s (id %u), not %s: "
			    "left alone", ifindex, cur.name, cur.prog_id,
			    prog_name);
	fd = bpf_prog_get_fd_by_id(cur.prog_id);
	if (fd < 0)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			    "XDP program id %u: %s", cur.prog_id,
			    strerror(errno));
	opts.old_prog_fd = fd;
	rc = bpf_xdp_detach(ifindex, cur.mode_flags, &opts);
	close(fd);
	if (rc)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			    "ifindex %d: detaching %s (id %u) failed: %s",
			    ifindex, prog_name, cur.prog_id, strerror(-rc));
	*removed = 1;
	return MLV_OK;
}
