#include "model/names.h"

#include <gtest/gtest.h>

#include <string>

namespace hamisim::model {
namespace names_test {

TEST(ModelNamesTest, DnsLabel) {
  EXPECT_TRUE(is_dns_label("a"));
  EXPECT_TRUE(is_dns_label("0"));
  EXPECT_TRUE(is_dns_label("gpu-0"));
  EXPECT_TRUE(is_dns_label(std::string(63, 'z')));
  EXPECT_FALSE(is_dns_label(std::string(64, 'z')));
  EXPECT_FALSE(is_dns_label(""));
  EXPECT_FALSE(is_dns_label("-a"));
  EXPECT_FALSE(is_dns_label("a-"));
  EXPECT_FALSE(is_dns_label("A"));
  EXPECT_FALSE(is_dns_label("a.b"));
  EXPECT_FALSE(is_dns_label("a_b"));
  EXPECT_FALSE(is_dns_label(std::string_view("a\0b", 3)));
}

TEST(ModelNamesTest, DnsSubdomain) {
  EXPECT_TRUE(is_dns_subdomain("a"));
  EXPECT_TRUE(is_dns_subdomain("gpu.example.com"));
  EXPECT_TRUE(is_dns_subdomain("trainer-gpus-x7k2p"));
  // Only the whole name is limited, not each label.
  EXPECT_TRUE(is_dns_subdomain(std::string(100, 'a') + "." + std::string(152, 'b')));
  EXPECT_FALSE(is_dns_subdomain(std::string(254, 'a')));
  EXPECT_TRUE(is_dns_subdomain(std::string(253, 'a')));
  EXPECT_FALSE(is_dns_subdomain(""));
  EXPECT_FALSE(is_dns_subdomain("a..b"));
  EXPECT_FALSE(is_dns_subdomain(".a"));
  EXPECT_FALSE(is_dns_subdomain("a."));
  EXPECT_FALSE(is_dns_subdomain("a.-b"));
  EXPECT_FALSE(is_dns_subdomain("a/b"));
  EXPECT_FALSE(is_dns_subdomain("A.b"));
}

}  // namespace names_test
}  // namespace hamisim::model
