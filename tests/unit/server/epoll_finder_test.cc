// FindEpollWatching (server/epoll_finder.h): it finds libevent's own epoll instance from a
// descriptor registered with the base, and nothing for a descriptor no epoll watches.
#include "server/epoll_finder.h"

#include <event2/event.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "gtest/gtest.h"
#include "server/scoped_fd.h"

namespace onepass {
namespace {

TEST(EpollFinderTest, FindsTheEpollOfAnEventBase) {
  std::unique_ptr<event_config, void (*)(event_config*)> config(event_config_new(),
                                                                event_config_free);
  ASSERT_NE(config, nullptr);
  event_config_require_features(config.get(), EV_FEATURE_O1);  // epoll, as the workers get
  std::unique_ptr<event_base, void (*)(event_base*)> base(event_base_new_with_config(config.get()),
                                                          event_base_free);
  ASSERT_NE(base, nullptr);
  ScopedFd watched(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  ScopedFd unwatched(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  ASSERT_TRUE(watched.valid() && unwatched.valid());
  std::unique_ptr<event, void (*)(event*)> readable(
      event_new(
          base.get(), watched.get(), EV_READ | EV_PERSIST, [](int, short, void*) {}, nullptr),
      event_free);
  ASSERT_EQ(event_add(readable.get(), nullptr), 0);

  const int found = FindEpollWatching(watched.get());
  ASSERT_GE(found, 0);
  // It is an epoll instance that holds `watched` (adding it again is refused)...
  epoll_event probe{.events = EPOLLIN, .data = {}};
  EXPECT_EQ(epoll_ctl(found, EPOLL_CTL_ADD, watched.get(), &probe), -1);
  EXPECT_EQ(errno, EEXIST);
  // ...and it turns readable when `watched` does, which is what the io_uring loop polls for.
  pollfd ready{.fd = found, .events = POLLIN, .revents = 0};
  EXPECT_EQ(poll(&ready, 1, 0), 0);
  const uint64_t one = 1;
  ASSERT_EQ(write(watched.get(), &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
  EXPECT_EQ(poll(&ready, 1, 1000), 1);

  EXPECT_EQ(FindEpollWatching(unwatched.get()), -1);
  // Once the event is gone, so is the registration.
  readable.reset();
  EXPECT_EQ(FindEpollWatching(watched.get()), -1);
}

}  // namespace
}  // namespace onepass
