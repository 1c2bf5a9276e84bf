// Sealed bytes: readable from the mapping and from the file, and nobody can change them.
#include "common/sealed_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(SealedBytesTest, SameBytesFromTheMappingAndTheFile) {
  std::string text(100000, '\0');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i % 251);
  auto sealed = SealedBytes::Make("test", text);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  EXPECT_EQ((*sealed)->view(), text);
  EXPECT_EQ((*sealed)->bytes().size(), text.size());
  std::string read(text.size(), '\0');
  ASSERT_EQ(pread((*sealed)->fd(), read.data(), read.size(), 0), static_cast<ssize_t>(read.size()));
  EXPECT_EQ(read, text);
  std::string middle(10, '\0');
  ASSERT_EQ(pread((*sealed)->fd(), middle.data(), middle.size(), 5000), 10);
  EXPECT_EQ(middle, text.substr(5000, 10));
}

TEST(SealedBytesTest, NeitherWritableNorResizable) {
  auto sealed = SealedBytes::Make("test", "immutable");
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  const int fd = (*sealed)->fd();
  EXPECT_EQ(fcntl(fd, F_GET_SEALS) & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_EQ(pwrite(fd, "X", 1, 0), -1);
  EXPECT_EQ(ftruncate(fd, 1), -1);
  EXPECT_EQ(mmap(nullptr, 9, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
  EXPECT_EQ((*sealed)->view(), "immutable");
}

TEST(SealedBytesTest, NothingIsRefused) { EXPECT_FALSE(SealedBytes::Make("test", "").ok()); }

}  // namespace
}  // namespace onepass
