#ifndef CAFSYSTEM_H
#define CAFSYSTEM_H

// Why this target exists: what Swift's Glibc module does not export.
// Reachability needs a netlink socket, whose address type (struct
// sockaddr_nl) and group constants live in <linux/netlink.h> and
// <linux/rtnetlink.h>; the engine gives freed heap back with glibc's
// malloc_trim, declared in <malloc.h>; the proxy variables are read in one
// pass over environ, which Swift imports as never null (clearenv() makes it so).

/// Opens a non-blocking, close-on-exec NETLINK_ROUTE socket subscribed to
/// link, address and route changes (IPv4 and IPv6). Returns the descriptor,
/// or -1 with errno set.
int cafsys_open_route_change_socket(void);

/// Returns the free memory of every malloc arena to the kernel
/// (malloc_trim(0)); a no-op where the C library has no malloc_trim.
void cafsys_trim_heap(void);

/// The process's environment (environ), or NULL when it has none.
char *_Nullable *_Nullable cafsys_environment(void);

#endif
