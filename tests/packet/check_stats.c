/* SPDX-License-Identifier: BSD-3-Clause */
/* The daemon's own counters against what the test fed and observed:
 * rx_packets equals the frames fed, every drop reason equals the number of
 * frames expected to be dropped for it, forwarded and icmp_sent equal
 * the output, the outcomes add up to rx_packets (every frame lands in
 * exactly one counter), per-backend packet and byte counters equal what
 * the output pcap carried to each backend, each VIP's table
 * fingerprint equals the one built here, and the new flows sent to a
 * second choice are the ones the replay in check_choice.c sent there. */
#include <inttypes.h>
#include <stdio.h>

#include "tests/packet/check.h"
#include "tests/packet/stats_json.h"

static void want_counter(struct check_ctx *c, json_t *doc, const char *name,
			 uint64_t want, uint64_t *got)
{
	uint64_t v = 0;

	if (!stats_counter(doc, name, &v)) {
		check_fail(c, "stats file has no counter '%s'", name);
	} else if (v != want) {
		check_fail(c, "stats: %s = %" PRIu64 ", want %" PRIu64, name, v,
			   want);
	}
	if (got)
		*got = v;
}

static void check_per_backend(struct check_ctx *c, json_t *doc)
{
	const struct scenario *sc = c->sc;

	for (uint32_t v = 0; v < sc->n_vips; v++) {
		const struct sc_vip *vip = &sc->vips[v];
		json_t *jv = stats_vip(doc, vip->name);
		uint64_t vip_pkts = 0, got, fp;

		if (!jv) {
			check_fail(c, "stats file has no VIP '%s'", vip->name);
			continue;
		}
		for (uint32_t b = 0; b < SC_MAX_BACKENDS; b++)
			vip_pkts += c->out_pkts[v][b];
		if (!stats_flow_counter(jv, "packets", &got) || got != vip_pkts)
			check_fail(c, "stats: VIP %s packets = %" PRIu64 ", the "
				   "output carried %" PRIu64, vip->name, got, vip_pkts);
		if (c->storm)
			continue;   /* backends come and go with the two configs */
		if (!stats_fingerprint(jv, &fp) || fp != c->tabs.t[v].fingerprint)
			check_fail(c, "stats: VIP %s table fingerprint %016" PRIx64
				   ", the table built from the config has %016"
				   PRIx64, vip->name, fp, c->tabs.t[v].fingerprint);
		for (uint32_t b = 0; b < vip->n_backends; b++) {
			json_t *jb = stats_backend(jv, vip->backends[b].name);
			uint64_t pk = 0, by = 0;

			if (!jb) {
				check_fail(c, "stats file has no backend %s of %s",
					   vip->backends[b].name, vip->name);
				continue;
			}
			if (!stats_flow_counter(jb, "packets", &pk) ||
			    pk != c->out_pkts[v][b])
				check_fail(c, "stats: backend %s/%s packets = %"
					   PRIu64 ", the output carried %" PRIu64,
					   vip->name, vip->backends[b].name, pk,
					   c->out_pkts[v][b]);
			if (!stats_flow_counter(jb, "bytes", &by) ||
			    by != c->out_bytes[v][b])
				check_fail(c, "stats: backend %s/%s bytes = %" PRIu64
					   ", the output carried %" PRIu64 " bytes "
					   "of inner packets", vip->name,
					   vip->backends[b].name, by,
					   c->out_bytes[v][b]);
		}
	}
}

void check_stats(struct check_ctx *c, const char *path)
{
	uint64_t want_drop[MLV_DROP__COUNT] = {0};
	uint64_t want_fwd = 0, want_icmp = 0, want_echo = 0, rx_bytes = 0;
	uint64_t want_quic[4] = {0};   /* by enum sc_quic */
	uint64_t rx, fwd, icmp, exc, sum;
	char why[256];
	json_t *doc = stats_load(path, why, sizeof(why));

	if (!doc) {
		check_fail(c, "cannot read the stats file %s: %s", path, why);
		return;
	}
	for (uint32_t i = 0; i < c->sc->n_frames; i++) {
		const struct sc_frame *fr = &c->sc->frames[i];

		rx_bytes += c->fed[i] * fr->len;
		want_quic[fr->exp.quic & 3] += c->fed[i];
		switch (fr->exp.outcome) {
		case SC_FORWARD:      want_fwd += c->fed[i]; break;
		case SC_MAY_LIMIT:
			/* forwarded or limited: the output says which */
			want_fwd += c->forwarded[i];
			want_drop[MLV_DROP_NEW_FLOW_LIMIT] +=
				c->fed[i] - c->forwarded[i];
			break;
		case SC_ICMP_TOO_BIG: want_icmp += c->fed[i]; break;
		case SC_ICMP_ECHO_REPLY:
			want_icmp += c->fed[i];
			want_echo += c->fed[i];
			break;
		case SC_DROP:         want_drop[fr->exp.drop] += c->fed[i]; break;
		}
	}

	want_counter(c, doc, "rx_packets", c->n_in, &rx);
	want_counter(c, doc, "rx_bytes", rx_bytes, NULL);
	want_counter(c, doc, "forwarded", want_fwd, &fwd);
	want_counter(c, doc, "icmp_sent", want_icmp, &icmp);
	want_counter(c, doc, "echo_replies", want_echo, NULL);
	want_counter(c, doc, "exception", 0, &exc);
	want_counter(c, doc, "quic_routed", want_quic[SC_QUIC_ROUTED], NULL);
	want_counter(c, doc, "quic_unknown_id", want_quic[SC_QUIC_UNKNOWN_ID], NULL);
	want_counter(c, doc, "quic_no_id", want_quic[SC_QUIC_NO_ID], NULL);
	want_counter(c, doc, "mss_clamped", c->want_mss_clamped, NULL);
	if (c->want) {
		want_counter(c, doc, "second_down", c->want_second_down, NULL);
		want_counter(c, doc, "second_loaded", c->want_second_loaded, NULL);
	}
	if (fwd != c->n_out_forward || icmp != c->n_out_icmp)
		check_fail(c, "stats: forwarded %" PRIu64 " + icmp_sent %" PRIu64
			   ", but the output pcap has %" PRIu64 " forwarded "
			   "frames and %" PRIu64 " ICMP replies", fwd, icmp,
			   c->n_out_forward, c->n_out_icmp);
	sum = fwd + icmp + exc;
	for (int r = 0; r < MLV_DROP__COUNT; r++) {
		const char *name = mlv_drop_reason_name((enum mlv_drop_reason)r);
		uint64_t v = 0;

		if (!stats_drop(doc, name, &v)) {
			check_fail(c, "stats file has no drop reason '%s'", name);
			continue;
		}
		sum += v;
		if (v != want_drop[r])
			check_fail(c, "stats: drops of reason %s = %" PRIu64
				   ", want %" PRIu64, name, v, want_drop[r]);
	}
	{
		uint64_t total = 0;

		if (!stats_drop_total(doc, &total) || total + fwd + icmp + exc != sum)
			check_fail(c, "stats: drops.total %" PRIu64 " is not the sum "
				   "of the drop reasons", total);
	}
	if (!stats_final(doc))
		check_fail(c, "stats file is not the final one written at exit "
			   "(\"final\": true missing): did maglevd exit cleanly?");
	if (sum != rx)
		check_fail(c, "stats: forwarded + icmp_sent + exception + drops = %"
			   PRIu64 ", rx_packets = %" PRIu64 " (every frame must "
			   "land in exactly one counter)", sum, rx);
	if (c->sc->expect_evictions) {
		uint64_t ev = 0;

		if (!stats_conntrack(doc, "evictions", &ev) || ev == 0)
			check_fail(c, "stats: no conntrack evictions reported, but "
				   "the scenario has more flows than the table "
				   "holds");
	}
	check_per_backend(c, doc);
	json_decref(doc);
}
