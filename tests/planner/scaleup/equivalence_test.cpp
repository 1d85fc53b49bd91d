// CA's SimilarPodsScheduling (filter-out-schedulable): which pods count as "a similar pod
// already failed".

#include "planner/scaleup/equivalence.h"

#include <gtest/gtest.h>

namespace hamisim::planner::scaleup {
namespace {

model::Pod replica(const std::string& name, const std::string& controller_uid,
                   const std::string& kind = "ReplicaSet") {
  model::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "ml";
  pod.metadata.labels["app"] = "trainer";
  model::OwnerReference owner;
  owner.kind = kind;
  owner.name = "trainer";
  owner.uid = controller_uid;
  owner.controller = true;
  pod.metadata.owner_references.push_back(owner);
  model::Container c;
  c.name = "main";
  c.image = "trainer:1";
  pod.spec.containers.push_back(c);
  return pod;
}

TEST(SimilarPodsScheduling, AReplicaOfAFailedPodIsSimilar) {
  SimilarPodsScheduling similar;
  model::Pod a = replica("a", "rs-1");
  model::Pod b = replica("b", "rs-1");
  EXPECT_FALSE(similar.similar_unschedulable(a));
  similar.set_unschedulable(a);
  EXPECT_TRUE(similar.similar_unschedulable(b));
}

TEST(SimilarPodsScheduling, OtherControllersLabelsOrSpecsAreNotSimilar) {
  SimilarPodsScheduling similar;
  model::Pod a = replica("a", "rs-1");
  similar.set_unschedulable(a);
  EXPECT_FALSE(similar.similar_unschedulable(replica("b", "rs-2")));
  model::Pod relabelled = replica("c", "rs-1");
  relabelled.metadata.labels["tier"] = "gold";
  EXPECT_FALSE(similar.similar_unschedulable(relabelled));
  model::Pod other_image = replica("d", "rs-1");
  other_image.spec.containers[0].image = "trainer:2";
  EXPECT_FALSE(similar.similar_unschedulable(other_image));
  // Annotations are not compared (CA compares labels and spec only).
  model::Pod annotated = replica("e", "rs-1");
  annotated.metadata.annotations["note"] = "x";
  EXPECT_TRUE(similar.similar_unschedulable(annotated));
}

TEST(SimilarPodsScheduling, PodsWithoutAControllerAndDaemonSetPodsAreNeverRemembered) {
  SimilarPodsScheduling similar;
  model::Pod bare = replica("a", "rs-1");
  bare.metadata.owner_references.clear();
  similar.set_unschedulable(bare);
  EXPECT_FALSE(similar.similar_unschedulable(bare));
  model::Pod ds = replica("b", "ds-1", "DaemonSet");
  similar.set_unschedulable(ds);
  EXPECT_FALSE(similar.similar_unschedulable(replica("c", "ds-1", "DaemonSet")));
}

TEST(SimilarPodsScheduling, AtMostTenDistinctPodsAreRememberedPerController) {
  SimilarPodsScheduling similar;
  for (int i = 0; i < 11; ++i) {
    model::Pod p = replica("p" + std::to_string(i), "rs-1");
    p.spec.containers[0].image = "trainer:" + std::to_string(i);
    similar.set_unschedulable(p);
  }
  model::Pod tenth = replica("x", "rs-1");
  tenth.spec.containers[0].image = "trainer:9";
  EXPECT_TRUE(similar.similar_unschedulable(tenth));
  model::Pod eleventh = replica("y", "rs-1");
  eleventh.spec.containers[0].image = "trainer:10";
  EXPECT_FALSE(similar.similar_unschedulable(eleventh));
}

}  // namespace
}  // namespace hamisim::planner::scaleup
