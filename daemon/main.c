/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevd: an L4 load balancer on DPDK. See README.md and
 * docs/operations.md; the life cycle is in daemon/daemon.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "control/config/config.h"
#include "control/generation/vip_tables.h"
#include "daemon/daemon.h"
#include "control/base/log.h"
#include "daemon/notify.h"
#include "daemon/options/eal_args.h"
#include "daemon/options/options.h"
#include "daemon/stats_file.h"
#include "dataplane/ports/plan.h"

#define EXIT_USAGE 2

/* --check-config: load and validate, print OK or every diagnostic. */
static int check_config(const char *path)
{
	struct mlv_config *cfg = NULL;
	struct mlv_port_plan plan;
	struct mlv_diags diags;
	enum mlv_err err;
	char why[512];

	mlv_diags_init(&diags);
	err = mlv_config_load(path, &cfg, &diags);
	mlv_diags_print(&diags, stderr);
	if (err && diags.n_errors == 0)
		fprintf(stderr, "%s: error: %s\n", path, mlv_strerror(err));
	mlv_diags_free(&diags);
	if (err)
		return EXIT_FAILURE;
	/* Valid, but ports this release cannot start with. */
	if (mlv_port_plan_make(cfg, &plan, why, sizeof(why)) != MLV_OK)
		fprintf(stderr, "%s: warning: %s (maglevd will refuse to start)\n",
			path, why);
	/* Checks the daemon makes before building anything. */
	if (mlv_eal_args_check_cpus(cfg->eal_args, (int)cfg->n_eal_args,
				    cfg->workers, NULL, 0, why,
				    sizeof(why)) != MLV_OK) {
		fprintf(stderr, "%s: error: %s\n", path, why);
		mlv_config_free(cfg);
		return EXIT_FAILURE;
	}
	if (mlv_health_check_config(cfg, why, sizeof(why)) != MLV_OK) {
		fprintf(stderr, "%s: error: health: %s\n", path, why);
		mlv_config_free(cfg);
		return EXIT_FAILURE;
	}
	/* The generation start-up would build from it, without publishing:
	 * what the build refuses, the start would (the ports' MACs are not
	 * known here and do not change what is refused). */
	{
		struct mlv_gen_port_info ports[MLV_MAX_PORTS];
		struct mlv_generation *gen = NULL;

		memset(ports, 0, sizeof(ports));
		err = mlv_gen_build(cfg, ports, cfg->workers, 1, NULL, NULL,
				    NULL, &gen);
		mlv_gen_free(gen);
		mlv_gen_tables_pool_drain();
		if (err) {
			fprintf(stderr, "%s: error: maglevd cannot build its "
				"tables and forwarding state from this "
				"configuration: %s\n", path, mlv_strerror(err));
			mlv_config_free(cfg);
			return EXIT_FAILURE;
		}
	}
	mlv_config_free(cfg);
	puts("OK");
	return EXIT_SUCCESS;
}

/* Signals are taken through a signalfd by the control loop. They are
 * blocked here, before rte_eal_init creates any thread, so every thread
 * inherits the mask and none is interrupted by them. */
static int block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	/* a stats-file or log reader going away must not kill us */
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static enum mlv_err load_config(const char *path, struct mlv_config **out)
{
	struct mlv_diags diags;
	enum mlv_err err;

	mlv_diags_init(&diags);
	err = mlv_config_load(path, out, &diags);
	mlv_daemon_log_diags(&diags);
	/* the diagnostics name the file and what is wrong (a missing file
	 * is one line: "PATH: cannot open: No such file or directory") */
	if (err && diags.n_errors == 0)
		mlv_err_log("cannot start with %s: %s", path, mlv_strerror(err));
	mlv_diags_free(&diags);
	return err;
}

static void write_final_stats(const char *path, json_t *doc)
{
	if (!path || !doc)
		return;
	char why[512];

	if (mlv_stats_file_write(path, doc, why, sizeof(why)) != MLV_OK)
		mlv_warn("stats file %s: cannot write the final one: %s", path,
			 why);
}

static int run(const struct mlv_options *opts)
{
	struct mlv_daemon d;
	json_t *final_stats = NULL;
	enum mlv_err err;
	int sigfd;

	memset(&d, 0, sizeof(d));
	mlv_announce_init(&d.announce);
	d.opts = opts;
	clock_gettime(CLOCK_MONOTONIC, &d.started);
	mlv_log_set_level(opts->log_level);
	mlv_log_setup(STDERR_FILENO, opts->log_format);

	sigfd = block_signals();
	if (sigfd < 0) {
		mlv_err_log("signals: %s", strerror(errno));
		return EXIT_FAILURE;
	}
	err = load_config(opts->config_path, &d.cfg);
	if (!err)
		err = mlv_daemon_start(&d);
	if (!err) {
		err = mlv_daemon_control_loop(&d, sigfd);
		mlv_notify_stopping();
		/* the routes go before the forwarding does */
		mlv_daemon_announce_close(&d);
		/* Workers stop, then ports (a net_pcap TX file is complete
		 * after close); the final counters are read after both. */
		mlv_daemon_stop_workers(&d);
		/* a graceful stop keeps the tracked flows for the next start */
		mlv_daemon_flows_save(&d);
		mlv_daemon_close_ports(&d);
		if (opts->stats_file) {
			final_stats = mlv_stats_json(&d, true);
			if (!final_stats)
				mlv_warn("final stats: out of memory");
		}
	}
	mlv_daemon_teardown(&d);
	write_final_stats(opts->stats_file, final_stats);
	json_decref(final_stats);
	close(sigfd);
	if (!err)
		mlv_info("stopped");
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct mlv_options opts;

	if (mlv_options_parse(argc, argv, &opts, stderr) != MLV_OK)
		return EXIT_USAGE;
	switch (opts.mode) {
	case MLV_MODE_HELP:
		mlv_options_usage(stdout);
		return EXIT_SUCCESS;
	case MLV_MODE_VERSION:
		printf("maglevd %s\n", MLV_VERSION);
		return EXIT_SUCCESS;
	case MLV_MODE_CHECK_CONFIG:
		return check_config(opts.config_path);
	case MLV_MODE_RUN:
		break;
	}
	/* Without -c a missing default file is a usage problem, said in
	 * one line before anything starts. */
	if (opts.config_is_default && access(opts.config_path, R_OK) != 0) {
		fprintf(stderr, "maglevd: %s: %s (give a configuration with "
			"-c FILE)\n", opts.config_path, strerror(errno));
		return EXIT_USAGE;
	}
	return run(&opts);
}
