/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's NIC counters: DPDK's rte_eth_stats under maglevd's names, and
 * the PMD's extended statistics (xstats) under the PMD's own names. The
 * daemon reads them (daemon/port_stats.c) on the control thread, when a
 * `stats` request, a scrape or the stats file asks, and never resets
 * them. DPDK's thread-safety guide (22.11, "Thread Safety of DPDK
 * Functions") promises only the fast path per queue; its own telemetry
 * reads these counters from a non-worker thread while the queues run, as
 * here. What is not safe is two readers (PMDs that fold clear-on-read
 * registers into software totals) or a reset racing the bursts, so the
 * control thread is the one reader and nothing resets; the workers never
 * call them.
 *
 * The same list names the JSON keys (`stats`, the stats file) and the
 * Prometheus families (maglevd_port_<metric>_total{port}).
 */
#ifndef MLV_CTL_PORT_STATS_H
#define MLV_CTL_PORT_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* X(ID, JSON name, metric name, help); the rte_eth_stats field in the
 * help's parentheses. */
#define MLV_PORT_COUNTERS(X)                                                  \
	X(RX_PACKETS, "rx_packets", "rx_packets",                             \
	  "frames the NIC received (ipackets)")                               \
	X(TX_PACKETS, "tx_packets", "tx_packets",                             \
	  "frames the NIC transmitted (opackets)")                            \
	X(RX_BYTES,   "rx_bytes",   "rx_bytes",                               \
	  "bytes the NIC received (ibytes)")                                  \
	X(TX_BYTES,   "tx_bytes",   "tx_bytes",                               \
	  "bytes the NIC transmitted (obytes)")                               \
	X(RX_MISSED,  "rx_missed",  "rx_missed_packets",                      \
	  "frames the NIC dropped because no receive descriptor was free: "   \
	  "the workers did not keep up (imissed)")                            \
	X(RX_ERRORS,  "rx_errors",  "rx_error_packets",                       \
	  "erroneous frames received (ierrors)")                              \
	X(TX_ERRORS,  "tx_errors",  "tx_error_packets",                       \
	  "frames the NIC failed to transmit (oerrors)")                      \
	X(RX_NOMBUF,  "rx_nombuf",  "rx_mbuf_allocation_errors",              \
	  "receive mbuf allocation failures (rx_nombuf)")

enum mlv_port_counter {
#define MLV_PORT_CTR_ENUM(id, json, metric, help) MLV_PORT_CTR_##id,
	MLV_PORT_COUNTERS(MLV_PORT_CTR_ENUM)
#undef MLV_PORT_CTR_ENUM
	MLV_PORT_CTR__COUNT
};

struct mlv_port_xstat {
	const char *name;        /* the PMD's name */
	uint64_t value;
};

/* Members of a bonded port (`bond:`) at most. */
#define MLV_PORT_MAX_MEMBERS 8

/* One member of a bonded port: its link, whether it carries traffic
 * (active-backup's member in use; a member of the 802.3ad aggregate),
 * and its own NIC's frame and error counters. */
struct mlv_port_member {
	const char *device;      /* its DPDK device name */
	bool up;
	bool active;
	uint64_t rx_packets, tx_packets;
	uint64_t rx_errors, tx_errors;   /* ierrors + imissed, oerrors */
};

/* A port's link as its PMD reports it. */
enum mlv_port_link { MLV_PORT_LINK_UNKNOWN = 0, MLV_PORT_LINK_UP,
		     MLV_PORT_LINK_DOWN };

struct mlv_port_stats {
	const char *name;        /* the port's configured name */
	const char *device;      /* its DPDK device name */
	bool ok;                 /* false: the PMD gave no counters (v[] 0) */
	uint64_t v[MLV_PORT_CTR__COUNT];
	uint32_t n_xstats;
	const struct mlv_port_xstat *xstats;
	enum mlv_port_link link;
	uint32_t n_members;      /* a bonded port's members; 0: no bond */
	struct mlv_port_member members[MLV_PORT_MAX_MEMBERS];
};

/* Names of the list above. */
const char *mlv_port_counter_name(enum mlv_port_counter c);
const char *mlv_port_counter_metric(enum mlv_port_counter c);
const char *mlv_port_counter_help(enum mlv_port_counter c);

/* True for the xstats worth an alert that Prometheus gets (the rest are
 * in `maglevctl stats --ports` and the stats file): the PMD's counters
 * of errors, drops, misses, discards and mbuf shortages, by name. */
bool mlv_port_xstat_is_error(const char *name);

/* {"name", "device", "link": "up" | "down" | null, "counters": {...}},
 * with "members": [{"device", "link", "active", "rx_packets",
 * "tx_packets", "rx_errors", "tx_errors"}] for a bonded port and, with
 * xstats, "xstats": {name: value} of every extended statistic; NULL when
 * out of memory. */
json_t *mlv_port_stats_json(const struct mlv_port_stats *p, bool xstats);

/* [one object per port] (above). */
json_t *mlv_port_stats_array(const struct mlv_port_stats *ps, uint32_t n,
			     bool xstats);

#endif
