// The backends file of the DNS frontend (--dns-backends-file): the backends, one ADDR:PORT per
// line (IPv4, or [IPv6]:PORT as --dns-backend takes it), read at start and again on every
// SIGHUP, so that a reload can add and remove backends (frontend_handler.h TakeOver).
//
// Format: '#' starts a comment that runs to the end of the line; blank lines and spaces or
// tabs around the address are ignored; anything else on a line is an error. A backend listed
// twice is an error (it would get twice the share of queries by accident, not by weight), and
// so is a file that names none: a frontend without backends could only answer SERVFAIL, and a
// truncated file (a deploy that wrote nothing) must not empty the pool on a reload.
#ifndef ONEPASS_HANDLERS_DNS_BACKENDS_FILE_H_
#define ONEPASS_HANDLERS_DNS_BACKENDS_FILE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/socket_address.h"

namespace onepass::dns {

// Bad lines reported per file before the parser stops listing them.
inline constexpr int kMaxBackendsFileErrors = 10;

// The backends `text` lists, in file order; at most `max_backends` of them. Errors name `path`
// and the line ("backends.conf:3: bad --dns-backends-file address ..."), one line each, up to
// kMaxBackendsFileErrors.
absl::StatusOr<std::vector<SocketAddress>> ParseBackendsFile(absl::string_view text,
                                                             absl::string_view path,
                                                             size_t max_backends);

// ParseBackendsFile of the file at `path`, read as every data file is (common/data_file.h: a
// regular file within --max-data-file-mb).
absl::StatusOr<std::vector<SocketAddress>> ReadBackendsFile(const std::string& path,
                                                            size_t max_backends);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_BACKENDS_FILE_H_
