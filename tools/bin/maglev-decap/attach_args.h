/* SPDX-License-Identifier: BSD-3-Clause */
/* The command line of `maglev-decap attach`, parsed apart from the system
 * (no interface, no BPF), so the unit tests check exactly what the tool
 * accepts and refuses.
 *
 * Not thread-safe: getopt's state is global. Errors: MLV_E_INVAL (bad
 * usage) or MLV_E_LIMIT (too many values), with a one-line reason in
 * errbuf. */
#ifndef MLV_DECAP_ATTACH_ARGS_H
#define MLV_DECAP_ATTACH_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/base/error.h"
#include "tools/bin/maglev-decap/decap_ctl.h"

/* The maps' sizes (dataplane/bpf/common/consts.h, which is BPF side). */
#define MLV_DECAP_ARGS_MAX_ADDRS 256
#define MLV_DECAP_ARGS_MAX_PORTS 16
#define MLV_DECAP_ARGS_MAX_SOURCES 256

struct mlv_decap_attach_args {
	const char *dev;
	enum mlv_decap_mode mode;
	int help;                       /* --help: print usage, do nothing */
	struct mlv_ip addrs[MLV_DECAP_ARGS_MAX_ADDRS];  /* --address */
	size_t n_addrs;
	uint16_t ports[MLV_DECAP_ARGS_MAX_PORTS];       /* --gue-port */
	size_t n_ports;
	struct mlv_ip_prefix sources[MLV_DECAP_ARGS_MAX_SOURCES];  /* --from */
	size_t n_sources;
	int mss_clamp_off;              /* --mss-clamp off */
	uint32_t path_mtu;              /* --path-mtu; 0: DEV's MTU */
	int second_chance_off;          /* --second-chance off */
};

/* Parse `attach DEV [options]` (argv[0] is "attach"; getopt may reorder
 * argv). --from is required: without it anyone who reaches the backend
 * could inject packets with any source address, so its absence is an
 * error that says so, not a default. */
enum mlv_err mlv_decap_parse_attach(int argc, char **argv,
				    struct mlv_decap_attach_args *a,
				    char *errbuf, size_t errlen);

/* Append the sources of one --from value to out[*n..cap): CIDRs (or bare
 * addresses) separated by commas; "any" is 0.0.0.0/0 and ::/0. */
enum mlv_err mlv_decap_parse_from(const char *value, struct mlv_ip_prefix *out,
				  size_t cap, size_t *n, char *errbuf,
				  size_t errlen);

/* The decapsulator configuration a describes (pointing into a). Its
 * path_mtu is --path-mtu, 0 with --mss-clamp off, and dev_mtu (DEV's
 * MTU, which the caller reads) otherwise. */
void mlv_decap_args_config(const struct mlv_decap_attach_args *a,
			   uint32_t dev_mtu, struct mlv_decap_config *cfg);

#endif
