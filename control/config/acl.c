/* SPDX-License-Identifier: BSD-3-Clause */
/* CIDR prefixes in the config: one (MLV_CT_PREFIX, such as ipip_source)
 * or a VIP's source ACL, `allow:` and `deny:` lists of them
 * (schema_internal.h, MLV_CT_PREFIX_LIST), and the checks that need both
 * lists and the VIP's address. The semantics are the
 * generation's (control/generation/acl.h, docs/forwarding.md). */
#include "control/config/schema_internal.h"

#include <stdlib.h>
#include <string.h>

/* "10.0.0.1/8" -> "10.0.0.0/8" in buf, or "" when text is not an address
 * and a length in range. */
static const char *canonical_text(const char *text, char *buf, size_t len)
{
	char addr[MLV_IP_STRLEN];
	const char *slash = strchr(text, '/');
	struct mlv_ip_prefix p;
	unsigned long l;
	char *end;

	buf[0] = '\0';
	if (!slash || (size_t)(slash - text) >= sizeof(addr))
		return buf;
	memcpy(addr, text, (size_t)(slash - text));
	addr[slash - text] = '\0';
	memset(&p, 0, sizeof(p));
	if (!mlv_ip_parse(addr, &p.ip))
		return buf;
	l = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || l > (p.ip.family == MLV_AF_INET ? 32u : 128u))
		return buf;
	p.len = (uint8_t)l;
	for (unsigned bit = p.len; bit < 128; bit++)
		p.ip.bytes[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	return mlv_ip_prefix_format(&p, buf, len);
}

/* n's text as a prefix into *out, or false with an error at n naming key
 * k: `how` is "in" for an entry of a list, "for" for a key's value. */
static bool parse_prefix(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			 const struct mlv_ynode *n, const char *how,
			 struct mlv_ip_prefix *out)
{
	char canon[MLV_IP_PREFIX_STRLEN];
	const char *why = mlv_ip_prefix_parse(n->text, out);

	if (why == mlv_ip_prefix_host_bits) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' %s '%s' has address bits set past its "
			      "length: write %s (or a longer length)", n->text,
			      how, k->name, canonical_text(n->text, canon,
							   sizeof(canon)));
		return false;
	}
	if (why != NULL) {
		mlv_cfg_error(ctx, n->pos, "'%s' %s '%s' is not a CIDR prefix: %s",
			      n->text, how, k->name, why);
		return false;
	}
	return true;
}

enum mlv_cfg_item mlv_cfg_prefix_item(struct mlv_cfg_ctx *ctx,
				      const struct mlv_cfg_key *k,
				      const struct mlv_ynode *it, void *elem)
{
	struct mlv_acl_prefix_config *e = elem;

	if (!parse_prefix(ctx, k, it, "in", &e->prefix))
		return MLV_CFG_ITEM_BAD;
	e->pos = it->pos;
	return MLV_CFG_ITEM_OK;
}

bool mlv_cfg_convert_prefix(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			    const struct mlv_ynode *n, struct mlv_ip_prefix *dst)
{
	struct mlv_ip_prefix p;
	int fam = k->min == MLV_AF_INET6 ? 6 : 4;

	if (!parse_prefix(ctx, k, n, "for", &p))
		return false;
	if (p.ip.family != k->min) {
		mlv_cfg_error(ctx, n->pos, "'%s' must be an IPv%d prefix, got %s",
			      k->name, fam, n->text);
		return false;
	}
	if (p.len < k->max) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' %s holds more addresses than a flow hash "
			      "spreads over: use /%lld to /%d", k->name, n->text,
			      (long long)k->max, fam == 4 ? 32 : 128);
		return false;
	}
	*dst = p;
	return true;
}

/* One entry of both lists, for sorting. */
struct acl_ref {
	const struct mlv_acl_prefix_config *e;
	bool allow;
};

static int cmp_prefix(const struct mlv_ip_prefix *a, const struct mlv_ip_prefix *b)
{
	int c;

	if (a->ip.family != b->ip.family)
		return a->ip.family < b->ip.family ? -1 : 1;
	c = memcmp(a->ip.bytes, b->ip.bytes, sizeof(a->ip.bytes));
	if (c)
		return c;
	return (int)a->len - (int)b->len;
}

static int cmp_ref(const void *x, const void *y)
{
	const struct acl_ref *a = x, *b = y;
	int c = cmp_prefix(&a->e->prefix, &b->e->prefix);

	if (c)
		return c;
	if (a->allow != b->allow)
		return a->allow ? -1 : 1;   /* allow first: deny is reported */
	return a->e < b->e ? -1 : a->e > b->e;   /* file order in a list */
}

/* Both lists as one sorted array of references; NULL (nomem set) on
 * allocation failure. */
static struct acl_ref *sorted_refs(const struct mlv_vip_config *vip,
				   uint32_t *n_out)
{
	uint32_t n = vip->n_allow + vip->n_deny, k = 0;
	struct acl_ref *r = malloc((n ? n : 1) * sizeof(*r));

	if (!r)
		return NULL;
	for (uint32_t i = 0; i < vip->n_allow; i++)
		r[k++] = (struct acl_ref){ &vip->allow[i], true };
	for (uint32_t i = 0; i < vip->n_deny; i++)
		r[k++] = (struct acl_ref){ &vip->deny[i], false };
	qsort(r, n, sizeof(*r), cmp_ref);
	*n_out = n;
	return r;
}

void mlv_cfg_check_acl(struct mlv_cfg_ctx *ctx, struct mlv_vip_config *vip,
		       const struct mlv_cfg_seen *seen)
{
	uint32_t n_all = vip->n_allow + vip->n_deny, n;
	char buf[MLV_IP_PREFIX_STRLEN];
	struct acl_ref *r;

	if (n_all == 0)
		return;
	if (n_all > MLV_VIP_ACL_MAX) {
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, vip->n_deny ? "deny" : "allow"),
			      "VIP '%s' has %u ACL prefixes (allow and deny); "
			      "at most %u", vip->name, n_all, MLV_VIP_ACL_MAX);
		return;
	}
	/* A client of the other family never reaches the VIP: such a
	 * prefix is a mistake, not a rule. */
	if (vip->address.family != MLV_AF_NONE) {
		for (int l = 0; l < 2; l++) {
			const struct mlv_acl_prefix_config *list = l ? vip->deny : vip->allow;
			uint32_t cnt = l ? vip->n_deny : vip->n_allow;

			for (uint32_t i = 0; i < cnt; i++)
				if (list[i].prefix.ip.family != vip->address.family)
					mlv_cfg_error(ctx, list[i].pos,
						      "%s in '%s' is IPv%u but VIP '%s' "
						      "is IPv%u: its clients are of its "
						      "family", mlv_ip_prefix_format(
							      &list[i].prefix, buf, sizeof(buf)),
						      l ? "deny" : "allow",
						      list[i].prefix.ip.family == MLV_AF_INET ? 4 : 6,
						      vip->name,
						      vip->address.family == MLV_AF_INET ? 4 : 6);
		}
	}
	r = sorted_refs(vip, &n);
	if (!r) {
		ctx->nomem = true;
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		if (cmp_prefix(&r[i - 1].e->prefix, &r[i].e->prefix) != 0)
			continue;
		mlv_ip_prefix_format(&r[i].e->prefix, buf, sizeof(buf));
		if (r[i - 1].allow != r[i].allow)
			mlv_cfg_error(ctx, r[i].e->pos,
				      "%s is in both 'allow' (line %u) and 'deny' "
				      "of VIP '%s'", buf, r[i - 1].e->pos.line,
				      vip->name);
		else
			mlv_cfg_warn(ctx, r[i].e->pos,
				     "%s is listed twice in '%s' of VIP '%s' "
				     "(first at line %u)", buf,
				     r[i].allow ? "allow" : "deny", vip->name,
				     r[i - 1].e->pos.line);
	}
	free(r);
}

bool mlv_vip_acl_equal(const struct mlv_vip_config *a,
		       const struct mlv_vip_config *b)
{
	struct acl_ref *ra, *rb;
	uint32_t na, nb, i = 0, j = 0;
	bool same = true;

	if (a->n_allow + a->n_deny == 0 || b->n_allow + b->n_deny == 0)
		return a->n_allow + a->n_deny == b->n_allow + b->n_deny;
	ra = sorted_refs(a, &na);
	rb = sorted_refs(b, &nb);
	if (!ra || !rb) {
		free(ra);
		free(rb);
		return false;   /* reported as a change: harmless */
	}
	/* walk both, skipping repeats of one entry */
	while (same && (i < na || j < nb)) {
		if (i == na || j == nb) {
			same = false;
			break;
		}
		same = cmp_prefix(&ra[i].e->prefix, &rb[j].e->prefix) == 0 &&
		       ra[i].allow == rb[j].allow;
		do
			i++;
		while (i < na && cmp_prefix(&ra[i].e->prefix, &ra[i - 1].e->prefix) == 0 &&
		       ra[i].allow == ra[i - 1].allow);
		do
			j++;
		while (j < nb && cmp_prefix(&rb[j].e->prefix, &rb[j - 1].e->prefix) == 0 &&
		       rb[j].allow == rb[j - 1].allow);
	}
	free(ra);
	free(rb);
	return same;
}
