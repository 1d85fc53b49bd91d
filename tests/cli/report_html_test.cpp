// The plan's HTML report (issue #47): a search box, filters by node group and by outcome,
// sortable tables and a legend of the per-GPU bars, all inline (no external asset). The
// structure is checked always; the script is run in headless Chromium where it is installed
// (`apt-get install chromium`), which searches, filters and sorts the bundled example's report.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_process.h"
#include "test_paths.h"

namespace hamisim {
namespace report_html_test {

namespace fs = std::filesystem;
using testing::describe;
using ::testing::HasSubstr;

std::string bundled_report() {
  const auto r = testing::run_process({hamisim::testing::hamisim_bin(), "plan", "-o", "html"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return r.out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(HtmlReport, HasSearchFiltersSortableTablesAndALegend) {
  const std::string h = bundled_report();
  EXPECT_THAT(h, HasSubstr("<input type=\"search\" id=\"search\""));
  // A filter option per node group (by index) and per outcome present, with its count.
  EXPECT_THAT(h, HasSubstr("<select id=\"group-filter\" aria-label=\"node group\"><option "
                           "value=\"\">every node group</option><option value=\"0\">gpu-k80"
                           "</option><option value=\"1\">gpu-a100</option><option value=\"2\">"
                           "cpu</option></select>"));
  EXPECT_THAT(h, HasSubstr(">triggers-scale-up (1)</option>"));
  EXPECT_THAT(h, HasSubstr(">fits-existing-node (1)</option>"));
  // Node groups, pod owners and new-node cards are what the filters show and hide.
  EXPECT_EQ(count(h, " data-filter "), 6u);
  EXPECT_GE(count(h, "<table class=\"sortable"), 3u);
  EXPECT_THAT(h, HasSubstr("<p class=\"legend\">Each GPU of a node is a pair of bars"));
  EXPECT_THAT(h, HasSubstr("<span class=\"key mem\"></span>memory"));
  EXPECT_EQ(count(h, "<script"), 1u);
  EXPECT_EQ(h.find("src="), std::string::npos);
}

TEST(HtmlReport, ItsScriptSearchesFiltersAndSortsInChromium) {
  if (testing::run_process({"/bin/sh", "-c", "command -v chromium"}).exit_code != 0) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium): the report's script "
                    "is not run; its structure is checked by HasSearchFilters...";
  }
  const fs::path dir = fs::temp_directory_path() / ("hamisim-html-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The report, with an error catcher first and a probe last: the probe types into the search
  // box, picks a node group, sorts the node groups by max size twice, and writes what the page
  // then shows where --dump-dom prints it.
  const std::string probe = R"(<script>
window.addEventListener("load", function () {
  var out = [], shown = document.getElementById("shown");
  var s = document.getElementById("search");
  s.value = "WEB-0"; s.dispatchEvent(new Event("input"));
  out.push("search:" + shown.textContent);
  s.value = ""; s.dispatchEvent(new Event("input"));
  out.push("cleared:" + shown.textContent + document.querySelectorAll("[hidden]").length);
  var g = document.getElementById("group-filter");
  g.value = "2"; g.dispatchEvent(new Event("change"));
  out.push("group:" + shown.textContent);
  g.value = ""; g.dispatchEvent(new Event("change"));
  var o = document.getElementById("outcome-filter");
  o.value = "1"; o.dispatchEvent(new Event("change"));  // triggers-scale-up
  out.push("outcome:" + shown.textContent);
  var t = document.querySelector("table.sortable"), th = t.tHead.rows[0].cells[2];
  th.click(); th.click();
  out.push("sorted:" + Array.prototype.map.call(t.tBodies[0].rows,
      function (r) { return r.cells[0].textContent; }).join(","));
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = out.join("|") + "|errors:" + window.__errors.join(";");
  document.body.appendChild(pre);
});
</script>)";
  {
    std::ofstream f(dir / "report.html");
    f << "<script>window.__errors=[];window.addEventListener(\"error\",function(e){"
         "window.__errors.push(e.message)});</script>"
      << bundled_report() << probe;
  }
  const auto r =
      testing::run_process({"/usr/bin/env", "chromium", "--headless", "--no-sandbox",
                            "--disable-gpu", "--user-data-dir=" + (dir / "profile").string(),
                            "--dump-dom", "file://" + (dir / "report.html").string()},
                           std::chrono::seconds(90));
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("data-ready=\"true\"")) << "the report's script did not finish";
  // 6 filtered elements: 3 node groups, 2 pod owners, 1 new-node card. Search is
  // case-insensitive; the cpu group concerns its own row and trainer-2, which it rejects;
  // triggers-scale-up (trainer-2's) concerns the three groups, which fit or reject it, its
  // owner and its node. Max size descending: cpu 10, gpu-k80 5, gpu-a100 4.
  EXPECT_THAT(r.out, HasSubstr("<pre id=\"probe\">search:1 of 6 shown|cleared:0|group:2 of 6 "
                               "shown|outcome:5 of 6 shown|sorted:cpu,gpu-k80,gpu-a100|errors:"
                               "</pre>"));
}

}  // namespace report_html_test
}  // namespace hamisim
