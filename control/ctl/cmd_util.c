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

/* ---- arrays as text ---- */

/* Room for n more bytes (and the closing bracket). */
static int text_room(struct mlv_ctl_text *t, size_t n)
{
	size_t cap = t->cap ? t->cap : 4096;
	char *p;

	if (t->len + n + 1 <= t->cap)
		return 0;
	while (cap < t->len + n + 1)
		cap *= 2;
	p = realloc(t->buf, cap);
	if (!p)
		return -1;
	t->buf = p;
	t->cap = cap;
	return 0;
}

/* '[' or ',' before an item */
static int text_sep(struct mlv_ctl_text *t)
{
	if (text_room(t, 1))
		return -1;
	t->buf[t->len] = t->len ? ',' : '[';
	t->len++;
	return 0;
}

int mlv_ctl_text_add(struct mlv_ctl_text *t, json_t *item)
{
	size_t n;
	int r = -1;

	if (!item)
		return -1;
	n = json_dumpb(item, NULL, 0, JSON_COMPACT);
	if (n && text_sep(t) == 0 && text_room(t, n) == 0 &&
	    json_dumpb(item, t->buf + t->len, n, JSON_COMPACT) == n) {
		t->len += n;
		t->items++;
		r = 0;
	}
	json_decref(item);
	return r;
}

int mlv_ctl_text_add_int(struct mlv_ctl_text *t, long long v)
{
	if (text_sep(t) || text_room(t, 24))
		return -1;
	t->len += (size_t)snprintf(t->buf + t->len, 24, "%lld", v);
	t->items++;
	return 0;
}

int mlv_ctl_text_close(struct mlv_ctl_text *t)
{
	if (!t->len && text_sep(t))   /* "[]" */
		return -1;
	t->buf[t->len++] = ']';   /* text_room kept a byte for it */
	return 0;
}

void mlv_ctl_text_free(struct mlv_ctl_text *t)
{
	free(t->buf);
	*t = (struct mlv_ctl_text){ 0 };
}

/* ---- replies built in steps ---- */

static void steps_release(void *arg)
{
	struct mlv_ctl_steps *s = arg;

	if (s->kind->release)
		s->kind->release(s);
	mlv_ctl_text_free(&s->text);
	free(s);
}

/* One step; 1 with *reply when done (NULL: out of memory), else 0. */
static int steps_once(struct mlv_ctl_steps *s, json_t **reply)
{
	const struct mlv_generation *now = mlv_ctl_gen(s->st);
	int r;

	if (now != s->gen || now->number != s->generation) {
		*reply = mlv_ctl_fail("the generation changed from %u during "
				      "the dump; ask again", s->generation);
		s->failed = true;   /* the error goes out without the array */
		return 1;
	}
	r = s->kind->step(s);
	if (r == 0)
		return 0;
	*reply = r > 0 && mlv_ctl_text_close(&s->text) == 0 ?
		 s->kind->finish(s) : NULL;
	return 1;
}

static bool steps_poll(void *arg, bool expired, json_t **reply)
{
	(void)expired;   /* each poll makes progress: no deadline */
	return steps_once(arg, reply) == 1;
}

static bool steps_member(void *arg, struct mlv_ctl_member *out)
{
	struct mlv_ctl_steps *s = arg;

	if (s->failed)
		return false;
	*out = (struct mlv_ctl_member){ .key = s->kind->key, .text = s->text.buf,
					.len = s->text.len };
	return true;
}

json_t *mlv_ctl_run_steps(struct mlv_ctl_state *st,
			  const struct mlv_ctl_steps_kind *kind, void *priv,
			  uint32_t j)
{
	struct mlv_ctl_steps *s = calloc(1, sizeof(*s));
	json_t *reply = NULL, *arr;

	if (!s) {
		struct mlv_ctl_steps tmp = { .kind = kind, .priv = priv };

		if (kind->release)
			kind->release(&tmp);
		return NULL;
	}
	*s = (struct mlv_ctl_steps){ .kind = kind, .st = st, .priv = priv,
				     .j = j, .gen = mlv_ctl_gen(st) };
	if (!s->gen) {
		steps_release(s);
		return mlv_ctl_fail("no generation available yet");
	}
	s->generation = s->gen->number;
	while (steps_once(s, &reply) == 0) {
		if (st->defer) {
			*st->defer = (struct mlv_ctl_deferred){
				.poll = steps_poll, .member = steps_member,
				.release = steps_release, .arg = s,
				.timeout_ms = UINT32_MAX, .progress = true,
			};
			return NULL;
		}
	}
	/* done in one step, or no server to copy the text: parse it back */
	if (reply && !s->failed) {
		arr = json_loadb(s->text.buf, s->text.len, 0, NULL);
		if (!arr || json_object_set_new(reply, kind->key, arr)) {
			json_decref(reply);
			reply = NULL;
		}
	}
	steps_release(s);
	return reply;
}
