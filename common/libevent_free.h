// Deleters for libevent's objects, for std::unique_ptr (the libevent driver and the ops
// listener each own an event_base and its events).
#ifndef ONEPASS_COMMON_LIBEVENT_FREE_H_
#define ONEPASS_COMMON_LIBEVENT_FREE_H_

#include <event2/event.h>

namespace onepass {

inline void FreeEvent(event* ev) {
  if (ev != nullptr) event_free(ev);
}
inline void FreeBase(event_base* base) {
  if (base != nullptr) event_base_free(base);
}

}  // namespace onepass

#endif  // ONEPASS_COMMON_LIBEVENT_FREE_H_
