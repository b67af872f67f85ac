/* SPDX-License-Identifier: BSD-3-Clause */
/* Metrics test helpers (test_metrics_util.h). */
#include "tests/unit/metrics/test_metrics_util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "control/health/health.h"

char *tm_render(const struct mlv_metrics_sources *src, size_t *len)
{
	struct mlv_metrics_renderer *r;
	char *text = NULL;
	size_t n = 0;

	assert_int_equal(mlv_metrics_renderer_create(&r), MLV_OK);
	assert_int_equal(mlv_metrics_render(r, src, &text, &n), MLV_OK);
	assert_non_null(text);
	assert_int_equal(strlen(text), n);
	mlv_metrics_renderer_destroy(r);
	if (len)
		*len = n;
	return text;
}

bool tm_sample(const char *page, const char *series, double *value)
{
	size_t n = strlen(series);

	for (const char *line = page; line && *line;) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, series, n) == 0 && line[n] == ' ') {
			*value = strtod(line + n + 1, NULL);
			return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

double tm_value(const char *page, const char *series)
{
	double v = 0;

	if (!tm_sample(page, series, &v))
		fail_msg("no sample %s in the page", series);
	return v;
}

bool tm_has(const char *page, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *line = page; line && *line;) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, prefix, n) == 0)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/* ---- structure ---- */

static bool name_char(int c, bool first)
{
	return c == '_' || c == ':' || isalpha(c) || (!first && isdigit(c));
}

/* Length of a metric or label name at s (0 if none). */
static size_t name_len(const char *s)
{
	size_t n = 0;

	while (s[n] && name_char((unsigned char)s[n], n == 0))
		n++;
	return n;
}

/* Skip {name="value",...} at *p; false if malformed. */
static bool skip_labels(const char **p)
{
	const char *s = *p;

	if (*s != '{')
		return true;
	s++;
	while (*s != '}') {
		size_t n = name_len(s);

		if (n == 0 || strncmp(s + n, "=\"", 2) != 0)
			return false;
		s += n + 2;
		while (*s != '"') {
			if (*s == '\0' || *s == '\n')
				return false;
			if (*s == '\\') {
				if (s[1] != '\\' && s[1] != '"' && s[1] != 'n')
					return false;
				s++;
			}
			s++;
		}
		s++;
		if (*s == ',')
			s++;
		else if (*s != '}')
			return false;
	}
	*p = s + 1;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first problem found; later ones are not kept. */
struct checker {
	char first[512];
};

__attribute__((format(printf, 2, 3)))
static void problem(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(c->first, sizeof(c->first), fmt, ap);
	va_end(ap);
}

/* ---- histograms ---- */

enum hist_kind { H_BUCKET, H_SUM, H_COUNT };

/* One sample of a histogram family: its series without the suffix and
 * without le ("name{a="x"}"), which part it is, its le and value. */
struct hist_sample {
	char *key;
	enum hist_kind kind;
	double le;
	char le_text[32];
	double value;
};

struct hist_samples {
	struct hist_sample *s;
	size_t n;
};

/* The label set from p to end ("{...}" or nothing) without its le label,
 * appended to key; le's text into le (empty when absent). The labels are
 * well formed (skip_labels accepted them). */
static void split_le(const char *p, const char *end, char *key, size_t klen,
		     char *le, size_t le_len)
{
	size_t k = strlen(key);
	bool first = true;

	le[0] = '\0';
	if (p == end)
		return;
	p++;                                 /* { */
	while (p < end && *p != '}') {
		const char *start = p, *v;
		size_t n = name_len(p);

		v = p + n + 2;
		p = v;
		while (*p != '"') {
			if (*p == '\\')
				p++;
			p++;
		}
		if (n == 2 && strncmp(start, "le", 2) == 0) {
			snprintf(le, le_len, "%.*s", (int)(p - v), v);
		} else if (k < klen) {
			k += (size_t)snprintf(key + k, klen - k, "%s%.*s",
					      first ? "{" : ",",
					      (int)(p + 1 - start), start);
			first = false;
		}
		p++;                         /* closing quote */
		if (*p == ',')
			p++;
	}
	if (!first && k < klen)
		snprintf(key + k, klen - k, "}");
}

static void hist_add(struct checker *c, struct hist_samples *hs,
		     const char *family, const char *line, size_t name_n,
		     const char *labels_end, double value)
{
	static const char *const suffix[] = { "_bucket", "_sum", "_count" };
	size_t fam = strlen(family);
	struct hist_sample *h;
	char key[1024];
	int kind = -1;

	for (int k = 0; k < 3; k++)
		if (name_n == fam + strlen(suffix[k]) &&
		    strncmp(line, family, fam) == 0 &&
		    strncmp(line + fam, suffix[k], strlen(suffix[k])) == 0)
			kind = k;
	if (kind < 0) {
		problem(c, "sample outside its histogram family (%s): %s",
			family, line);
		return;
	}
	hs->s = realloc(hs->s, (hs->n + 1) * sizeof(*hs->s));
	assert_non_null(hs->s);
	h = &hs->s[hs->n++];
	snprintf(key, sizeof(key), "%s", family);
	split_le(line + name_n, labels_end, key, sizeof(key), h->le_text,
		 sizeof(h->le_text));
	h->key = strdup(key);
	assert_non_null(h->key);
	h->kind = (enum hist_kind)kind;
	h->value = value;
	h->le = 0;
	if (kind == H_BUCKET) {
		char *e = NULL;

		if (strcmp(h->le_text, "+Inf") == 0) {
			h->le = 1.0 / 0.0;
		} else {
			h->le = strtod(h->le_text, &e);
			if (h->le_text[0] == '\0' || *e != '\0')
				problem(c, "bucket without a numeric le: %s",
					line);
		}
	} else if (h->le_text[0]) {
		problem(c, "le on a _sum or _count: %s", line);
	}
}

/* Each series of the family just read: buckets in ascending le, counts
 * that never decrease, a last bucket le="+Inf" equal to its _count, one
 * _sum and one _count. Empties hs. */
static void hist_check(struct checker *c, struct hist_samples *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		const char *key = hs->s[i].key;
		double last_le = -1.0 / 0.0, last_v = 0, inf = -1, count = -1;
		int sums = 0, counts = 0;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(hs->s[j].key, key) == 0;
		if (seen)
			continue;
		for (size_t j = i; j < hs->n; j++) {
			const struct hist_sample *h = &hs->s[j];

			if (strcmp(h->key, key) != 0)
				continue;
			switch (h->kind) {
			case H_BUCKET:
				if (inf >= 0)
					problem(c, "%s: bucket after +Inf", key);
				if (!(h->le > last_le))
					problem(c, "%s: le=\"%s\" out of order",
						key, h->le_text);
				if (h->value < last_v)
					problem(c, "%s: le=\"%s\" not "
						"cumulative", key, h->le_text);
				last_le = h->le;
				last_v = h->value;
				if (h->le == 1.0 / 0.0)
					inf = h->value;
				break;
			case H_SUM:
				sums++;
				break;
			case H_COUNT:
				counts++;
				count = h->value;
				break;
			}
		}
		if (inf < 0)
			problem(c, "%s: no le=\"+Inf\" bucket", key);
		if (sums != 1 || counts != 1)
			problem(c, "%s: %d _sum and %d _count lines", key, sums,
				counts);
		else if (inf >= 0 && count != inf)
			problem(c, "%s: +Inf bucket %.0f, _count %.0f", key,
				inf, count);
	}
	for (size_t i = 0; i < hs->n; i++)
		free(hs->s[i].key);
	free(hs->s);
	hs->s = NULL;
	hs->n = 0;
}

const char *tm_structure_problem(const char *page, char *buf, size_t len)
{
	char family[128] = "", helped[128] = "", type[16] = "";
	char **seen_families = NULL, **series = NULL;
	size_t n_families = 0, n_series = 0;
	char *copy = strdup(page), *save = NULL;
	struct hist_samples hist = { 0 };
	struct checker c = { .first = "" };

	assert_non_null(copy);
	if (strlen(page) == 0 || page[strlen(page) - 1] != '\n')
		problem(&c, "the page does not end with a newline");
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			size_t n = name_len(line + 7);

			hist_check(&c, &hist);
			if (n == 0 || n >= sizeof(helped) || line[7 + n] != ' ') {
				problem(&c, "bad HELP line: %s", line);
				continue;
			}
			memcpy(helped, line + 7, n);
			helped[n] = '\0';
			for (size_t i = 0; i < n_families; i++)
				if (strcmp(seen_families[i], helped) == 0)
					problem(&c, "family %s appears twice",
						helped);
			seen_families = realloc(seen_families,
						(n_families + 1) * sizeof(char *));
			assert_non_null(seen_families);
			seen_families[n_families++] = strdup(helped);
			family[0] = '\0';
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			size_t n = name_len(line + 7);

			if (n != strlen(helped) ||
			    strncmp(line + 7, helped, n) != 0) {
				problem(&c, "TYPE without its HELP just "
					"before: %s", line);
				continue;
			}
			snprintf(type, sizeof(type), "%s", line + 8 + n);
			if (strcmp(type, "counter") && strcmp(type, "gauge") &&
			    strcmp(type, "histogram"))
				problem(&c, "unexpected type: %s", line);
			if (strcmp(type, "counter") == 0 &&
			    (n < 6 || strcmp(helped + n - 6, "_total") != 0))
				problem(&c, "counter without _total: %s", line);
			/* ours, or the standard process_* ones */
			if (strncmp(helped, "maglevd_", 8) != 0 &&
			    strncmp(helped, "process_", 8) != 0)
				problem(&c, "family without the maglevd_ "
					"prefix: %s", line);
			memcpy(family, helped, n + 1);
		} else if (line[0] == '#') {
			problem(&c, "unexpected comment: %s", line);
		} else {
			size_t n = name_len(line);
			const char *p = line + n;
			bool histogram = strcmp(type, "histogram") == 0;
			double value;
			char *end;

			if (family[0] == '\0' ||
			    (!histogram && (n != strlen(family) ||
					    strncmp(line, family, n) != 0))) {
				problem(&c, "sample outside its family (%s): %s",
					family, line);
				continue;
			}
			if (!skip_labels(&p) || *p != ' ') {
				problem(&c, "bad labels: %s", line);
				continue;
			}
			value = strtod(p + 1, &end);
			if (end == p + 1 || *end != '\0')
				problem(&c, "bad value: %s", line);
			if (histogram)
				hist_add(&c, &hist, family, line, n, p, value);
			series = realloc(series, (n_series + 1) * sizeof(char *));
			assert_non_null(series);
			series[n_series++] = strndup(line, (size_t)(p - line));
		}
	}
	hist_check(&c, &hist);
	if (n_series)
		qsort(series, n_series, sizeof(char *), cmp_str);
	for (size_t i = 1; i < n_series; i++)
		if (strcmp(series[i - 1], series[i]) == 0)
			problem(&c, "duplicate series %s", series[i]);
	for (size_t i = 0; i < n_series; i++)
		free(series[i]);
	for (size_t i = 0; i < n_families; i++)
		free(seen_families[i]);
	free(series);
	free(seen_families);
	free(copy);
	if (!c.first[0])
		return NULL;
	snprintf(buf, len, "%s", c.first);
	return buf;
}

void tm_check_structure(const char *page)
{
	char why[512];

	if (tm_structure_problem(page, why, sizeof(why)))
		fail_msg("%s", why);
}

/* ---- a health engine at work ---- */

void tm_health_wait(struct mlv_health *h, const char *vip,
		    const char *backend, uint64_t checks)
{
	struct timespec now, end;
	struct mlv_health_status st;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 10;
	for (;;) {
		struct pollfd pfd = { .fd = mlv_health_fd(h), .events = POLLIN };

		assert_int_equal(mlv_health_get(h, vip, backend, &st), MLV_OK);
		if (st.checks >= checks)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec > end.tv_nsec))
			fail_msg("%s/%s: %llu checks after 10 s, wanted %llu",
				 vip, backend, (unsigned long long)st.checks,
				 (unsigned long long)checks);
		poll(&pfd, 1, 10);
		assert_int_equal(mlv_health_process(h), MLV_OK);
	}
}

int tm_listen_loopback(uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 128), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

struct mlv_config *tm_checked_config(uint16_t port)
{
	struct mlv_config *cfg = NULL;
	struct mlv_diags diags;
	char yaml[1024];
	int n;

	n = snprintf(yaml, sizeof(yaml),
		"dataplane:\n"
		"  workers: 1\n"
		"  ports:\n"
		"    - {name: ext, device: net_null0, address: 10.99.0.1,\n"
		"       next_hop: \"02:00:00:00:00:fe\"}\n"
		"defaults:\n"
		"  table_size: 251\n"
		"vips:\n"
		"  - name: web\n"
		"    address: 192.0.2.10\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    health: {type: tcp, port: %u, interval: 100ms,\n"
		"             timeout: 50ms}\n"
		"    backends:\n"
		"      - {name: web-1, address: 127.0.0.1}\n"
		"      - {name: web-2, address: 127.0.0.2}\n"
		"  - name: quiet\n"
		"    address: 192.0.2.11\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    health: {type: none}\n"
		"    backends:\n"
		"      - {name: q-1, address: 127.0.0.3}\n", port);
	assert_true(n > 0 && (size_t)n < sizeof(yaml));
	mlv_diags_init(&diags);
	assert_int_equal(mlv_config_load_buffer("checked.yaml", yaml,
						(size_t)n, &cfg, &diags),
			 MLV_OK);
	mlv_diags_free(&diags);
	return cfg;
}

uint32_t tm_fake_ports(void *ctx, const struct mlv_port_stats **out)
{
	static const struct mlv_port_xstat x[] = {
		{ "rx_good_packets", 100 }, { "rx_missed_errors", 7 },
		{ "rx_q0_errors", 1 },
	};
	/* ext: a bond whose primary is down and whose second member
	 * carries the traffic; int: a link down */
	static struct mlv_port_stats ps[2] = {
		{ .name = "ext", .device = "net_bonding0", .ok = true,
		  .n_xstats = 3, .xstats = x, .link = MLV_PORT_LINK_UP,
		  .n_members = 2, .members = {
			{ .device = "net_af_packet0", .up = false,
			  .active = false, .rx_packets = 60, .tx_packets = 50,
			  .rx_errors = 2, .tx_errors = 0 },
			{ .device = "net_af_packet1", .up = true,
			  .active = true, .rx_packets = 40, .tx_packets = 30,
			  .rx_errors = 0, .tx_errors = 1 } } },
		{ .name = "int", .device = "net_null0", .ok = false,
		  .link = MLV_PORT_LINK_DOWN },
	};

	(void)ctx;
	ps[0].v[MLV_PORT_CTR_RX_PACKETS] = 100;
	ps[0].v[MLV_PORT_CTR_RX_MISSED] = 7;
	ps[0].v[MLV_PORT_CTR_TX_BYTES] = 6400;
	*out = ps;
	return 2;
}

enum mlv_err tm_fake_steer(void *ctx, uint32_t i, const char **interface,
			   uint64_t out[MLV_STEER_CTR__COUNT])
{
	static const char *const names[] = { "eth0", "eth1" };

	(void)ctx;
	if (i >= 2)
		return MLV_E_NOT_FOUND;
	*interface = names[i];
	for (int c = 0; c < MLV_STEER_CTR__COUNT; c++)
		out[c] = 1000u * (i + 1) + (uint64_t)c;
	return MLV_OK;
}
