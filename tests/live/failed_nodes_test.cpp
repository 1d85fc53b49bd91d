// FailedNodes: a live filter's rejected nodes and their reasons, read in node-name order with
// one entry per name, as the map it replaces was.

#include "live/failed_nodes.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace hamisim::live {
namespace {

std::map<std::string, std::string> as_map(const FailedNodes& f) {
  std::map<std::string, std::string> out;
  for (const auto& [node, reason] : f) out.emplace(node, reason);
  return out;
}

std::vector<std::string> names(const FailedNodes& f) {
  std::vector<std::string> out;
  for (const auto& [node, reason] : f) out.push_back(node);
  return out;
}

TEST(FailedNodes, EmptyUntilANodeIsAdded) {
  FailedNodes f;
  f.finish();
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.begin(), f.end());
  EXPECT_EQ(f.find("a"), nullptr);
  EXPECT_THROW(f.at("a"), std::out_of_range);
}

TEST(FailedNodes, NodesInNameOrderWhateverTheOrderAdded) {
  FailedNodes f;
  f.add("node-10", "8/8 CardInsufficientMemory");
  f.add("node-2", "node unregistered");
  f.add("node-1", "8/8 CardInsufficientMemory");
  f.finish();
  EXPECT_EQ(names(f), (std::vector<std::string>{"node-1", "node-10", "node-2"}));
  EXPECT_EQ(as_map(f),
            (std::map<std::string, std::string>{{"node-1", "8/8 CardInsufficientMemory"},
                                                {"node-10", "8/8 CardInsufficientMemory"},
                                                {"node-2", "node unregistered"}}));
  EXPECT_EQ(f.at("node-2"), "node unregistered");
  ASSERT_NE(f.find("node-10"), nullptr);
  EXPECT_EQ(*f.find("node-10"), "8/8 CardInsufficientMemory");
  EXPECT_EQ(f.find("node-3"), nullptr);
}

TEST(FailedNodes, ANameAddedTwiceKeepsItsLastReason) {
  FailedNodes f;
  f.add("b", "first");
  f.add("a", "x");
  f.add("b", "second");
  f.add("a", "y");
  f.add("c", "z");
  f.finish();
  EXPECT_EQ(f.size(), 3u);
  EXPECT_EQ(as_map(f),
            (std::map<std::string, std::string>{{"a", "y"}, {"b", "second"}, {"c", "z"}}));
  // Also when the names come sorted but repeat.
  FailedNodes sorted;
  sorted.add("a", "1");
  sorted.add("a", "2");
  sorted.add("b", "3");
  sorted.finish();
  EXPECT_EQ(as_map(sorted), (std::map<std::string, std::string>{{"a", "2"}, {"b", "3"}}));
}

TEST(FailedNodes, EachDistinctReasonIsKeptOnce) {
  FailedNodes f;
  for (int i = 0; i < 100; ++i) {
    f.add("n" + std::to_string(1000 + i), i % 3 == 0 ? "A" : i % 3 == 1 ? "B" : "C");
  }
  f.finish();
  EXPECT_EQ(f.size(), 100u);
  EXPECT_EQ(f.reasons().size(), 3u);
  size_t i = 0;
  for (const auto& [node, reason] : f) {
    EXPECT_EQ(f.reasons()[f.reason_index(i)], reason) << node;
    ++i;
  }
  EXPECT_EQ(f.at("n1004"), "B");
}

}  // namespace
}  // namespace hamisim::live
