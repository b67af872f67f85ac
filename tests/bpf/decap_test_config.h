/* SPDX-License-Identifier: BSD-3-Clause */
/* The decapsulator configuration the BPF tests run against
 * (test_xdp_decap.c, test_xdp_mutate.c): this host's tunnel addresses,
 * its GUE ports and the load balancers' sources. */
#ifndef MLV_DECAP_TEST_CONFIG_H
#define MLV_DECAP_TEST_CONFIG_H

#define GUE_PORT 6080
#define GUE_PORT2 6081
#define LOCAL4 "10.99.1.11"
#define LOCAL6 "fd00:99:1::21"
/* The load balancers: the default outer sources, and a listed prefix per
 * family. */
#define LB_SRC4 "10.99.0.1"
#define LB_SRC6 "fd00:99::1"
#define LB_NET4 "10.98.7.0/24"
#define LB_NET6 "fd00:98:7::/64"

#endif
