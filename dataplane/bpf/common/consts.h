/* SPDX-License-Identifier: BSD-3-Clause */
/* Constants of the BPF programs: wire values the uapi headers spell
 * differently or not at all, and map sizes. BPF side only. */
#ifndef MLV_BPF_CONSTS_H
#define MLV_BPF_CONSTS_H

/* IPv4 flags/fragment-offset field: more-fragments bit. */
#define MLV_IP_MF 0x2000
/* IPv4 flags/fragment-offset field: the 13-bit offset. */
#define MLV_IP_OFFSET 0x1FFF
/* IPv6 fragment header frag_off: offset (13 bits) and M flag; an atomic
 * fragment (RFC 6946) has both zero. */
#define MLV_IP6_FRAG_MASK 0xFFF9

/* ICMP destination unreachable (RFC 792). */
#define MLV_ICMP_DEST_UNREACH 3
/* Code of MLV_ICMP_DEST_UNREACH: fragmentation needed and DF set. */
#define MLV_ICMP_FRAG_NEEDED 4
/* ICMPv6 packet too big (RFC 4443 3.2; its code is ignored). */
#define MLV_ICMPV6_PKT_TOO_BIG 2
/* ICMP echo request (RFC 792; code 0). */
#define MLV_ICMP_ECHO_REQUEST 8
/* ICMPv6 echo request (RFC 4443 4.1; code 0). */
#define MLV_ICMPV6_ECHO_REQUEST 128

/* IPv6 next-header values the parser walks over. */
#define MLV_NEXTHDR_HOP 0
/* IPv6 routing header. */
#define MLV_NEXTHDR_ROUTING 43
/* IPv6 fragment header. */
#define MLV_NEXTHDR_FRAGMENT 44
/* IPv6 destination options header. */
#define MLV_NEXTHDR_DEST 60
/* Extension headers walked before giving up, as the data plane's parser
 * (dataplane/packet/parse.c, MLV_IPV6_MAX_EXT_HDRS). */
#define MLV_IPV6_MAX_EXT 8

/* IP protocol / next header: IPv4 inside (IPIP, 4in6, GUE proto). */
#define MLV_PROTO_IPIP 4
/* IP protocol / next header: IPv6 inside (6in6, 6in4, GUE proto). */
#define MLV_PROTO_IPV6 41

/* ECN field values (RFC 3168). */
#define MLV_ECN_NOT_ECT 0
/* Congestion experienced. */
#define MLV_ECN_CE 3
/* ECN bits of the IPv4 TOS / IPv6 traffic class. */
#define MLV_ECN_MASK 3

/* GUE header length (draft-ietf-intarea-gue variant 0, no extensions). */
#define MLV_GUE_HLEN 4
/* GUE first byte: the version (2 bits) and C bit; both zero in a data
 * message of variant 0, anything else (control, variant 1) is passed. */
#define MLV_GUE_VER_C_MASK 0xE0
/* GUE first byte: Hlen, the 32-bit words after the 4-byte header
 * (extension fields, then private data). */
#define MLV_GUE_HLEN_MASK 0x1F

/* Address families of bpf_fib_lookup (the socket AF_INET / AF_INET6;
 * <sys/socket.h> does not build for the BPF target). */
#define MLV_BPF_AF_INET 2
/* The socket AF_INET6. */
#define MLV_BPF_AF_INET6 10
/* IPv6 first word: traffic class and flow label, bpf_fib_lookup's
 * flowinfo. */
#define MLV_IP6_FLOWINFO_MASK 0x0FFFFFFF

/* Largest VIP set: control/config/config.h MLV_MAX_VIPS plus one. */
#define MLV_STEER_MAX_VIPS 65536
/* Largest number of distinct VIP addresses (each VIP may have its own). */
#define MLV_STEER_MAX_VIP_ADDRS 65536
/* RX queue indexes the XSKMAP covers: the PMD stores the socket of
 * queue q at key q, so this bounds the highest usable queue index. */
#define MLV_STEER_MAX_QUEUES 256
/* Local addresses the decapsulator accepts tunnels for. */
#define MLV_DECAP_MAX_ADDRS 256
/* GUE UDP ports the decapsulator accepts. */
#define MLV_DECAP_MAX_GUE_PORTS 16
/* Outer source prefixes (the load balancers) the decapsulator accepts
 * tunnels from. */
#define MLV_DECAP_MAX_SOURCES 256

#endif
