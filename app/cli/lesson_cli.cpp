// `tinyscope lesson LESSON.md`: a lesson (viewer/model/lesson.h) without the window: its script runs in a child of this
// executable (`tinyscope run SCRIPT --json`), and each step's question is printed with the answer the run gives, as the
// window computes it. --answers A,B,... checks a learner's answers step by step (a quiz on a terminal); --json prints
// one JSON object; --trace-out keeps the run's trace.
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <cstdio>

#include "app/cli/report.h"
#include "viewer/model/lesson.h"
#include "viewer/model/session.h"

namespace tscli {

namespace {

int lesson_usage(const QString& why) {
  std::fprintf(stderr, "tinyscope lesson: %s (usage: tinyscope lesson LESSON.md [--dev DEV] [--json] [--answers A,B,...] [--trace-out T.json])\n",
               qPrintable(why));
  return 2;
}

}  // namespace

QString lesson_script_path(const QString& lesson_path, const QString& script) {
  if (QFileInfo(script).isAbsolute()) return script;
  const QString beside = QFileInfo(lesson_path).absoluteDir().filePath(script);
  return QFileInfo(beside).isFile() ? QDir::cleanPath(beside) : QDir::cleanPath(QDir::current().filePath(script));
}

int cmd_lesson(const std::vector<std::string>& args) {
  QString path, dev, trace_out;
  QStringList given;
  bool json = false, have_answers = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const QString a = QString::fromStdString(args[i]);
    const bool has_value = i + 1 < args.size();
    if (a == "--json") json = true;
    else if (a == "--dev" && has_value) dev = QString::fromStdString(args[++i]);
    else if (a == "--trace-out" && has_value) trace_out = QString::fromStdString(args[++i]);
    else if (a == "--answers" && has_value) given = QString::fromStdString(args[++i]).split(QLatin1Char(',')), have_answers = true;
    else if (a.startsWith(QLatin1Char('-')) || !path.isEmpty()) return lesson_usage(QStringLiteral("unknown argument '%1'").arg(a));
    else path = a;
  }
  if (path.isEmpty()) return lesson_usage(QStringLiteral("no lesson file"));
  int argc = 1;
  char name[] = "tinyscope";
  char* argv[] = {name, nullptr};
  QCoreApplication app(argc, argv);
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return lesson_usage(QStringLiteral("cannot open '%1': %2").arg(path, f.errorString()));
  QString error;
  const tsv::Lesson lesson = tsv::parse_lesson(QString::fromUtf8(f.readAll()), &error);
  if (!error.isEmpty()) {
    std::fprintf(stderr, "tinyscope lesson: %s: %s\n", qPrintable(path), qPrintable(error));
    return 1;
  }
  if (lesson.script.isEmpty()) {
    std::fprintf(stderr, "tinyscope lesson: %s names no script (script: FILE.py)\n", qPrintable(path));
    return 1;
  }
  const QString script = lesson_script_path(path, lesson.script);
  QTemporaryDir tmp;
  const QString trace = trace_out.isEmpty() ? tmp.filePath(QStringLiteral("lesson.json")) : trace_out;
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (!dev.isEmpty()) env.insert("DEV", dev);
  p.setProcessEnvironment(env);
  p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  p.setStandardOutputFile(QProcess::nullDevice());
  p.setStandardInputFile(QProcess::nullDevice());
  p.start(QCoreApplication::applicationFilePath(), {"run", script, "--json", trace});
  if (!p.waitForStarted(30000) || !p.waitForFinished(-1) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
    std::fprintf(stderr, "tinyscope lesson: the lesson's script %s failed (exit %d)\n", qPrintable(script), p.exitCode());
    return 1;
  }
  tsv::Session s;
  if (!s.load(trace, &error)) {
    std::fprintf(stderr, "tinyscope lesson: cannot read the run's trace: %s\n", qPrintable(error));
    return 1;
  }
  QJsonArray steps;
  int unanswerable = 0, right = 0, asked = 0;
  if (!json) std::printf("%s (%s on %s)\n", qPrintable(lesson.title), qPrintable(QFileInfo(script).fileName()), qPrintable(s.device()));
  for (int i = 0; i < lesson.steps.size(); ++i) {
    const tsv::LessonStep& st = lesson.steps[i];
    QJsonObject o{{"id", st.id}, {"title", st.title}};
    if (!st.ask.isEmpty()) {
      const tsv::LessonAnswer a = tsv::lesson_answer(s, st.answer);
      o["ask"] = st.ask, o["kind"] = st.answer, o["ok"] = a.ok, o["answer"] = a.value;
      if (!a.ok) o["why"] = a.why, ++unanswerable;
      QString verdict;
      if (have_answers) {
        const QString g = asked < given.size() ? given[asked] : QString();
        const bool good = tsv::answer_accepts(a, g);
        right += good;
        o["given"] = g, o["right"] = good;
        verdict = g.trimmed().isEmpty() ? QStringLiteral("  (skipped)") : good ? QStringLiteral("  right") : QStringLiteral("  (you said %1)").arg(g.trimmed());
      }
      ++asked;
      if (!json)
        std::printf("%s\n   %s\n   -> %s%s\n", qPrintable(st.title), qPrintable(st.ask),
                    a.ok ? qPrintable(a.value) : qPrintable(QStringLiteral("(no answer: %1)").arg(a.why)), qPrintable(verdict));
    } else if (!json) {
      std::printf("%s\n", qPrintable(st.title));
    }
    steps.append(o);
  }
  if (have_answers && !json) std::printf("%d of %d right\n", right, asked);
  if (json) {
    QJsonObject root{{"lesson", lesson.title}, {"script", script}, {"device", s.device()}, {"steps", steps}};
    if (!trace_out.isEmpty()) root["trace"] = trace_out;
    std::printf("%s\n", QJsonDocument(root).toJson(QJsonDocument::Compact).constData());
  }
  return unanswerable ? 1 : 0;
}

}  // namespace tscli
