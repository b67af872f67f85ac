/* SPDX-License-Identifier: BSD-3-Clause */
/* The backend decapsulator from userspace: see decap_ctl.h. */
#include "tools/bin/maglev-decap/decap_ctl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>

#include "dataplane/bpf/common/consts.h"
#include "dataplane/bpf/decap/structs.h"
#include "control/xdp/map_sync.h"
#include "control/xdp/attached.h"
#include "tools/bin/maglev-decap/synack_tc.h"
#include "xdp_decap.skel.h"

static const char *const counter_names[] = {
#define MLV_DECAP_CTR_NAME(name, text, help) text,
	MLV_DECAP_COUNTERS(MLV_DECAP_CTR_NAME)
#undef MLV_DECAP_CTR_NAME
};

static const char *const counter_help[] = {
#define MLV_DECAP_CTR_HELP(name, text, help) help,
	MLV_DECAP_COUNTERS(MLV_DECAP_CTR_HELP)
#undef MLV_DECAP_CTR_HELP
};


const char *mlv_decap_counter_name(unsigned c)
{
	return c < MLV_DECAP_CTR__COUNT ? counter_names[c] : "?";
}

const char *mlv_decap_counter_help(unsigned c)
{
	return c < MLV_DECAP_CTR__COUNT ? counter_help[c] : "?";
}

/* decap_sources keys for cfg's sources, into keys (n_sources of them). */
static enum mlv_err source_keys(const struct mlv_decap_config *cfg,
				struct mlv_decap_src_key *keys,
				char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < cfg->n_sources; i++) {
		const struct mlv_ip_prefix *p = &cfg->sources[i];
		unsigned max = p->ip.family == MLV_AF_INET ? 32 : 128;

		if (p->ip.family != MLV_AF_INET && p->ip.family != MLV_AF_INET6)
			return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				   "source %zu has no family", i);
		if (p->len > max)
			return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				   "source %zu: prefix length %u over %u", i,
				   p->len, max);
		keys[i].prefixlen = MLV_DECAP_SRC_FAMILY_BITS + p->len;
		keys[i].family = p->ip.family == MLV_AF_INET ?
			MLV_BPF_FAMILY_V4 : MLV_BPF_FAMILY_V6;
		/* the trie compares only prefixlen bits; the rest are zeroed
		 * so status reads back the prefix as given */
		for (unsigned bit = 0; bit < p->len; bit++)
			keys[i].addr[bit / 8] |= p->ip.bytes[bit / 8] &
				(uint8_t)(0x80u >> (bit % 8));
	}
	return MLV_OK;
}

enum mlv_err mlv_decap_configure(const struct mlv_decap_maps *maps,
				 const struct mlv_decap_config *cfg,
				 char *errbuf, size_t errlen)
{
	struct mlv_bpf_addr_key *addrs = NULL;
	struct mlv_decap_addr_val *addr_vals = NULL;   /* all zero */
	struct mlv_decap_port_key *ports = NULL;
	struct mlv_decap_port_val *port_vals = NULL;   /* all zero */
	struct mlv_decap_src_key *srcs = NULL;
	struct mlv_decap_src_val *src_vals = NULL;     /* all zero */
	struct mlv_decap_mss_cfg mss_cfg = { .path_mtu = cfg->path_mtu };
	struct mlv_decap_sc_cfg sc_cfg = { 0 };
	__u32 zero = 0;
	enum mlv_err err;

	if (cfg->n_addrs > MLV_DECAP_MAX_ADDRS)
		return mlv_err_msg(errbuf, errlen, MLV_E_LIMIT,
			   "%zu addresses: at most %d", cfg->n_addrs,
			   MLV_DECAP_MAX_ADDRS);
	if (cfg->n_gue_ports > MLV_DECAP_MAX_GUE_PORTS)
		return mlv_err_msg(errbuf, errlen, MLV_E_LIMIT,
			   "%zu GUE ports: at most %d", cfg->n_gue_ports,
			   MLV_DECAP_MAX_GUE_PORTS);
	if (cfg->n_sources > MLV_DECAP_MAX_SOURCES)
		return mlv_err_msg(errbuf, errlen, MLV_E_LIMIT,
			   "%zu sources: at most %d", cfg->n_sources,
			   MLV_DECAP_MAX_SOURCES);
	if (cfg->path_mtu && (cfg->path_mtu < MLV_DECAP_PATH_MTU_MIN ||
			      cfg->path_mtu > MLV_DECAP_PATH_MTU_MAX))
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
			   "path MTU %u: want %d-%d (or 0: no SYN-ACK clamp)",
			   cfg->path_mtu, MLV_DECAP_PATH_MTU_MIN,
			   MLV_DECAP_PATH_MTU_MAX);
	addrs = calloc(cfg->n_addrs + 1, sizeof(*addrs));
	addr_vals = calloc(cfg->n_addrs + 1, sizeof(*addr_vals));
	ports = calloc(cfg->n_gue_ports + 1, sizeof(*ports));
	port_vals = calloc(cfg->n_gue_ports + 1, sizeof(*port_vals));
	srcs = calloc(cfg->n_sources + 1, sizeof(*srcs));
	src_vals = calloc(cfg->n_sources + 1, sizeof(*src_vals));
	if (!addrs || !addr_vals || !ports || !port_vals || !srcs ||
	    !src_vals) {
		err = MLV_E_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < cfg->n_addrs; i++) {
		const struct mlv_ip *ip = &cfg->addrs[i];

		if (ip->family != MLV_AF_INET && ip->family != MLV_AF_INET6) {
			err = mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				  "address %zu has no family", i);
			goto out;
		}
		addrs[i].family = ip->family == MLV_AF_INET ?
			MLV_BPF_FAMILY_V4 : MLV_BPF_FAMILY_V6;
		memcpy(addrs[i].addr, ip->bytes,
		       ip->family == MLV_AF_INET ? 4 : 16);
	}
	for (size_t i = 0; i < cfg->n_gue_ports; i++) {
		if (!cfg->gue_ports[i]) {
			err = mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				  "GUE port 0 is not a port");
			goto out;
		}
		ports[i].port = htons(cfg->gue_ports[i]);
	}
	err = source_keys(cfg, srcs, errbuf, errlen);
	if (err)
		goto out;
	err = mlv_map_sync(maps->addrs_fd, sizeof(*addrs), sizeof(*addr_vals),
			   addrs, addr_vals, cfg->n_addrs, NULL);
	if (err) {
		mlv_err_msg(errbuf, errlen, err, "updating decap_addrs: %s",
		    mlv_strerror(err));
		goto out;
	}
	err = mlv_map_sync(maps->ports_fd, sizeof(*ports), sizeof(*port_vals),
			   ports, port_vals, cfg->n_gue_ports, NULL);
	if (err) {
		mlv_err_msg(errbuf, errlen, err, "updating decap_gue_ports: %s",
		    mlv_strerror(err));
		goto out;
	}
	err = mlv_lpm_sync(maps->sources_fd, sizeof(*srcs), sizeof(*src_vals),
			   srcs, src_vals, cfg->n_sources);
	if (err) {
		mlv_err_msg(errbuf, errlen, err, "updating decap_sources: %s",
		    mlv_strerror(err));
		goto out;
	}
	if (bpf_map_update_elem(maps->mss_cfg_fd, &zero, &mss_cfg, BPF_ANY)) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			  "updating decap_mss_cfg: %s", strerror(errno));
		goto out;
	}
	if (bpf_map_lookup_elem(maps->sc_cfg_fd, &zero, &sc_cfg)) {
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			  "reading decap_sc_cfg: %s", strerror(errno));
		goto out;
	}
	sc_cfg.flags &= MLV_DECAP_SC_DRAIN;
	if (cfg->second_chance_off)
		sc_cfg.flags |= MLV_DECAP_SC_OFF;
	if (bpf_map_update_elem(maps->sc_cfg_fd, &zero, &sc_cfg, BPF_ANY))
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			  "updating decap_sc_cfg: %s", strerror(errno));
out:
	free(srcs);
	free(src_vals);
	free(addrs);
	free(addr_vals);
	free(ports);
	free(port_vals);
	return err;
}

/* decap_stats of this build: one entry per counter. Another version's
 * program has other counters (or the same ones in another order), which
 * status would print under the wrong names. */
static int stats_match(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
	       info.max_entries == MLV_DECAP_CTR__COUNT;
}

enum mlv_err mlv_decap_open(int ifindex, struct mlv_decap_maps *maps,
			    char *errbuf, size_t errlen)
{
	struct mlv_xdp_map_want want[] = {
		{ "decap_addrs", BPF_MAP_TYPE_HASH,
		  sizeof(struct mlv_bpf_addr_key),
		  sizeof(struct mlv_decap_addr_val), -1 },
		{ "decap_gue_ports", BPF_MAP_TYPE_HASH,
		  sizeof(struct mlv_decap_port_key),
		  sizeof(struct mlv_decap_port_val), -1 },
		{ "decap_sources", BPF_MAP_TYPE_LPM_TRIE,
		  sizeof(struct mlv_decap_src_key),
		  sizeof(struct mlv_decap_src_val), -1 },
		{ "decap_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32),
		  sizeof(__u64), -1 },
		{ "decap_syn_mss", BPF_MAP_TYPE_LRU_HASH,
		  sizeof(struct mlv_decap_flow_key),
		  sizeof(struct mlv_decap_flow_val), -1 },
		{ "decap_mss_cfg", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		  sizeof(struct mlv_decap_mss_cfg), -1 },
		{ "decap_sc_cfg", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
		  sizeof(struct mlv_decap_sc_cfg), -1 },
	};
	struct mlv_xdp_attached cur;
	enum mlv_err err;

	memset(maps, 0, sizeof(*maps));
	maps->addrs_fd = maps->ports_fd = maps->sources_fd = -1;
	maps->stats_fd = maps->syn_mss_fd = maps->mss_cfg_fd = -1;
	maps->sc_cfg_fd = -1;
	err = mlv_xdp_attached_query(ifindex, &cur, errbuf, errlen);
	if (err)
		return err;
	if (!cur.prog_id)
		return mlv_err_msg(errbuf, errlen, MLV_E_NOT_FOUND,
			   "no XDP program attached");
	if (strcmp(cur.name, MLV_DECAP_PROG_NAME))
		return mlv_err_msg(errbuf, errlen, MLV_E_BUSY,
			   "the attached XDP program is %s (id %u), not %s",
			   cur.name, cur.prog_id, MLV_DECAP_PROG_NAME);
	err = mlv_xdp_attached_maps(cur.prog_id, want,
				    sizeof(want) / sizeof(want[0]),
				    errbuf, errlen);
	if (!err && !stats_match(want[3].fd)) {
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			close(want[i].fd);
		err = MLV_E_NOT_FOUND;
	}
	/* our program without one of these maps: attached by another
	 * version of maglev-decap, which attach must not take for "nothing
	 * attached" */
	if (err == MLV_E_NOT_FOUND)
		return mlv_err_msg(errbuf, errlen, MLV_E_PROTO,
			   "%s id %u lacks this version's maps (attached by "
			   "another maglev-decap version?): detach it, then "
			   "attach again", MLV_DECAP_PROG_NAME, cur.prog_id);
	if (err)
		return err;
	maps->prog_id = cur.prog_id;
	maps->mode_flags = cur.mode_flags;
	maps->addrs_fd = want[0].fd;
	maps->ports_fd = want[1].fd;
	maps->sources_fd = want[2].fd;
	maps->stats_fd = want[3].fd;
	maps->syn_mss_fd = want[4].fd;
	maps->mss_cfg_fd = want[5].fd;
	maps->sc_cfg_fd = want[6].fd;
	return MLV_OK;
}

void mlv_decap_maps_close(struct mlv_decap_maps *maps)
{
	if (maps->addrs_fd >= 0)
		close(maps->addrs_fd);
	if (maps->ports_fd >= 0)
		close(maps->ports_fd);
	if (maps->sources_fd >= 0)
		close(maps->sources_fd);
	if (maps->stats_fd >= 0)
		close(maps->stats_fd);
	if (maps->syn_mss_fd >= 0)
		close(maps->syn_mss_fd);
	if (maps->mss_cfg_fd >= 0)
		close(maps->mss_cfg_fd);
	if (maps->sc_cfg_fd >= 0)
		close(maps->sc_cfg_fd);
	maps->addrs_fd = maps->ports_fd = maps->sources_fd = -1;
	maps->stats_fd = maps->syn_mss_fd = maps->mss_cfg_fd = -1;
	maps->sc_cfg_fd = -1;
}

static uint32_t mode_flags(enum mlv_decap_mode mode)
{
	switch (mode) {
	case MLV_DECAP_MODE_NATIVE:
		return XDP_FLAGS_DRV_MODE;
	case MLV_DECAP_MODE_GENERIC:
		return XDP_FLAGS_SKB_MODE;
	case MLV_DECAP_MODE_AUTO:
		break;
	}
	return 0;
}

/* Load a fresh decapsulator, fill its maps, then attach it. */
static enum mlv_err attach_new(int ifindex, enum mlv_decap_mode mode,
			       const struct mlv_decap_config *cfg,
			       char *errbuf, size_t errlen)
{
	struct mlv_decap_maps maps;
	struct xdp_decap_bpf *skel;
	enum mlv_err err;
	int rc;

	skel = xdp_decap_bpf__open_and_load();
	if (!skel)
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			   "loading the decapsulator failed: %s",
			   strerror(errno));
	maps.addrs_fd = bpf_map__fd(skel->maps.decap_addrs);
	maps.ports_fd = bpf_map__fd(skel->maps.decap_gue_ports);
	maps.sources_fd = bpf_map__fd(skel->maps.decap_sources);
	maps.stats_fd = bpf_map__fd(skel->maps.decap_stats);
	maps.syn_mss_fd = bpf_map__fd(skel->maps.decap_syn_mss);
	maps.mss_cfg_fd = bpf_map__fd(skel->maps.decap_mss_cfg);
	maps.sc_cfg_fd = bpf_map__fd(skel->maps.decap_sc_cfg);
	err = mlv_decap_configure(&maps, cfg, errbuf, errlen);
	if (err)
		goto out;
	rc = bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.mlv_xdp_decap),
			    XDP_FLAGS_UPDATE_IF_NOEXIST | mode_flags(mode), NULL);
	if (rc)
		err = mlv_err_msg(errbuf, errlen, mlv_err_from_errno(-rc),
			  "attaching failed: %s%s", strerror(-rc),
			  rc == -EBUSY || rc == -EEXIST ?
			  " (another XDP program is attached)" : "");
out:
	/* the attachment keeps the program and its maps alive */
	xdp_decap_bpf__destroy(skel);
	return err;
}

/* The egress program as cfg wants it: attached over the decapsulator's
 * maps now on ifindex, or not there. */
static enum mlv_err sync_egress(int ifindex, const struct mlv_decap_config *cfg,
				char *errbuf, size_t errlen)
{
	struct mlv_decap_maps maps;
	enum mlv_err err;
	int removed;

	if (!cfg->path_mtu)
		return mlv_decap_tc_detach(ifindex, &removed, errbuf, errlen);
	err = mlv_decap_open(ifindex, &maps, errbuf, errlen);
	if (err)
		return err;
	err = mlv_decap_tc_attach(ifindex, &maps, errbuf, errlen);
	mlv_decap_maps_close(&maps);
	return err;
}

enum mlv_err mlv_decap_attach(int ifindex, enum mlv_decap_mode mode,
			      const struct mlv_decap_config *cfg,
			      int *updated, char *errbuf, size_t errlen)
{
	struct mlv_decap_maps maps;
	enum mlv_err err;

	*updated = 0;
	if (mode != MLV_DECAP_MODE_AUTO && mode != MLV_DECAP_MODE_NATIVE &&
	    mode != MLV_DECAP_MODE_GENERIC)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL, "bad XDP mode %d",
			   (int)mode);
	err = mlv_decap_open(ifindex, &maps, errbuf, errlen);
	if (err == MLV_E_NOT_FOUND) {
		err = attach_new(ifindex, mode, cfg, errbuf, errlen);
		if (err)
			return err;
		err = sync_egress(ifindex, cfg, errbuf, errlen);
		if (err) {
			int removed;

			mlv_xdp_attached_detach(ifindex, MLV_DECAP_PROG_NAME,
						&removed, NULL, 0);
		}
		return err;
	}
	if (err)
		return err;
	err = mlv_decap_configure(&maps, cfg, errbuf, errlen);
	mlv_decap_maps_close(&maps);
	if (!err)
		err = sync_egress(ifindex, cfg, errbuf, errlen);
	if (!err)
		*updated = 1;
	return err;
}

enum mlv_err mlv_decap_counters(const struct mlv_decap_maps *maps,
				uint64_t out[MLV_DECAP_CTR__COUNT])
{
	return mlv_percpu_sum(maps->stats_fd, MLV_DECAP_CTR__COUNT, out);
}

enum mlv_err mlv_decap_read_config(const struct mlv_decap_maps *maps,
				   struct mlv_ip *addrs, size_t cap,
				   size_t *n_addrs, uint16_t *ports,
				   size_t port_cap, size_t *n_ports)
{
	struct mlv_bpf_addr_key akey, *aprev = NULL;
	struct mlv_decap_port_key pkey, *pprev = NULL;

	*n_addrs = *n_ports = 0;
	while (bpf_map_get_next_key(maps->addrs_fd, aprev, &akey) == 0) {
		if (*n_addrs < cap) {
			struct mlv_ip *ip = &addrs[*n_addrs];

			memset(ip, 0, sizeof(*ip));
			ip->family = akey.family == MLV_BPF_FAMILY_V4 ?
				MLV_AF_INET : MLV_AF_INET6;
			memcpy(ip->bytes, akey.addr,
			       ip->family == MLV_AF_INET ? 4 : 16);
		}
		(*n_addrs)++;
		aprev = &akey;
	}
	if (errno != ENOENT)
		return mlv_err_from_errno(errno);
	while (bpf_map_get_next_key(maps->ports_fd, pprev, &pkey) == 0) {
		if (*n_ports < port_cap)
			ports[*n_ports] = ntohs(pkey.port);
		(*n_ports)++;
		pprev = &pkey;
	}
	if (errno != ENOENT)
		return mlv_err_from_errno(errno);
	return MLV_OK;
}

static int cmp_prefix(const void *a, const void *b)
{
	const struct mlv_ip_prefix *x = a, *y = b;
	int c;

	if (x->ip.family != y->ip.family)
		return x->ip.family < y->ip.family ? -1 : 1;
	c = memcmp(x->ip.bytes, y->ip.bytes, sizeof(x->ip.bytes));
	if (c)
		return c;
	return (int)x->len - (int)y->len;
}

enum mlv_err mlv_decap_read_sources(const struct mlv_decap_maps *maps,
				    struct mlv_ip_prefix *out, size_t cap,
				    size_t *n)
{
	struct mlv_decap_src_key key, *prev = NULL;

	*n = 0;
	while (bpf_map_get_next_key(maps->sources_fd, prev, &key) == 0) {
		if (*n < cap) {
			struct mlv_ip_prefix *p = &out[*n];

			memset(p, 0, sizeof(*p));
			p->ip.family = key.family == MLV_BPF_FAMILY_V4 ?
				MLV_AF_INET : MLV_AF_INET6;
			memcpy(p->ip.bytes, key.addr,
			       p->ip.family == MLV_AF_INET ? 4 : 16);
			p->len = (uint8_t)(key.prefixlen -
					   MLV_DECAP_SRC_FAMILY_BITS);
		}
		(*n)++;
		prev = &key;
	}
	if (errno != ENOENT)
		return mlv_err_from_errno(errno);
	qsort(out, *n < cap ? *n : cap, sizeof(*out), cmp_prefix);
	return MLV_OK;
}

enum mlv_err mlv_decap_read_path_mtu(const struct mlv_decap_maps *maps,
				     uint32_t *path_mtu)
{
	struct mlv_decap_mss_cfg cfg;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(maps->mss_cfg_fd, &zero, &cfg))
		return mlv_err_from_errno(errno);
	*path_mtu = cfg.path_mtu;
	return MLV_OK;
}

enum mlv_err mlv_decap_read_sc(const struct mlv_decap_maps *maps,
			       uint32_t *flags)
{
	struct mlv_decap_sc_cfg cfg;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(maps->sc_cfg_fd, &zero, &cfg))
		return mlv_err_from_errno(errno);
	*flags = cfg.flags;
	return MLV_OK;
}

enum mlv_err mlv_decap_set_drain(const struct mlv_decap_maps *maps, bool on,
				 char *errbuf, size_t errlen)
{
	struct mlv_decap_sc_cfg cfg;
	__u32 zero = 0;

	/* one writer at a time per interface (decap_ctl.h), so the read
	 * and the write cannot interleave with another change */
	if (bpf_map_lookup_elem(maps->sc_cfg_fd, &zero, &cfg))
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			   "reading decap_sc_cfg: %s", strerror(errno));
	cfg.flags = on ? cfg.flags | MLV_DECAP_SC_DRAIN :
			 cfg.flags & ~(__u32)MLV_DECAP_SC_DRAIN;
	if (bpf_map_update_elem(maps->sc_cfg_fd, &zero, &cfg, BPF_EXIST))
		return mlv_err_msg(errbuf, errlen, mlv_err_from_errno(errno),
			   "updating decap_sc_cfg: %s", strerror(errno));
	return MLV_OK;
}

enum mlv_err mlv_decap_detach(int ifindex, int *removed, char *errbuf,
			      size_t errlen)
{
	enum mlv_err err;
	int tc_removed;

	/* someone else's filter at our handle (MLV_E_BUSY) stays, and
	 * does not keep the decapsulator attached */
	err = mlv_decap_tc_detach(ifindex, &tc_removed, errbuf, errlen);
	if (err && err != MLV_E_BUSY)
		return err;
	err = mlv_xdp_attached_detach(ifindex, MLV_DECAP_PROG_NAME, removed,
				      errbuf, errlen);
	if (!err && tc_removed)
		*removed = 1;
	return err;
}
