/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl's human-readable output (render.h). Field names follow
 * docs/control-protocol.md; a field a reply lacks prints as "-". */
#include "tools/bin/maglevctl/render.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "dataplane/packet/counters.h"
#include "tools/bin/maglevctl/table.h"

/* ---- field access ---- */

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "-";
}

static bool has_int(const json_t *o, const char *key)
{
	return json_is_integer(json_object_get(o, key));
}

static long long num(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* An integer field as text, "-" if absent (e.g. counters without stats). */
static const char *num_text(const json_t *o, const char *key, char *buf,
			    size_t len)
{
	if (!has_int(o, key))
		return "-";
	snprintf(buf, len, "%lld", num(o, key));
	return buf;
}

static void print_duration(FILE *out, double s)
{
	unsigned long long t = (unsigned long long)s;

	if (t >= 86400)
		fprintf(out, "%llud", t / 86400);
	if (t >= 3600)
		fprintf(out, "%lluh", t / 3600 % 24);
	if (t >= 60)
		fprintf(out, "%llum", t / 60 % 60);
	fprintf(out, "%llus\n", t % 60);
}

/* ms as "1h2m3s", "4m47s", "12s" or "350ms", into buf. */
static const char *duration_text(char *buf, size_t len, long long ms)
{
	long long t = ms / 1000;
	size_t n = 0;

	if (ms < 1000) {
		snprintf(buf, len, "%lldms", ms < 0 ? 0 : ms);
		return buf;
	}
	buf[0] = '\0';
	if (t >= 3600)
		n += (size_t)snprintf(buf + n, len - n, "%lldh", t / 3600);
	if (t >= 60 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%lldm", t / 60 % 60);
	if (t % 60 && n < len)
		snprintf(buf + n, len - n, "%llds", t % 60);
	return buf;
}

/* The hops' summary before the slot list: slots by how many hops their
 * packets carry, and each backend by how many slots name it as a hop. */
static void hops_summary(const json_t *hops, const json_t *backends,
			 FILE *out)
{
	size_t n_b = json_array_size(backends), i, k;
	size_t by_count[8] = { 0 };
	size_t *as_hop = calloc(n_b + 1, sizeof(*as_hop));
	struct table t;
	json_t *row, *h;

	if (!as_hop)
		return;
	json_array_foreach(hops, i, row) {
		size_t nh = json_array_size(row) ? json_array_size(row) - 1 : 0;

		by_count[nh < 7 ? nh : 7]++;
		json_array_foreach(row, k, h) {
			json_int_t idx = json_integer_value(h);

			if (k > 0 && idx >= 0 && (size_t)idx < n_b)
				as_hop[idx]++;
		}
	}
	fprintf(out, "\nhops of %zu slots: %zu with two, %zu with one, %zu "
		"with none\n", json_array_size(hops), by_count[2], by_count[1],
		by_count[0]);
	table_init(&t, 2);
	table_cell(&t, "BACKEND");
	table_cell(&t, "HOP_IN_SLOTS");
	for (i = 0; i < n_b; i++) {
		table_cell(&t, "%s", str(json_array_get(backends, i), "name"));
		table_cell(&t, "%zu", as_hop[i]);
	}
	table_print(&t, out);
	table_free(&t);
	free(as_hop);
}

/* ---- status ---- */

static void ports_table(const json_t *ports, struct table *t)
{
	size_t i;
	json_t *p;

	table_init(t, 9);
	table_cell(t, "PORT");
	table_cell(t, "DEVICE");
	table_cell(t, "VLAN");
	table_cell(t, "ADDRESS");
	table_cell(t, "ADDRESS6");
	table_cell(t, "MTU");
	table_cell(t, "TX_PORT");
	table_cell(t, "MAC");
	table_cell(t, "NEXT_HOP");
	json_array_foreach(ports, i, p) {
		table_cell(t, "%s", str(p, "name"));
		table_cell(t, "%s", str(p, "device"));
		if (json_is_integer(json_object_get(p, "vlan")))
			table_cell(t, "%lld", num(p, "vlan"));
		else
			table_cell(t, "-");
		table_cell(t, "%s", str(p, "address"));
		table_cell(t, "%s", str(p, "address6"));
		table_cell(t, "%lld", num(p, "mtu"));
		table_cell(t, "%s", str(p, "tx_port"));
		table_cell(t, "%s", str(p, "mac"));
		table_cell(t, "%s", str(p, "next_hop"));
	}
}

static bool status_lists(const json_t *r, FILE *out)
{
	const json_t *ov = json_object_get(r, "overrides");
	const json_t *down = json_object_get(r, "down");
	const json_t *last = json_object_get(json_object_get(r, "reloads"), "last");
	struct table t;
	bool ok = true;
	size_t i;
	json_t *e;

	if (json_array_size(ov)) {
		fprintf(out, "\nruntime overrides:\n");
		table_init(&t, 4);
		table_cell(&t, "VIP");
		table_cell(&t, "BACKEND");
		table_cell(&t, "DRAIN");
		table_cell(&t, "WEIGHT");
		json_array_foreach(ov, i, e) {
			char w[24];

			table_cell(&t, "%s", str(e, "vip"));
			table_cell(&t, "%s", str(e, "backend"));
			table_cell(&t, "%s", json_is_true(json_object_get(e, "drain")) ?
				   "yes" : "no");
			table_cell(&t, "%s", num_text(e, "weight", w, sizeof(w)));
		}
		ok = table_print(&t, out) && ok;
		table_free(&t);
	}
	if (json_array_size(down)) {
		fprintf(out, "\ndown (health checks):\n");
		json_array_foreach(down, i, e)
			fprintf(out, "  %s/%s\n", str(e, "vip"), str(e, "backend"));
	}
	if (json_array_size(last)) {
		fprintf(out, "\nrecent reloads (newest first):\n");
		table_init(&t, 4);
		table_cell(&t, "TIME");
		table_cell(&t, "RESULT");
		table_cell(&t, "GENERATION");
		table_cell(&t, "ERROR");
		json_array_foreach(last, i, e) {
			time_t when = (time_t)num(e, "time");
			char tbuf[32];
			struct tm tm;

			strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S",
				 localtime_r(&when, &tm));
			table_cell(&t, "%s", tbuf);
			table_cell(&t, "%s", json_is_true(json_object_get(e, "ok")) ?
				   "ok" : "failed");
			table_cell(&t, "%lld", num(e, "generation"));
			table_cell(&t, "%s", str(e, "error"));
		}
		ok = table_print(&t, out) && ok;
		table_free(&t);
	}
	return ok;
}

/* The announcer's line and, while it announces, its VIPs. */
static bool status_announce(const json_t *a, FILE *out)
{
	const json_t *vips = json_object_get(a, "vips");
	struct table t;
	size_t i;
	json_t *v;
	bool ok;

	if (!json_is_object(a) || !json_is_true(json_object_get(a, "enabled"))) {
		fprintf(out, "announce    off\n");
		return true;
	}
	fprintf(out, "announce    table %lld via %s%s: %lld route(s), %lld "
		"announced, %lld withdrawn, %lld error(s)\n",
		num(a, "table"), str(a, "device"),
		json_is_true(json_object_get(a, "open")) ? "" : " (not open)",
		num(a, "routes"), num(a, "announces"), num(a, "withdraws"),
		num(a, "errors"));
	if (json_is_string(json_object_get(a, "last_error")))
		fprintf(out, "            last error: %s\n", str(a, "last_error"));
	if (json_is_true(json_object_get(a, "stopping")))
		fprintf(out, "stopping    routes withdrawn, exit in %.1f s\n",
			(double)num(a, "stop_in_ms") / 1000.0);
	if (!json_array_size(vips))
		return true;
	fprintf(out, "\n");
	table_init(&t, 4);
	table_cell(&t, "VIP");
	table_cell(&t, "ANNOUNCED");
	table_cell(&t, "SERVING");
	table_cell(&t, "USABLE/MIN");
	json_array_foreach(vips, i, v) {
		table_cell(&t, "%s", str(v, "name"));
		table_cell(&t, "%s", json_is_true(json_object_get(v, "announced")) ?
			   "yes" : "no");
		table_cell(&t, "%s", json_is_true(json_object_get(v, "serving")) ?
			   "yes" : "no");
		table_cell(&t, "%lld/%lld", num(v, "usable"), num(v, "min_backends"));
	}
	ok = table_print(&t, out);
	table_free(&t);
	return ok;
}

static bool render_shutdown(const json_t *r, FILE *out)
{
	if (json_is_true(json_object_get(r, "now")))
		fprintf(out, "stopping now\n");
	else
		fprintf(out, "routes withdrawn; forwarding for %.1f s, then "
			"stopping\n", (double)num(r, "stop_in_ms") / 1000.0);
	return true;
}

static bool render_status(const json_t *r, FILE *out)
{
	const json_t *reloads = json_object_get(r, "reloads");
	const json_t *ctl = json_object_get(r, "control");
	struct table t;
	char buf[24];
	bool ok;

	fprintf(out, "version     %s (pid %lld)\n", str(r, "version"), num(r, "pid"));
	fprintf(out, "uptime      ");
	print_duration(out, json_number_value(json_object_get(r, "uptime_s")));
	fprintf(out, "generation  %s\n", num_text(r, "generation", buf, sizeof(buf)));
	fprintf(out, "config      %s\n", str(r, "config"));
	fprintf(out, "workers     %lld\n", num(r, "workers"));
	fprintf(out, "vips        %lld (%lld backends)\n", num(r, "vips"),
		num(r, "backends"));
	fprintf(out, "reloads     %lld ok, %lld failed\n", num(reloads, "ok"),
		num(reloads, "failed"));
	if (json_is_object(ctl))
		fprintf(out, "control     %lld clients, %lld requests, %lld bad\n",
			num(ctl, "clients"), num(ctl, "requests"),
			num(ctl, "bad_requests"));
	{
		const json_t *pending = json_object_get(r, "restart_pending");
		size_t i;
		json_t *e;

		json_array_foreach(pending, i, e)
			fprintf(out, "%s%s (restart pending)\n",
				i ? "            " : "restart     ",
				json_is_string(e) ? json_string_value(e) : "?");
	}
	ok = status_announce(json_object_get(r, "announce"), out);
	fprintf(out, "\n");
	ports_table(json_object_get(r, "ports"), &t);
	ok = table_print(&t, out) && ok;
	table_free(&t);
	return status_lists(r, out) && ok;
}

/* ---- vips, backends ---- */

static void flow_cells(struct table *t, const json_t *o)
{
	char buf[24];

	for (int i = 0; i < MLV_FLOW__COUNT; i++)
		table_cell(t, "%s", num_text(o, mlv_flow_counter_name(
			(enum mlv_flow_counter)i), buf, sizeof(buf)));
}

static void flow_headers(struct table *t)
{
	for (int i = 0; i < MLV_FLOW__COUNT; i++) {
		char up[32];
		const char *n = mlv_flow_counter_name((enum mlv_flow_counter)i);
		size_t k;

		for (k = 0; n[k] && k + 1 < sizeof(up); k++)
			up[k] = (char)(n[k] >= 'a' && n[k] <= 'z' ? n[k] - 32 : n[k]);
		up[k] = '\0';
		table_cell(t, "%s", up);
	}
}

/* A VIP's drops (its "drops" object) summed. */
static long long drops_sum(const json_t *v)
{
	const char *k;
	json_t *n;
	long long sum = 0;

	json_object_foreach((json_t *)json_object_get(v, "drops"), k, n)
		sum += json_integer_value(n);
	return sum;
}

/* A VIP's features in one cell ("hash=source,mss=1440,acl=12,rate=200/s,
 * quic,ping"), "-" when it uses none. */
static void features_cell(struct table *t, const json_t *v)
{
	char buf[160] = "";
	size_t n = 0;
	const char *hash = json_string_value(json_object_get(v, "hash"));

#define ADD(...) \
	n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, \
			      __VA_ARGS__)
	if (hash && strcmp(hash, "5tuple") != 0)
		ADD("%shash=%s", n ? "," : "", hash);
	if (num(v, "mss_clamp") > 0)
		ADD("%smss=%lld", n ? "," : "", num(v, "mss_clamp"));
	if (num(v, "acl_prefixes") > 0)
		ADD("%sacl=%lld", n ? "," : "", num(v, "acl_prefixes"));
	if (num(v, "new_flows_per_second") > 0)
		ADD("%srate=%lld/s", n ? "," : "", num(v, "new_flows_per_second"));
	if (json_is_true(json_object_get(v, "quic")))
		ADD("%squic", n ? "," : "");
	if (json_is_true(json_object_get(v, "echo_reply")))
		ADD("%sping", n ? "," : "");
	if (json_is_true(json_object_get(v, "second_chance")))
		ADD("%ssecond-chance", n ? "," : "");
	if (json_is_string(json_object_get(v, "health_via")) &&
	    strcmp(str(v, "health_via"), "data_path") == 0)
		ADD("%scheck=data-path", n ? "," : "");
	if (json_is_string(json_object_get(v, "ipip_source")))
		ADD("%ssrc=%s", n ? "," : "", str(v, "ipip_source"));
	if (json_is_string(json_object_get(v, "ipip_source6")))
		ADD("%ssrc6=%s", n ? "," : "", str(v, "ipip_source6"));
#undef ADD
	table_cell(t, "%s", n ? buf : "-");
}

static bool render_vips(const json_t *r, FILE *out)
{
	struct table t;
	size_t i;
	json_t *v;
	bool ok;

	table_init(&t, 11 + MLV_FLOW__COUNT);
	table_cell(&t, "VIP");
	table_cell(&t, "ADDRESS");
	table_cell(&t, "PORT");
	table_cell(&t, "PROTO");
	table_cell(&t, "FORWARDING");
	table_cell(&t, "TABLE");
	table_cell(&t, "BACKENDS");
	table_cell(&t, "USABLE");
	table_cell(&t, "FEATURES");
	flow_headers(&t);
	table_cell(&t, "DROPS");
	table_cell(&t, "FINGERPRINT");
	json_array_foreach(json_object_get(r, "vips"), i, v) {
		table_cell(&t, "%s", str(v, "name"));
		table_cell(&t, "%s", str(v, "address"));
		if (json_object_get(v, "ports"))   /* "8000-8100", "any" */
			table_cell(&t, "%s", str(v, "ports"));
		else
			table_cell(&t, "%lld", num(v, "port"));
		table_cell(&t, "%s", str(v, "protocol"));
		table_cell(&t, "%s", str(v, "forwarding"));
		table_cell(&t, "%lld", num(v, "table_size"));
		table_cell(&t, "%lld", num(v, "backends"));
		table_cell(&t, "%lld", num(v, "usable_backends"));
		features_cell(&t, v);
		flow_cells(&t, v);
		table_cell(&t, "%lld", drops_sum(v));
		table_cell(&t, "%s", str(v, "fingerprint"));
	}
	ok = table_print(&t, out);
	table_free(&t);
	return ok;
}

static void override_cell(struct table *t, const json_t *ov)
{
	const json_t *w = json_object_get(ov, "weight");

	if (!json_is_object(ov))
		table_cell(t, "-");
	else if (json_is_true(json_object_get(ov, "drain")) && json_is_integer(w))
		table_cell(t, "drain,weight=%lld", (long long)json_integer_value(w));
	else if (json_is_true(json_object_get(ov, "drain")))
		table_cell(t, "drain");
	else
		table_cell(t, "weight=%lld", (long long)json_integer_value(w));
}

static bool render_backends(const json_t *r, FILE *out)
{
	struct table t;
	size_t i;
	json_t *b;
	bool ok;

	table_init(&t, 9 + MLV_FLOW__COUNT);
	table_cell(&t, "VIP");
	table_cell(&t, "BACKEND");
	table_cell(&t, "ADDRESS");
	table_cell(&t, "WEIGHT");
	table_cell(&t, "STATE");
	table_cell(&t, "SLOTS");
	table_cell(&t, "ACTIVE");
	table_cell(&t, "INACTIVE");
	flow_headers(&t);
	table_cell(&t, "OVERRIDE");
	json_array_foreach(json_object_get(r, "backends"), i, b) {
		table_cell(&t, "%s", str(b, "vip"));
		table_cell(&t, "%s", str(b, "name"));
		table_cell(&t, "%s", str(b, "address"));
		table_cell(&t, "%lld", num(b, "weight"));
		table_cell(&t, "%s", str(b, "state"));
		table_cell(&t, "%lld", num(b, "slots"));
		table_cell(&t, "%lld", num(b, "active_connections"));
		table_cell(&t, "%lld", num(b, "inactive_connections"));
		flow_cells(&t, b);
		override_cell(&t, json_object_get(b, "override"));
	}
	ok = table_print(&t, out);
	table_free(&t);
	return ok;
}

/* ---- stats ---- */

/* One row per key of the summed object: its total, its rate per second
 * when the reply has rates (an object keyed like sum), then one column
 * per worker. */
static bool counter_block(const char *title, const json_t *sum,
			  const json_t *rates, const json_t *per_worker,
			  const char *field, FILE *out)
{
	size_t nw = json_array_size(per_worker), i;
	bool with_rates = json_is_object(rates);
	struct table t;
	const char *key;
	json_t *v, *w;
	bool ok;

	table_init(&t, 2 + (with_rates ? 1 : 0) + nw);
	table_cell(&t, "%s", title);
	table_cell(&t, "TOTAL");
	if (with_rates)
		table_cell(&t, "RATE/s");
	json_array_foreach(per_worker, i, w)
		table_cell(&t, "W%lld", num(w, "worker"));
	json_object_foreach((json_t *)sum, key, v) {
		table_cell(&t, "%s", key);
		table_cell(&t, "%lld", (long long)json_integer_value(v));
		if (with_rates) {
			const json_t *r = json_object_get(rates, key);

			if (json_is_number(r))
				table_cell(&t, "%.1f", json_number_value(r));
			else
				table_cell(&t, "-");
		}
		json_array_foreach(per_worker, i, w) {
			char buf[24];

			table_cell(&t, "%s", num_text(json_object_get(w, field), key,
						      buf, sizeof(buf)));
		}
	}
	ok = table_print(&t, out);
	table_free(&t);
	return ok;
}

/* The NIC counters: one row per counter, one column per port; then,
 * when the reply has them (stats --ports), each port's xstats. */
static bool port_blocks(const json_t *ports, FILE *out)
{
	const json_t *first = json_array_get(ports, 0), *p, *v;
	const char *key;
	struct table t;
	size_t i;
	bool ok;

	if (!json_is_object(first))
		return true;
	fprintf(out, "\n");
	table_init(&t, 1 + json_array_size(ports));
	table_cell(&t, "NIC");
	json_array_foreach(ports, i, p)
		table_cell(&t, "%s", str(p, "name"));
	json_object_foreach(json_object_get(first, "counters"), key, v) {
		table_cell(&t, "%s", key);
		json_array_foreach(ports, i, p) {
			char buf[24];

			table_cell(&t, "%s", num_text(json_object_get(p, "counters"),
						      key, buf, sizeof(buf)));
		}
	}
	ok = table_print(&t, out);
	table_free(&t);
	json_array_foreach(ports, i, p) {
		const json_t *mb = json_object_get(p, "members"), *m;
		struct table mt;
		size_t k;

		if (!json_is_array(mb))
			continue;
		fprintf(out, "\n");
		table_init(&mt, 7);
		table_cell(&mt, "MEMBER (%s, link %s)", str(p, "name"),
			   json_is_string(json_object_get(p, "link")) ?
			   str(p, "link") : "?");
		table_cell(&mt, "LINK");
		table_cell(&mt, "ACTIVE");
		table_cell(&mt, "RX_PACKETS");
		table_cell(&mt, "TX_PACKETS");
		table_cell(&mt, "RX_ERRORS");
		table_cell(&mt, "TX_ERRORS");
		json_array_foreach(mb, k, m) {
			table_cell(&mt, "%s", str(m, "device"));
			table_cell(&mt, "%s", str(m, "link"));
			table_cell(&mt, "%s", json_is_true(json_object_get(m, "active"))
				   ? "yes" : "no");
			table_cell(&mt, "%lld", num(m, "rx_packets"));
			table_cell(&mt, "%lld", num(m, "tx_packets"));
			table_cell(&mt, "%lld", num(m, "rx_errors"));
			table_cell(&mt, "%lld", num(m, "tx_errors"));
		}
		ok = table_print(&mt, out) && ok;
		table_free(&mt);
	}
	json_array_foreach(ports, i, p) {
		const json_t *x = json_object_get(p, "xstats");
		struct table xt;

		if (!json_is_object(x))
			continue;
		fprintf(out, "\n");
		table_init(&xt, 2);
		table_cell(&xt, "XSTAT (%s)", str(p, "name"));
		table_cell(&xt, "VALUE");
		json_object_foreach((json_t *)x, key, v) {
			table_cell(&xt, "%s", key);
			table_cell(&xt, "%lld", (long long)json_integer_value(v));
		}
		ok = table_print(&xt, out) && ok;
		table_free(&xt);
	}
	return ok;
}

static bool render_stats(const json_t *r, FILE *out)
{
	const json_t *pw = json_object_get(r, "per_worker");
	const json_t *ct = json_object_get(r, "conntrack");
	const json_t *rates = json_object_get(r, "rates");
	bool ok;

	/* rates holds the counters' rates at its top level, the drops'
	 * under "drops" (docs/control-protocol.md) */
	ok = counter_block("COUNTER", json_object_get(r, "counters"), rates, pw,
			   "counters", out);
	fprintf(out, "\n");
	ok = counter_block("DROP", json_object_get(r, "drops"),
			   json_object_get(rates, "drops"), pw, "drops", out) && ok;
	if (json_is_object(ct)) {
		fprintf(out, "\n");
		ok = counter_block("CONNTRACK", ct, NULL, pw, "conntrack", out) && ok;
	}
	if (json_is_array(json_object_get(r, "ports")))
		ok = port_blocks(json_object_get(r, "ports"), out) && ok;
	return ok;
}

/* ---- table, lookup, whatif ---- */

static bool render_table(const json_t *r, FILE *out)
{
	const json_t *backends = json_object_get(r, "backends");
	const json_t *slots = json_object_get(r, "slots");
	struct table t;
	size_t i;
	json_t *b;
	bool ok;

	fprintf(out, "vip          %s\ntable size   %lld\nfingerprint  %s\n"
		"unassigned   %lld\n\n", str(r, "vip"), num(r, "table_size"),
		str(r, "fingerprint"), num(r, "unassigned"));
	table_init(&t, 3);
	table_cell(&t, "BACKEND");
	table_cell(&t, "SLOTS");
	table_cell(&t, "SHARE");
	json_array_foreach(backends, i, b) {
		table_cell(&t, "%s", str(b, "name"));
		table_cell(&t, "%lld", num(b, "slots"));
		table_cell(&t, "%.3f%%", 100.0 *
			   json_number_value(json_object_get(b, "share")));
	}
	ok = table_print(&t, out);
	table_free(&t);
	if (json_is_object(json_object_get(r, "second_chance"))) {
		const json_t *sc = json_object_get(r, "second_chance");

		char w[32], left[32];

		if (num(sc, "window_left_ms") > 0)
			snprintf(left, sizeof(left), "open, %s left",
				 duration_text(w, sizeof(w),
					       num(sc, "window_left_ms")));
		else
			snprintf(left, sizeof(left), "closed");
		fprintf(out, "\nsecond chance: %lld slots carry their previous "
			"owner as a hop; window %s, %s\n",
			num(sc, "previous_slots"),
			duration_text(w, sizeof(w), num(sc, "window_ms")), left);
	}
	if (json_is_array(json_object_get(r, "hops"))) {
		hops_summary(json_object_get(r, "hops"), backends, out);
		fprintf(out, "\nSLOT\tBACKEND\tHOPS\n");
		json_array_foreach(json_object_get(r, "hops"), i, b) {
			size_t k;
			json_t *h;

			fprintf(out, "%zu\t", i);
			if (json_array_size(b) == 0)
				fputc('-', out);
			json_array_foreach(b, k, h) {
				json_int_t idx = json_integer_value(h);

				fprintf(out, "%s%s", k == 0 ? "" : k == 1 ? "\t" : ",",
					str(json_array_get(backends, (size_t)idx),
					    "name"));
			}
			if (json_array_size(b) == 1)
				fprintf(out, "\t-");
			fputc('\n', out);
		}
	}
	if (json_is_array(slots)) {
		fprintf(out, "\nSLOT\tBACKEND\n");
		json_array_foreach(slots, i, b) {
			json_int_t idx = json_integer_value(b);

			fprintf(out, "%zu\t%s\n", i, idx < 0 ? "-" :
				str(json_array_get(backends, (size_t)idx), "name"));
		}
	}
	return ok;
}

static bool render_lookup(const json_t *r, FILE *out)
{
	const json_t *tracked = json_object_get(r, "tracked");

	fprintf(out, "%s:%lld -> VIP %s: slot %lld (hash 0x%08llx): ",
		str(r, "src"), num(r, "sport"), str(r, "vip"), num(r, "slot"),
		num(r, "hash"));
	if (json_is_string(json_object_get(r, "backend")))
		fprintf(out, "new flows go to %s (%s)\n", str(r, "backend"),
			str(r, "address"));
	else
		fprintf(out, "no backend takes new flows\n");
	if (json_is_object(tracked))
		fprintf(out, "tracked: yes, on worker %lld, to %s, %s, expires "
			"in %lld ms\n", num(tracked, "worker"),
			json_is_string(json_object_get(tracked, "backend")) ?
			str(tracked, "backend") : "a backend no longer configured",
			str(tracked, "state"), num(tracked, "expires_in_ms"));
	else if (json_is_false(tracked))
		fprintf(out, "tracked: no\n");
	else if (json_is_string(json_object_get(r, "tracked_error")))
		fprintf(out, "tracked: unknown (%s)\n", str(r, "tracked_error"));
	else
		fprintf(out, "tracked: unknown\n");
	return true;
}

static bool render_whatif(const json_t *r, FILE *out)
{
	bool add = strcmp(str(r, "action"), "add") == 0;
	double frac = json_number_value(json_object_get(r, "fraction_moved"));
	double min = json_number_value(json_object_get(r, "minimum_fraction"));
	const json_t *tracked = json_object_get(r, "tracked");

	if (add)
		fprintf(out, "adding %s (weight %lld) to %s", str(r, "backend"),
			num(r, "weight"), str(r, "vip"));
	else
		fprintf(out, "removing %s from %s", str(r, "backend"), str(r, "vip"));
	fprintf(out, " moves %lld of %lld slots (%.3f%%); %s %lld slots "
		"(%.3f%%), the least any change could move\n",
		num(r, "slots_moved"), num(r, "table_size"), 100.0 * frac,
		add ? "it would own" : "it owns", num(r, "backend_slots"),
		100.0 * min);
	if (json_is_object(tracked)) {
		fprintf(out, "tracked connections moved: %lld of %lld (%.3f%%): "
			"%s\n", num(tracked, "moved"), num(tracked, "connections"),
			100.0 * json_number_value(json_object_get(tracked,
							"fraction_moved")),
			str(tracked, "explanation"));
		fprintf(out, "tracked connections whose slot changes owner: "
			"about %lld of %lld, %s\n",
			num(tracked, "at_risk_if_moved"),
			num(tracked, "connections"),
			str(tracked, "at_risk_explanation"));
	}
	return true;
}

/* ---- reload, overrides ---- */

static void print_lines(const char *title, const json_t *arr, FILE *out)
{
	size_t i;
	json_t *l;

	if (json_array_size(arr))
		fprintf(out, "%s:\n", title);
	json_array_foreach(arr, i, l)
		fprintf(out, "  %s\n", json_string_value(l));
}

/* The reload plan: one line per VIP the new file adds, removes or
 * changes. */
static void print_plan(const json_t *plan, FILE *out)
{
	size_t i;
	json_t *v;

	if (!json_is_object(plan))
		return;
	fprintf(out, "plan: %lld VIP(s) -> %lld: %lld added, %lld removed, "
		"%lld changed\n", num(plan, "vips_before"), num(plan, "vips_after"),
		num(plan, "vips_added"), num(plan, "vips_removed"),
		num(plan, "vips_changed"));
	json_array_foreach(json_object_get(plan, "vips"), i, v) {
		const char *change = str(v, "change");

		if (strcmp(change, "added") == 0)
			fprintf(out, "  + %-24s added, %lld backend(s), %lld "
				"usable\n", str(v, "name"), num(v, "backends_added"),
				num(v, "usable_after"));
		else if (strcmp(change, "removed") == 0)
			fprintf(out, "  - %-24s removed, %lld usable backend(s) "
				"lost\n", str(v, "name"), num(v, "usable_lost"));
		else {
			fprintf(out, "  ~ %-24s backends +%lld -%lld, %lld "
				"re-weighted, %lld drained; usable %lld -> %lld%s\n",
				str(v, "name"), num(v, "backends_added"),
				num(v, "backends_removed"),
				num(v, "backends_reweighted"),
				num(v, "backends_drained"), num(v, "usable_before"),
				num(v, "usable_after"),
				json_is_true(json_object_get(v, "other_settings")) ?
				"; other settings changed" : "");
			if (*str(v, "backends"))
				fprintf(out, "    %-24s %s\n", "", str(v, "backends"));
			fprintf(out, "    %-24s %lld of %lld slots move (%.1f %%)\n",
				"", num(v, "slots_moved"), num(v, "table_size"),
				100.0 * json_number_value(
					json_object_get(v, "fraction_moved")));
		}
		if (strcmp(change, "added") != 0)
			fprintf(out, "    %-24s %lld of %lld tracked connection(s) "
				"re-selected\n", "", num(v, "tracked_moved"),
				num(v, "tracked"));
		if (strcmp(change, "changed") == 0)
			fprintf(out, "    %-24s about %lld more change slot owner: "
				"kept here; moved to another instance %s\n",
				"", num(v, "tracked_at_risk"),
				json_is_true(json_object_get(v, "second_chance")) ?
				"they reach their backends through second "
				"chance" : "they reset (no second chance)");
	}
}

static bool render_reload(const json_t *r, FILE *out)
{
	char buf[24];

	if (json_is_true(json_object_get(r, "applied")))
		fprintf(out, "reloaded: generation %s\n",
			num_text(r, "generation", buf, sizeof(buf)));
	else
		fprintf(out, "dry run: the file would be published; generation "
			"%s keeps serving\n",
			num_text(r, "generation", buf, sizeof(buf)));
	print_plan(json_object_get(r, "plan"), out);
	print_lines("warnings", json_object_get(r, "warnings"), out);
	return true;
}

static bool render_override(const json_t *r, FILE *out)
{
	const json_t *vips = json_object_get(r, "vips");
	const json_t *backends = json_object_get(r, "backends");
	char buf[24];
	size_t i;
	json_t *v;

	fprintf(out, "%s/%s: %s applied, generation %s\n", str(r, "vip"),
		str(r, "backend"), str(r, "applied"),
		num_text(r, "generation", buf, sizeof(buf)));
	json_array_foreach(vips, i, v)
		fprintf(out, "  %s/%s\n", json_string_value(v),
			json_string_value(json_array_get(backends, i)) ?
			json_string_value(json_array_get(backends, i)) :
			str(r, "backend"));
	print_lines("warnings", json_object_get(r, "warnings"), out);
	return true;
}

static bool render_weight(const json_t *r, FILE *out)
{
	char conf[24], ov[24];

	if (json_object_get(r, "applied"))
		return render_override(r, out);   /* a change, not a query */
	fprintf(out, "%s/%s: weight %lld (configured %s, override %s), %s\n",
		str(r, "vip"), str(r, "backend"), num(r, "weight"),
		num_text(r, "configured", conf, sizeof(conf)),
		has_int(r, "override") ? num_text(r, "override", ov, sizeof(ov)) :
		"none", str(r, "state"));
	return true;
}

/* ---- health ---- */

/* "up", "down", or "down, failing open" (the VIP keeps it in its table) */
static const char *health_state(const json_t *b)
{
	if (!json_is_true(json_object_get(b, "checked")))
		return "unchecked";
	if (json_is_true(json_object_get(b, "up")))
		return "up";
	return json_is_true(json_object_get(b, "effective_up")) ?
	       "down,fail-open" : "down";
}

static bool render_health(const json_t *r, FILE *out)
{
	struct timespec now;
	struct table t;
	size_t i;
	json_t *b;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &now);
	table_init(&t, 9);
	table_cell(&t, "VIP");
	table_cell(&t, "BACKEND");
	table_cell(&t, "CHECK");
	table_cell(&t, "STATE");
	table_cell(&t, "SINCE");
	table_cell(&t, "OK/FAIL");
	table_cell(&t, "CHECKS");
	table_cell(&t, "TRANSITIONS");
	table_cell(&t, "LAST_RESULT");
	json_array_foreach(json_object_get(r, "backends"), i, b) {
		long long age = (long long)now.tv_sec -
				num(b, "since_ms") / 1000;

		table_cell(&t, "%s", str(b, "vip"));
		table_cell(&t, "%s", str(b, "backend"));
		if (!json_is_true(json_object_get(b, "checked"))) {
			table_cell(&t, "-");
			table_cell(&t, "%s", health_state(b));
			for (int k = 0; k < 5; k++)
				table_cell(&t, "-");
			continue;
		}
		if (json_object_get(b, "vip_address"))
			table_cell(&t, "%s:%s:%lld via %s", str(b, "type"),
				   str(b, "address"), num(b, "port"),
				   str(b, "vip_address"));
		else
			table_cell(&t, "%s:%s:%lld", str(b, "type"),
				   str(b, "address"), num(b, "port"));
		table_cell(&t, "%s", health_state(b));
		table_cell(&t, "%llds ago", age < 0 ? 0 : age);
		table_cell(&t, "%lld/%lld", num(b, "successes"),
			   num(b, "failures"));
		table_cell(&t, "%lld", num(b, "checks"));
		table_cell(&t, "%lld", num(b, "transitions"));
		table_cell(&t, "%s", str(b, "last_result"));
	}
	ok = table_print(&t, out);
	table_free(&t);
	return ok;
}

static bool render_help(const json_t *r, FILE *out)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(r, "commands"), i, c)
		fprintf(out, "  %-44s %s\n", str(c, "synopsis"), str(c, "help"));
	return true;
}

/* ---- conns ---- */

static bool render_conns(const json_t *r, FILE *out)
{
	struct table t;
	size_t i;
	json_t *c;
	bool ok, partial_clients = false;

	table_init(&t, 9);
	table_cell(&t, "PROTO");
	table_cell(&t, "CLIENT");
	table_cell(&t, "VIP");
	table_cell(&t, "VIP_ADDRESS");
	table_cell(&t, "BACKEND");
	table_cell(&t, "STATE");
	table_cell(&t, "IDLE");
	table_cell(&t, "EXPIRES");
	table_cell(&t, "WORKER");
	json_array_foreach(json_object_get(r, "conns"), i, c) {
		bool gone = !json_is_string(json_object_get(c, "backend"));

		partial_clients |= json_is_false(json_object_get(c,
							"client_complete"));
		table_cell(&t, "%s", str(c, "protocol"));
		table_cell(&t, "%s", str(c, "client"));
		table_cell(&t, "%s", str(c, "vip"));
		table_cell(&t, "%s", str(c, "vip_address"));
		table_cell(&t, "%s", gone ? "(gone)" : str(c, "backend"));
		table_cell(&t, "%s", str(c, "state"));
		table_cell(&t, "%.1fs", (double)num(c, "idle_ms") / 1000);
		table_cell(&t, "%.1fs", (double)num(c, "expires_in_ms") / 1000);
		table_cell(&t, "%lld", num(c, "worker"));
	}
	ok = table_print(&t, out);
	table_free(&t);
	fprintf(out, "%lld flow(s) listed, %lld tracked flow(s) read\n",
		num(r, "count"), num(r, "scanned"));
	if (partial_clients)
		fprintf(out, "IPv6 clients: a tracked IPv6 flow keeps only the "
			"client address's last 32 bits (shown *:xxxx:xxxx) and a "
			"fingerprint of the rest and of the ports, so its port "
			"is not known; `maglevctl lookup VIP CLIENT PORT` finds "
			"one flow by its full address\n");
	if (json_is_string(json_object_get(r, "next")))
		fprintf(out, "more: add --cursor %s%s%s%s\n", str(r, "next"),
			json_is_string(json_object_get(r, "partial")) ? " (" : "",
			json_is_string(json_object_get(r, "partial")) ?
			str(r, "partial") : "",
			json_is_string(json_object_get(r, "partial")) ? ")" : "");
	return ok;
}

bool render_reply(const struct mlv_ctl_cmd_spec *cmd, const json_t *reply,
		  FILE *out)
{
	switch (cmd->id) {
	case MLV_CTL_CMD_HELP:
		return render_help(reply, out);
	case MLV_CTL_CMD_STATUS:
		return render_status(reply, out);
	case MLV_CTL_CMD_VIPS:
		return render_vips(reply, out);
	case MLV_CTL_CMD_BACKENDS:
		return render_backends(reply, out);
	case MLV_CTL_CMD_STATS:
		return render_stats(reply, out);
	case MLV_CTL_CMD_TABLE:
		return render_table(reply, out);
	case MLV_CTL_CMD_LOOKUP:
		return render_lookup(reply, out);
	case MLV_CTL_CMD_CONNS:
		return render_conns(reply, out);
	case MLV_CTL_CMD_RELOAD:
		return render_reload(reply, out);
	case MLV_CTL_CMD_DRAIN:
	case MLV_CTL_CMD_UNDRAIN:
		return render_override(reply, out);
	case MLV_CTL_CMD_WEIGHT:
		return render_weight(reply, out);
	case MLV_CTL_CMD_WHATIF:
		return render_whatif(reply, out);
	case MLV_CTL_CMD_HEALTH:
		return render_health(reply, out);
	case MLV_CTL_CMD_SHUTDOWN:
		return render_shutdown(reply, out);
	case MLV_CTL_CMD__COUNT:
		break;
	}
	return json_dumpf(reply, out, JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF;
}

void render_error(const json_t *reply, FILE *out)
{
	fprintf(out, "maglevctl: error: %s\n", str(reply, "error"));
	print_lines("errors", json_object_get(reply, "errors"), out);
	print_lines("warnings", json_object_get(reply, "warnings"), out);
	print_plan(json_object_get(reply, "plan"), out);
}

void render_command_list(FILE *out)
{
	char syn[256];

	for (int i = 0; i < MLV_CTL_CMD__COUNT; i++)
		fprintf(out, "  %-44s %s\n",
			mlv_ctl_synopsis(&mlv_ctl_cmd_specs[i], syn, sizeof(syn)),
			mlv_ctl_cmd_specs[i].help);
}

void render_command_help(const struct mlv_ctl_cmd_spec *cmd, FILE *out)
{
	char syn[256];

	fprintf(out, "usage: maglevctl [-s SOCKET] [-o json] %s\n\n%s\n",
		mlv_ctl_synopsis(cmd, syn, sizeof(syn)), cmd->help);
	if (cmd->n_args)
		fprintf(out, "\narguments:\n");
	for (uint32_t i = 0; i < cmd->n_args; i++) {
		const struct mlv_ctl_arg_spec *a = &cmd->args[i];
		char word[96];

		fprintf(out, "  %-20s %s%s\n",
			mlv_ctl_arg_word(a, word, sizeof(word)), a->help,
			a->required ? "" : " (optional)");
	}
}
