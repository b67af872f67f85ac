/* SPDX-License-Identifier: BSD-3-Clause */
/* Names and one-line descriptions for logs, status and metrics. */
#include <stdio.h>

#include "control/health/health_internal.h"

const char *mlv_health_counter_name(enum mlv_health_counter c)
{
	static const char *const names[] = {
#define MLV_HEALTH_CTR_NAME(id, name, help) [MLV_HEALTH_CTR_##id] = name,
		MLV_HEALTH_COUNTERS(MLV_HEALTH_CTR_NAME)
#undef MLV_HEALTH_CTR_NAME
	};

	return (unsigned)c < MLV_HEALTH_CTR__COUNT ? names[c] : "unknown";
}

const char *mlv_health_result_name(enum mlv_health_result r)
{
	static const char *const names[] = {
#define MLV_HEALTH_RESULT_NAME(id, name) [MLV_HEALTH_RESULT_##id] = name,
		MLV_HEALTH_RESULTS(MLV_HEALTH_RESULT_NAME)
#undef MLV_HEALTH_RESULT_NAME
	};

	return (unsigned)r < MLV_HEALTH_RESULT__COUNT ? names[r] : "unknown";
}

const char *mlv_health_type_name(enum mlv_health_type t)
{
	switch (t) {
	case MLV_HEALTH_NONE: return "none";
	case MLV_HEALTH_TCP:  return "tcp";
	case MLV_HEALTH_HTTP: return "http";
	case MLV_HEALTH_UDP:  return "udp";
	case MLV_HEALTH_DNS:  return "dns";
	}
	return "unknown";
}

const char *mlv_health_via_name(enum mlv_health_via v)
{
	switch (v) {
	case MLV_HEALTH_VIA_DIRECT:    return "direct";
	case MLV_HEALTH_VIA_DATA_PATH: return "data_path";
	}
	return "unknown";
}

int mlv_health_event_describe(const struct mlv_health_event *e, char *buf,
			      size_t len)
{
	char addr[MLV_IP_STRLEN], vip[MLV_IP_STRLEN];
	const char *open = e->address.family == MLV_AF_INET6 ? "[" : "";
	const char *close = e->address.family == MLV_AF_INET6 ? "]" : "";
	char more[48] = "", via[MLV_IP_STRLEN + 32] = "";

	mlv_ip_format(&e->address, addr, sizeof(addr));
	if (e->via == MLV_HEALTH_VIA_DATA_PATH) {
		mlv_ip_format(&e->vip, vip, sizeof(vip));
		snprintf(via, sizeof(via), " through the data path to %s", vip);
	}
	if (e->n_pairs > 1)
		snprintf(more, sizeof(more), " and %u more", e->n_pairs - 1);
	return snprintf(buf, len,
			"%s%s%s%s:%u%s%s is %s after %u consecutive %s (%s); "
			"affects %s/%s%s",
			e->type == MLV_HEALTH_HTTP ? "http://" :
			e->type == MLV_HEALTH_UDP ? "udp " :
			e->type == MLV_HEALTH_DNS ? "dns " : "tcp ",
			open, addr, close, e->port,
			e->type == MLV_HEALTH_HTTP ? e->path : "", via,
			e->up ? "up" : "down", e->consecutive,
			e->up ? (e->consecutive == 1 ? "success" : "successes")
			      : (e->consecutive == 1 ? "failure" : "failures"),
			e->reason,
			e->n_pairs ? e->pairs[0].vip : "-",
			e->n_pairs ? e->pairs[0].backend : "-", more);
}
