#pragma once
// Where a test finds the tinyscope executable and the source tree: ctest sets TINYSCOPE_BIN and TINYSCOPE_SOURCE_DIR;
// outside ctest the paths compiled into the test (TS_BIN, TS_SOURCE_DIR) are the defaults.
#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QMap>
#include <QStringList>
#include <QProcessEnvironment>
#include <QString>
#include <QtGlobal>

namespace ts_test {
inline QString env_or(const char* name, const QString& fallback) {
  QByteArray v = qgetenv(name);
  return v.isEmpty() ? fallback : QString::fromLocal8Bit(v);
}
// `data` as the whole of the file at `path` (created or truncated), closed; false when it could not be written
inline bool write_file(const QString& path, const QByteArray& data) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(data) == data.size() && (f.close(), f.error() == QFileDevice::NoError);
}
inline QString source_dir() { return env_or("TINYSCOPE_SOURCE_DIR", QStringLiteral(TS_SOURCE_DIR)); }
inline QString tinyscope_bin() { return env_or("TINYSCOPE_BIN", QStringLiteral(TS_BIN)); }
// A child that runs on VULKAN: lavapipe (unless the caller's environment picks a driver), the validation layer on
// (the child fails on any message), a private runtime dir.
inline void vulkan_test_env(QProcessEnvironment& env, const QString& runtime_dir) {
  if (!env.contains("VK_DRIVER_FILES") && !env.contains("VK_ICD_FILENAMES"))
    env.insert("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json");
  env.insert("TINYSCOPE_VK_VALIDATION", "1");
  env.insert("XDG_RUNTIME_DIR", runtime_dir);
}
// A child's exit code (-1: it crashed or did not finish), stdout and stderr.
struct Result {
  int code = -1;
  QString out, err;
};
// `program ARGS` with DEBUG=0 and `extra_env` added to this process's environment, `input` on its stdin (then closed;
// none: the null device), killed after `timeout_ms`
inline Result run_process(const QString& program, const QStringList& args, const QProcessEnvironment& extra_env = {},
                          const QByteArray& input = {}, int timeout_ms = 120000) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEBUG", "0");
  for (const QString& k : extra_env.keys()) env.insert(k, extra_env.value(k));
  p.setProcessEnvironment(env);
  if (input.isEmpty()) p.setStandardInputFile(QProcess::nullDevice());
  p.start(program, args);
  Result r;
  const bool started = p.waitForStarted();
  if (started && !input.isEmpty()) p.write(input), p.closeWriteChannel();
  if (!started || !p.waitForFinished(timeout_ms)) {
    p.kill();
    p.waitForFinished();
    r.err = QStringLiteral("%1 did not finish in %2 s").arg(program).arg(timeout_ms / 1000);
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}
// a failed child's exit code and both its outputs, for a test's failure message
inline QByteArray why(const Result& r) {
  return QStringLiteral("exit %1\nstdout:\n%2\nstderr:\n%3").arg(r.code).arg(r.out, r.err).toUtf8();
}
inline QProcessEnvironment env_of(const QMap<QString, QString>& vars) {
  QProcessEnvironment env;
  for (auto it = vars.begin(); it != vars.end(); ++it) env.insert(it.key(), it.value());
  return env;
}

// `tinyscope run SCRIPT --json OUT ARGS...` in a child (in `cwd` when given): "" when it wrote the trace, else why not
inline QString run_to_trace(const QString& script, const QString& out, const QStringList& args = {},
                            const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(), const QString& cwd = {}) {
  QProcess p;
  p.setProcessEnvironment(env);
  if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
  p.start(tinyscope_bin(), QStringList{"run", script, "--json", out} + args);
  if (!p.waitForFinished(120000)) return QStringLiteral("tinyscope run %1 did not finish in 120 s").arg(script);
  if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    return QStringLiteral("tinyscope run %1 failed (%2): %3").arg(script).arg(p.exitCode()).arg(QString::fromLocal8Bit(p.readAllStandardError()));
  return {};
}
}  // namespace ts_test
