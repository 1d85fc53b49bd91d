#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/decode.h"
#include "test_paths.h"

namespace hamisim::model {
namespace {

const std::string kTestData = std::string(hamisim::testing::source_dir()) + "/tests/model/testdata";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hamisim-model-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(LoadObjectsTest, DirectoryMergesMatchingFilesSortedByName) {
  auto set = load_objects(kTestData + "/dir");
  ASSERT_TRUE(set.ok()) << set.error().message;
  // a-node.json (NodeList), b-pods.yaml (two pods), c-quota.yml; notes.txt is ignored.
  ASSERT_EQ(set->nodes.size(), 2u);
  EXPECT_EQ(set->nodes[0].metadata.name, "n1");
  EXPECT_EQ(set->nodes[1].metadata.name, "n2");
  EXPECT_EQ(set->nodes[1].status.allocatable.at("nvidia.com/gpu").as_int64(), 8);
  ASSERT_EQ(set->pods.size(), 2u);
  EXPECT_EQ(set->pods[0].metadata.name, "p1");
  EXPECT_EQ(set->pods[0].spec.containers[0].resources.limits.at("nvidia.com/gpu").as_int64(), 2);
  EXPECT_EQ(set->pods[0].spec.containers[0].resources.limits.at("cpu").milli_value(), 500);
  EXPECT_EQ(set->pods[1].metadata.name, "p2");
  ASSERT_EQ(set->quotas.size(), 1u);
  EXPECT_EQ(set->quotas[0].metadata.namespace_, "ml");
  EXPECT_EQ(set->quotas[0].status.used.at("limits.nvidia.com/gpu").as_int64(), 3);
  EXPECT_EQ(set->node_json.size(), 2u);
}

TEST(LoadObjectsTest, SingleFile) {
  auto set = load_objects(kTestData + "/node.json");
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->nodes.size(), 1u);
  EXPECT_EQ(set->nodes[0].metadata.name, "gpu-node-1");
}

TEST(LoadObjectsTest, OrderFollowsFileNames) {
  TempDir dir;
  dir.write("2.yaml", "kind: Node\nmetadata: {name: second}\n");
  dir.write("10.json", R"({"kind":"Node","metadata":{"name":"first"}})");
  dir.write("3.yml", "kind: Node\nmetadata: {name: third}\n");
  std::filesystem::create_directory(dir.path() + "/sub.yaml");  // directories are skipped
  auto set = load_objects(dir.path());
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->nodes.size(), 3u);
  EXPECT_EQ(set->nodes[0].metadata.name, "first");
  EXPECT_EQ(set->nodes[1].metadata.name, "second");
  EXPECT_EQ(set->nodes[2].metadata.name, "third");
}

TEST(LoadObjectsTest, EmptyDirectoryIsAnEmptySet) {
  TempDir dir;
  auto set = load_objects(dir.path());
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_TRUE(set->nodes.empty() && set->pods.empty());
}

TEST(LoadObjectsTest, ErrorsNameTheFile) {
  TempDir dir;
  dir.write("a.yaml", "kind: Node\n");
  const std::string bad = dir.write("b.json", R"({"kind":"Node","metadata":{"name":7}})");
  auto set = load_objects(dir.path());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message, bad + ": metadata.name: expected a string, got number");
}

TEST(LoadObjectsTest, MissingPathIsAnErrorNamingIt) {
  const std::string missing = kTestData + "/does-not-exist.yaml";
  auto set = load_objects(missing);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find(missing), std::string::npos) << set.error().message;
}

TEST(ReadFileTest, ReadsWholeFile) {
  TempDir dir;
  const std::string text(200000, 'x');
  auto got = read_file(dir.write("f", text));
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, text);
}

// The text carries simdjson's padding as spare capacity, so decode_objects_in_place reads
// it where it lies.
TEST(ReadFileTest, LeavesRoomForTheJsonPadding) {
  TempDir dir;
  auto got = read_file(dir.write("f.json", R"({"kind":"List","items":[]})"));
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_GE(got->capacity() - got->size(), kJsonPadding);
}

// In place or copied, the same objects and the same errors; text without spare capacity and
// YAML take the copying path.
TEST(DecodeObjectsInPlaceTest, AgreesWithDecodeObjects) {
  const std::string list =
      R"({"kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}},)"
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"d"}}]})";
  for (const std::string& text :
       {list, list.substr(0, list.size() - 3), std::string("kind: Node\nmetadata: {name: n2}\n")}) {
    std::string padded = text;
    padded.reserve(text.size() + kJsonPadding);
    const std::string* both[] = {&padded, &text};
    for (const std::string* t : both) {
      auto in_place = decode_objects_in_place(*t);
      auto copied = decode_objects(std::string_view(*t));
      ASSERT_EQ(in_place.ok(), copied.ok()) << text;
      if (!copied.ok()) {
        EXPECT_EQ(in_place.error().message, copied.error().message);
        continue;
      }
      ASSERT_EQ(in_place->nodes.size(), copied->nodes.size());
      ASSERT_EQ(in_place->pods.size(), copied->pods.size());
      for (size_t i = 0; i < copied->nodes.size(); ++i)
        EXPECT_EQ(in_place->nodes[i].metadata.name, copied->nodes[i].metadata.name);
      for (size_t i = 0; i < copied->pods.size(); ++i)
        EXPECT_EQ(in_place->pods[i].metadata.name, copied->pods[i].metadata.name);
    }
  }
}

TEST(ReadFileTest, MissingFileErrorNamesPath) {
  auto got = read_file("/nonexistent/dir/file.json");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message,
            "cannot open /nonexistent/dir/file.json: No such file or directory");
}

TEST(ReadFileTest, DirectoryIsAnError) {
  auto got = read_file(kTestData);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message, "cannot read " + kTestData + ": is a directory");
}

TEST(ReadFileTest, FilesOverTheSizeCapAreRejected) {
  TempDir dir;
  const std::string p = dir.path() + "/big";
  { std::ofstream f(p); }
  std::filesystem::resize_file(p, (size_t{256} << 20) + 1);  // sparse: costs no disk
  auto got = read_file(p);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("larger than 256 MiB"), std::string::npos)
      << got.error().message;
}

}  // namespace
}  // namespace hamisim::model
