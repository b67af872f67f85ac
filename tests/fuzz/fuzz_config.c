/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the config loader and the checks of `maglevd
 * --check-config`: the input is a main YAML file, loaded from memory with
 * mlv_config_load_buffer; a config that loads then goes through what
 * --check-config runs after the loader (the port plan, the health
 * checks, a generation build) and the reload plan against a fixed running
 * config, both ways. The loader must either return a model and no error
 * or an error and no model, and leak nothing either way.
 *
 * `include:` reads files. The main file is named as if it lay in a
 * private temporary directory holding a few fixed fragments (two in
 * vips.d/, a broken one, an empty one) and fragment.yaml, which holds what follows
 * a line "#%fragment" in the input (empty without one), so fragments are
 * fuzzed too. glob() is wrapped (-Wl,--wrap=glob): a pattern outside that
 * directory, or one that could climb out of it (a component starting
 * with '.', a backslash), matches nothing, so no input reads a host file.
 */
#define _GNU_SOURCE
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/config/config.h"
#include "control/config/diags.h"
#include "control/config/plan.h"
#include "control/generation/generation.h"
#include "control/generation/vip_tables.h"
#include "control/health/health.h"
#include "dataplane/ports/plan.h"
#include "tests/fuzz/fuzz_check.h"

/* Larger tables build slowly and find nothing the small ones do not. */
#define BUILD_MAX_SLOTS (1u << 18)

static const char fragment_mark[] = "#%fragment\n";

/* The running config the reload plan is made against, in flow style. */
static const char running_yaml[] =
	"dataplane: {workers: 2, ports: [{name: ext, device: net_null0,\n"
	"  address: 10.99.0.1, address6: \"fd00:99::1\",\n"
	"  next_hop: \"02:00:00:00:00:fe\"}]}\n"
	"defaults: {table_size: 1009}\n"
	"vips:\n"
	"- {name: web, address: 192.0.2.10, port: 80, protocol: tcp, backends:\n"
	"   [{name: web-1, address: 10.99.1.11},\n"
	"    {name: web-2, address: 10.99.1.12, state: drain}]}\n"
	"- {name: dns, address: \"2001:db8::10\", port: 53, protocol: udp,\n"
	"   backends: [{name: dns-1, address: \"fd00:99:1::21\"}]}\n";

/* The fixed fragments: path below the directory, text. */
static const struct { const char *name, *text; } fixed[] = {
	{ "vips.d/a.yaml",
	  "vips:\n"
	  "  - name: frag-a\n"
	  "    address: 192.0.2.30\n"
	  "    port: 443\n"
	  "    protocol: tcp\n"
	  "    backends: [{name: a-1, address: 10.99.3.1}]\n" },
	{ "vips.d/b.yaml",
	  "vips:\n"
	  "  - name: frag-b\n"
	  "    address: \"2001:db8::30\"\n"
	  "    port: 53\n"
	  "    protocol: udp\n"
	  "    health: {type: dns, query: example.org}\n"
	  "    backends: [{name: b-1, address: \"fd00::1\"}]\n" },
	{ "broken.yaml", "vips: [\n  - {name: x\n" },
	{ "empty.yaml", "" },
	{ "fragment.yaml", "" },
};

static char dir[64];
static char main_path[128];
static char fragment_path[128];
static struct mlv_config *running;
static FILE *devnull;

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	CHECK(fwrite(data, 1, len, f) == len || len == 0);
	CHECK(fclose(f) == 0);
}

static void cleanup(void)
{
	char path[192];

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, fixed[i].name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/vips.d", dir);
	rmdir(path);
	rmdir(dir);
	mlv_config_free(running);
	if (devnull)
		fclose(devnull);
}

static void init(void)
{
	const char *tmp = getenv("TMPDIR");
	struct mlv_diags d;
	char path[192];

	snprintf(dir, sizeof(dir), "%s/mlv-fuzz-config.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/vips.d", dir);
	CHECK(mkdir(path, 0700) == 0);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, fixed[i].name);
		write_file(path, fixed[i].text, strlen(fixed[i].text));
	}
	snprintf(main_path, sizeof(main_path), "%s/maglevd.yaml", dir);
	snprintf(fragment_path, sizeof(fragment_path), "%s/fragment.yaml", dir);
	mlv_diags_init(&d);
	if (mlv_config_load_buffer("running.yaml", running_yaml,
				   sizeof(running_yaml) - 1, &running,
				   &d) != MLV_OK) {
		mlv_diags_print(&d, stderr);
		abort();
	}
	mlv_diags_free(&d);
	devnull = fopen("/dev/null", "w");
	CHECK(devnull != NULL);
	atexit(cleanup);
}

/* Whether a pattern stays inside dir: below it, and no component that
 * could name "." or ".." (glob matches a leading '.' only literally) or
 * escape one. */
static bool confined(const char *pattern)
{
	size_t n = strlen(dir);
	const char *p;

	if (strncmp(pattern, dir, n) != 0 || pattern[n] != '/' ||
	    strchr(pattern, '\\'))
		return false;
	for (p = pattern + n; *p; p++)
		if (p[0] == '/' && p[1] == '.')
			return false;
	return true;
}

int __real_glob(const char *pattern, int flags,
		int (*errfunc)(const char *, int), glob_t *g);
int __wrap_glob(const char *pattern, int flags,
		int (*errfunc)(const char *, int), glob_t *g);

int __wrap_glob(const char *pattern, int flags,
		int (*errfunc)(const char *, int), glob_t *g)
{
	if (!confined(pattern)) {
		memset(g, 0, sizeof(*g));
		return GLOB_NOMATCH;
	}
	return __real_glob(pattern, flags, errfunc, g);
}

/* Whether building this config's tables stays cheap: slots, a
 * rendezvous slot costing a hash per backend, and ring points. */
static bool build_small(const struct mlv_config *cfg)
{
	uint64_t slots = 0;

	for (uint32_t i = 0; i < cfg->n_vips; i++) {
		const struct mlv_vip_config *v = &cfg->vips[i];

		slots += (uint64_t)v->table_size *
			 (v->table == MLV_TABLE_RENDEZVOUS ? v->n_backends : 1);
		if (v->table == MLV_TABLE_RING)
			for (uint32_t b = 0; b < v->n_backends; b++)
				slots += (uint64_t)v->backends[b].weight * v->vnodes;
	}
	return slots <= BUILD_MAX_SLOTS;
}

/* What --check-config runs once the loader accepted cfg (daemon/main.c),
 * then the reload plan in both directions. */
static void check_loaded(const struct mlv_config *cfg)
{
	struct mlv_gen_port_info ports[MLV_MAX_PORTS];
	struct mlv_generation *gen = NULL;
	struct mlv_port_plan pp;
	struct mlv_plan plan;
	char why[512];

	why[0] = '\0';
	(void)mlv_port_plan_make(cfg, &pp, why, sizeof(why));
	CHECK(memchr(why, '\0', sizeof(why)) != NULL);
	if (mlv_health_check_config(cfg, why, sizeof(why)) != MLV_OK)
		CHECK(why[0] != '\0');
	else if (build_small(cfg)) {
		memset(ports, 0, sizeof(ports));
		(void)mlv_gen_build(cfg, ports, cfg->workers, 1, NULL, NULL,
				    NULL, &gen);
		mlv_gen_free(gen);
		mlv_gen_tables_pool_drain();
	}
	for (int dir_ = 0; dir_ < 2; dir_++) {
		memset(&plan, 0, sizeof(plan));
		if (mlv_plan_make(dir_ ? cfg : running, dir_ ? running : cfg,
				  &plan) != MLV_OK)
			continue;
		CHECK(plan.n <= plan.vips_before + plan.vips_after);
		(void)mlv_plan_fits(&plan, &cfg->reload_budget, why, sizeof(why));
		mlv_plan_summary(&plan, why, sizeof(why));
		CHECK(strlen(why) < sizeof(why));
		mlv_plan_free(&plan);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *mark = memmem(data, size, fragment_mark,
				  sizeof(fragment_mark) - 1);
	size_t main_len = mark ? (size_t)(mark - text) : size;
	struct mlv_config *cfg = NULL;
	struct mlv_diags d;
	enum mlv_err err;

	if (dir[0] == '\0')
		init();
	if (mark) {
		size_t skip = main_len + sizeof(fragment_mark) - 1;

		write_file(fragment_path, text + skip, size - skip);
	} else {
		write_file(fragment_path, "", 0);
	}

	mlv_diags_init(&d);
	err = mlv_config_load_buffer(main_path, text, main_len, &cfg, &d);
	CHECK((err == MLV_OK) == (cfg != NULL));
	CHECK(err != MLV_OK || d.n_errors == 0);
	CHECK(err != MLV_E_CONFIG || d.n_errors > 0);
	CHECK(d.n_errors <= d.n);
	for (uint32_t i = 0; i < d.n; i++) {
		CHECK(memchr(d.items[i].message, '\0',
			     sizeof(d.items[i].message)) != NULL);
		CHECK(d.items[i].pos.file <= d.n_fragments);
	}
	mlv_diags_print(&d, devnull);
	mlv_diags_free(&d);
	if (cfg)
		check_loaded(cfg);
	mlv_config_free(cfg);
	return 0;
}
