// Which descriptor table a thread uses, so that a descriptor is closed only in the table that
// opened it.
//
// A worker with a table of its own (unshare(CLONE_FILES): docs/design.md "Private descriptor
// tables") sees the process's descriptors as they were when it unshared: a number opened since
// by another thread means nothing there, or another file. close(N) of the process's N on such a
// worker closes whatever the worker holds as N (its listener, a client), and leaves the
// process's file open: the defect that closed a worker's listeners when the last reader of an
// old CRL let go of it on the worker (issue "Hostile clients, round four").
//
// So an owner of a descriptor records the table it was opened in (OpeningTable) and closes it
// with CloseInOpeningTable: at once on a thread of that table; from a worker with a table of
// its own, a descriptor of the process's table goes to the closer, a thread of the process's
// table (started by EnableProcessTableCloser, from a thread of that table). A descriptor of one
// worker's own table can be closed by that worker only: elsewhere it is a bug, which a debug
// build stops at (ExpectOpeningTable) and a release build logs and leaks rather than closing
// another file.
#ifndef ONEPASS_COMMON_DESCRIPTOR_TABLE_H_
#define ONEPASS_COMMON_DESCRIPTOR_TABLE_H_

#include <cstdint>

#include "absl/status/status.h"

namespace onepass {

// 0: the process's table (every thread until it unshares); each unshare a new number.
using DescriptorTableId = uint64_t;
inline constexpr DescriptorTableId kProcessDescriptorTable = 0;

// The calling thread's table.
DescriptorTableId ThisThreadsDescriptorTable();

// unshare(CLONE_FILES) for the calling thread: a copy of its table becomes its own (every
// descriptor it had, it now has twice: the copy here, the original in the old table), less the
// copies of descriptors registered as the process's only (below), closed at once. Fails with
// the kernel's errno; the thread then keeps the table it had.
absl::Status UsePrivateDescriptorTable();

// A descriptor of the process's table that no worker uses under its number (a sealed file of
// the data, which a worker reopens for itself: server/core/body_files.h): a worker that
// unshares closes its copy, which would otherwise keep the file, and its memory, as long as
// the worker lives. Unregister before closing it.
void RegisterProcessOnlyDescriptor(int fd);
void UnregisterProcessOnlyDescriptor(int fd);

// Starts the closer (once; later calls do nothing): a thread of the process's table that
// closes the process's descriptors let go of on workers with tables of their own. Call from a
// thread of the process's table (the main thread, before the workers start). Without it such
// a descriptor is leaked, and logged, rather than closed in the wrong table.
void EnableProcessTableCloser();

// Closes `fd`, opened in `table`: at once when this thread uses `table`, else as the header
// says. Never blocks on the closer.
void CloseInOpeningTable(int fd, DescriptorTableId table);

// A debug check for an owner whose descriptor must be closed by a thread of its own table
// (ScopedFd): aborts in a debug build, naming `what`, when this thread's table is not
// `table`. Nothing in a release build.
void ExpectOpeningTable(DescriptorTableId table, const char* what);

// The closer's queue length and its count of descriptors closed, for tests.
struct CloserCounts {
  uint64_t queued = 0;
  uint64_t closed = 0;
  uint64_t leaked = 0;  // of a private table, closed elsewhere (a bug, logged)
};
CloserCounts ReadCloserCounts();

}  // namespace onepass

#endif  // ONEPASS_COMMON_DESCRIPTOR_TABLE_H_
