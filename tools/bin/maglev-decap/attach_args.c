/* SPDX-License-Identifier: BSD-3-Clause */
/* `maglev-decap attach` options: see attach_args.h. */
#include "tools/bin/maglev-decap/attach_args.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* A decimal integer in min..max, the whole of text. */
static int parse_uint(const char *text, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_mode(const char *text, enum mlv_decap_mode *out)
{
	if (!strcmp(text, "auto"))
		*out = MLV_DECAP_MODE_AUTO;
	else if (!strcmp(text, "native"))
		*out = MLV_DECAP_MODE_NATIVE;
	else if (!strcmp(text, "generic"))
		*out = MLV_DECAP_MODE_GENERIC;
	else
		return -1;
	return 0;
}

enum mlv_err mlv_decap_parse_from(const char *value, struct mlv_ip_prefix *out,
				  size_t cap, size_t *n, char *errbuf,
				  size_t errlen)
{
	const char *item = value;

	for (;;) {
		size_t len = strcspn(item, ",");
		char text[MLV_IP_PREFIX_STRLEN];
		const char *why;

		if (len == 0)
			return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				   "--from %s: an empty entry", value);
		if (len >= sizeof(text))
			return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				   "--from %.*s: not a CIDR", (int)len, item);
		memcpy(text, item, len);
		text[len] = '\0';
		if (!strcmp(text, "any")) {
			if (cap - *n < 2)
				goto full;
			memset(&out[*n], 0, 2 * sizeof(*out));
			out[(*n)++].ip.family = MLV_AF_INET;
			out[(*n)++].ip.family = MLV_AF_INET6;
		} else {
			if (*n == cap)
				goto full;
			why = mlv_ip_prefix_parse(text, &out[*n]);
			if (why)
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--from %s: %s (want a CIDR such as "
					   "10.0.0.0/24 or fd00::1/128, or any)",
					   text, why);
			(*n)++;
		}
		if (item[len] == '\0')
			return MLV_OK;
		item += len + 1;
	}
full:
	return mlv_err_msg(errbuf, errlen, MLV_E_LIMIT,
		   "--from: at most %zu sources", cap);
}

enum mlv_err mlv_decap_parse_attach(int argc, char **argv,
				    struct mlv_decap_attach_args *a,
				    char *errbuf, size_t errlen)
{
	static const struct option opts[] = {
		{ "address", required_argument, NULL, 'a' },
		{ "gue-port", required_argument, NULL, 'g' },
		{ "from", required_argument, NULL, 'f' },
		{ "mode", required_argument, NULL, 'm' },
		{ "mss-clamp", required_argument, NULL, 'c' },
		{ "path-mtu", required_argument, NULL, 'p' },
		{ "second-chance", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum mlv_err err;
	unsigned long v;
	int c;

	memset(a, 0, sizeof(*a));
	a->mode = MLV_DECAP_MODE_AUTO;
	optind = 0;     /* glibc: start afresh, also on a second call */
	opterr = 0;     /* the reasons are ours, in errbuf */
	while ((c = getopt_long(argc, argv, ":a:g:f:m:c:p:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (a->n_addrs == MLV_DECAP_ARGS_MAX_ADDRS)
				return mlv_err_msg(errbuf, errlen, MLV_E_LIMIT,
					   "at most %d addresses",
					   MLV_DECAP_ARGS_MAX_ADDRS);
			if (!mlv_ip_parse(optarg, &a->addrs[a->n_addrs]))
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--address %s: not an IPv4/IPv6 "
					   "address", optarg);
			a->n_addrs++;
			break;
		case 'g':
			if (a->n_ports == MLV_DECAP_ARGS_MAX_PORTS)
				return mlv_err_msg(errbuf, errlen, MLV_E_LIMIT,
					   "at most %d GUE ports",
					   MLV_DECAP_ARGS_MAX_PORTS);
			if (parse_uint(optarg, 1, 65535, &v))
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--gue-port %s: not a port "
					   "(1-65535)", optarg);
			a->ports[a->n_ports++] = (uint16_t)v;
			break;
		case 'f':
			err = mlv_decap_parse_from(optarg, a->sources,
						   MLV_DECAP_ARGS_MAX_SOURCES,
						   &a->n_sources, errbuf,
						   errlen);
			if (err)
				return err;
			break;
		case 'm':
			if (parse_mode(optarg, &a->mode))
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--mode %s: auto, native or "
					   "generic", optarg);
			break;
		case 'c':
			if (!strcmp(optarg, "auto"))
				a->mss_clamp_off = 0;
			else if (!strcmp(optarg, "off"))
				a->mss_clamp_off = 1;
			else
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--mss-clamp %s: auto or off (the "
					   "path MTU is --path-mtu)", optarg);
			break;
		case 'p':
			if (parse_uint(optarg, MLV_DECAP_PATH_MTU_MIN,
				       MLV_DECAP_PATH_MTU_MAX, &v))
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--path-mtu %s: not an MTU (%d-%d)",
					   optarg, MLV_DECAP_PATH_MTU_MIN,
					   MLV_DECAP_PATH_MTU_MAX);
			a->path_mtu = (uint32_t)v;
			break;
		case 's':
			if (!strcmp(optarg, "on"))
				a->second_chance_off = 0;
			else if (!strcmp(optarg, "off"))
				a->second_chance_off = 1;
			else
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "--second-chance %s: on or off",
					   optarg);
			break;
		case 'h':
			a->help = 1;
			return MLV_OK;
		case ':':
			return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				   "%s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
					   "unknown option -%c", optopt);
			return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
				   "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
			   "attach takes one interface, %d given",
			   argc - optind);
	a->dev = argv[optind];
	if (a->mss_clamp_off && a->path_mtu)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
			   "--path-mtu is the SYN-ACK clamp's, which "
			   "--mss-clamp off turns off");
	if (!a->n_sources)
		return mlv_err_msg(errbuf, errlen, MLV_E_INVAL,
			   "attach needs --from CIDR[,CIDR...], the load "
			   "balancers' addresses as %s sees them: without it "
			   "anyone who can reach %s could inject packets with "
			   "any source address (--from any accepts every "
			   "source)", a->dev, a->dev);
	return MLV_OK;
}

void mlv_decap_args_config(const struct mlv_decap_attach_args *a,
			   uint32_t dev_mtu, struct mlv_decap_config *cfg)
{
	cfg->path_mtu = a->mss_clamp_off ? 0 : a->path_mtu ? a->path_mtu :
			dev_mtu;
	cfg->addrs = a->addrs;
	cfg->n_addrs = a->n_addrs;
	cfg->gue_ports = a->ports;
	cfg->n_gue_ports = a->n_ports;
	cfg->sources = a->sources;
	cfg->n_sources = a->n_sources;
	cfg->second_chance_off = a->second_chance_off;
}
