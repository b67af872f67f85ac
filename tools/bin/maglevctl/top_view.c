/* SPDX-License-Identifier: BSD-3-Clause */
/* One frame of maglevctl top (top.h): rates from two samples, drawn as
 * a summary and a VIP / backend table.
 *
 * Layout (docs/metrics.md, "maglevctl top"), every line within 80
 * columns so that it fits a default terminal:
 *   maglevd top: generation G, W workers, every I s
 *   rx R pkt/s B B/s, forwarded F pkt/s, tx T B/s
 *   new flows N/s, drops D pkt/s
 *   conntrack USED / CAPACITY entries (P %), evictions E/s
 *   drops/s: REASON RATE ... | none      (wrapped, indented)
 *
 *   VIP / BACKEND            STATE    WEIGHT   SLOTS     PKT/S   BYTES/S   FLOWS/S
 *   web                      3/4 up        -    1009     1.20k    76.8k     12.0
 *     web-1                  active      100     252      600     38.4k      6.0
 * Rates are per second with SI suffixes (k, M, G, T); "-" when the
 * previous sample has no such row (it just appeared).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/packet/counters.h"
#include "tools/bin/maglevctl/top.h"

#define KEY_SEP "\x1f"   /* cannot occur in a config name */
#define TOP_WIDTH 80      /* columns every line fits in */

static uint64_t get_u64(const json_t *obj, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(obj, key));

	return v > 0 ? (uint64_t)v : 0;
}

bool top_sample_index(struct top_sample *s)
{
	size_t i;
	json_t *v;

	s->vip_index = json_object();
	s->backend_index = json_object();
	if (!s->vip_index || !s->backend_index)
		return false;
	json_array_foreach(s->vips, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));

		if (name && json_object_set(s->vip_index, name, v))
			return false;
	}
	json_array_foreach(s->backends, i, v) {
		const char *vip = json_string_value(json_object_get(v, "vip"));
		const char *name = json_string_value(json_object_get(v, "name"));
		char key[256];

		if (!vip || !name)
			continue;
		snprintf(key, sizeof(key), "%s" KEY_SEP "%s", vip, name);
		if (json_object_set(s->backend_index, key, v))
			return false;
	}
	return true;
}

void top_sample_clear(struct top_sample *s)
{
	json_decref(s->stats);
	json_decref(s->vips);
	json_decref(s->backends);
	json_decref(s->vip_index);
	json_decref(s->backend_index);
	memset(s, 0, sizeof(*s));
}

/* (cur - prev) / dt for counter key; NAN without a previous value. A
 * counter that went down was reset (a backend removed and re-added gets
 * fresh counters): count from zero. */
static double rate(const json_t *cur, const json_t *prev, const char *key,
		   double dt)
{
	uint64_t c, p;

	if (!cur || !prev || dt <= 0)
		return NAN;
	c = get_u64(cur, key);
	p = get_u64(prev, key);
	return (double)(c >= p ? c - p : c) / dt;
}

/* "950", "1.20k", "38.4M": at most 6 characters. */
static const char *human(double v, char buf[16])
{
	static const char suffix[] = " kMGTP";
	int i = 0;

	if (isnan(v))
		return "-";
	while (v >= 999.5 && i < 5) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, 16, v < 100 ? "%.1f" : "%.0f", v);
	else
		snprintf(buf, 16, v < 10 ? "%.2f%c" : v < 100 ? "%.1f%c" : "%.0f%c",
			 v, suffix[i]);
	return buf;
}

struct frame {
	FILE *out;
	const struct top_view_opts *o;
	double dt;
	int rows;                /* table rows printed */
	int hidden;              /* rows left out to fit the terminal */
};

/* End a line: on a terminal, clear what an older, longer frame left. */
static void eol(struct frame *f)
{
	fputs(f->o->ansi ? "\033[K\n" : "\n", f->out);
}

static void summary(struct frame *f, const struct top_sample *prev,
		    const struct top_sample *cur)
{
	const json_t *cc = json_object_get(cur->stats, "counters");
	const json_t *pc = json_object_get(prev->stats, "counters");
	const json_t *cd = json_object_get(cur->stats, "drops");
	const json_t *pd = json_object_get(prev->stats, "drops");
	const json_t *ct = json_object_get(cur->stats, "conntrack");
	const json_t *pct = json_object_get(prev->stats, "conntrack");
	char a[16], b[16], c[16], d[16], e[16], g[16];
	bool any = false;
	size_t col;

	fprintf(f->out, "maglevd top: generation %u, %llu workers, every %.3g s",
		cur->generation,
		(unsigned long long)get_u64(cur->stats, "workers"),
		f->o->interval_s);
	eol(f);
	fprintf(f->out, "rx %s pkt/s %s B/s, forwarded %s pkt/s, tx %s B/s",
		human(rate(cc, pc, mlv_worker_counter_name(MLV_CTR_RX_PACKETS), f->dt), a),
		human(rate(cc, pc, mlv_worker_counter_name(MLV_CTR_RX_BYTES), f->dt), b),
		human(rate(cc, pc, mlv_worker_counter_name(MLV_CTR_FORWARDED), f->dt), c),
		human(rate(cc, pc, mlv_worker_counter_name(MLV_CTR_TX_BYTES), f->dt), d));
	eol(f);
	fprintf(f->out, "new flows %s/s, drops %s pkt/s",
		human(rate(cc, pc, mlv_worker_counter_name(MLV_CTR_CT_NEW), f->dt), e),
		human(rate(cd, pd, "total", f->dt), g));
	eol(f);
	if (ct) {
		uint64_t used = get_u64(ct, "occupancy"), cap = get_u64(ct, "capacity");

		fprintf(f->out, "conntrack %llu / %llu entries (%.1f %%), "
			"evictions %s/s", (unsigned long long)used,
			(unsigned long long)cap,
			cap ? 100.0 * (double)used / (double)cap : 0.0,
			human(rate(ct, pct, "evictions", f->dt), a));
		eol(f);
	}
	fputs("drops/s:", f->out);
	col = strlen("drops/s:");
	for (int r = 0; r < MLV_DROP__COUNT; r++) {
		const char *name = mlv_drop_reason_name((enum mlv_drop_reason)r);
		double v = rate(cd, pd, name, f->dt);
		size_t w;

		if (isnan(v) || v <= 0)
			continue;
		human(v, a);
		w = 1 + strlen(name) + 1 + strlen(a);
		if (col + w > TOP_WIDTH) {   /* wrap under the first reason */
			eol(f);
			fputs("        ", f->out);
			col = strlen("drops/s:");
		}
		fprintf(f->out, " %s %s", name, a);
		col += w;
		any = true;
	}
	if (!any)
		fputs(" none", f->out);
	eol(f);
	eol(f);
}

static bool room(struct frame *f)
{
	if (f->o->max_rows > 0 && f->rows >= f->o->max_rows) {
		f->hidden++;
		return false;
	}
	f->rows++;
	return true;
}

static void rates_cols(struct frame *f, const json_t *cur, const json_t *prev)
{
	char a[16], b[16], c[16];

	fprintf(f->out, " %9s %9s %9s",
		human(rate(cur, prev, mlv_flow_counter_name(MLV_FLOW_PACKETS), f->dt), a),
		human(rate(cur, prev, mlv_flow_counter_name(MLV_FLOW_BYTES), f->dt), b),
		human(rate(cur, prev, mlv_flow_counter_name(MLV_FLOW_NEW_FLOWS), f->dt), c));
	eol(f);
}

static void vip_rows(struct frame *f, const struct top_sample *prev,
		     const struct top_sample *cur, const json_t *v)
{
	const char *name = json_string_value(json_object_get(v, "name"));
	char up[48], key[256];
	size_t i;
	json_t *b;

	if (!name || (f->o->vip && strcmp(f->o->vip, name) != 0))
		return;
	if (room(f)) {
		unsigned long long n_up = get_u64(v, "usable_backends");
		unsigned long long n_all = get_u64(v, "backends");

		/* the STATE column is 8 wide: "3/4 up", else "100/120",
		 * else the usable count alone */
		if (snprintf(up, sizeof(up), "%llu/%llu up", n_up, n_all) > 8 &&
		    snprintf(up, sizeof(up), "%llu/%llu", n_up, n_all) > 8)
			snprintf(up, sizeof(up), "%llu up", n_up);
		fprintf(f->out, "%-24.24s %-8.8s %6s %7llu", name, up, "-",
			(unsigned long long)get_u64(v, "table_size"));
		rates_cols(f, v, json_object_get(prev->vip_index, name));
	}
	json_array_foreach(cur->backends, i, b) {
		const char *bvip = json_string_value(json_object_get(b, "vip"));
		const char *bname = json_string_value(json_object_get(b, "name"));
		const char *state = json_string_value(json_object_get(b, "state"));

		if (!bvip || !bname || strcmp(bvip, name) != 0 || !room(f))
			continue;
		snprintf(key, sizeof(key), "%s" KEY_SEP "%s", bvip, bname);
		fprintf(f->out, "  %-22.22s %-8.8s %6llu %7llu", bname,
			state ? state : "?",
			(unsigned long long)get_u64(b, "weight"),
			(unsigned long long)get_u64(b, "slots"));
		rates_cols(f, b, json_object_get(prev->backend_index, key));
	}
}

void top_view_frame(const struct top_sample *prev,
		    const struct top_sample *cur,
		    const struct top_view_opts *o, bool first, FILE *out)
{
	struct frame f = { .out = out, .o = o,
			   .dt = (double)(cur->time_ns - prev->time_ns) / 1e9 };
	size_t i;
	json_t *v;

	if (o->ansi)
		fputs(first ? "\033[H\033[2J" : "\033[H", out);
	summary(&f, prev, cur);
	fprintf(out, "%-24s %-8s %6s %7s %9s %9s %9s", "VIP / BACKEND", "STATE",
		"WEIGHT", "SLOTS", "PKT/S", "BYTES/S", "FLOWS/S");
	eol(&f);
	json_array_foreach(cur->vips, i, v)
		vip_rows(&f, prev, cur, v);
	if (f.hidden) {
		fprintf(out, "... %d more rows (a larger terminal, or top VIP)",
			f.hidden);
		eol(&f);
	}
	if (o->ansi)
		fputs("\033[J", out);   /* clear below: a shorter frame */
	else
		fputc('\n', out);
	fflush(out);
}
