/* SPDX-License-Identifier: BSD-3-Clause */
/* A VIP's `port`: one port (80), a range ("8000-8100", first < last) or
 * `any` (every port of the protocol). The model keeps the first and last
 * port (config.h); `any` is 0..65535. */
#include "control/config/validate_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "control/config/diags.h"

const char *mlv_vip_port_format(uint16_t port, uint16_t port_last,
				char *buf, size_t len)
{
	if (port == 0 && port_last == 65535)
		snprintf(buf, len, "any");
	else if (port_last != 0 && port != port_last)
		snprintf(buf, len, "%u-%u", port, port_last);
	else
		snprintf(buf, len, "%u", port);
	return buf;
}

/* Decimal digits of s[0, n) as a port 1..65535; 0 if they are not one. */
static uint32_t port_digits(const char *s, size_t n)
{
	uint32_t v = 0;

	if (n == 0 || n > 5)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	return v <= 65535 ? v : 0;
}

bool mlv_cfg_convert_port_spec(struct mlv_cfg_ctx *ctx,
			       const struct mlv_cfg_key *k,
			       const struct mlv_ynode *n, void *obj)
{
	uint16_t *first = mlv_cfg_field(obj, k->offset);
	uint16_t *last = mlv_cfg_field(obj, k->aux);
	const char *t = n->text;
	const char *dash = strchr(t, '-');
	uint32_t a, b;

	if (strcmp(t, "any") == 0) {
		*first = 0;
		*last = 65535;
		return true;
	}
	if (dash == NULL) {
		/* a plain integer, like every other integer key: no quotes */
		a = port_digits(t, strlen(t));
		if (!n->plain || a == 0) {
			mlv_cfg_error(ctx, n->pos,
				      "'%s' must be a port 1..65535, a range such as 8000-8100, or any; got '%s'",
				      k->name, t);
			return false;
		}
		*first = *last = (uint16_t)a;
		return true;
	}
	a = port_digits(t, (size_t)(dash - t));
	b = port_digits(dash + 1, strlen(dash + 1));
	if (a == 0 || b == 0) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' range '%s' must be two ports 1..65535 joined by '-', such as 8000-8100",
			      k->name, t);
		return false;
	}
	if (a >= b) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' range '%s' must start below its end (for one port write %u)",
			      k->name, t, a);
		return false;
	}
	*first = (uint16_t)a;
	*last = (uint16_t)b;
	return true;
}

void mlv_cfg_check_vip_ports_hash(struct mlv_cfg_ctx *ctx,
				  const struct mlv_vip_config *vip,
				  const struct mlv_cfg_seen *seen)
{
	char port[16];

	/* A health check of a range or `any` VIP has no one port to knock
	 * on: it must say which. */
	if (mlv_cfg_usable(seen, "port") && mlv_cfg_usable(seen, "health") &&
	    mlv_vip_port_wild(vip) &&
	    vip->health.type != MLV_HEALTH_NONE && vip->health.port == 0)
		mlv_cfg_error(ctx, mlv_cfg_given(seen, "health") ?
				   mlv_cfg_pos(seen, "health") :
				   mlv_cfg_pos(seen, "port"),
			      "VIP '%s' has port %s and a health check%s without health.port: set the port the check connects to",
			      vip->name,
			      mlv_vip_port_format(vip->port, vip->port_last,
						  port, sizeof(port)),
			      mlv_cfg_given(seen, "health") ? "" :
			      " (from defaults.health)");
	if (mlv_cfg_given(seen, "source_prefix6") && mlv_cfg_usable(seen, "hash") &&
	    vip->hash != MLV_HASH_SOURCE)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "source_prefix6"),
			      "source_prefix6 is only used with hash: source (VIP '%s' uses %s)",
			      vip->name, vip->hash == MLV_HASH_3TUPLE ? "3tuple" : "5tuple");
}

struct vip_ref {
	const struct mlv_vip_config *vip;
	uint32_t index;
};

/* (address, protocol, first port, last port, file order) */
static int vip_ref_cmp(const void *a, const void *b)
{
	const struct vip_ref *x = a, *y = b;
	int c = memcmp(&x->vip->address, &y->vip->address, sizeof(x->vip->address));

	if (c == 0)
		c = (int)x->vip->protocol - (int)y->vip->protocol;
	if (c == 0)
		c = (int)x->vip->port - (int)y->vip->port;
	if (c == 0)
		c = (int)x->vip->port_last - (int)y->vip->port_last;
	if (c == 0)
		c = x->index < y->index ? -1 : x->index > y->index;
	return c;
}

static bool same_place(const struct mlv_vip_config *a,
		       const struct mlv_vip_config *b)
{
	return mlv_ip_equal(&a->address, &b->address) &&
	       a->protocol == b->protocol;
}

static void report(struct mlv_cfg_ctx *ctx, const struct mlv_ynode *item,
		   const struct mlv_vip_config *v,
		   const struct mlv_vip_config *other, bool overlap)
{
	struct mlv_src_pos here = mlv_cfg_item_pos(item, overlap ? "port" :
							  "address");
	char at[PATH_MAX + 16], addr[MLV_IP_STRLEN], p1[16], p2[16];
	bool v6 = v->address.family == MLV_AF_INET6;

	mlv_cfg_error(ctx, here,
		      overlap ? "VIP '%s' overlaps VIP '%s' (%s): %s%s%s port %s/%s and port %s" :
		      "VIP '%s' duplicates VIP '%s' (%s): both are %s%s%s port %s/%s%.0s",
		      v->name, other->name,
		      mlv_diags_where(ctx->diags, other->pos, here, at, sizeof(at)),
		      v6 ? "[" : "", mlv_ip_format(&v->address, addr, sizeof(addr)),
		      v6 ? "]" : "",
		      mlv_vip_port_format(v->port, v->port_last, p1, sizeof(p1)),
		      mlv_proto_name(v->protocol),
		      mlv_vip_port_format(other->port, other->port_last, p2,
					  sizeof(p2)));
}

/* Sorted by (address, protocol, first port, last port), a VIP repeats an
 * earlier one when both have the same ports and are not ranges (two
 * ranges that are equal overlap); a range overlaps an earlier range of
 * the same address and protocol when it starts at or before the end of
 * the one reaching furthest. A range beside one port or beside `any` is
 * fine: the more specific VIP wins (docs/forwarding.md). */
void mlv_cfg_check_unique_vips(struct mlv_cfg_ctx *ctx,
			       const struct mlv_config *cfg,
			       const struct mlv_ynode **items)
{
	struct vip_ref *refs;
	const struct vip_ref *reach = NULL;   /* the range ending last */
	uint32_t i, n = 0;

	refs = calloc(cfg->n_vips ? cfg->n_vips : 1, sizeof(*refs));
	if (refs == NULL) {
		ctx->nomem = true;
		return;
	}
	for (i = 0; i < cfg->n_vips; i++) {
		const struct mlv_vip_config *v = &cfg->vips[i];

		/* Incomplete VIPs were reported already. */
		if (v->address.family == MLV_AF_NONE ||
		    (v->port == 0 && v->port_last == 0) || v->protocol == 0)
			continue;
		refs[n].vip = v;
		refs[n].index = i;
		n++;
	}
	qsort(refs, n, sizeof(*refs), vip_ref_cmp);
	for (i = 0; i < n; i++) {
		const struct mlv_vip_config *v = refs[i].vip;
		const struct vip_ref *first = i > 0 ? &refs[i - 1] : NULL;
		bool range = mlv_vip_port_wild(v) && !mlv_vip_port_any(v);

		if (first && !same_place(first->vip, v))
			first = NULL;
		if (reach && !same_place(reach->vip, v))
			reach = NULL;
		if (!range) {
			if (!first || first->vip->port != v->port ||
			    first->vip->port_last != v->port_last)
				continue;
			while (first > refs && same_place(first[-1].vip, v) &&
			       first[-1].vip->port == v->port &&
			       first[-1].vip->port_last == v->port_last)
				first--;
			report(ctx, items[refs[i].index], v, first->vip, false);
			continue;
		}
		if (reach && v->port <= reach->vip->port_last)
			report(ctx, items[refs[i].index], v, reach->vip, true);
		if (!reach || v->port_last > reach->vip->port_last)
			reach = &refs[i];
	}
	free(refs);
}
