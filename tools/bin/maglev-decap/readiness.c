/* SPDX-License-Identifier: BSD-3-Clause */
#include "tools/bin/maglev-decap/readiness.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The integer in root/path, or -1 when it cannot be read. */
static long read_int(const char *root, const char *path)
{
	char file[512], buf[32];
	ssize_t n;
	long v;
	char *end;
	int fd;

	if (snprintf(file, sizeof(file), "%s/%s", root, path) >=
	    (int)sizeof(file))
		return -1;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -1;
	return v;
}

/* sysctl path of a per-device setting ("ipv4", dev, "forwarding"). */
static void conf(char *out, size_t len, const char *fam, const char *dev,
		 const char *key)
{
	snprintf(out, len, "net/%s/conf/%s/%s", fam, dev, key);
}

static void add(struct mlv_sc_check *out, size_t *n, const char *name,
		bool ok, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void add(struct mlv_sc_check *out, size_t *n, const char *name,
		bool ok, const char *fmt, ...)
{
	struct mlv_sc_check *c = &out[(*n)++];
	va_list ap;

	c->name = name;
	c->ok = ok;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

size_t mlv_sc_readiness(const char *root, const char *dev, bool v6,
			bool has_gue, struct mlv_sc_check *out)
{
	char p[256];
	long all, one, fwd;
	size_t n = 0;

	conf(p, sizeof(p), "ipv4", dev, "forwarding");
	fwd = read_int(root, p);
	if (fwd == 1)
		add(out, &n, "ipv4_forwarding", true,
		    "net.ipv4.conf.%s.forwarding = 1", dev);
	else
		add(out, &n, "ipv4_forwarding", false,
		    "net.ipv4.conf.%s.forwarding = %ld: set it to 1, or "
		    "redirects fail (sc_no_route)", dev, fwd);

	conf(p, sizeof(p), "ipv4", "all", "send_redirects");
	all = read_int(root, p);
	conf(p, sizeof(p), "ipv4", dev, "send_redirects");
	one = read_int(root, p);
	add(out, &n, "icmp_redirects_off", all == 0 && one == 0,
	    all == 0 && one == 0 ?
	    "net.ipv4.conf.{all,%s}.send_redirects = %ld, %ld" :
	    "net.ipv4.conf.{all,%s}.send_redirects = %ld, %ld: set both to "
	    "0, or the kernel tells clients to bypass this host", dev, all,
	    one);

	conf(p, sizeof(p), "ipv4", "all", "rp_filter");
	all = read_int(root, p);
	conf(p, sizeof(p), "ipv4", dev, "rp_filter");
	one = read_int(root, p);
	/* the kernel applies the larger of the two; 1 is strict */
	add(out, &n, "rp_filter_not_strict",
	    all >= 0 && one >= 0 && (all > one ? all : one) != 1,
	    all >= 0 && one >= 0 && (all > one ? all : one) != 1 ?
	    "net.ipv4.conf.{all,%s}.rp_filter = %ld, %ld" :
	    "net.ipv4.conf.{all,%s}.rp_filter = %ld, %ld: strict (1) drops "
	    "handed-on packets unless the route to the load balancers' "
	    "sources leaves through this device; set 2 (loose) or 0", dev,
	    all, one);

	if (v6) {
		conf(p, sizeof(p), "ipv6", "all", "forwarding");
		all = read_int(root, p);
		conf(p, sizeof(p), "ipv6", dev, "forwarding");
		one = read_int(root, p);
		add(out, &n, "ipv6_forwarding", all == 1 && one == 1,
		    all == 1 && one == 1 ?
		    "net.ipv6.conf.{all,%s}.forwarding = %ld, %ld" :
		    "net.ipv6.conf.{all,%s}.forwarding = %ld, %ld: set both "
		    "to 1 (and accept_ra to 2 if the host takes router "
		    "advertisements), or IPv6 redirects fail", dev, all, one);
	}
	if (has_gue)
		add(out, &n, "gue_ports", true, "gue ports configured");
	else
		add(out, &n, "gue_ports", false, "no gue ports (attach "
		    "--gue-port): hops travel in GUE only");
	return n;
}
