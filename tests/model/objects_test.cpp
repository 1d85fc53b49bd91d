#include "model/objects.h"

#include <gtest/gtest.h>

namespace hamisim::model {
namespace {

TEST(ObjectsTest, FindAnnotationReturnsValueOrNull) {
  ObjectMeta meta;
  meta.annotations["hami.io/vgpu-node"] = "node-1";
  const std::string* v = find_annotation(meta, "hami.io/vgpu-node");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, "node-1");
  EXPECT_EQ(find_annotation(meta, "hami.io/other"), nullptr);
  EXPECT_EQ(find_label(meta, "hami.io/vgpu-node"), nullptr);
}

TEST(ObjectsTest, FindLabelReturnsValueOrNull) {
  ObjectMeta meta;
  meta.labels["gpu"] = "on";
  ASSERT_NE(find_label(meta, "gpu"), nullptr);
  EXPECT_EQ(*find_label(meta, "gpu"), "on");
  EXPECT_EQ(find_label(meta, "GPU"), nullptr);
  EXPECT_EQ(find_annotation(meta, "gpu"), nullptr);
}

}  // namespace
}  // namespace hamisim::model
