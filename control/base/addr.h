/* SPDX-License-Identifier: BSD-3-Clause */
/* IP and MAC addresses as the config model and the control plane hold
 * them. Plain C. All functions are pure; any thread. */
#ifndef MLV_ADDR_H
#define MLV_ADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define MLV_AF_NONE 0
#define MLV_AF_INET 4
#define MLV_AF_INET6 6

/* An IPv4 or IPv6 address in network byte order. IPv4 uses bytes[0..3]
 * and keeps bytes[4..15] zero, so memcmp over the struct compares. */
struct mlv_ip {
	uint8_t family;      /* MLV_AF_INET or MLV_AF_INET6; NONE = unset */
	uint8_t bytes[16];
};

struct mlv_mac {
	uint8_t bytes[6];
};

/* Longest text mlv_ip_format writes, with the NUL. */
#define MLV_IP_STRLEN 46
#define MLV_MAC_STRLEN 18

/* Parse dotted IPv4 or IPv6 text. Returns true and fills *out on success. */
bool mlv_ip_parse(const char *text, struct mlv_ip *out);
/* Format into buf (MLV_IP_STRLEN bytes). Returns buf. */
const char *mlv_ip_format(const struct mlv_ip *ip, char *buf, size_t len);
bool mlv_ip_equal(const struct mlv_ip *a, const struct mlv_ip *b);

/* An address prefix (CIDR): the first len bits of ip; the rest are zero. */
struct mlv_ip_prefix {
	struct mlv_ip ip;
	uint8_t len;         /* 0-32 (IPv4), 0-128 (IPv6) */
};

/* Longest text mlv_ip_prefix_format writes, with the NUL. */
#define MLV_IP_PREFIX_STRLEN (MLV_IP_STRLEN + 4)

/* Parse "ADDRESS/LENGTH", or a bare address as its host prefix (/32,
 * /128). An address with bits set past LENGTH is refused: 10.1.2.3/24 is
 * a typo for 10.1.2.0/24 or 10.1.2.3/32, and taking either silently would
 * hide it. Returns NULL and fills *out, or a static reason phrase (*out
 * untouched): for that case mlv_ip_prefix_host_bits itself, so that a
 * caller can compare the pointer and name the prefix meant. */
const char *mlv_ip_prefix_parse(const char *text, struct mlv_ip_prefix *out);
extern const char mlv_ip_prefix_host_bits[];
/* "ADDRESS/LENGTH" into buf (MLV_IP_PREFIX_STRLEN bytes). Returns buf. */
const char *mlv_ip_prefix_format(const struct mlv_ip_prefix *p, char *buf,
				 size_t len);

/* Parse "02:00:00:00:01:21" (also '-' separators). */
bool mlv_mac_parse(const char *text, struct mlv_mac *out);
const char *mlv_mac_format(const struct mlv_mac *mac, char *buf, size_t len);

/* The name of an L4 protocol number as config, the control socket, the
 * stats file and metrics write it: "tcp", "udp", or "other". Pure. */
const char *mlv_proto_name(uint8_t proto);

#endif
