/* SPDX-License-Identifier: BSD-3-Clause */
/* Control-socket test fixture (ctl_fixture.h). */
#define _GNU_SOURCE
#include "tests/support/ctl_fixture.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "control/generation/generation.h"
#include "control/generation/stats.h"

static const char good_yaml[] =
"dataplane:\n"
"  workers: 2\n"
"  ports:\n"
"    - {name: ext, device: net_null0, address: 10.99.0.1,\n"
"       address6: \"fd00:99::1\", next_hop: \"02:00:00:00:00:fe\"}\n"
"defaults:\n"
"  table_size: 1009\n"
"  health: {type: none}\n"
"vips:\n"
"  - name: web\n"
"    address: 192.0.2.10\n"
"    port: 80\n"
"    protocol: tcp\n"
"    ipip_source: 10.77.0.16/28\n"
"    backends:\n"
"      - {name: web-1, address: 10.99.1.11, weight: 100}\n"
"      - {name: web-2, address: 10.99.1.12, weight: 100}\n"
"      - {name: web-3, address: 10.99.1.13, weight: 50, state: drain}\n"
"      - {name: web-4, address: 10.99.1.14, weight: 200}\n"
"  - name: dns\n"
"    address: \"2001:db8::10\"\n"
"    port: 53\n"
"    protocol: udp\n"
"    forwarding: gue\n"
"    backends:\n"
"      - {name: dns-1, address: \"fd00:99:1::21\"}\n"
"      - {name: dns-2, address: \"fd00:99:1::22\"}\n"
"  - name: big\n"
"    address: 192.0.2.20\n"
"    port: 443\n"
"    protocol: tcp\n"
"    table_size: 655373\n"
"    backends:\n"
"      - {name: big-1, address: 10.99.2.1}\n"
"      - {name: big-2, address: 10.99.2.2}\n";

/* Two errors on purpose: a typo'd key and a non-prime table size. */
static const char bad_yaml[] =
"dataplane:\n"
"  workers: 2\n"
"  ports:\n"
"    - {name: ext, device: net_null0, address: 10.99.0.1}\n"
"vips:\n"
"  - name: web\n"
"    address: 192.0.2.10\n"
"    port: 80\n"
"    protocol: tcp\n"
"    table_size: 1000\n"
"    backnds: []\n";

/* ---- the fake daemon ---- */

static struct fx_override *find_ov(struct ctl_fx *fx, const char *vip,
				   const char *backend, bool create)
{
	for (uint32_t i = 0; i < fx->n_ov; i++)
		if (!strcmp(fx->ov[i].vip, vip) && !strcmp(fx->ov[i].backend, backend))
			return &fx->ov[i];
	if (!create || fx->n_ov == FX_MAX_OV)
		return NULL;
	struct fx_override *o = &fx->ov[fx->n_ov++];

	memset(o, 0, sizeof(*o));
	snprintf(o->vip, sizeof(o->vip), "%s", vip);
	snprintf(o->backend, sizeof(o->backend), "%s", backend);
	return o;
}

static void backend_state(const struct mlv_gen_pair *pair,
			  struct mlv_gen_backend_state *out, void *ctx)
{
	struct ctl_fx *fx = ctx;
	const char *vip = pair->vip, *backend = pair->backend;
	struct fx_override *o = find_ov(fx, vip, backend, false);

	if (o) {
		out->drain_override = o->drain;
		out->has_weight_override = o->has_weight;
		out->weight_override = o->weight;
	}
	if (!strcmp(fx->down_vip, vip) && !strcmp(fx->down_backend, backend))
		out->healthy = false;
}

/* Build and install the next generation from cfg; counters carry over
 * through the stats totals as in the daemon. */
static enum mlv_err rebuild(struct ctl_fx *fx, const struct mlv_config *cfg)
{
	struct mlv_gen_port_info ports[MLV_MAX_PORTS];
	struct mlv_gen_build_opts opts = { .tallies = &fx->tallies };
	struct mlv_generation *gen;
	enum mlv_err rc;

	memset(ports, 0, sizeof(ports));
	rc = mlv_gen_build_opt(cfg, ports, FX_WORKERS,
			       fx->gen ? fx->gen->number + 1 : 1, backend_state,
			       fx, fx->gen, &opts, &gen);
	if (rc != MLV_OK)
		return rc;
	rc = mlv_stats_track(gen, fx->stats);
	if (rc != MLV_OK) {
		mlv_gen_free(gen);
		return rc;
	}
	if (fx->gen) {
		/* no worker runs: the old generation can go at once */
		mlv_stats_fold(fx->gen, fx->stats);
		mlv_gen_free(fx->gen);
	}
	fx->gen = gen;
	return MLV_OK;
}

static const struct mlv_config *get_config(void *ctx)
{
	return ((struct ctl_fx *)ctx)->cfg;
}

static const struct mlv_generation *get_generation(void *ctx)
{
	return ((struct ctl_fx *)ctx)->gen;
}

static enum mlv_err do_reload(void *ctx, const struct mlv_ctl_reload_req *req,
			      struct mlv_diags *diags, struct mlv_plan *plan)
{
	enum mlv_ctl_reload_mode mode = req->mode;
	struct ctl_fx *fx = ctx;
	struct mlv_config *cfg = NULL;
	enum mlv_err rc;

	fx->reload_calls++;
	rc = fx->reload_fails ?
		mlv_config_load_buffer("bad.yaml", bad_yaml, sizeof(bad_yaml) - 1,
				       &cfg, diags) :
		mlv_config_load_buffer("good.yaml", fx->reload_yaml ?
				       fx->reload_yaml : good_yaml,
				       fx->reload_yaml ? strlen(fx->reload_yaml) :
				       sizeof(good_yaml) - 1, &cfg, diags);
	fx->reload_mode = mode;
	snprintf(fx->reload_file, sizeof(fx->reload_file), "%s",
		 req->file ? req->file : "");
	fx->reload_uid = req->uid;
	if (rc != MLV_OK)
		return rc;
	rc = mlv_plan_make(fx->cfg, cfg, plan);
	if (rc == MLV_OK && (mode == MLV_CTL_RELOAD_CHECK ||
			     mode == MLV_CTL_RELOAD_CHECK_FORCE)) {
		mlv_config_free(cfg);
		return MLV_OK;
	}
	if (rc == MLV_OK)
		rc = rebuild(fx, cfg);
	if (rc != MLV_OK) {
		mlv_config_free(cfg);
		return rc;
	}
	mlv_config_free(fx->cfg);
	fx->cfg = cfg;
	return MLV_OK;
}

static enum mlv_err set_one(struct ctl_fx *fx, const struct mlv_ctl_override *req,
			    char *detail, size_t len)
{
	struct fx_override *o = find_ov(fx, req->vip, req->backend, true);

	if (!o) {
		snprintf(detail, len, "fixture: too many overrides");
		return MLV_E_LIMIT;
	}
	switch (req->op) {
	case MLV_CTL_OV_DRAIN:
		o->drain = true;
		break;
	case MLV_CTL_OV_UNDRAIN:
		o->drain = false;
		break;
	case MLV_CTL_OV_WEIGHT:
		o->has_weight = true;
		o->weight = req->weight;
		break;
	case MLV_CTL_OV_WEIGHT_RESET:
		o->has_weight = false;
		break;
	default:
		return MLV_E_INVAL;
	}
	return MLV_OK;
}

static enum mlv_err set_overrides(void *ctx, const struct mlv_ctl_override *ovs,
				  uint32_t n, char *detail, size_t len)
{
	struct ctl_fx *fx = ctx;
	enum mlv_err rc = MLV_OK;

	fx->override_calls++;
	for (uint32_t i = 0; i < n && rc == MLV_OK; i++)
		rc = set_one(fx, &ovs[i], detail, len);
	return rc == MLV_OK ? rebuild(fx, fx->cfg) : rc;
}

/* The fake workers: they answer on the answer_after-th poll after a
 * post (never if mute), and know tracked_key. */
static enum mlv_err track_post(void *ctx, const struct mlv_flow_key *key,
			       uint32_t hash, uint64_t *ticket)
{
	struct ctl_fx *fx = ctx;

	(void)hash;
	if (fx->busy_posts > 0) {
		fx->busy_posts--;
		return MLV_E_BUSY;
	}
	fx->track_posts++;
	fx->asked = *key;
	fx->polls_left = fx->answer_after;
	*ticket = ++fx->ticket;
	return MLV_OK;
}

static enum mlv_err track_poll(void *ctx, uint64_t ticket, bool *done,
			       struct mlv_ctl_tracked *out)
{
	struct ctl_fx *fx = ctx;

	assert_int_equal(ticket, fx->ticket);
	fx->track_polls++;
	*done = false;
	if (fx->mute || fx->polls_left-- > 0)
		return MLV_OK;
	*done = true;
	memset(out, 0, sizeof(*out));
	if (fx->tracked && !memcmp(&fx->asked, &fx->tracked_key,
				   sizeof(fx->asked)))
		*out = (struct mlv_ctl_tracked){
			.found = true, .worker = fx->tracked_worker,
			.backend_uid = fx->tracked_uid,
			.state = MLV_CT_TCP_ESTABLISHED,
			.expires_in_ms = fx->tracked_expires_ms,
		};
	return MLV_OK;
}

static enum mlv_err list_post(void *ctx, const void *owner, uint32_t worker,
			      uint32_t first, uint32_t cap)
{
	struct ctl_fx *fx = ctx;

	assert_non_null(owner);
	if (worker >= FX_WORKERS)
		return MLV_E_RANGE;
	assert_false(fx->list_posted[worker]);
	assert_true(cap >= MLV_CT_WAYS && cap <= 128);
	fx->list_posted[worker] = true;
	fx->list_first[worker] = first;
	fx->list_cap[worker] = cap;
	fx->list_posts++;
	return MLV_OK;
}

/* A small page (8 buckets), so that paging is exercised. */
static enum mlv_err list_poll(void *ctx, const void *owner, uint32_t worker,
			      bool *done, struct mlv_ctl_conn_page *page)
{
	struct ctl_fx *fx = ctx;

	assert_non_null(owner);
	if (worker >= FX_WORKERS)
		return MLV_E_RANGE;
	assert_true(fx->list_posted[worker]);
	fx->list_posted[worker] = false;
	fx->list_next = mlv_ct_scan(fx->ct[worker], fx->list_first[worker], 8,
				    fx->list_now, fx->list_page,
				    fx->list_cap[worker], &fx->list_n);
	*done = true;
	page->n = fx->list_n;
	page->e = fx->list_page;
	page->next = fx->list_next;
	page->now_ms = fx->list_now;
	for (uint8_t s = 0; s < MLV_CT__NSTATES; s++)
		page->timeout_ms[s] = mlv_ct_state_timeout_ms(fx->ct[worker], s);
	return MLV_OK;
}

static void track_cancel(void *ctx, uint64_t ticket)
{
	struct ctl_fx *fx = ctx;

	assert_int_equal(ticket, fx->ticket);
	fx->track_cancels++;
}

static void *ct_alloc(size_t size, void *ctx)
{
	(void)ctx;
	return calloc(1, size);
}

static void ct_release(void *p, void *ctx)
{
	(void)ctx;
	free(p);
}

void ctl_fx_init(struct ctl_fx *fx)
{
	struct mlv_diags diags;
	struct mlv_ct_params ctp = {
		.entries = 1024, .tcp_timeout_ms = 1000,
		.tcp_handshake_timeout_ms = 1000, .tcp_closing_timeout_ms = 1000,
		.udp_timeout_ms = 1000, .other_timeout_ms = 1000,
	};

	memset(fx, 0, sizeof(*fx));
	fx->stop_fd = -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/mlv-ctl-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	/* a subdirectory that does not exist yet: the server creates it */
	snprintf(fx->path, sizeof(fx->path), "%s/run/ctl.sock", fx->dir);

	mlv_diags_init(&diags);
	assert_int_equal(mlv_config_load_buffer("good.yaml", good_yaml,
						sizeof(good_yaml) - 1, &fx->cfg,
						&diags), MLV_OK);
	mlv_diags_free(&diags);
	assert_int_equal(mlv_stats_create(&fx->stats), MLV_OK);
	fx->tallies.n_workers = FX_WORKERS;
	fx->tallies.per_worker = fx->tally;
	assert_int_equal(rebuild(fx, fx->cfg), MLV_OK);
	for (int w = 0; w < FX_WORKERS; w++) {
		fx->ctr_ptr[w] = &fx->ctr[w];
		fx->ct[w] = mlv_ct_create(&ctp, ct_alloc, ct_release, NULL);
		assert_int_equal(mlv_flow_tally_create(&fx->tally[w]), MLV_OK);
		mlv_ct_set_tally(fx->ct[w], fx->tally[w]);
		assert_non_null(fx->ct[w]);
		fx->ct_ptr[w] = fx->ct[w];
	}

	fx->st.ctx = fx;
	fx->st.config = get_config;
	fx->st.generation = get_generation;
	fx->st.stats = fx->stats;
	fx->st.n_workers = FX_WORKERS;
	fx->st.worker_ctr = fx->ctr_ptr;
	fx->st.worker_ct = fx->ct_ptr;
	fx->st.tsc_hz = 1000000000ull;   /* busy cycles in seconds */
	clock_gettime(CLOCK_MONOTONIC, &fx->st.started);
	fx->st.backend_state = backend_state;
	fx->st.backend_state_ctx = fx;
	fx->st.reload = do_reload;
	fx->st.set_overrides = set_overrides;
	fx->st.track_post = track_post;
	fx->st.list_post = list_post;
	fx->st.list_poll = list_poll;
	fx->st.track_poll = track_poll;
	fx->st.track_cancel = track_cancel;
}

/* ---- the server thread ---- */

static void *serve(void *arg)
{
	struct ctl_fx *fx = arg;
	struct pollfd pfd[2] = {
		{ .fd = mlv_ctl_fd(fx->srv), .events = POLLIN },
		{ .fd = fx->stop_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (pfd[0].revents && mlv_ctl_process(fx->srv) != MLV_OK)
			break;
	}
	return NULL;
}

void ctl_fx_start(struct ctl_fx *fx, struct mlv_ctl_server_params p)
{
	char err[256] = "";

	p.path = fx->path;
	p.handle = mlv_ctl_handle;
	p.ctx = &fx->st;
	if (!p.mode)
		p.mode = 0660;
	if (mlv_ctl_server_create(&p, &fx->srv, err, sizeof(err)) != MLV_OK)
		fail_msg("server: %s", err);
	fx->st.server = fx->srv;
	fx->stop_fd = eventfd(0, EFD_CLOEXEC);
	assert_true(fx->stop_fd >= 0);
	assert_int_equal(pthread_create(&fx->thread, NULL, serve, fx), 0);
	fx->running = true;
}

void ctl_fx_stop(struct ctl_fx *fx)
{
	uint64_t one = 1;

	if (!fx->running)
		return;
	assert_int_equal(write(fx->stop_fd, &one, sizeof(one)), sizeof(one));
	pthread_join(fx->thread, NULL);
	close(fx->stop_fd);
	fx->stop_fd = -1;
	mlv_ctl_server_destroy(fx->srv);
	fx->srv = NULL;
	fx->st.server = NULL;
	fx->running = false;
}

void ctl_fx_free(struct ctl_fx *fx)
{
	char cmd[160];

	ctl_fx_stop(fx);
	for (int w = 0; w < FX_WORKERS; w++) {
		mlv_ct_destroy(fx->ct[w]);
		mlv_flow_tally_destroy(fx->tally[w]);
	}
	if (fx->gen) {
		mlv_stats_fold(fx->gen, fx->stats);
		mlv_gen_free(fx->gen);
	}
	mlv_stats_destroy(fx->stats);
	mlv_config_free(fx->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- clients ---- */

int ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 30 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path));
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fail_msg("connect %s: %s", path, strerror(errno));
	return fd;
}

bool ctl_send(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t n = send(fd, text, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		text += n;
		len -= (size_t)n;
	}
	return true;
}

char *ctl_read_line(int fd)
{
	size_t len = 0, cap = 1024;
	char *buf = malloc(cap);

	assert_non_null(buf);
	for (;;) {
		char c;
		ssize_t n = recv(fd, &c, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return NULL;
		}
		if (c == '\n') {
			buf[len] = '\0';
			return buf;
		}
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		buf[len++] = c;
	}
}

json_t *ctl_call(int fd, const char *request)
{
	json_error_t jerr;
	char *line;
	json_t *reply;

	assert_true(ctl_send(fd, request, strlen(request)));
	assert_true(ctl_send(fd, "\n", 1));
	line = ctl_read_line(fd);
	if (!line)
		fail_msg("no reply to %s", request);
	reply = json_loads(line, 0, &jerr);
	if (!reply)
		fail_msg("reply is not JSON (%s): %.200s", jerr.text, line);
	free(line);
	assert_true(json_is_object(reply));
	assert_true(json_is_boolean(json_object_get(reply, "ok")));
	return reply;
}

json_t *ctl_call1(struct ctl_fx *fx, const char *request)
{
	int fd = ctl_connect(fx->path);
	json_t *reply = ctl_call(fd, request);

	close(fd);
	return reply;
}

const char *ctl_error(const json_t *reply)
{
	const char *e = json_string_value(json_object_get(reply, "error"));

	return e ? e : "";
}

bool ctl_ok(const json_t *reply)
{
	return json_is_true(json_object_get(reply, "ok"));
}

json_t *ctl_server_counters(struct ctl_fx *fx)
{
	json_t *r = ctl_call1(fx, "{\"command\": \"status\"}");
	json_t *c = json_object_get(r, "control");

	assert_true(json_is_object(c));
	json_incref(c);
	json_decref(r);
	return c;
}
