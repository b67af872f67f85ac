/* SPDX-License-Identifier: BSD-3-Clause */
/* Control-socket commands through a real server: every command's reply
 * against the generation, counters and fake daemon behind it (the
 * expected values are computed here from the generation, the parser and
 * the Maglev builder, not copied from the handlers), missing daemon
 * pieces, and the command-line mapping maglevctl uses. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "control/protocol/spec.h"
#include "control/tables/maglev.h"
#include "tests/support/ctl_fixture.h"
#include "dataplane/packet/flow_hash.h"
#include "dataplane/packet/parse.h"
#include "tests/support/frames.h"

static int setup(void **state)
{
	struct ctl_fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	ctl_fx_init(fx);
	*state = fx;
	return 0;
}

static int setup_running(void **state)
{
	setup(state);
	ctl_fx_start(*state, (struct mlv_ctl_server_params){ .mode = 0600 });
	return 0;
}

static int teardown(void **state)
{
	ctl_fx_free(*state);
	free(*state);
	return 0;
}

/* Send a request built with printf and return the reply. */
static json_t *call(struct ctl_fx *fx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static json_t *call(struct ctl_fx *fx, const char *fmt, ...)
{
	char req[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(req, sizeof(req), fmt, ap);
	va_end(ap);
	return ctl_call1(fx, req);
}

static json_t *call_ok(struct ctl_fx *fx, const char *req)
{
	json_t *r = ctl_call1(fx, req);

	if (!ctl_ok(r))
		fail_msg("%s: %s", req, ctl_error(r));
	return r;
}

static void expect_fail(struct ctl_fx *fx, const char *req, const char *needle)
{
	json_t *r = ctl_call1(fx, req);

	assert_false(ctl_ok(r));
	if (!strstr(ctl_error(r), needle))
		fail_msg("%s: error \"%s\" lacks \"%s\"", req, ctl_error(r), needle);
	json_decref(r);
}

static const struct mlv_gen_vip *gen_vip(struct ctl_fx *fx, const char *name)
{
	for (uint32_t i = 0; i < fx->gen->n_vips; i++)
		if (!strcmp(fx->gen->vips[i].name, name))
			return &fx->gen->vips[i];
	fail_msg("no VIP %s", name);
	return NULL;
}

static uint32_t slots_of(const struct mlv_gen_vip *v, uint32_t idx)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < v->table_size; i++)
		n += v->table[i] == idx;
	return n;
}

static const char *text_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s)
		fail_msg("no string \"%s\"", key);
	return s;
}

static json_int_t int_of(const json_t *o, const char *key)
{
	if (!json_is_integer(json_object_get(o, key)))
		fail_msg("no integer \"%s\"", key);
	return json_integer_value(json_object_get(o, key));
}

/* ---- help, status ---- */

static void test_help(void **state)
{
	json_t *r = call_ok(*state, "{\"command\": \"help\"}");
	json_t *cmds = json_object_get(r, "commands");

	assert_int_equal(json_array_size(cmds), MLV_CTL_CMD__COUNT);
	for (int i = 0; i < MLV_CTL_CMD__COUNT; i++) {
		const struct mlv_ctl_cmd_spec *spec = &mlv_ctl_cmd_specs[i];
		json_t *c = json_array_get(cmds, (size_t)i);

		assert_string_equal(text_of(c, "name"), spec->name);
		assert_string_equal(text_of(c, "help"), spec->help);
		assert_memory_equal(text_of(c, "synopsis"), spec->name,
				    strlen(spec->name));
		assert_int_equal(json_array_size(json_object_get(c, "args")),
				 spec->n_args);
	}
	json_decref(r);
}

/* ---- the announcer and shutdown (callbacks the daemon provides) ---- */

static struct mlv_ctl_announce_vip ann_vips[] = {
	{ .name = "web", .serving = true, .announced = true, .usable = 3,
	  .min_backends = 2 },
};
static struct mlv_ctl_announce ann = {
	.enabled = true, .open = true, .table = 100, .device = "mlv-vips",
	.routes = 1, .announces = 3, .withdraws = 2, .errors = 1,
	.last_error = "announcing 192.0.2.9 (table 100): Operation not permitted",
	.n_vips = 1, .vips = ann_vips,
};
static int shutdowns;
static bool shutdown_now;

static const struct mlv_ctl_announce *ann_view(void *ctx)
{
	(void)ctx;
	return &ann;
}

/* what the daemon does: withdraw and drain (ann.stopping), or stop now */
static enum mlv_err do_shutdown(void *ctx, bool now, char *detail, size_t len)
{
	(void)ctx;
	(void)detail;
	(void)len;
	shutdowns++;
	shutdown_now = now;
	ann.stopping = !now;
	ann.stop_in_ms = now ? 0 : 2000;
	return MLV_OK;
}

static void test_announce_and_shutdown(void **state)
{
	struct ctl_fx *fx = *state;
	json_t *r, *a, *v;

	/* without the callbacks: null, and shutdown is refused */
	ctl_fx_start(fx, (struct mlv_ctl_server_params){ .mode = 0600 });
	r = call_ok(fx, "{\"command\": \"status\"}");
	assert_true(json_is_null(json_object_get(r, "announce")));
	json_decref(r);
	expect_fail(fx, "{\"command\": \"shutdown\"}", "shutdown not available");
	ctl_fx_stop(fx);

	fx->st.announce = ann_view;
	fx->st.shutdown = do_shutdown;
	ctl_fx_start(fx, (struct mlv_ctl_server_params){ .mode = 0600 });
	r = call_ok(fx, "{\"command\": \"status\"}");
	a = json_object_get(r, "announce");
	assert_true(json_is_true(json_object_get(a, "enabled")));
	assert_int_equal(int_of(a, "table"), 100);
	assert_string_equal(text_of(a, "device"), "mlv-vips");
	assert_int_equal(int_of(a, "routes"), 1);
	assert_int_equal(int_of(a, "announces"), 3);
	assert_int_equal(int_of(a, "withdraws"), 2);
	assert_int_equal(int_of(a, "errors"), 1);
	assert_string_equal(text_of(a, "last_error"), ann.last_error);
	assert_true(json_is_false(json_object_get(a, "stopping")));
	assert_true(json_is_null(json_object_get(a, "stop_in_ms")));
	v = json_array_get(json_object_get(a, "vips"), 0);
	assert_string_equal(text_of(v, "name"), "web");
	assert_true(json_is_true(json_object_get(v, "serving")));
	assert_true(json_is_true(json_object_get(v, "announced")));
	assert_int_equal(int_of(v, "usable"), 3);
	assert_int_equal(int_of(v, "min_backends"), 2);
	json_decref(r);

	/* graceful: the reply carries the countdown, status shows it */
	r = call_ok(fx, "{\"command\": \"shutdown\"}");
	assert_int_equal(shutdowns, 1);
	assert_false(shutdown_now);
	assert_true(json_is_false(json_object_get(r, "now")));
	assert_int_equal(int_of(r, "stop_in_ms"), 2000);
	json_decref(r);
	r = call_ok(fx, "{\"command\": \"status\"}");
	a = json_object_get(r, "announce");
	assert_true(json_is_true(json_object_get(a, "stopping")));
	assert_int_equal(int_of(a, "stop_in_ms"), 2000);
	json_decref(r);
	/* --now */
	r = call_ok(fx, "{\"command\": \"shutdown\", \"args\": {\"now\": true}}");
	assert_int_equal(shutdowns, 2);
	assert_true(shutdown_now);
	assert_true(json_is_true(json_object_get(r, "now")));
	assert_true(json_is_null(json_object_get(r, "stop_in_ms")));
	json_decref(r);
	expect_fail(fx, "{\"command\": \"shutdown\", \"args\": {\"now\": 1}}",
		    "now");
	assert_int_equal(shutdowns, 2);
}

static void test_status(void **state)
{
	struct ctl_fx *fx = *state;
	json_t *r = call_ok(fx, "{\"command\": \"status\", \"id\": [1, \"x\"]}");
	json_t *port = json_array_get(json_object_get(r, "ports"), 0);
	json_t *reloads = json_object_get(r, "reloads");

	assert_true(strlen(text_of(r, "version")) > 0);
	assert_int_equal(int_of(r, "pid"), getpid());
	assert_true(json_number_value(json_object_get(r, "uptime_s")) >= 0);
	assert_int_equal(int_of(r, "generation"), fx->gen->number);
	assert_string_equal(text_of(r, "config"), fx->cfg->path);
	assert_int_equal(int_of(r, "workers"), FX_WORKERS);
	assert_int_equal(int_of(r, "vips"), 3);
	assert_int_equal(int_of(r, "backends"), 8);
	assert_int_equal(json_array_size(json_object_get(r, "ports")), 1);
	assert_string_equal(text_of(port, "name"), "ext");
	assert_string_equal(text_of(port, "device"), "net_null0");
	assert_string_equal(text_of(port, "address"), "10.99.0.1");
	assert_string_equal(text_of(port, "address6"), "fd00:99::1");
	assert_int_equal(int_of(port, "mtu"), 1500);
	assert_int_equal(json_array_size(json_object_get(r, "overrides")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "down")), 0);
	assert_int_equal(int_of(reloads, "ok"), 0);
	assert_int_equal(int_of(reloads, "failed"), 0);
	assert_true(json_is_object(json_object_get(r, "control")));
	/* the request's id comes back as it was */
	json_t *id = json_pack("[is]", 1, "x");

	assert_true(json_equal(json_object_get(r, "id"), id));
	json_decref(id);
	json_decref(r);
}

/* ---- vips, backends, stats ---- */

static void test_vips(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_generation *gen = fx->gen;
	json_t *r, *list;

	/* Packets counted by both workers, on different backends of each
	 * VIP, must come back summed per VIP. */
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];
		uint32_t first = mlv_gen_backend_index(gen, &v->backends[0]);
		uint32_t last = mlv_gen_backend_index(gen,
					&v->backends[v->n_backends - 1]);

		assert_true(v->n_backends >= 2);
		gen->backend_ctr[0][first].v[MLV_FLOW_PACKETS] = 3 + i;
		gen->backend_ctr[1][last].v[MLV_FLOW_PACKETS] = 40;
		gen->backend_ctr[1][first].v[MLV_FLOW_BYTES] = 400 * (i + 1);
		gen->backend_ctr[1][last].v[MLV_FLOW_BYTES] = 600 * (i + 1);
	}
	r = call_ok(fx, "{\"command\": \"vips\"}");
	list = json_object_get(r, "vips");
	assert_int_equal(json_array_size(list), gen->n_vips);
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];
		json_t *o = json_array_get(list, i);
		struct mlv_ip ip = { .family = v->family };
		char addr[MLV_IP_STRLEN], fp[32];

		memcpy(ip.bytes, v->address, 16);
		snprintf(fp, sizeof(fp), "0x%016llx", (unsigned long long)v->fingerprint);
		assert_string_equal(text_of(o, "name"), v->name);
		assert_string_equal(text_of(o, "address"),
				    mlv_ip_format(&ip, addr, sizeof(addr)));
		assert_int_equal(int_of(o, "port"), ntohs(v->port_be));
		assert_string_equal(text_of(o, "protocol"),
				    v->protocol == IPPROTO_TCP ? "tcp" : "udp");
		assert_string_equal(text_of(o, "forwarding"),
				    mlv_forwarding_name(v->forwarding));
		assert_int_equal(int_of(o, "table_size"), v->table_size);
		assert_string_equal(text_of(o, "fingerprint"), fp);
		assert_int_equal(int_of(o, "backends"), v->n_backends);
		assert_int_equal(int_of(o, "usable_backends"), v->n_usable);
		assert_int_equal(int_of(o, "acl_prefixes"), 0);
		/* mss_clamp: auto for TCP VIPs, off for UDP ones */
		assert_int_equal(int_of(o, "mss_clamp"), v->mss_clamp);
		assert_true((v->mss_clamp != 0) == (v->protocol == IPPROTO_TCP));
		assert_int_equal(int_of(o, "new_flows_per_second"), 0);
		assert_true(json_is_false(json_object_get(o, "quic")));
		assert_true(json_is_false(json_object_get(o, "echo_reply")));
		/* the fixture: no second chance, health {type: none} */
		assert_true(json_is_false(json_object_get(o, "second_chance")));
		assert_string_equal(text_of(o, "health_via"), "none");
		/* the fixture's web VIP (ipip) takes its outer IPv4
		 * sources from a prefix; no VIP has an IPv6 one */
		if (strcmp(v->name, "web") == 0)
			assert_string_equal(text_of(o, "ipip_source"), "10.77.0.16/28");
		else
			assert_true(json_is_null(json_object_get(o, "ipip_source")));
		assert_true(json_is_null(json_object_get(o, "ipip_source6")));
		assert_int_equal(int_of(o, "packets"), 43 + i);
		assert_int_equal(int_of(o, "bytes"), 1000 * (i + 1));
		assert_int_equal(int_of(o, "new_flows"), 0);
	}
	assert_string_equal(text_of(json_array_get(list, 1), "address"), "2001:db8::10");
	json_decref(r);
}

/* Drops that belong to a VIP: summed over the workers into that VIP's
 * "drops" in vips, listed in stats' vip_drops only for VIPs that dropped,
 * and kept across a new generation (folded like the counters). */
static void test_vip_drops(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *web = gen_vip(fx, "web");
	uint32_t i = mlv_gen_vip_index(fx->gen, web);
	char req[256];
	json_t *r, *o, *all;
	size_t k;

	fx->gen->vip_drops[0][i].v[MLV_VDROP_NO_BACKEND] = 4;
	fx->gen->vip_drops[1][i].v[MLV_VDROP_NO_BACKEND] = 3;
	fx->gen->vip_drops[1][i].v[MLV_VDROP_TOO_BIG] = 2;
	for (int round = 0; round < 2; round++) {
		r = call_ok(fx, "{\"command\": \"vips\"}");
		json_array_foreach(json_object_get(r, "vips"), k, o) {
			const json_t *d = json_object_get(o, "drops");
			bool is_web = strcmp(text_of(o, "name"), "web") == 0;

			assert_int_equal(json_object_size(d), MLV_VDROP__COUNT);
			assert_int_equal(int_of(d, "no_backend"), is_web ? 7 : 0);
			assert_int_equal(int_of(d, "too_big"), is_web ? 2 : 0);
			assert_int_equal(int_of(d, "icmp_echo"), 0);
		}
		json_decref(r);
		r = call_ok(fx, "{\"command\": \"stats\"}");
		all = json_object_get(r, "vip_drops");
		assert_int_equal(json_object_size(all), 1);
		assert_int_equal(int_of(json_object_get(all, "web"), "no_backend"), 7);
		json_decref(r);
		/* a new generation: the old one's rows are folded, not lost */
		snprintf(req, sizeof(req), "{\"command\": \"weight\", \"args\": "
			 "{\"vip\": \"web\", \"backend\": \"%s\", \"weight\": %d}}",
			 web->backends[0].name, 50 + round);
		json_decref(call_ok(fx, req));
		web = gen_vip(fx, "web");
		i = mlv_gen_vip_index(fx->gen, web);
		assert_int_equal(fx->gen->vip_drops[0][i].v[MLV_VDROP_NO_BACKEND], 0);
	}
}

/* Worker w tracks n established flows of the VIP's backend i, as its
 * conntrack table would count them (backend and VIP). */
static void set_active(struct ctl_fx *fx, const struct mlv_gen_vip *v,
		       uint32_t i, uint32_t w, uint32_t n)
{
	struct mlv_flow_tally *t = fx->tally[w];
	uint32_t *be = &t[mlv_tally_slot(v->backends[i].uid)].n[MLV_TALLY_ACTIVE];

	t[mlv_tally_slot(v->uid)].vip_flows += n - *be;
	*be = n;
}

static void test_backends(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *web = gen_vip(fx, "web");
	json_t *r, *list, *b;
	json_int_t total = 0;
	size_t i;

	fx->gen->backend_ctr[0][mlv_gen_backend_index(fx->gen, &web->backends[1])]
		.v[MLV_FLOW_NEW_FLOWS] = 5;
	fx->gen->backend_ctr[1][mlv_gen_backend_index(fx->gen, &web->backends[1])]
		.v[MLV_FLOW_NEW_FLOWS] = 6;
	/* active connections: the sum over workers of the generation's counts */
	set_active(fx, web, 1, 0, 3);
	set_active(fx, web, 1, 1, 4);
	set_active(fx, web, 3, 1, 2);
	/* and opening or closing ones, counted apart */
	fx->tally[1][mlv_tally_slot(web->backends[1].uid)].n[MLV_TALLY_INACTIVE] = 5;
	r = call_ok(fx, "{\"command\": \"backends\"}");
	assert_int_equal(json_array_size(json_object_get(r, "backends")),
			 fx->gen->n_all_backends);
	json_decref(r);

	r = call_ok(fx, "{\"command\": \"backends\", \"args\": {\"vip\": \"web\"}}");
	list = json_object_get(r, "backends");
	assert_int_equal(json_array_size(list), 4);
	json_array_foreach(list, i, b) {
		const struct mlv_gen_backend *gb = &web->backends[i];
		char addr[MLV_IP_STRLEN];

		assert_string_equal(text_of(b, "vip"), "web");
		assert_string_equal(text_of(b, "name"), gb->name);
		assert_string_equal(text_of(b, "address"),
				    mlv_ip_format(&gb->address, addr, sizeof(addr)));
		assert_int_equal(int_of(b, "weight"), gb->weight);
		assert_int_equal(int_of(b, "slots"), slots_of(web, (uint32_t)i));
		assert_true(json_is_true(json_object_get(b, "healthy")));
		assert_true(json_is_null(json_object_get(b, "override")));
		total += int_of(b, "slots");
	}
	assert_int_equal(total, web->table_size);
	/* web-3 is drained in the config: known, no slots */
	b = json_array_get(list, 2);
	assert_string_equal(text_of(b, "name"), "web-3");
	assert_string_equal(text_of(b, "state"), "draining");
	assert_int_equal(int_of(b, "slots"), 0);
	assert_string_equal(text_of(json_array_get(list, 0), "state"), "active");
	assert_int_equal(int_of(json_array_get(list, 1), "new_flows"), 11);
	assert_int_equal(int_of(json_array_get(list, 0), "new_flows"), 0);
	assert_int_equal(int_of(json_array_get(list, 0), "active_connections"), 0);
	assert_int_equal(int_of(json_array_get(list, 1), "active_connections"), 3 + 4);
	assert_int_equal(int_of(json_array_get(list, 1), "inactive_connections"), 5);
	assert_int_equal(int_of(json_array_get(list, 0), "inactive_connections"), 0);
	assert_int_equal(int_of(json_array_get(list, 3), "active_connections"), 2);
	/* weight 200 against 100: about twice the slots */
	assert_true(int_of(json_array_get(list, 3), "slots") >
		    int_of(json_array_get(list, 0), "slots") * 3 / 2);
	json_decref(r);

	expect_fail(fx, "{\"command\": \"backends\", \"args\": {\"vip\": \"nope\"}}",
		    "no VIP named \"nope\"");
}

static void test_health_down_shown(void **state)
{
	struct ctl_fx *fx = *state;
	json_t *r, *b, *down;

	/* the fake health checker takes web-2 down; a reload rebuilds */
	snprintf(fx->down_vip, sizeof(fx->down_vip), "web");
	snprintf(fx->down_backend, sizeof(fx->down_backend), "web-2");
	json_decref(call_ok(fx, "{\"command\": \"reload\"}"));
	r = call_ok(fx, "{\"command\": \"backends\", \"args\": {\"vip\": \"web\"}}");
	b = json_array_get(json_object_get(r, "backends"), 1);
	assert_string_equal(text_of(b, "name"), "web-2");
	assert_string_equal(text_of(b, "state"), "down");
	assert_true(json_is_false(json_object_get(b, "healthy")));
	assert_int_equal(int_of(b, "slots"), 0);
	json_decref(r);
	r = call_ok(fx, "{\"command\": \"status\"}");
	down = json_object_get(r, "down");
	assert_int_equal(json_array_size(down), 1);
	assert_string_equal(text_of(json_array_get(down, 0), "backend"), "web-2");
	json_decref(r);
}

static void test_stats(void **state)
{
	struct ctl_fx *fx = *state;
	json_t *r, *ctr, *drops, *pw, *ct;
	uint64_t drop_total = 0;

	for (int w = 0; w < FX_WORKERS; w++) {
		for (int c = 0; c < MLV_CTR__COUNT; c++)
			fx->ctr[w].ctr[c] = (uint64_t)(100 * (w + 1) + c);
		for (int d = 0; d < MLV_DROP__COUNT; d++) {
			fx->ctr[w].drop[d] = (uint64_t)(w + 2 * d);
			drop_total += (uint64_t)(w + 2 * d);
		}
	}
	r = call_ok(fx, "{\"command\": \"stats\"}");
	ctr = json_object_get(r, "counters");
	drops = json_object_get(r, "drops");
	assert_int_equal(json_object_size(ctr), MLV_CTR__COUNT);
	for (int c = 0; c < MLV_CTR__COUNT; c++)
		assert_int_equal(int_of(ctr, mlv_worker_counter_name(c)), 300 + 2 * c);
	assert_int_equal(json_object_size(drops), MLV_DROP__COUNT + 1);
	for (int d = 0; d < MLV_DROP__COUNT; d++)
		assert_int_equal(int_of(drops, mlv_drop_reason_name(d)), 1 + 4 * d);
	assert_int_equal(int_of(drops, "total"), drop_total);
	ct = json_object_get(r, "conntrack");
	assert_int_equal(int_of(ct, "capacity"),
			 mlv_ct_capacity(fx->ct[0]) + mlv_ct_capacity(fx->ct[1]));
	assert_int_equal(int_of(ct, "occupancy"), 0);
	assert_true(int_of(r, "time_ns") > 0);
	assert_null(json_object_get(r, "per_worker"));
	json_decref(r);

	r = call_ok(fx, "{\"command\": \"stats\", \"args\": {\"per_worker\": true}}");
	pw = json_object_get(r, "per_worker");
	assert_int_equal(json_array_size(pw), FX_WORKERS);
	for (int w = 0; w < FX_WORKERS; w++) {
		json_t *o = json_array_get(pw, (size_t)w);

		assert_int_equal(int_of(o, "worker"), w);
		assert_int_equal(int_of(json_object_get(o, "counters"), "rx_packets"),
				 100 * (w + 1) + MLV_CTR_RX_PACKETS);
		assert_int_equal(int_of(json_object_get(o, "drops"), "not_vip"),
				 w + 2 * MLV_DROP_NOT_VIP);
		assert_int_equal(int_of(json_object_get(o, "conntrack"), "capacity"),
				 mlv_ct_capacity(fx->ct[w]));
	}
	json_decref(r);
}

/* Rates come from the daemon's samples, not from the reply's moment:
 * null until two samples exist, then exactly delta / interval. */
static void test_stats_rates(void **state)
{
	struct ctl_fx *fx = *state;
	const uint64_t t0 = 5000000000ull, interval_ns = 2000000000ull;
	json_t *r, *rates, *drops;
	uint64_t drop_delta = 0;

	for (int w = 0; w < FX_WORKERS; w++) {
		for (int c = 0; c < MLV_CTR__COUNT; c++)
			fx->ctr[w].ctr[c] = (uint64_t)(1000 * (w + 1) + c);
		for (int d = 0; d < MLV_DROP__COUNT; d++)
			fx->ctr[w].drop[d] = (uint64_t)(50 + w + d);
	}
	r = call_ok(fx, "{\"command\": \"stats\"}");
	assert_true(json_is_null(json_object_get(r, "rates")));
	json_decref(r);

	mlv_ctl_sample(&fx->st, t0);
	r = call_ok(fx, "{\"command\": \"stats\"}");
	assert_true(json_is_null(json_object_get(r, "rates")));
	json_decref(r);
	/* a sample that does not move time forward is ignored */
	mlv_ctl_sample(&fx->st, t0);

	/* worker w's counter c grows by (w + 1) * (c + 1): the sum by
	 * 3 * (c + 1); drop d by 2 * d + 1 per worker; one drop reason
	 * goes backwards and must rate 0, not wrap */
	for (int w = 0; w < FX_WORKERS; w++) {
		for (int c = 0; c < MLV_CTR__COUNT; c++)
			fx->ctr[w].ctr[c] += (uint64_t)((w + 1) * (c + 1));
		for (int d = 1; d < MLV_DROP__COUNT; d++) {
			fx->ctr[w].drop[d] += (uint64_t)(2 * d + 1);
			drop_delta += (uint64_t)(2 * d + 1);
		}
		fx->ctr[w].drop[0] -= 1;
	}
	drop_delta -= FX_WORKERS;   /* the total counts drop 0 going back */
	mlv_ctl_sample(&fx->st, t0 + interval_ns);

	r = call_ok(fx, "{\"command\": \"stats\"}");
	rates = json_object_get(r, "rates");
	assert_true(json_is_object(rates));
	assert_true(json_real_value(json_object_get(rates, "interval_s")) == 2.0);
	for (int c = 0; c < MLV_CTR__COUNT; c++) {
		json_t *v = json_object_get(rates, mlv_worker_counter_name(c));

		assert_true(json_is_number(v));
		assert_true(json_number_value(v) == (double)(3 * (c + 1)) / 2.0);
	}
	drops = json_object_get(rates, "drops");
	assert_int_equal(json_object_size(drops), MLV_DROP__COUNT + 1);
	assert_true(json_number_value(json_object_get(drops,
			mlv_drop_reason_name(0))) == 0.0);
	for (int d = 1; d < MLV_DROP__COUNT; d++)
		assert_true(json_number_value(json_object_get(drops,
				mlv_drop_reason_name(d))) ==
			    (double)(FX_WORKERS * (2 * d + 1)) / 2.0);
	assert_true(json_number_value(json_object_get(drops, "total")) ==
		    (double)drop_delta / 2.0);
	json_decref(r);
}

/* ---- table, lookup, whatif ---- */

/* A dump of 655,373 slots is made in steps: through the server it
 * arrives whole and equal to the table; polled by hand, a reload between
 * two steps ends it with an error, without the slots. */
static void test_table_dump_steps(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *big = gen_vip(fx, "big");
	const struct mlv_ctl_peer root = { .uid = 0, .admin = true };
	struct mlv_ctl_deferred def = { 0 };
	struct mlv_ctl_member m;
	json_t *r, *slots, *req, *reply = NULL;
	uint32_t number = fx->gen->number;
	char want[64];

	r = call_ok(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"big\", \"dump\": true}}");
	slots = json_object_get(r, "slots");
	assert_int_equal(json_array_size(slots), big->table_size);
	for (uint32_t i = 0; i < big->table_size; i++)
		assert_int_equal(json_integer_value(json_array_get(slots, i)),
				 big->table[i]);
	assert_int_equal(int_of(r, "table_size"), big->table_size);
	json_decref(r);

	/* by hand, on this thread: the server thread waits for a request */
	req = json_pack("{s:s, s:{s:s, s:b}}", "command", "table", "args",
			"vip", "big", "dump", 1);
	assert_non_null(req);
	assert_null(mlv_ctl_handle(req, &root, &fx->st, &def));
	json_decref(req);
	assert_non_null(def.poll);
	assert_true(def.progress);
	assert_false(def.poll(def.arg, false, &reply));   /* steps to go */
	json_decref(call_ok(fx, "{\"command\": \"reload\"}"));
	assert_int_equal(fx->gen->number, number + 1);
	assert_true(def.poll(def.arg, false, &reply));
	snprintf(want, sizeof(want), "the generation changed from %u", number);
	assert_false(ctl_ok(reply));
	assert_non_null(strstr(ctl_error(reply), want));
	assert_false(def.member(def.arg, &m));
	json_decref(reply);
	def.release(def.arg);
}

static void test_table(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *web = gen_vip(fx, "web");
	json_t *r, *list, *slots, *b;
	char fp[32];
	size_t i;

	snprintf(fp, sizeof(fp), "0x%016llx", (unsigned long long)web->fingerprint);
	r = call_ok(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"web\"}}");
	assert_int_equal(int_of(r, "table_size"), 1009);
	assert_string_equal(text_of(r, "fingerprint"), fp);
	assert_int_equal(int_of(r, "unassigned"), 0);
	assert_null(json_object_get(r, "slots"));
	list = json_object_get(r, "backends");
	assert_int_equal(json_array_size(list), web->n_backends);
	json_array_foreach(list, i, b) {
		assert_string_equal(text_of(b, "name"), web->backends[i].name);
		assert_int_equal(int_of(b, "slots"), slots_of(web, (uint32_t)i));
		assert_float_equal(json_real_value(json_object_get(b, "share")),
				   (double)slots_of(web, (uint32_t)i) / 1009, 1e-9);
	}
	json_decref(r);

	r = call_ok(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"web\", \"dump\": true}}");
	slots = json_object_get(r, "slots");
	assert_int_equal(json_array_size(slots), web->table_size);
	for (i = 0; i < web->table_size; i++)
		assert_int_equal(json_integer_value(json_array_get(slots, i)),
				 web->table[i]);
	json_decref(r);
	expect_fail(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"nope\"}}",
		    "no VIP named");
}

/* The backend the data path would pick for a frame from src:sport:
 * parsed by the real parser, hashed, indexed. */
static const struct mlv_gen_backend *expected_backend(
	const struct mlv_gen_vip *v, int family, uint8_t proto, const char *src,
	uint16_t sport, struct mlv_flow_key *key_out, uint32_t *hash_out)
{
	struct frame_spec s;
	struct mlv_pkt pkt;
	uint8_t frame[256];
	uint32_t len, hash;

	frame_spec_init(&s, (uint8_t)family, proto);
	frame_addr(s.src, src);
	memcpy(s.dst, v->address, 16);
	s.sport = sport;
	s.dport = ntohs(v->port_be);
	len = frame_build(frame, sizeof(frame), &s, NULL, NULL);
	assert_true(len > 0);
	assert_int_equal(mlv_parse(frame, len, &pkt), MLV_PARSE_OK);
	hash = mlv_flow_hash(&pkt.key);
	*key_out = pkt.key;
	*hash_out = hash;
	return &v->backends[v->table[hash % v->table_size]];
}

static void test_lookup(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *web = gen_vip(fx, "web"), *dns = gen_vip(fx, "dns");
	const struct mlv_gen_backend *want;
	struct mlv_flow_key key;
	char addr[MLV_IP_STRLEN];
	uint32_t hash;
	json_t *r;
	/* several clients, so the check cannot pass by one lucky guess */
	static const uint16_t ports[] = { 1, 40000, 40001, 55555, 65535 };

	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
		want = expected_backend(web, 4, IPPROTO_TCP, "198.51.100.7",
					ports[i], &key, &hash);
		r = call(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
			 "\"src\": \"198.51.100.7\", \"sport\": %u}}", ports[i]);
		assert_true(ctl_ok(r));
		assert_string_equal(text_of(r, "backend"), want->name);
		assert_string_equal(text_of(r, "address"),
				    mlv_ip_format(&want->address, addr, sizeof(addr)));
		assert_string_equal(text_of(r, "src"), "198.51.100.7");
		assert_int_equal(int_of(r, "sport"), ports[i]);
		assert_int_equal(int_of(r, "hash"), hash);
		assert_int_equal(int_of(r, "slot"), hash % web->table_size);
		/* the fake workers were asked exactly this key */
		assert_memory_equal(&fx->asked, &key, sizeof(key));
		assert_true(json_is_false(json_object_get(r, "tracked")));
		json_decref(r);
	}
	want = expected_backend(dns, 6, IPPROTO_UDP, "2001:db8:1::5", 5353,
				&key, &hash);
	r = call_ok(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"dns\", "
		    "\"src\": \"2001:db8:1::5\", \"sport\": 5353}}");
	assert_string_equal(text_of(r, "backend"), want->name);
	json_decref(r);

	/* a tracked flow: worker 1 of the fake daemon has it, with web-1 */
	want = expected_backend(web, 4, IPPROTO_TCP, "198.51.100.9", 1234, &key, &hash);
	fx->tracked = true;
	fx->tracked_key = key;
	fx->tracked_uid = web->backends[0].uid;
	fx->tracked_worker = 1;
	fx->tracked_expires_ms = 4321;
	r = call_ok(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		    "\"src\": \"198.51.100.9\", \"sport\": 1234}}");
	{
		const json_t *t = json_object_get(r, "tracked");

		assert_true(json_is_object(t));
		assert_string_equal(text_of(t, "backend"), "web-1");
		assert_int_equal(int_of(t, "worker"), 1);
		assert_string_equal(text_of(t, "state"), "established");
		assert_int_equal(int_of(t, "expires_in_ms"), 4321);
	}
	json_decref(r);

	/* a uid no VIP has any more (its backend was removed): no name */
	fx->tracked_uid = UINT32_MAX;
	r = call_ok(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		    "\"src\": \"198.51.100.9\", \"sport\": 1234}}");
	assert_true(json_is_null(json_object_get(json_object_get(r, "tracked"),
						 "backend")));
	json_decref(r);

	expect_fail(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		    "\"src\": \"2001:db8::1\", \"sport\": 1}}", "is IPv4");
	expect_fail(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		    "\"src\": \"10.1\", \"sport\": 1}}", "not an IPv4 or IPv6 address");
	expect_fail(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		    "\"src\": \"10.0.0.1\"}}", "missing argument \"sport\"");
}

/* lookup on a range VIP: a port of the range that a one-port VIP on the
 * same address takes is refused, naming that VIP; its other ports are
 * answered. */
static void test_lookup_range_vip(void **state)
{
	static const char yaml[] =
		"dataplane:\n"
		"  workers: 2\n"
		"  ports:\n"
		"    - {name: ext, device: net_null0, address: 10.99.0.1,\n"
		"       address6: \"fd00:99::1\", next_hop: \"02:00:00:00:00:fe\"}\n"
		"defaults: {table_size: 1009, health: {type: none}}\n"
		"vips:\n"
		"  - {name: web, address: 192.0.2.10, port: 80, protocol: tcp,\n"
		"     backends: [{name: w1, address: 10.99.1.11}]}\n"
		"  - {name: webr, address: 192.0.2.10, port: 80-90, protocol: tcp,\n"
		"     backends: [{name: r1, address: 10.99.1.21}]}\n";
	struct ctl_fx *fx = *state;
	json_t *r;

	fx->reload_yaml = yaml;
	json_decref(call_ok(fx, "{\"command\": \"reload\"}"));
	expect_fail(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"webr\", "
		    "\"src\": \"198.51.100.9\", \"sport\": 1, \"dport\": 80}}",
		    "port 80 goes to VIP \"web\", not \"webr\"");
	expect_fail(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"webr\", "
		    "\"src\": \"198.51.100.9\", \"sport\": 1, \"dport\": 91}}",
		    "does not take port 91");
	r = call_ok(fx, "{\"command\": \"lookup\", \"args\": {\"vip\": \"webr\", "
		    "\"src\": \"198.51.100.9\", \"sport\": 1, \"dport\": 85}}");
	assert_string_equal(json_string_value(json_object_get(r, "backend")),
			    "r1");
	json_decref(r);
}

/* table with hops on a second-chance VIP: each slot's new-flow backend
 * and the hops its packets carry, the previous owners a table change
 * left (the window), and the errors for a VIP without second chance and
 * for hops with dump. */
static void test_table_second_chance_hops(void **state)
{
	static const char head[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: net_null0, address: 10.99.0.1,\n"
		"       next_hop: \"02:00:00:00:00:fe\"}\n"
		"defaults: {table_size: 1009, health: {type: none}}\n"
		"vips:\n"
		"  - {name: plain, address: 192.0.2.11, port: 80, protocol: tcp,\n"
		"     backends: [{name: p1, address: 10.99.1.31}]}\n"
		"  - name: sc\n    address: 192.0.2.10\n    port: 80\n"
		"    protocol: tcp\n    forwarding: gue\n"
		"    second_chance: {enabled: true, window: 10m}\n"
		"    backends:\n"
		"      - {name: s1, address: 10.99.1.11}\n"
		"      - {name: s2, address: 10.99.1.12}\n"
		"      - {name: s3, address: 10.99.1.13}\n";
	static char three[1024], four[1024];
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *v;
	json_t *r, *hops, *sc;
	uint32_t previous = 0;

	snprintf(three, sizeof(three), "%s", head);
	snprintf(four, sizeof(four), "%s%s", head,
		 "      - {name: s4, address: 10.99.1.14}\n");
	fx->reload_yaml = three;
	json_decref(call_ok(fx, "{\"command\": \"reload\"}"));
	fx->reload_yaml = four;
	json_decref(call_ok(fx, "{\"command\": \"reload\"}"));
	v = gen_vip(fx, "sc");
	assert_true(v->second_chance);
	assert_non_null(v->previous);
	for (uint32_t s = 0; s < v->table_size; s++)
		previous += v->previous[s] != MLV_GEN_NO_HOP;
	assert_true(previous > 0);

	r = call_ok(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"sc\", \"hops\": true}}");
	sc = json_object_get(r, "second_chance");
	assert_int_equal(int_of(sc, "window_ms"), 600000);
	assert_int_equal(int_of(sc, "previous_slots"), previous);
	assert_true(int_of(sc, "window_left_ms") > 590000);
	assert_true(int_of(sc, "window_left_ms") <= 600000);
	hops = json_object_get(r, "hops");
	assert_int_equal(json_array_size(hops), v->table_size);
	for (uint32_t s = 0; s < v->table_size; s++) {
		const json_t *row = json_array_get(hops, s);
		const struct mlv_gen_backend *b = &v->backends[v->table[s]];
		const struct mlv_gen_backend *h[MLV_SC_MAX_HOPS];
		uint32_t n = mlv_gen_sc_hops(v, s, b, h);

		assert_int_equal(json_array_size(row), 1 + n);
		assert_int_equal(json_integer_value(json_array_get(row, 0)),
				 v->table[s]);
		for (uint32_t k = 0; k < n; k++)
			assert_int_equal(json_integer_value(
				json_array_get(row, 1 + k)), h[k]->index);
		/* a slot s4 took names its previous owner first */
		if (v->previous[s] != MLV_GEN_NO_HOP)
			assert_int_equal(json_integer_value(
				json_array_get(row, 1)), v->previous[s]);
	}
	json_decref(r);

	r = call_ok(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"plain\"}}");
	assert_true(json_is_null(json_object_get(r, "second_chance")));
	json_decref(r);
	expect_fail(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"plain\", \"hops\": true}}",
		    "VIP \"plain\" has no second_chance");
	expect_fail(fx, "{\"command\": \"table\", \"args\": {\"vip\": \"sc\", \"hops\": true, \"dump\": true}}",
		    "ask for hops or dump, not both");
}

/* Slots whose backend name differs between the current table of v and
 * a table built from set[0..n) (any order: identity is the name). */
static uint32_t moved_by_name(const struct mlv_gen_vip *v,
			      const struct mlv_maglev_backend *set, uint32_t n)
{
	uint16_t *slots = malloc(v->table_size * sizeof(*slots));
	uint32_t moved = 0;

	assert_non_null(slots);
	assert_int_equal(mlv_maglev_build(set, n, v->table_size, slots, NULL), MLV_OK);
	for (uint32_t i = 0; i < v->table_size; i++)
		if (strcmp(v->backends[v->table[i]].name, set[slots[i]].name))
			moved++;
	free(slots);
	return moved;
}

/* The tracked connections of v that a table built from set would leave
 * on a backend whose slot changes owner, estimated backend by backend
 * from the two tables by name: tracked[i] (of v's backend i) times the
 * share of its slots whose owner changes, rounded to nearest; all of
 * them for a backend that owns no slot; none for skip. */
static uint64_t at_risk_by_name(const struct mlv_gen_vip *v,
				const struct mlv_maglev_backend *set, uint32_t n,
				const uint64_t *tracked, const char *skip)
{
	uint16_t *slots = malloc(v->table_size * sizeof(*slots));
	uint64_t risk = 0;

	assert_non_null(slots);
	assert_int_equal(mlv_maglev_build(set, n, v->table_size, slots, NULL),
			 MLV_OK);
	for (uint32_t b = 0; b < v->n_backends; b++) {
		uint64_t own = 0, lost = 0;

		if (skip && strcmp(v->backends[b].name, skip) == 0)
			continue;
		for (uint32_t i = 0; i < v->table_size; i++) {
			if (v->table[i] != b)
				continue;
			own++;
			lost += strcmp(set[slots[i]].name,
				       v->backends[b].name) != 0;
		}
		risk += own ? (tracked[b] * lost + own / 2) / own : tracked[b];
	}
	free(slots);
	return risk;
}

/* The reply waits for the workers: it comes once they answer, however
 * many polls that takes, and keeps the request's id. */
/* ---- conns ---- */

/* Worker w tracks a flow from 10.0.0.last:sport to vip for the backend
 * with uid (established TCP, or UDP), started at clock 0. */
static void add_flow(struct ctl_fx *fx, int w, const struct mlv_gen_vip *vip,
		     uint8_t last, uint16_t sport, uint32_t uid)
{
	struct mlv_flow_key k = { .family = 4, .proto = vip->protocol,
				  .dport = vip->port_be };
	struct mlv_ct_probe pr = { .hit = NULL };
	uint32_t h;

	k.src[0] = 10;
	k.src[3] = last;
	memcpy(k.dst, vip->address, 4);
	k.sport = htons(sport);
	h = mlv_flow_hash(&k);
	mlv_ct_probe(fx->ct[w], &k, h, 0, &pr);
	assert_null(pr.hit);
	assert_true(mlv_ct_insert(fx->ct[w], &k, h, 0, &pr, uid, 0, 0,
				  MLV_TCP_ACK));
}

/* The conns reply's flows, keyed "worker/client", into keys[]; returns
 * how many (each checked against the VIP and the fixture's clock). */
static size_t conn_keys(const json_t *r, char keys[][64], size_t cap)
{
	size_t i, n = 0;
	json_t *c;

	json_array_foreach(json_object_get(r, "conns"), i, c) {
		assert_true(n < cap);
		snprintf(keys[n++], 64, "%lld/%s", (long long)int_of(c, "worker"),
			 text_of(c, "client"));
	}
	assert_int_equal(int_of(r, "count"), n);
	return n;
}

static void test_conns(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *web = gen_vip(fx, "web");
	const struct mlv_gen_backend *w1 = mlv_gen_find_backend_named(web, "web-1");
	const struct mlv_gen_backend *w2 = mlv_gen_find_backend_named(web, "web-2");
	char all[64][64], page[64][64], vaddr[64], addr[INET_ADDRSTRLEN];
	char req[256];
	size_t n_all, got = 0;
	const char *cursor = NULL;
	json_t *r, *c;
	size_t i;

	assert_int_equal(web->family, 4);
	for (uint8_t i2 = 1; i2 <= 6; i2++)
		add_flow(fx, 0, web, i2, (uint16_t)(40000 + i2), i2 <= 3 ? w1->uid : w2->uid);
	for (uint8_t i2 = 7; i2 <= 11; i2++)
		add_flow(fx, 1, web, i2, (uint16_t)(40000 + i2), w2->uid);
	add_flow(fx, 1, web, 12, 40012, 999999);   /* a backend long gone */
	fx->list_now = 300;
	inet_ntop(AF_INET, web->address, addr, sizeof(addr));
	snprintf(vaddr, sizeof(vaddr), "%s:%u", addr, ntohs(web->port_be));

	r = call_ok(fx, "{\"command\": \"conns\", \"args\": {\"limit\": 1000}}");
	n_all = conn_keys(r, all, 64);
	assert_int_equal(n_all, 12);
	assert_true(json_is_null(json_object_get(r, "next")));
	assert_int_equal(int_of(r, "scanned"), 12);
	json_array_foreach(json_object_get(r, "conns"), i, c) {
		const char *client = text_of(c, "client");

		assert_string_equal(text_of(c, "vip"), "web");
		assert_string_equal(text_of(c, "vip_address"), vaddr);
		assert_int_equal(int_of(c, "idle_ms"), 300);
		assert_int_equal(int_of(c, "expires_in_ms"), 1000 - 300);
		if (strcmp(client, "10.0.0.2:40002") == 0) {
			assert_int_equal(int_of(c, "worker"), 0);
			assert_string_equal(text_of(c, "backend"), "web-1");
			assert_string_equal(text_of(c, "state"),
					    web->protocol == IPPROTO_TCP ?
					    "established" : "udp");
		}
		if (strcmp(client, "10.0.0.12:40012") == 0)
			assert_true(json_is_null(json_object_get(c, "backend")));
	}
	json_decref(r);

	/* filters */
	r = call_ok(fx, "{\"command\": \"conns\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-1\"}}");
	assert_int_equal(int_of(r, "count"), 3);
	json_decref(r);
	r = call_ok(fx, "{\"command\": \"conns\", \"args\": {\"backend\": \"web-2\"}}");
	assert_int_equal(int_of(r, "count"), 8);
	json_decref(r);

	/* pages of at most 5, then of 1 (less than a bucket holds): together
	 * every flow once, then no cursor */
	static const int limits[] = { 5, 1 };

	for (size_t li = 0; li < 2; li++) {
		got = 0;
		for (int round = 0; round < 40; round++) {
			size_t n;

			if (cursor)
				snprintf(req, sizeof(req), "{\"command\": \"conns\", "
					 "\"args\": {\"limit\": %d, \"cursor\": \"%s\"}}",
					 limits[li], cursor);
			else
				snprintf(req, sizeof(req), "{\"command\": \"conns\", "
					 "\"args\": {\"limit\": %d}}", limits[li]);
			r = call_ok(fx, req);
			n = conn_keys(r, page + got, 64 - got);
			assert_true(n <= (size_t)limits[li]);
			got += n;
			free((char *)cursor);
			cursor = json_is_string(json_object_get(r, "next")) ?
				 strdup(text_of(r, "next")) : NULL;
			json_decref(r);
			if (!cursor)
				break;
		}
		assert_null(cursor);
		assert_int_equal(got, n_all);
		for (size_t a = 0; a < n_all; a++) {
			int seen = 0;

			for (size_t b = 0; b < got; b++)
				seen += strcmp(all[a], page[b]) == 0;
			assert_int_equal(seen, 1);
		}
	}
	expect_fail(fx, "{\"command\": \"conns\", \"args\": {\"cursor\": \"x\"}}",
		    "bad cursor");
	expect_fail(fx, "{\"command\": \"conns\", \"args\": {\"cursor\": \"9:0\"}}",
		    "bad cursor");
	expect_fail(fx, "{\"command\": \"conns\", \"args\": {\"cursor\": \"0:1:2:3\"}}",
		    "bad cursor");
	expect_fail(fx, "{\"command\": \"conns\", \"args\": {\"vip\": \"nope\"}}",
		    "no VIP named");
}

/* An IPv6 flow: the client's last 32 bits as the address's last two
 * groups, marked incomplete; the VIP side is the VIP's own address and
 * port (the flow's VIP is known through its backend). */
static void test_conns_ipv6(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *dns = gen_vip(fx, "dns");
	const struct mlv_gen_backend *d1 = mlv_gen_find_backend_named(dns, "dns-1");
	struct mlv_flow_key k = { .family = 6, .proto = dns->protocol,
				  .dport = dns->port_be };
	struct mlv_ct_probe pr = { .hit = NULL };
	json_t *r, *c;
	uint32_t h;

	assert_int_equal(dns->family, 6);
	/* the client fd00:99::1:101, port 5353 */
	assert_int_equal(inet_pton(AF_INET6, "fd00:99::1:101", k.src), 1);
	memcpy(k.dst, dns->address, 16);
	k.sport = htons(5353);
	h = mlv_flow_hash(&k);
	mlv_ct_probe(fx->ct[0], &k, h, 0, &pr);
	assert_true(mlv_ct_insert(fx->ct[0], &k, h, 0, &pr, d1->uid, 0, 0, 0));
	r = call_ok(fx, "{\"command\": \"conns\", \"args\": {\"vip\": \"dns\"}}");
	assert_int_equal(int_of(r, "count"), 1);
	c = json_array_get(json_object_get(r, "conns"), 0);
	assert_int_equal(int_of(c, "family"), 6);
	assert_string_equal(text_of(c, "client"), "*:1:101");
	assert_true(json_is_false(json_object_get(c, "client_complete")));
	assert_string_equal(text_of(c, "vip"), "dns");
	assert_string_equal(text_of(c, "vip_address"), "[2001:db8::10]:53");
	assert_string_equal(text_of(c, "backend"), "dns-1");
	json_decref(r);
}

static void test_lookup_deferred_answer(void **state)
{
	struct ctl_fx *fx = *state;
	json_t *r;

	fx->answer_after = 3;
	fx->busy_posts = 2;       /* an earlier question still outstanding */
	r = call_ok(fx, "{\"id\": 7, \"command\": \"lookup\", \"args\": "
		    "{\"vip\": \"web\", \"src\": \"198.51.100.7\", \"sport\": 1}}");
	assert_true(json_is_false(json_object_get(r, "tracked")));
	assert_null(json_object_get(r, "tracked_error"));
	assert_int_equal(int_of(r, "id"), 7);
	json_decref(r);
	assert_int_equal(fx->busy_posts, 0);
	assert_int_equal(fx->track_posts, 1);
	/* three "not yet", then the answer */
	assert_int_equal(fx->track_polls, 4);
	assert_int_equal(fx->track_cancels, 0);
	r = ctl_server_counters(fx);
	assert_int_equal(int_of(r, "deferred"), 1);
	json_decref(r);
}

/* Workers that never answer: the reply still comes, without them, and
 * the question is given up. Meanwhile the same client's next request
 * waits its turn, and another client is served. */
static void test_lookup_deferred_timeout(void **state)
{
	struct ctl_fx *fx = *state;
	static const char two[] =
		"{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		"\"src\": \"198.51.100.7\", \"sport\": 1}}\n"
		"{\"command\": \"status\"}\n";
	int fd = ctl_connect(fx->path);
	char *line;
	json_t *r;

	fx->mute = true;
	assert_true(ctl_send(fd, two, sizeof(two) - 1));
	r = call_ok(fx, "{\"command\": \"vips\"}");
	json_decref(r);

	line = ctl_read_line(fd);
	assert_non_null(line);
	r = json_loads(line, 0, NULL);
	free(line);
	assert_non_null(r);
	assert_true(ctl_ok(r));
	assert_string_equal(text_of(r, "vip"), "web");
	assert_true(json_is_null(json_object_get(r, "tracked")));
	assert_string_equal(text_of(r, "tracked_error"), "workers did not answer");
	json_decref(r);
	assert_int_equal(fx->track_cancels, 1);
	assert_true(fx->track_polls >= 1);

	/* then the pipelined status, in order */
	line = ctl_read_line(fd);
	assert_non_null(line);
	r = json_loads(line, 0, NULL);
	free(line);
	assert_non_null(r);
	assert_true(ctl_ok(r));
	assert_non_null(json_object_get(r, "generation"));
	json_decref(r);
	close(fd);
}

static void test_whatif(void **state)
{
	struct ctl_fx *fx = *state;
	const struct mlv_gen_vip *web = gen_vip(fx, "web");
	struct mlv_maglev_backend set[8];
	uint32_t n = 0, moved;
	json_t *r, *tr;

	/* remove web-1: the others with their current weights */
	for (uint32_t i = 1; i < web->n_backends; i++)
		set[n++] = (struct mlv_maglev_backend){ web->backends[i].name,
							web->backends[i].weight };
	moved = moved_by_name(web, set, n);
	r = call_ok(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-1\"}}");
	assert_int_equal(int_of(r, "slots_moved"), moved);
	assert_int_equal(int_of(r, "backend_slots"), slots_of(web, 0));
	assert_float_equal(json_real_value(json_object_get(r, "fraction_moved")),
			   (double)moved / web->table_size, 1e-9);
	assert_true(moved >= slots_of(web, 0));   /* its own slots must move */
	/* nothing tracked: no connection moves, and no division by zero */
	tr = json_object_get(r, "tracked");
	assert_int_equal(int_of(tr, "connections"), 0);
	assert_int_equal(int_of(tr, "moved"), 0);
	assert_float_equal(json_real_value(json_object_get(tr, "fraction_moved")),
			   0.0, 1e-12);
	json_decref(r);

	/* tracked: web-1 5+1, web-2 2, web-4 0+4; 12 in all */
	set_active(fx, web, 0, 0, 5);
	set_active(fx, web, 0, 1, 1);
	set_active(fx, web, 1, 0, 2);
	set_active(fx, web, 3, 1, 4);
	r = call_ok(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-1\"}}");
	tr = json_object_get(r, "tracked");
	assert_int_equal(int_of(tr, "connections"), 12);
	assert_int_equal(int_of(tr, "moved"), 6);
	assert_float_equal(json_real_value(json_object_get(tr, "fraction_moved")),
			   6.0 / 12.0, 1e-9);
	assert_non_null(strstr(text_of(tr, "explanation"), "re-selected"));
	json_decref(r);
	r = call_ok(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-4\"}}");
	tr = json_object_get(r, "tracked");
	assert_int_equal(int_of(tr, "moved"), 4);
	assert_float_equal(json_real_value(json_object_get(tr, "fraction_moved")),
			   4.0 / 12.0, 1e-9);
	json_decref(r);

	/* add web-0 (sorts first) with weight 300, listed last here */
	n = 0;
	for (uint32_t i = 0; i < web->n_backends; i++)
		set[n++] = (struct mlv_maglev_backend){ web->backends[i].name,
							web->backends[i].weight };
	set[n++] = (struct mlv_maglev_backend){ "web-0", 300 };
	moved = moved_by_name(web, set, n);
	r = call_ok(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"add\", \"backend\": \"web-0\", \"weight\": 300}}");
	assert_int_equal(int_of(r, "slots_moved"), moved);
	assert_int_equal(int_of(r, "weight"), 300);
	assert_true(moved > 0);
	assert_true(int_of(r, "backend_slots") <= (json_int_t)moved);
	/* slots move, but conntrack keeps every tracked connection */
	tr = json_object_get(r, "tracked");
	assert_int_equal(int_of(tr, "connections"), 12);
	assert_int_equal(int_of(tr, "moved"), 0);
	assert_float_equal(json_real_value(json_object_get(tr, "fraction_moved")),
			   0.0, 1e-12);
	assert_non_null(strstr(text_of(tr, "explanation"), "pinned"));
	/* but pinned by this instance only: the ones whose slot web-0
	 * takes are at risk if they move; no second chance covers them */
	{
		const uint64_t tracked[4] = { 6, 2, 0, 4 };
		uint64_t want = at_risk_by_name(web, set, n, tracked, NULL);

		assert_true(want > 0 && want < 12);
		assert_int_equal(int_of(tr, "at_risk_if_moved"), want);
		assert_true(json_is_false(json_object_get(tr, "second_chance")));
		assert_non_null(strstr(text_of(tr, "at_risk_explanation"),
				       "reset"));
	}
	json_decref(r);
	/* removing web-1: its 6 are re-selected, not at risk; of the
	 * others, those whose slots change owner are */
	n = 0;
	for (uint32_t i = 1; i < web->n_backends; i++)
		set[n++] = (struct mlv_maglev_backend){ web->backends[i].name,
							web->backends[i].weight };
	r = call_ok(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-1\"}}");
	{
		const uint64_t tracked[4] = { 6, 2, 0, 4 };

		assert_int_equal(int_of(json_object_get(r, "tracked"),
					"at_risk_if_moved"),
				 at_risk_by_name(web, set, n, tracked, "web-1"));
	}
	json_decref(r);

	/* the drained web-3 owns nothing: removing it moves nothing */
	r = call_ok(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-3\"}}");
	assert_int_equal(int_of(r, "slots_moved"), 0);
	json_decref(r);

	expect_fail(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"add\", \"backend\": \"web-2\"}}", "already has");
	expect_fail(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-9\"}}", "no backend");
	expect_fail(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"remove\", \"backend\": \"web-1\", \"weight\": 5}}",
		    "only goes with add");
	expect_fail(fx, "{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", "
		    "\"action\": \"swap\", \"backend\": \"web-1\"}}", "remove|add");
}

/* ---- reload, overrides ---- */

static void test_reload(void **state)
{
	struct ctl_fx *fx = *state;
	json_t *r, *errors, *last;
	uint32_t before = fx->gen->number;
	char prefix[32];

	r = call_ok(fx, "{\"command\": \"reload\"}");
	assert_int_equal(int_of(r, "generation"), before + 1);
	assert_true(json_is_array(json_object_get(r, "warnings")));
	json_decref(r);

	fx->reload_fails = true;
	r = ctl_call1(fx, "{\"command\": \"reload\"}");
	assert_false(ctl_ok(r));
	assert_non_null(strstr(ctl_error(r), "unchanged"));
	assert_int_equal(int_of(r, "generation"), before + 1);
	errors = json_object_get(r, "errors");
	assert_true(json_array_size(errors) >= 2);
	for (size_t i = 0; i < json_array_size(errors); i++) {
		const char *e = json_string_value(json_array_get(errors, i));
		unsigned line, col;

		assert_non_null(e);
		/* file:line:col: error: message */
		assert_int_equal(sscanf(e, "bad.yaml:%u:%u: error: ", &line, &col), 2);
	}
	snprintf(prefix, sizeof(prefix), "%s", json_string_value(json_array_get(errors, 0)));
	json_decref(r);
	assert_int_equal(fx->gen->number, before + 1);
	assert_int_equal(fx->reload_calls, 2);

	r = call_ok(fx, "{\"command\": \"status\"}");
	assert_int_equal(int_of(json_object_get(r, "reloads"), "ok"), 1);
	assert_int_equal(int_of(json_object_get(r, "reloads"), "failed"), 1);
	last = json_object_get(json_object_get(r, "reloads"), "last");
	assert_int_equal(json_array_size(last), 2);
	assert_true(json_is_false(json_object_get(json_array_get(last, 0), "ok")));
	assert_memory_equal(text_of(json_array_get(last, 0), "error"), prefix,
			    strlen(prefix));
	assert_true(json_is_true(json_object_get(json_array_get(last, 1), "ok")));
	assert_int_equal(int_of(json_array_get(last, 1), "generation"), before + 1);
	json_decref(r);

	/* the log keeps the newest MLV_CTL_RELOAD_HISTORY */
	for (int i = 0; i < MLV_CTL_RELOAD_HISTORY + 2; i++)
		mlv_ctl_note_reload(&fx->st, true, 100 + (uint32_t)i, NULL);
	assert_int_equal(fx->st.reloads.n, MLV_CTL_RELOAD_HISTORY);
	r = call_ok(fx, "{\"command\": \"status\"}");
	last = json_object_get(json_object_get(r, "reloads"), "last");
	assert_int_equal(json_array_size(last), MLV_CTL_RELOAD_HISTORY);
	assert_int_equal(int_of(json_array_get(last, 0), "generation"),
			 100 + MLV_CTL_RELOAD_HISTORY + 1);
	json_decref(r);
}

/* dry_run and force reach the reload hook as its mode; a dry run
 * publishes nothing and stays out of the history; the plan comes back. */
static void test_reload_modes(void **state)
{
	struct ctl_fx *fx = *state;
	uint32_t before = fx->gen->number;
	json_t *r, *plan;

	r = call_ok(fx, "{\"command\": \"reload\", \"args\": {\"dry_run\": true}}");
	assert_int_equal(fx->reload_mode, MLV_CTL_RELOAD_CHECK);
	assert_true(json_is_false(json_object_get(r, "applied")));
	assert_int_equal(int_of(r, "generation"), before);
	plan = json_object_get(r, "plan");
	assert_int_equal(int_of(plan, "vips_before"), int_of(plan, "vips_after"));
	assert_int_equal(int_of(plan, "vips_added") + int_of(plan, "vips_removed") +
			 int_of(plan, "vips_changed"), 0);
	assert_int_equal(json_array_size(json_object_get(plan, "vips")), 0);
	json_decref(r);
	assert_int_equal(fx->gen->number, before);

	r = call_ok(fx, "{\"command\": \"reload\", \"args\": "
		    "{\"dry_run\": true, \"force\": true}}");
	assert_int_equal(fx->reload_mode, MLV_CTL_RELOAD_CHECK_FORCE);
	json_decref(r);

	r = call_ok(fx, "{\"command\": \"reload\", \"args\": {\"force\": true}}");
	assert_int_equal(fx->reload_mode, MLV_CTL_RELOAD_FORCE);
	assert_true(json_is_true(json_object_get(r, "applied")));
	assert_int_equal(int_of(r, "generation"), before + 1);
	assert_true(json_is_object(json_object_get(r, "plan")));
	json_decref(r);

	/* only the forced one is in the history */
	r = call_ok(fx, "{\"command\": \"status\"}");
	assert_int_equal(int_of(json_object_get(r, "reloads"), "ok"), 1);
	json_decref(r);

	/* a file that does not load has no plan */
	fx->reload_fails = true;
	r = ctl_call1(fx, "{\"command\": \"reload\", \"args\": {\"dry_run\": true}}");
	assert_false(ctl_ok(r));
	assert_non_null(strstr(ctl_error(r), "would fail"));
	assert_true(json_is_null(json_object_get(r, "plan")));
	json_decref(r);
	r = call_ok(fx, "{\"command\": \"status\"}");
	assert_int_equal(int_of(json_object_get(r, "reloads"), "failed"), 0);
	json_decref(r);

	expect_fail(fx, "{\"command\": \"reload\", \"args\": {\"forse\": true}}",
		    "forse");
}

/* A file other than the configured one reaches the hook only for a dry
 * run and as an absolute path; the hook learns who asked. */
static void test_reload_file(void **state)
{
	struct ctl_fx *fx = *state;
	uint32_t before = fx->gen->number;
	json_t *r;

	r = call_ok(fx, "{\"command\": \"reload\", \"args\": "
		    "{\"dry_run\": true, \"file\": \"/tmp/next.yaml\"}}");
	assert_int_equal(fx->reload_calls, 1);
	assert_int_equal(fx->reload_mode, MLV_CTL_RELOAD_CHECK);
	assert_string_equal(fx->reload_file, "/tmp/next.yaml");
	assert_int_equal(fx->reload_uid, getuid());
	assert_true(json_is_false(json_object_get(r, "applied")));
	json_decref(r);

	expect_fail(fx, "{\"command\": \"reload\", \"args\": "
		    "{\"file\": \"/tmp/next.yaml\"}}", "only planned (dry_run)");
	expect_fail(fx, "{\"command\": \"reload\", \"args\": "
		    "{\"dry_run\": true, \"file\": \"next.yaml\"}}",
		    "absolute path");
	expect_fail(fx, "{\"command\": \"reload\", \"args\": "
		    "{\"dry_run\": true, \"file\": \"\"}}", "non-empty");
	assert_int_equal(fx->reload_calls, 1);
	assert_int_equal(fx->gen->number, before);

	/* the configured file: no file reaches the hook */
	r = call_ok(fx, "{\"command\": \"reload\", \"args\": {\"dry_run\": true}}");
	assert_string_equal(fx->reload_file, "");
	json_decref(r);
}

static json_t *backend_entry(struct ctl_fx *fx, const char *name)
{
	json_t *r = call_ok(fx, "{\"command\": \"backends\", \"args\": {\"vip\": \"web\"}}");
	json_t *b, *found = NULL;
	size_t i;

	json_array_foreach(json_object_get(r, "backends"), i, b)
		if (!strcmp(text_of(b, "name"), name))
			found = json_incref(b);
	json_decref(r);
	assert_non_null(found);
	return found;
}

static void test_drain_undrain(void **state)
{
	struct ctl_fx *fx = *state;
	uint32_t before = fx->gen->number;
	json_t *r, *b;

	r = call_ok(fx, "{\"command\": \"drain\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-1\"}}");
	assert_string_equal(text_of(r, "applied"), "drain");
	assert_int_equal(int_of(r, "generation"), before + 1);
	assert_int_equal(json_array_size(json_object_get(r, "warnings")), 0);
	json_decref(r);
	assert_true(fx->ov[0].drain);
	b = backend_entry(fx, "web-1");
	assert_string_equal(text_of(b, "state"), "draining");
	assert_int_equal(int_of(b, "slots"), 0);
	assert_true(json_is_true(json_object_get(json_object_get(b, "override"), "drain")));
	json_decref(b);
	r = call_ok(fx, "{\"command\": \"status\"}");
	assert_int_equal(json_array_size(json_object_get(r, "overrides")), 1);
	json_decref(r);

	/* draining the last usable backends: allowed, and said */
	r = call_ok(fx, "{\"command\": \"drain\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-2\"}}");
	assert_int_equal(json_array_size(json_object_get(r, "warnings")), 0);
	json_decref(r);
	r = call_ok(fx, "{\"command\": \"drain\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-4\"}}");
	assert_int_equal(json_array_size(json_object_get(r, "warnings")), 1);
	assert_non_null(strstr(json_string_value(json_array_get(
		json_object_get(r, "warnings"), 0)), "VIP web has no usable backend left"));
	json_decref(r);
	json_decref(call_ok(fx, "{\"command\": \"undrain\", \"args\": {\"vip\": \"web\", "
			    "\"backend\": \"web-2\"}}"));
	json_decref(call_ok(fx, "{\"command\": \"undrain\", \"args\": {\"vip\": \"web\", "
			    "\"backend\": \"web-4\"}}"));

	json_decref(call_ok(fx, "{\"command\": \"undrain\", \"args\": {\"vip\": \"web\", "
			    "\"backend\": \"web-1\"}}"));
	b = backend_entry(fx, "web-1");
	assert_string_equal(text_of(b, "state"), "active");
	assert_true(int_of(b, "slots") > 0);
	json_decref(b);

	/* unknown names are refused before the daemon is asked */
	int calls = fx->override_calls;

	expect_fail(fx, "{\"command\": \"drain\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"nosuch\"}}", "no backend \"nosuch\"");
	expect_fail(fx, "{\"command\": \"drain\", \"args\": {\"vip\": \"nosuch\", "
		    "\"backend\": \"web-1\"}}", "no VIP named");
	assert_int_equal(fx->override_calls, calls);
}

static void test_weight(void **state)
{
	struct ctl_fx *fx = *state;
	const char *show = "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
			   "\"backend\": \"web-4\"}}";
	json_t *r;

	r = call_ok(fx, show);
	assert_int_equal(int_of(r, "configured"), 200);
	assert_int_equal(int_of(r, "weight"), 200);
	assert_true(json_is_null(json_object_get(r, "override")));
	json_decref(r);

	json_decref(call_ok(fx, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
			    "\"backend\": \"web-4\", \"weight\": 50}}"));
	r = call_ok(fx, show);
	assert_int_equal(int_of(r, "configured"), 200);
	assert_int_equal(int_of(r, "override"), 50);
	assert_int_equal(int_of(r, "weight"), 50);
	json_decref(r);

	json_decref(call_ok(fx, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
			    "\"backend\": \"web-4\", \"reset\": true}}"));
	r = call_ok(fx, show);
	assert_int_equal(int_of(r, "weight"), 200);
	assert_true(json_is_null(json_object_get(r, "override")));
	json_decref(r);

	expect_fail(fx, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-4\", \"weight\": 5, \"reset\": true}}", "not both");
	expect_fail(fx, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-4\", \"weight\": 1000001}}", "0 to 1000000");
	expect_fail(fx, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-4\", \"weight\": -1}}", "0 to 1000000");
}

/* ---- a daemon with nothing filled in ---- */

static void test_missing_state(void **state)
{
	static const char *const need_gen[] = {
		"{\"command\": \"vips\"}",
		"{\"command\": \"backends\"}",
		"{\"command\": \"table\", \"args\": {\"vip\": \"web\"}}",
		"{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", \"src\": \"1.2.3.4\", \"sport\": 1}}",
		"{\"command\": \"whatif\", \"args\": {\"vip\": \"web\", \"action\": \"remove\", \"backend\": \"a\"}}",
		"{\"command\": \"weight\", \"args\": {\"vip\": \"web\", \"backend\": \"a\"}}",
	};
	struct ctl_fx *fx = *state;
	json_t *r;

	memset(&fx->st, 0, sizeof(fx->st));
	ctl_fx_start(fx, (struct mlv_ctl_server_params){ .mode = 0600 });
	json_decref(call_ok(fx, "{\"command\": \"help\"}"));
	r = call_ok(fx, "{\"command\": \"status\"}");
	assert_true(json_is_null(json_object_get(r, "generation")));
	assert_int_equal(json_array_size(json_object_get(r, "ports")), 0);
	json_decref(r);
	for (size_t i = 0; i < sizeof(need_gen) / sizeof(need_gen[0]); i++)
		expect_fail(fx, need_gen[i], "no generation available");
	expect_fail(fx, "{\"command\": \"stats\"}", "not available");
	expect_fail(fx, "{\"command\": \"reload\"}", "not available");
	expect_fail(fx, "{\"command\": \"health\"}", "not available");
	expect_fail(fx, "{\"command\": \"drain\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"a\"}}", "not available");
	expect_fail(fx, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"a\", \"weight\": 1}}", "not available");
}

/* ---- the command-line mapping (maglevctl) ---- */

static json_t *argv_args(const char *cmd, int argc, const char *const *words,
			 char *err, size_t len)
{
	return mlv_ctl_args_from_argv(mlv_ctl_cmd_find(cmd), argc,
				      (char *const *)words, err, len);
}

static void test_command_line_mapping(void **state)
{
	const char *w1[] = { "web", "web-1", "50", "--reset" };
	const char *w2[] = { "web", "1.2.3.4", "70000" };
	const char *w3[] = { "web", "web-1", "x", "y" };
	const char *w4[] = { "--per-worker" };
	const char *w5[] = { "--per_worker" };
	const char *w6[] = { "web" };
	const char *w7[] = { "web", "--dump" };
	char err[256], syn[128];
	json_t *a;

	(void)state;
	json_t *want = json_pack("{s:s, s:s, s:i, s:b}", "vip", "web",
				 "backend", "web-1", "weight", 50, "reset", 1);

	a = argv_args("weight", 4, w1, err, sizeof(err));
	assert_non_null(a);
	assert_true(json_equal(a, want));
	json_decref(a);
	json_decref(want);
	assert_null(argv_args("lookup", 3, w2, err, sizeof(err)));
	assert_non_null(strstr(err, "SPORT must be a number from 0 to 65535"));
	assert_null(argv_args("weight", 4, w3, err, sizeof(err)));
	assert_non_null(strstr(err, "WEIGHT must be a number"));
	a = argv_args("stats", 1, w4, err, sizeof(err));
	assert_true(json_is_true(json_object_get(a, "per_worker")));
	json_decref(a);
	assert_null(argv_args("stats", 1, w5, err, sizeof(err)));
	assert_null(argv_args("lookup", 1, w6, err, sizeof(err)));
	assert_non_null(strstr(err, "missing argument \"src\""));
	assert_non_null(strstr(err, "usage: lookup VIP SRC SPORT"));
	assert_null(argv_args("vips", 1, w6, err, sizeof(err)));
	assert_non_null(strstr(err, "unexpected \"web\""));
	a = argv_args("table", 2, w7, err, sizeof(err));
	assert_true(json_is_true(json_object_get(a, "dump")));
	json_decref(a);

	/* any argument by name: --name VALUE or --name=VALUE, anywhere;
	 * the positional words fill the arguments not given by name */
	const char *w8[] = { "--backend", "web-2", "web", "--limit=7",
			     "--cursor", "1:5" };
	const char *w9[] = { "web", "--limit" };
	const char *w10[] = { "--per-worker=1" };
	const char *w11[] = { "--limit", "x" };

	want = json_pack("{s:s, s:s, s:i, s:s}", "vip", "web", "backend",
			 "web-2", "limit", 7, "cursor", "1:5");
	a = argv_args("conns", 6, w8, err, sizeof(err));
	assert_non_null(a);
	assert_true(json_equal(a, want));
	json_decref(a);
	json_decref(want);
	assert_null(argv_args("conns", 2, w9, err, sizeof(err)));
	assert_non_null(strstr(err, "--limit needs a value"));
	assert_null(argv_args("stats", 1, w10, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown option"));
	assert_null(argv_args("conns", 2, w11, err, sizeof(err)));
	assert_non_null(strstr(err, "must be a number"));
	const char *w12[] = { "--limit=3", "--limit", "4" };

	assert_null(argv_args("conns", 3, w12, err, sizeof(err)));
	assert_non_null(strstr(err, "limit given twice"));

	/* every command's table entry: required positionals come first, so
	 * positional words fill them in order */
	for (int i = 0; i < MLV_CTL_CMD__COUNT; i++) {
		const struct mlv_ctl_cmd_spec *c = &mlv_ctl_cmd_specs[i];
		bool optional_seen = false;

		assert_int_equal(c->id, i);
		assert_ptr_equal(mlv_ctl_cmd_find(c->name), c);
		for (uint32_t j = 0; j < c->n_args; j++) {
			if (c->args[j].type == MLV_CTL_ARG_FLAG)
				continue;
			if (c->args[j].required)
				assert_false(optional_seen);
			else
				optional_seen = true;
		}
	}
	assert_string_equal(mlv_ctl_synopsis(mlv_ctl_cmd_find("whatif"), syn, sizeof(syn)),
			    "whatif VIP remove|add BACKEND [WEIGHT]");
	assert_string_equal(mlv_ctl_synopsis(mlv_ctl_cmd_find("stats"), syn, sizeof(syn)),
			    "stats [--per-worker] [--ports]");
	/* truncation keeps the buffer terminated */
	assert_string_equal(mlv_ctl_synopsis(mlv_ctl_cmd_find("whatif"), syn, 7), "whatif");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_help, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_status, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_announce_and_shutdown, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vips, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_vip_drops, setup_running,
						teardown),
		cmocka_unit_test_setup_teardown(test_conns, setup_running,
						teardown),
		cmocka_unit_test_setup_teardown(test_conns_ipv6, setup_running,
						teardown),
		cmocka_unit_test_setup_teardown(test_backends, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_health_down_shown, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_stats_rates, setup_running,
						teardown),
		cmocka_unit_test_setup_teardown(test_table, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_table_dump_steps,
						setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_lookup, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_table_second_chance_hops,
						setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_range_vip,
						setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_deferred_answer,
						setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_deferred_timeout,
						setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_whatif, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_reload, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_reload_modes, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_reload_file, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_drain_undrain, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_weight, setup_running, teardown),
		cmocka_unit_test_setup_teardown(test_missing_state, setup, teardown),
		cmocka_unit_test(test_command_line_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
