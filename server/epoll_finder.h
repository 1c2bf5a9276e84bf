// Finds the epoll instance that watches a given descriptor, for a loop that must wait on an
// event_base it does not run (the io_uring loop with a forwarding handler's upstreams,
// server/uring_upstream.cc): libevent keeps its epoll descriptor to itself, but the kernel
// lists what each epoll instance watches in /proc (proc(5), /proc/pid/fdinfo: "tfd:" lines).
#ifndef ONEPASS_SERVER_EPOLL_FINDER_H_
#define ONEPASS_SERVER_EPOLL_FINDER_H_

namespace onepass {

// The descriptor, in the calling thread's table, of an epoll instance that watches
// `watched_fd`; -1 when there is none or /proc cannot be read. Reads /proc only: changes
// nothing. For set-up, not the data path (it reads the fdinfo of every open descriptor).
int FindEpollWatching(int watched_fd);

}  // namespace onepass

#endif  // ONEPASS_SERVER_EPOLL_FINDER_H_
