/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading, attaching and filling the check-path programs
 * (control/check_path/check_path.h). */
#include <errno.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "control/check_path/check_path.h"
#include "tc_check_path.skel.h"

struct cp_if {
	int ifindex;
	bool created_hook;      /* the clsact qdisc is ours to remove */
};

struct mlv_check_path {
	struct tc_check_path_bpf *skel;
	int out_fd, in_fd, ctr_fd;
	uint32_t n_ifs;
	struct cp_if ifs[MLV_CHECK_PATH_MAX_IFS];
};

/* "what: strerror(err)" into why. */
static void say(char *why, size_t len, const char *what, int err)
{
	if (why && len)
		snprintf(why, len, "%s: %s", what, strerror(err));
}

enum mlv_err mlv_check_path_open(struct mlv_check_path **out, char *why,
				 size_t why_len)
{
	struct mlv_check_path *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return MLV_E_NOMEM;
	cp->skel = tc_check_path_bpf__open_and_load();
	if (!cp->skel) {
		say(why, why_len, "loading the check-path programs", errno);
		free(cp);
		return MLV_E_IO;
	}
	cp->out_fd = bpf_map__fd(cp->skel->maps.cp_out);
	cp->in_fd = bpf_map__fd(cp->skel->maps.cp_in);
	cp->ctr_fd = bpf_map__fd(cp->skel->maps.cp_counters);
	*out = cp;
	return MLV_OK;
}

bool mlv_check_path_attached(const struct mlv_check_path *cp, int ifindex)
{
	for (uint32_t i = 0; i < cp->n_ifs; i++)
		if (cp->ifs[i].ifindex == ifindex)
			return true;
	return false;
}

uint32_t mlv_check_path_n_attached(const struct mlv_check_path *cp)
{
	return cp->n_ifs;
}

static int tc_attach(int ifindex, enum bpf_tc_attach_point at, int prog_fd)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = at);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts,
			    .handle = MLV_CHECK_PATH_TC_HANDLE,
			    .priority = MLV_CHECK_PATH_TC_PRIO,
			    .prog_fd = prog_fd, .flags = BPF_TC_F_REPLACE);

	return bpf_tc_attach(&hook, &opts);
}

static void tc_detach(int ifindex, enum bpf_tc_attach_point at)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = at);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts,
			    .handle = MLV_CHECK_PATH_TC_HANDLE,
			    .priority = MLV_CHECK_PATH_TC_PRIO);

	bpf_tc_detach(&hook, &opts);   /* gone already: nothing to do */
}

static void if_release(const struct cp_if *f)
{
	tc_detach(f->ifindex, BPF_TC_EGRESS);
	tc_detach(f->ifindex, BPF_TC_INGRESS);
	if (f->created_hook) {
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
				    .attach_point = BPF_TC_INGRESS |
						    BPF_TC_EGRESS);

		bpf_tc_hook_destroy(&hook);
	}
}

enum mlv_err mlv_check_path_attach(struct mlv_check_path *cp, int ifindex,
				   char *why, size_t why_len)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	char name[IF_NAMESIZE] = "?", what[IF_NAMESIZE + 16];
	struct cp_if f = { .ifindex = ifindex };
	int err;

	if (mlv_check_path_attached(cp, ifindex))
		return MLV_OK;
	if_indextoname((unsigned)ifindex, name);
	if (cp->n_ifs == MLV_CHECK_PATH_MAX_IFS) {
		if (why && why_len)
			snprintf(why, why_len, "%s: more than %u interfaces "
				 "carry data-path checks", name,
				 MLV_CHECK_PATH_MAX_IFS);
		return MLV_E_LIMIT;
	}
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		snprintf(what, sizeof(what), "%s: clsact", name);
		say(why, why_len, what, -err);
		return MLV_E_IO;
	}
	f.created_hook = err == 0;
	err = tc_attach(ifindex, BPF_TC_EGRESS,
			bpf_program__fd(cp->skel->progs.mlv_check_out));
	if (!err)
		err = tc_attach(ifindex, BPF_TC_INGRESS,
				bpf_program__fd(cp->skel->progs.mlv_check_in));
	if (err) {
		snprintf(what, sizeof(what), "%s: tc attach", name);
		say(why, why_len, what, -err);
		if_release(&f);
		return MLV_E_IO;
	}
	cp->ifs[cp->n_ifs++] = f;
	return MLV_OK;
}

enum mlv_err mlv_check_path_records(const struct mlv_health_tunnel *t,
				    struct mlv_cp_out_key *out_key,
				    struct mlv_cp_out *out,
				    struct mlv_cp_in_key *in_key,
				    struct mlv_cp_in *in)
{
	size_t alen;

	if (t->backend.family != t->vip.family ||
	    (t->backend.family != MLV_AF_INET &&
	     t->backend.family != MLV_AF_INET6))
		return MLV_E_INVAL;
	alen = t->backend.family == MLV_AF_INET ? 4 : 16;
	memset(out_key, 0, sizeof(*out_key));
	memset(out, 0, sizeof(*out));
	memset(in_key, 0, sizeof(*in_key));
	memset(in, 0, sizeof(*in));
	switch (t->forwarding) {
	case MLV_FWD_IPIP:  out->method = MLV_CP_IPIP; break;
	case MLV_FWD_GUE:   out->method = MLV_CP_GUE; break;
	case MLV_FWD_L2DSR: out->method = MLV_CP_L2DSR; break;
	default:            return MLV_E_INVAL;
	}
	memcpy(out_key->backend, t->backend.bytes, alen);
	out_key->port = htons(t->port);
	out_key->local_port = htons(t->local_port);
	out_key->family = t->backend.family;
	memcpy(out->vip, t->vip.bytes, alen);
	out->gue_port = htons(t->gue_port);
	if (t->forwarding == MLV_FWD_L2DSR && t->has_mac) {
		out->has_mac = 1;
		memcpy(out->mac, t->mac.bytes, sizeof(out->mac));
	}
	if (t->forwarding == MLV_FWD_IPIP &&
	    t->outer_source.ip.family != MLV_AF_NONE) {
		/* the outer header is of the backend's family */
		if (t->outer_source.ip.family != t->backend.family ||
		    t->outer_source.len > alen * 8)
			return MLV_E_INVAL;
		out->has_src = 1;
		out->src_len = t->outer_source.len;
		memcpy(out->src_prefix, t->outer_source.ip.bytes, alen);
	}
	memcpy(in_key->vip, t->vip.bytes, alen);
	in_key->port = htons(t->port);
	in_key->local_port = htons(t->local_port);
	in_key->family = t->vip.family;
	memcpy(in->backend, t->backend.bytes, alen);
	return MLV_OK;
}

enum mlv_err mlv_check_path_add(struct mlv_check_path *cp,
				const struct mlv_health_tunnel *t, char *why,
				size_t why_len)
{
	struct mlv_cp_out_key ok;
	struct mlv_cp_out ov;
	struct mlv_cp_in_key ik;
	struct mlv_cp_in iv;
	enum mlv_err err = mlv_check_path_records(t, &ok, &ov, &ik, &iv);

	if (err) {
		bool one = t->backend.family == t->vip.family &&
			   (t->vip.family == MLV_AF_INET ||
			    t->vip.family == MLV_AF_INET6);

		if (why && why_len)
			snprintf(why, why_len, "%s",
				 one && t->forwarding == MLV_FWD_IPIP
				 ? "the ipip source prefix is not of the "
				   "backend's family"
				 : "the backend and the VIP are not of one "
				   "family");
		return err;
	}
	if (bpf_map_update_elem(cp->out_fd, &ok, &ov, BPF_ANY)) {
		say(why, why_len, "cp_out", errno);
		return MLV_E_IO;
	}
	if (bpf_map_update_elem(cp->in_fd, &ik, &iv, BPF_ANY)) {
		say(why, why_len, "cp_in", errno);
		bpf_map_delete_elem(cp->out_fd, &ok);
		return MLV_E_IO;
	}
	return MLV_OK;
}

void mlv_check_path_remove(struct mlv_check_path *cp,
			   const struct mlv_health_tunnel *t)
{
	struct mlv_cp_out_key ok;
	struct mlv_cp_out ov;
	struct mlv_cp_in_key ik;
	struct mlv_cp_in iv;

	if (mlv_check_path_records(t, &ok, &ov, &ik, &iv))
		return;
	bpf_map_delete_elem(cp->out_fd, &ok);
	bpf_map_delete_elem(cp->in_fd, &ik);
}

void mlv_check_path_counters(const struct mlv_check_path *cp,
			     uint64_t out[MLV_CP_CTR__COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	memset(out, 0, sizeof(uint64_t) * MLV_CP_CTR__COUNT);
	if (ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return;
	for (uint32_t c = 0; c < MLV_CP_CTR__COUNT; c++) {
		if (bpf_map_lookup_elem(cp->ctr_fd, &c, v))
			continue;
		for (int i = 0; i < ncpu; i++)
			out[c] += v[i];
	}
	free(v);
}

const char *mlv_check_path_counter_name(enum mlv_cp_counter c)
{
	static const char *const names[] = {
#define MLV_CP_CTR_NAME(id, name, help) [MLV_CP_CTR_##id] = name,
		MLV_CP_COUNTERS(MLV_CP_CTR_NAME)
#undef MLV_CP_CTR_NAME
	};

	return (unsigned)c < MLV_CP_CTR__COUNT ? names[c] : "unknown";
}

void mlv_check_path_close(struct mlv_check_path *cp)
{
	if (!cp)
		return;
	for (uint32_t i = 0; i < cp->n_ifs; i++)
		if_release(&cp->ifs[i]);
	tc_check_path_bpf__destroy(cp->skel);
	free(cp);
}
