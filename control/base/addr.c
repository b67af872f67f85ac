/* SPDX-License-Identifier: BSD-3-Clause */
/* IP and MAC address text <-> binary, for the config model and the
 * control plane. inet_pton/inet_ntop do the IP work; MAC text has no libc
 * parser that rejects garbage (ether_aton accepts "1:2:3:4:5:6" and
 * trailing junk handling differs between libcs), so it is parsed here. */
#include "control/base/addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

bool mlv_ip_parse(const char *text, struct mlv_ip *out)
{
	struct mlv_ip ip;

	if (text == NULL || out == NULL)
		return false;
	memset(&ip, 0, sizeof(ip));
	/* inet_pton (unlike inet_aton) refuses "10.1", "0x0a.0.0.1" and
	 * leading zeros, which is what a config should do too. */
	if (inet_pton(AF_INET, text, ip.bytes) == 1) {
		ip.family = MLV_AF_INET;
	} else if (inet_pton(AF_INET6, text, ip.bytes) == 1) {
		ip.family = MLV_AF_INET6;
	} else {
		return false;
	}
	*out = ip;
	return true;
}

const char *mlv_ip_format(const struct mlv_ip *ip, char *buf, size_t len)
{
	int af;

	if (buf == NULL || len == 0)
		return buf;
	buf[0] = '\0';
	if (ip == NULL)
		return buf;
	if (ip->family == MLV_AF_INET)
		af = AF_INET;
	else if (ip->family == MLV_AF_INET6)
		af = AF_INET6;
	else {
		snprintf(buf, len, "(none)");
		return buf;
	}
	if (inet_ntop(af, ip->bytes, buf, (socklen_t)len) == NULL)
		buf[0] = '\0';
	return buf;
}

bool mlv_ip_equal(const struct mlv_ip *a, const struct mlv_ip *b)
{
	size_t n;

	if (a->family != b->family)
		return false;
	n = a->family == MLV_AF_INET ? 4 : 16;
	return memcmp(a->bytes, b->bytes, n) == 0;
}

/* Decimal digits only, at most max: strtoul would take " 24", "+24" and
 * "0x18". */
static bool prefix_length(const char *d, unsigned max, unsigned *out)
{
	unsigned len = 0;

	if (*d == '\0')
		return false;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return false;
		len = len * 10 + (unsigned)(*d - '0');
		if (len > max)
			return false;
	}
	*out = len;
	return true;
}

const char mlv_ip_prefix_host_bits[] = "address bits set past the prefix length";

const char *mlv_ip_prefix_parse(const char *text, struct mlv_ip_prefix *out)
{
	char addr[MLV_IP_STRLEN];
	struct mlv_ip_prefix p;
	const char *slash;
	unsigned len, max;

	if (text == NULL || out == NULL || *text == '\0')
		return "empty";
	slash = strchr(text, '/');
	if (slash == NULL)
		slash = text + strlen(text);
	if ((size_t)(slash - text) >= sizeof(addr))
		return "not an IPv4/IPv6 address";
	memcpy(addr, text, (size_t)(slash - text));
	addr[slash - text] = '\0';
	memset(&p, 0, sizeof(p));
	if (!mlv_ip_parse(addr, &p.ip))
		return "not an IPv4/IPv6 address";
	max = p.ip.family == MLV_AF_INET ? 32 : 128;
	len = max;
	if (*slash == '/' && !prefix_length(slash + 1, max, &len))
		return max == 32 ? "prefix length is not 0-32" :
			"prefix length is not 0-128";
	for (unsigned bit = len; bit < max; bit++)
		if (p.ip.bytes[bit / 8] & (0x80u >> (bit % 8)))
			return mlv_ip_prefix_host_bits;
	p.len = (uint8_t)len;
	*out = p;
	return NULL;
}

const char *mlv_ip_prefix_format(const struct mlv_ip_prefix *p, char *buf,
				 size_t len)
{
	char addr[MLV_IP_STRLEN];

	if (buf == NULL || len == 0)
		return buf;
	snprintf(buf, len, "%s/%u", mlv_ip_format(&p->ip, addr, sizeof(addr)),
		 p->len);
	return buf;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool mlv_mac_parse(const char *text, struct mlv_mac *out)
{
	struct mlv_mac mac;
	char sep;
	int i;

	if (text == NULL || out == NULL || strlen(text) != 17)
		return false;
	sep = text[2];
	if (sep != ':' && sep != '-')
		return false;
	for (i = 0; i < 6; i++) {
		const char *p = text + i * 3;
		int hi = hex_value(p[0]);
		int lo = hex_value(p[1]);

		if (hi < 0 || lo < 0)
			return false;
		/* One separator style throughout: "02:00-00..." is a typo. */
		if (i < 5 && p[2] != sep)
			return false;
		mac.bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = mac;
	return true;
}

const char *mlv_mac_format(const struct mlv_mac *mac, char *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return buf;
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x",
		 mac->bytes[0], mac->bytes[1], mac->bytes[2],
		 mac->bytes[3], mac->bytes[4], mac->bytes[5]);
	return buf;
}

const char *mlv_proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	default:
		return "other";
	}
}
