// tinyscope report: one HTML page of a run that opens anywhere (file://, no server, nothing fetched). A script runs in
// child processes of this executable (`tinyscope run SCRIPT --json T --repeat N`), one device after the other; the page
// is drawn from the traces with the window's own models, so it names, colours and times things as the window does:
// Session loads a trace, TimingsModel's warm median is the headline time, CompareModel pairs the calls of two runs,
// GraphPane's statics build the tensor and kernel graphs, and Graphviz's dot turns them into inline SVG.
#include "app/cli/report.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <signal.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/cli/cli.h"
#include "app/gui/devices.h"
#include "app/gui/run_controller.h"
#include "viewer/model/call_color.h"
#include "viewer/graph/graph_layout.h"
#include "viewer/model/ansi.h"
#include "viewer/model/call_pairing.h"
#include "viewer/model/compare_model.h"
#include "viewer/model/output_compare.h"
#include "viewer/model/session.h"
#include "viewer/model/timings_model.h"
#include "viewer/panes/graph_pane.h"

namespace tscli {

namespace {

constexpr int kDefaultRepeat = 5;  // the window's default: four warm runs after the first give a median
constexpr int kMaxGraphs = 24;     // schedules drawn in each graph section; the page says how many more there were
// the most nodes of one tensor graph: above this the window opens a graph collapsed to kernel clusters; the page
// draws the first ones (breadth first from the roots, as build_graph lists them) and says it cut the graph
constexpr int kMaxGraphNodes = tsv::GraphPane::kCollapseAbove;
// dot's crossing minimization grows fast with a graph's size and its shared nodes (a constant a hundred nodes read):
// graphs over kQuickLayoutAbove nodes are laid out with fewer of its iterations, and a graph dot cannot lay out in
// kDotTimeoutMs is drawn again cut to its first kRetryNodes
constexpr int kQuickLayoutAbove = 200;
constexpr int kRetryNodes = 300;
constexpr int kDotTimeoutMs = 30000;

struct Options {
  QString input, output, dev, compare, save_trace;
  int repeat = kDefaultRepeat;
  bool repeat_given = false;
  QStringList script_args;
};

int fail(const QString& why, int code = 2) {
  std::fprintf(stderr, "tinyscope report: %s\n", why.toLocal8Bit().constData());
  return code;
}

QString q(const std::string& s) { return QString::fromStdString(s); }

// the arguments after `report`; "" when they parse, else what is wrong with them
QString parse_options(const std::vector<std::string>& a, Options* o) {
  bool passthrough = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& x = a[i];
    if (passthrough) {
      o->script_args << q(x);
      continue;
    }
    if (x == "--") {
      passthrough = true;
      continue;
    }
    const bool valued = x == "-o" || x == "--output" || x == "--dev" || x == "--compare" || x == "--repeat" || x == "--save-trace";
    if (valued) {
      if (i + 1 >= a.size() || a[i + 1].empty()) return q(x) + " needs a value";
      const std::string& v = a[++i];
      if (x == "-o" || x == "--output") o->output = q(v);
      else if (x == "--dev") o->dev = q(v);
      else if (x == "--compare") o->compare = q(v);
      else if (x == "--save-trace") o->save_trace = q(v);
      else if (!parse_count(v, kMaxRepeat, &o->repeat))
        return QStringLiteral("--repeat must be a whole number from 1 to %1, not '%2'").arg(kMaxRepeat).arg(q(v));
      else o->repeat_given = true;
    } else if (o->input.isEmpty()) {
      if (x.size() > 1 && x[0] == '-') return "unknown option '" + q(x) + "'";
      o->input = q(x);
    } else {
      o->script_args << q(x);  // as `tinyscope run`: what follows the script goes to its sys.argv
    }
  }
  return {};
}

// a file the report writes (the page, a saved trace) must have a folder to go in that takes it; "" if it can
QString output_problem(const QString& path, const QString& what) {
  const QFileInfo f(path);
  if (f.isDir()) return QStringLiteral("%1 '%2' is a directory").arg(what, path);
  const QFileInfo dir(f.absolutePath());
  if (!dir.isDir()) return QStringLiteral("cannot write %1 '%2': no folder '%3'").arg(what, path, dir.filePath());
  if (!dir.isWritable()) return QStringLiteral("cannot write %1 '%2': the folder '%3' is not writable").arg(what, path, dir.filePath());
  if (f.exists() && !f.isWritable()) return QStringLiteral("cannot overwrite %1 '%2'").arg(what, path);
  return {};
}

constexpr qsizetype kMaxPrinted = 64 * 1024;  // of what a run printed, the page keeps the start

// A stop signal sent to this process (`kill`, a job control's SIGTERM) while a script runs is passed on to the script,
// which then stops at its next line and ends (the report is not written); the terminal's Ctrl+C reaches both already
// (the kernel sends it to the whole process group), so it is not sent twice (a second one would end the script
// without its trace).
volatile std::sig_atomic_t g_script_pid = 0;
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void pass_on_stop(int sig, siginfo_t* info, void*) {
  g_stop_signal = sig;
  const bool from_a_process = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  if (g_script_pid > 0 && from_a_process) ::kill(static_cast<pid_t>(g_script_pid), sig);
}
// while it lives, SIGTERM, SIGINT and SIGHUP are passed on to `pid`
struct PassOnStops {
  static constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
  struct sigaction old[3];
  explicit PassOnStops(qint64 pid) {
    g_script_pid = static_cast<std::sig_atomic_t>(pid);
    struct sigaction sa {};
    sa.sa_sigaction = pass_on_stop;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old[i]);
  }
  ~PassOnStops() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old[i], nullptr);
    g_script_pid = 0;
  }
};

// Runs the script on `dev` in a child of this executable, one at a time; the child's errors (a traceback naming the
// script's line) go straight to our stderr, what it prints to our stdout as it prints it, and into *printed (its start).
// "" when it wrote its trace to `json`, else why not.
QString run_script(const Options& o, const QString& script, const QString& dev, const QString& json, QByteArray* printed) {
  std::fprintf(stderr, "tinyscope report: running %s on %s (each call %d time%s)\n", script.toLocal8Bit().constData(),
               dev.toLocal8Bit().constData(), o.repeat, o.repeat == 1 ? "" : "s");
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEV", dev);
  p.setProcessEnvironment(env);
  p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  p.setStandardInputFile(QProcess::nullDevice());
  QStringList args = {"run", script, "--json", json, "--repeat", QString::number(o.repeat)};
  // comparing two devices: every call's output kept, so the page can name the first call whose output differs
  if (!o.compare.isEmpty() && !o.compare.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) && !QFileInfo(o.compare).isFile())
    args << "--snapshots";
  if (!o.script_args.isEmpty()) args << "--" << o.script_args;
  p.start(QCoreApplication::applicationFilePath(), args);
  if (!p.waitForStarted(30000)) return QStringLiteral("could not start %1: %2").arg(QCoreApplication::applicationFilePath(), p.errorString());
  PassOnStops stops(p.processId());
  // a script runs as long as it runs (the user interrupts it, as `tinyscope run`)
  auto pass_on = [&] {
    const QByteArray out = p.readAllStandardOutput();
    if (out.isEmpty()) return;
    std::fwrite(out.constData(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (printed->size() < kMaxPrinted) printed->append(out.left(kMaxPrinted - printed->size()));
  };
  while (!p.waitForFinished(100)) pass_on();
  pass_on();
  if (g_stop_signal)
    return QStringLiteral("tinyscope report was stopped by %1 while %2 ran on %3 (the script was stopped too)")
        .arg(tsgui::RunController::signal_text(g_stop_signal), script, dev);
  if (p.exitStatus() != QProcess::NormalExit)  // Qt gives the signal as the exit code of a crash
    return QStringLiteral("%1 was killed by %2 on %3").arg(script, tsgui::RunController::signal_text(p.exitCode()), dev);
  if (p.exitCode() != 0) return QStringLiteral("%1 failed on %2 (exit %3)").arg(script, dev, QString::number(p.exitCode()));
  if (!QFileInfo(json).isFile()) return QStringLiteral("%1 ran on %2 but wrote no trace").arg(script, dev);
  return {};
}

// a script's run that failed: no report; exit status 128 + the signal when this process was stopped, else 1
int script_failed(const QString& why) { return fail(why + "; no report written", g_stop_signal ? 128 + g_stop_signal : 1); }

// ---- HTML ----------------------------------------------------------------------------------------------------------

QString esc(const QString& s) { return s.toHtmlEscaped(); }
QString num(double v) { return QString::number(v, 'g', 17); }  // a raw value, as the trace has it
QString us(double s) { return QString::number(s * 1e6, 'f', 2) + QStringLiteral(" µs"); }

// a call's colour as a small square before its name (viewer/model/call_color.h: the colour every pane gives it)
QString swatch(const QColor& c) { return QStringLiteral("<span class=\"sw\" style=\"background:%1\"></span>").arg(c.name()); }

// a name with ANSI colours (kernel names carry them) as coloured spans, as the window's delegates draw it
QString colored(const QString& ansi) {
  QString out;
  for (const tsv::AnsiSegment& seg : tsv::parse_ansi(ansi)) {
    if (seg.text.isEmpty()) continue;
    if (seg.color.isValid()) out += QStringLiteral("<span style=\"color:%1\">%2</span>").arg(seg.color.name(), esc(seg.text));
    else out += esc(seg.text);
  }
  return out;
}

// text as numbered lines (CSS counters number them, so a copy of the text has no numbers in it)
QString numbered(const QString& text, const QList<bool>* kept = nullptr, const char* changed_class = nullptr) {
  QStringList lines = text.split('\n');
  if (lines.size() > 1 && lines.back().isEmpty()) lines.removeLast();
  QString out;
  for (int i = 0; i < lines.size(); ++i) {
    const bool changed = kept && i < kept->size() && !(*kept)[i];
    out += changed ? QStringLiteral("<span class=\"ln %1\">").arg(QLatin1String(changed_class)) : QStringLiteral("<span class=\"ln\">");
    out += esc(lines[i]) + QStringLiteral("</span>\n");
  }
  return out;
}

QString shape_text(const QList<qint64>& g) {
  QStringList parts;
  for (qint64 v : g) parts << QString::number(v);
  return parts.join(QStringLiteral("×"));
}

// the schedule contexts in the order calls name them (Call::schedule_index)
QList<int> schedules_of(const tsv::Session& s) {
  QList<int> out;
  for (int k = 0; s.schedule_context(k) >= 0; ++k) out << s.schedule_context(k);
  return out;
}

// `dot -Tsvg` in a child process, as the window lays out with `dot -Tjson0` (Graphviz's library is not thread-safe):
// the <svg> element alone (no XML prolog or doctype), its ids prefixed so several graphs share one page
QString dot_svg(const tsv::GraphInput& g, const QString& id_prefix, QString* error, bool* timed_out) {
  *timed_out = false;
  QProcess p;
  QStringList args = {QStringLiteral("-Tsvg")};
  if (g.nodes.size() > kQuickLayoutAbove) args << QStringLiteral("-Gmclimit=0.2") << QStringLiteral("-Gnslimit=2");
  p.start(QStringLiteral("dot"), args);
  if (!p.waitForStarted(10000)) {
    *error = QStringLiteral("Graphviz's dot did not start (%1); `make deps` installs graphviz").arg(p.errorString());
    return {};
  }
  p.write(g.to_dot());
  p.closeWriteChannel();
  if (!p.waitForFinished(kDotTimeoutMs)) {
    p.kill();
    p.waitForFinished();
    *error = QStringLiteral("dot took more than %1 s to lay this graph out").arg(kDotTimeoutMs / 1000);
    *timed_out = true;
    return {};
  }
  QString svg = QString::fromUtf8(p.readAllStandardOutput());
  const qsizetype at = svg.indexOf(QStringLiteral("<svg"));
  if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0 || at < 0) {
    *error = QStringLiteral("dot failed: ") + QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
    return {};
  }
  svg = svg.mid(at).trimmed();
  svg.replace(QStringLiteral(" id=\""), QStringLiteral(" id=\"") + id_prefix);
  return svg;
}

constexpr const char* kStyle = R"CSS(
:root { color-scheme: light; }
body { margin: 0; background: #fbfbfd; color: #1d1d22; font: 14px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 12px 20px 48px; }
header h1 { font-size: 22px; margin: 8px 0 2px; }
header p { margin: 0 0 8px; color: #555; }
nav { margin: 6px 0 4px; font-size: 13px; }
nav a { margin-right: 12px; color: #2457c5; text-decoration: none; }
section { background: #fff; border: 1px solid #dcdce4; border-radius: 6px; padding: 4px 16px 14px; margin: 14px 0; overflow-x: auto; }
h2 { font-size: 17px; margin: 10px 0 8px; border-bottom: 1px solid #e6e6ee; padding-bottom: 4px; }
h3 { font-size: 14px; margin: 14px 0 4px; }
.dim { color: #6b6b78; font-weight: normal; }
.note { color: #6b5500; background: #fff8dc; border: 1px solid #eadb9c; border-radius: 4px; padding: 4px 8px; margin: 6px 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ececf2; text-align: left; vertical-align: top; }
th { background: #f3f3f8; font-weight: 600; white-space: nowrap; }
td.t, td.r, th.r { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.name { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; white-space: nowrap; }
tr.total td { font-weight: 600; border-top: 2px solid #c8c8d4; }
table.kv th { text-align: left; width: 9em; background: none; }
table.kv td pre { margin: 0; }
pre, code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12px; }
pre.src { background: #f7f7fa; border: 1px solid #e3e3ea; border-radius: 4px; padding: 6px 8px; margin: 4px 0; overflow-x: auto;
          counter-reset: ln; line-height: 1.4; white-space: pre; }
pre.src .ln { counter-increment: ln; }
pre.src .ln::before { content: counter(ln); display: inline-block; width: 3em; margin-right: 10px; text-align: right; color: #a0a0ac;
                      -webkit-user-select: none; user-select: none; }
pre.src .del, pre.src .add { display: inline-block; min-width: 100%; }
pre.src .del { background: #ffd7d5; }
pre.src .chg { background: #fff3c4; display: inline-block; min-width: 100%; }
pre.src .fill { counter-increment: none; background: #eeeeee; display: inline-block; min-width: 100%; }
pre.src .fill::before { content: ""; }
#compare-table tr.alone td, #compare-table tr.other td.name { color: #a06000; }
#compare-table tr.diverges td { background: #ffe9e6; }
p.bad, tr.differs td { color: #b03020; }
pre.src .add { background: #d4f5d4; }
pre.result { white-space: pre-wrap; word-break: break-word; }
details { margin: 4px 0; }
summary { cursor: pointer; padding: 2px 0; }
summary .meta { color: #6b6b78; font-size: 12px; }
figure { margin: 8px 0 18px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
.graph { overflow: auto; max-height: 1400px; border: 1px solid #ececf2; border-radius: 4px; background: #fff; padding: 4px; }
.graph svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
label.zoom { font-size: 12px; color: #555; display: block; margin: 2px 0; }
label.zoom:has(input:checked) + .graph svg { max-width: none; }
.legend { font-size: 12px; margin: 2px 0 6px; }
span.sw { display: inline-block; width: 11px; height: 11px; border: 1px solid #999; border-radius: 2px; vertical-align: -1px; margin: 0 6px 0 0; }
.legend span.sw { display: inline-block; width: 11px; height: 11px; border: 1px solid #999; border-radius: 2px; vertical-align: -1px; margin: 0 4px 0 10px; }
.bar { position: relative; width: 160px; height: 10px; background: #eef0f6; border-radius: 2px; }
.bar div { position: absolute; left: 0; top: 0; bottom: 0; background: #6d8fd8; border-radius: 2px; }
.faster { color: #1a7f37; }
.slower { color: #b03020; }
.diff { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
.diff h4 { margin: 4px 0 0; font-size: 12px; }
)CSS";

// ---- the page -------------------------------------------------------------------------------------------------------

struct Run {
  const tsv::Session* session = nullptr;
  QString device;      // what the run ran on (the trace's device)
  QByteArray printed;  // what the script printed (a run of a script; a saved trace has only its result)
  bool truncated() const { return printed.size() >= kMaxPrinted; }
};

class Page {
 public:
  Page(Run a, Run b, QString script_path, QString date) : a_(a), b_(b), script_(std::move(script_path)), date_(std::move(date)) {}
  QString html();
  QStringList warnings;  // graphs dot could not draw (the page says so where each would be)

 private:
  void summary();
  void script();
  void tensor_graphs();
  void kernel_graphs();
  void schedule();
  void sources();
  void timings();
  void compare();
  void compare_outputs();
  void compare_sources(const tsv::CompareModel& m, const QList<int>& rows);
  QString graph(const tsv::GraphInput& g, const QString& id, bool* timed_out = nullptr);
  const tsv::Session& s() const { return *a_.session; }
  Run a_, b_;
  QString script_, date_;
  QString h_;
  int graphs_ = 0;
};

// the graph as inline SVG, or a note saying why it is not drawn (with *timed_out set when dot ran out of time, the
// caller may try a smaller graph: the note is then left to it)
QString Page::graph(const tsv::GraphInput& g, const QString& id, bool* timed_out) {
  QString error;
  bool late = false;
  const QString svg = dot_svg(g, QStringLiteral("g%1-").arg(++graphs_), &error, &late);
  if (timed_out) *timed_out = late;
  if (svg.isEmpty() && late && timed_out) return {};
  if (svg.isEmpty()) {
    warnings << QStringLiteral("%1: %2").arg(id, error);
    return QStringLiteral("<p class=\"note\">Not drawn: %1</p>").arg(esc(error));
  }
  // a graph wider than the page is drawn to fit it; a box (CSS alone, no script) shows it at its own size, scrolled
  static const QRegularExpression width_re(QStringLiteral("^<svg[^>]*\\swidth=\"([0-9.]+)pt\""));
  const double width_pt = width_re.match(svg).captured(1).toDouble();
  const QString zoom = width_pt * 4 / 3 > 1180 ? QStringLiteral("<label class=\"zoom\"><input type=\"checkbox\"> actual size (%1 px wide)</label>")
                                                      .arg(qRound(width_pt * 4 / 3))
                                               : QString();
  return zoom + QStringLiteral("<div class=\"graph\" id=\"%1\">%2</div>").arg(id, svg);
}

void Page::summary() {
  const QList<tsv::Call>& calls = s().calls();
  int kernels = 0, copies = 0, others = 0, max_times = 0;
  QSet<QString> programs;
  double total = 0;
  for (const tsv::Call& c : calls) {
    if (c.kind == "kernel") ++kernels, programs.insert(tsv::program_id(c.program_key, c.applied_opts));
    else if (c.kind == "copy") ++copies;
    else ++others;
    max_times = std::max<int>(max_times, c.times.size());
    total += tsv::TimingsModel::headline_of(c);
  }
  const int schedules = schedules_of(s()).size();
  auto plural = [](int n, const char* one, const char* many) { return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many)); };
  h_ += "<section id=\"summary\"><h2>Summary</h2><table class=\"kv\">";
  const QString script_name = QFileInfo(script_).fileName();
  h_ += QStringLiteral("<tr><th>Script</th><td><code>%1</code> <span class=\"dim\">%2</span></td></tr>").arg(esc(script_name), esc(script_));
  QString devices = esc(a_.device);
  if (b_.session) devices += QStringLiteral(" <span class=\"dim\">compared with</span> %1").arg(esc(b_.device));
  h_ += QStringLiteral("<tr><th>Device</th><td>%1</td></tr>").arg(devices);
  h_ += QStringLiteral("<tr><th>Date</th><td>%1</td></tr>").arg(esc(date_));
  const QString timing = max_times >= 2 ? QStringLiteral("each call ran %1 times; a call's time is the median of its %2 warm runs after the first "
                                                         "(the first run, which pays one-off costs, is shown beside it)")
                                              .arg(max_times).arg(max_times - 1)
                                        : QStringLiteral("each call ran once: its time is that one run (no warm runs)");
  h_ += QStringLiteral("<tr><th>Timing</th><td>%1</td></tr>").arg(esc(timing));
  if (!a_.printed.isEmpty())
    h_ += QStringLiteral("<tr><th>Printed</th><td><pre class=\"result\" id=\"printed\">%1</pre>%2</td></tr>")
              .arg(esc(QString::fromUtf8(a_.printed)),
                   a_.truncated() ? QStringLiteral("<p class=\"note\">Cut: the page keeps the first %1 KB.</p>").arg(kMaxPrinted / 1024) : QString());
  // RESULT, when the script set it: the value the trace keeps of the run
  h_ += QStringLiteral("<tr><th>Result</th><td><pre class=\"result\" id=\"result\">%1</pre></td></tr>")
            .arg(s().result().isEmpty() ? QStringLiteral("<span class=\"dim\">(the script set no RESULT)</span>") : esc(s().result()));
  QString counts = plural(schedules, "schedule", "schedules") + ", " + plural(kernels, "kernel", "kernels") +
                   QStringLiteral(" (%1)").arg(plural(programs.size(), "program", "distinct programs")) + ", " + plural(copies, "copy", "copies");
  if (others) counts += ", " + plural(others, "other call", "other calls");
  h_ += QStringLiteral("<tr><th>Counts</th><td id=\"counts\" data-schedules=\"%1\" data-kernels=\"%2\" data-copies=\"%3\">%4</td></tr>")
            .arg(schedules).arg(kernels).arg(copies).arg(esc(counts));
  h_ += QStringLiteral("<tr><th>Total time</th><td>%1 <span class=\"dim\">(the sum of the calls' times)</span></td></tr>").arg(us(total));
  h_ += "</table>";
  if (!s().partial().isEmpty())
    h_ += QStringLiteral("<p class=\"note\">This run ended early (%1): the page shows what it recorded.</p>").arg(esc(s().partial()));
  h_ += "</section>\n";
}

void Page::script() {
  h_ += "<section id=\"script\"><h2>Script</h2>";
  QFile f(script_);
  if (!script_.isEmpty() && f.open(QIODevice::ReadOnly)) {
    h_ += QStringLiteral("<p class=\"dim\">%1</p><pre class=\"src\">%2</pre>").arg(esc(script_), numbered(QString::fromUtf8(f.readAll())));
  } else {
    h_ += QStringLiteral("<p class=\"note\">The script (%1) could not be read here.</p>").arg(esc(script_.isEmpty() ? QStringLiteral("unnamed") : script_));
  }
  h_ += "</section>\n";
}

void Page::tensor_graphs() {
  h_ += "<section id=\"tensor-graph\"><h2>Tensor graphs</h2>";
  h_ += "<p class=\"dim\">Each schedule's tensor graph, its nodes filled with the colour of the call that computes them "
        "(the inputs no call computes keep the colour of their op).</p>";
  const QList<int> scheds = schedules_of(s());
  int drawn = 0, left = 0;
  for (int k = 0; k < scheds.size(); ++k) {
    const tsv::Context& c = s().contexts()[scheds[k]];
    if (c.tensor_graph.isEmpty()) continue;
    if (drawn == kMaxGraphs) {
      ++left;
      continue;
    }
    ++drawn;
    // build_graph lists the nodes breadth first from the roots: a cut graph is its first n
    tsv::GraphInput g = tsv::GraphPane::build_graph(s(), c.tensor_graph, kMaxGraphNodes);
    auto cut_to = [&g](int n) {
      g.nodes.resize(n);
      QSet<int> have;
      for (const auto& node : g.nodes) have.insert(node.id);
      g.edges.erase(std::remove_if(g.edges.begin(), g.edges.end(), [&](const auto& e) { return !have.contains(e.first) || !have.contains(e.second); }),
                    g.edges.end());
    };
    QString note;
    if (g.nodes.size() > kMaxGraphNodes) {
      cut_to(kMaxGraphNodes);
      note = QStringLiteral("Cut: this graph has more than %1 nodes (the window opens such a graph collapsed to kernel clusters); "
                            "drawn are the first %1, breadth first from its roots.").arg(kMaxGraphNodes);
    }
    // the window's colouring: a node takes the tint of the first call computing it
    const tsv::GraphPane::Split split = tsv::GraphPane::kernel_split(s(), scheds[k]);
    for (auto& n : g.nodes)
      if (auto it = split.items_of.constFind(n.id); it != split.items_of.constEnd()) n.fill = split.fill.value(it.value().front());
    const QString id = QStringLiteral("tensor-graph-%1").arg(k);
    bool timed_out = false;
    QString drawing = graph(g, id, g.nodes.size() > kRetryNodes ? &timed_out : nullptr);
    if (timed_out) {
      const qsizetype tried = g.nodes.size();
      cut_to(kRetryNodes);
      note = QStringLiteral("Cut: dot could not lay out this graph's %1 nodes in %2 s; drawn are the first %3, breadth first from its "
                            "roots.").arg(tried).arg(kDotTimeoutMs / 1000).arg(kRetryNodes);
      drawing = graph(g, id);
    }
    h_ += QStringLiteral("<figure data-schedule=\"%1\"><figcaption>%2 <span class=\"dim\">· schedule %3 of %4 · %5 nodes</span></figcaption>")
              .arg(QString::number(k), esc(c.plain_name), QString::number(k + 1), QString::number(scheds.size()),
                   note.isEmpty() ? QString::number(g.nodes.size()) : QStringLiteral("the first %1").arg(g.nodes.size()));
    if (!note.isEmpty()) h_ += QStringLiteral("<p class=\"note\">%1</p>").arg(esc(note));
    if (!split.items_of.isEmpty()) {
      h_ += "<div class=\"legend\">colour: the call computing each node:";
      for (int i = 0; i < split.fill.size(); ++i) {
        const int call = split.calls.value(i, -1);
        const QString name = call >= 0 ? s().calls()[call].display_name() : s().contexts()[scheds[k]].linear[i].kind + " (not run)";
        h_ += QStringLiteral("<span class=\"sw\" style=\"background:%1\"></span>%2").arg(split.fill[i].name(), esc(name));
      }
      h_ += "</div>";
    }
    h_ += drawing + "</figure>\n";
  }
  if (!drawn) h_ += "<p class=\"dim\">The run recorded no tensor graphs.</p>";
  if (left) h_ += QStringLiteral("<p class=\"note\">%1 more schedule(s) not drawn: the page draws the first %2.</p>").arg(left).arg(kMaxGraphs);
  h_ += "</section>\n";
}

void Page::kernel_graphs() {
  h_ += "<section id=\"kernel-graph\"><h2>Kernel graphs</h2>";
  h_ += "<p class=\"dim\">One node per kernel or copy a schedule ran, an edge from the call that wrote a buffer to each later "
        "call reading it (labelled with its elements and dtype), and a node per buffer read before the schedule wrote it.</p>";
  const QList<int> scheds = schedules_of(s());
  int drawn = 0, left = 0;
  for (int k = 0; k < scheds.size(); ++k) {
    const tsv::Context& c = s().contexts()[scheds[k]];
    if (c.linear.isEmpty()) continue;
    if (drawn == kMaxGraphs) {
      ++left;
      continue;
    }
    ++drawn;
    QList<int> calls;
    const tsv::GraphInput g = tsv::GraphPane::build_kernel_graph(s(), scheds[k], &calls);
    const QString what = c.linear.size() == 1 ? QStringLiteral("1 call") : QStringLiteral("%1 calls").arg(c.linear.size());
    h_ += QStringLiteral("<figure data-schedule=\"%1\" data-calls=\"%2\"><figcaption>%3 <span class=\"dim\">· schedule %4 of %5 · %6</span></figcaption>")
              .arg(QString::number(k), QString::number(c.linear.size()), esc(c.plain_name), QString::number(k + 1), QString::number(scheds.size()), what);
    h_ += graph(g, QStringLiteral("kernel-graph-%1").arg(k)) + "</figure>\n";
  }
  if (!drawn) h_ += "<p class=\"dim\">The run recorded no schedules.</p>";
  if (left) h_ += QStringLiteral("<p class=\"note\">%1 more schedule(s) not drawn: the page draws the first %2.</p>").arg(left).arg(kMaxGraphs);
  h_ += "</section>\n";
}

void Page::schedule() {
  h_ += "<section id=\"schedule\"><h2>Schedule</h2>";
  h_ += "<p class=\"dim\">Every call in the order it ran.</p>";
  h_ += "<table><thead><tr><th class=\"r\">#</th><th>Kind</th><th>Name</th><th>Global</th><th>Buffers</th><th class=\"r\">Sched</th></tr></thead><tbody>";
  const QList<tsv::Call>& calls = s().calls();
  const QList<QColor> colors = tsv::call_colors(s());  // each call's one colour, as the window's panes show it
  for (int i = 0; i < calls.size(); ++i) {
    const tsv::Call& c = calls[i];
    QStringList bufs;
    for (const auto& [n, d] : c.arg_sizes) bufs << QStringLiteral("%1×%2").arg(n).arg(d);
    h_ += QStringLiteral("<tr data-call=\"%1\"><td class=\"r\">%2</td><td>%3</td><td class=\"name\">%4</td><td>%5</td><td>%6</td><td class=\"r\">%7</td></tr>")
              .arg(QString::number(i), QString::number(c.counter), esc(c.kind), swatch(colors.value(i)) + colored(c.colored_name).trimmed(),
                   esc(shape_text(c.global_size)),
                   esc(bufs.join(", ")), QString::number(c.schedule_index));
  }
  if (calls.isEmpty()) h_ += "<tr><td colspan=\"6\" class=\"dim\">The run made no calls.</td></tr>";
  h_ += "</tbody></table></section>\n";
}

void Page::sources() {
  h_ += "<section id=\"sources\"><h2>Sources</h2>";
  QSet<QString> seen;
  int n = 0;
  for (int ci = 0; ci < s().contexts().size(); ++ci) {
    const tsv::Context& c = s().contexts()[ci];
    // a program: its key and opts (one AST compiled under two opts is two programs)
    const QString program = tsv::program_id(c.program.program_key, c.program.applied_opts);
    if (!c.has_program || c.program.src.isEmpty() || seen.contains(program)) continue;
    seen.insert(program);
    const tsv::Program& p = c.program;
    const int ran = s().calls_of_context(ci).size();
    QString meta = esc(p.lang.isEmpty() ? QStringLiteral("source") : p.lang);
    meta += " · opts: " + esc(p.applied_opts.isEmpty() ? QStringLiteral("none") : p.applied_opts.join(", "));
    if (!p.opts_source.isEmpty()) meta += " (" + esc(p.opts_source) + ")";
    if (!p.global_size.isEmpty()) meta += " · global " + esc(shape_text(p.global_size));
    meta += QStringLiteral(" · %1 call%2").arg(ran).arg(ran == 1 ? "" : "s");
    h_ += QStringLiteral("<details%1 data-program=\"%2\"><summary><code>%3</code> <span class=\"meta\">%4</span></summary><pre class=\"src\">%5</pre></details>\n")
              .arg(n == 0 ? QStringLiteral(" open") : QString(), esc(p.program_key), colored(p.colored_name.isEmpty() ? p.name : p.colored_name), meta,
                   numbered(p.src));
    ++n;
  }
  if (!n) h_ += "<p class=\"dim\">The run compiled no programs.</p>";
  h_ += "</section>\n";
}

void Page::timings() {
  h_ += "<section id=\"timings\"><h2>Timings</h2>";
  const QList<tsv::Call>& calls = s().calls();
  const QList<QColor> colors = tsv::call_colors(s());
  double max_t = 0;
  QList<double> headlines;
  for (const tsv::Call& c : calls) headlines.push_back(tsv::TimingsModel::headline_of(c));
  max_t = tsv::TimingsModel::robust_scale(headlines);  // the window's axis: calls that dwarf the rest are clipped
  h_ += "<p class=\"dim\">Time: the median of each call's warm runs after the first (a call that ran once: its one run); "
        "GFLOP/s and GB/s of that time. First run: DEBUG=2's time, * the first run of its program. Warm runs: fastest–slowest "
        "and their median. ↺ timed on restored inputs (the kernel writes memory it reads).</p>";
  h_ += "<table id=\"timings-table\"><thead><tr><th class=\"r\">#</th><th>Name</th><th class=\"r\">Time</th><th></th><th class=\"r\">First run</th>"
        "<th class=\"r\">GFLOP/s</th><th class=\"r\">GB/s</th><th>Warm runs</th></tr></thead><tbody>";
  double total = 0, total_first = 0;
  for (int i = 0; i < calls.size(); ++i) {
    const tsv::Call& c = calls[i];
    const double t = tsv::TimingsModel::headline_of(c);
    total += t, total_first += c.seconds;
    const double gflops = t > 0 ? c.estimates.ops / t / 1e9 : 0, gbs = t > 0 ? c.estimates.mem / t / 1e9 : 0;
    const QString star = c.first_run && c.kind == "kernel" ? QStringLiteral(" *") : QString();
    const QString mark = c.repeat_mode == "restored" ? QStringLiteral(" ↺") : QString();
    h_ += QStringLiteral("<tr data-call=\"%1\"><td class=\"r\">%2</td><td class=\"name\">%3%4</td>")
              .arg(i)
              .arg(c.counter)
              .arg(swatch(colors.value(i)) + colored(c.colored_name).trimmed(), mark);
    h_ += QStringLiteral("<td class=\"t\" data-seconds=\"%1\">%2</td>").arg(num(t), us(t));
    h_ += QStringLiteral("<td><div class=\"bar\"><div style=\"width:%1%;background:%2\"></div></div></td>")
              .arg(max_t > 0 ? 100.0 * std::min(t, max_t) / max_t : 0, 0, 'f', 1)
              .arg(tsv::call_outline(colors.value(i)).name());
    h_ += QStringLiteral("<td class=\"t first\" data-seconds=\"%1\">%2%3</td>").arg(num(c.seconds), us(c.seconds), star);
    h_ += QStringLiteral("<td class=\"r\" data-value=\"%1\">%2</td><td class=\"r\" data-value=\"%3\">%4</td>")
              .arg(num(gflops), QString::number(gflops, 'f', 3), num(gbs), QString::number(gbs, 'f', 3));
    h_ += QStringLiteral("<td>%1</td></tr>\n").arg(esc(tsv::TimingsModel::spread_text(tsv::TimingsModel::spread_of(c.times))));
  }
  h_ += QStringLiteral("<tr class=\"total\"><td></td><td>Total (%1 calls)</td><td class=\"t\" data-seconds=\"%2\">%3</td><td></td>"
                       "<td class=\"t first\" data-seconds=\"%4\">%5</td><td></td><td></td><td></td></tr>")
            .arg(calls.size()).arg(num(total), us(total), num(total_first), us(total_first));
  h_ += "</tbody></table></section>\n";
}

// one kernel's two sources lined up by the uop each line renders (the window's "Line up by uop"): blank rows where one
// side has no such statement, rows of one side red or green, one statement in other words yellow
QString aligned_pre(const QStringList& lines, const QStringList& theirs, const tsv::StatementRows& st, bool left) {
  QString out;
  for (const auto& [x, y] : st.rows) {
    const int mine = left ? x : y, other = left ? y : x;
    if (mine < 0) {
      out += QStringLiteral("<span class=\"ln fill\"> </span>\n");
      continue;
    }
    const QString cls = other < 0                                          ? QString::fromLatin1(left ? " del" : " add")
                        : lines[mine].trimmed() != theirs[other].trimmed() ? QStringLiteral(" chg")
                                                                           : QString();
    out += QStringLiteral("<span class=\"ln%1\">%2</span>\n").arg(cls, esc(lines[mine]));
  }
  return out;
}

void Page::compare() {
  const tsv::Session& b = *b_.session;
  h_ += QStringLiteral("<section id=\"compare\"><h2>Compare: %1 and %2</h2>").arg(esc(a_.device), esc(b_.device));
  h_ += QStringLiteral("<p class=\"dim\">Each row pairs the calls of the two runs that compute the same thing (the tensor node each "
                       "realizes), whatever their kernels are named; a call only one run made has a row of its own. Each time is the "
                       "median of its warm runs (its one run if it ran once), the ratio's range the one the warm runs allow; %1 / %2 "
                       "under 1 is faster on %1.</p>").arg(esc(b_.device), esc(a_.device));
  // CompareModel reads the sessions through const accessors only
  tsv::CompareModel m(const_cast<tsv::Session*>(a_.session), const_cast<tsv::Session*>(&b));
  m.set_devices(a_.device, b_.device);
  const tsv::Divergence div = tsv::first_divergence(s(), b, m.pairing());
  h_ += QStringLiteral("<p id=\"pairing\">%1</p>").arg(esc(tsv::pairing_text(m.pairing(), a_.device, b_.device)));
  h_ += QStringLiteral("<p id=\"divergence\" class=\"%1\"%2>%3%4</p>")
            .arg(div.row >= 0 ? QStringLiteral("bad") : QString(),
                 div.row >= 0 ? QStringLiteral(" data-call=\"%1\"").arg(div.a) : QString(),
                 esc(tsv::divergence_text(div, s(), b, a_.device, b_.device)),
                 div.row >= 0 ? QStringLiteral(" <a href=\"#compare-row-%1\">(its row)</a>").arg(div.row) : QString());
  h_ += "<table id=\"compare-table\"><thead><tr>";
  for (int col = 0; col < tsv::CompareModel::kColumns; ++col) {
    const bool right = col == tsv::CompareModel::kIndex || col == tsv::CompareModel::kTimeA || col == tsv::CompareModel::kTimeB || col == tsv::CompareModel::kRatio;
    h_ += QStringLiteral("<th%1>%2</th>").arg(right ? QStringLiteral(" class=\"r\"") : QString(), esc(m.headerData(col, Qt::Horizontal).toString()));
  }
  h_ += "</tr></thead><tbody>";
  double total_a = 0, total_b = 0;
  QList<int> pairs;  // rows of two kernels, each pair of programs once
  QSet<QString> paired;
  for (int r = 0; r < m.rowCount(); ++r) {
    auto cell = [&](int col) { return m.data(m.index(r, col)); };
    auto time_cell = [&](int col) {
      const QVariant raw = m.data(m.index(r, col), Qt::UserRole);
      if (!raw.isValid()) return QStringLiteral("<td class=\"t\">—</td>");
      (col == tsv::CompareModel::kTimeA ? total_a : total_b) += raw.toDouble();
      return QStringLiteral("<td class=\"t\" data-seconds=\"%1\">%2</td>").arg(num(raw.toDouble()), esc(cell(col).toString()));
    };
    const tsv::Call* ca = m.call_a(r);
    const tsv::Call* cb = m.call_b(r);
    const auto [lo, hi] = m.ratio_range(r);
    const QVariant ratio = m.data(m.index(r, tsv::CompareModel::kRatio), Qt::UserRole);
    const bool noisy = lo > 0 && lo <= 1 && hi >= 1;
    const QString ratio_class = !ratio.isValid() || ratio.toDouble() <= 0 || noisy ? QString()
                                : ratio.toDouble() < 1                         ? QStringLiteral(" faster")
                                                                               : QStringLiteral(" slower");
    QString row_class = !m.matched(r) ? QStringLiteral("alone") : !m.same_computation(r) ? QStringLiteral("other") : QString();
    if (r == div.row) row_class += QStringLiteral(" diverges");
    h_ += QStringLiteral("<tr data-call=\"%2\" data-call-b=\"%3\" id=\"compare-row-%1\"%4 title=\"%5\"><td class=\"r\">%6</td><td class=\"name\">%7</td>%8"
                         "<td class=\"name\">%9</td>%10<td class=\"t%11\"%12>%13</td></tr>\n")
              .arg(QString::number(r), QString::number(m.pairing().rows()[r].a), QString::number(m.pairing().rows()[r].b),
                   row_class.isEmpty() ? QString() : QStringLiteral(" class=\"%1\"").arg(row_class.trimmed()),
                   esc(m.data(m.index(r, tsv::CompareModel::kNameB), Qt::ToolTipRole).toString()),
                   QString::number(cell(tsv::CompareModel::kIndex).toInt()),
                   ca ? colored(ca->colored_name).trimmed() : QStringLiteral("—"), time_cell(tsv::CompareModel::kTimeA),
                   cb ? colored(cb->colored_name).trimmed() : QStringLiteral("—"))
              .arg(time_cell(tsv::CompareModel::kTimeB), ratio_class,
                   ratio.isValid() ? QStringLiteral(" data-ratio=\"%1\"").arg(num(ratio.toDouble())) : QString(),
                   esc(cell(tsv::CompareModel::kRatio).toString()));
    if (m.matched(r) && ca->kind == "kernel" && cb->kind == "kernel") {
      const QString key = ca->program_key + '\n' + cb->program_key;
      if (!paired.contains(key)) paired.insert(key), pairs.push_back(r);
    }
  }
  h_ += QStringLiteral("<tr class=\"total\"><td></td><td>Total</td><td class=\"t\" data-seconds=\"%1\">%2</td><td></td>"
                       "<td class=\"t\" data-seconds=\"%3\">%4</td><td class=\"t\">%5</td></tr>")
            .arg(num(total_a), us(total_a), num(total_b), us(total_b), total_a > 0 ? QStringLiteral("%1×").arg(total_b / total_a, 0, 'f', 2) : QStringLiteral("—"));
  h_ += "</tbody></table>";
  compare_outputs();
  compare_sources(m, pairs);
  h_ += "</section>\n";
}

// every value the script read back, on both sides, element by element (the window's Outputs tab)
void Page::compare_outputs() {
  tsv::OutputCompareModel o(const_cast<tsv::Session*>(a_.session), const_cast<tsv::Session*>(b_.session));
  h_ += "<h3 id=\"compare-outputs\">Outputs</h3>";
  if (o.rowCount() == 0) {
    h_ += "<p class=\"dim\">Neither run read a value back.</p>";
    return;
  }
  const int bad = o.differing_rows();
  h_ += QStringLiteral("<p class=\"%1\">%2</p>")
            .arg(bad ? QStringLiteral("bad") : QString(),
                 bad ? QStringLiteral("%1 of the %2 values the script read differ").arg(bad).arg(o.rowCount())
                     : QStringLiteral("The %1 value(s) the script read are equal, element by element").arg(o.rowCount()));
  h_ += "<table id=\"compare-outputs-table\"><thead><tr>";
  for (int col = 0; col < tsv::OutputCompareModel::kColumns; ++col)
    h_ += QStringLiteral("<th>%1</th>").arg(esc(o.headerData(col, Qt::Horizontal).toString()));
  h_ += "</tr></thead><tbody>";
  for (int r = 0; r < o.rowCount(); ++r) {
    const bool differs = o.diff(r).verdict != tsv::OutputDiff::Verdict::Equal;
    h_ += differs ? QStringLiteral("<tr class=\"differs\">") : QStringLiteral("<tr>");
    for (int col = 0; col < tsv::OutputCompareModel::kColumns; ++col)
      h_ += QStringLiteral("<td>%1</td>").arg(esc(o.data(o.index(r, col)).toString()));
    h_ += "</tr>\n";
  }
  h_ += "</tbody></table>";
}

// each pair of kernels' two sources side by side, lined up by the uop each line renders where the trace says it
// (else the lines only one of them has marked, as a text diff)
void Page::compare_sources(const tsv::CompareModel& m, const QList<int>& rows) {
  const tsv::Session& b = *b_.session;
  h_ += "<h3>Sources side by side</h3>";
  if (rows.isEmpty()) h_ += "<p class=\"dim\">No kernel ran on both devices.</p>";
  for (int r : rows) {
    const tsv::Call& ca = *m.call_a(r);
    const tsv::Call& cb = *m.call_b(r);
    const int xa = s().kernel_context(ca), xb = b.kernel_context(cb);
    if (xa < 0 || xb < 0) continue;
    const tsv::Program &pa = s().contexts()[xa].program, &pb = b.contexts()[xb].program;
    const QStringList ka = tsv::statement_keys(s(), pa), kb = tsv::statement_keys(b, pb);
    QString what, left, right;
    if (!ka.isEmpty() && !kb.isEmpty()) {
      const QStringList la = pa.src.split('\n'), lb = pb.src.split('\n');
      const tsv::StatementRows st = tsv::align_statements(la, ka, lb, kb);
      what = QStringLiteral("lined up by uop: %1 statement(s) on both sides (%2 worded differently), %3 only on the left, %4 only on the right")
                 .arg(st.both()).arg(st.reworded).arg(st.only_a).arg(st.only_b);
      left = aligned_pre(la, lb, st, true);
      right = aligned_pre(lb, la, st, false);
    } else {
      const tsv::LineDiff d = tsv::diff_lines(pa.src.split('\n'), pb.src.split('\n'));
      what = d.removed + d.added == 0 ? QStringLiteral("the two sources are the same")
                                      : QStringLiteral("%1 line(s) only on the left (red), %2 only on the right (green)").arg(d.removed).arg(d.added);
      left = numbered(pa.src, &d.a_kept, "del");
      right = numbered(pb.src, &d.b_kept, "add");
    }
    QString names = colored(pa.colored_name.isEmpty() ? pa.name : pa.colored_name);
    if (pa.name != pb.name) names += QStringLiteral(" / ") + colored(pb.colored_name.isEmpty() ? pb.name : pb.colored_name);
    h_ += QStringLiteral("<details class=\"pair\" data-call=\"%1\"%2><summary><code>%3</code> <span class=\"meta\">call %4 · %5</span></summary><div class=\"diff\">")
              .arg(QString::number(m.pairing().rows()[r].a), rows.front() == r ? QStringLiteral(" open") : QString(), names,
                   QString::number(m.pairing().rows()[r].a + 1), esc(what));
    h_ += QStringLiteral("<div><h4>%1 <span class=\"dim\">%2</span></h4><pre class=\"src a\">%3</pre></div>").arg(esc(a_.device), esc(pa.lang), left);
    h_ += QStringLiteral("<div><h4>%1 <span class=\"dim\">%2</span></h4><pre class=\"src b\">%3</pre></div>").arg(esc(b_.device), esc(pb.lang), right);
    h_ += "</div></details>\n";
  }
}

QString Page::html() {
  const QString script_name = QFileInfo(script_).fileName();
  QString title = QStringLiteral("tinyscope report: %1 on %2").arg(script_name.isEmpty() ? QStringLiteral("a run") : script_name, a_.device);
  if (b_.session) title += QStringLiteral(" and %1").arg(b_.device);
  h_ = QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%1</title>\n<style>%2</style></head>\n"
                      "<body><main>\n<header><h1>%1</h1><p>%3</p><nav>")
           .arg(esc(title), QLatin1String(kStyle), esc(date_));
  QStringList nav = {"summary", "script", "tensor-graph", "kernel-graph", "schedule", "sources", "timings"};
  if (b_.session) nav << "compare";
  for (const QString& id : nav) h_ += QStringLiteral("<a href=\"#%1\">%1</a>").arg(id);
  h_ += "</nav></header>\n";
  summary();
  script();
  tensor_graphs();
  kernel_graphs();
  schedule();
  sources();
  timings();
  if (b_.session) compare();
  h_ += "</main></body></html>\n";
  return std::move(h_);
}

bool is_trace_path(const QString& p) { return p.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive); }

// where --save-trace T.json keeps the compared run's trace: T.DEV.json beside it (CPU:LLVM: T.CPU-LLVM.json)
QString second_trace_path(const QString& first, const QString& dev) {
  const QFileInfo f(first);
  const QString base = f.fileName().endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) ? f.fileName().chopped(5) : f.fileName();
  const QString name = base + "." + QString(dev).replace(':', '-') + ".json";
  return f.path() == QStringLiteral(".") ? name : f.dir().filePath(name);
}

}  // namespace

int cmd_report(const std::vector<std::string>& args) {
  Options o;
  if (const QString why = parse_options(args, &o); !why.isEmpty()) return fail(why);
  if (o.input.isEmpty()) {
    std::fputs("tinyscope report: no script or trace given\n\n", stderr);
    std::fputs(usage(), stderr);
    return 2;
  }
  if (o.output.isEmpty()) return fail("no output file: -o REPORT.html names the page to write");
  if (const QString why = output_problem(o.output, "the report"); !why.isEmpty()) return fail(why);
  if (!o.save_trace.isEmpty())
    if (const QString why = output_problem(o.save_trace, "the trace"); !why.isEmpty()) return fail(why);

  int argc = 1;
  char name[] = "tinyscope";
  char* argv[] = {name, nullptr};
  QCoreApplication app(argc, argv);
  QTemporaryDir tmp;
  if (!tmp.isValid()) return fail("cannot make a temporary folder: " + tmp.errorString(), 1);

  const bool from_trace = is_trace_path(o.input);
  // the compared run: a saved trace, or a device the script runs on after the first run finished
  const bool compare_trace = !o.compare.isEmpty() && (is_trace_path(o.compare) || QFileInfo(o.compare).isFile());
  QString compare_dev;
  if (!o.compare.isEmpty() && !compare_trace) {
    QString error;
    compare_dev = tsgui::require_device(o.compare, &error);
    if (compare_dev.isEmpty()) return fail("--compare: " + error);
  }

  tsv::Session a, b;
  QString script, date, error;
  QByteArray printed_a, printed_b;
  if (from_trace) {
    if (!o.dev.isEmpty()) return fail("--dev names the device a script runs on; the trace '" + o.input + "' was recorded on its own");
    if (!o.script_args.isEmpty()) return fail("arguments after the trace '" + o.input + "': only a script takes them");
    if (!QFileInfo(o.input).isFile()) return fail("no such trace: '" + o.input + "'");
    if (!a.load(o.input, &error)) return fail(QStringLiteral("cannot read the trace '%1': %2").arg(o.input, error), 1);
    script = a.script();
    // a relative script path is the run's: try it here, then beside the trace
    if (!script.isEmpty() && QFileInfo(script).isRelative() && !QFileInfo::exists(script))
      if (const QString beside = QFileInfo(o.input).dir().filePath(script); QFileInfo::exists(beside)) script = beside;
    date = QStringLiteral("trace saved %1").arg(QFileInfo(o.input).lastModified().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    if (!compare_dev.isEmpty()) {
      if (const std::string why = script_problem(script.toStdString()); !why.empty())
        return fail(QStringLiteral("--compare %1 runs the trace's script again: %2").arg(compare_dev, q(why)));
      if (!o.repeat_given) {  // as many runs as the trace has, so the two medians are of the same count
        int runs = 1;
        for (const tsv::Call& c : a.calls()) runs = std::max<int>(runs, c.times.size());
        o.repeat = runs;
      }
    }
  } else {
    if (const std::string why = script_problem(o.input.toStdString()); !why.empty()) return fail(q(why));
    script = o.input;
    QString dev = o.dev;
    if (dev.isEmpty()) dev = qEnvironmentVariable("DEV");
    if (dev.isEmpty()) dev = QStringLiteral("CPU");
    const QString canonical = tsgui::require_device(dev, &error);
    if (canonical.isEmpty()) return fail((o.dev.isEmpty() ? "DEV: " : "--dev: ") + error);
    date = QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    const QString json = tmp.filePath("first.json");
    if (const QString why = run_script(o, script, canonical, json, &printed_a); !why.isEmpty()) return script_failed(why);
    if (!a.load(json, &error)) return fail(QStringLiteral("cannot read the run's trace: %1").arg(error), 1);
  }
  if (compare_trace) {
    if (!QFileInfo(o.compare).isFile()) return fail("no such trace to compare with: '" + o.compare + "'");
    if (!b.load(o.compare, &error)) return fail(QStringLiteral("cannot read the trace '%1': %2").arg(o.compare, error), 1);
  } else if (!compare_dev.isEmpty()) {
    const QString json = tmp.filePath("second.json");
    if (const QString why = run_script(o, script, compare_dev, json, &printed_b); !why.isEmpty()) return script_failed(why);
    if (!b.load(json, &error)) return fail(QStringLiteral("cannot read the second run's trace: %1").arg(error), 1);

  }

  const bool comparing = compare_trace || !compare_dev.isEmpty();
  Run ra{&a, a.device().isEmpty() ? QStringLiteral("?") : a.device(), printed_a};
  Run rb{comparing ? &b : nullptr, b.device().isEmpty() ? compare_dev : b.device(), printed_b};
  if (comparing && rb.device == ra.device) {  // the same device twice: tell the two columns apart
    ra.device += QStringLiteral(" (first)");
    rb.device += QStringLiteral(" (second)");
  }
  Page page(ra, rb, script, date);
  const QByteArray html = page.html().toUtf8();
  for (const QString& w : page.warnings) std::fprintf(stderr, "tinyscope report: a graph was not drawn: %s\n", w.toLocal8Bit().constData());

  // a temporary file renamed over the report: a failed write never leaves half a page
  QSaveFile out(o.output);
  if (!out.open(QIODevice::WriteOnly) || out.write(html) != html.size() || !out.commit())
    return fail(QStringLiteral("cannot write the report '%1': %2").arg(o.output, out.errorString()), 1);
  // --save-trace T.json keeps the traces of the runs made here: the first in T.json, the compared one in T.DEV.json
  if (!o.save_trace.isEmpty()) {
    QList<QPair<QString, QString>> keep;  // from, to
    if (!from_trace) keep.push_back({tmp.filePath("first.json"), o.save_trace});
    if (!compare_dev.isEmpty()) keep.push_back({tmp.filePath("second.json"), second_trace_path(o.save_trace, compare_dev)});
    for (const auto& [from, to] : keep) {
      QFile::remove(to);
      if (!QFile::copy(from, to)) return fail("cannot write the trace '" + to + "'", 1);
      std::fprintf(stderr, "tinyscope report: saved the %s trace to %s\n", from.endsWith("first.json") ? "run's" : "compared run's",
                   to.toLocal8Bit().constData());
    }
  }
  std::fprintf(stderr, "tinyscope report: wrote %s (%lld KB)\n", o.output.toLocal8Bit().constData(), static_cast<long long>(html.size() / 1024));
  return 0;
}

}  // namespace tscli
