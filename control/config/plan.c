/* SPDX-License-Identifier: BSD-3-Clause */
/* The reload plan and the budget (plan.h). VIPs and backends are matched
 * by name: the name, not the address, is a backend's identity in the
 * tables (docs/maglev.md). Both configs come from the loader, so each
 * VIP's backends are in name order (mlv_config_backend). */
#include "control/config/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool usable(const struct mlv_backend_config *b)
{
	return b->weight > 0 && b->state == MLV_BACKEND_ACTIVE;
}

/* Whether the VIP settings besides its backends differ. */
static bool other_settings_differ(const struct mlv_vip_config *a,
				  const struct mlv_vip_config *b)
{
	return !mlv_ip_equal(&a->address, &b->address) || a->port != b->port ||
	       a->port_last != b->port_last || a->hash != b->hash ||
	       a->source_prefix6 != b->source_prefix6 ||
	       a->protocol != b->protocol || a->forwarding != b->forwarding ||
	       a->gue_port != b->gue_port || a->table_size != b->table_size ||
	       a->table != b->table || a->max_load != b->max_load ||
	       a->vnodes != b->vnodes || a->min_backends != b->min_backends ||
	       a->icmp_echo != b->icmp_echo ||
	       a->new_flows_per_second != b->new_flows_per_second ||
	       a->new_flows_burst != b->new_flows_burst ||
	       a->quic != b->quic ||
	       a->mss_clamp != b->mss_clamp ||
	       memcmp(&a->ipip_source, &b->ipip_source, sizeof(a->ipip_source)) ||
	       memcmp(&a->ipip_source6, &b->ipip_source6, sizeof(a->ipip_source6)) ||
	       a->second_chance.enabled != b->second_chance.enabled ||
	       a->second_chance.window_ms != b->second_chance.window_ms ||
	       memcmp(&a->health, &b->health, sizeof(a->health)) != 0 ||
	       !mlv_vip_acl_equal(a, b);
}

/* Append one backend name with its mark to e->backends: the first 5,
 * then a count of the rest (written once compare_vip is done). */
struct names {
	struct mlv_plan_vip *e;
	size_t used;
	uint32_t shown, more;
};

static void name_backend(struct names *n, const char *mark, const char *name)
{
	size_t len = sizeof(n->e->backends);
	int w;

	if (n->shown >= 5) {
		n->more++;
		return;
	}
	w = snprintf(n->e->backends + n->used, len - n->used, "%s%s%s",
		     n->shown ? " " : "", mark, name);
	if (w < 0 || (size_t)w >= len - n->used - 16) {
		n->e->backends[n->used] = '\0';   /* keep room for the count */
		n->more++;
		n->shown = 5;
		return;
	}
	n->used += (size_t)w;
	n->shown++;
}

static void name_rest(struct names *n)
{
	if (n->more)
		snprintf(n->e->backends + n->used,
			 sizeof(n->e->backends) - n->used, " and %u more",
			 n->more);
}

static void compare_vip(const struct mlv_vip_config *old,
			const struct mlv_vip_config *now,
			struct mlv_plan_vip *out)
{
	struct names n = { .e = out };

	for (uint32_t i = 0; i < now->n_backends; i++) {
		bool added = !mlv_config_backend(old, now->backends[i].name);

		out->backends_added += added;
		out->usable_after += usable(&now->backends[i]);
		if (added)
			name_backend(&n, "+", now->backends[i].name);
	}
	for (uint32_t i = 0; i < old->n_backends; i++) {
		const struct mlv_backend_config *b = &old->backends[i];
		const struct mlv_backend_config *nb = mlv_config_backend(now, b->name);

		out->usable_before += usable(b);
		if (!nb) {
			out->backends_removed++;
			out->usable_lost += usable(b);
			name_backend(&n, "-", b->name);
			continue;
		}
		if (nb->weight != b->weight) {
			out->backends_reweighted++;
			name_backend(&n, "~", b->name);
		}
		if (usable(b) && !usable(nb)) {
			out->backends_drained++;
			out->usable_lost++;
			name_backend(&n, "drained:", b->name);
		}
	}
	name_rest(&n);
	out->other = other_settings_differ(old, now);
	/* a backend's address or MAC changing is a change too, and so is a
	 * state change other than the drain counted above */
	for (uint32_t i = 0; i < now->n_backends && !out->other; i++) {
		const struct mlv_backend_config *b = &now->backends[i];
		const struct mlv_backend_config *ob = mlv_config_backend(old, b->name);

		out->other = ob && ((ob->state != b->state &&
				     !(usable(ob) && !usable(b))) ||
				    !mlv_ip_equal(&ob->address, &b->address) ||
				    ob->has_mac != b->has_mac ||
				    ob->quic_server_id != b->quic_server_id ||
				    memcmp(&ob->mac, &b->mac, sizeof(b->mac)) != 0);
	}
	if (out->backends_added || out->backends_removed ||
	    out->backends_reweighted || out->backends_drained || out->other)
		out->change = MLV_PLAN_CHANGED;
}

enum mlv_err mlv_plan_make(const struct mlv_config *running,
			   const struct mlv_config *next, struct mlv_plan *plan)
{
	uint32_t cap = running->n_vips + next->n_vips;

	memset(plan, 0, sizeof(*plan));
	plan->vips_before = running->n_vips;
	plan->vips_after = next->n_vips;
	plan->vips = calloc(cap ? cap : 1, sizeof(*plan->vips));
	if (!plan->vips)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < running->n_vips; i++) {
		const struct mlv_vip_config *old = &running->vips[i];
		const struct mlv_vip_config *now = mlv_config_vip(next, old->name);
		struct mlv_plan_vip *e = &plan->vips[plan->n];

		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", old->name);
		if (!now) {
			e->change = MLV_PLAN_REMOVED;
			for (uint32_t b = 0; b < old->n_backends; b++)
				e->usable_before += usable(&old->backends[b]);
			e->usable_lost = e->usable_before;
			e->backends_removed = old->n_backends;
			plan->vips_removed++;
			plan->n++;
			continue;
		}
		compare_vip(old, now, e);
		if (e->change == MLV_PLAN_CHANGED) {
			plan->vips_changed++;
			plan->n++;
		}
	}
	for (uint32_t i = 0; i < next->n_vips; i++) {
		struct mlv_plan_vip *e = &plan->vips[plan->n];

		if (mlv_config_vip(running, next->vips[i].name))
			continue;
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", next->vips[i].name);
		e->change = MLV_PLAN_ADDED;
		e->backends_added = next->vips[i].n_backends;
		for (uint32_t b = 0; b < next->vips[i].n_backends; b++)
			e->usable_after += usable(&next->vips[i].backends[b]);
		plan->vips_added++;
		plan->n++;
	}
	return MLV_OK;
}

void mlv_plan_free(struct mlv_plan *plan)
{
	free(plan->vips);
	memset(plan, 0, sizeof(*plan));
}

bool mlv_plan_fits(const struct mlv_plan *plan,
		   const struct mlv_reload_budget *budget, char *why,
		   size_t why_len)
{
	if (plan->vips_before > 0 &&
	    (uint64_t)plan->vips_removed * 100 >
	    (uint64_t)budget->max_vips_removed_pct * plan->vips_before) {
		snprintf(why, why_len, "it removes %u of %u VIPs (%.0f %%), more "
			 "than control.reload_budget.vips_removed (%u %%)",
			 plan->vips_removed, plan->vips_before,
			 100.0 * plan->vips_removed / plan->vips_before,
			 budget->max_vips_removed_pct);
		return false;
	}
	for (uint32_t i = 0; i < plan->n; i++) {
		const struct mlv_plan_vip *e = &plan->vips[i];

		if (e->change != MLV_PLAN_CHANGED || e->usable_before == 0)
			continue;
		if ((uint64_t)e->usable_lost * 100 >
		    (uint64_t)budget->max_backends_lost_pct * e->usable_before) {
			snprintf(why, why_len, "it takes %u of VIP %s's %u usable "
				 "backends away (removed or drained, %.0f %%), more "
				 "than control.reload_budget.backends_lost (%u %%)",
				 e->usable_lost, e->name, e->usable_before,
				 100.0 * e->usable_lost / e->usable_before,
				 budget->max_backends_lost_pct);
			return false;
		}
	}
	return true;
}

bool mlv_plan_moves_fit(const struct mlv_plan *plan,
			const struct mlv_reload_budget *budget, char *why,
			size_t why_len)
{
	for (uint32_t i = 0; i < plan->n; i++) {
		const struct mlv_plan_vip *e = &plan->vips[i];

		if (e->change != MLV_PLAN_CHANGED || e->tracked == 0)
			continue;
		if (e->tracked_moved * 100 >
		    (uint64_t)budget->max_connections_moved_pct * e->tracked) {
			snprintf(why, why_len, "it re-selects %llu of VIP %s's "
				 "%llu tracked connections (%.0f %%), more than "
				 "control.reload_budget.connections_moved (%u %%)",
				 (unsigned long long)e->tracked_moved, e->name,
				 (unsigned long long)e->tracked,
				 100.0 * (double)e->tracked_moved /
				 (double)e->tracked,
				 budget->max_connections_moved_pct);
			return false;
		}
	}
	return true;
}

/* Append the names of entries with change c, capped at 5 and "and N
 * more"; a changed VIP's changed backends follow its name. */
static size_t names_of(const struct mlv_plan *plan,
		       enum mlv_plan_vip_change c, char *buf, size_t len)
{
	size_t used = 0;
	uint32_t shown = 0, total = 0;

	for (uint32_t i = 0; i < plan->n; i++) {
		if (plan->vips[i].change != c)
			continue;
		if (shown < 5 && used < len) {
			const struct mlv_plan_vip *e = &plan->vips[i];

			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s%s%s", shown ? ", " : "",
						 e->name,
						 e->backends[0] ? ": " : "",
						 e->backends);
			shown++;
		}
		total++;
	}
	if (total > shown && used < len)
		used += (size_t)snprintf(buf + used, len - used, " and %u more",
					 total - shown);
	return used < len ? used : len;
}

void mlv_plan_summary(const struct mlv_plan *plan, char *buf, size_t len)
{
	char added[256] = "", removed[256] = "", changed[1024] = "";

	names_of(plan, MLV_PLAN_ADDED, added, sizeof(added));
	names_of(plan, MLV_PLAN_REMOVED, removed, sizeof(removed));
	names_of(plan, MLV_PLAN_CHANGED, changed, sizeof(changed));
	if (plan->n == 0) {
		snprintf(buf, len, "no VIP changed");
		return;
	}
	snprintf(buf, len, "%u VIP(s) added%s%s%s, %u removed%s%s%s, %u "
		 "changed%s%s%s", plan->vips_added, added[0] ? " (" : "",
		 added, added[0] ? ")" : "", plan->vips_removed,
		 removed[0] ? " (" : "", removed, removed[0] ? ")" : "",
		 plan->vips_changed, changed[0] ? " (" : "", changed,
		 changed[0] ? ")" : "");
}
