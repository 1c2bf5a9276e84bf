// The descriptor a worker sends an attached body's file from (OutputBuffer::AttachBody).
//
// SharedBody::file is a descriptor of the process's table, where the data was loaded (the main
// thread, at start and on each reload). A worker with a table of its own (unshare(CLONE_FILES),
// server/worker.cc "Private descriptor tables") took its copy at start: a file loaded by a
// reload is not in it, and the same number may be another file there. So each thread opens the
// file once for itself, by /proc/self/fd/N (the thread-group leader's table, which never
// unshares), and keeps that descriptor while the body's owner lives: one open per file, thread
// and load, none per request.
#ifndef ONEPASS_SERVER_CORE_BODY_FILES_H_
#define ONEPASS_SERVER_CORE_BODY_FILES_H_

#include "handlers/output_buffer.h"

namespace onepass {

// This thread's descriptor for `body`'s file, or -1 when it has none or it cannot be opened
// (no /proc, no descriptor left): the body is then sent from memory. Closed by the same thread,
// once the owner is gone (at the next miss) or when the thread ends.
int BodyFileForThisThread(const SharedBody& body);

// Closes this thread's descriptors of files whose owner is gone (the last connection sending
// an old CRL ended): without it the file, and so its memory, would stay until the next miss.
// Cheap when there is nothing to close (a scan of the few files opened); the worker calls it
// on its heartbeat.
void CloseBodyFilesNoLongerServed();

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_BODY_FILES_H_
