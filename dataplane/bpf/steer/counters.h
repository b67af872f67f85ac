/* SPDX-License-Identifier: BSD-3-Clause */
/* What the steering program did with each frame: one per-CPU counter per
 * outcome, every frame counted exactly once. X-macro shared by the BPF
 * program (indices) and userspace (names for stats and metrics). */
#ifndef MLV_BPF_STEER_COUNTERS_H
#define MLV_BPF_STEER_COUNTERS_H

/* X(enum suffix, metric name, meaning) */
#define MLV_STEER_COUNTERS(X)                                              \
	X(REDIRECT_VIP, "redirect_vip",                                    \
	  "TCP/UDP to a configured VIP: redirected to the AF_XDP socket")  \
	X(REDIRECT_FRAGMENT, "redirect_fragment",                          \
	  "IPv4/IPv6 fragment to a VIP address: redirected")               \
	X(REDIRECT_ICMP, "redirect_icmp_too_big",                          \
	  "ICMP frag-needed / ICMPv6 packet-too-big to a VIP address: redirected") \
	X(REDIRECT_ECHO, "redirect_echo",                                  \
	  "ICMP/ICMPv6 echo request to a VIP address that answers pings: redirected") \
	X(PASS_NO_SOCKET, "pass_no_socket",                                \
	  "for maglevd, but no AF_XDP socket on this RX queue: to the kernel") \
	X(PASS_NOT_VIP, "pass_not_vip",                                    \
	  "IPv4/IPv6 not addressed to a VIP: to the kernel")               \
	X(PASS_NOT_IP, "pass_not_ip",                                      \
	  "ARP and every other non-IP ethertype: to the kernel")           \
	X(PASS_MALFORMED, "pass_malformed",                                \
	  "truncated or unparseable: to the kernel, which judges it")

enum mlv_steer_counter {
#define MLV_STEER_CTR_ENUM(name, metric, help) MLV_STEER_CTR_##name,
	MLV_STEER_COUNTERS(MLV_STEER_CTR_ENUM)
#undef MLV_STEER_CTR_ENUM
	MLV_STEER_CTR__COUNT
};

#endif
