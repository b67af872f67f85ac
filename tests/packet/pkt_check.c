/* SPDX-License-Identifier: BSD-3-Clause */
/* pkt-check: verify a packet-test run.
 *
 *   pkt-check SCENARIO DIR [--fed N]
 *
 * Rebuilds the scenario, checks DIR/in.pcap is exactly its frames (not
 * for storms, whose input went through a FIFO: --fed N says how many
 * frames pkt-storm wrote, cyclically), verifies every frame of
 * DIR/out.pcap, every input's fate, the daemon's DIR/stats.json and the
 * distribution over backends. Prints each failure and a summary; exit 0
 * if all passed, 1 otherwise. */
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/check.h"

static int compare_input(struct check_ctx *c, const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t i = 0;
	int r;

	if (!p) {
		check_fail(c, "cannot read %s: %s", path, err);
		return -1;
	}
	while ((r = pcap_next_ex(p, &h, &data)) == 1) {
		if (i >= c->sc->n_frames || h->caplen != c->sc->frames[i].len ||
		    h->len != h->caplen ||
		    memcmp(data, c->sc->frames[i].data, h->caplen) != 0) {
			check_fail(c, "%s frame %u differs from the scenario "
				   "(generator not deterministic?)", path, i);
			pcap_close(p);
			return -1;
		}
		i++;
	}
	pcap_close(p);
	if (i != c->sc->n_frames) {
		check_fail(c, "%s has %u frames, the scenario %u", path, i,
			   c->sc->n_frames);
		return -1;
	}
	return 0;
}

static void read_output(struct check_ctx *c, const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0;
	int r;

	if (!p) {
		check_fail(c, "cannot read the output %s: %s", path, err);
		return;
	}
	while ((r = pcap_next_ex(p, &h, &data)) == 1) {
		if (h->caplen != h->len)
			check_fail(c, "output frame %" PRIu64 " truncated in the "
				   "pcap (%u of %u bytes)", n, h->caplen, h->len);
		check_output_frame(c, n++, data, h->caplen);
	}
	if (r == -1)
		check_fail(c, "reading %s: %s", path, pcap_geterr(p));
	pcap_close(p);
}

/* What the output carried, per VIP and backend, for the test log. */
static void print_summary(const struct check_ctx *c)
{
	static const char *const fwd[] = {"ipip", "gue", "l2dsr"};

	for (uint32_t v = 0; v < c->sc->n_vips; v++) {
		const struct sc_vip *vip = &c->sc->vips[v];
		const struct sc_vip *alt = c->storm ? &c->sc->alt_vips[v] : vip;
		uint32_t n = alt->n_backends > vip->n_backends ? alt->n_backends :
			     vip->n_backends;

		printf("  VIP %-12s %-5s packets per backend:", vip->name,
		       fwd[vip->fwd]);
		for (uint32_t b = 0; b < n; b++)
			printf(" %s=%" PRIu64, (b < vip->n_backends ? vip : alt)->backends[b].name,
			       c->out_pkts[v][b]);
		putchar('\n');
	}
}

static int alloc_ctx(struct check_ctx *c, const struct scenario *sc,
		     uint64_t fed_total)
{
	uint32_t n = sc->n_frames;

	c->sc = sc;
	c->storm = sc->n_alt_vips > 0;
	c->n_groups = sc->next_group;
	c->fed = calloc(n, sizeof(*c->fed));
	c->forwarded = calloc(n, sizeof(*c->forwarded));
	c->icmp_replies = calloc(n, sizeof(*c->icmp_replies));
	c->backend_of = calloc(n, 1);
	c->group_backend = calloc(c->n_groups, 1);
	c->group_first = calloc(c->n_groups, sizeof(*c->group_first));
	if (!c->fed || !c->forwarded || !c->icmp_replies || !c->backend_of ||
	    !c->group_backend || !c->group_first) {
		fprintf(stderr, "pkt-check: out of memory\n");
		return -1;
	}
	/* frames were fed cyclically: frame i went in floor(N/n) times, plus
	 * once more if i < N mod n */
	for (uint32_t i = 0; i < n; i++)
		c->fed[i] = fed_total / n + (i < fed_total % n);
	c->n_in = fed_total;
	if (expect_build(&c->tabs, sc->vips, sc->n_vips))
		return -1;
	if (c->storm && expect_build(&c->alt_tabs, sc->alt_vips, sc->n_alt_vips))
		return -1;
	if (!c->storm) {
		c->want = calloc(n ? n : 1, sizeof(*c->want));
		if (!c->want) {
			fprintf(stderr, "pkt-check: out of memory\n");
			return -1;
		}
		check_plan_choices(c);
	}
	if (check_mss_prepare(c))
		return -1;
	c->index.expect_ip = c->mss_ip;
	return frame_index_build(&c->index, sc);
}

static void free_ctx(struct check_ctx *c)
{
	free(c->fed);
	free(c->forwarded);
	free(c->icmp_replies);
	free(c->backend_of);
	free(c->group_backend);
	free(c->group_first);
	free(c->want);
	expect_free(&c->tabs);
	expect_free(&c->alt_tabs);
	frame_index_free(&c->index);
	check_mss_free(c);
}

int main(int argc, char **argv)
{
	static struct scenario sc;
	struct check_ctx c;
	char path[4096];
	uint64_t fed, window_ms = 0;
	bool has_fed = argc == 5 && strcmp(argv[3], "--fed") == 0;
	bool has_window = argc == 5 && strcmp(argv[3], "--window-ms") == 0;
	int rc = 1;

	memset(&c, 0, sizeof(c));
	if (argc != 3 && !has_fed && !has_window) {
		fprintf(stderr, "usage: pkt-check SCENARIO DIR "
			"[--fed N | --window-ms MS]\n");
		return 1;
	}
	if (!sc_build(argv[1], &sc)) {
		fprintf(stderr, "pkt-check: no scenario '%s'\n", argv[1]);
		return 1;
	}
	fed = has_fed ? strtoull(argv[4], NULL, 10) : sc.n_frames;
	if (has_window)
		window_ms = strtoull(argv[4], NULL, 10);
	if ((sc.n_alt_vips > 0) != has_fed || sc.paced != has_window) {
		fprintf(stderr, "pkt-check: --fed is for (and required by) the "
			"storm scenario, --window-ms by paced ones\n");
		goto done;
	}
	if (alloc_ctx(&c, &sc, fed))
		goto done;

	if (!c.storm) {
		snprintf(path, sizeof(path), "%s/in.pcap", argv[2]);
		if (compare_input(&c, path))
			goto report;
	}
	snprintf(path, sizeof(path), "%s/out.pcap", argv[2]);
	read_output(&c, path);
	check_totals(&c);
	check_rate(&c, window_ms);
	snprintf(path, sizeof(path), "%s/stats.json", argv[2]);
	check_stats(&c, path);
	check_distribution(&c);
	print_summary(&c);
report:
	printf("scenario %s: %" PRIu64 " frames in, %" PRIu64 " out (%" PRIu64
	       " forwarded, %" PRIu64 " ICMP replies): %s",
	       sc.name, c.n_in, c.n_out, c.n_out_forward, c.n_out_icmp,
	       c.failures ? "FAILED" : "all checks passed\n");
	if (c.failures)
		printf(" with %u problem(s), see above\n", c.failures);
	rc = c.failures ? 1 : 0;
done:
	free_ctx(&c);
	sc_free(&sc);
	return rc;
}
