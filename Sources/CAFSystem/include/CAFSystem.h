#ifndef CAFSYSTEM_H
#define CAFSYSTEM_H

// Why this target exists: reachability needs a netlink socket, whose address
// type (struct sockaddr_nl) and group constants live in <linux/netlink.h> and
// <linux/rtnetlink.h>, which Swift's Glibc module does not export.

/// Opens a non-blocking, close-on-exec NETLINK_ROUTE socket subscribed to
/// link, address and route changes (IPv4 and IPv6). Returns the descriptor,
/// or -1 with errno set.
int cafsys_open_route_change_socket(void);

#endif
