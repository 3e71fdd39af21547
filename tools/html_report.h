// A self-contained HTML page of line charts: inline SVG drawn here, a few lines of inline
// JavaScript for a hover read-out, no external URL of any kind (it opens offline, and a test
// checks that it has no http(s) reference).
#pragma once

#include <string>
#include <vector>

namespace retcon::tools {

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // one per time point
};

struct Chart {
  std::string title;
  std::string unit;
  std::vector<ChartSeries> series;
};

struct HtmlReport {
  std::string title;
  std::vector<std::string> notes;                   // paragraphs under the title
  std::vector<std::vector<std::string>> table;      // first row: header
  std::vector<double> times;                        // x axis, seconds
  std::vector<Chart> charts;
};

std::string render_html(const HtmlReport& report);
// Escapes &, <, >, " for HTML text and attributes.
std::string html_escape(const std::string& text);

}  // namespace retcon::tools
