/* SPDX-License-Identifier: BSD-3-Clause */
/* AF_XDP steering, control side: see steering.h. */
#include "control/steering/steering.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "control/xdp/map_sync.h"
#include "dataplane/bpf/steer/structs.h"
#include "control/xdp/attached.h"
#include "xdp_steer.skel.h"

struct mlv_xdp_steer {
	int ifindex;
	char ifname[IF_NAMESIZE];
	struct xdp_steer_bpf *skel;   /* set when we loaded and attached it */
	uint32_t attach_flags;        /* mode flags we attached with */
	int own_fds;                  /* the fds below are ours to close */
	int xsks_fd, vip_fd, addr_fd, stats_fd, cfg_fd;
	char err[256];
};

static const char *const counter_names[] = {
#define MLV_STEER_CTR_NAME(name, metric, help) metric,
	MLV_STEER_COUNTERS(MLV_STEER_CTR_NAME)
#undef MLV_STEER_CTR_NAME
};

static const char *const counter_help[] = {
#define MLV_STEER_CTR_HELP(name, metric, help) help,
	MLV_STEER_COUNTERS(MLV_STEER_CTR_HELP)
#undef MLV_STEER_CTR_HELP
};



static enum mlv_err new_handle(const char *ifname, struct mlv_xdp_steer **out,
			       char *errbuf, size_t errlen)
{
	struct mlv_xdp_steer *s;
	unsigned idx;

	*out = NULL;
	if (!ifname || strlen(ifname) >= IF_NAMESIZE)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
			   "bad interface name '%s'", ifname ? ifname : "");
	idx = if_nametoindex(ifname);
	if (!idx)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL, "%s: no such interface",
			   ifname);
	s = calloc(1, sizeof(*s));
	if (!s)
		return MLV_E_NOMEM;
	s->ifindex = (int)idx;
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname);
	s->xsks_fd = s->vip_fd = s->addr_fd = s->stats_fd = s->cfg_fd = -1;
	*out = s;
	return MLV_OK;
}

enum mlv_err mlv_xdp_steer_open_attached(const char *ifname,
					 struct mlv_xdp_steer **out,
					 char *errbuf, size_t errlen)
{
	struct mlv_xdp_map_want want[] = {
		{ "xsks_map", BPF_MAP_TYPE_XSKMAP, sizeof(__u32),
		  sizeof(__u32), -1 },
		{ "vip_map", BPF_MAP_TYPE_HASH, sizeof(struct mlv_steer_vip_key),
		  sizeof(struct mlv_steer_vip_val), -1 },
		{ "vip_addrs", BPF_MAP_TYPE_HASH,
		  sizeof(struct mlv_bpf_addr_key),
		  sizeof(struct mlv_steer_addr_val), -1 },
		{ "steer_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32),
		  sizeof(__u64), -1 },
		{ "steer_cfg", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		  sizeof(struct mlv_steer_cfg), -1 },
	};
	struct mlv_xdp_attached cur;
	struct mlv_xdp_steer *s;
	char why[200] = "";
	enum mlv_err err;

	*out = NULL;
	err = new_handle(ifname, &s, errbuf, errlen);
	if (err)
		return err;
	err = mlv_xdp_attached_query(s->ifindex, &cur, why, sizeof(why));
	if (err) {
		mlv_err_msg(errbuf, errlen, err, "%s: %s", ifname, why);
		goto fail;
	}
	if (!cur.prog_id) {
		err = mlv_err_msg(errbuf, errlen, MLV_E_NOT_FOUND,
			  "%s: no XDP program attached (was net_af_xdp given "
			  "xdp_prog=, and are its queues set up?)", ifname);
		goto fail;
	}
	if (strcmp(cur.name, MLV_XDP_STEER_PROG_NAME)) {
		err = mlv_err_msg(errbuf, errlen, MLV_E_BUSY,
			  "%s: the attached XDP program is %s (id %u), not "
			  "maglevd's %s", ifname, cur.name, cur.prog_id,
			  MLV_XDP_STEER_PROG_NAME);
		goto fail;
	}
	err = mlv_xdp_attached_maps(cur.prog_id, want,
				    sizeof(want) / sizeof(want[0]), why,
				    sizeof(why));
	if (err) {
		mlv_err_msg(errbuf, errlen, err, "%s: %s", ifname, why);
		goto fail;
	}
	s->own_fds = 1;
	s->xsks_fd = want[0].fd;
	s->vip_fd = want[1].fd;
	s->addr_fd = want[2].fd;
	s->stats_fd = want[3].fd;
	s->cfg_fd = want[4].fd;
	*out = s;
	return MLV_OK;
fail:
	free(s);
	return err;
}

static uint32_t mode_flags(enum mlv_xdp_mode mode)
{
	switch (mode) {
	case MLV_XDP_MODE_NATIVE:
		return XDP_FLAGS_DRV_MODE;
	case MLV_XDP_MODE_GENERIC:
		return XDP_FLAGS_SKB_MODE;
	case MLV_XDP_MODE_AUTO:
		break;
	}
	return 0;
}

enum mlv_err mlv_xdp_steer_attach(const char *ifname, enum mlv_xdp_mode mode,
				  struct mlv_xdp_steer **out,
				  char *errbuf, size_t errlen)
{
	struct mlv_xdp_steer *s;
	enum mlv_err err;
	int rc;

	*out = NULL;
	if (mode != MLV_XDP_MODE_AUTO && mode != MLV_XDP_MODE_NATIVE &&
	    mode != MLV_XDP_MODE_GENERIC)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL, "bad XDP mode %d",
			   (int)mode);
	err = new_handle(ifname, &s, errbuf, errlen);
	if (err)
		return err;
	s->skel = xdp_steer_bpf__open_and_load();
	if (!s->skel) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			  "%s: loading the steering program failed: %s",
			  ifname, strerror(errno));
		goto fail;
	}
	s->attach_flags = mode_flags(mode);
	rc = bpf_xdp_attach(s->ifindex,
			    bpf_program__fd(s->skel->progs.mlv_xdp_steer),
			    XDP_FLAGS_UPDATE_IF_NOEXIST | s->attach_flags,
			    NULL);
	if (rc) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			  "%s: attaching the steering program failed: %s%s",
			  ifname, strerror(-rc),
			  rc == -EBUSY || rc == -EEXIST ?
			  " (another XDP program is attached)" : "");
		goto fail;
	}
	if (!s->attach_flags) {
		/* remember the mode the kernel chose: detaching names it */
		struct mlv_xdp_attached cur;

		if (!mlv_xdp_attached_query(s->ifindex, &cur, NULL, 0))
			s->attach_flags = cur.mode_flags;
	}
	s->xsks_fd = bpf_map__fd(s->skel->maps.xsks_map);
	s->vip_fd = bpf_map__fd(s->skel->maps.vip_map);
	s->addr_fd = bpf_map__fd(s->skel->maps.vip_addrs);
	s->stats_fd = bpf_map__fd(s->skel->maps.steer_stats);
	s->cfg_fd = bpf_map__fd(s->skel->maps.steer_cfg);
	*out = s;
	return MLV_OK;
fail:
	xdp_steer_bpf__destroy(s->skel);
	free(s);
	return err;
}

static int cmp_vip_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct mlv_steer_vip_key));
}

static int cmp_addr_key(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct mlv_bpf_addr_key));
}

/* What the two maps should hold: the distinct VIPs, and their distinct
 * addresses with how many VIPs use each. Values parallel the keys. */
struct steer_records {
	struct mlv_steer_vip_key *vip_keys;
	struct mlv_steer_vip_val *vip_vals;     /* all zero */
	struct mlv_bpf_addr_key *addr_keys;
	struct mlv_steer_addr_val *addr_vals;
	size_t n_vips, n_addrs;
};

static void free_records(struct steer_records *r)
{
	free(r->vip_keys);
	free(r->vip_vals);
	free(r->addr_keys);
	free(r->addr_vals);
}

/* vips[i] as a map key; MLV_E_INVAL (reason in s->err) if it cannot be
 * steered. */
static enum mlv_err vip_key(struct mlv_xdp_steer *s,
			    const struct mlv_xdp_vip *v,
			    struct mlv_steer_vip_key *k)
{
	char text[MLV_IP_STRLEN];

	if ((v->address.family != MLV_AF_INET &&
	     v->address.family != MLV_AF_INET6) ||
	    (v->protocol != IPPROTO_TCP && v->protocol != IPPROTO_UDP))
		return mlv_err_msg(s->err, sizeof(s->err), MLV_E_INVAL,
			   "%s: VIP %s port %u protocol %u: only IPv4/IPv6 "
			   "TCP/UDP VIPs can be steered", s->ifname,
			   v->address.family ?
			   mlv_ip_format(&v->address, text, sizeof(text)) :
			   "(no address)", v->port, v->protocol);
	memset(k, 0, sizeof(*k));
	k->family = v->address.family == MLV_AF_INET ?
		MLV_BPF_FAMILY_V4 : MLV_BPF_FAMILY_V6;
	k->proto = v->protocol;
	/* a range or `any` VIP: port 0 steers every port of the address
	 * and protocol (the program's second look-up) */
	k->port = v->port_last != 0 && v->port_last != v->port ? 0 :
		  htons(v->port);
	memcpy(k->addr, v->address.bytes,
	       v->address.family == MLV_AF_INET ? 4 : 16);
	return MLV_OK;
}

static enum mlv_err build_records(struct mlv_xdp_steer *s,
				  const struct mlv_xdp_vip *vips, size_t n,
				  struct steer_records *r)
{
	size_t i, cap = n ? n : 1;
	enum mlv_err err;

	memset(r, 0, sizeof(*r));
	r->vip_keys = calloc(cap, sizeof(*r->vip_keys));
	r->vip_vals = calloc(cap, sizeof(*r->vip_vals));
	r->addr_keys = calloc(cap, sizeof(*r->addr_keys));
	r->addr_vals = calloc(cap, sizeof(*r->addr_vals));
	if (!r->vip_keys || !r->vip_vals || !r->addr_keys || !r->addr_vals)
		return MLV_E_NOMEM;
	for (i = 0; i < n; i++) {
		err = vip_key(s, &vips[i], &r->vip_keys[i]);
		if (err)
			return err;
	}
	/* distinct VIPs, so the per-address counts are right */
	qsort(r->vip_keys, n, sizeof(*r->vip_keys), cmp_vip_key);
	for (i = 0; i < n; i++)
		if (!r->n_vips || cmp_vip_key(&r->vip_keys[i],
					      &r->vip_keys[r->n_vips - 1]))
			r->vip_keys[r->n_vips++] = r->vip_keys[i];

	for (i = 0; i < r->n_vips; i++) {
		r->addr_keys[i].family = r->vip_keys[i].family;
		memcpy(r->addr_keys[i].addr, r->vip_keys[i].addr, 16);
	}
	qsort(r->addr_keys, r->n_vips, sizeof(*r->addr_keys), cmp_addr_key);
	for (i = 0; i < r->n_vips; i++) {
		if (r->n_addrs && !cmp_addr_key(&r->addr_keys[i],
						&r->addr_keys[r->n_addrs - 1])) {
			r->addr_vals[r->n_addrs - 1].n_vips++;
			continue;
		}
		r->addr_keys[r->n_addrs] = r->addr_keys[i];
		r->addr_vals[r->n_addrs].n_vips = 1;
		r->n_addrs++;
	}
	/* an address answers pings if any of its VIPs says so */
	for (i = 0; i < n; i++) {
		struct mlv_bpf_addr_key ak = { 0 }, *hit;
		struct mlv_steer_vip_key vk;

		if (!vips[i].echo_reply)
			continue;
		vip_key(s, &vips[i], &vk);   /* valid: checked above */
		ak.family = vk.family;
		memcpy(ak.addr, vk.addr, sizeof(ak.addr));
		hit = bsearch(&ak, r->addr_keys, r->n_addrs, sizeof(ak),
			      cmp_addr_key);
		if (hit)
			r->addr_vals[hit - r->addr_keys].flags |= MLV_STEER_ADDR_ECHO;
	}
	return MLV_OK;
}

/* steer_cfg's flags. */
static enum mlv_err set_cfg(struct mlv_xdp_steer *s, uint32_t flags)
{
	struct mlv_steer_cfg v = { .flags = flags };
	uint32_t zero = 0;

	if (bpf_map_update_elem(s->cfg_fd, &zero, &v, BPF_ANY) == 0)
		return MLV_OK;
	return mlv_err_msg(s->err, sizeof(s->err), mlv_err_from_errno(errno),
			   "%s: updating steer_cfg: %s", s->ifname,
			   strerror(errno));
}

enum mlv_err mlv_xdp_steer_sync(struct mlv_xdp_steer *s,
				const struct mlv_xdp_vip *vips, size_t n,
				struct mlv_xdp_sync_result *res)
{
	struct mlv_map_sync_stats vst, ast;
	struct steer_records r;
	bool wild = false;
	enum mlv_err err;

	s->err[0] = '\0';
	if (n && !vips)
		return mlv_err_msg(s->err, sizeof(s->err), MLV_E_INVAL,
			   "%s: no VIP array", s->ifname);
	err = build_records(s, vips, n, &r);
	if (err)
		goto out;
	/* addresses first: fragments of a new VIP are steered as soon as
	 * its first TCP/UDP packet is */
	err = mlv_map_sync(s->addr_fd, sizeof(*r.addr_keys),
			   sizeof(*r.addr_vals), r.addr_keys, r.addr_vals,
			   r.n_addrs, &ast);
	if (err) {
		mlv_err_msg(s->err, sizeof(s->err), err, "%s: updating vip_addrs "
		    "(%zu addresses): %s", s->ifname, r.n_addrs,
		    mlv_strerror(err));
		goto out;
	}
	/* the port-0 look-up on before port-0 keys come, off after they
	 * went: a frame never misses a VIP it is for */
	for (size_t i = 0; i < r.n_vips && !wild; i++)
		wild = r.vip_keys[i].port == 0;
	if (wild && (err = set_cfg(s, MLV_STEER_CFG_WILD)))
		goto out;
	err = mlv_map_sync(s->vip_fd, sizeof(*r.vip_keys),
			   sizeof(*r.vip_vals), r.vip_keys, r.vip_vals,
			   r.n_vips, &vst);
	if (err) {
		mlv_err_msg(s->err, sizeof(s->err), err, "%s: updating vip_map "
		    "(%zu VIPs): %s", s->ifname, r.n_vips, mlv_strerror(err));
		goto out;
	}
	if (!wild && (err = set_cfg(s, 0)))
		goto out;
	if (res) {
		res->vips = (uint32_t)r.n_vips;
		res->vips_added = vst.added;
		res->vips_removed = vst.removed;
		res->addrs = (uint32_t)r.n_addrs;
		res->addrs_added = ast.added;
		res->addrs_removed = ast.removed;
	}
out:
	free_records(&r);
	return err;
}

enum mlv_err mlv_xdp_steer_sync_config(struct mlv_xdp_steer *s,
				       const struct mlv_config *cfg,
				       struct mlv_xdp_sync_result *res)
{
	struct mlv_xdp_vip *vips;
	enum mlv_err err;

	vips = calloc(cfg->n_vips ? cfg->n_vips : 1, sizeof(*vips));
	if (!vips)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < cfg->n_vips; i++) {
		vips[i].address = cfg->vips[i].address;
		vips[i].port = cfg->vips[i].port;
		vips[i].port_last = cfg->vips[i].port_last;
		vips[i].protocol = cfg->vips[i].protocol;
		vips[i].echo_reply = cfg->vips[i].icmp_echo == MLV_ECHO_REPLY;
	}
	err = mlv_xdp_steer_sync(s, vips, cfg->n_vips, res);
	free(vips);
	return err;
}

enum mlv_err mlv_xdp_steer_counters(const struct mlv_xdp_steer *s,
				    uint64_t out[MLV_STEER_CTR__COUNT])
{
	return mlv_percpu_sum(s->stats_fd, MLV_STEER_CTR__COUNT, out);
}

const char *mlv_xdp_steer_counter_name(unsigned c)
{
	return c < MLV_STEER_CTR__COUNT ? counter_names[c] : "?";
}

const char *mlv_xdp_steer_counter_help(unsigned c)
{
	return c < MLV_STEER_CTR__COUNT ? counter_help[c] : "?";
}

int mlv_xdp_steer_xsks_map_fd(const struct mlv_xdp_steer *s)
{
	return s->xsks_fd;
}

const char *mlv_xdp_steer_error(const struct mlv_xdp_steer *s)
{
	return s->err;
}

enum mlv_err mlv_xdp_steer_write_object(const char *path, char *errbuf,
					size_t errlen)
{
	char tmp[PATH_MAX];
	const uint8_t *bytes;
	size_t size, done = 0;
	int fd;

	bytes = xdp_steer_bpf__elf_bytes(&size);
	if (!path || snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    (int)sizeof(tmp))
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL, "bad object path");
	fd = mkstemp(tmp);
	if (fd < 0)
		return mlv_err_msg(errbuf, errlen, MLV_E_IO, "%s: %s", tmp,
			   strerror(errno));
	while (done < size) {
		ssize_t w = write(fd, bytes + done, size - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto io_fail;
		done += (size_t)w;
	}
	if (fchmod(fd, 0644) || close(fd)) {
		fd = -1;
		goto io_fail;
	}
	if (rename(tmp, path)) {
		fd = -1;
		goto io_fail;
	}
	return MLV_OK;
io_fail:
	mlv_err_msg(errbuf, errlen, MLV_E_IO, "writing %s: %s", path,
	    strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return MLV_E_IO;
}

enum mlv_err mlv_xdp_steer_remove_stale(const char *ifname, int *removed,
					char *errbuf, size_t errlen)
{
	char why[200] = "";
	enum mlv_err err;
	unsigned idx;

	*removed = 0;
	idx = ifname ? if_nametoindex(ifname) : 0;
	if (!idx)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL, "%s: no such interface",
			   ifname ? ifname : "");
	err = mlv_xdp_attached_detach((int)idx, MLV_XDP_STEER_PROG_NAME,
				      removed, why, sizeof(why));
	if (err)
		mlv_err_msg(errbuf, errlen, err, "%s: %s", ifname, why);
	return err;
}

enum mlv_err mlv_xdp_steer_vdev_iface(const char *arg, char *ifname,
				      size_t ifname_len, int *has_prog)
{
	static const char driver[] = "net_af_xdp";
	const char *p, *iface = NULL;
	size_t iface_len = 0;

	*has_prog = 0;
	if (!strncmp(arg, "--vdev=", 7))
		arg += 7;
	if (strncmp(arg, driver, sizeof(driver) - 1))
		return MLV_E_NOT_FOUND;
	/* DPDK's kvargs: the device name, then ",key=value" pairs */
	for (p = strchr(arg, ','); p; p = strchr(p, ',')) {
		const char *key = ++p;
		size_t len = strcspn(key, ",");

		if (!strncmp(key, "iface=", 6)) {
			iface = key + 6;
			iface_len = len - 6;
		} else if (!strncmp(key, "xdp_prog=", 9)) {
			*has_prog = 1;
		}
	}
	if (!iface || !iface_len || iface_len >= ifname_len ||
	    iface_len >= IF_NAMESIZE)
		return MLV_E_INVAL;
	memcpy(ifname, iface, iface_len);
	ifname[iface_len] = '\0';
	return MLV_OK;
}

void mlv_xdp_steer_close(struct mlv_xdp_steer *s)
{
	if (!s)
		return;
	if (s->skel) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
			    .old_prog_fd = bpf_program__fd(
				    s->skel->progs.mlv_xdp_steer));

		/* only our program, in the mode we attached it */
		bpf_xdp_detach(s->ifindex, s->attach_flags, &opts);
		xdp_steer_bpf__destroy(s->skel);
	}
	if (s->own_fds) {
		close(s->xsks_fd);
		close(s->vip_fd);
		close(s->addr_fd);
		close(s->stats_fd);
		close(s->cfg_fd);
	}
	free(s);
}
