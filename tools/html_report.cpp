// HTML report rendering: one inline <svg> per chart, axes with gridlines and labels, one
// polyline per series, and a hover read-out driven by the chart data embedded as JSON.
#include "html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace retcon::tools {
namespace {

constexpr const char* kColors[] = {"#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324"};
constexpr int kWidth = 1000, kHeight = 240, kLeft = 64, kRight = 16, kTop = 28, kBottom = 34;

std::string num(double v) {
  char buf[64];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A "nice" step for about `ticks` gridlines over `range`.
double nice_step(double range, int ticks) {
  if (range <= 0) return 1;
  const double raw = range / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

std::string render_chart(const Chart& chart, const std::vector<double>& times, size_t index) {
  double lo = 0, hi = 1;
  bool any = false;
  for (const ChartSeries& s : chart.series)
    for (double v : s.values) {
      if (!std::isfinite(v)) continue;
      if (!any) lo = hi = v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      any = true;
    }
  lo = std::min(lo, 0.0);
  if (hi <= lo) hi = lo + 1;
  const double step = nice_step(hi - lo, 4);
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  const double t0 = times.empty() ? 0 : times.front();
  const double t1 = times.size() < 2 ? t0 + 1 : times.back();
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto x_of = [&](double t) { return kLeft + (t - t0) / (t1 - t0) * pw; };
  auto y_of = [&](double v) { return kTop + (hi - v) / (hi - lo) * ph; };

  std::string o;
  o += "<div class=\"chart\"><svg id=\"chart" + std::to_string(index) + "\" viewBox=\"0 0 " + std::to_string(kWidth) +
       " " + std::to_string(kHeight) + "\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
       std::to_string(kHeight) + "\" data-index=\"" + std::to_string(index) + "\">\n";
  o += "<text x=\"" + std::to_string(kLeft) + "\" y=\"18\" class=\"title\">" + html_escape(chart.title) + " (" +
       html_escape(chart.unit) + ")</text>\n";
  for (double v = lo; v <= hi + step / 2; v += step) {
    const std::string y = num(y_of(v));
    o += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" + y +
         "\" y2=\"" + y + "\" class=\"grid\"/>";
    o += "<text x=\"" + std::to_string(kLeft - 6) + "\" y=\"" + num(y_of(v) + 4) + "\" class=\"ylabel\">" + num(v) +
         "</text>\n";
  }
  const double tstep = nice_step(t1 - t0, 10);
  for (double t = std::ceil(t0 / tstep) * tstep; t <= t1 + 1e-9; t += tstep) {
    o += "<text x=\"" + num(x_of(t)) + "\" y=\"" + std::to_string(kHeight - 14) + "\" class=\"xlabel\">" + num(t) +
         " s</text>";
  }
  o += "\n<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kLeft) + "\" y1=\"" +
       std::to_string(kTop) + "\" y2=\"" + std::to_string(kHeight - kBottom) + "\" class=\"axis\"/>";
  o += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
       num(y_of(std::clamp(0.0, lo, hi))) + "\" y2=\"" + num(y_of(std::clamp(0.0, lo, hi))) + "\" class=\"axis\"/>\n";
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    std::string points;
    for (size_t i = 0; i < series.values.size() && i < times.size(); ++i) {
      if (!std::isfinite(series.values[i])) continue;
      points += num(x_of(times[i])) + "," + num(y_of(series.values[i])) + " ";
    }
    o += "<polyline fill=\"none\" stroke=\"" + std::string(kColors[s % 8]) + "\" stroke-width=\"1.6\" points=\"" +
         points + "\"/>\n";
    const int lx = kWidth - kRight - 110 * int(chart.series.size() - s);
    o += "<rect x=\"" + std::to_string(lx) + "\" y=\"10\" width=\"12\" height=\"4\" fill=\"" + kColors[s % 8] +
         "\"/><text x=\"" + std::to_string(lx + 16) + "\" y=\"16\" class=\"legend\">" + html_escape(series.name) +
         "</text>\n";
  }
  o += "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"" + std::to_string(kTop) + "\" y2=\"" +
       std::to_string(kHeight - kBottom) + "\" visibility=\"hidden\"/>";
  o += "</svg><div class=\"readout\" id=\"readout" + std::to_string(index) + "\">&nbsp;</div></div>\n";
  return o;
}

std::string json_array(const std::vector<double>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) {  // appended, not joined with operator+ (see below)
    if (i) o += ',';
    o += std::isfinite(v[i]) ? num(v[i]) : std::string("null");
  }
  return o + "]";
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '<') {
      o += "\\u003c";  // never close the script element from inside a string
      continue;
    }
    o += c;
  }
  return o + "\"";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string o;
  o.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string render_html(const HtmlReport& r) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(r.title) +
       "</title>\n<style>\n"
       "body{font-family:sans-serif;margin:16px 24px;color:#222;background:#fafafa}\n"
       "h1{font-size:20px;margin:0 0 8px}p{margin:4px 0;font-size:13px}\n"
       "table{border-collapse:collapse;margin:10px 0 16px;font-size:13px}\n"
       "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#eee}\n"
       ".chart{background:#fff;border:1px solid #ddd;margin:0 0 12px;display:inline-block}\n"
       "svg text{font-size:11px;fill:#444}svg .title{font-size:13px;font-weight:bold;fill:#222}\n"
       "svg .ylabel{text-anchor:end}svg .xlabel{text-anchor:middle}\n"
       ".grid{stroke:#eee}.axis{stroke:#999}.cursor{stroke:#888;stroke-dasharray:3 3}\n"
       ".readout{font-size:12px;height:16px;padding:0 8px 4px;font-family:monospace}\n"
       "</style>\n</head>\n<body>\n<h1>" +
       html_escape(r.title) + "</h1>\n";
  for (const std::string& n : r.notes) o += "<p>" + html_escape(n) + "</p>\n";
  if (!r.table.empty()) {
    o += "<table>\n";
    for (size_t row = 0; row < r.table.size(); ++row) {
      o += "<tr>";
      for (const std::string& cell : r.table[row])
        o += (row == 0 ? "<th>" : "<td>") + html_escape(cell) + (row == 0 ? "</th>" : "</td>");
      o += "</tr>\n";
    }
    o += "</table>\n";
  }
  for (size_t i = 0; i < r.charts.size(); ++i) o += render_chart(r.charts[i], r.times, i);

  // Hover read-out: the value of every series at the time under the mouse.
  o += "<script>\nconst times = " + json_array(r.times) + ";\nconst charts = [";
  for (size_t i = 0; i < r.charts.size(); ++i) {
    o += i ? ",\n" : "\n";
    o += "{unit:" + json_string(r.charts[i].unit) + ",series:[";
    for (size_t s = 0; s < r.charts[i].series.size(); ++s) {
      // Appended piece by piece, not joined with operator+: GCC 12 at -O3 warns (-Wrestrict) on
      // the latter inside libstdc++, a known false positive that -Werror turns into a failure.
      if (s) o += ',';
      o += "{name:";
      o += json_string(r.charts[i].series[s].name);
      o += ",values:";
      o += json_array(r.charts[i].series[s].values);
      o += '}';
    }
    o += "]}";
  }
  o += "];\n"
       "const L = " + std::to_string(kLeft) + ", W = " + std::to_string(kWidth - kLeft - kRight) + ";\n"
       "document.querySelectorAll('svg[data-index]').forEach(svg => {\n"
       "  const c = charts[+svg.dataset.index], out = document.getElementById('readout' + svg.dataset.index);\n"
       "  const cur = svg.querySelector('.cursor');\n"
       "  svg.addEventListener('mousemove', ev => {\n"
       "    if (times.length < 2) return;\n"
       "    const box = svg.getBoundingClientRect();\n"
       "    const x = (ev.clientX - box.left) * " + std::to_string(kWidth) + " / box.width;\n"
       "    const f = Math.min(1, Math.max(0, (x - L) / W));\n"
       "    const t = times[0] + f * (times[times.length - 1] - times[0]);\n"
       "    let i = 0; while (i + 1 < times.length && times[i + 1] <= t) ++i;\n"
       "    cur.setAttribute('x1', x); cur.setAttribute('x2', x); cur.setAttribute('visibility', 'visible');\n"
       "    out.textContent = 't=' + times[i].toFixed(1) + ' s  ' + c.series.map(s => s.name + ': ' +\n"
       "      (s.values[i] === null ? '-' : s.values[i]) + ' ' + c.unit).join('   ');\n"
       "  });\n"
       "  svg.addEventListener('mouseleave', () => cur.setAttribute('visibility', 'hidden'));\n"
       "});\n</script>\n</body>\n</html>\n";
  return o;
}

}  // namespace retcon::tools
