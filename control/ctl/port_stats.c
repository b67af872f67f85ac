/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/ctl/port_stats.h"

#include <string.h>

static const char *const names[] = {
#define PS_NAME(id, json, metric, help) json,
	MLV_PORT_COUNTERS(PS_NAME)
#undef PS_NAME
};
static const char *const metrics[] = {
#define PS_METRIC(id, json, metric, help) metric,
	MLV_PORT_COUNTERS(PS_METRIC)
#undef PS_METRIC
};
static const char *const helps[] = {
#define PS_HELP(id, json, metric, help) help,
	MLV_PORT_COUNTERS(PS_HELP)
#undef PS_HELP
};

const char *mlv_port_counter_name(enum mlv_port_counter c)
{
	return (unsigned)c < MLV_PORT_CTR__COUNT ? names[c] : "?";
}

const char *mlv_port_counter_metric(enum mlv_port_counter c)
{
	return (unsigned)c < MLV_PORT_CTR__COUNT ? metrics[c] : "?";
}

const char *mlv_port_counter_help(enum mlv_port_counter c)
{
	return (unsigned)c < MLV_PORT_CTR__COUNT ? helps[c] : "?";
}

bool mlv_port_xstat_is_error(const char *name)
{
	static const char *const words[] = {
		"error", "drop", "miss", "discard", "nombuf", "no_mbuf",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}

static json_t *link_json(enum mlv_port_link l)
{
	return l == MLV_PORT_LINK_UP ? json_string("up") :
	       l == MLV_PORT_LINK_DOWN ? json_string("down") : json_null();
}

static json_t *members_json(const struct mlv_port_stats *p)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < p->n_members; i++) {
		const struct mlv_port_member *m = &p->members[i];

		if (json_array_append_new(a, json_pack(
			    "{s:s, s:s, s:b, s:I, s:I, s:I, s:I}",
			    "device", m->device ? m->device : "",
			    "link", m->up ? "up" : "down", "active", m->active,
			    "rx_packets", (json_int_t)m->rx_packets,
			    "tx_packets", (json_int_t)m->tx_packets,
			    "rx_errors", (json_int_t)m->rx_errors,
			    "tx_errors", (json_int_t)m->tx_errors))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *mlv_port_stats_json(const struct mlv_port_stats *p, bool xstats)
{
	json_t *o = json_pack("{s:s, s:s, s:{}}", "name", p->name,
			      "device", p->device ? p->device : "", "counters");
	json_t *c = o ? json_object_get(o, "counters") : NULL;
	json_t *x = NULL;

	for (int i = 0; c && i < MLV_PORT_CTR__COUNT; i++)
		if (json_object_set_new(c, names[i],
					json_integer((json_int_t)p->v[i])))
			goto fail;
	if (o && json_object_set_new(o, "link", link_json(p->link)))
		goto fail;
	if (o && p->n_members &&
	    json_object_set_new(o, "members", members_json(p)))
		goto fail;
	if (!o || !xstats)
		return o;
	x = json_object();
	for (uint32_t i = 0; x && i < p->n_xstats; i++)
		if (json_object_set_new(x, p->xstats[i].name,
					json_integer((json_int_t)p->xstats[i].value)))
			goto fail;
	if (!x || json_object_set_new(o, "xstats", x)) {
		x = NULL;    /* set_new took it, even when it failed */
		goto fail;
	}
	return o;
fail:
	json_decref(x);
	json_decref(o);
	return NULL;
}

json_t *mlv_port_stats_array(const struct mlv_port_stats *ps, uint32_t n,
			     bool xstats)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; arr && i < n; i++)
		if (json_array_append_new(arr, mlv_port_stats_json(&ps[i],
								   xstats))) {
			json_decref(arr);
			arr = NULL;
		}
	return arr;
}
