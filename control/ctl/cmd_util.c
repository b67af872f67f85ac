/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the control-socket command handlers (commands_internal.h). */
#include "control/ctl/commands_internal.h"

#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/tables/maglev.h"

json_t *mlv_ctl_ok(void)
{
	return json_pack("{s:b}", "ok", 1);
}

json_t *mlv_ctl_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:b, s:s}", "ok", 0, "error", msg);
}

const char *mlv_ctl_arg_str(const json_t *args, const char *name)
{
	return args ? json_string_value(json_object_get(args, name)) : NULL;
}

bool mlv_ctl_arg_flag(const json_t *args, const char *name)
{
	return args && json_is_true(json_object_get(args, name));
}

bool mlv_ctl_arg_uint(const json_t *args, const char *name, uint64_t *out)
{
	const json_t *v = args ? json_object_get(args, name) : NULL;

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

const struct mlv_generation *mlv_ctl_gen(const struct mlv_ctl_state *st)
{
	return st->generation ? st->generation(st->ctx) : NULL;
}

const struct mlv_config *mlv_ctl_config(const struct mlv_ctl_state *st)
{
	return st->config ? st->config(st->ctx) : NULL;
}

const struct mlv_gen_vip *mlv_ctl_need_vip(const struct mlv_ctl_state *st,
					   const json_t *args,
					   const struct mlv_generation **gen,
					   json_t **reply)
{
	const char *name = mlv_ctl_arg_str(args, "vip");
	const struct mlv_gen_vip *vip;

	*gen = mlv_ctl_gen(st);
	if (!*gen) {
		*reply = mlv_ctl_fail("no generation available yet");
		return NULL;
	}
	vip = mlv_gen_find_vip_named(*gen, name);
	if (!vip)
		*reply = mlv_ctl_fail("no VIP named \"%s\"", name ? name : "");
	return vip;
}

const char *mlv_ctl_vip_addr(const struct mlv_gen_vip *vip, char *buf,
			     size_t len)
{
	struct mlv_ip ip = { .family = vip->family };

	memcpy(ip.bytes, vip->address, sizeof(ip.bytes));
	return mlv_ip_format(&ip, buf, len);
}

json_t *mlv_ctl_fingerprint(uint64_t fp)
{
	char text[19];

	snprintf(text, sizeof(text), "0x%016llx", (unsigned long long)fp);
	return json_string(text);
}

void mlv_ctl_backend_state(const struct mlv_ctl_state *st, const char *vip,
			   const char *backend, struct mlv_gen_backend_state *out)
{
	memset(out, 0, sizeof(*out));
	out->healthy = true;      /* as mlv_gen_build assumes without a callback */
	if (st->backend_state) {
		/* asked about a generation's pair, whose place in the config
		 * the socket does not know: the callback goes by name */
		const struct mlv_gen_pair pair = {
			.vip = vip, .backend = backend,
			.vip_index = MLV_GEN_PAIR_NO_INDEX,
			.backend_index = MLV_GEN_PAIR_NO_INDEX,
		};

		st->backend_state(&pair, out, st->backend_state_ctx);
	}
}

const char *mlv_ctl_backend_state_name(const struct mlv_gen_backend *b)
{
	if (!b->usable)
		return "down";
	return b->draining ? "draining" : "active";
}

const char *mlv_ctl_ct_state_name(uint8_t state)
{
	static const char *const names[MLV_CT__NSTATES] = {
		[MLV_CT_FREE] = "other",
		[MLV_CT_TCP_OPENING] = "opening",
		[MLV_CT_TCP_ESTABLISHED] = "established",
		[MLV_CT_TCP_CLOSING] = "closing",
		[MLV_CT_UDP] = "udp",
		[MLV_CT_OTHER] = "other",
	};

	return state < MLV_CT__NSTATES ? names[state] : "other";
}

bool mlv_ctl_set_flow_counters(json_t *obj, const struct mlv_flow_counters *c)
{
	for (int i = 0; i < MLV_FLOW__COUNT; i++)
		if (json_object_set_new(obj,
					mlv_flow_counter_name((enum mlv_flow_counter)i),
					json_integer((json_int_t)c->v[i])))
			return false;
	return true;
}

uint32_t *mlv_ctl_count_slots(const struct mlv_gen_vip *vip)
{
	uint32_t *count = calloc((size_t)vip->n_backends + 1, sizeof(*count));

	if (!count)
		return NULL;
	for (uint32_t i = 0; i < vip->table_size; i++) {
		uint16_t s = vip->table[i];

		count[s < vip->n_backends ? s : vip->n_backends]++;
	}
	return count;
}
